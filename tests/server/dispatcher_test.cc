// dispatcher_test.cc -- the process model under load: more connections than
// workers, a long call beside short ones, keepalives during a long routine.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "../support/linpack_ref.h"
#include "../support/server_proc.h"
#include "numrpc.h"

namespace {

void UseServer(const ServerProc &s)
{
    std::string addr = s.address();
    numrpc_config cfg{addr.c_str(), 0, nullptr, nullptr};
    ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK);
}

// Solves an n x n system remotely with the one-call linpack and checks the
// residual against the original matrix (O(n^2) on this side).
bool RemoteSolveIsRight(int n, numrpc_call_info *info = nullptr)
{
    std::vector<double> a(static_cast<size_t>(n) * n), orig, b(n), x;
    ref_fill_random(a.data(), n, n, static_cast<unsigned>(n));
    orig = a;
    for (int i = 0; i < n; i++) b[i] = std::sin(0.1 * i);
    x = b;
    std::vector<int> ipvt(n);
    int rinfo = -1;
    if (numrpc_call("linpack", a.data(), n, n, ipvt.data(), x.data(), &rinfo) != NUMRPC_OK) {
        ADD_FAILURE() << numrpc_last_error_detail();
        return false;
    }
    if (info) numrpc_last_call_info(info);
    return rinfo == 0 && ref_residual(orig.data(), n, n, x.data(), b.data()) < 10.0;
}

TEST(Dispatcher, MoreClientsThanWorkersAllGetServed)
{
    // Two workers at most: four clients force connections to change hands.
    ServerProc server({"--workers", "2", "--max-workers", "2"});
    UseServer(server);
    std::atomic<int> good{0}, bad{0};
    std::vector<std::thread> clients;
    for (int t = 0; t < 4; t++)
        clients.emplace_back([&, t] {
            for (int i = 0; i < 100; i++) {
                const int n = 16 + (t * 7 + i) % 32;
                std::vector<double> x(n), y(n, 0.0);
                for (int k = 0; k < n; k++) x[k] = t * 1000 + i + 0.5 * k;
                int rc = numrpc_call("dcopy", n, x.data(), 1, y.data(), 1);
                (rc == NUMRPC_OK && x == y ? good : bad)++;
            }
        });
    for (auto &c : clients) c.join();
    EXPECT_EQ(good.load(), 400);
    EXPECT_EQ(bad.load(), 0);
    EXPECT_TRUE(server.alive());
}

TEST(Dispatcher, LongCallDoesNotStallAnotherConnection)
{
    ServerProc server({"--workers", "2"});
    UseServer(server);
    std::atomic<bool> long_done{false};
    bool long_right = false;
    std::thread long_call([&] {
        long_right = RemoteSolveIsRight(3000);
        long_done = true;
    });
    // Short calls from this thread go through while the long one computes.
    int pings_during = 0;
    for (int i = 0; i < 2000 && !long_done; i++) {
        ASSERT_EQ(numrpc_call("ping"), NUMRPC_OK) << numrpc_last_error_detail();
        if (!long_done) pings_during++;
    }
    long_call.join();
    EXPECT_TRUE(long_right);
    EXPECT_GT(pings_during, 0) << "no short call completed during the long one";
}

TEST(Dispatcher, KeepalivesDuringALongRoutineAreInvisibleToTheCaller)
{
    ServerProc server({"--keepalive-ms", "40"});
    UseServer(server);
    numrpc_call_info info;
    const int n = 2500;
    ASSERT_TRUE(RemoteSolveIsRight(n, &info));
    // The reply's payload: the pivots, the solution, the info scalar, framing.
    const uint64_t reply_floor = static_cast<uint64_t>(n) * 4 + n * 8;
    EXPECT_GE(info.bytes_received, reply_floor);
    // Each keepalive is one 16-byte packet counted in the bytes received.
    if (info.compute_seconds > 0.2) {
        const uint64_t framing = 16 * ((reply_floor + 4079) / 4080) + 64;
        EXPECT_GT(info.bytes_received, reply_floor + framing + 16)
            << "expected keepalive packets during " << info.compute_seconds << " s of compute";
    }
}

}  // namespace
