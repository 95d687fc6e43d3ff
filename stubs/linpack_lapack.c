/* linpack_lapack.c -- LINPACK dgefa/dgesl semantics on top of LAPACK's blocked
 * dgetrf (OpenBLAS), converting the factors to LINPACK's layout in O(n^2). */
#include "linpack_lapack.h"

#include <stddef.h>

/* LAPACK (Fortran) entry points from OpenBLAS.  gfortran passes the length
 * of a CHARACTER argument as a trailing hidden size_t. */
extern void dgetrf_(const int *m, const int *n, double *a, const int *lda,
                    int *ipiv, int *info);
extern void dgetrs_(const char *trans, const int *n, const int *nrhs,
                    const double *a, const int *lda, const int *ipiv,
                    double *b, const int *ldb, int *info, size_t trans_len);

/* Element (i, j), 0-based, of a column-major matrix with leading dim ld. */
#define ELEM(a, ld, i, j) ((a)[(size_t)(j) * (size_t)(ld) + (size_t)(i)])

static int dims_ok(int n, int lda)
{
    return n >= 0 && lda >= (n > 1 ? n : 1);
}

/* Rewrites LAPACK's L (unit lower, with every later row interchange applied
 * to it) as LINPACK's: in column k the interchanges of steps k+1..n-1 are
 * undone (in reverse order), and the multipliers are negated. */
static void lapack_l_to_linpack(double *a, int lda, int n, const int *ipvt)
{
    for (int k = 0; k + 1 < n; k++) {
        double *col = &ELEM(a, lda, 0, k);
        for (int step = n - 2; step > k; step--) {
            int p = ipvt[step] - 1;
            if (p != step) {
                double t = col[p];
                col[p] = col[step];
                col[step] = t;
            }
        }
        for (int i = k + 1; i < n; i++)
            col[i] = -col[i];
    }
}

void dgefa_(double *a, int *lda, int *n, int *ipvt, int *info)
{
    int nn = *n, ld = *lda;
    if (!dims_ok(nn, ld)) {
        *info = -1;
        return;
    }
    *info = 0;
    if (nn == 0)
        return;

    int lapack_info = 0;
    dgetrf_(&nn, &nn, a, &ld, ipvt, &lapack_info);
    lapack_l_to_linpack(a, ld, nn, ipvt);

    /* LINPACK reports the last zero pivot, LAPACK the first. */
    int last_zero = 0;
    for (int k = 0; k < nn; k++)
        if (ELEM(a, ld, k, k) == 0.0)
            last_zero = k + 1;
    *info = last_zero;
    /* LINPACK always sets ipvt(n) = n; so does dgetrf (one row left). */
    ipvt[nn - 1] = nn;
}

void dgesl_(double *a, int *lda, int *n, int *ipvt, double *b, int *job)
{
    int nn = *n, ld = *lda;
    if (!dims_ok(nn, ld) || nn == 0)
        return;

    if (*job == 0) {
        /* L y = b: apply interchange k, then the step's (negated)
         * multipliers, column by column. */
        for (int k = 0; k + 1 < nn; k++) {
            int p = ipvt[k] - 1;
            double t = b[p];
            if (p != k) {
                b[p] = b[k];
                b[k] = t;
            }
            const double *col = &ELEM(a, ld, 0, k);
            for (int i = k + 1; i < nn; i++)
                b[i] += t * col[i];
        }
        /* U x = y, back substitution by columns. */
        for (int k = nn - 1; k >= 0; k--) {
            const double *col = &ELEM(a, ld, 0, k);
            b[k] /= col[k];
            double t = -b[k];
            for (int i = 0; i < k; i++)
                b[i] += t * col[i];
        }
    } else {
        /* U^T y = b: forward, one dot product per column of U. */
        for (int k = 0; k < nn; k++) {
            const double *col = &ELEM(a, ld, 0, k);
            double dot = 0.0;
            for (int i = 0; i < k; i++)
                dot += col[i] * b[i];
            b[k] = (b[k] - dot) / col[k];
        }
        /* L^T x = y: backward, dots with the multipliers, then undo the
         * interchanges in reverse order. */
        for (int k = nn - 2; k >= 0; k--) {
            const double *col = &ELEM(a, ld, 0, k);
            double dot = 0.0;
            for (int i = k + 1; i < nn; i++)
                dot += col[i] * b[i];
            b[k] += dot;
            int p = ipvt[k] - 1;
            if (p != k) {
                double t = b[p];
                b[p] = b[k];
                b[k] = t;
            }
        }
    }
}

void linpack_(double *a, int *lda, int *n, int *ipvt, double *b, int *info)
{
    int nn = *n, ld = *lda;
    if (!dims_ok(nn, ld)) {
        *info = -1;
        return;
    }
    *info = 0;
    if (nn == 0)
        return;

    dgetrf_(&nn, &nn, a, &ld, ipvt, info);
    if (*info != 0)
        return;
    const int one = 1;
    int solve_info = 0;
    dgetrs_("N", &nn, &one, a, &ld, ipvt, b, &nn, &solve_info, 1);
    if (solve_info != 0)
        *info = solve_info;
}
