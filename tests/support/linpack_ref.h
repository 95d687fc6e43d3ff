/* linpack_ref.h -- a plain C reference implementation of LINPACK's dgefa and
 * dgesl, plus deterministic test matrices and the normalised residual. */
#ifndef NUMRPC_TESTS_LINPACK_REF_H
#define NUMRPC_TESTS_LINPACK_REF_H

#ifdef __cplusplus
extern "C" {
#endif

/* LINPACK dgefa: column-major a (leading dimension lda), 1-based ipvt,
 * multipliers stored negated, info = last k with a zero pivot (or 0).
 * Rows n..lda-1 are not touched. */
void ref_dgefa(double *a, int lda, int n, int *ipvt, int *info);

/* LINPACK dgesl on ref_dgefa's factors: job == 0 solves A x = b, job != 0
 * solves A^T x = b; x overwrites b. */
void ref_dgesl(const double *a, int lda, int n, const int *ipvt, double *b,
               int job);

/* The value ref_fill_random stores at row i >= n, column j (0-based) of an
 * lda x n array: outside [-1, 1), distinct per element, exactly
 * representable, so "untouched" can be checked with ==. */
double ref_sentinel(int i, int j);

/* Fills the n x n part of a (leading dimension lda) with deterministic
 * pseudo-random values in [-1, 1) from seed, and rows n..lda-1 with
 * ref_sentinel(i, j).  The same seed gives the same matrix everywhere. */
void ref_fill_random(double *a, int lda, int n, unsigned seed);

/* Normalised residual of a solved system A x = b:
 *   ||A x - b||_inf / (||A||_inf * ||x||_inf * n * eps)
 * a is the ORIGINAL matrix, b the original right-hand side.  Values of
 * order 1 mean a backward-stable solve; HPL accepts up to 16, LINPACK
 * reports it as "norm. resid".  Returns 0 for n <= 0. */
double ref_residual(const double *a, int lda, int n, const double *x,
                    const double *b);

/* The same for A^T x = b (||A^T||_inf = ||A||_1). */
double ref_residual_trans(const double *a, int lda, int n, const double *x,
                          const double *b);

#ifdef __cplusplus
}
#endif
#endif /* NUMRPC_TESTS_LINPACK_REF_H */
