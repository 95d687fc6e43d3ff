// local_lapack.h -- prototypes of the OpenBLAS/LAPACK Fortran symbols the
// stub tests call locally, to compare with the same routine run remotely.
#ifndef NUMRPC_TESTS_LOCAL_LAPACK_H
#define NUMRPC_TESTS_LOCAL_LAPACK_H

#include <complex>
#include <cstddef>

// gfortran's convention: every argument by reference, a hidden size_t
// length per CHARACTER argument after all the others.
extern "C" {
void openblas_set_num_threads(int n);

void dcopy_(const int *n, const double *x, const int *incx, double *y, const int *incy);
void daxpy_(const int *n, const double *alpha, const double *x, const int *incx, double *y,
            const int *incy);
void dscal_(const int *n, const double *alpha, double *x, const int *incx);
double ddot_(const int *n, const double *x, const int *incx, const double *y,
             const int *incy);
double dnrm2_(const int *n, const double *x, const int *incx);
void dgemv_(const char *trans, const int *m, const int *n, const double *alpha,
            const double *a, const int *lda, const double *x, const int *incx,
            const double *beta, double *y, const int *incy, size_t trans_len);
void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b,
            const int *ldb, const double *beta, double *c, const int *ldc, size_t ta_len,
            size_t tb_len);

void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b,
            const int *ldb, int *info);
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a,
             const int *lda, const int *ipiv, double *b, const int *ldb, int *info,
             size_t trans_len);
void dgecon_(const char *norm, const int *n, const double *a, const int *lda,
             const double *anorm, double *rcond, double *work, int *iwork, int *info,
             size_t norm_len);
double dlange_(const char *norm, const int *m, const int *n, const double *a, const int *lda,
               double *work, size_t norm_len);
void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda,
            double *b, const int *ldb, int *info, size_t uplo_len);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);
void dgels_(const char *trans, const int *m, const int *n, const int *nrhs, double *a,
            const int *lda, double *b, const int *ldb, double *work, const int *lwork,
            int *info, size_t trans_len);
void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
            double *w, double *work, const int *lwork, int *info, size_t jobz_len,
            size_t uplo_len);
void dgesvd_(const char *jobu, const char *jobvt, const int *m, const int *n, double *a,
             const int *lda, double *s, double *u, const int *ldu, double *vt,
             const int *ldvt, double *work, const int *lwork, int *info, size_t jobu_len,
             size_t jobvt_len);
void dgeev_(const char *jobvl, const char *jobvr, const int *n, double *a, const int *lda,
            double *wr, double *wi, double *vl, const int *ldvl, double *vr, const int *ldvr,
            double *work, const int *lwork, int *info, size_t jobvl_len, size_t jobvr_len);
void zgesv_(const int *n, const int *nrhs, std::complex<double> *a, const int *lda, int *ipiv,
            std::complex<double> *b, const int *ldb, int *info);
}

#endif
