/* linpack_lapack.h -- LINPACK's dgefa/dgesl (exact LINPACK factor format) and
 * the Ninf one-call linpack routine, computed with blocked LAPACK (OpenBLAS). */
#ifndef NUMRPC_LINPACK_LAPACK_H
#define NUMRPC_LINPACK_LAPACK_H

#ifdef __cplusplus
extern "C" {
#endif

/* All three follow the Fortran calling convention: every argument by
 * reference, matrices column-major with leading dimension *lda, pivot
 * indices 1-based.  Only the leading n x n part of a is read or written;
 * rows n..lda-1 of every column are never touched.
 *
 * Argument checks (LINPACK itself has none): if *n < 0 or *lda < max(1,*n),
 * dgefa_ and linpack_ set *info = -1 and do nothing else; dgesl_ does
 * nothing.  *n == 0 is a no-op (info = 0). */

/* LU factorisation with partial pivoting, LINPACK's dgefa exactly:
 * ipvt(k) is the row swapped with row k at step k; the multipliers are
 * stored negated below the diagonal, in the row order of the step that
 * made them (later interchanges are not applied to them); U is on and
 * above the diagonal.  info = 0, or the LAST k with U(k,k) == 0 (the
 * factorisation still completes; dgesl would divide by zero). */
void dgefa_(double *a, int *lda, int *n, int *ipvt, int *info);

/* Solves with factors from dgefa_: *job == 0 solves A x = b, any other job
 * solves A^T x = b.  x overwrites b (length n). */
void dgesl_(double *a, int *lda, int *n, int *ipvt, double *b, int *job);

/* The Ninf papers' one-call solve of A x = b: a is input only as far as the
 * caller is concerned (it is overwritten with LAPACK's LU factors, which a
 * server discards), ipvt receives LAPACK's 1-based pivots, b receives x.
 * info is dgetrf's: 0, or k > 0 if U(k,k) == 0 (first such k; b is then
 * left unchanged), or -1 for bad dimensions as above. */
void linpack_(double *a, int *lda, int *n, int *ipvt, double *b, int *info);

#ifdef __cplusplus
}
#endif
#endif /* NUMRPC_LINPACK_LAPACK_H */
