// each_test.cc -- group calls (numrpc_call_each): one call on every server
// of a group at once, over a list with a dead server and over the servers
// a metaserver lists; each server's outputs in its own copy.
#include <gtest/gtest.h>
#include <cblas.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../support/meta_proc.h"
#include "../support/server_proc.h"
#include "numrpc.h"

namespace {

const std::string kMeta = TOP_BUILDDIR "/metaserver/numrpc-metaserver";

// A port nothing listens on: bound, never listened, closed at the end.
class DeadPort {
  public:
    DeadPort()
    {
        fd_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (bind(fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0 &&
            getsockname(fd_, reinterpret_cast<sockaddr *>(&a), &len) == 0)
            port_ = ntohs(a.sin_port);
    }
    ~DeadPort() { close(fd_); }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  private:
    int fd_ = -1, port_ = 0;
};

// y := alpha*A*x + beta*y, on a fixed m x n problem.
struct Gemv {
    int m = 5, n = 4;
    std::vector<double> a, x, y0;
    Gemv()
    {
        for (int i = 0; i < m * n; i++) a.push_back(0.25 * i - 1.0);
        for (int i = 0; i < n; i++) x.push_back(1.0 + i);
        for (int i = 0; i < m; i++) y0.push_back(2.0 - i);
    }
    std::vector<double> Local() const
    {
        std::vector<double> y = y0;
        cblas_dgemv(CblasColMajor, CblasNoTrans, m, n, 1.5, a.data(), m, x.data(), 1, 0.5, y.data(), 1);
        return y;
    }
};

class Each : public ::testing::Test {
  protected:
    static void SetUpTestSuite()
    {
        one_ = new ServerProc({"--workers", "1"});
        two_ = new ServerProc({"--workers", "1"});
    }
    static void TearDownTestSuite()
    {
        numrpc_finalize();
        delete one_;
        delete two_;
    }
    static ServerProc *one_, *two_;
};
ServerProc *Each::one_ = nullptr, *Each::two_ = nullptr;

TEST_F(Each, ThreeServersOneDead)
{
    DeadPort dead;
    Gemv g;
    std::vector<double> y = g.y0, want = g.Local();
    std::string group = one_->address() + "," + dead.address() + "," + two_->address();
    numrpc_each each[4];
    int count = 0;
    int rc = numrpc_call_each(group.c_str(), each, 4, &count, "dgemv", 'N', g.m, g.n, 1.5, g.a.data(), g.m,
                              g.x.data(), 1, 0.5, y.data(), 1);
    EXPECT_EQ(rc, NUMRPC_ECONNECT) << numrpc_last_error_detail();
    ASSERT_EQ(count, 3);
    EXPECT_EQ(each[0].server, one_->address());
    EXPECT_EQ(each[1].server, dead.address());
    EXPECT_EQ(each[2].server, two_->address());
    for (int i : {0, 2}) {
        EXPECT_EQ(each[i].status, NUMRPC_OK) << each[i].detail;
        EXPECT_GT(each[i].seconds, 0.0);
        ASSERT_EQ(each[i].nout, 11);
        for (int p = 0; p < 11; p++) EXPECT_EQ(each[i].out[p] == nullptr, p != 9) << p;  // only y is copied
        EXPECT_EQ(each[i].out_bytes[9], g.m * sizeof(double));
        const double *mine = static_cast<const double *>(each[i].out[9]);
        for (int r = 0; r < g.m; r++) EXPECT_DOUBLE_EQ(mine[r], want[r]) << "server " << i << " row " << r;
    }
    EXPECT_NE(each[0].out[9], each[2].out[9]);  // each server its own copy
    EXPECT_EQ(each[1].status, NUMRPC_ECONNECT);
    EXPECT_NE(std::string(each[1].detail).find(dead.address()), std::string::npos) << each[1].detail;
    EXPECT_NE(std::string(numrpc_last_error_detail()).find(dead.address()), std::string::npos);
    // The caller's inout y holds the first successful server's results.
    for (int r = 0; r < g.m; r++) EXPECT_DOUBLE_EQ(y[r], want[r]) << r;
    numrpc_each_free(each, count);
}

TEST_F(Each, AllServersSucceedAndMaxBoundsTheGroup)
{
    std::vector<double> x = {1, 2, 3, 4}, want = x;
    cblas_dscal(4, -2.0, want.data(), 1);
    std::string group = one_->address() + "," + two_->address();
    numrpc_each each[1];
    int count = 0;
    ASSERT_EQ(numrpc_call_each(group.c_str(), each, 1, &count, "dscal", 4, -2.0, x.data(), 1), NUMRPC_OK)
        << numrpc_last_error_detail();
    ASSERT_EQ(count, 1);  // max 1: the first server only
    EXPECT_EQ(x, want);
    numrpc_each_free(each, count);
    // A wrongly typed argument is refused naming it, before anything is sent.
    std::vector<float> xf = {1, 2};
    EXPECT_EQ(numrpc_call_each(group.c_str(), each, 1, &count, "dscal", 2, -2.0, xf.data(), 1), NUMRPC_EINVAL);
    numrpc_each_free(each, count);
}

TEST(EachMeta, TheMetaserversServersAreTheGroup)
{
    Proc meta({kMeta, "--port", "0", "--bind", "127.0.0.1", "--allow-insecure", "--quiet"});
    ASSERT_GT(meta.port(), 0);
    std::string where = "127.0.0.1:" + std::to_string(meta.port());
    ServerProc a({"--workers", "1", "--metaserver", where}), b({"--workers", "1", "--metaserver", where});
    setenv("NUMRPC_METASERVER", where.c_str(), 1);
    unsetenv("NUMRPC_SERVER");
    numrpc_finalize();
    ASSERT_EQ(numrpc_init(nullptr), NUMRPC_OK);
    std::vector<double> x = {1, 2, 3}, want = x;
    cblas_dscal(3, 3.0, want.data(), 1);
    numrpc_each each[8];
    int count = 0, rc = NUMRPC_ENOENT;
    // Until both have joined (a bound on the wait, not a timing check).
    for (int i = 0; i < 100; i++) {
        std::vector<double> y = x;
        rc = numrpc_call_each(nullptr, each, 8, &count, "dscal", 3, 3.0, y.data(), 1);
        if (rc == NUMRPC_OK && count == 2) break;
        if (rc == NUMRPC_OK || rc == NUMRPC_ENOENT) numrpc_each_free(each, count);
        count = 0;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_EQ(rc, NUMRPC_OK) << numrpc_last_error_detail();
    ASSERT_EQ(count, 2);
    std::vector<std::string> got = {each[0].server, each[1].server};
    std::sort(got.begin(), got.end());
    std::vector<std::string> expected = {a.address(), b.address()};
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(got, expected);
    for (int i = 0; i < 2; i++) {
        const double *mine = static_cast<const double *>(each[i].out[2]);
        for (int k = 0; k < 3; k++) EXPECT_DOUBLE_EQ(mine[k], want[k]);
    }
    numrpc_each_free(each, count);
    numrpc_finalize();
    unsetenv("NUMRPC_METASERVER");
}

}  // namespace
