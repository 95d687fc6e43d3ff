// failover_test.cc -- a blocking call with two servers listed moves on
// from one that fails before any reply byte reached the caller's memory
// (killed mid-call, refusing), and only from such a one: results that
// began to land are never sent again, and a crash is reported.
#include <cblas.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../async/async_support.h"
#include "../support/raw_peer.h"
#include "../support/status_probe.h"
#include "../support/test_util.h"
#include "hostile_peer.h"
#include "numrpc.h"
extern "C" {
#include "msg.h"
#include "msg_control.h"
}

namespace {

class Failover : public ::testing::Test {
  protected:
    void TearDown() override { numrpc_finalize(); }
    AsyncDir dir_; // blas, linpack and asyncmod (hold, fail)
};

// The first server is killed (dispatcher and worker) while hold() runs on
// it: the call completes on the second with its result, and says where.
TEST_F(Failover, ServerKilledMidCallCompletesOnTheNext)
{
    ServerProc a(dir_.server_args(2)), b(dir_.server_args(2));
    UseServer(a.address() + "," + b.address());
    std::string gate = dir_.gate("killed");
    int result = 0, rc = -1;
    numrpc_call_info info{};
    std::thread caller([&] {
        rc = numrpc_call("hold", gate.c_str(), 41, &result);
        numrpc_last_call_info(&info); // the calling thread's
    });
    int worker = AsyncDir::started_pid(gate); // hold() runs on a
    ASSERT_GT(worker, 0);
    unlink((gate + ".started").c_str());
    kill(a.pid(), SIGKILL);
    kill(worker, SIGKILL);
    a.stop();
    AsyncDir::release(gate); // b's hold() returns at once
    caller.join();
    ASSERT_EQ(rc, NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_EQ(result, 42);
    EXPECT_EQ(std::string(info.server), b.address());
    EXPECT_EQ(CallsOf(b.port(), "hold"), 1);
}

// A server at its connection limit refuses (EBUSY): the call runs on the
// next, and matches local BLAS; when the next cannot be reached either,
// the error names each server's failure.
TEST_F(Failover, RefusingServerIsPassedAndEveryFailureIsNamed)
{
    ServerProc a({"--max-connections", "1"}), b;
    int held = connect_loopback(a.port()); // a's one connection
    ASSERT_GE(held, 0);
    ASSERT_TRUE(SendHello(held));
    ASSERT_EQ(ReadReplyStatus(held), NUMRPC_OK);
    UseServer(a.address() + "," + b.address());
    const int n = 1000;
    std::vector<double> x(n), want(n);
    for (int i = 0; i < n; i++) x[i] = want[i] = 1.0 / (i + 1) - 0.25;
    cblas_dscal(n, -1.5, want.data(), 1);
    ASSERT_EQ(numrpc_call("dscal", n, -1.5, x.data(), 1), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_EQ(x, want);
    numrpc_call_info info;
    ASSERT_EQ(numrpc_last_call_info(&info), NUMRPC_OK);
    EXPECT_EQ(std::string(info.server), b.address());

    std::string gone = "127.0.0.1:" + std::to_string(b.port());
    b.stop(); // nothing listens there now
    UseServer(a.address() + "," + gone);
    EXPECT_EQ(numrpc_call("dscal", n, -1.5, x.data(), 1), NUMRPC_ECONNECT);
    std::string detail = numrpc_last_error_detail();
    EXPECT_TRUE(Contains(detail, "dscal: every server failed: ")) << detail;
    EXPECT_TRUE(Contains(detail, a.address() + ": server at its connection limit")) << detail;
    EXPECT_TRUE(Contains(detail, "cannot connect to " + gone)) << detail;
    close(held);
}

// A worker that crashes is the call's outcome on that server: reported
// with the server named, never run again on the next.
TEST_F(Failover, CrashIsReportedNotRetried)
{
    ServerProc a(dir_.server_args(2)), b(dir_.server_args(2));
    UseServer(a.address() + "," + b.address());
    EXPECT_EQ(numrpc_call("fail", 1), NUMRPC_ECRASHED);
    std::string detail = numrpc_last_error_detail();
    EXPECT_EQ(detail.find(a.address() + ": fail crashed: "), 0u) << detail;
    EXPECT_EQ(CallsOf(a.port(), "fail"), 1);
    EXPECT_EQ(CallsOf(b.port(), "fail"), 0);
    numrpc_finalize(); // its pooled connections closed, a stops at once
}

// The first server answers dscal's INOUT array in part, then hangs up:
// the caller's array already holds what arrived, so the call is reported,
// not sent to the second server.
TEST_F(Failover, InoutArrayHalfReceivedIsNeverResent)
{
    ServerProc b;
    HostileServer first;
    std::vector<uint8_t> blob = FetchDescriptor(b.port(), "dscal");
    ASSERT_FALSE(blob.empty());
    first.Offer("dscal", blob);
    const int n = 1 << 17; // 1 MiB of doubles: some packets go out whole
    first.OnCall([](msg_conn *c, uint32_t id) {
        err_t err;
        msg_call_result res = {0, 0, 0};
        std::vector<double> half(n / 2, 999.0);
        msg_reply_begin(&c->writer, id, NUMRPC_OK, "", &err);
        msg_write_call_result(&c->writer, &res, &err);
        wire_put_u64(&c->writer, n, &err); // x's element count, then half of them
        for (double v : half) wire_put_double(&c->writer, v, &err);
        shutdown(c->tp.fd, SHUT_RDWR);
    });
    UseServer(first.address() + "," + b.address());
    std::vector<double> x(n, 1.0);
    EXPECT_EQ(numrpc_call("dscal", n, 3.0, x.data(), 1), NUMRPC_EIO);
    std::string detail = numrpc_last_error_detail();
    EXPECT_EQ(detail.find(first.address() + ": "), 0u) << detail;
    EXPECT_TRUE(Contains(detail, "results had begun to arrive in the caller's memory: not resent")) << detail;
    EXPECT_EQ(x[0], 999.0); // what landed before the server left
    EXPECT_EQ(first.Calls().size(), 1u);
    EXPECT_EQ(CallsOf(b.port(), "dscal"), 0);
}

} // namespace
