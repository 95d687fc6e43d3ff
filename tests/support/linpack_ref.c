/* linpack_ref.c -- reference LINPACK dgefa/dgesl written from the algorithm
 * (Gaussian elimination, partial pivoting, column-oriented), and helpers. */
#include "linpack_ref.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define AT(a, ld, i, j) ((a)[(size_t)(j) * (size_t)(ld) + (size_t)(i)])

/* Index (0-based, relative to x) of the first element of largest |x[i]|,
 * as BLAS idamax. */
static int first_max_abs(const double *x, int len)
{
    int best = 0;
    double best_abs = fabs(x[0]);
    for (int i = 1; i < len; i++) {
        double v = fabs(x[i]);
        if (v > best_abs) {
            best_abs = v;
            best = i;
        }
    }
    return best;
}

void ref_dgefa(double *a, int lda, int n, int *ipvt, int *info)
{
    *info = 0;
    if (n <= 0)
        return;
    for (int k = 0; k + 1 < n; k++) {
        double *colk = &AT(a, lda, 0, k);
        int piv = k + first_max_abs(colk + k, n - k);
        ipvt[k] = piv + 1;
        if (colk[piv] == 0.0) {
            /* Nothing to eliminate: the column is already triangular. */
            *info = k + 1;
            continue;
        }
        if (piv != k) {
            double t = colk[piv];
            colk[piv] = colk[k];
            colk[k] = t;
        }
        double scale = -1.0 / colk[k];
        for (int i = k + 1; i < n; i++)
            colk[i] *= scale;
        /* Update the trailing columns; the interchange is applied only to
         * columns k+1..n-1 (column k was done above). */
        for (int j = k + 1; j < n; j++) {
            double *colj = &AT(a, lda, 0, j);
            double t = colj[piv];
            if (piv != k) {
                colj[piv] = colj[k];
                colj[k] = t;
            }
            for (int i = k + 1; i < n; i++)
                colj[i] += t * colk[i];
        }
    }
    ipvt[n - 1] = n;
    if (AT(a, lda, n - 1, n - 1) == 0.0)
        *info = n;
}

void ref_dgesl(const double *a, int lda, int n, const int *ipvt, double *b,
               int job)
{
    if (n <= 0)
        return;
    if (job == 0) {
        for (int k = 0; k + 1 < n; k++) {
            int piv = ipvt[k] - 1;
            double t = b[piv];
            if (piv != k) {
                b[piv] = b[k];
                b[k] = t;
            }
            for (int i = k + 1; i < n; i++)
                b[i] += t * AT(a, lda, i, k);
        }
        for (int k = n - 1; k >= 0; k--) {
            b[k] /= AT(a, lda, k, k);
            double t = -b[k];
            for (int i = 0; i < k; i++)
                b[i] += t * AT(a, lda, i, k);
        }
    } else {
        for (int k = 0; k < n; k++) {
            double s = 0.0;
            for (int i = 0; i < k; i++)
                s += AT(a, lda, i, k) * b[i];
            b[k] = (b[k] - s) / AT(a, lda, k, k);
        }
        for (int k = n - 2; k >= 0; k--) {
            double s = 0.0;
            for (int i = k + 1; i < n; i++)
                s += AT(a, lda, i, k) * b[i];
            b[k] += s;
            int piv = ipvt[k] - 1;
            if (piv != k) {
                double t = b[piv];
                b[piv] = b[k];
                b[k] = t;
            }
        }
    }
}

double ref_sentinel(int i, int j)
{
    /* Exact in binary: an integer plus a multiple of 1/1024. */
    return 4096.0 + (double)i + (double)j / 1024.0;
}

/* splitmix64: a small, well-mixed deterministic generator. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void ref_fill_random(double *a, int lda, int n, unsigned seed)
{
    uint64_t state = (uint64_t)seed * UINT64_C(0x2545F4914F6CDD1D) + 1;
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < n; i++) {
            /* 53 random bits -> [0, 1) -> [-1, 1). */
            double u = (double)(next_random(&state) >> 11) * 0x1.0p-53;
            AT(a, lda, i, j) = 2.0 * u - 1.0;
        }
        for (int i = n; i < lda; i++)
            AT(a, lda, i, j) = ref_sentinel(i, j);
    }
}

static double residual(const double *a, int lda, int n, const double *x,
                       const double *b, int trans)
{
    if (n <= 0)
        return 0.0;
    double rmax = 0.0, anorm = 0.0, xmax = 0.0;
    for (int i = 0; i < n; i++) {
        double r = -b[i], rowsum = 0.0;
        for (int j = 0; j < n; j++) {
            double aij = trans ? AT(a, lda, j, i) : AT(a, lda, i, j);
            r += aij * x[j];
            rowsum += fabs(aij);
        }
        if (fabs(r) > rmax)
            rmax = fabs(r);
        if (rowsum > anorm)
            anorm = rowsum;
        if (fabs(x[i]) > xmax)
            xmax = fabs(x[i]);
    }
    double denom = anorm * xmax * (double)n * DBL_EPSILON;
    if (denom == 0.0)
        return rmax == 0.0 ? 0.0 : INFINITY;
    return rmax / denom;
}

double ref_residual(const double *a, int lda, int n, const double *x,
                    const double *b)
{
    return residual(a, lda, n, x, b, 0);
}

double ref_residual_trans(const double *a, int lda, int n, const double *x,
                          const double *b)
{
    return residual(a, lda, n, x, b, 1);
}
