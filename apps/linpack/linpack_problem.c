/* linpack_problem.c -- the Linpack workload of numrpc-linpack: a seeded random
 * A x = b (splitmix64), working copies, flop count and normalised residual. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linpack_problem.h"

#define MATRIX_SEED 1325u

double problem_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One factorization and rhs solves: 2/3 n^3 + 2 n^2 rhs. */
static double linpack_flops(int n, int rhs)
{
    double dn = (double)n;
    return 2.0 / 3.0 * dn * dn * dn + 2.0 * dn * dn * (double)rhs;
}

double problem_mflops(int n, double seconds)
{
    return problem_mflops_rhs(n, 1, seconds);
}

double problem_mflops_rhs(int n, int rhs, double seconds)
{
    return seconds > 0.0 ? linpack_flops(n, rhs) / seconds / 1e6 : 0.0;
}

/* Deterministic values in [-1, 1) (splitmix64). */
static double next_uniform(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return 2.0 * ((double)(z >> 11) * 0x1.0p-53) - 1.0;
}

static void fill_problem(double *a, double *b, int n, unsigned seed)
{
    uint64_t state = (uint64_t)seed * UINT64_C(0x2545F4914F6CDD1D) + 1;
    for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
        a[k] = next_uniform(&state);
    for (int i = 0; i < n; i++)
        b[i] = next_uniform(&state);
}

/* ||A x - b||_inf / (||A||_inf ||x||_inf n eps), A n x n with lda = n. */
static double normalised_residual(const double *a, int n, const double *x,
                                  const double *b)
{
    double *r = malloc((size_t)n * sizeof *r);
    double *rowsum = calloc((size_t)n, sizeof *rowsum);
    if (!r || !rowsum) {
        free(r);
        free(rowsum);
        return INFINITY;
    }
    for (int i = 0; i < n; i++)
        r[i] = -b[i];
    for (int j = 0; j < n; j++) {
        const double *col = a + (size_t)j * (size_t)n;
        for (int i = 0; i < n; i++) {
            r[i] += col[i] * x[j];
            rowsum[i] += fabs(col[i]);
        }
    }
    double rmax = 0.0, anorm = 0.0, xmax = 0.0;
    for (int i = 0; i < n; i++) {
        rmax = fmax(rmax, fabs(r[i]));
        anorm = fmax(anorm, rowsum[i]);
        xmax = fmax(xmax, fabs(x[i]));
    }
    free(r);
    free(rowsum);
    double denom = anorm * xmax * (double)n * DBL_EPSILON;
    if (!(rmax == rmax))
        return INFINITY;
    return denom > 0.0 ? rmax / denom : (rmax == 0.0 ? 0.0 : INFINITY);
}

int problem_init(struct problem *p, int n)
{
    size_t nn = (size_t)n * (size_t)n;
    p->n = n;
    p->a0 = malloc(nn * sizeof(double));
    p->a = malloc(nn * sizeof(double));
    p->b0 = malloc((size_t)n * sizeof(double));
    p->x = malloc((size_t)n * sizeof(double));
    p->ipvt = malloc((size_t)n * sizeof(int));
    if (!p->a0 || !p->a || !p->b0 || !p->x || !p->ipvt)
        return -1;
    fill_problem(p->a0, p->b0, n, MATRIX_SEED + (unsigned)n);
    return 0;
}

void problem_free(struct problem *p)
{
    free(p->a0);
    free(p->a);
    free(p->b0);
    free(p->x);
    free(p->ipvt);
}

void problem_reset(struct problem *p)
{
    memcpy(p->a, p->a0, (size_t)p->n * (size_t)p->n * sizeof(double));
    memcpy(p->x, p->b0, (size_t)p->n * sizeof(double));
}

double problem_residual(const struct problem *p)
{
    return normalised_residual(p->a0, p->n, p->x, p->b0);
}

void problem_rhs(const struct problem *p, int k, double *b)
{
    int n = p->n, shift = k % n;
    memcpy(b, p->b0 + shift, (size_t)(n - shift) * sizeof *b);
    memcpy(b + (n - shift), p->b0, (size_t)shift * sizeof *b);
}

double problem_residual_of(const struct problem *p, const double *x, const double *b)
{
    return normalised_residual(p->a0, p->n, x, b);
}
