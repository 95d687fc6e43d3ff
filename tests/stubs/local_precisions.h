// local_precisions.h -- the local OpenBLAS/LAPACK routines of every precision
// behind one C++ overload per routine, for comparison with the remote calls.
#ifndef NUMRPC_TESTS_LOCAL_PRECISIONS_H
#define NUMRPC_TESTS_LOCAL_PRECISIONS_H

#include <complex>
#include <cstddef>
#include <vector>

// Every wrapper takes scalars by value and calls the library's routine of
// T's precision (gfortran's convention: arguments by reference, a hidden
// size_t length per CHARACTER argument at the end).  Where the real and
// complex routines differ (syev / heev), the wrapper carries the real name
// and calls the complex one for complex T; LAPACK's real work arrays of
// complex routines (rwork) are allocated here.  LAPACK wrappers return info.
namespace lib {

using scomplex = std::complex<float>;
using dcomplex = std::complex<double>;

#define LIB_EACH_REAL(X) X(s, float, float) X(d, double, double)
#define LIB_EACH_COMPLEX(X) X(c, scomplex, float) X(z, dcomplex, double)
#define LIB_EACH(X) LIB_EACH_REAL(X) LIB_EACH_COMPLEX(X)

// ---- BLAS ----

// The routines of one shape under several names: triangular (trsm, trmm),
// symmetric or Hermitian product (symm, hemm), rank-k update with scalars
// of type S (syrk: T, herk: R).
#define LIB_TRIANGULAR(T, symbol, wrapper)                                                    \
    extern "C" void symbol(const char *, const char *, const char *, const char *,            \
                           const int *, const int *, const T *, const T *, const int *, T *,  \
                           const int *, size_t, size_t, size_t, size_t);                      \
    inline void wrapper(char side, char uplo, char ta, char diag, int m, int n, T alpha,      \
                        const T *a, int lda, T *b, int ldb)                                   \
    {                                                                                         \
        symbol(&side, &uplo, &ta, &diag, &m, &n, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1);       \
    }
#define LIB_SYMMETRIC_PRODUCT(T, symbol, wrapper)                                             \
    extern "C" void symbol(const char *, const char *, const int *, const int *, const T *,   \
                           const T *, const int *, const T *, const int *, const T *, T *,    \
                           const int *, size_t, size_t);                                      \
    inline void wrapper(char side, char uplo, int m, int n, T alpha, const T *a, int lda,     \
                        const T *b, int ldb, T beta, T *c, int ldc)                           \
    {                                                                                         \
        symbol(&side, &uplo, &m, &n, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);         \
    }
#define LIB_RANK_K(T, S, symbol, wrapper)                                                     \
    extern "C" void symbol(const char *, const char *, const int *, const int *, const S *,   \
                           const T *, const int *, const S *, T *, const int *, size_t,       \
                           size_t);                                                           \
    inline void wrapper(char uplo, char trans, int n, int k, S alpha, const T *a, int lda,    \
                        S beta, T *c, int ldc)                                                \
    {                                                                                         \
        symbol(&uplo, &trans, &n, &k, &alpha, a, &lda, &beta, c, &ldc, 1, 1);                 \
    }

#define LIB_BLAS(p, T, R)                                                                     \
    extern "C" void p##copy_(const int *, const T *, const int *, T *, const int *);          \
    extern "C" void p##axpy_(const int *, const T *, const T *, const int *, T *,             \
                             const int *);                                                    \
    extern "C" void p##scal_(const int *, const T *, T *, const int *);                       \
    extern "C" void p##gemv_(const char *, const int *, const int *, const T *, const T *,    \
                             const int *, const T *, const int *, const T *, T *, const int *, \
                             size_t);                                                         \
    extern "C" void p##gemm_(const char *, const char *, const int *, const int *,            \
                             const int *, const T *, const T *, const int *, const T *,       \
                             const int *, const T *, T *, const int *, size_t, size_t);       \
    inline void copy(int n, const T *x, int incx, T *y, int incy)                             \
    {                                                                                         \
        p##copy_(&n, x, &incx, y, &incy);                                                     \
    }                                                                                         \
    inline void axpy(int n, T alpha, const T *x, int incx, T *y, int incy)                    \
    {                                                                                         \
        p##axpy_(&n, &alpha, x, &incx, y, &incy);                                             \
    }                                                                                         \
    inline void scal(int n, T alpha, T *x, int incx) { p##scal_(&n, &alpha, x, &incx); }      \
    inline void gemv(char trans, int m, int n, T alpha, const T *a, int lda, const T *x,      \
                     int incx, T beta, T *y, int incy)                                        \
    {                                                                                         \
        p##gemv_(&trans, &m, &n, &alpha, a, &lda, x, &incx, &beta, y, &incy, 1);              \
    }                                                                                         \
    inline void gemm(char ta, char tb, int m, int n, int k, T alpha, const T *a, int lda,     \
                     const T *b, int ldb, T beta, T *c, int ldc)                              \
    {                                                                                         \
        p##gemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);       \
    }                                                                                         \
    LIB_TRIANGULAR(T, p##trsm_, trsm)                                                         \
    LIB_TRIANGULAR(T, p##trmm_, trmm)                                                         \
    LIB_SYMMETRIC_PRODUCT(T, p##symm_, symm)                                                  \
    LIB_RANK_K(T, T, p##syrk_, syrk)
LIB_EACH(LIB_BLAS)

// Complex only: Hermitian product and rank-k update (real alpha, beta).
#define LIB_BLAS_COMPLEX(p, T, R)                                                             \
    LIB_SYMMETRIC_PRODUCT(T, p##hemm_, hemm)                                                  \
    LIB_RANK_K(T, R, p##herk_, herk)
LIB_EACH_COMPLEX(LIB_BLAS_COMPLEX)

// A complex vector scaled by a real alpha.
extern "C" void csscal_(const int *, const float *, scomplex *, const int *);
extern "C" void zdscal_(const int *, const double *, dcomplex *, const int *);
inline void rscal(int n, float alpha, scomplex *x, int incx) { csscal_(&n, &alpha, x, &incx); }
inline void rscal(int n, double alpha, dcomplex *x, int incx) { zdscal_(&n, &alpha, x, &incx); }

// BLAS functions through CBLAS (C prototypes; complex dots through _sub).
extern "C" {
float cblas_sdot(int n, const float *x, int incx, const float *y, int incy);
double cblas_ddot(int n, const double *x, int incx, const double *y, int incy);
void cblas_cdotu_sub(int n, const void *x, int incx, const void *y, int incy, void *dot);
void cblas_zdotu_sub(int n, const void *x, int incx, const void *y, int incy, void *dot);
void cblas_cdotc_sub(int n, const void *x, int incx, const void *y, int incy, void *dot);
void cblas_zdotc_sub(int n, const void *x, int incx, const void *y, int incy, void *dot);
float cblas_snrm2(int n, const float *x, int incx);
double cblas_dnrm2(int n, const double *x, int incx);
float cblas_scnrm2(int n, const void *x, int incx);
double cblas_dznrm2(int n, const void *x, int incx);
}
inline float dot(int n, const float *x, int incx, const float *y, int incy)
{
    return cblas_sdot(n, x, incx, y, incy);
}
inline double dot(int n, const double *x, int incx, const double *y, int incy)
{
    return cblas_ddot(n, x, incx, y, incy);
}
// dot of complex vectors is dotu (x^T y); dotc conjugates x.
#define LIB_COMPLEX_DOT(T, sub, wrapper)                                                      \
    inline T wrapper(int n, const T *x, int incx, const T *y, int incy)                       \
    {                                                                                         \
        T r;                                                                                  \
        sub(n, x, incx, y, incy, &r);                                                         \
        return r;                                                                             \
    }
LIB_COMPLEX_DOT(scomplex, cblas_cdotu_sub, dot)
LIB_COMPLEX_DOT(dcomplex, cblas_zdotu_sub, dot)
LIB_COMPLEX_DOT(scomplex, cblas_cdotc_sub, dotc)
LIB_COMPLEX_DOT(dcomplex, cblas_zdotc_sub, dotc)
inline float nrm2(int n, const float *x, int incx) { return cblas_snrm2(n, x, incx); }
inline double nrm2(int n, const double *x, int incx) { return cblas_dnrm2(n, x, incx); }
inline float nrm2(int n, const scomplex *x, int incx) { return cblas_scnrm2(n, x, incx); }
inline double nrm2(int n, const dcomplex *x, int incx) { return cblas_dznrm2(n, x, incx); }

// ---- LAPACK: the routines of one signature in all precisions ----

#define LIB_LAPACK(p, T, R)                                                                   \
    extern "C" void p##gesv_(const int *, const int *, T *, const int *, int *, T *,          \
                             const int *, int *);                                             \
    extern "C" void p##getrf_(const int *, const int *, T *, const int *, int *, int *);      \
    extern "C" void p##getrs_(const char *, const int *, const int *, const T *, const int *, \
                              const int *, T *, const int *, int *, size_t);                  \
    extern "C" void p##posv_(const char *, const int *, const int *, T *, const int *, T *,   \
                             const int *, int *, size_t);                                     \
    extern "C" void p##potrf_(const char *, const int *, T *, const int *, int *, size_t);    \
    extern "C" void p##potrs_(const char *, const int *, const int *, const T *, const int *, \
                              T *, const int *, int *, size_t);                               \
    extern "C" void p##gbsv_(const int *, const int *, const int *, const int *, T *,         \
                             const int *, int *, T *, const int *, int *);                    \
    extern "C" void p##gtsv_(const int *, const int *, T *, T *, T *, T *, const int *, int *); \
    extern "C" void p##ptsv_(const int *, const int *, R *, T *, T *, const int *, int *);    \
    extern "C" R p##lange_(const char *, const int *, const int *, const T *, const int *,    \
                           R *, size_t);                                                      \
    extern "C" void p##gels_(const char *, const int *, const int *, const int *, T *,        \
                             const int *, T *, const int *, T *, const int *, int *, size_t); \
    extern "C" void p##geqrf_(const int *, const int *, T *, const int *, T *, T *,           \
                              const int *, int *);                                            \
    inline int gesv(int n, int nrhs, T *a, int lda, int *ipiv, T *b, int ldb)                 \
    {                                                                                         \
        int info = 0;                                                                         \
        p##gesv_(&n, &nrhs, a, &lda, ipiv, b, &ldb, &info);                                   \
        return info;                                                                          \
    }                                                                                         \
    inline int getrf(int m, int n, T *a, int lda, int *ipiv)                                  \
    {                                                                                         \
        int info = 0;                                                                         \
        p##getrf_(&m, &n, a, &lda, ipiv, &info);                                              \
        return info;                                                                          \
    }                                                                                         \
    inline int getrs(char trans, int n, int nrhs, const T *a, int lda, const int *ipiv, T *b, \
                     int ldb)                                                                 \
    {                                                                                         \
        int info = 0;                                                                         \
        p##getrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);                       \
        return info;                                                                          \
    }                                                                                         \
    inline int posv(char uplo, int n, int nrhs, T *a, int lda, T *b, int ldb)                 \
    {                                                                                         \
        int info = 0;                                                                         \
        p##posv_(&uplo, &n, &nrhs, a, &lda, b, &ldb, &info, 1);                               \
        return info;                                                                          \
    }                                                                                         \
    inline int potrf(char uplo, int n, T *a, int lda)                                         \
    {                                                                                         \
        int info = 0;                                                                         \
        p##potrf_(&uplo, &n, a, &lda, &info, 1);                                              \
        return info;                                                                          \
    }                                                                                         \
    inline int potrs(char uplo, int n, int nrhs, const T *a, int lda, T *b, int ldb)          \
    {                                                                                         \
        int info = 0;                                                                         \
        p##potrs_(&uplo, &n, &nrhs, a, &lda, b, &ldb, &info, 1);                              \
        return info;                                                                          \
    }                                                                                         \
    inline int gbsv(int n, int kl, int ku, int nrhs, T *ab, int ldab, int *ipiv, T *b,        \
                    int ldb)                                                                  \
    {                                                                                         \
        int info = 0;                                                                         \
        p##gbsv_(&n, &kl, &ku, &nrhs, ab, &ldab, ipiv, b, &ldb, &info);                       \
        return info;                                                                          \
    }                                                                                         \
    inline int gtsv(int n, int nrhs, T *dl, T *d, T *du, T *b, int ldb)                       \
    {                                                                                         \
        int info = 0;                                                                         \
        p##gtsv_(&n, &nrhs, dl, d, du, b, &ldb, &info);                                       \
        return info;                                                                          \
    }                                                                                         \
    inline int ptsv(int n, int nrhs, R *d, T *e, T *b, int ldb)                               \
    {                                                                                         \
        int info = 0;                                                                         \
        p##ptsv_(&n, &nrhs, d, e, b, &ldb, &info);                                            \
        return info;                                                                          \
    }                                                                                         \
    inline R lange(char norm, int m, int n, const T *a, int lda)                              \
    {                                                                                         \
        std::vector<R> work(m > 0 ? m : 1);                                                   \
        return p##lange_(&norm, &m, &n, a, &lda, work.data(), 1);                             \
    }                                                                                         \
    inline int gels(char trans, int m, int n, int nrhs, T *a, int lda, T *b, int ldb,         \
                    T *work, int lwork)                                                       \
    {                                                                                         \
        int info = 0;                                                                         \
        p##gels_(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, &info, 1);            \
        return info;                                                                          \
    }                                                                                         \
    inline int geqrf(int m, int n, T *a, int lda, T *tau, T *work, int lwork)                 \
    {                                                                                         \
        int info = 0;                                                                         \
        p##geqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);                                 \
        return info;                                                                          \
    }
LIB_EACH(LIB_LAPACK)

// ---- LAPACK: symmetric (real) and Hermitian (complex) routines ----

// orgqr / ormqr for the real precisions, ungqr / unmqr for the complex ones.
#define LIB_QR_Q(T, gqr, mqr)                                                                 \
    extern "C" void gqr(const int *, const int *, const int *, T *, const int *, const T *,   \
                        T *, const int *, int *);                                             \
    extern "C" void mqr(const char *, const char *, const int *, const int *, const int *,    \
                        const T *, const int *, const T *, T *, const int *, T *,             \
                        const int *, int *, size_t, size_t);                                  \
    inline int orgqr(int m, int n, int k, T *a, int lda, const T *tau, T *work, int lwork)    \
    {                                                                                         \
        int info = 0;                                                                         \
        gqr(&m, &n, &k, a, &lda, tau, work, &lwork, &info);                                   \
        return info;                                                                          \
    }                                                                                         \
    inline int ormqr(char side, char trans, int m, int n, int k, const T *a, int lda,         \
                     const T *tau, T *c, int ldc, T *work, int lwork)                         \
    {                                                                                         \
        int info = 0;                                                                         \
        mqr(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, &info, 1, 1);     \
        return info;                                                                          \
    }
LIB_QR_Q(float, sorgqr_, sormqr_)
LIB_QR_Q(double, dorgqr_, dormqr_)
LIB_QR_Q(scomplex, cungqr_, cunmqr_)
LIB_QR_Q(dcomplex, zungqr_, zunmqr_)

// The routines whose real and complex signatures differ: each wrapper takes
// what both need (rwork, lrwork for the complex ones; wr, wi for real geev
// and w for complex geev) and passes what its precision's routine takes.
#define LIB_EIGEN_REAL(p, T, R)                                                               \
    extern "C" void p##syev_(const char *, const char *, const int *, T *, const int *, R *,  \
                             T *, const int *, int *, size_t, size_t);                        \
    extern "C" void p##syevd_(const char *, const char *, const int *, T *, const int *, R *, \
                              T *, const int *, int *, const int *, int *, size_t, size_t);   \
    extern "C" void p##syevr_(const char *, const char *, const char *, const int *, T *,     \
                              const int *, const R *, const R *, const int *, const int *,    \
                              const R *, int *, R *, T *, const int *, int *, T *,            \
                              const int *, int *, const int *, int *, size_t, size_t,         \
                              size_t);                                                        \
    extern "C" void p##sygv_(const int *, const char *, const char *, const int *, T *,       \
                             const int *, T *, const int *, R *, T *, const int *, int *,     \
                             size_t, size_t);                                                 \
    extern "C" void p##geev_(const char *, const char *, const int *, T *, const int *, R *,  \
                             R *, T *, const int *, T *, const int *, T *, const int *,       \
                             int *, size_t, size_t);                                          \
    extern "C" void p##gesvd_(const char *, const char *, const int *, const int *, T *,      \
                              const int *, R *, T *, const int *, T *, const int *, T *,      \
                              const int *, int *, size_t, size_t);                            \
    extern "C" void p##gesdd_(const char *, const int *, const int *, T *, const int *, R *,  \
                              T *, const int *, T *, const int *, T *, const int *, int *,    \
                              int *, size_t);                                                 \
    extern "C" void p##gecon_(const char *, const int *, const T *, const int *, const R *,   \
                              R *, T *, int *, int *, size_t);                                \
    inline int syev(char jobz, char uplo, int n, T *a, int lda, R *w, T *work, int lwork)     \
    {                                                                                         \
        int info = 0;                                                                         \
        p##syev_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, &info, 1, 1);                    \
        return info;                                                                          \
    }                                                                                         \
    inline int syevd(char jobz, char uplo, int n, T *a, int lda, R *w, T *work, int lwork,    \
                     R *, int, int *iwork, int liwork)                                        \
    {                                                                                         \
        int info = 0;                                                                         \
        p##syevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1, 1);   \
        return info;                                                                          \
    }                                                                                         \
    inline int syevr(char jobz, char range, char uplo, int n, T *a, int lda, R vl, R vu,      \
                     int il, int iu, R abstol, int *m, R *w, T *z, int ldz, int *isuppz,      \
                     T *work, int lwork, R *, int, int *iwork, int liwork)                    \
    {                                                                                         \
        int info = 0;                                                                         \
        p##syevr_(&jobz, &range, &uplo, &n, a, &lda, &vl, &vu, &il, &iu, &abstol, m, w, z,    \
                  &ldz, isuppz, work, &lwork, iwork, &liwork, &info, 1, 1, 1);                \
        return info;                                                                          \
    }                                                                                         \
    inline int sygv(int itype, char jobz, char uplo, int n, T *a, int lda, T *b, int ldb,     \
                    R *w, T *work, int lwork)                                                 \
    {                                                                                         \
        int info = 0;                                                                         \
        p##sygv_(&itype, &jobz, &uplo, &n, a, &lda, b, &ldb, w, work, &lwork, &info, 1, 1);   \
        return info;                                                                          \
    }                                                                                         \
    inline int geev(char jobvl, char jobvr, int n, T *a, int lda, R *wr, R *wi, T *, T *vl,   \
                    int ldvl, T *vr, int ldvr, T *work, int lwork)                            \
    {                                                                                         \
        int info = 0;                                                                         \
        p##geev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, vl, &ldvl, vr, &ldvr, work, &lwork,     \
                 &info, 1, 1);                                                                \
        return info;                                                                          \
    }                                                                                         \
    inline int gesvd(char jobu, char jobvt, int m, int n, T *a, int lda, R *s, T *u, int ldu, \
                     T *vt, int ldvt, T *work, int lwork)                                     \
    {                                                                                         \
        int info = 0;                                                                         \
        p##gesvd_(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, &info, \
                  1, 1);                                                                      \
        return info;                                                                          \
    }                                                                                         \
    inline int gesdd(char jobz, int m, int n, T *a, int lda, R *s, T *u, int ldu, T *vt,      \
                     int ldvt, T *work, int lwork)                                            \
    {                                                                                         \
        int info = 0, mn = m < n ? m : n;                                                     \
        std::vector<int> iwork(8 * mn > 1 ? 8 * mn : 1);                                      \
        p##gesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork.data(),  \
                  &info, 1);                                                                  \
        return info;                                                                          \
    }                                                                                         \
    inline int gecon(char norm, int n, const T *a, int lda, R anorm, R *rcond)                \
    {                                                                                         \
        int info = 0;                                                                         \
        std::vector<T> work(4 * n + 1);                                                       \
        std::vector<int> iwork(n + 1);                                                        \
        p##gecon_(&norm, &n, a, &lda, &anorm, rcond, work.data(), iwork.data(), &info, 1);    \
        return info;                                                                          \
    }
LIB_EACH_REAL(LIB_EIGEN_REAL)

#define LIB_EIGEN_COMPLEX(p, T, R)                                                            \
    extern "C" void p##heev_(const char *, const char *, const int *, T *, const int *, R *,  \
                             T *, const int *, R *, int *, size_t, size_t);                   \
    extern "C" void p##heevd_(const char *, const char *, const int *, T *, const int *, R *, \
                              T *, const int *, R *, const int *, int *, const int *, int *,  \
                              size_t, size_t);                                                \
    extern "C" void p##heevr_(const char *, const char *, const char *, const int *, T *,     \
                              const int *, const R *, const R *, const int *, const int *,    \
                              const R *, int *, R *, T *, const int *, int *, T *,            \
                              const int *, R *, const int *, int *, const int *, int *,       \
                              size_t, size_t, size_t);                                        \
    extern "C" void p##hegv_(const int *, const char *, const char *, const int *, T *,       \
                             const int *, T *, const int *, R *, T *, const int *, R *,       \
                             int *, size_t, size_t);                                          \
    extern "C" void p##geev_(const char *, const char *, const int *, T *, const int *, T *,  \
                             T *, const int *, T *, const int *, T *, const int *, R *,       \
                             int *, size_t, size_t);                                          \
    extern "C" void p##gesvd_(const char *, const char *, const int *, const int *, T *,      \
                              const int *, R *, T *, const int *, T *, const int *, T *,      \
                              const int *, R *, int *, size_t, size_t);                       \
    extern "C" void p##gesdd_(const char *, const int *, const int *, T *, const int *, R *,  \
                              T *, const int *, T *, const int *, T *, const int *, R *,      \
                              int *, int *, size_t);                                          \
    extern "C" void p##gecon_(const char *, const int *, const T *, const int *, const R *,   \
                              R *, T *, R *, int *, size_t);                                  \
    inline int syev(char jobz, char uplo, int n, T *a, int lda, R *w, T *work, int lwork)     \
    {                                                                                         \
        int info = 0;                                                                         \
        std::vector<R> rwork(3 * n + 1);                                                      \
        p##heev_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork.data(), &info, 1, 1);      \
        return info;                                                                          \
    }                                                                                         \
    inline int syevd(char jobz, char uplo, int n, T *a, int lda, R *w, T *work, int lwork,    \
                     R *rwork, int lrwork, int *iwork, int liwork)                            \
    {                                                                                         \
        int info = 0;                                                                         \
        p##heevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, \
                  &info, 1, 1);                                                               \
        return info;                                                                          \
    }                                                                                         \
    inline int syevr(char jobz, char range, char uplo, int n, T *a, int lda, R vl, R vu,      \
                     int il, int iu, R abstol, int *m, R *w, T *z, int ldz, int *isuppz,      \
                     T *work, int lwork, R *rwork, int lrwork, int *iwork, int liwork)        \
    {                                                                                         \
        int info = 0;                                                                         \
        p##heevr_(&jobz, &range, &uplo, &n, a, &lda, &vl, &vu, &il, &iu, &abstol, m, w, z,    \
                  &ldz, isuppz, work, &lwork, rwork, &lrwork, iwork, &liwork, &info, 1, 1, 1); \
        return info;                                                                          \
    }                                                                                         \
    inline int sygv(int itype, char jobz, char uplo, int n, T *a, int lda, T *b, int ldb,     \
                    R *w, T *work, int lwork)                                                 \
    {                                                                                         \
        int info = 0;                                                                         \
        std::vector<R> rwork(3 * n + 1);                                                      \
        p##hegv_(&itype, &jobz, &uplo, &n, a, &lda, b, &ldb, w, work, &lwork, rwork.data(),   \
                 &info, 1, 1);                                                                \
        return info;                                                                          \
    }                                                                                         \
    inline int geev(char jobvl, char jobvr, int n, T *a, int lda, R *, R *, T *w, T *vl,      \
                    int ldvl, T *vr, int ldvr, T *work, int lwork)                            \
    {                                                                                         \
        int info = 0;                                                                         \
        std::vector<R> rwork(2 * n + 1);                                                      \
        p##geev_(&jobvl, &jobvr, &n, a, &lda, w, vl, &ldvl, vr, &ldvr, work, &lwork,          \
                 rwork.data(), &info, 1, 1);                                                  \
        return info;                                                                          \
    }                                                                                         \
    inline int gesvd(char jobu, char jobvt, int m, int n, T *a, int lda, R *s, T *u, int ldu, \
                     T *vt, int ldvt, T *work, int lwork)                                     \
    {                                                                                         \
        int info = 0, mn = m < n ? m : n;                                                     \
        std::vector<R> rwork(5 * mn + 1);                                                     \
        p##gesvd_(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork,        \
                  rwork.data(), &info, 1, 1);                                                 \
        return info;                                                                          \
    }                                                                                         \
    inline int gesdd(char jobz, int m, int n, T *a, int lda, R *s, T *u, int ldu, T *vt,      \
                     int ldvt, T *work, int lwork)                                            \
    {                                                                                         \
        int info = 0, mn = m < n ? m : n, mx = m < n ? n : m;                                 \
        size_t lrwork = static_cast<size_t>(5 * mn * mn + 5 * mn) +                           \
                        static_cast<size_t>(2 * mx * mn + 2 * mn * mn + mn) + 7 * mn + 1;     \
        std::vector<R> rwork(lrwork);                                                         \
        std::vector<int> iwork(8 * mn + 1);                                                   \
        p##gesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork.data(),  \
                  iwork.data(), &info, 1);                                                    \
        return info;                                                                          \
    }                                                                                         \
    inline int gecon(char norm, int n, const T *a, int lda, R anorm, R *rcond)                \
    {                                                                                         \
        int info = 0;                                                                         \
        std::vector<T> work(2 * n + 1);                                                       \
        std::vector<R> rwork(2 * n + 1);                                                      \
        p##gecon_(&norm, &n, a, &lda, &anorm, rcond, work.data(), rwork.data(), &info, 1);    \
        return info;                                                                          \
    }
LIB_EACH_COMPLEX(LIB_EIGEN_COMPLEX)

}  // namespace lib

#endif
