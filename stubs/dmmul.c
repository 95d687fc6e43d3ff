/* dmmul.c -- the Ninf papers' dmmul(n, A, B, C) (C = A * B) written on
 * OpenBLAS's dgemm, so that the paper's IDL compiles and runs unchanged. */
#include "dmmul.h"

#include <stddef.h>

/* BLAS dgemm, Fortran interface (gfortran: hidden CHARACTER lengths last). */
extern void dgemm_(const char *transa, const char *transb, const int *m, const int *n,
                   const int *k, const double *alpha, const double *a, const int *lda,
                   const double *b, const int *ldb, const double *beta, double *c,
                   const int *ldc, size_t transa_len, size_t transb_len);

void dmmul(int n, double *A, double *B, double *C)
{
    if (n <= 0) return;
    const double one = 1.0, zero = 0.0;
    dgemm_("N", "N", &n, &n, &n, &one, A, &n, B, &n, &zero, C, &n, 1, 1);
}
