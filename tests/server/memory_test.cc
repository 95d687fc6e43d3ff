// memory_test.cc -- the memory a call asks for beyond what it sends: small
// requests cannot make a worker touch more than the untravelled budget, a
// worker gives back what a big call used, one cap holds over all workers,
// and no byte of one caller reaches the next.
#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../stubs/local_lapack.h"
#include "../support/server_proc.h"
#include "../support/test_util.h"
#include "numrpc.h"

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif

constexpr uint64_t kMiB = 1 << 20;


// Bounded wait (a safety bound, not a timing assertion).
bool WaitFor(const std::function<bool()> &cond, int max_ms = 20000)
{
    for (int i = 0; i < max_ms / 5; i++) {
        if (cond()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return cond();
}

// A stub directory serving this tree's modules and the test module memmod.
struct StubDir {
    std::string path;
    StubDir()
    {
        char tmpl[] = "/tmp/numrpc-memory-test-XXXXXX";
        path = mkdtemp(tmpl);
        for (const char *m : {"blas", "lapack"}) Link(TOP_BUILDDIR "/stubs/.libs/" + std::string(m) + ".so");
        Link(TOP_BUILDDIR "/tests/server/.libs/memmod.so");
    }
    void Link(const std::string &target)
    {
        std::string name = path + target.substr(target.rfind('/'));
        if (symlink(target.c_str(), name.c_str()) != 0) perror("symlink");
    }
    ~StubDir()
    {
        std::string cmd = "rm -rf '" + path + "'";
        if (system(cmd.c_str()) != 0) perror("rm");
    }
};

// A server of one worker (unless args say otherwise) on the stub dir.
std::vector<std::string> Args(const StubDir &stubs, std::vector<std::string> more)
{
    std::vector<std::string> args = {"--stubs", stubs.path, "--workers", "1", "--max-workers", "1",
                                     "--admin-socket", "none", "--worker-dir", stubs.path}; // held calls' gates
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

// The server's live workers: its children named numrpc-server (the
// spawner, numrpc-spawner, is a child too).
std::vector<pid_t> Workers(pid_t server)
{
    std::ifstream in("/proc/" + std::to_string(server) + "/task/" + std::to_string(server) + "/children");
    std::vector<pid_t> out;
    for (pid_t p; in >> p;) {
        std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
        std::string line;
        if (std::getline(stat, line) && line.find("(numrpc-server) ") != std::string::npos &&
            line.find(") Z") == std::string::npos)
            out.push_back(p);
    }
    return out;
}

// The one worker of a server started with --workers 1 --max-workers 1.
pid_t OnlyWorker(const ServerProc &server)
{
    std::vector<pid_t> w;
    WaitFor([&] { return (w = Workers(server.pid())).size() == 1; });
    return w.size() == 1 ? w[0] : -1;
}

// A field of /proc/PID/status in KiB (VmRSS, VmHWM); -1 when absent.
long VmKiB(pid_t pid, const std::string &field)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.compare(0, field.size() + 1, field + ":") == 0) return std::stol(line.substr(field.size() + 1));
    return -1;
}

// ---- (a) small requests asking for huge memory ----

// Three CALLs of a few hundred bytes each asking for a GiB or more that no
// request fills: a LAPACK workspace, the gaps of strided vectors, the rows of
// C beyond m.  The server used to map and zero all of it (1 GiB RSS for
// 6 s); now each is refused before anything is allocated or touched.
TEST(Memory, SmallCallsAskingForHugeMemoryAreRefusedBeforeAnyIsTouched)
{
    StubDir stubs;
    ServerProc server(Args(stubs, {}));
    UseServer(server.address());
    ASSERT_EQ(numrpc_call("ping"), NUMRPC_OK) << Detail();
    const pid_t worker = OnlyWorker(server);
    ASSERT_GT(worker, 0);
    const long hwm0 = VmKiB(worker, "VmHWM");

    double a[4] = {4, 1, 1, 3}, b[2] = {1, 2}, one = 1;
    int info = -1;
    EXPECT_EQ(numrpc_call("dgels", 'N', 2, 2, 1, a, 2, b, 2, nullptr, 1 << 27, &info), NUMRPC_ELIMIT);
    EXPECT_TRUE(Contains(Detail(), "dgels: the call asks for 1073741824 bytes of memory that its request does not fill"))
        << Detail();
    EXPECT_TRUE(Contains(Detail(), "--max-untravelled-bytes 67108864")) << Detail();

    // The caller's own strided arrays span as much (calloc: never touched).
    const int inc = 1 << 26, ldc = 1 << 24;
    double *x = static_cast<double *>(calloc(size_t(inc) + 1, sizeof(double)));
    double *y = static_cast<double *>(calloc(size_t(inc) + 1, sizeof(double)));
    double *c = static_cast<double *>(calloc(size_t(ldc) * 8, sizeof(double)));
    ASSERT_TRUE(x && y && c);
    EXPECT_EQ(numrpc_call("dcopy", 2, x, inc, y, inc), NUMRPC_ELIMIT);
    EXPECT_TRUE(Contains(Detail(), "dcopy: the call asks for 1073741824 bytes")) << Detail();
    const std::vector<double> row(8, 1.0);  // B: 1 x 8
    EXPECT_EQ(numrpc_call("dgemm", 'N', 'N', 1, 8, 1, 1.0, &one, 1, row.data(), 1, 0.0, c, ldc), NUMRPC_ELIMIT);
    EXPECT_TRUE(Contains(Detail(), "dgemm: the call asks for 1073741760 bytes")) << Detail();
    free(x);
    free(y);
    free(c);

    // The worker touched none of it: its peak stayed well under the budget.
    const long grown = VmKiB(worker, "VmHWM") - hwm0;
    EXPECT_LT(grown, 64 * 1024) << "KiB";
    printf("[ figures ] worker peak RSS growth over three refused calls: %ld KiB\n", grown);

    // The same worker goes on serving, a real dgels among others.
    int lwork = 64;
    double a_local[4] = {4, 1, 1, 3}, b_local[2] = {1, 2}, work[64];
    std::copy(a_local, a_local + 4, a);
    std::copy(b_local, b_local + 2, b);
    ASSERT_EQ(numrpc_call("dgels", 'N', 2, 2, 1, a, 2, b, 2, nullptr, lwork, &info), NUMRPC_OK) << Detail();
    int m = 2, n = 2, nrhs = 1, info_local = -1;
    dgels_("N", &m, &n, &nrhs, a_local, &m, b_local, &m, work, &lwork, &info_local, 1);
    EXPECT_EQ(info, info_local);
    EXPECT_NEAR(b[0], b_local[0], 1e-14);
    EXPECT_NEAR(b[1], b_local[1], 1e-14);
    EXPECT_EQ(Workers(server.pid()), std::vector<pid_t>{worker});
    numrpc_finalize();
}

// ---- (b) calls within the budget ----

// With a budget of 1 MiB, a call may still ask for 4 times the array bytes
// it sends beyond it: dmmul's C (n x n, out) beside A and B, and dgesvd's U
// and VT beside A.  A workspace of 8 MiB on top is refused.
TEST(Memory, CallsWithinTheBudgetEqualLocalBlasAndLapack)
{
    StubDir stubs;
    ServerProc server(Args(stubs, {"--max-untravelled-bytes", "1M"}));
    UseServer(server.address());

    const int n = 400;  // C: 1.25 MiB, over the budget alone
    std::vector<double> a(n * n), b(n * n), c(n * n, -1), c_local(n * n);
    for (int i = 0; i < n * n; i++) {
        a[i] = (i * 7) % 11 - 5;
        b[i] = (i * 5) % 13 - 6;
    }
    ASSERT_EQ(numrpc_call("dmmul", n, a.data(), b.data(), c.data()), NUMRPC_OK) << Detail();
    const double one = 1, zero = 0;
    dgemm_("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, c_local.data(), &n, 1, 1);
    EXPECT_EQ(c, c_local);  // small integers: exact in any order

    const int m = 200;
    std::vector<double> g(m * m);
    for (int i = 0; i < m * m; i++) g[i] = std::sin(0.37 * i) + (i % (m + 1) == 0 ? 4.0 : 0.0);
    std::vector<double> g_local = g, s(m), s_local(m), u(m * m), vt(m * m), u_local(m * m), vt_local(m * m);
    double query = 0;
    int lwork = -1, info = -1, info_local = -1;
    dgesvd_("A", "A", &m, &m, g_local.data(), &m, s_local.data(), u_local.data(), &m, vt_local.data(), &m, &query,
            &lwork, &info_local, 1, 1);
    lwork = static_cast<int>(query);
    std::vector<double> work(lwork);
    dgesvd_("A", "A", &m, &m, g_local.data(), &m, s_local.data(), u_local.data(), &m, vt_local.data(), &m,
            work.data(), &lwork, &info_local, 1, 1);
    std::vector<double> g_remote = g;
    ASSERT_EQ(numrpc_call("dgesvd", 'A', 'A', m, m, g_remote.data(), m, s.data(), u.data(), m, vt.data(), m,
                          nullptr, lwork, &info),
              NUMRPC_OK)
        << Detail();
    EXPECT_EQ(info, info_local);
    for (int i = 0; i < m; i++) EXPECT_NEAR(s[i], s_local[i], 1e-12 * s_local[0]) << i;

    g_remote = g;
    EXPECT_EQ(numrpc_call("dgesvd", 'A', 'A', m, m, g_remote.data(), m, s.data(), u.data(), m, vt.data(), m,
                          nullptr, 1 << 20, &info),
              NUMRPC_ELIMIT);
    EXPECT_TRUE(Contains(Detail(), "--max-untravelled-bytes 1048576 plus 4 times the 320000 array bytes sent"))
        << Detail();
    numrpc_finalize();
}

// ---- (c) memory given back ----

// A worker used to keep up to 512 MiB of arena after a call, for ever; now
// it gives back everything once idle (2 s), and the heap's free pages too.
TEST(Memory, AWorkerGivesBackWhatABigCallUsed)
{
    StubDir stubs;
    ServerProc server(Args(stubs, {}));
    UseServer(server.address());
    std::vector<double> x(1000, 1.5), y(1000);
    ASSERT_EQ(numrpc_call("dcopy", 1000, x.data(), 1, y.data(), 1), NUMRPC_OK) << Detail();
    const pid_t worker = OnlyWorker(server);
    ASSERT_GT(worker, 0);
    const long rss0 = VmKiB(worker, "VmRSS");

    const int n = 10 << 20;  // 80 MiB each way
    x.resize(n);
    y.assign(n, 0.0);
    for (int i = 0; i < n; i++) x[i] = 0.25 * (i % 1000) - 3;
    ASSERT_EQ(numrpc_call("dcopy", n, x.data(), 1, y.data(), 1), NUMRPC_OK) << Detail();
    EXPECT_EQ(x, y);
    const long peak = VmKiB(worker, "VmHWM") - rss0;
    EXPECT_GT(peak, 160 * 1024) << "the call did use its 160 MiB";
    long rss = 0;
    EXPECT_TRUE(WaitFor([&] { return (rss = VmKiB(worker, "VmRSS")) < rss0 + 16 * 1024; }))
        << "worker RSS " << rss << " KiB, " << rss0 << " KiB before the call";
    printf("[ figures ] worker RSS: %ld KiB before, peak +%ld KiB, %ld KiB once idle\n", rss0, peak, rss);
    numrpc_finalize();
}

// ---- (d) one cap over all workers ----

// The gate file of a held mem_fill call, and the pid of the worker running it.
struct Held {
    std::string gate;
    int rc = -1;
    double sum = 0;
    std::thread caller;
    Held(const std::string &dir, const std::string &name, int n, double value) : gate(dir + "/" + name)
    {
        caller = std::thread([this, n, value] { rc = numrpc_call("mem_fill", gate.c_str(), n, value, nullptr, &sum); });
    }
    ~Held()
    {
        if (caller.joinable()) Release();
    }
    pid_t WorkerPid() const
    {
        pid_t pid = -1;
        WaitFor([&] {
            std::ifstream in(gate + ".started");
            return static_cast<bool>(in >> pid);
        });
        return pid;
    }
    int Release()
    {
        std::ofstream(gate) << "";
        caller.join();
        return rc;
    }
};

TEST(Memory, OneCapHoldsOverAllWorkersAndADeadWorkerGivesItsShareBack)
{
    StubDir stubs;
    ServerProc server(Args(stubs, {"--workers", "2", "--max-workers", "3", "--max-server-memory", "32M"}));
    UseServer(server.address());
    double sum = 0;

    // A call over the cap by itself could never run: ELIMIT.
    EXPECT_EQ(numrpc_call("mem_fill", "", static_cast<int>(40 * kMiB / 8), 1.0, nullptr, &sum), NUMRPC_ELIMIT);
    EXPECT_TRUE(Contains(Detail(), "over this server's limit of 33554432 for all calls together")) << Detail();

    // Two of 20 MiB at once: the second is told to come back later, the
    // first is right.
    const int n20 = static_cast<int>(20 * kMiB / 8);
    {
        Held first(stubs.path, "gate1", n20, 1.0);
        ASSERT_GT(first.WorkerPid(), 0);
        EXPECT_EQ(numrpc_call("mem_fill", "", n20, 2.0, nullptr, &sum), NUMRPC_EBUSY);
        EXPECT_TRUE(Contains(Detail(), "mem_fill: server memory busy: the call needs 20971520 bytes, calls in "
                                       "flight hold 20971520 of the 33554432"))
            << Detail();
        EXPECT_TRUE(Contains(Detail(), "--max-server-memory")) << Detail();
        EXPECT_EQ(first.Release(), NUMRPC_OK) << Detail();
        EXPECT_EQ(first.sum, n20 * 1.0);
    }
    ASSERT_EQ(numrpc_call("mem_fill", "", n20, 2.0, nullptr, &sum), NUMRPC_OK) << Detail();
    EXPECT_EQ(sum, n20 * 2.0);

    // Three of 8 MiB on three workers (two pre-forked, one more); the one
    // killed mid-call is not replaced (two remain), and its 8 MiB must not
    // stay counted: a call of 28 MiB fits once the other two have ended.
    UseServer(server.address());
    const int n8 = static_cast<int>(8 * kMiB / 8);
    Held one(stubs.path, "gate2", n8, 1.0), two(stubs.path, "gate3", n8, 1.0), victim(stubs.path, "gate4", n8, 1.0);
    const pid_t doomed = victim.WorkerPid();
    ASSERT_GT(one.WorkerPid(), 0);
    ASSERT_GT(two.WorkerPid(), 0);
    ASSERT_GT(doomed, 0);
    ASSERT_EQ(kill(doomed, SIGKILL), 0);
    victim.caller.join();
    EXPECT_EQ(victim.rc, NUMRPC_ECRASHED);
    EXPECT_EQ(one.Release(), NUMRPC_OK) << Detail();
    EXPECT_EQ(two.Release(), NUMRPC_OK) << Detail();
    EXPECT_EQ(Workers(server.pid()).size(), 2u);
    const int n28 = static_cast<int>(28 * kMiB / 8);
    EXPECT_EQ(numrpc_call("mem_fill", "", n28, 0.5, nullptr, &sum), NUMRPC_OK) << Detail();
    EXPECT_EQ(sum, n28 * 0.5);
    numrpc_finalize();
}

// The default --max-worker-memory: twice the call bytes allowed, 256 MiB
// per BLAS thread and 1 GiB (ServerProc runs one BLAS thread).
TEST(Memory, WorkersHaveAnAddressSpaceLimitByDefault)
{
    if (kAsan) GTEST_SKIP() << "RLIMIT_AS cannot apply under AddressSanitizer";
    StubDir stubs;
    ServerProc server(Args(stubs, {"--max-call-bytes", "1G"}));
    UseServer(server.address());
    ASSERT_EQ(numrpc_call("ping"), NUMRPC_OK) << Detail();  // the worker has set its limits
    numrpc_finalize();
    const pid_t worker = OnlyWorker(server);
    ASSERT_GT(worker, 0);
    std::ifstream in("/proc/" + std::to_string(worker) + "/limits");
    std::string line, limit;
    while (std::getline(in, line))
        if (line.compare(0, 17, "Max address space") == 0) std::istringstream(line.substr(17)) >> limit;
    EXPECT_EQ(limit, std::to_string((2ull << 30) + (256ull << 20) + (1ull << 30)));
}

// ---- (e) no byte of one caller reaches the next ----

// One caller leaves 42s in its work array and a secret in an array it sent;
// the next caller's work array and the gaps of its strided array, placed on
// the same memory, hold zeros.  Sizes within the kept arena (cleared where
// written), and beyond it (mapped afresh: zero from the kernel).
TEST(Memory, NoByteOfOneCallerReachesTheNext)
{
    StubDir stubs;
    ServerProc server(Args(stubs, {"--max-untravelled-bytes", "256M"}));
    UseServer(server.address());
    for (int n : {1000, 1 << 20, 10 << 20}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        double sum = 0, found = -1;
        ASSERT_EQ(numrpc_call("mem_fill", "", n, 42.0, nullptr, &sum), NUMRPC_OK) << Detail();
        ASSERT_EQ(sum, 42.0 * n);
        // No larger than the call before, so the same mapping serves both.
        std::vector<double> x(n, 0.0);
        ASSERT_EQ(numrpc_call("mem_peek", n / 6, 4, x.data(), nullptr, &found), NUMRPC_OK) << Detail();
        EXPECT_EQ(found, 0.0) << "a work array or gap held what the previous call left";

        std::vector<double> secret(n, -7.0), y(n);
        ASSERT_EQ(numrpc_call("dcopy", n, secret.data(), 1, y.data(), 1), NUMRPC_OK) << Detail();
        ASSERT_EQ(numrpc_call("mem_peek", n / 2, 2, x.data(), nullptr, &found), NUMRPC_OK) << Detail();
        EXPECT_EQ(found, 0.0) << "a gap held another caller's array";
    }
    numrpc_finalize();
}

}  // namespace
