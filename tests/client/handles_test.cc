// handles_test.cc -- data handles end to end against real numrpc-server
// processes: results against local LAPACK/BLAS, bytes that do not travel,
// leases after a client dies, refusals before sending, a dead server's handle.
#include <gtest/gtest.h>

#include <cblas.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "../support/linpack_ref.h"
#include "../support/server_proc.h"
#include "../support/status_probe.h"
extern "C" {
#include "msg.h"
#include "msg_control.h"
}
#include "numrpc.h"

extern "C" {
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda, const int *ipiv,
             double *b, const int *ldb, int *info, size_t trans_len);
}

namespace {

const uint64_t kLeaseMs = 500; // renewed every 167 ms: margin for a loaded machine

// The handles a server keeps now, from its STATUS (UINT64_MAX: no answer).
uint64_t HandlesOn(const ServerProc &s)
{
    msg_status st = StatusOf(s);
    return st.has_handles ? st.handles : UINT64_MAX;
}

// Local LAPACK: the solution of A x = b by dgetrf + dgetrs (A lda x n).
std::vector<double> LocalSolve(std::vector<double> a, int lda, int n, std::vector<double> b)
{
    std::vector<int> ipiv(n);
    int info = 0, one = 1;
    dgetrf_(&n, &n, a.data(), &lda, ipiv.data(), &info);
    dgetrs_("N", &n, &one, a.data(), &lda, ipiv.data(), b.data(), &n, &info, 1);
    return b;
}

void ExpectNear(const std::vector<double> &got, const std::vector<double> &want, double tol)
{
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++)
        ASSERT_LE(std::fabs(got[i] - want[i]), tol * (1 + std::fabs(want[i]))) << "element " << i;
}

class Handles : public ::testing::Test {
  protected:
    static void SetUpTestSuite()
    {
        std::vector<std::string> lease = {"--handle-lease-ms", std::to_string(kLeaseMs)};
        main_ = new ServerProc(lease);
        other_ = new ServerProc(lease);
    }
    static void TearDownTestSuite()
    {
        numrpc_finalize();
        delete main_;
        delete other_;
    }
    // NUMRPC_SERVER is servers (default: the main server only).
    void Use(const std::string &servers)
    {
        numrpc_config cfg{servers.c_str(), 0, nullptr, nullptr, nullptr, nullptr, nullptr};
        ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK) << numrpc_last_error_detail();
    }
    void SetUp() override { Use(main_->address()); }
    static ServerProc *main_, *other_;
};
ServerProc *Handles::main_ = nullptr;
ServerProc *Handles::other_ = nullptr;

TEST_F(Handles, DgefaThenDgeslThroughAHandleSolveAsLocalLapack)
{
    const int n = 120, lda = 123;
    std::vector<double> a(static_cast<size_t>(lda) * n), ref;
    ref_fill_random(a.data(), lda, n, 77u);
    ref = a;
    numrpc_data *h = nullptr;
    numrpc_call_info info;
    ASSERT_EQ(numrpc_data_put(&h, nullptr, NUMRPC_T_DOUBLE, a.data(), n, n, lda), NUMRPC_OK)
        << numrpc_last_error_detail();
    numrpc_last_call_info(&info);
    const uint64_t matrix = static_cast<uint64_t>(n) * n * sizeof(double);
    EXPECT_GE(info.bytes_sent, matrix);              // the matrix goes out once, here
    EXPECT_LT(info.bytes_sent, matrix + 4096);
    EXPECT_EQ(std::string(info.server), main_->address());

    std::vector<int> ipvt(n), ref_ipvt(n);
    int info_code = -1, ref_info = -1;
    ASSERT_EQ(numrpc_call("dgefa", h, lda, n, ipvt.data(), &info_code), NUMRPC_OK) << numrpc_last_error_detail();
    numrpc_last_call_info(&info);
    EXPECT_LT(info.bytes_sent, 1024u) << "the matrix stayed on the server";
    EXPECT_LT(info.bytes_received, 1024u + n * sizeof(int)) << "the factors stayed on the server";
    ref_dgefa(ref.data(), lda, n, ref_ipvt.data(), &ref_info);
    EXPECT_EQ(info_code, ref_info);
    EXPECT_EQ(ipvt, ref_ipvt);

    for (int k = 0; k < 3; k++) {
        std::vector<double> b(n);
        for (int i = 0; i < n; i++) b[i] = std::sin(1.0 + i + k);
        std::vector<double> x = b;
        ASSERT_EQ(numrpc_call("dgesl", h, lda, n, ipvt.data(), x.data(), 0), NUMRPC_OK) << numrpc_last_error_detail();
        numrpc_last_call_info(&info);
        EXPECT_LT(info.bytes_sent, 2048u + n * (sizeof(int) + sizeof(double)));
        std::vector<double> orig(static_cast<size_t>(lda) * n);
        ref_fill_random(orig.data(), lda, n, 77u);
        ExpectNear(x, LocalSolve(orig, lda, n, b), 1e-9);
    }
    // The factors kept on the server are dgefa's.
    std::vector<double> back(static_cast<size_t>(lda) * n, 0.0);
    ASSERT_EQ(numrpc_data_get(h, back.data(), lda), NUMRPC_OK) << numrpc_last_error_detail();
    numrpc_last_call_info(&info);
    EXPECT_GE(info.bytes_received, matrix);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            size_t at = static_cast<size_t>(j) * lda + i;
            ASSERT_NEAR(back[at], ref[at], 1e-10 * (1 + std::fabs(ref[at]))) << i << "," << j;
        }
    EXPECT_EQ(numrpc_data_free(h), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_EQ(HandlesOn(*main_), 0u);
}

TEST_F(Handles, DgetrfThenDgetrsWithBothMatricesInHandles)
{
    const int n = 80, lda = 80, nrhs = 3, ldb = 82;
    std::vector<double> a(static_cast<size_t>(lda) * n), b(static_cast<size_t>(ldb) * nrhs);
    ref_fill_random(a.data(), lda, n, 5u);
    for (size_t i = 0; i < b.size(); i++) b[i] = std::cos(0.3 * static_cast<double>(i));
    numrpc_data *ha = nullptr, *hb = nullptr;
    ASSERT_EQ(numrpc_data_put(&ha, main_->address().c_str(), NUMRPC_T_DOUBLE, a.data(), n, n, lda), NUMRPC_OK);
    ASSERT_EQ(numrpc_data_put(&hb, nullptr, NUMRPC_T_DOUBLE, b.data(), n, nrhs, ldb), NUMRPC_OK);
    std::vector<int> ipiv(n), ref_ipiv(n);
    int info = -1, ref_info = -1;
    ASSERT_EQ(numrpc_call("dgetrf", n, n, ha, lda, ipiv.data(), &info), NUMRPC_OK) << numrpc_last_error_detail();
    ASSERT_EQ(numrpc_call("dgetrs", 'N', n, nrhs, ha, lda, ipiv.data(), hb, ldb, &info), NUMRPC_OK)
        << numrpc_last_error_detail();
    EXPECT_EQ(info, 0);
    std::vector<double> x(b.size(), -1.0), ref_a = a, ref_b = b;
    ASSERT_EQ(numrpc_data_get(hb, x.data(), ldb), NUMRPC_OK) << numrpc_last_error_detail();
    dgetrf_(&n, &n, ref_a.data(), &lda, ref_ipiv.data(), &ref_info);
    dgetrs_("N", &n, &nrhs, ref_a.data(), &lda, ref_ipiv.data(), ref_b.data(), &ldb, &ref_info, 1);
    EXPECT_EQ(ipiv, ref_ipiv);
    for (int j = 0; j < nrhs; j++)
        for (int i = 0; i < n; i++) {
            size_t at = static_cast<size_t>(j) * ldb + i;
            ASSERT_NEAR(x[at], ref_b[at], 1e-10 * (1 + std::fabs(ref_b[at]))) << i << "," << j;
        }
    EXPECT_EQ(numrpc_data_free(ha), NUMRPC_OK);
    EXPECT_EQ(numrpc_data_free(hb), NUMRPC_OK);
}

TEST_F(Handles, DgemmChainKeepsTheProductOnTheServer)
{
    const int n = 64;
    std::vector<double> a(n * n), b(n * n), c(n * n), d(n * n, 0.0);
    for (int i = 0; i < n * n; i++) {
        a[i] = std::sin(0.1 * i);
        b[i] = std::cos(0.07 * i);
    }
    numrpc_data *ha = nullptr, *hb = nullptr, *hc = nullptr;
    ASSERT_EQ(numrpc_data_put(&ha, nullptr, NUMRPC_T_DOUBLE, a.data(), n, n, n), NUMRPC_OK);
    ASSERT_EQ(numrpc_data_put(&hb, nullptr, NUMRPC_T_DOUBLE, b.data(), n, n, n), NUMRPC_OK);
    ASSERT_EQ(numrpc_data_new(&hc, nullptr, NUMRPC_T_DOUBLE, n, n, n), NUMRPC_OK) << numrpc_last_error_detail();
    numrpc_call_info info;
    // C = A * B into the handle, then D = C * B back to the caller.
    ASSERT_EQ(numrpc_call("dgemm", 'N', 'N', n, n, n, 1.0, ha, n, hb, n, 0.0, hc, n), NUMRPC_OK)
        << numrpc_last_error_detail();
    numrpc_last_call_info(&info);
    EXPECT_LT(info.bytes_sent, 1024u);
    EXPECT_LT(info.bytes_received, 1024u);
    ASSERT_EQ(numrpc_call("dgemm", 'N', 'N', n, n, n, 1.0, hc, n, hb, n, 0.0, d.data(), n), NUMRPC_OK)
        << numrpc_last_error_detail();
    numrpc_last_call_info(&info);
    const uint64_t matrix = static_cast<uint64_t>(n) * n * sizeof(double);
    EXPECT_GE(info.bytes_sent, matrix) << "d is inout: it goes out once";
    EXPECT_LT(info.bytes_sent, matrix + 1024);
    EXPECT_GE(info.bytes_received, matrix);
    EXPECT_LT(info.bytes_received, matrix + 1024);
    std::vector<double> want_c(n * n, 0.0), want_d(n * n, 0.0);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0,
                want_c.data(), n);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, want_c.data(), n, b.data(), n, 0.0,
                want_d.data(), n);
    ExpectNear(d, want_d, 1e-12);
    ASSERT_EQ(numrpc_data_get(hc, c.data(), n), NUMRPC_OK);
    ExpectNear(c, want_c, 1e-12);
    for (numrpc_data *h : {ha, hb, hc}) EXPECT_EQ(numrpc_data_free(h), NUMRPC_OK);
}

TEST_F(Handles, WrongTypeOrTooSmallIsRefusedBeforeSending)
{
    const int n = 10;
    std::vector<int> ints(n * n, 3);
    std::vector<double> small(n * n, 2.0);
    numrpc_data *hi = nullptr, *hs = nullptr;
    ASSERT_EQ(numrpc_data_put(&hi, nullptr, NUMRPC_T_INT, ints.data(), n, n, n), NUMRPC_OK);
    ASSERT_EQ(numrpc_data_put(&hs, nullptr, NUMRPC_T_DOUBLE, small.data(), n, n, n), NUMRPC_OK);
    std::vector<int> ipvt(2 * n);
    int info = 0;
    EXPECT_EQ(numrpc_call("dgefa", hi, n, n, ipvt.data(), &info), NUMRPC_EINVAL);
    std::string why = numrpc_last_error_detail();
    EXPECT_NE(why.find("parameter a needs double"), std::string::npos) << why;
    EXPECT_NE(why.find("holds int 10 x 10"), std::string::npos) << why;
    // 20 x 20 (ld 20) does not fit in 10 x 10.
    EXPECT_EQ(numrpc_call("dgefa", hs, 2 * n, 2 * n, ipvt.data(), &info), NUMRPC_EINVAL);
    why = numrpc_last_error_detail();
    EXPECT_NE(why.find("double 20 x 20 (400 elements)"), std::string::npos) << why;
    EXPECT_NE(why.find("double 10 x 10, ld 10 (100 elements)"), std::string::npos) << why;
    EXPECT_NE(why.find("refused before sending"), std::string::npos) << why;
    // Nothing ran: the handle is as it was put.
    std::vector<double> back(n * n, 0.0);
    ASSERT_EQ(numrpc_data_get(hs, back.data(), n), NUMRPC_OK);
    EXPECT_EQ(back, small);
    EXPECT_EQ(numrpc_data_free(hi), NUMRPC_OK);
    EXPECT_EQ(numrpc_data_free(hs), NUMRPC_OK);
    // A freed handle is no handle any more.
    EXPECT_EQ(numrpc_data_get(hs, back.data(), n), NUMRPC_EINVAL);
}

TEST_F(Handles, AsynchronousCallsUseHandlesToo)
{
    const int n = 50;
    std::vector<double> a(n * n), x(n, 1.0);
    ref_fill_random(a.data(), n, n, 9u);
    std::vector<double> orig = a;
    numrpc_data *h = nullptr;
    ASSERT_EQ(numrpc_data_put(&h, nullptr, NUMRPC_T_DOUBLE, a.data(), n, n, n), NUMRPC_OK);
    std::vector<int> ipvt(n);
    int info = -1, id = 0;
    ASSERT_EQ(numrpc_call_async(&id, "dgefa", h, n, n, ipvt.data(), &info), NUMRPC_OK) << numrpc_last_error_detail();
    ASSERT_EQ(numrpc_wait(id), NUMRPC_OK) << numrpc_last_error_detail();
    std::vector<double> b = x;
    ASSERT_EQ(numrpc_call_async(&id, "dgesl", h, n, n, ipvt.data(), x.data(), 0), NUMRPC_OK);
    ASSERT_EQ(numrpc_wait(id), NUMRPC_OK) << numrpc_last_error_detail();
    ExpectNear(x, LocalSolve(orig, n, n, b), 1e-9);
    EXPECT_EQ(numrpc_data_free(h), NUMRPC_OK);
}

TEST_F(Handles, ACallNamingAHandleRunsOnItsServer)
{
    Use(main_->address() + "," + other_->address()); // the main server first
    const int n = 30;
    std::vector<double> a(n * n), x(n, 1.0);
    ref_fill_random(a.data(), n, n, 11u);
    std::vector<double> orig = a, b = x;
    numrpc_data *h = nullptr;
    ASSERT_EQ(numrpc_data_put(&h, other_->address().c_str(), NUMRPC_T_DOUBLE, a.data(), n, n, n), NUMRPC_OK);
    std::vector<int> ipvt(n);
    int info = -1;
    ASSERT_EQ(numrpc_call("dgefa", h, n, n, ipvt.data(), &info), NUMRPC_OK) << numrpc_last_error_detail();
    numrpc_call_info ci;
    numrpc_last_call_info(&ci);
    EXPECT_EQ(std::string(ci.server), other_->address());
    ASSERT_EQ(numrpc_call("dgesl", h, n, n, ipvt.data(), x.data(), 0), NUMRPC_OK) << numrpc_last_error_detail();
    ExpectNear(x, LocalSolve(orig, n, n, b), 1e-9);
    // A URL naming the other server is refused before sending.
    std::string url = "numrpc://" + main_->address() + "/dgesl";
    EXPECT_EQ(numrpc_call(url.c_str(), h, n, n, ipvt.data(), x.data(), 0), NUMRPC_EINVAL);
    EXPECT_NE(std::string(numrpc_last_error_detail()).find("the call goes to " + main_->address()), std::string::npos)
        << numrpc_last_error_detail();
    // Handles on two servers in one call: the IN vector would move to the
    // matrix's server, which fetches from no server (no --pull-from);
    // handle_moves_test covers the move.
    numrpc_data *h2 = nullptr;
    ASSERT_EQ(numrpc_data_put(&h2, main_->address().c_str(), NUMRPC_T_INT, ipvt.data(), n, 1, n), NUMRPC_OK);
    EXPECT_EQ(numrpc_call("dgesl", h, n, n, h2, x.data(), 0), NUMRPC_EAUTH);
    EXPECT_NE(std::string(numrpc_last_error_detail()).find("--pull-from (none)"), std::string::npos)
        << numrpc_last_error_detail();
    EXPECT_EQ(numrpc_data_free(h), NUMRPC_OK);
    EXPECT_EQ(numrpc_data_free(h2), NUMRPC_OK);
}

TEST_F(Handles, AKilledClientsHandleExpiresALivingClientsIsRenewed)
{
    ASSERT_EQ(HandlesOn(*main_), 0u);
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) { // puts a handle, says so, and waits to be killed
        close(ready[0]);
        double v[16] = {1};
        numrpc_data *h = nullptr;
        char ok = numrpc_data_put(&h, main_->address().c_str(), NUMRPC_T_DOUBLE, v, 16, 1, 16) == NUMRPC_OK;
        if (write(ready[1], &ok, 1) != 1) _exit(1);
        for (;;) pause();
    }
    close(ready[1]);
    char ok = 0;
    ASSERT_EQ(read(ready[0], &ok, 1), 1);
    close(ready[0]);
    ASSERT_EQ(ok, 1);
    std::vector<double> mine(100);
    for (int i = 0; i < 100; i++) mine[i] = i;
    numrpc_data *h = nullptr;
    ASSERT_EQ(numrpc_data_put(&h, nullptr, NUMRPC_T_DOUBLE, mine.data(), 10, 10, 10), NUMRPC_OK);
    EXPECT_EQ(HandlesOn(*main_), 2u);
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    // Past several leases: the dead client's handle is gone, ours lives.
    uint64_t left = 2;
    for (int i = 0; i < 40 && left != 1; i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(kLeaseMs / 2));
        left = HandlesOn(*main_);
    }
    EXPECT_EQ(left, 1u);
    std::this_thread::sleep_for(std::chrono::milliseconds(4 * kLeaseMs));
    std::vector<double> back(100, -1);
    ASSERT_EQ(numrpc_data_get(h, back.data(), 10), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_EQ(back, mine);
    EXPECT_EQ(numrpc_data_free(h), NUMRPC_OK);
    EXPECT_EQ(HandlesOn(*main_), 0u);
}

TEST_F(Handles, FinalizeFreesTheProcesssHandlesOnTheirServers)
{
    std::vector<float> v(64, 1.5f);
    numrpc_data *h1 = nullptr, *h2 = nullptr;
    ASSERT_EQ(numrpc_data_put(&h1, nullptr, NUMRPC_T_FLOAT, v.data(), 8, 8, 8), NUMRPC_OK);
    ASSERT_EQ(numrpc_data_put(&h2, other_->address().c_str(), NUMRPC_T_FLOAT, v.data(), 64, 1, 64), NUMRPC_OK);
    EXPECT_EQ(HandlesOn(*main_), 1u);
    EXPECT_EQ(HandlesOn(*other_), 1u);
    numrpc_finalize();
    EXPECT_EQ(HandlesOn(*main_), 0u);
    EXPECT_EQ(HandlesOn(*other_), 0u);
    EXPECT_EQ(numrpc_data_get(h1, v.data(), 8), NUMRPC_EINVAL); // no handle any more
}

TEST_F(Handles, AKilledServersHandleIsAClearErrorNotRetriedElsewhere)
{
    ServerProc doomed;
    Use(main_->address());
    const int n = 8;
    std::vector<double> a(n * n), x(n, 1.0);
    ref_fill_random(a.data(), n, n, 3u);
    numrpc_data *h = nullptr;
    ASSERT_EQ(numrpc_data_put(&h, doomed.address().c_str(), NUMRPC_T_DOUBLE, a.data(), n, n, n), NUMRPC_OK);
    kill(doomed.pid(), SIGKILL);
    doomed.stop(); // reaps it
    std::vector<int> ipvt(n, 0);
    int info = 0;
    // Run on the main server it would be NUMRPC_ENOHANDLE; it goes nowhere.
    int rc = numrpc_call("dgefa", h, n, n, ipvt.data(), &info);
    EXPECT_TRUE(rc == NUMRPC_ECONNECT || rc == NUMRPC_EIO) << numrpc_errname(rc);
    std::string why = numrpc_last_error_detail();
    EXPECT_NE(why.find("handle "), std::string::npos) << why;
    EXPECT_NE(why.find(" on " + doomed.address()), std::string::npos) << why;
    EXPECT_EQ(numrpc_data_free(h), NUMRPC_ECONNECT); // freed here all the same
    EXPECT_EQ(numrpc_data_get(h, a.data(), n), NUMRPC_EINVAL);
}

} // namespace
