// precisions_remote_test.cc -- every routine of stubs/blas.idl and
// stubs/lapack.idl in s, d, c and z called through a real numrpc-server,
// against the local OpenBLAS/LAPACK routine on the same random inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "local_linalg.h"
#include "local_precisions.h"
#include "remote_support.h"

namespace {

const testing::Environment *const g_env = testing::AddGlobalTestEnvironment(new StubServer);

using scomplex = std::complex<float>;
using dcomplex = std::complex<double>;

// ---- The four precisions ----

template <class T>
struct Prec;
template <>
struct Prec<float> {
    using R = float;
    static constexpr const char *prefix = "s", *nrm2 = "snrm2", *rscal = "";
    static constexpr bool complex = false;
    static constexpr char trans_h = 'T';  // op(A) = A^T, what LAPACK's real routines take
};
template <>
struct Prec<double> {
    using R = double;
    static constexpr const char *prefix = "d", *nrm2 = "dnrm2", *rscal = "";
    static constexpr bool complex = false;
    static constexpr char trans_h = 'T';
};
template <>
struct Prec<scomplex> {
    using R = float;
    static constexpr const char *prefix = "c", *nrm2 = "scnrm2", *rscal = "csscal";
    static constexpr bool complex = true;
    static constexpr char trans_h = 'C';  // op(A) = A^H
};
template <>
struct Prec<dcomplex> {
    using R = double;
    static constexpr const char *prefix = "z", *nrm2 = "dznrm2", *rscal = "zdscal";
    static constexpr bool complex = true;
    static constexpr char trans_h = 'C';
};

template <class T>
using Real = typename Prec<T>::R;
template <class T>
constexpr bool kComplex = Prec<T>::complex;

// The remote routine: "dgemm"; for complex precisions the second name, when
// given ("syev" / "heev" gives "dsyev" and "zheev").
template <class T>
std::string Name(const char *real, const char *complex = nullptr)
{
    return std::string(Prec<T>::prefix) + (kComplex<T> && complex ? complex : real);
}

// The unit roundoff of T's precision: every tolerance scales with it, so
// single precision is checked more loosely than double.
template <class T>
double Eps()
{
    return std::numeric_limits<Real<T>>::epsilon();
}

// numrpc_call's argument for an IN scalar of T: a real one promoted to
// double, a complex one by pointer to its two parts.
inline double In(float x) { return x; }
inline double In(double x) { return x; }
inline const void *In(const scomplex &x) { return &x; }
inline const void *In(const dcomplex &x) { return &x; }

// ---- Deterministic data ----

// Elements outside the part a routine uses hold this value; remote calls
// must leave them as they are.
template <class T>
T Sentinel()
{
    return T(12345.5f);
}

template <class T>
T Random(Rng &rng)
{
    if constexpr (kComplex<T>) {
        Real<T> re = static_cast<Real<T>>(rng.Next());
        return T(re, static_cast<Real<T>>(rng.Next()));
    } else {
        return static_cast<T>(rng.Next());
    }
}

template <class T>
T Conj(T x)
{
    if constexpr (kComplex<T>) return std::conj(x);
    else return x;
}

size_t At(int i, int j, int ld) { return static_cast<size_t>(j) * ld + i; }

// A rows x cols matrix in a block of ld x cols (at least one element):
// random in the used part, the sentinel below row `rows`.
template <class T>
std::vector<T> Matrix(int rows, int cols, int ld, Rng &rng)
{
    std::vector<T> a(std::max<size_t>(1, static_cast<size_t>(ld) * cols), Sentinel<T>());
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++) a[At(i, j, ld)] = Random<T>(rng);
    return a;
}

// n elements at stride inc, the sentinel between them.
template <class T>
std::vector<T> Strided(int n, int inc, Rng &rng)
{
    std::vector<T> x(std::max(1, 1 + (n - 1) * inc), Sentinel<T>());
    for (int i = 0; i < n; i++) x[static_cast<size_t>(i) * inc] = Random<T>(rng);
    return x;
}

// A Hermitian (symmetric when real) n x n matrix, both triangles stored.
template <class T>
std::vector<T> Hermitian(int n, int ld, Rng &rng)
{
    std::vector<T> a = Matrix<T>(n, n, ld, rng);
    for (int j = 0; j < n; j++) {
        a[At(j, j, ld)] = T(std::real(a[At(j, j, ld)]));
        for (int i = 0; i < j; i++) a[At(j, i, ld)] = Conj(a[At(i, j, ld)]);
    }
    return a;
}

// A Hermitian positive definite n x n matrix: B B^H / n + I.
template <class T>
std::vector<T> PositiveDefinite(int n, int ld, Rng &rng)
{
    std::vector<T> b = Matrix<T>(n, n, std::max(n, 1), rng);
    std::vector<T> a(std::max<size_t>(1, static_cast<size_t>(ld) * n), Sentinel<T>());
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            T s = T(i == j ? 1 : 0);
            for (int k = 0; k < n; k++) s += b[At(i, k, n)] * Conj(b[At(j, k, n)]) / T(n);
            a[At(i, j, ld)] = s;
        }
    for (int j = 0; j < n; j++) a[At(j, j, ld)] = T(std::real(a[At(j, j, ld)]));
    return a;
}

template <class E>
double MaxAbs(const std::vector<E> &v)
{
    double m = 0;
    for (const E &x : v)
        if (x != Sentinel<E>()) m = std::max(m, static_cast<double>(std::abs(x)));
    return m;
}

// got equals want within tol element by element; sentinels exactly.
template <class E>
void ExpectClose(const std::vector<E> &got, const std::vector<E> &want, double tol,
                 const char *what)
{
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); i++) {
        if (want[i] == Sentinel<E>()) {
            ASSERT_EQ(got[i], Sentinel<E>()) << what << "[" << i << "] outside the used part was written";
            continue;
        }
        ASSERT_LE(std::abs(got[i] - want[i]), tol)
            << what << "[" << i << "]: remote " << got[i] << " local " << want[i];
    }
}

// Tolerance for sums of k products of numbers of magnitude <= scale.
template <class T>
double SumTol(int k, double scale)
{
    return 16.0 * Eps<T>() * (k + 2) * (k + 2) * (1.0 + scale);
}

// Tolerance for the results of a factorisation or decomposition of an
// n x n problem whose results have magnitude <= scale.
template <class T>
double FactorTol(int n, double scale)
{
    return 1e3 * (n + 1) * Eps<T>() * (1.0 + scale);
}

// The 1-norm condition number of the n x n matrix a, by the local library.
template <class T>
double Cond1(const std::vector<T> &a, int n, int lda)
{
    if (n == 0) return 1.0;
    std::vector<T> lu = a;
    std::vector<int> ipiv(n);
    Real<T> anorm = lib::lange('1', n, n, lu.data(), lda), rcond = 0;
    if (lib::getrf(n, n, lu.data(), lda, ipiv.data()) != 0) return 1e30;
    lib::gecon('1', n, lu.data(), lda, anorm, &rcond);
    return rcond > 0 ? 1.0 / rcond : 1e30;
}

// Tolerance for the solution x of a system of condition cond.
template <class T>
double SolveTol(double cond, int n, double scale)
{
    return 100.0 * (n + 1) * Eps<T>() * cond * (1.0 + scale);
}

// An optimal LAPACK workspace size from the first element of a query.
template <class E>
int Lwork(E query)
{
    return std::max(1, static_cast<int>(std::real(query)));
}

// max_k |A z_k - w_k z_k| for the Hermitian n x n A and ncols vectors z_k.
template <class T>
double EigenResidual(const std::vector<T> &a, int n, int lda, const std::vector<Real<T>> &w,
                     const std::vector<T> &z, int ldz, int ncols)
{
    double worst = 0;
    for (int k = 0; k < ncols; k++)
        for (int i = 0; i < n; i++) {
            dcomplex r = -static_cast<double>(w[k]) * dcomplex(z[At(i, k, ldz)]);
            for (int j = 0; j < n; j++) r += dcomplex(a[At(i, j, lda)]) * dcomplex(z[At(j, k, ldz)]);
            worst = std::max(worst, std::abs(r));
        }
    return worst;
}

const int kSizes[] = {0, 1, 9, 40};

template <class T>
class Remote : public testing::Test {};

class PrecisionName {
  public:
    template <class T>
    static std::string GetName(int)
    {
        return Prec<T>::prefix;
    }
};

using Precisions = testing::Types<float, double, scomplex, dcomplex>;
TYPED_TEST_SUITE(Remote, Precisions, PrecisionName);

// ---- BLAS level 1 ----

TYPED_TEST(Remote, CopyAxpyScalWithPositiveAndNegativeIncrements)
{
    using T = TypeParam;
    for (int n : kSizes)
        for (int sign : {1, -1}) {
            SCOPED_TRACE("n " + std::to_string(n) + " sign " + std::to_string(sign));
            const int incx = 2 * sign, incy = 3 * sign;
            Rng rng(100 + n + sign);
            const std::vector<T> x = Strided<T>(n, 2, rng), y = Strided<T>(n, 3, rng);
            std::vector<T> yr = y, yl = y;
            ASSERT_EQ(Call(numrpc_call(Name<T>("copy").c_str(), n, x.data(), incx, yr.data(), incy)),
                      NUMRPC_OK);
            lib::copy(n, x.data(), incx, yl.data(), incy);
            ExpectClose(yr, yl, 0.0, "copy y");

            const T alpha = Random<T>(rng);
            yr = y;
            yl = y;
            ASSERT_EQ(Call(numrpc_call(Name<T>("axpy").c_str(), n, In(alpha), x.data(), incx,
                                       yr.data(), incy)),
                      NUMRPC_OK);
            lib::axpy(n, alpha, x.data(), incx, yl.data(), incy);
            ExpectClose(yr, yl, SumTol<T>(1, 2.0), "axpy y");

            std::vector<T> xr = x, xl = x;
            ASSERT_EQ(Call(numrpc_call(Name<T>("scal").c_str(), n, In(alpha), xr.data(), incx)),
                      NUMRPC_OK);
            lib::scal(n, alpha, xl.data(), incx);
            ExpectClose(xr, xl, SumTol<T>(1, 2.0), "scal x");
            if constexpr (kComplex<T>) {  // csscal / zdscal: a real alpha
                const Real<T> beta = static_cast<Real<T>>(-0.75);
                ASSERT_EQ(Call(numrpc_call(Prec<T>::rscal, n, In(beta), xr.data(), incx)),
                          NUMRPC_OK);
                lib::rscal(n, beta, xl.data(), incx);
                ExpectClose(xr, xl, SumTol<T>(1, 2.0), "real-alpha scal x");
            }
        }
}

// dot (x^T y) for every precision, dotc (x^H y) for the complex ones, and
// nrm2's real result, against the local CBLAS and a sum written out here.
TYPED_TEST(Remote, DotsAndNorm)
{
    using T = TypeParam;
    using R = Real<T>;
    for (int n : kSizes) {
        SCOPED_TRACE("n " + std::to_string(n));
        Rng rng(200 + n);
        const int incx = 2, incy = -3;
        const std::vector<T> x = Strided<T>(n, 2, rng), y = Strided<T>(n, 3, rng);
        const double tol = SumTol<T>(n, 2.0);
        for (bool conjugated : {false, true}) {
            if (conjugated && !kComplex<T>) continue;
            T r = T(-99);
            const std::string name = Name<T>("dot", conjugated ? "dotc" : "dotu");
            ASSERT_EQ(Call(numrpc_call(name.c_str(), n, x.data(), incx, y.data(), incy, &r)),
                      NUMRPC_OK);
            T local;
            if constexpr (kComplex<T>)
                local = conjugated ? lib::dotc(n, x.data(), incx, y.data(), incy)
                                   : lib::dot(n, x.data(), incx, y.data(), incy);
            else
                local = lib::dot(n, x.data(), incx, y.data(), incy);
            EXPECT_LE(std::abs(r - local), tol) << name;
            dcomplex direct = 0;  // y walked backwards: incy < 0
            for (int i = 0; i < n; i++) {
                dcomplex xi(x[static_cast<size_t>(i) * 2]);
                direct += (conjugated ? std::conj(xi) : xi) *
                          dcomplex(y[static_cast<size_t>(n - 1 - i) * 3]);
            }
            EXPECT_LE(std::abs(dcomplex(r) - direct), tol) << name << " against the sum";
        }
        R norm = R(-99);
        ASSERT_EQ(Call(numrpc_call(Prec<T>::nrm2, n, x.data(), incx, &norm)), NUMRPC_OK);
        EXPECT_NEAR(norm, lib::nrm2(n, x.data(), incx), tol);
        double squares = 0;
        for (int i = 0; i < n; i++) squares += std::norm(dcomplex(x[static_cast<size_t>(i) * 2]));
        EXPECT_NEAR(norm, std::sqrt(squares), tol) << "against the sum";
    }
}

// ---- BLAS level 2 and 3 (lda > rows everywhere) ----

TYPED_TEST(Remote, GemvAllTransposes)
{
    using T = TypeParam;
    for (int n : kSizes)
        for (int trans : {'N', 'T', 'C'}) {
            SCOPED_TRACE("n " + std::to_string(n) + " trans " + static_cast<char>(trans));
            const int m = n + 2, lda = m + 3, incx = 2, incy = -3;
            const bool plain = trans == 'N';
            Rng rng(300 + n + trans);
            const std::vector<T> a = Matrix<T>(m, n, lda, rng);
            const std::vector<T> x = Strided<T>(plain ? n : m, 2, rng);
            std::vector<T> y = Strided<T>(plain ? m : n, 3, rng), yl = y;
            const T alpha = Random<T>(rng), beta = Random<T>(rng);
            ASSERT_EQ(Call(numrpc_call(Name<T>("gemv").c_str(), trans, m, n, In(alpha), a.data(),
                                       lda, x.data(), incx, In(beta), y.data(), incy)),
                      NUMRPC_OK);
            lib::gemv(static_cast<char>(trans), m, n, alpha, a.data(), lda, x.data(), incx, beta,
                      yl.data(), incy);
            ExpectClose(y, yl, SumTol<T>(m + n, 2.0), "y");
        }
}

TYPED_TEST(Remote, GemmTransposePairs)
{
    using T = TypeParam;
    const char pairs[][2] = {{'N', 'N'}, {'T', 'N'}, {'N', 'C'}, {'C', 'T'}};
    for (int size : kSizes)
        for (const auto &tr : pairs) {
            SCOPED_TRACE("size " + std::to_string(size) + " trans " + tr[0] + tr[1]);
            const int m = size + 1, n = size, k = size / 2 + 1;
            const bool na = tr[0] == 'N', nb = tr[1] == 'N';
            const int arows = na ? m : k, acols = na ? k : m;
            const int brows = nb ? k : n, bcols = nb ? n : k;
            const int lda = arows + 2, ldb = brows + 3, ldc = m + 1;
            Rng rng(400 + size + tr[0] + 3 * tr[1]);
            const std::vector<T> a = Matrix<T>(arows, acols, lda, rng);
            const std::vector<T> b = Matrix<T>(brows, bcols, ldb, rng);
            std::vector<T> c = Matrix<T>(m, n, ldc, rng), cl = c;
            const T alpha = Random<T>(rng), beta = Random<T>(rng);
            ASSERT_EQ(Call(numrpc_call(Name<T>("gemm").c_str(), tr[0], tr[1], m, n, k, In(alpha),
                                       a.data(), lda, b.data(), ldb, In(beta), c.data(), ldc)),
                      NUMRPC_OK);
            lib::gemm(tr[0], tr[1], m, n, k, alpha, a.data(), lda, b.data(), ldb, beta,
                      cl.data(), ldc);
            ExpectClose(c, cl, SumTol<T>(k, 2.0), "c");
        }
}

// A triangular, well conditioned: a diagonal of 2 .. 3, the rest over k.
template <class T>
std::vector<T> Triangular(int k, int ld, Rng &rng)
{
    std::vector<T> a = Matrix<T>(k, k, ld, rng);
    for (int j = 0; j < k; j++)
        for (int i = 0; i < k; i++)
            a[At(i, j, ld)] = i == j ? T(2.5) + a[At(i, j, ld)] / T(2) : a[At(i, j, ld)] / T(k);
    return a;
}

TYPED_TEST(Remote, TrsmAndTrmm)
{
    using T = TypeParam;
    const char combos[][4] = {{'L', 'U', 'N', 'N'}, {'R', 'L', 'T', 'U'},
                              {'L', 'L', 'C', 'N'}, {'R', 'U', 'C', 'U'}};
    for (int n : kSizes)
        for (const auto &cb : combos)
            for (const char *op : {"trsm", "trmm"}) {
                SCOPED_TRACE(std::string(op) + " n " + std::to_string(n) + " " +
                             std::string(cb, 4));
                const int m = n + 1, k = cb[0] == 'L' ? m : n, lda = k + 2, ldb = m + 1;
                Rng rng(500 + n + cb[0] + cb[1] + cb[2]);
                const std::vector<T> a = Triangular<T>(k, lda, rng);
                std::vector<T> b = Matrix<T>(m, n, ldb, rng), bl = b;
                const T alpha = Random<T>(rng);
                ASSERT_EQ(Call(numrpc_call(Name<T>(op).c_str(), cb[0], cb[1], cb[2], cb[3], m, n,
                                           In(alpha), a.data(), lda, b.data(), ldb)),
                          NUMRPC_OK);
                if (op[2] == 's')
                    lib::trsm(cb[0], cb[1], cb[2], cb[3], m, n, alpha, a.data(), lda, bl.data(),
                              ldb);
                else
                    lib::trmm(cb[0], cb[1], cb[2], cb[3], m, n, alpha, a.data(), lda, bl.data(),
                              ldb);
                ExpectClose(b, bl, SumTol<T>(k, MaxAbs(bl)), "b");
            }
}

TYPED_TEST(Remote, SyrkHerkSymmHemm)
{
    using T = TypeParam;
    using R = Real<T>;
    for (int n : kSizes)
        for (int uplo : {'U', 'L'}) {
            SCOPED_TRACE("n " + std::to_string(n) + " uplo " + static_cast<char>(uplo));
            const char u = static_cast<char>(uplo);
            const int k = n / 2 + 1, ldc = n + 1;
            Rng rng(600 + n + uplo);
            const T alpha = Random<T>(rng), beta = Random<T>(rng);
            for (int trans : {'N', 'T', 'C'}) {
                const char t = static_cast<char>(trans);
                const int rows = t == 'N' ? n : k, cols = t == 'N' ? k : n, lda = rows + 2;
                const std::vector<T> a = Matrix<T>(rows, cols, lda, rng);
                const std::vector<T> c0 = Matrix<T>(n, n, ldc, rng);
                if (t != 'C') {  // syrk: A A^T or A^T A, for every precision
                    std::vector<T> c = c0, cl = c0;
                    ASSERT_EQ(Call(numrpc_call(Name<T>("syrk").c_str(), u, t, n, k, In(alpha),
                                               a.data(), lda, In(beta), c.data(), ldc)),
                              NUMRPC_OK);
                    lib::syrk(u, t, n, k, alpha, a.data(), lda, beta, cl.data(), ldc);
                    ExpectClose(c, cl, SumTol<T>(k, 2.0), "syrk c");
                }
                if constexpr (kComplex<T>) {  // herk: A A^H or A^H A, real alpha and beta
                    if (t != 'T') {
                        const R ra = static_cast<R>(0.5), rb = static_cast<R>(-1.25);
                        std::vector<T> c = c0, cl = c0;
                        ASSERT_EQ(Call(numrpc_call(Name<T>("herk").c_str(), u, t, n, k, In(ra),
                                                   a.data(), lda, In(rb), c.data(), ldc)),
                                  NUMRPC_OK);
                        lib::herk(u, t, n, k, ra, a.data(), lda, rb, cl.data(), ldc);
                        ExpectClose(c, cl, SumTol<T>(k, 2.0), "herk c");
                    }
                }
            }
            for (int side : {'L', 'R'}) {
                const char s = static_cast<char>(side);
                const int m = n + 1, ka = s == 'L' ? m : n, lda = ka + 3, ldb = m + 2;
                const std::vector<T> a = Matrix<T>(ka, ka, lda, rng);
                const std::vector<T> b = Matrix<T>(m, n, ldb, rng);
                const std::vector<T> c0 = Matrix<T>(m, n, m + 1, rng);
                for (const char *op : {"symm", "hemm"}) {
                    if (op[0] == 'h' && !kComplex<T>) continue;
                    std::vector<T> c = c0, cl = c0;
                    ASSERT_EQ(Call(numrpc_call(Name<T>(op).c_str(), s, u, m, n, In(alpha), a.data(),
                                               lda, b.data(), ldb, In(beta), c.data(), m + 1)),
                              NUMRPC_OK);
                    if constexpr (kComplex<T>) {
                        if (op[0] == 'h')
                            lib::hemm(s, u, m, n, alpha, a.data(), lda, b.data(), ldb, beta,
                                      cl.data(), m + 1);
                        else
                            lib::symm(s, u, m, n, alpha, a.data(), lda, b.data(), ldb, beta,
                                      cl.data(), m + 1);
                    } else {
                        lib::symm(s, u, m, n, alpha, a.data(), lda, b.data(), ldb, beta,
                                  cl.data(), m + 1);
                    }
                    ExpectClose(c, cl, SumTol<T>(ka, 2.0), op);
                }
            }
        }
}

// ---- LAPACK: linear systems ----

TYPED_TEST(Remote, GesvGetrfGetrs)
{
    using T = TypeParam;
    for (int n : kSizes) {
        SCOPED_TRACE("n " + std::to_string(n));
        const int nrhs = 2, lda = n + 3, ldb = n + 2;
        Rng rng(700 + n);
        std::vector<T> a = Matrix<T>(n, n, lda, rng), b = Matrix<T>(n, nrhs, ldb, rng);
        const double cond = Cond1(a, n, lda);
        std::vector<T> al = a, bl = b;
        std::vector<int> ipiv(std::max(n, 1), -1), ipivl = ipiv;
        int info = -99;
        ASSERT_EQ(Call(numrpc_call(Name<T>("gesv").c_str(), n, nrhs, a.data(), lda, ipiv.data(),
                                   b.data(), ldb, &info)),
                  NUMRPC_OK);
        EXPECT_EQ(info, lib::gesv(n, nrhs, al.data(), lda, ipivl.data(), bl.data(), ldb));
        EXPECT_EQ(ipiv, ipivl);
        ExpectClose(a, al, FactorTol<T>(n, MaxAbs(al)), "LU");
        ExpectClose(b, bl, SolveTol<T>(cond, n, MaxAbs(bl)), "X");

        // getrf of a tall matrix, then getrs with each transpose on square factors.
        const int m = n + n / 2 + 1;
        std::vector<T> tall = Matrix<T>(m, n, m + 2, rng), talll = tall;
        std::vector<int> piv(std::max(1, std::min(m, n)), -1), pivl = piv;
        ASSERT_EQ(Call(numrpc_call(Name<T>("getrf").c_str(), m, n, tall.data(), m + 2, piv.data(),
                                   &info)),
                  NUMRPC_OK);
        EXPECT_EQ(info, lib::getrf(m, n, talll.data(), m + 2, pivl.data()));
        EXPECT_EQ(piv, pivl);
        ExpectClose(tall, talll, FactorTol<T>(m, MaxAbs(talll)), "tall LU");
        std::vector<T> lu = Matrix<T>(n, n, lda, rng);
        const double lucond = Cond1(lu, n, lda);
        std::vector<int> lupiv(std::max(n, 1));
        ASSERT_EQ(lib::getrf(n, n, lu.data(), lda, lupiv.data()), 0);
        for (int trans : {'N', 'T', 'C'}) {
            std::vector<T> x = Matrix<T>(n, nrhs, ldb, rng), xl = x;
            ASSERT_EQ(Call(numrpc_call(Name<T>("getrs").c_str(), trans, n, nrhs, lu.data(), lda,
                                       lupiv.data(), x.data(), ldb, &info)),
                      NUMRPC_OK);
            EXPECT_EQ(info, lib::getrs(static_cast<char>(trans), n, nrhs, lu.data(), lda,
                                       lupiv.data(), xl.data(), ldb));
            ExpectClose(x, xl, SolveTol<T>(lucond, n, MaxAbs(xl)), "getrs X");
        }
    }
}

TYPED_TEST(Remote, PosvPotrfPotrs)
{
    using T = TypeParam;
    for (int n : kSizes)
        for (int uplo : {'U', 'L'}) {
            SCOPED_TRACE("n " + std::to_string(n) + " uplo " + static_cast<char>(uplo));
            const char u = static_cast<char>(uplo);
            const int nrhs = 3, lda = n + 3, ldb = n + 1;
            Rng rng(800 + n + uplo);
            const std::vector<T> spd = PositiveDefinite<T>(n, lda, rng);
            const double cond = Cond1(spd, n, lda);
            std::vector<T> a = spd, al = spd, b = Matrix<T>(n, nrhs, ldb, rng), bl = b;
            int info = -99;
            ASSERT_EQ(Call(numrpc_call(Name<T>("posv").c_str(), u, n, nrhs, a.data(), lda,
                                       b.data(), ldb, &info)),
                      NUMRPC_OK);
            EXPECT_EQ(info, 0);
            EXPECT_EQ(info, lib::posv(u, n, nrhs, al.data(), lda, bl.data(), ldb));
            ExpectClose(a, al, FactorTol<T>(n, MaxAbs(al)), "posv factor");
            ExpectClose(b, bl, SolveTol<T>(cond, n, MaxAbs(bl)), "posv X");

            a = spd;
            al = spd;
            ASSERT_EQ(Call(numrpc_call(Name<T>("potrf").c_str(), u, n, a.data(), lda, &info)),
                      NUMRPC_OK);
            EXPECT_EQ(info, lib::potrf(u, n, al.data(), lda));
            ExpectClose(a, al, FactorTol<T>(n, MaxAbs(al)), "potrf factor");
            b = Matrix<T>(n, nrhs, ldb, rng);
            bl = b;
            ASSERT_EQ(Call(numrpc_call(Name<T>("potrs").c_str(), u, n, nrhs, al.data(), lda,
                                       b.data(), ldb, &info)),
                      NUMRPC_OK);
            EXPECT_EQ(info, lib::potrs(u, n, nrhs, al.data(), lda, bl.data(), ldb));
            ExpectClose(b, bl, SolveTol<T>(cond, n, MaxAbs(bl)), "potrs X");
        }
}

// Band (kl = 2, ku = 1), tridiagonal and positive definite tridiagonal
// systems, diagonally dominant.
TYPED_TEST(Remote, GbsvGtsvPtsv)
{
    using T = TypeParam;
    using R = Real<T>;
    for (int n : kSizes) {
        SCOPED_TRACE("n " + std::to_string(n));
        const int nrhs = 2, ldb = n + 2, kl = 2, ku = 1, ldab = 2 * kl + ku + 2;
        Rng rng(900 + n);
        std::vector<T> ab = Matrix<T>(2 * kl + ku + 1, n, ldab, rng);
        for (int j = 0; j < n; j++) {
            for (int i = 0; i < kl; i++) ab[At(i, j, ldab)] = T(0);  // room for the fill-in
            ab[At(kl + ku, j, ldab)] += T(5);                        // the diagonal
        }
        std::vector<T> abl = ab, b = Matrix<T>(n, nrhs, ldb, rng), bl = b;
        std::vector<int> ipiv(std::max(n, 1), -1), ipivl = ipiv;
        int info = -99;
        ASSERT_EQ(Call(numrpc_call(Name<T>("gbsv").c_str(), n, kl, ku, nrhs, ab.data(), ldab,
                                   ipiv.data(), b.data(), ldb, &info)),
                  NUMRPC_OK);
        EXPECT_EQ(info, lib::gbsv(n, kl, ku, nrhs, abl.data(), ldab, ipivl.data(), bl.data(), ldb));
        EXPECT_EQ(ipiv, ipivl);
        ExpectClose(ab, abl, FactorTol<T>(n, MaxAbs(abl)), "gbsv factors");
        ExpectClose(b, bl, FactorTol<T>(n, MaxAbs(bl)), "gbsv X");

        const int off = std::max(n - 1, 0);
        std::vector<T> dl = Strided<T>(off, 1, rng), du = Strided<T>(off, 1, rng);
        std::vector<T> d = Strided<T>(n, 1, rng);
        for (int i = 0; i < n; i++) d[i] += T(4);
        std::vector<T> dl_local = dl, d_local = d, du_local = du;
        b = Matrix<T>(n, nrhs, ldb, rng);
        bl = b;
        ASSERT_EQ(Call(numrpc_call(Name<T>("gtsv").c_str(), n, nrhs, dl.data(), d.data(),
                                   du.data(), b.data(), ldb, &info)),
                  NUMRPC_OK);
        EXPECT_EQ(info, lib::gtsv(n, nrhs, dl_local.data(), d_local.data(), du_local.data(),
                                  bl.data(), ldb));
        ExpectClose(d, d_local, FactorTol<T>(n, MaxAbs(d_local)), "gtsv d");
        ExpectClose(du, du_local, FactorTol<T>(n, MaxAbs(du_local)), "gtsv du");
        ExpectClose(dl, dl_local, FactorTol<T>(n, MaxAbs(dl_local)), "gtsv dl");
        ExpectClose(b, bl, FactorTol<T>(n, MaxAbs(bl)), "gtsv X");

        std::vector<R> pd(std::max(n, 1), Sentinel<R>());
        for (int i = 0; i < n; i++) pd[i] = static_cast<R>(3 + rng.Next());
        std::vector<T> e = Strided<T>(off, 1, rng), el = e;
        std::vector<R> pdl = pd;
        b = Matrix<T>(n, nrhs, ldb, rng);
        bl = b;
        ASSERT_EQ(Call(numrpc_call(Name<T>("ptsv").c_str(), n, nrhs, pd.data(), e.data(),
                                   b.data(), ldb, &info)),
                  NUMRPC_OK);
        EXPECT_EQ(info, 0);
        EXPECT_EQ(info, lib::ptsv(n, nrhs, pdl.data(), el.data(), bl.data(), ldb));
        ExpectClose(pd, pdl, FactorTol<T>(n, MaxAbs(pdl)), "ptsv d");
        ExpectClose(e, el, FactorTol<T>(n, MaxAbs(el)), "ptsv e");
        ExpectClose(b, bl, FactorTol<T>(n, MaxAbs(bl)), "ptsv X");
    }
}

// lange's four norms (a REAL function for s and c) against the local
// function and the definitions; gecon's estimate from the same factors.
TYPED_TEST(Remote, LangeAndGecon)
{
    using T = TypeParam;
    using R = Real<T>;
    for (int n : kSizes) {
        SCOPED_TRACE("n " + std::to_string(n));
        const int m = n + 2, lda = m + 1;
        Rng rng(1000 + n);
        const std::vector<T> a = Matrix<T>(m, n, lda, rng);
        std::vector<double> rows(m, 0.0), cols(n, 0.0);
        double biggest = 0, squares = 0;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                const double v = std::abs(dcomplex(a[At(i, j, lda)]));
                rows[i] += v;
                cols[j] += v;
                biggest = std::max(biggest, v);
                squares += v * v;
            }
        const double by_definition[] = {
            biggest, n ? *std::max_element(cols.begin(), cols.end()) : 0.0,
            n ? *std::max_element(rows.begin(), rows.end()) : 0.0, std::sqrt(squares)};
        const char norms[] = {'M', '1', 'I', 'F'};
        for (int k = 0; k < 4; k++) {
            R norm = R(-99);
            ASSERT_EQ(Call(numrpc_call(Name<T>("lange").c_str(), norms[k], m, n, a.data(), lda,
                                       nullptr, &norm)),
                      NUMRPC_OK);
            const double tol = SumTol<T>(m + n, by_definition[k]);
            EXPECT_NEAR(norm, lib::lange(norms[k], m, n, a.data(), lda), tol) << norms[k];
            EXPECT_NEAR(norm, by_definition[k], tol) << norms[k] << " by its definition";
        }
        std::vector<T> lu = Matrix<T>(n, n, lda, rng);
        std::vector<int> ipiv(std::max(n, 1));
        for (char norm : {'1', 'I'}) {
            const R anorm = lib::lange(norm, n, n, lu.data(), lda);
            std::vector<T> f = lu;
            ASSERT_EQ(lib::getrf(n, n, f.data(), lda, ipiv.data()), 0);
            R rcond = R(-99), rcondl = R(-98);
            int info = -99;
            ASSERT_EQ(Call(numrpc_call(Name<T>("gecon").c_str(), norm, n, f.data(), lda,
                                       In(anorm), &rcond, nullptr, nullptr, &info)),
                      NUMRPC_OK);
            EXPECT_EQ(info, lib::gecon(norm, n, f.data(), lda, anorm, &rcondl));
            EXPECT_GT(rcond, 0) << norm;
            EXPECT_NEAR(rcond, rcondl, FactorTol<T>(n, rcondl)) << norm;
        }
    }
}

// ---- LAPACK: least squares and QR ----

TYPED_TEST(Remote, GelsBothWaysAndItsWorkspaceQuery)
{
    using T = TypeParam;
    for (int n : kSizes)
        for (int trans : {static_cast<int>('N'), static_cast<int>(Prec<T>::trans_h)}) {
            SCOPED_TRACE("n " + std::to_string(n) + " trans " + static_cast<char>(trans));
            const char t = static_cast<char>(trans);
            const int m = n + 5, nrhs = 2, lda = m + 2, ldb = m + 1;
            const int brows = t == 'N' ? m : n;  // rows of the right-hand sides
            Rng rng(1100 + n + trans);
            std::vector<T> a = Matrix<T>(m, n, lda, rng), b = Matrix<T>(brows, nrhs, ldb, rng);
            std::vector<T> al = a, bl = b, query(1), queryl(1);
            int info = -99, infol = -98;
            ASSERT_EQ(Call(numrpc_call(Name<T>("gels").c_str(), t, m, n, nrhs, a.data(), lda,
                                       b.data(), ldb, query.data(), -1, &info)),
                      NUMRPC_OK);
            infol = lib::gels(t, m, n, nrhs, al.data(), lda, bl.data(), ldb, queryl.data(), -1);
            EXPECT_EQ(info, infol);
            EXPECT_EQ(query[0], queryl[0]) << "the workspace query answers as locally";
            const int lwork = Lwork(queryl[0]);
            std::vector<T> work(lwork);
            ASSERT_EQ(Call(numrpc_call(Name<T>("gels").c_str(), t, m, n, nrhs, a.data(), lda,
                                       b.data(), ldb, nullptr, lwork, &info)),
                      NUMRPC_OK);
            EXPECT_EQ(info, lib::gels(t, m, n, nrhs, al.data(), lda, bl.data(), ldb, work.data(),
                                      lwork));
            ExpectClose(a, al, FactorTol<T>(m, MaxAbs(al)), "QR");
            ExpectClose(b, bl, FactorTol<T>(m, MaxAbs(bl)), "X");
        }
}

// geqrf, then Q formed (orgqr / ungqr) and applied (ormqr / unmqr) from the
// same reflectors; the remote Q has orthonormal columns.
TYPED_TEST(Remote, GeqrfOrgqrOrmqr)
{
    using T = TypeParam;
    for (int n : kSizes) {
        SCOPED_TRACE("n " + std::to_string(n));
        const int m = n + 3, lda = m + 2, k = n;
        Rng rng(1200 + n);
        std::vector<T> a = Matrix<T>(m, n, lda, rng), al = a;
        std::vector<T> tau(std::max(n, 1), Sentinel<T>()), taul = tau, q(1);
        int info = -99;
        lib::geqrf(m, n, al.data(), lda, taul.data(), q.data(), -1);
        int lwork = Lwork(q[0]);
        std::vector<T> work(static_cast<size_t>(lwork) * 4 + 64);
        ASSERT_EQ(Call(numrpc_call(Name<T>("geqrf").c_str(), m, n, a.data(), lda, tau.data(),
                                   nullptr, lwork, &info)),
                  NUMRPC_OK);
        EXPECT_EQ(info, lib::geqrf(m, n, al.data(), lda, taul.data(), work.data(), lwork));
        ExpectClose(a, al, FactorTol<T>(m, MaxAbs(al)), "R and reflectors");
        ExpectClose(tau, taul, FactorTol<T>(m, 2.0), "tau");

        const int lw = static_cast<int>(work.size());
        std::vector<T> qr = al, ql = al;
        ASSERT_EQ(Call(numrpc_call(Name<T>("orgqr", "ungqr").c_str(), m, n, k, qr.data(), lda,
                                   taul.data(), nullptr, lw, &info)),
                  NUMRPC_OK);
        EXPECT_EQ(info, lib::orgqr(m, n, k, ql.data(), lda, taul.data(), work.data(), lw));
        ExpectClose(qr, ql, FactorTol<T>(m, 1.0), "Q");
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                dcomplex s = 0;
                for (int r = 0; r < m; r++)
                    s += std::conj(dcomplex(qr[At(r, i, lda)])) * dcomplex(qr[At(r, j, lda)]);
                ASSERT_LE(std::abs(s - (i == j ? 1.0 : 0.0)), FactorTol<T>(m, 1.0)) << i << "," << j;
            }

        // Q^H C from the left (C m x 3) and C Q from the right (C 3 x m).
        const char trans_h = Prec<T>::trans_h;
        const struct {
            char side, trans;
            int rows, cols;
        } uses[] = {{'L', trans_h, m, 3}, {'R', 'N', 3, m}};
        for (const auto &use : uses) {
            const int ldc = use.rows + 1;
            std::vector<T> c = Matrix<T>(use.rows, use.cols, ldc, rng), cl = c;
            ASSERT_EQ(Call(numrpc_call(Name<T>("ormqr", "unmqr").c_str(), use.side, use.trans,
                                       use.rows, use.cols, k, al.data(), lda, taul.data(),
                                       c.data(), ldc, nullptr, lw, &info)),
                      NUMRPC_OK);
            EXPECT_EQ(info, lib::ormqr(use.side, use.trans, use.rows, use.cols, k, al.data(), lda,
                                       taul.data(), cl.data(), ldc, work.data(), lw));
            ExpectClose(c, cl, FactorTol<T>(m, MaxAbs(cl)), "ormqr c");
        }
    }
}

// ---- LAPACK: eigenvalues ----

TYPED_TEST(Remote, SyevHeev)
{
    using T = TypeParam;
    using R = Real<T>;
    for (int n : kSizes)
        for (int jobz : {'V', 'N'}) {
            SCOPED_TRACE("n " + std::to_string(n) + " jobz " + static_cast<char>(jobz));
            const char jz = static_cast<char>(jobz);
            const int lda = n + 3;
            Rng rng(1300 + n + jobz);
            const std::vector<T> h = Hermitian<T>(n, lda, rng);
            const double anorm = std::max(1.0, n * MaxAbs(h));
            std::vector<T> a = h, al = h, q(1), ql(1);
            std::vector<R> w(std::max(n, 1), R(-7)), wl = w;
            int info = -99;
            const std::string name = Name<T>("syev", "heev");
            // Real: (..., workspace, lwork, info); complex: (..., lwork, rwork, info).
            auto remote = [&](T *work, int lwork) {
                if constexpr (kComplex<T>)
                    return numrpc_call(name.c_str(), jz, 'L', n, a.data(), lda, w.data(), work,
                                       lwork, nullptr, &info);
                else
                    return numrpc_call(name.c_str(), jz, 'L', n, a.data(), lda, w.data(), work,
                                       lwork, &info);
            };
            ASSERT_EQ(Call(remote(q.data(), -1)), NUMRPC_OK);
            lib::syev(jz, 'L', n, al.data(), lda, wl.data(), ql.data(), -1);
            EXPECT_EQ(q[0], ql[0]) << "the workspace query answers as locally";
            const int lwork = Lwork(ql[0]);
            std::vector<T> work(lwork);
            ASSERT_EQ(Call(remote(nullptr, lwork)), NUMRPC_OK);
            EXPECT_EQ(info, lib::syev(jz, 'L', n, al.data(), lda, wl.data(), work.data(), lwork));
            ExpectClose(w, wl, FactorTol<T>(n, anorm), "eigenvalues");
            if (jz == 'V') {
                ExpectClose(a, al, FactorTol<T>(n, 1.0), "eigenvectors");
                EXPECT_LE(EigenResidual(h, n, lda, w, a, lda, n), FactorTol<T>(n, anorm));
            }
        }
}

// Each of the three workspaces answers its own query (-1) as LAPACK does
// locally; then the divide and conquer solver runs with those sizes.
TYPED_TEST(Remote, SyevdHeevdAndItsThreeWorkspaceQueries)
{
    using T = TypeParam;
    using R = Real<T>;
    for (int n : kSizes) {
        SCOPED_TRACE("n " + std::to_string(n));
        const int lda = n + 2;
        Rng rng(1400 + n);
        const std::vector<T> h = Hermitian<T>(n, lda, rng);
        const double anorm = std::max(1.0, n * MaxAbs(h));
        std::vector<T> a = h, al = h;
        std::vector<R> w(std::max(n, 1), R(-7)), wl = w;
        int info = -99;
        const std::string name = Name<T>("syevd", "heevd");
        auto remote = [&](T *work, int lwork, R *rwork, int lrwork, int *iwork, int liwork) {
            if constexpr (kComplex<T>)
                return numrpc_call(name.c_str(), 'V', 'U', n, a.data(), lda, w.data(), work,
                                   lwork, rwork, lrwork, iwork, liwork, &info);
            else
                return numrpc_call(name.c_str(), 'V', 'U', n, a.data(), lda, w.data(), work,
                                   lwork, iwork, liwork, &info);
        };
        T q = T(-1), ql = T(-1);
        R rq = R(-1), rql = R(-1);
        int iq = -1, iql = -1;
        ASSERT_EQ(Call(remote(&q, -1, &rq, -1, &iq, -1)), NUMRPC_OK);
        EXPECT_EQ(info, lib::syevd('V', 'U', n, al.data(), lda, wl.data(), &ql, -1, &rql, -1,
                                   &iql, -1));
        EXPECT_EQ(q, ql);
        EXPECT_EQ(iq, iql);
        if (kComplex<T>) {
            EXPECT_EQ(rq, rql);
        }
        const int lwork = Lwork(ql), lrwork = Lwork(rql), liwork = Lwork(iql);
        std::vector<T> work(lwork);
        std::vector<R> rwork(lrwork);
        std::vector<int> iwork(liwork);
        ASSERT_EQ(Call(remote(nullptr, lwork, nullptr, lrwork, nullptr, liwork)), NUMRPC_OK);
        EXPECT_EQ(info, lib::syevd('V', 'U', n, al.data(), lda, wl.data(), work.data(), lwork,
                                   rwork.data(), lrwork, iwork.data(), liwork));
        ExpectClose(w, wl, FactorTol<T>(n, anorm), "eigenvalues");
        ExpectClose(a, al, FactorTol<T>(n, 1.0), "eigenvectors");
        EXPECT_LE(EigenResidual(h, n, lda, w, a, lda, n), FactorTol<T>(n, anorm));
    }
}

// range 'A' (all) and 'I' (the il-th to iu-th): m eigenpairs, z with m
// columns of ldz > n rows.
TYPED_TEST(Remote, SyevrHeevrAllAndAnIndexRange)
{
    using T = TypeParam;
    using R = Real<T>;
    for (int n : kSizes)
        for (int range : {'A', 'I'}) {
            SCOPED_TRACE("n " + std::to_string(n) + " range " + static_cast<char>(range));
            const char rg = static_cast<char>(range);
            const int lda = n + 1, ldz = n + 2, il = 1, iu = std::min(n, 3);
            const int zcols = rg == 'I' ? iu - il + 1 : n;
            Rng rng(1500 + n + range);
            const std::vector<T> h = Hermitian<T>(n, lda, rng);
            const double anorm = std::max(1.0, n * MaxAbs(h));
            std::vector<T> a = h, al = h;
            std::vector<R> w(std::max(n, 1), R(-7)), wl = w;
            std::vector<T> z(std::max<size_t>(1, static_cast<size_t>(ldz) * zcols), Sentinel<T>());
            std::vector<T> zl = z;
            std::vector<int> isuppz(2 * std::max(1, n), -1), isuppzl = isuppz;
            T q = T(-1);
            R rq = R(-1);
            int iq = -1, found = -1, foundl = -2, info = -99;
            std::vector<T> aq = h;
            lib::syevr('V', rg, 'L', n, aq.data(), lda, 0, 0, il, iu, 0, &foundl, wl.data(),
                       zl.data(), ldz, isuppzl.data(), &q, -1, &rq, -1, &iq, -1);
            const int lwork = Lwork(q), lrwork = Lwork(rq), liwork = Lwork(iq);
            std::vector<T> work(lwork);
            std::vector<R> rwork(lrwork);
            std::vector<int> iwork(liwork);
            const std::string name = Name<T>("syevr", "heevr");
            int rc;
            if constexpr (kComplex<T>)
                rc = numrpc_call(name.c_str(), 'V', rg, 'L', n, a.data(), lda, 0.0, 0.0, il, iu,
                                 0.0, &found, w.data(), z.data(), ldz, isuppz.data(), nullptr,
                                 lwork, nullptr, lrwork, nullptr, liwork, &info);
            else
                rc = numrpc_call(name.c_str(), 'V', rg, 'L', n, a.data(), lda, 0.0, 0.0, il, iu,
                                 0.0, &found, w.data(), z.data(), ldz, isuppz.data(), nullptr,
                                 lwork, nullptr, liwork, &info);
            ASSERT_EQ(Call(rc), NUMRPC_OK);
            EXPECT_EQ(info, lib::syevr('V', rg, 'L', n, al.data(), lda, 0, 0, il, iu, 0, &foundl,
                                       wl.data(), zl.data(), ldz, isuppzl.data(), work.data(),
                                       lwork, rwork.data(), lrwork, iwork.data(), liwork));
            EXPECT_EQ(found, foundl);
            EXPECT_EQ(found, zcols);
            w.resize(std::max(found, 0));
            wl.resize(w.size());
            ExpectClose(w, wl, FactorTol<T>(n, anorm), "eigenvalues");
            ExpectClose(z, zl, FactorTol<T>(n, 1.0), "eigenvectors");
            EXPECT_LE(EigenResidual(h, n, lda, w, z, ldz, found), FactorTol<T>(n, anorm));
        }
}

TYPED_TEST(Remote, SygvHegv)
{
    using T = TypeParam;
    using R = Real<T>;
    for (int n : kSizes)
        for (int itype : {1, 2}) {
            SCOPED_TRACE("n " + std::to_string(n) + " itype " + std::to_string(itype));
            const int lda = n + 3, ldb = n + 1;
            Rng rng(1600 + n + itype);
            const std::vector<T> h = Hermitian<T>(n, lda, rng);
            const std::vector<T> spd = PositiveDefinite<T>(n, ldb, rng);
            const double anorm = std::max(1.0, n * MaxAbs(h));
            std::vector<T> a = h, al = h, b = spd, bl = spd, q(1);
            std::vector<R> w(std::max(n, 1), R(-7)), wl = w;
            lib::sygv(itype, 'V', 'U', n, al.data(), lda, bl.data(), ldb, wl.data(), q.data(), -1);
            const int lwork = Lwork(q[0]);
            std::vector<T> work(lwork);
            int info = -99;
            const std::string name = Name<T>("sygv", "hegv");
            int rc;
            if constexpr (kComplex<T>)
                rc = numrpc_call(name.c_str(), itype, 'V', 'U', n, a.data(), lda, b.data(), ldb,
                                 w.data(), nullptr, lwork, nullptr, &info);
            else
                rc = numrpc_call(name.c_str(), itype, 'V', 'U', n, a.data(), lda, b.data(), ldb,
                                 w.data(), nullptr, lwork, &info);
            ASSERT_EQ(Call(rc), NUMRPC_OK);
            EXPECT_EQ(info, 0);
            EXPECT_EQ(info, lib::sygv(itype, 'V', 'U', n, al.data(), lda, bl.data(), ldb,
                                      wl.data(), work.data(), lwork));
            ExpectClose(w, wl, FactorTol<T>(n, 10 * anorm), "eigenvalues");
            ExpectClose(a, al, FactorTol<T>(n, MaxAbs(al)), "eigenvectors");
            ExpectClose(b, bl, FactorTol<T>(n, MaxAbs(bl)), "Cholesky factor of B");
        }
}

// Real routines return the eigenvalues as wr + i wi, complex ones as w.
TYPED_TEST(Remote, GeevWithAndWithoutVectors)
{
    using T = TypeParam;
    using R = Real<T>;
    for (int n : kSizes)
        for (int job : {'V', 'N'}) {
            SCOPED_TRACE("n " + std::to_string(n) + " job " + static_cast<char>(job));
            const char jb = static_cast<char>(job);
            const int lda = n + 3, ldv = n + 1;
            Rng rng(1700 + n + job);
            const std::vector<T> a0 = Matrix<T>(n, n, lda, rng);
            std::vector<T> a = a0, al = a0, q(1);
            std::vector<R> wr(std::max(n, 1), R(-7)), wi = wr, wrl = wr, wil = wr;
            std::vector<T> w(std::max(n, 1), T(-7)), wl = w;
            std::vector<T> vl(std::max(1, ldv * n), Sentinel<T>()), vr = vl, vll = vl, vrl = vl;
            lib::geev(jb, jb, n, al.data(), lda, wrl.data(), wil.data(), wl.data(), vll.data(), ldv,
                      vrl.data(), ldv, q.data(), -1);
            const int lwork = Lwork(q[0]);
            std::vector<T> work(lwork);
            int info = -99, rc;
            if constexpr (kComplex<T>)
                rc = numrpc_call(Name<T>("geev").c_str(), jb, jb, n, a.data(), lda, w.data(),
                                 vl.data(), ldv, vr.data(), ldv, nullptr, lwork, nullptr, &info);
            else
                rc = numrpc_call(Name<T>("geev").c_str(), jb, jb, n, a.data(), lda, wr.data(),
                                 wi.data(), vl.data(), ldv, vr.data(), ldv, nullptr, lwork, &info);
            ASSERT_EQ(Call(rc), NUMRPC_OK);
            EXPECT_EQ(info, lib::geev(jb, jb, n, al.data(), lda, wrl.data(), wil.data(), wl.data(),
                                      vll.data(), ldv, vrl.data(), ldv, work.data(), lwork));
            const double tol = FactorTol<T>(n, std::max(1.0, n * MaxAbs(a0)));
            if constexpr (kComplex<T>) {
                ExpectClose(w, wl, tol, "w");
            } else {
                ExpectClose(wr, wrl, tol, "wr");
                ExpectClose(wi, wil, tol, "wi");
            }
            ExpectClose(vl, vll, FactorTol<T>(n, 10.0), "vl");
            ExpectClose(vr, vrl, FactorTol<T>(n, 10.0), "vr");
        }
}

// ---- LAPACK: singular values ----

TYPED_TEST(Remote, GesvdJobsAllSomeNone)
{
    using T = TypeParam;
    using R = Real<T>;
    for (int n : kSizes)
        for (int job : {'A', 'S', 'N'}) {
            SCOPED_TRACE("n " + std::to_string(n) + " job " + static_cast<char>(job));
            const char jb = static_cast<char>(job);
            const int m = n + 2, r = std::min(m, n), lda = m + 3;
            const int ucols = jb == 'A' ? m : jb == 'S' ? r : 0;
            const int vtrows = jb == 'A' ? n : jb == 'S' ? r : 0;
            const int ldu = m + 1, ldvt = std::max(vtrows, 1) + 2;
            Rng rng(1800 + n + job);
            const std::vector<T> a0 = Matrix<T>(m, n, lda, rng);
            std::vector<T> a = a0, al = a0, q(1);
            std::vector<R> s(std::max(r, 1), R(-7)), sl = s;
            std::vector<T> u(std::max(1, ldu * std::max(ucols, 1)), Sentinel<T>()), ul = u;
            std::vector<T> vt(std::max(1, ldvt * n), Sentinel<T>()), vtl = vt;
            lib::gesvd(jb, jb, m, n, al.data(), lda, sl.data(), ul.data(), ldu, vtl.data(), ldvt,
                       q.data(), -1);
            const int lwork = Lwork(q[0]);
            std::vector<T> work(lwork);
            int info = -99, rc;
            if constexpr (kComplex<T>)
                rc = numrpc_call(Name<T>("gesvd").c_str(), jb, jb, m, n, a.data(), lda, s.data(),
                                 u.data(), ldu, vt.data(), ldvt, nullptr, lwork, nullptr, &info);
            else
                rc = numrpc_call(Name<T>("gesvd").c_str(), jb, jb, m, n, a.data(), lda, s.data(),
                                 u.data(), ldu, vt.data(), ldvt, nullptr, lwork, &info);
            ASSERT_EQ(Call(rc), NUMRPC_OK);
            EXPECT_EQ(info, lib::gesvd(jb, jb, m, n, al.data(), lda, sl.data(), ul.data(), ldu,
                                       vtl.data(), ldvt, work.data(), lwork));
            const double anorm = std::max(1.0, std::sqrt(2.0 * m * n));
            ExpectClose(s, sl, FactorTol<T>(m, anorm), "singular values");
            // With min(m, n) = 0 LAPACK returns at once: the remote U and VT are
            // the server's zeros (OUT arrays travel back whole), the local ones untouched.
            if (r > 0) {
                ExpectClose(u, ul, FactorTol<T>(m, 1.0), "U");  // sentinels only for 'N'
                ExpectClose(vt, vtl, FactorTol<T>(m, 1.0), "VT");
            }
        }
}

// jobz 'O' overwrites a with U (m >= n) or VT (m < n): both shapes.
TYPED_TEST(Remote, GesddJobsAllSomeOverwriteNone)
{
    using T = TypeParam;
    using R = Real<T>;
    for (int n : kSizes)
        for (int job : {'A', 'S', 'O', 'N'})
            for (bool wide : {false, true}) {
                if (job != 'O' && wide) continue;
                SCOPED_TRACE("n " + std::to_string(n) + " job " + static_cast<char>(job) +
                             (wide ? " wide" : ""));
                const char jb = static_cast<char>(job);
                const int m = wide ? n / 2 : n + 2, r = std::min(m, n), lda = m + 3;
                const bool u_out = jb == 'A' || jb == 'S' || (jb == 'O' && m < n);
                const bool vt_out = jb == 'A' || jb == 'S' || (jb == 'O' && m >= n);
                const int ucols = jb == 'S' ? r : m, vtrows = jb == 'S' ? r : n;
                const int ldu = m + 1, ldvt = vtrows + 2;
                Rng rng(1900 + n + job + wide);
                const std::vector<T> a0 = Matrix<T>(m, n, lda, rng);
                std::vector<T> a = a0, al = a0, q(1);
                std::vector<R> s(std::max(r, 1), R(-7)), sl = s;
                std::vector<T> u(std::max(1, ldu * ucols), Sentinel<T>()), ul = u;
                std::vector<T> vt(std::max(1, ldvt * n), Sentinel<T>()), vtl = vt;
                lib::gesdd(jb, m, n, al.data(), lda, sl.data(), ul.data(), ldu, vtl.data(), ldvt,
                           q.data(), -1);
                const int lwork = Lwork(q[0]);
                std::vector<T> work(lwork);
                int info = -99, rc;
                if constexpr (kComplex<T>)  // rwork, then iwork
                    rc = numrpc_call(Name<T>("gesdd").c_str(), jb, m, n, a.data(), lda, s.data(),
                                     u.data(), ldu, vt.data(), ldvt, nullptr, lwork, nullptr,
                                     nullptr, &info);
                else  // iwork only
                    rc = numrpc_call(Name<T>("gesdd").c_str(), jb, m, n, a.data(), lda, s.data(),
                                     u.data(), ldu, vt.data(), ldvt, nullptr, lwork, nullptr,
                                     &info);
                ASSERT_EQ(Call(rc), NUMRPC_OK);
                EXPECT_EQ(info, lib::gesdd(jb, m, n, al.data(), lda, sl.data(), ul.data(), ldu,
                                           vtl.data(), ldvt, work.data(), lwork));
                const double anorm = std::max(1.0, std::sqrt(2.0 * m * n));
                ExpectClose(s, sl, FactorTol<T>(std::max(m, n), anorm), "singular values");
                if (r == 0) continue;  // LAPACK returned at once (see GesvdJobsAllSomeNone)
                if (u_out) ExpectClose(u, ul, FactorTol<T>(std::max(m, n), 1.0), "U");
                else EXPECT_TRUE(std::all_of(u.begin(), u.end(), [](T x) { return x == Sentinel<T>(); }));
                if (vt_out) ExpectClose(vt, vtl, FactorTol<T>(std::max(m, n), 1.0), "VT");
                else EXPECT_TRUE(std::all_of(vt.begin(), vt.end(), [](T x) { return x == Sentinel<T>(); }));
                if (jb == 'O') ExpectClose(a, al, FactorTol<T>(std::max(m, n), 1.0), "a := U or VT");
            }
}

// ---- LAPACK: what numrpc.linalg added (issue 30) ----

// A symmetric n x n matrix (complex symmetric, not Hermitian, for c and z).
template <class T>
std::vector<T> Symmetric(int n, int ld, Rng &rng)
{
    std::vector<T> a = Matrix<T>(n, n, ld, rng);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < j; i++) a[At(j, i, ld)] = a[At(i, j, ld)];
    return a;
}

TYPED_TEST(Remote, GetriAfterGetrfAndItsWorkspaceQuery)
{
    using T = TypeParam;
    for (int n : kSizes) {
        SCOPED_TRACE("n " + std::to_string(n));
        const int lda = n + 3;
        Rng rng(2000 + n);
        const std::vector<T> a0 = Matrix<T>(n, n, lda, rng);
        const double cond = Cond1(a0, n, lda);
        std::vector<T> lu = a0;
        std::vector<int> ipiv(std::max(n, 1));
        ASSERT_EQ(lib::getrf(n, n, lu.data(), lda, ipiv.data()), 0);
        std::vector<T> x = lu, xl = lu;
        T q = T(-1), ql = T(-1);
        int info = -99;
        ASSERT_EQ(Call(numrpc_call(Name<T>("getri").c_str(), n, x.data(), lda, ipiv.data(), &q, -1, &info)),
                  NUMRPC_OK);
        EXPECT_EQ(info, lib::getri(n, xl.data(), lda, ipiv.data(), &ql, -1));
        EXPECT_EQ(q, ql) << "the workspace query answers as locally";
        const int lwork = Lwork(ql);
        std::vector<T> work(lwork);
        ASSERT_EQ(Call(numrpc_call(Name<T>("getri").c_str(), n, x.data(), lda, ipiv.data(), nullptr, lwork,
                                   &info)),
                  NUMRPC_OK);
        EXPECT_EQ(info, lib::getri(n, xl.data(), lda, ipiv.data(), work.data(), lwork));
        ExpectClose(x, xl, SolveTol<T>(cond, n, MaxAbs(xl)), "inverse");
    }
}

// ?sysv for every precision (complex symmetric matrices for c and z), ?hesv
// for the complex ones (Hermitian), each triangle.
TYPED_TEST(Remote, SysvHesvBothTriangles)
{
    using T = TypeParam;
    for (int n : kSizes)
        for (int uplo : {'U', 'L'})
            for (bool hermitian : {false, true}) {
                if (hermitian && !kComplex<T>) continue;
                SCOPED_TRACE("n " + std::to_string(n) + " uplo " + static_cast<char>(uplo) +
                             (hermitian ? " hesv" : " sysv"));
                const char u = static_cast<char>(uplo);
                const int nrhs = 2, lda = n + 2, ldb = n + 1;
                Rng rng(2100 + n + uplo + hermitian);
                const std::vector<T> a0 = hermitian ? Hermitian<T>(n, lda, rng) : Symmetric<T>(n, lda, rng);
                const double cond = Cond1(a0, n, lda);
                std::vector<T> a = a0, al = a0, b = Matrix<T>(n, nrhs, ldb, rng), bl = b;
                std::vector<int> ipiv(std::max(n, 1), -1), ipivl = ipiv;
                const std::string name = hermitian ? Name<T>("sysv", "hesv") : Name<T>("sysv");
                auto local = [&](T *work, int lwork) {
                    return hermitian ? lib::hesv(u, n, nrhs, al.data(), lda, ipivl.data(), bl.data(), ldb, work, lwork)
                                     : lib::sysv(u, n, nrhs, al.data(), lda, ipivl.data(), bl.data(), ldb, work, lwork);
                };
                T q = T(-1), ql = T(-1);
                int info = -99;
                ASSERT_EQ(Call(numrpc_call(name.c_str(), u, n, nrhs, a.data(), lda, ipiv.data(), b.data(), ldb, &q,
                                           -1, &info)),
                          NUMRPC_OK);
                EXPECT_EQ(info, local(&ql, -1));
                EXPECT_EQ(q, ql) << "the workspace query answers as locally";
                const int lwork = Lwork(ql);
                std::vector<T> work(lwork);
                ASSERT_EQ(Call(numrpc_call(name.c_str(), u, n, nrhs, a.data(), lda, ipiv.data(), b.data(), ldb,
                                           nullptr, lwork, &info)),
                          NUMRPC_OK);
                EXPECT_EQ(info, local(work.data(), lwork));
                EXPECT_EQ(ipiv, ipivl);
                ExpectClose(a, al, FactorTol<T>(n, MaxAbs(al)), "D and multipliers");
                ExpectClose(b, bl, SolveTol<T>(cond, n, MaxAbs(bl)), "X");
            }
}

// The three least squares drivers, tall and wide: rank, singular values and
// solutions as locally; gelsd's workspace query also answers its iwork (and
// rwork) sizes, which the IDL's extents must hold.
TYPED_TEST(Remote, GelsdGelssGelsyTallAndWide)
{
    using T = TypeParam;
    using R = Real<T>;
    for (int n : kSizes)
        for (bool wide : {false, true}) {
            SCOPED_TRACE("n " + std::to_string(n) + (wide ? " wide" : " tall"));
            const int m = wide ? n / 2 : n + 4, nrhs = 2, mn = std::min(m, n), lda = m + 1;
            const int ldb = std::max(m, n) + 1;
            Rng rng(2200 + n + wide);
            const std::vector<T> a0 = Matrix<T>(m, n, lda, rng), b0 = Matrix<T>(std::max(m, n), nrhs, ldb, rng);
            const R rcond = -1;
            const double tol = FactorTol<T>(std::max(m, n), 100.0 * std::max(1.0, MaxAbs(b0)));
            {  // gelsd
                std::vector<T> a = a0, al = a0, b = b0, bl = b0;
                std::vector<R> s(std::max(mn, 1), R(-7)), sl = s;
                T q = T(-1), ql = T(-1);
                R rq = R(-1), rql = R(-1);
                int iq = -1, iql = -1, rank = -1, rankl = -2, info = -99;
                auto remote = [&](T *work, int lwork, R *rwork, int *iwork) {
                    if constexpr (kComplex<T>)
                        return numrpc_call(Name<T>("gelsd").c_str(), m, n, nrhs, a.data(), lda, b.data(), ldb,
                                           s.data(), rcond, &rank, work, lwork, rwork, iwork, &info);
                    else
                        return numrpc_call(Name<T>("gelsd").c_str(), m, n, nrhs, a.data(), lda, b.data(), ldb,
                                           s.data(), rcond, &rank, work, lwork, iwork, &info);
                };
                ASSERT_EQ(Call(remote(&q, -1, &rq, &iq)), NUMRPC_OK);
                EXPECT_EQ(info, lib::gelsd(m, n, nrhs, al.data(), lda, bl.data(), ldb, sl.data(), rcond, &rankl, &ql,
                                           -1, &rql, &iql));
                EXPECT_EQ(q, ql);
                EXPECT_EQ(iq, iql);
                const int mn1 = std::max(1, mn);  // LAPACK's sizes count min(m, n) as at least 1
                EXPECT_LE(iq, 107 * mn1) << "iwork's extent in lapack.idl is too small";
                if constexpr (kComplex<T>) {
                    EXPECT_EQ(rq, rql);
                    EXPECT_LE(rq, 316 * mn1 + 75 * nrhs + std::max(676, mn1 * (1 + nrhs) + 2 * nrhs))
                        << "rwork's extent in lapack.idl is too small";
                }
                const int lwork = Lwork(ql);
                std::vector<T> work(lwork);
                std::vector<R> rwork(std::max(1, Lwork(rql)));
                std::vector<int> iwork(std::max(1, iql));
                ASSERT_EQ(Call(remote(nullptr, lwork, nullptr, nullptr)), NUMRPC_OK);
                EXPECT_EQ(info, lib::gelsd(m, n, nrhs, al.data(), lda, bl.data(), ldb, sl.data(), rcond, &rankl,
                                           work.data(), lwork, rwork.data(), iwork.data()));
                EXPECT_EQ(rank, rankl);
                ExpectClose(s, sl, FactorTol<T>(std::max(m, n), std::sqrt(2.0 * m * n)), "gelsd s");
                ExpectClose(b, bl, tol, "gelsd X");
            }
            {  // gelss
                std::vector<T> a = a0, al = a0, b = b0, bl = b0, q(1);
                std::vector<R> s(std::max(mn, 1), R(-7)), sl = s;
                int rank = -1, rankl = -2, info = -99, rc;
                lib::gelss(m, n, nrhs, al.data(), lda, bl.data(), ldb, sl.data(), rcond, &rankl, q.data(), -1);
                const int lwork = Lwork(q[0]);
                std::vector<T> work(lwork);
                if constexpr (kComplex<T>)
                    rc = numrpc_call(Name<T>("gelss").c_str(), m, n, nrhs, a.data(), lda, b.data(), ldb, s.data(),
                                     rcond, &rank, nullptr, lwork, nullptr, &info);
                else
                    rc = numrpc_call(Name<T>("gelss").c_str(), m, n, nrhs, a.data(), lda, b.data(), ldb, s.data(),
                                     rcond, &rank, nullptr, lwork, &info);
                ASSERT_EQ(Call(rc), NUMRPC_OK);
                EXPECT_EQ(info, lib::gelss(m, n, nrhs, al.data(), lda, bl.data(), ldb, sl.data(), rcond, &rankl,
                                           work.data(), lwork));
                EXPECT_EQ(rank, rankl);
                ExpectClose(s, sl, FactorTol<T>(std::max(m, n), std::sqrt(2.0 * m * n)), "gelss s");
                ExpectClose(b, bl, tol, "gelss X");
            }
            {  // gelsy
                std::vector<T> a = a0, al = a0, b = b0, bl = b0, q(1);
                std::vector<int> jpvt(std::max(n, 1), 0), jpvtl = jpvt;
                int rank = -1, rankl = -2, info = -99, rc;
                lib::gelsy(m, n, nrhs, al.data(), lda, bl.data(), ldb, jpvtl.data(), rcond, &rankl, q.data(), -1);
                const int lwork = Lwork(q[0]);
                std::vector<T> work(lwork);
                if constexpr (kComplex<T>)
                    rc = numrpc_call(Name<T>("gelsy").c_str(), m, n, nrhs, a.data(), lda, b.data(), ldb, jpvt.data(),
                                     rcond, &rank, nullptr, lwork, nullptr, &info);
                else
                    rc = numrpc_call(Name<T>("gelsy").c_str(), m, n, nrhs, a.data(), lda, b.data(), ldb, jpvt.data(),
                                     rcond, &rank, nullptr, lwork, &info);
                ASSERT_EQ(Call(rc), NUMRPC_OK);
                EXPECT_EQ(info, lib::gelsy(m, n, nrhs, al.data(), lda, bl.data(), ldb, jpvtl.data(), rcond, &rankl,
                                           work.data(), lwork));
                EXPECT_EQ(rank, rankl);
                EXPECT_EQ(jpvt, jpvtl);
                ExpectClose(b, bl, tol, "gelsy X");
            }
        }
}

TYPED_TEST(Remote, Geqp3PivotsAsLocally)
{
    using T = TypeParam;
    for (int n : kSizes) {
        SCOPED_TRACE("n " + std::to_string(n));
        const int m = n + 3, lda = m + 2;
        Rng rng(2300 + n);
        std::vector<T> a = Matrix<T>(m, n, lda, rng), al = a, q(1);
        std::vector<T> tau(std::max(n, 1), Sentinel<T>()), taul = tau;
        std::vector<int> jpvt(std::max(n, 1), 0), jpvtl = jpvt;
        lib::geqp3(m, n, al.data(), lda, jpvtl.data(), taul.data(), q.data(), -1);
        const int lwork = Lwork(q[0]);
        std::vector<T> work(lwork);
        int info = -99, rc;
        if constexpr (kComplex<T>)
            rc = numrpc_call(Name<T>("geqp3").c_str(), m, n, a.data(), lda, jpvt.data(), tau.data(), nullptr, lwork,
                             nullptr, &info);
        else
            rc = numrpc_call(Name<T>("geqp3").c_str(), m, n, a.data(), lda, jpvt.data(), tau.data(), nullptr, lwork,
                             &info);
        ASSERT_EQ(Call(rc), NUMRPC_OK);
        EXPECT_EQ(info, lib::geqp3(m, n, al.data(), lda, jpvtl.data(), taul.data(), work.data(), lwork));
        EXPECT_EQ(jpvt, jpvtl);
        ExpectClose(a, al, FactorTol<T>(m, MaxAbs(al)), "R and reflectors");
        ExpectClose(tau, taul, FactorTol<T>(m, 2.0), "tau");
    }
}

// Real routines return alpha as alphar + i alphai, complex ones as alpha.
TYPED_TEST(Remote, GgevWithAndWithoutVectors)
{
    using T = TypeParam;
    using R = Real<T>;
    for (int n : kSizes)
        for (int job : {'V', 'N'}) {
            SCOPED_TRACE("n " + std::to_string(n) + " job " + static_cast<char>(job));
            const char jb = static_cast<char>(job);
            const int lda = n + 3, ldb = n + 2, ldv = n + 1;
            Rng rng(2400 + n + job);
            const std::vector<T> a0 = Matrix<T>(n, n, lda, rng), b0 = Matrix<T>(n, n, ldb, rng);
            std::vector<T> a = a0, al = a0, b = b0, bl = b0, q(1);
            std::vector<R> ar(std::max(n, 1), R(-7)), ai = ar, arl = ar, ail = ar;
            std::vector<T> alpha(std::max(n, 1), T(-7)), beta = alpha, alphal = alpha, betal = alpha;
            std::vector<T> vl(std::max(1, ldv * n), Sentinel<T>()), vr = vl, vll = vl, vrl = vl;
            lib::ggev(jb, jb, n, al.data(), lda, bl.data(), ldb, arl.data(), ail.data(), alphal.data(), betal.data(),
                      vll.data(), ldv, vrl.data(), ldv, q.data(), -1);
            const int lwork = Lwork(q[0]);
            std::vector<T> work(lwork);
            int info = -99, rc;
            if constexpr (kComplex<T>)
                rc = numrpc_call(Name<T>("ggev").c_str(), jb, jb, n, a.data(), lda, b.data(), ldb, alpha.data(),
                                 beta.data(), vl.data(), ldv, vr.data(), ldv, nullptr, lwork, nullptr, &info);
            else
                rc = numrpc_call(Name<T>("ggev").c_str(), jb, jb, n, a.data(), lda, b.data(), ldb, ar.data(), ai.data(),
                                 beta.data(), vl.data(), ldv, vr.data(), ldv, nullptr, lwork, &info);
            ASSERT_EQ(Call(rc), NUMRPC_OK);
            EXPECT_EQ(info, lib::ggev(jb, jb, n, al.data(), lda, bl.data(), ldb, arl.data(), ail.data(),
                                      alphal.data(), betal.data(), vll.data(), ldv, vrl.data(), ldv, work.data(),
                                      lwork));
            const double tol = FactorTol<T>(n, std::max(1.0, n * std::max(MaxAbs(a0), MaxAbs(b0))));
            if constexpr (kComplex<T>) {
                ExpectClose(alpha, alphal, tol, "alpha");
            } else {
                ExpectClose(ar, arl, tol, "alphar");
                ExpectClose(ai, ail, tol, "alphai");
            }
            ExpectClose(beta, betal, tol, "beta");
            ExpectClose(vl, vll, FactorTol<T>(n, 10.0), "vl");
            ExpectClose(vr, vrl, FactorTol<T>(n, 10.0), "vr");
        }
}

}  // namespace
