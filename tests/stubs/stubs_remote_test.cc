// stubs_remote_test.cc -- the double precision routines of stubs/*.idl called
// through a real numrpc-server at many sizes, against the same routine called
// locally; plus the bytes that travel (only the used part of lda x n arrays).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "local_lapack.h"
#include "remote_support.h"

namespace {

using cplx = std::complex<double>;

// Elements outside the part a routine uses hold this value; remote calls
// must leave them as they are.
constexpr double kSentinel = 12345.5;
constexpr double kEps = DBL_EPSILON;

StubServer *const g_env =
    static_cast<StubServer *>(testing::AddGlobalTestEnvironment(new StubServer));

// ---- Deterministic data ----

// A rows x cols matrix in a block of ld x cols (at least one element):
// random in the used part, kSentinel below row `rows`.
std::vector<double> Matrix(int rows, int cols, int ld, Rng &rng)
{
    std::vector<double> a(std::max<size_t>(1, static_cast<size_t>(ld) * cols), kSentinel);
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++) a[static_cast<size_t>(j) * ld + i] = rng.Next();
    return a;
}

// A vector of n elements at stride inc: random elements, kSentinel between.
std::vector<double> Strided(int n, int inc, Rng &rng)
{
    std::vector<double> x(std::max(1, 1 + (n - 1) * inc), kSentinel);
    for (int i = 0; i < n; i++) x[static_cast<size_t>(i) * inc] = rng.Next();
    return x;
}

// A symmetric positive definite n x n matrix (B B^T / n + I) in ld x n.
std::vector<double> Spd(int n, int ld, Rng &rng)
{
    std::vector<double> b = Matrix(n, n, std::max(n, 1), rng);
    std::vector<double> a(std::max<size_t>(1, static_cast<size_t>(ld) * n), kSentinel);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double s = i == j ? 1.0 : 0.0;
            for (int k = 0; k < n; k++) s += b[k * n + i] * b[k * n + j] / n;
            a[static_cast<size_t>(j) * ld + i] = s;
        }
    return a;
}

double MaxAbs(const std::vector<double> &v)
{
    double m = 0;
    for (double x : v)
        if (x != kSentinel) m = std::max(m, std::fabs(x));
    return m;
}

// got equals want within abs_tol element by element; sentinels exactly.
void ExpectClose(const std::vector<double> &got, const std::vector<double> &want,
                 double abs_tol, const char *what)
{
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); i++) {
        if (want[i] == kSentinel) {
            ASSERT_EQ(got[i], kSentinel) << what << "[" << i << "] outside the used part was written";
            continue;
        }
        ASSERT_LE(std::fabs(got[i] - want[i]), abs_tol)
            << what << "[" << i << "]: remote " << got[i] << " local " << want[i];
    }
}

// The 1-norm condition number of the n x n matrix a (1 for n = 0).
double Cond1(const std::vector<double> &a, int n, int lda)
{
    if (n == 0) return 1.0;
    std::vector<double> lu = a, work(4 * n);
    std::vector<int> ipiv(n), iwork(n);
    int info = 0;
    double anorm = dlange_("1", &n, &n, lu.data(), &lda, work.data(), 1);
    dgetrf_(&n, &n, lu.data(), &lda, ipiv.data(), &info);
    if (info != 0) return 1e300;
    double rcond = 0;
    dgecon_("1", &n, lu.data(), &lda, &anorm, &rcond, work.data(), iwork.data(), &info, 1);
    return rcond > 0 ? 1.0 / rcond : 1e300;
}

// Tolerance for the solution x of a system with condition cond.
double SolveTol(double cond, int n, const std::vector<double> &x)
{
    return 100.0 * (n + 1) * kEps * cond * (1.0 + MaxAbs(x));
}

// Tolerance for a sum of k products of numbers of magnitude <= scale.
double SumTol(int k, double scale)
{
    return 16.0 * kEps * (k + 2) * (k + 2) * (1.0 + scale);
}

// An optimal LAPACK workspace size, as the local workspace query reports it.
int Lwork(double query) { return std::max(1, static_cast<int>(query)); }

class RemoteBlas : public testing::TestWithParam<int> {};
class RemoteLapack : public testing::TestWithParam<int> {};

std::string SizeName(const testing::TestParamInfo<int> &info)
{
    return "n" + std::to_string(info.param);
}

// ---- BLAS level 1 (incx = 2, incy = 3) ----

TEST_P(RemoteBlas, Dcopy)
{
    const int n = GetParam(), incx = 2, incy = 3;
    Rng rng(1 + n);
    std::vector<double> x = Strided(n, incx, rng), y = Strided(n, incy, rng), y_local = y;
    ASSERT_EQ(Call(numrpc_call("dcopy", n, x.data(), incx, y.data(), incy)), NUMRPC_OK);
    dcopy_(&n, x.data(), &incx, y_local.data(), &incy);
    ExpectClose(y, y_local, 0.0, "y");
}

TEST_P(RemoteBlas, Daxpy)
{
    const int n = GetParam(), incx = 2, incy = 3;
    const double alpha = -0.75;
    Rng rng(2 + n);
    std::vector<double> x = Strided(n, incx, rng), y = Strided(n, incy, rng), y_local = y;
    ASSERT_EQ(Call(numrpc_call("daxpy", n, alpha, x.data(), incx, y.data(), incy)), NUMRPC_OK);
    daxpy_(&n, &alpha, x.data(), &incx, y_local.data(), &incy);
    ExpectClose(y, y_local, SumTol(1, 1.0), "y");
}

TEST_P(RemoteBlas, Dscal)
{
    const int n = GetParam(), incx = 2;
    const double alpha = 3.25;
    Rng rng(3 + n);
    std::vector<double> x = Strided(n, incx, rng), x_local = x;
    ASSERT_EQ(Call(numrpc_call("dscal", n, alpha, x.data(), incx)), NUMRPC_OK);
    dscal_(&n, &alpha, x_local.data(), &incx);
    ExpectClose(x, x_local, SumTol(1, 4.0), "x");
}

TEST_P(RemoteBlas, DdotReturnsTheFunctionValue)
{
    const int n = GetParam(), incx = 2, incy = 3;
    Rng rng(4 + n);
    std::vector<double> x = Strided(n, incx, rng), y = Strided(n, incy, rng);
    double result = -99.0;
    ASSERT_EQ(Call(numrpc_call("ddot", n, x.data(), incx, y.data(), incy, &result)), NUMRPC_OK);
    double local = ddot_(&n, x.data(), &incx, y.data(), &incy);
    EXPECT_NEAR(result, local, SumTol(n, 1.0));
}

TEST_P(RemoteBlas, Dnrm2ReturnsTheFunctionValue)
{
    const int n = GetParam(), incx = 2;
    Rng rng(5 + n);
    std::vector<double> x = Strided(n, incx, rng);
    double result = -99.0;
    ASSERT_EQ(Call(numrpc_call("dnrm2", n, x.data(), incx, &result)), NUMRPC_OK);
    double local = dnrm2_(&n, x.data(), &incx);
    EXPECT_NEAR(result, local, SumTol(n, 1.0));
    if (n == 0) {
        EXPECT_EQ(result, 0.0);
    }
}

// Negative increments walk the vector backwards: the same positions as
// |inc| travel, and BLAS on the server walks them as the local call does.
TEST_P(RemoteBlas, NegativeIncrementsMatchLocal)
{
    const int n = GetParam(), incx = -2, incy = -3;
    const double alpha = 0.5;
    Rng rng(6 + n);
    std::vector<double> x = Strided(n, -incx, rng), y = Strided(n, -incy, rng);
    std::vector<double> y_local = y, y_copy = y, y_copy_local = y;
    ASSERT_EQ(Call(numrpc_call("daxpy", n, alpha, x.data(), incx, y.data(), incy)), NUMRPC_OK);
    daxpy_(&n, &alpha, x.data(), &incx, y_local.data(), &incy);
    ExpectClose(y, y_local, SumTol(1, 1.0), "daxpy y");
    ASSERT_EQ(Call(numrpc_call("dcopy", n, x.data(), incx, y_copy.data(), incy)), NUMRPC_OK);
    dcopy_(&n, x.data(), &incx, y_copy_local.data(), &incy);
    ExpectClose(y_copy, y_copy_local, 0.0, "dcopy y");
    // With one increment negative and one positive, dot pairs x reversed with y.
    std::vector<double> z = Strided(n, 1, rng);
    const int one = 1;
    double result = -99.0;
    ASSERT_EQ(Call(numrpc_call("ddot", n, x.data(), incx, z.data(), one, &result)), NUMRPC_OK);
    EXPECT_NEAR(result, ddot_(&n, x.data(), &incx, z.data(), &one), SumTol(n, 1.0));
    // dgemv with a negative incx and incy, lda > m.
    const int m = n + 2, lda = m + 1;
    std::vector<double> a = Matrix(m, n, lda, rng), v = Strided(n, 2, rng), w = Strided(m, 3, rng);
    std::vector<double> w_local = w;
    const int incv = -2, incw = -3;
    const double beta = -1.5;
    ASSERT_EQ(Call(numrpc_call("dgemv", 'N', m, n, alpha, a.data(), lda, v.data(), incv, beta,
                               w.data(), incw)),
              NUMRPC_OK);
    dgemv_("N", &m, &n, &alpha, a.data(), &lda, v.data(), &incv, &beta, w_local.data(), &incw, 1);
    ExpectClose(w, w_local, SumTol(n, 2.0), "dgemv y");
}

// ---- BLAS level 2 and 3: rectangular shapes, lda > rows ----

TEST_P(RemoteBlas, DgemvBothTransposes)
{
    const int m = GetParam(), n = GetParam() ? GetParam() + 2 : 0, lda = m + 3;
    const int incx = 2, incy = 3;
    const double alpha = 0.5, beta = -1.5;
    for (int trans : {'N', 'T', 't', 'n'}) {
        SCOPED_TRACE(std::string("trans ") + static_cast<char>(trans));
        const bool plain = trans == 'N' || trans == 'n';
        Rng rng(6 + m + trans);
        std::vector<double> a = Matrix(m, n, lda, rng), a_before = a;
        std::vector<double> x = Strided(plain ? n : m, incx, rng);
        std::vector<double> y = Strided(plain ? m : n, incy, rng), y_local = y;
        ASSERT_EQ(Call(numrpc_call("dgemv", trans, m, n, alpha, a.data(), lda, x.data(), incx,
                                   beta, y.data(), incy)),
                  NUMRPC_OK);
        const char t = static_cast<char>(trans);
        dgemv_(&t, &m, &n, &alpha, a.data(), &lda, x.data(), &incx, &beta, y_local.data(), &incy,
               1);
        ExpectClose(y, y_local, SumTol(std::max(m, n), 2.0), "y");
        EXPECT_EQ(a, a_before);
    }
}

TEST_P(RemoteBlas, DgemmAllTransposes)
{
    const int m = GetParam(), n = GetParam() ? GetParam() + 1 : 0, k = GetParam() / 2 + 1;
    const double alpha = 1.25, beta = 0.5;
    const char pairs[][2] = {{'N', 'N'}, {'T', 'N'}, {'N', 'T'}, {'T', 'T'}, {'n', 'c'}};
    for (const auto &tr : pairs) {
        SCOPED_TRACE(std::string("trans ") + tr[0] + tr[1]);
        const bool na = tr[0] == 'N' || tr[0] == 'n', nb = tr[1] == 'N' || tr[1] == 'n';
        const int arows = na ? m : k, acols = na ? k : m;
        const int brows = nb ? k : n, bcols = nb ? n : k;
        const int lda = arows + 2, ldb = brows + 3, ldc = m + 1;
        Rng rng(7 + m + tr[0] * 3 + tr[1]);
        std::vector<double> a = Matrix(arows, acols, lda, rng);
        std::vector<double> b = Matrix(brows, bcols, ldb, rng);
        std::vector<double> c = Matrix(m, n, ldc, rng), c_local = c;
        ASSERT_EQ(Call(numrpc_call("dgemm", tr[0], tr[1], m, n, k, alpha, a.data(), lda,
                                   b.data(), ldb, beta, c.data(), ldc)),
                  NUMRPC_OK);
        dgemm_(&tr[0], &tr[1], &m, &n, &k, &alpha, a.data(), &lda, b.data(), &ldb, &beta,
               c_local.data(), &ldc, 1, 1);
        ExpectClose(c, c_local, SumTol(k, 2.0), "c");
    }
}

TEST_P(RemoteBlas, DmmulOfThePaper)
{
    const int n = GetParam();
    Rng rng(8 + n);
    std::vector<double> a = Matrix(n, n, n, rng), b = Matrix(n, n, n, rng);
    std::vector<double> c(std::max(1, n * n), kSentinel), c_local = c;
    ASSERT_EQ(Call(numrpc_call("dmmul", n, a.data(), b.data(), c.data())), NUMRPC_OK);
    const double one = 1.0, zero = 0.0;
    const int ld = std::max(n, 1);
    dgemm_("N", "N", &n, &n, &n, &one, a.data(), &ld, b.data(), &ld, &zero, c_local.data(),
           &ld, 1, 1);
    ExpectClose(c, c_local, SumTol(n, 1.0), "C");
}

INSTANTIATE_TEST_SUITE_P(Sizes, RemoteBlas, testing::Values(0, 1, 7, 64, 300), SizeName);

// ---- LAPACK (lda = n + 3, nrhs = 2) ----

TEST_P(RemoteLapack, Dgesv)
{
    const int n = GetParam(), nrhs = 2, lda = n + 3, ldb = n + 2;
    Rng rng(20 + n);
    std::vector<double> a = Matrix(n, n, lda, rng), b = Matrix(n, nrhs, ldb, rng);
    const double tol = SolveTol(Cond1(a, n, lda), n, b);
    std::vector<double> a_local = a, b_local = b;
    std::vector<int> ipiv(std::max(n, 1), -1), ipiv_local = ipiv;
    int info = -99, info_local = -98;
    ASSERT_EQ(Call(numrpc_call("dgesv", n, nrhs, a.data(), lda, ipiv.data(), b.data(), ldb,
                               &info)),
              NUMRPC_OK);
    dgesv_(&n, &nrhs, a_local.data(), &lda, ipiv_local.data(), b_local.data(), &ldb,
           &info_local);
    EXPECT_EQ(info, info_local);
    EXPECT_EQ(ipiv, ipiv_local);
    ExpectClose(a, a_local, 1e3 * (n + 1) * kEps * (1 + MaxAbs(a_local)), "LU");
    ExpectClose(b, b_local, tol * (1 + MaxAbs(b_local)), "X");
}

TEST_P(RemoteLapack, DgetrfTallAndDgetrsBothTransposes)
{
    const int n = GetParam(), m = n + n / 2, lda = m + 3;
    Rng rng(21 + n);
    std::vector<double> a = Matrix(m, n, lda, rng), a_local = a;
    const int npiv = std::max(1, std::min(m, n));
    std::vector<int> ipiv(npiv, -1), ipiv_local = ipiv;
    int info = -99, info_local = -98;
    ASSERT_EQ(Call(numrpc_call("dgetrf", m, n, a.data(), lda, ipiv.data(), &info)), NUMRPC_OK);
    dgetrf_(&m, &n, a_local.data(), &lda, ipiv_local.data(), &info_local);
    EXPECT_EQ(info, info_local);
    EXPECT_EQ(ipiv, ipiv_local);
    ExpectClose(a, a_local, 1e3 * (n + 1) * kEps * (1 + MaxAbs(a_local)), "LU");

    // dgetrs on the square n x n factors of a fresh matrix.
    const int nrhs = 3, ldb = n + 1;
    std::vector<double> sq = Matrix(n, n, lda, rng);
    const double cond = Cond1(sq, n, lda);
    std::vector<int> piv(std::max(n, 1));
    dgetrf_(&n, &n, sq.data(), &lda, piv.data(), &info_local);
    ASSERT_EQ(info_local, 0);
    for (int trans : {'N', 'T'}) {
        SCOPED_TRACE(std::string("trans ") + static_cast<char>(trans));
        std::vector<double> b = Matrix(n, nrhs, ldb, rng), b_local = b;
        ASSERT_EQ(Call(numrpc_call("dgetrs", trans, n, nrhs, sq.data(), lda, piv.data(),
                                   b.data(), ldb, &info)),
                  NUMRPC_OK);
        const char t = static_cast<char>(trans);
        dgetrs_(&t, &n, &nrhs, sq.data(), &lda, piv.data(), b_local.data(), &ldb, &info_local,
                1);
        EXPECT_EQ(info, info_local);
        ExpectClose(b, b_local, SolveTol(cond, n, b_local), "X");
    }
}

TEST_P(RemoteLapack, DposvAndDpotrf)
{
    const int n = GetParam(), nrhs = 2, lda = n + 3, ldb = n + 1;
    Rng rng(22 + n);
    const std::vector<double> spd = Spd(n, lda, rng);
    const double cond = Cond1(spd, n, lda);
    for (int uplo : {'U', 'L'}) {
        SCOPED_TRACE(std::string("uplo ") + static_cast<char>(uplo));
        const char u = static_cast<char>(uplo);
        std::vector<double> a = spd, a_local = spd, b = Matrix(n, nrhs, ldb, rng),
                            b_local = b;
        int info = -99, info_local = -98;
        ASSERT_EQ(Call(numrpc_call("dposv", uplo, n, nrhs, a.data(), lda, b.data(), ldb, &info)),
                  NUMRPC_OK);
        dposv_(&u, &n, &nrhs, a_local.data(), &lda, b_local.data(), &ldb, &info_local, 1);
        EXPECT_EQ(info, 0);
        EXPECT_EQ(info, info_local);
        ExpectClose(a, a_local, 1e3 * (n + 1) * kEps * (1 + MaxAbs(a_local)), "factor");
        ExpectClose(b, b_local, SolveTol(cond, n, b_local), "X");

        a = spd;
        a_local = spd;
        ASSERT_EQ(Call(numrpc_call("dpotrf", uplo, n, a.data(), lda, &info)), NUMRPC_OK);
        dpotrf_(&u, &n, a_local.data(), &lda, &info_local, 1);
        EXPECT_EQ(info, info_local);
        ExpectClose(a, a_local, 1e3 * (n + 1) * kEps * (1 + MaxAbs(a_local)), "Cholesky");
    }
}

TEST_P(RemoteLapack, DgelsOverdetermined)
{
    const int n = GetParam(), m = n ? n + 5 : 0, nrhs = 2, lda = m + 2;
    const int ldb = std::max(std::max(m, n), 1) + 1;
    Rng rng(23 + n);
    std::vector<double> a = Matrix(m, n, lda, rng), b = Matrix(m, nrhs, ldb, rng);
    std::vector<double> a_local = a, b_local = b;
    double query = 0;
    int lwork = -1, info = -99, info_local = -98;
    dgels_("N", &m, &n, &nrhs, a_local.data(), &lda, b_local.data(), &ldb, &query, &lwork,
           &info_local, 1);
    lwork = Lwork(query);
    std::vector<double> work(lwork);
    ASSERT_EQ(Call(numrpc_call("dgels", 'N', m, n, nrhs, a.data(), lda, b.data(), ldb,
                               nullptr, lwork, &info)),
              NUMRPC_OK);
    dgels_("N", &m, &n, &nrhs, a_local.data(), &lda, b_local.data(), &ldb, work.data(), &lwork,
           &info_local, 1);
    EXPECT_EQ(info, info_local);
    ExpectClose(a, a_local, 1e3 * (m + 1) * kEps * (1 + MaxAbs(a_local)), "QR");
    // The least-squares solution's sensitivity grows with cond(A)^2 at worst.
    ExpectClose(b, b_local, 1e-8 * (1 + MaxAbs(b_local)), "X");
}

TEST_P(RemoteLapack, DsyevVectorsAndValuesOnly)
{
    const int n = GetParam(), lda = n + 3;
    Rng rng(24 + n);
    std::vector<double> sym = Matrix(n, n, lda, rng);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < j; i++) sym[static_cast<size_t>(i) * lda + j] = sym[static_cast<size_t>(j) * lda + i];
    const double anorm = std::max(1.0, n * MaxAbs(sym));
    for (int jobz : {'V', 'N'}) {
        SCOPED_TRACE(std::string("jobz ") + static_cast<char>(jobz));
        const char jz = static_cast<char>(jobz);
        std::vector<double> a = sym, a_local = sym, w(std::max(n, 1), -7.0), w_local = w;
        double query = 0;
        int lwork = -1, info = -99, info_local = -98;
        dsyev_(&jz, "L", &n, a_local.data(), &lda, w_local.data(), &query, &lwork, &info_local,
               1, 1);
        lwork = Lwork(query);
        std::vector<double> work(lwork);
        ASSERT_EQ(Call(numrpc_call("dsyev", jobz, 'L', n, a.data(), lda, w.data(), nullptr,
                                   lwork, &info)),
                  NUMRPC_OK);
        dsyev_(&jz, "L", &n, a_local.data(), &lda, w_local.data(), work.data(), &lwork,
               &info_local, 1, 1);
        EXPECT_EQ(info, info_local);
        ExpectClose(w, w_local, 100.0 * (n + 1) * kEps * anorm, "eigenvalues");
        if (jobz == 'V' && n > 0) {
            // Remote eigenvectors: A z = lambda z to rounding.
            double worst = 0;
            for (int k = 0; k < n; k++)
                for (int i = 0; i < n; i++) {
                    double r = -w[k] * a[static_cast<size_t>(k) * lda + i];
                    for (int j = 0; j < n; j++)
                        r += sym[static_cast<size_t>(j) * lda + i] * a[static_cast<size_t>(k) * lda + j];
                    worst = std::max(worst, std::fabs(r));
                }
            EXPECT_LE(worst, 100.0 * (n + 1) * kEps * anorm);
        }
    }
}

// A = U diag(s) V^T to rounding, with U m x ucols and VT vtrows x n.
double SvdResidual(const std::vector<double> &a, int m, int n, int lda,
                   const std::vector<double> &s, const std::vector<double> &u, int ldu,
                   const std::vector<double> &vt, int ldvt)
{
    const int r = std::min(m, n);
    double worst = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double x = -a[static_cast<size_t>(j) * lda + i];
            for (int k = 0; k < r; k++)
                x += u[static_cast<size_t>(k) * ldu + i] * s[k] * vt[static_cast<size_t>(j) * ldvt + k];
            worst = std::max(worst, std::fabs(x));
        }
    return worst;
}

TEST_P(RemoteLapack, DgesvdJobsAllSomeNone)
{
    const int n = GetParam(), m = n + 2, lda = m + 3;
    const int r = std::min(m, n);
    Rng rng(25 + n);
    const std::vector<double> a0 = Matrix(m, n, lda, rng);
    const double anorm = std::max(1.0, std::sqrt(1.0 * m * n));
    for (int job : {'A', 'S', 'N'}) {
        SCOPED_TRACE(std::string("job ") + static_cast<char>(job));
        const char jb = static_cast<char>(job);
        const int ucols = job == 'A' ? m : job == 'S' ? r : 0;
        const int vtrows = job == 'A' ? n : job == 'S' ? r : 0;
        const int ldu = m + 1, ldvt = std::max(vtrows, 1) + 2;
        std::vector<double> a = a0, a_local = a0;
        std::vector<double> s(std::max(r, 1), -7.0), s_local = s;
        std::vector<double> u(std::max(1, ldu * std::max(ucols, 1)), kSentinel), u_local = u;
        std::vector<double> vt(std::max(1, ldvt * n), kSentinel), vt_local = vt;
        double query = 0;
        int lwork = -1, info = -99, info_local = -98;
        dgesvd_(&jb, &jb, &m, &n, a_local.data(), &lda, s_local.data(), u_local.data(), &ldu,
                vt_local.data(), &ldvt, &query, &lwork, &info_local, 1, 1);
        lwork = Lwork(query);
        std::vector<double> work(lwork);
        ASSERT_EQ(Call(numrpc_call("dgesvd", job, job, m, n, a.data(), lda, s.data(), u.data(),
                                   ldu, vt.data(), ldvt, nullptr, lwork, &info)),
                  NUMRPC_OK);
        dgesvd_(&jb, &jb, &m, &n, a_local.data(), &lda, s_local.data(), u_local.data(), &ldu,
                vt_local.data(), &ldvt, work.data(), &lwork, &info_local, 1, 1);
        EXPECT_EQ(info, info_local);
        ExpectClose(s, s_local, 100.0 * (m + 1) * kEps * anorm, "singular values");
        if (job == 'N') {
            // Nothing of U and VT travelled back.
            EXPECT_TRUE(std::all_of(u.begin(), u.end(), [](double x) { return x == kSentinel; }));
            EXPECT_TRUE(std::all_of(vt.begin(), vt.end(), [](double x) { return x == kSentinel; }));
        } else if (n > 0) {
            EXPECT_LE(SvdResidual(a0, m, n, lda, s, u, ldu, vt, ldvt),
                      100.0 * (m + 1) * kEps * anorm);
            // Rows of U beyond m were never written.
            for (int j = 0; j < ucols; j++) ASSERT_EQ(u[static_cast<size_t>(j) * ldu + m], kSentinel);
        }
    }
}

TEST_P(RemoteLapack, DgeevWithAndWithoutVectors)
{
    const int n = GetParam(), lda = n + 3;
    Rng rng(26 + n);
    const std::vector<double> a0 = Matrix(n, n, lda, rng);
    for (int job : {'V', 'N'}) {
        SCOPED_TRACE(std::string("job ") + static_cast<char>(job));
        const char jb = static_cast<char>(job);
        const int ldv = n + 1;
        std::vector<double> a = a0, a_local = a0;
        std::vector<double> wr(std::max(n, 1), -7.0), wi = wr, wr_local = wr, wi_local = wr;
        std::vector<double> vl(std::max(1, ldv * n), kSentinel), vr = vl, vl_local = vl,
                            vr_local = vl;
        double query = 0;
        int lwork = -1, info = -99, info_local = -98;
        dgeev_(&jb, &jb, &n, a_local.data(), &lda, wr_local.data(), wi_local.data(),
               vl_local.data(), &ldv, vr_local.data(), &ldv, &query, &lwork, &info_local, 1, 1);
        lwork = Lwork(query);
        std::vector<double> work(lwork);
        ASSERT_EQ(Call(numrpc_call("dgeev", job, job, n, a.data(), lda, wr.data(), wi.data(),
                                   vl.data(), ldv, vr.data(), ldv, nullptr, lwork, &info)),
                  NUMRPC_OK);
        dgeev_(&jb, &jb, &n, a_local.data(), &lda, wr_local.data(), wi_local.data(),
               vl_local.data(), &ldv, vr_local.data(), &ldv, work.data(), &lwork, &info_local,
               1, 1);
        EXPECT_EQ(info, info_local);
        // Same algorithm, same input, one thread each: the same rounding.
        const double tol = 1e3 * (n + 1) * kEps * std::max(1.0, n * MaxAbs(a0));
        ExpectClose(wr, wr_local, tol, "wr");
        ExpectClose(wi, wi_local, tol, "wi");
        ExpectClose(vl, vl_local, 1e-8, "vl");
        ExpectClose(vr, vr_local, 1e-8, "vr");
    }
}

TEST_P(RemoteLapack, Zgesv)
{
    const int n = GetParam(), nrhs = 2, lda = n + 3, ldb = n + 1;
    Rng rng(27 + n);
    std::vector<cplx> a(std::max(1, lda * n), cplx(kSentinel, kSentinel));
    std::vector<cplx> b(std::max(1, ldb * nrhs), cplx(kSentinel, kSentinel));
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) a[static_cast<size_t>(j) * lda + i] = cplx(rng.Next(), rng.Next());
    for (int j = 0; j < nrhs; j++)
        for (int i = 0; i < n; i++) b[static_cast<size_t>(j) * ldb + i] = cplx(rng.Next(), rng.Next());
    std::vector<cplx> a_local = a, b_local = b;
    std::vector<int> ipiv(std::max(n, 1), -1), ipiv_local = ipiv;
    int info = -99, info_local = -98;
    ASSERT_EQ(Call(numrpc_call("zgesv", n, nrhs, a.data(), lda, ipiv.data(), b.data(), ldb,
                               &info)),
              NUMRPC_OK);
    zgesv_(&n, &nrhs, a_local.data(), &lda, ipiv_local.data(), b_local.data(), &ldb,
           &info_local);
    EXPECT_EQ(info, info_local);
    EXPECT_EQ(ipiv, ipiv_local);
    // Compare real and imaginary parts as doubles (sentinels included).
    auto parts = [](const std::vector<cplx> &v) {
        std::vector<double> d;
        for (const cplx &z : v) {
            d.push_back(z.real());
            d.push_back(z.imag());
        }
        return d;
    };
    std::vector<double> x = parts(b_local);
    ExpectClose(parts(a), parts(a_local), 1e3 * (n + 1) * kEps * (1 + MaxAbs(parts(a_local))), "LU");
    // Random complex matrices of these sizes are well conditioned (cond well
    // below 1e5); the tolerance allows that.
    ExpectClose(parts(b), x, SolveTol(1e5, n, x), "X");
}

// A workspace query (lwork = -1) answers remotely what it answers locally,
// and a call with the size it gives then succeeds.
TEST_P(RemoteLapack, WorkspaceQueriesMatchLocal)
{
    const int n = GetParam(), m = n + 3, nrhs = 2, lda = m + 1, ldb = m + 1;
    Rng rng(41 + n);
    std::vector<double> a = Matrix(m, n, lda, rng), b = Matrix(m, nrhs, ldb, rng);
    const int query_lwork = -1;
    double remote = -1, local = -2;
    int info = -99, info_local = -98;
    ASSERT_EQ(Call(numrpc_call("dgels", 'N', m, n, nrhs, a.data(), lda, b.data(), ldb, &remote,
                               query_lwork, &info)),
              NUMRPC_OK);
    int lw = -1;
    dgels_("N", &m, &n, &nrhs, a.data(), &lda, b.data(), &ldb, &local, &lw, &info_local, 1);
    EXPECT_EQ(info, info_local);
    EXPECT_EQ(remote, local) << "dgels";
    std::vector<double> s = Spd(n, std::max(n, 1), rng), w(std::max(n, 1));
    const int lds = std::max(n, 1);
    remote = -1;
    lw = -1;
    ASSERT_EQ(Call(numrpc_call("dsyev", 'V', 'L', n, s.data(), lds, w.data(), &remote, query_lwork,
                               &info)),
              NUMRPC_OK);
    dsyev_("V", "L", &n, s.data(), &lds, w.data(), &local, &lw, &info_local, 1, 1);
    EXPECT_EQ(info, info_local);
    EXPECT_EQ(remote, local) << "dsyev";
    // The queried size then works for the real call.
    std::vector<double> work(static_cast<size_t>(Lwork(remote)));
    ASSERT_EQ(Call(numrpc_call("dsyev", 'N', 'L', n, s.data(), lds, w.data(), work.data(),
                               Lwork(remote), &info)),
              NUMRPC_OK);
    EXPECT_EQ(info, 0);
    EXPECT_EQ(work[0], 0.0) << "a real call sends no workspace back";
}

INSTANTIATE_TEST_SUITE_P(Sizes, RemoteLapack, testing::Values(0, 1, 7, 64, 300), SizeName);

// ---- What travels ----

// With lda = 2n only the n x n part of A crosses the wire, both ways; the
// WORK array never travels however large lwork is.
TEST(StubsWire, LeadingDimensionSendsOnlyTheUsedPart)
{
    const int n = 64, nrhs = 1;
    Rng rng(40);
    numrpc_call_info small{}, large{};
    for (int lda : {n, 2 * n}) {
        std::vector<double> a = Matrix(n, n, lda, rng), b = Matrix(n, nrhs, n, rng);
        std::vector<int> ipiv(n);
        int info = -1;
        ASSERT_EQ(Call(numrpc_call("dgesv", n, nrhs, a.data(), lda, ipiv.data(), b.data(), n,
                                   &info)),
                  NUMRPC_OK);
        ASSERT_EQ(info, 0);
        ASSERT_EQ(numrpc_last_call_info(lda == n ? &small : &large), NUMRPC_OK);
        for (int j = 0; j < n; j++)
            for (int i = n; i < lda; i++) ASSERT_EQ(a[static_cast<size_t>(j) * lda + i], kSentinel);
    }
    const uint64_t matrix = 8ull * n * n;
    EXPECT_GE(large.bytes_sent, matrix);
    EXPECT_EQ(large.bytes_sent, small.bytes_sent);  // the same payload, lda aside
    EXPECT_LT(large.bytes_sent, matrix + 8ull * n * nrhs + 1024);
    EXPECT_GE(large.bytes_received, matrix);
    EXPECT_EQ(large.bytes_received, small.bytes_received);
    EXPECT_LT(large.bytes_received, matrix + 8ull * n * nrhs + 4ull * n + 1024);

    // dsyev with a million-element workspace sends only the matrix.
    std::vector<double> a = Matrix(n, n, 2 * n, rng), w(n);
    int info = -1;
    ASSERT_EQ(Call(numrpc_call("dsyev", 'N', 'U', n, a.data(), 2 * n, w.data(), nullptr,
                               1 << 20, &info)),
              NUMRPC_OK);
    EXPECT_EQ(info, 0);
    numrpc_call_info syev{};
    ASSERT_EQ(numrpc_last_call_info(&syev), NUMRPC_OK);
    EXPECT_LT(syev.bytes_sent, matrix + 1024);
    EXPECT_LT(syev.bytes_received, matrix + 8ull * n + 1024);
}

// dgesvd with jobu = jobvt = 'N' sends back s and A only: U and VT have
// extent 0.
TEST(StubsWire, OptionalArraysOfExtentZeroDoNotTravel)
{
    const int m = 40, n = 30;
    Rng rng(41);
    std::vector<double> a = Matrix(m, n, m, rng), s(n), u(1, kSentinel), vt(1, kSentinel);
    int info = -1;
    ASSERT_EQ(Call(numrpc_call("dgesvd", 'N', 'N', m, n, a.data(), m, s.data(), u.data(), 1,
                               vt.data(), 1, nullptr, 5 * (m + n), &info)),
              NUMRPC_OK);
    EXPECT_EQ(info, 0);
    numrpc_call_info ci{};
    ASSERT_EQ(numrpc_last_call_info(&ci), NUMRPC_OK);
    EXPECT_LT(ci.bytes_received, 8ull * (m * n + n) + 1024);
    EXPECT_EQ(u[0], kSentinel);
    EXPECT_EQ(vt[0], kSentinel);
}

// A leading dimension smaller than the rows op(A) needs is refused by the
// client before anything is sent; the server stays up.
TEST(StubsWire, TooSmallLeadingDimensionIsAClearError)
{
    const int m = 5, n = 4, k = 3;
    std::vector<double> a(64, 1.0), b(64, 1.0), c(64, 0.0);
    // transa 'T': A is k x m, so lda must be >= k = 3; 2 is too small.
    int rc = numrpc_call("dgemm", 'T', 'N', m, n, k, 1.0, a.data(), 2, b.data(), k, 0.0,
                         c.data(), m);
    EXPECT_EQ(rc, NUMRPC_EINVAL);
    EXPECT_NE(std::string(numrpc_last_error_detail()).find("dgemm"), std::string::npos)
        << numrpc_last_error_detail();
    EXPECT_TRUE(g_env->proc().alive());
    // With transa 'N' the same lda = 5 >= m is fine.
    EXPECT_EQ(Call(numrpc_call("dgemm", 'N', 'N', m, n, k, 1.0, a.data(), m, b.data(), k, 0.0,
                               c.data(), m)),
              NUMRPC_OK);
    EXPECT_DOUBLE_EQ(c[0], 3.0);
}

}  // namespace
