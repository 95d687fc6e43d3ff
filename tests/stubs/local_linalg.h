// local_linalg.h -- the local LAPACK routines numrpc.linalg added to stubs/lapack.idl
// (getri, sysv/hesv, gelsd/gelss/gelsy, geqp3, ggev), one C++ overload per precision.
#ifndef NUMRPC_TESTS_LOCAL_LINALG_H
#define NUMRPC_TESTS_LOCAL_LINALG_H

#include "local_precisions.h"

// As in local_precisions.h: scalars by value, gfortran's hidden lengths, the
// complex routines' real work arrays allocated here (gelsd's rwork is the
// caller's, for its workspace query); hesv of a real precision is sysv, and
// the real ggev takes alphar and alphai where the complex one takes alpha.
namespace lib {

#define LIB_LINALG_COMMON(p, T, R)                                                            \
    extern "C" void p##getri_(const int *, T *, const int *, const int *, T *, const int *,   \
                              int *);                                                         \
    extern "C" void p##sysv_(const char *, const int *, const int *, T *, const int *, int *, \
                             T *, const int *, T *, const int *, int *, size_t);              \
    inline int getri(int n, T *a, int lda, const int *ipiv, T *work, int lwork)               \
    {                                                                                         \
        int info = 0;                                                                         \
        p##getri_(&n, a, &lda, ipiv, work, &lwork, &info);                                    \
        return info;                                                                          \
    }                                                                                         \
    inline int sysv(char uplo, int n, int nrhs, T *a, int lda, int *ipiv, T *b, int ldb,      \
                    T *work, int lwork)                                                       \
    {                                                                                         \
        int info = 0;                                                                         \
        p##sysv_(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, work, &lwork, &info, 1);           \
        return info;                                                                          \
    }
LIB_EACH(LIB_LINALG_COMMON)

#define LIB_LINALG_REAL(p, T, R)                                                              \
    extern "C" void p##gelsd_(const int *, const int *, const int *, T *, const int *, T *,   \
                              const int *, R *, const R *, int *, T *, const int *, int *,    \
                              int *);                                                         \
    extern "C" void p##gelss_(const int *, const int *, const int *, T *, const int *, T *,   \
                              const int *, R *, const R *, int *, T *, const int *, int *);   \
    extern "C" void p##gelsy_(const int *, const int *, const int *, T *, const int *, T *,   \
                              const int *, int *, const R *, int *, T *, const int *, int *); \
    extern "C" void p##geqp3_(const int *, const int *, T *, const int *, int *, T *, T *,    \
                              const int *, int *);                                            \
    extern "C" void p##ggev_(const char *, const char *, const int *, T *, const int *, T *,  \
                             const int *, R *, R *, T *, T *, const int *, T *, const int *,  \
                             T *, const int *, int *, size_t, size_t);                        \
    inline int hesv(char uplo, int n, int nrhs, T *a, int lda, int *ipiv, T *b, int ldb,      \
                    T *work, int lwork)                                                       \
    {                                                                                         \
        return sysv(uplo, n, nrhs, a, lda, ipiv, b, ldb, work, lwork);                        \
    }                                                                                         \
    inline int gelsd(int m, int n, int nrhs, T *a, int lda, T *b, int ldb, R *s, R rcond,     \
                     int *rank, T *work, int lwork, R *, int *iwork)                          \
    {                                                                                         \
        int info = 0;                                                                         \
        p##gelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, iwork,      \
                  &info);                                                                     \
        return info;                                                                          \
    }                                                                                         \
    inline int gelss(int m, int n, int nrhs, T *a, int lda, T *b, int ldb, R *s, R rcond,     \
                     int *rank, T *work, int lwork)                                           \
    {                                                                                         \
        int info = 0;                                                                         \
        p##gelss_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, &info);     \
        return info;                                                                          \
    }                                                                                         \
    inline int gelsy(int m, int n, int nrhs, T *a, int lda, T *b, int ldb, int *jpvt,         \
                     R rcond, int *rank, T *work, int lwork)                                  \
    {                                                                                         \
        int info = 0;                                                                         \
        p##gelsy_(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work, &lwork, &info);  \
        return info;                                                                          \
    }                                                                                         \
    inline int geqp3(int m, int n, T *a, int lda, int *jpvt, T *tau, T *work, int lwork)      \
    {                                                                                         \
        int info = 0;                                                                         \
        p##geqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, &info);                           \
        return info;                                                                          \
    }                                                                                         \
    inline int ggev(char jobvl, char jobvr, int n, T *a, int lda, T *b, int ldb, R *alphar,   \
                    R *alphai, T *, T *beta, T *vl, int ldvl, T *vr, int ldvr, T *work,       \
                    int lwork)                                                                \
    {                                                                                         \
        int info = 0;                                                                         \
        p##ggev_(&jobvl, &jobvr, &n, a, &lda, b, &ldb, alphar, alphai, beta, vl, &ldvl, vr,   \
                 &ldvr, work, &lwork, &info, 1, 1);                                           \
        return info;                                                                          \
    }
LIB_EACH_REAL(LIB_LINALG_REAL)

#define LIB_LINALG_COMPLEX(p, T, R)                                                           \
    extern "C" void p##hesv_(const char *, const int *, const int *, T *, const int *, int *, \
                             T *, const int *, T *, const int *, int *, size_t);              \
    extern "C" void p##gelsd_(const int *, const int *, const int *, T *, const int *, T *,   \
                              const int *, R *, const R *, int *, T *, const int *, R *,      \
                              int *, int *);                                                  \
    extern "C" void p##gelss_(const int *, const int *, const int *, T *, const int *, T *,   \
                              const int *, R *, const R *, int *, T *, const int *, R *,      \
                              int *);                                                         \
    extern "C" void p##gelsy_(const int *, const int *, const int *, T *, const int *, T *,   \
                              const int *, int *, const R *, int *, T *, const int *, R *,    \
                              int *);                                                         \
    extern "C" void p##geqp3_(const int *, const int *, T *, const int *, int *, T *, T *,    \
                              const int *, R *, int *);                                       \
    extern "C" void p##ggev_(const char *, const char *, const int *, T *, const int *, T *,  \
                             const int *, T *, T *, T *, const int *, T *, const int *, T *,  \
                             const int *, R *, int *, size_t, size_t);                        \
    inline int hesv(char uplo, int n, int nrhs, T *a, int lda, int *ipiv, T *b, int ldb,      \
                    T *work, int lwork)                                                       \
    {                                                                                         \
        int info = 0;                                                                         \
        p##hesv_(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, work, &lwork, &info, 1);           \
        return info;                                                                          \
    }                                                                                         \
    inline int gelsd(int m, int n, int nrhs, T *a, int lda, T *b, int ldb, R *s, R rcond,     \
                     int *rank, T *work, int lwork, R *rwork, int *iwork)                     \
    {                                                                                         \
        int info = 0;                                                                         \
        p##gelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, rwork,      \
                  iwork, &info);                                                              \
        return info;                                                                          \
    }                                                                                         \
    inline int gelss(int m, int n, int nrhs, T *a, int lda, T *b, int ldb, R *s, R rcond,     \
                     int *rank, T *work, int lwork)                                           \
    {                                                                                         \
        int info = 0, mn = m < n ? m : n;                                                     \
        std::vector<R> rwork(5 * mn + 1);                                                     \
        p##gelss_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork,             \
                  rwork.data(), &info);                                                       \
        return info;                                                                          \
    }                                                                                         \
    inline int gelsy(int m, int n, int nrhs, T *a, int lda, T *b, int ldb, int *jpvt,         \
                     R rcond, int *rank, T *work, int lwork)                                  \
    {                                                                                         \
        int info = 0;                                                                         \
        std::vector<R> rwork(2 * n + 1);                                                      \
        p##gelsy_(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work, &lwork,          \
                  rwork.data(), &info);                                                       \
        return info;                                                                          \
    }                                                                                         \
    inline int geqp3(int m, int n, T *a, int lda, int *jpvt, T *tau, T *work, int lwork)      \
    {                                                                                         \
        int info = 0;                                                                         \
        std::vector<R> rwork(2 * n + 1);                                                      \
        p##geqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, rwork.data(), &info);             \
        return info;                                                                          \
    }                                                                                         \
    inline int ggev(char jobvl, char jobvr, int n, T *a, int lda, T *b, int ldb, R *, R *,    \
                    T *alpha, T *beta, T *vl, int ldvl, T *vr, int ldvr, T *work, int lwork)  \
    {                                                                                         \
        int info = 0;                                                                         \
        std::vector<R> rwork(8 * n + 1);                                                      \
        p##ggev_(&jobvl, &jobvr, &n, a, &lda, b, &ldb, alpha, beta, vl, &ldvl, vr, &ldvr,     \
                 work, &lwork, rwork.data(), &info, 1, 1);                                    \
        return info;                                                                          \
    }
LIB_EACH_COMPLEX(LIB_LINALG_COMPLEX)

}  // namespace lib

#endif
