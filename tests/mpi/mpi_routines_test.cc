// mpi_routines_test.cc -- pdposv, pdgemm, pdsyev, pdgetrf and pdgetrs through
// real servers on three process grids, each equal to LAPACK/BLAS here.
#include "mpi_support.h"

#include <cstdio>

namespace {

// The grids the servers' jobs run on: the squarest of 4 ranks at the
// default block, and a row and a column of 2 ranks with small blocks (many
// blocks per rank at these sizes: the block-cyclic layout is exercised).
struct Grid {
    const char *name;
    int ranks;
    const char *shape;
    int block;
};
const Grid kGrids[] = {{"Square4Nb64", 4, "2x2", 64}, {"Row2Nb16", 2, "1x2", 16}, {"Column2Nb5", 2, "2x1", 5}};

// One server per grid for the whole program, started together so that
// their jobs start at once (mpirun's start-up is paid once, not per test).
std::vector<std::unique_ptr<MpiServer>> servers;

class Servers : public ::testing::Environment {
  public:
    void SetUp() override
    {
        for (const Grid &g : kGrids) {
            std::vector<std::string> args = MpiArgs(g.ranks);
            args.insert(args.end(), {"--mpi-grid", g.shape, "--mpi-block", std::to_string(g.block), "--workers",
                                     "2", "--admin-socket", "none"});
            servers.push_back(std::make_unique<MpiServer>());
            servers.back()->Start(args);
        }
    }
    void TearDown() override { servers.clear(); } /* each server stops its job */
};

class Routines : public ::testing::TestWithParam<int> {
  protected:
    void SetUp() override
    {
        UseServer(servers.at(GetParam())->server->address());
        numrpc_set_timeout(0);
    }
};

// A symmetric positive definite matrix of order n (diagonally dominant) in
// the triangle uplo names; the other triangle holds 99, which neither
// LAPACK nor ScaLAPACK may read or change.
std::vector<double> SpdMatrix(char uplo, int n, int ld, std::mt19937 &gen)
{
    std::vector<double> a = RandomMatrix(n, n, ld, gen);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            bool referenced = uplo == 'U' ? i <= j : i >= j;
            double &x = a[static_cast<size_t>(j) * ld + i];
            if (i == j) x = n + std::fabs(x);
            else if (!referenced) x = 99.0;
        }
    return a;
}

TEST_P(Routines, PdposvEqualsDposv)
{
    const int sizes[][2] = {{1, 1}, {2, 3}, {7, 2}, {64, 1}, {65, 4}, {130, 2}, {300, 3}};
    unsigned seed = 100;
    for (char uplo : {'U', 'L'})
        for (const auto &s : sizes) {
            int n = s[0], nrhs = s[1], lda = n + 3, ldb = n + 1, info = -5, info_l = -6;
            std::mt19937 gen(seed++);
            std::vector<double> a = SpdMatrix(uplo, n, lda, gen), b = RandomMatrix(n, nrhs, ldb, gen);
            std::vector<double> a_l = a, b_l = b;
            ASSERT_EQ(numrpc_call("pdposv", uplo, n, nrhs, a.data(), lda, b.data(), ldb, &info), NUMRPC_OK)
                << Detail();
            dposv_(&uplo, &n, &nrhs, a_l.data(), &lda, b_l.data(), &ldb, &info_l, 1);
            ASSERT_EQ(info_l, 0);
            EXPECT_EQ(info, 0) << uplo << " n " << n;
            ExpectMatrixNear(a, a_l, n, n, lda, 1e-12, std::string("Cholesky factor ") + uplo);
            ExpectMatrixNear(b, b_l, n, nrhs, ldb, 1e-12, std::string("X ") + uplo);
        }
}

// A matrix that is not positive definite: info is the order of the first
// leading minor that is not, as dposv says, and B is left as it was.
TEST_P(Routines, PdposvOfANonPositiveDefiniteMatrix)
{
    const int cases[][2] = {{1, 0}, {9, 4}, {70, 0}, {70, 33}, {150, 149}};
    unsigned seed = 200;
    for (char uplo : {'U', 'L'})
        for (const auto &c : cases) {
            int n = c[0], bad = c[1], nrhs = 2, lda = n + 2, ldb = n + 2, info = -5, info_l = -6;
            std::mt19937 gen(seed++);
            std::vector<double> a = SpdMatrix(uplo, n, lda, gen), b = RandomMatrix(n, nrhs, ldb, gen);
            a[static_cast<size_t>(bad) * lda + bad] = -1.0 * n;
            std::vector<double> a_l = a, b_l = b, b_in = b;
            ASSERT_EQ(numrpc_call("pdposv", uplo, n, nrhs, a.data(), lda, b.data(), ldb, &info), NUMRPC_OK)
                << Detail();
            dposv_(&uplo, &n, &nrhs, a_l.data(), &lda, b_l.data(), &ldb, &info_l, 1);
            ASSERT_EQ(info_l, bad + 1);
            EXPECT_EQ(info, info_l) << uplo << " n " << n;
            EXPECT_EQ(b, b_in) << uplo << " n " << n;
        }
}

// C := alpha op(A) op(B) + beta C for every op, alpha and beta zero or
// not, k zero, and C full of NaN where beta is zero (BLAS does not read it).
TEST_P(Routines, PdgemmEqualsDgemm)
{
    struct Case {
        int m, n, k;
        double alpha, beta;
    } cases[] = {{1, 1, 1, 1.0, 0.0},     {3, 5, 2, -0.5, 2.0},   {64, 65, 63, 1.0, 1.0}, {130, 70, 300, 2.0, -1.0},
                 {300, 290, 280, 1.0, 0.5}, {17, 9, 33, 1.5, 0.0}, {20, 30, 10, 0.0, 3.0}, {40, 50, 0, 1.0, 2.0}};
    unsigned seed = 300;
    for (char ta : {'N', 'T'})
        for (char tb : {'N', 'T'})
            for (const Case &c : cases) {
                std::mt19937 gen(seed++);
                int a_rows = ta == 'N' ? c.m : c.k, a_cols = ta == 'N' ? c.k : c.m;
                int b_rows = tb == 'N' ? c.k : c.n, b_cols = tb == 'N' ? c.n : c.k;
                int lda = std::max(1, a_rows) + 2, ldb = std::max(1, b_rows) + 1, ldc = c.m + 3;
                std::vector<double> a = RandomMatrix(a_rows, a_cols, lda, gen);
                std::vector<double> b = RandomMatrix(b_rows, b_cols, ldb, gen);
                std::vector<double> cm = RandomMatrix(c.m, c.n, ldc, gen);
                if (c.beta == 0.0)
                    for (int j = 0; j < c.n; j++)
                        for (int i = 0; i < c.m; i++) cm[static_cast<size_t>(j) * ldc + i] = NAN;
                std::vector<double> c_l = cm;
                ASSERT_EQ(numrpc_call("pdgemm", ta, tb, c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb,
                                      c.beta, cm.data(), ldc),
                          NUMRPC_OK)
                    << Detail();
                dgemm_(&ta, &tb, &c.m, &c.n, &c.k, &c.alpha, a.data(), &lda, b.data(), &ldb, &c.beta, c_l.data(),
                       &ldc, 1, 1);
                std::string what = std::string("C, op ") + ta + tb + " m " + std::to_string(c.m) + " k " +
                                   std::to_string(c.k);
                ExpectMatrixNear(cm, c_l, c.m, c.n, ldc, 1e-12 * std::max(1, c.k), what);
            }
}

// The phases a worker sees of an MPI call reach a progress handler (on
// the first grid only: one product of order 1000).
void OnPhase(const numrpc_progress *p, void *arg)
{
    static_cast<std::vector<std::string> *>(arg)->push_back(p->message);
}

TEST_P(Routines, PdgemmPhasesReachAProgressHandler)
{
    if (GetParam() != 0) GTEST_SKIP() << "one grid is enough";
    int n = 1000;
    std::mt19937 gen(77);
    std::vector<double> a = RandomMatrix(n, n, n, gen), b = RandomMatrix(n, n, n, gen), c(static_cast<size_t>(n) * n, 0);
    std::vector<double> want = c;
    std::vector<std::string> phases;
    numrpc_set_progress(OnPhase, &phases, 0.05);
    int rc = numrpc_call("pdgemm", 'N', 'N', n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
    numrpc_set_progress(nullptr, nullptr, 0);
    ASSERT_EQ(rc, NUMRPC_OK) << Detail();
    double one = 1, zero = 0;
    dgemm_("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, want.data(), &n, 1, 1);
    ExpectMatrixNear(c, want, n, n, n, 1e-12 * n, "pdgemm with progress");
    numrpc_call_info info;
    numrpc_last_call_info(&info);
    std::printf("pdgemm n=%d: %zu frames in %.2f s of compute\n", n, phases.size(), info.compute_seconds);
    if (info.compute_seconds > 0.3) EXPECT_FALSE(phases.empty()) << info.compute_seconds << " s without a frame";
    for (const std::string &m : phases)
        EXPECT_TRUE(m == "" || m == "waiting for the MPI job" || m == "sending the arrays to rank 0" ||
                    m == "on the MPI job: scatter, compute, gather")
            << m;
    if (!phases.empty() && info.compute_seconds > 0.3) EXPECT_EQ(phases.back(), "on the MPI job: scatter, compute, gather");
}

// Each column of z turned to point the way local's does (an eigenvector's
// sign is either).
void AlignSigns(std::vector<double> &z, const std::vector<double> &local, int n, int ld)
{
    for (int j = 0; j < n; j++) {
        double dot = 0.0;
        for (int i = 0; i < n; i++) dot += z[static_cast<size_t>(j) * ld + i] * local[static_cast<size_t>(j) * ld + i];
        if (dot < 0.0)
            for (int i = 0; i < n; i++) z[static_cast<size_t>(j) * ld + i] = -z[static_cast<size_t>(j) * ld + i];
    }
}

// The eigenvalues, and with jobz 'V' the eigenvectors (up to each one's
// sign), equal dsyev's; the other triangle is not read.
TEST_P(Routines, PdsyevEqualsDsyev)
{
    const int sizes[] = {1, 2, 7, 64, 65, 130, 300};
    unsigned seed = 400;
    for (char jobz : {'N', 'V'})
        for (int n : sizes) {
            char uplo = n % 2 ? 'L' : 'U';
            int lda = n + 2, lwork = std::max(1, 3 * n - 1), query = -1, info = -5, info_l = -6;
            std::mt19937 gen(seed++);
            std::vector<double> a = SpdMatrix(uplo, n, lda, gen), w(n, -1.0), w_l(n, -2.0);
            for (int i = 0; i < n; i++) a[static_cast<size_t>(i) * lda + i] -= n; /* indefinite */
            std::vector<double> a_l = a;
            ASSERT_EQ(numrpc_call("pdsyev", jobz, uplo, n, a.data(), lda, w.data(), nullptr, lwork, &info),
                      NUMRPC_OK)
                << Detail();
            double best = 0.0;
            dsyev_(&jobz, &uplo, &n, a_l.data(), &lda, w_l.data(), &best, &query, &info_l, 1, 1);
            std::vector<double> work(static_cast<size_t>(best));
            int lwork_l = static_cast<int>(best);
            dsyev_(&jobz, &uplo, &n, a_l.data(), &lda, w_l.data(), work.data(), &lwork_l, &info_l, 1, 1);
            ASSERT_EQ(info_l, 0);
            EXPECT_EQ(info, 0) << jobz << " n " << n;
            ExpectMatrixNear(w, w_l, n, 1, n, 1e-12, std::string("eigenvalues ") + jobz);
            if (jobz == 'N') continue;
            AlignSigns(a, a_l, n, lda);
            ExpectMatrixNear(a, a_l, n, n, lda, 1e-9, "eigenvectors");
        }
}

// lwork -1 answers dsyev's workspace size, as a local call does.
TEST_P(Routines, PdsyevWorkspaceQuery)
{
    int n = 90, lda = 91, query = -1, info = -5, info_l = -6;
    std::mt19937 gen(450);
    std::vector<double> a = SpdMatrix('U', n, lda, gen), w(n);
    double remote = 0.0, local = 0.0;
    ASSERT_EQ(numrpc_call("pdsyev", 'V', 'U', n, a.data(), lda, w.data(), &remote, query, &info), NUMRPC_OK)
        << Detail();
    dsyev_("V", "U", &n, a.data(), &lda, w.data(), &local, &query, &info_l, 1, 1);
    EXPECT_EQ(info, info_l);
    EXPECT_EQ(remote, local);
}

// pdgetrf's factors and pivots equal dgetrf's for square and oblong
// matrices; with them pdgetrs solves A X = B and A^T X = B as dgetrs does.
TEST_P(Routines, PdgetrfThenPdgetrsEqualLapack)
{
    const int sizes[][2] = {{1, 1}, {3, 5}, {5, 3}, {7, 7}, {64, 64}, {65, 130}, {130, 65}, {300, 300}};
    unsigned seed = 500;
    for (const auto &s : sizes) {
        int m = s[0], n = s[1], lda = m + 2, info = -5, info_l = -6;
        std::mt19937 gen(seed++);
        std::vector<double> a = RandomMatrix(m, n, lda, gen), a_l = a;
        std::vector<int> ipiv(std::min(m, n), -1), ipiv_l(std::min(m, n), -2);
        ASSERT_EQ(numrpc_call("pdgetrf", m, n, a.data(), lda, ipiv.data(), &info), NUMRPC_OK) << Detail();
        dgetrf_(&m, &n, a_l.data(), &lda, ipiv_l.data(), &info_l);
        EXPECT_EQ(info, info_l) << m << " x " << n;
        EXPECT_EQ(ipiv, ipiv_l) << m << " x " << n;
        ExpectMatrixNear(a, a_l, m, n, lda, 1e-10, "LU factors of " + std::to_string(m) + " x " + std::to_string(n));
        if (m != n) continue;
        for (char trans : {'N', 'T'}) {
            int nrhs = 1 + n % 3, ldb = n + 1;
            std::vector<double> b = RandomMatrix(n, nrhs, ldb, gen), b_l = b;
            ASSERT_EQ(numrpc_call("pdgetrs", trans, n, nrhs, a.data(), lda, ipiv.data(), b.data(), ldb, &info),
                      NUMRPC_OK)
                << Detail();
            dgetrs_(&trans, &n, &nrhs, a_l.data(), &lda, ipiv_l.data(), b_l.data(), &ldb, &info_l, 1);
            EXPECT_EQ(info, info_l);
            ExpectMatrixNear(b, b_l, n, nrhs, ldb, 1e-9, std::string("X of pdgetrs ") + trans);
        }
    }
}

// An exactly singular matrix (a zero column): pdgetrf's and pdgesv's info
// names the first zero pivot as dgetrf's and dgesv's do, the pivots before
// it are LAPACK's, and pdgesv leaves B as it was.
TEST_P(Routines, SingularMatrices)
{
    const int cases[][2] = {{1, 0}, {6, 2}, {80, 79}, {80, 37}};
    unsigned seed = 600;
    for (const auto &c : cases) {
        int n = c[0], zero = c[1], nrhs = 2, lda = n + 1, info = -5, info_l = -6, info_sv = -7;
        std::mt19937 gen(seed++);
        std::vector<double> a = RandomMatrix(n, n, lda, gen), b = RandomMatrix(n, nrhs, n, gen);
        for (int i = 0; i < n; i++) a[static_cast<size_t>(zero) * lda + i] = 0.0;
        std::vector<double> a_l = a, a_sv = a, b_in = b;
        std::vector<int> ipiv(n, -1), ipiv_l(n, -2), ipiv_sv(n, -3);
        ASSERT_EQ(numrpc_call("pdgetrf", n, n, a.data(), lda, ipiv.data(), &info), NUMRPC_OK) << Detail();
        ASSERT_EQ(numrpc_call("pdgesv", n, nrhs, a_sv.data(), lda, ipiv_sv.data(), b.data(), n, &info_sv),
                  NUMRPC_OK)
            << Detail();
        dgetrf_(&n, &n, a_l.data(), &lda, ipiv_l.data(), &info_l);
        ASSERT_EQ(info_l, zero + 1);
        EXPECT_EQ(info, info_l) << "pdgetrf, n " << n;
        EXPECT_EQ(info_sv, info_l) << "pdgesv, n " << n;
        std::vector<int> before(ipiv_l.begin(), ipiv_l.begin() + zero);
        EXPECT_EQ(std::vector<int>(ipiv.begin(), ipiv.begin() + zero), before);
        EXPECT_EQ(std::vector<int>(ipiv_sv.begin(), ipiv_sv.begin() + zero), before);
        EXPECT_EQ(b, b_in) << "pdgesv solved a singular system, n " << n;
    }
}

std::string GridName(const ::testing::TestParamInfo<int> &info)
{
    return kGrids[info.param].name;
}

INSTANTIATE_TEST_SUITE_P(Grids, Routines, ::testing::Range(0, static_cast<int>(std::size(kGrids))), GridName);

// Arguments the engine refuses: the call's error, code and sentence, and
// the job goes on.
TEST(RoutineErrors, RefusedArguments)
{
    UseServer(servers.at(0)->server->address());
    std::vector<double> a(16, 1.0), b(4, 1.0), w(4);
    std::vector<int> ipiv{1, 2, 9, 4};
    int info = 0;
    EXPECT_EQ(numrpc_call("pdgetrs", 'N', 4, 1, a.data(), 4, ipiv.data(), b.data(), 4, &info), NUMRPC_EINVAL);
    EXPECT_TRUE(Contains(Detail(), "pdgetrs: ipiv[2] = 9 is not a row of A (1 to n = 4)")) << Detail();
    EXPECT_EQ(numrpc_call("pdgemm", 'X', 'N', 2, 2, 2, 1.0, a.data(), 4, b.data(), 2, 0.0, w.data(), 2),
              NUMRPC_EINVAL);
    EXPECT_TRUE(Contains(Detail(), "pdgemm: transa = 'X' must be one of 'NTC'")) << Detail();
    EXPECT_EQ(numrpc_call("pdsyev", 'V', 'U', 4, a.data(), 4, w.data(), nullptr, 5, &info), NUMRPC_EINVAL);
    EXPECT_TRUE(Contains(Detail(), "pdsyev: lwork = 5 must be at least max(1, 3*n-1) = 11")) << Detail();
    ExpectPdgesvEqualsDgesv("pdgesv", 33, 2, 35, 34, 700);
}

}  // namespace

int main(int argc, char **argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    ::testing::AddGlobalTestEnvironment(new Servers); /* gtest owns it */
    return RUN_ALL_TESTS();
}
