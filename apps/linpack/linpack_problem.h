/* linpack_problem.h -- the Linpack workload of numrpc-linpack: a seeded random
 * A x = b of order n, its working copies, the flop count and the residual. */
#ifndef NUMRPC_LINPACK_PROBLEM_H
#define NUMRPC_LINPACK_PROBLEM_H

/* A solve passes when its normalised residual is at most this. */
#define RESIDUAL_LIMIT 100.0

/* Problem buffers for one size (lda = n). */
struct problem {
    int n;
    double *a0, *b0; /* the original system         */
    double *a, *x;   /* working copies               */
    int *ipvt;
};

/* Allocates the buffers and fills the original system (seeded by n).
 * Returns 0, or -1 when out of memory (problem_free still applies). */
int problem_init(struct problem *p, int n);
void problem_free(struct problem *p);
/* Copies the original system into the working copies (a, and b into x). */
void problem_reset(struct problem *p);
/* ||A x - b||_inf / (||A||_inf ||x||_inf n eps) of the original system and
 * the solution now in p->x. */
double problem_residual(const struct problem *p);
/* The k-th right-hand side of a multi-solve (b0 rotated by k places) into
 * b (n doubles, the caller's), and the residual of a solution x of A x = b. */
void problem_rhs(const struct problem *p, int k, double *b);
double problem_residual_of(const struct problem *p, const double *x, const double *b);

/* MFLOPS of a Linpack solve of order n in seconds: (2/3 n^3 + 2 n^2) / s / 1e6. */
double problem_mflops(int n, double seconds);
/* The same for one factorization and rhs solves: (2/3 n^3 + 2 n^2 rhs) / s / 1e6. */
double problem_mflops_rhs(int n, int rhs, double seconds);
/* A monotonic clock, in seconds. */
double problem_now(void);

#endif
