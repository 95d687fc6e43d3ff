// async_test.cc -- asynchronous calls against real servers: results, the
// wait/probe family on routines the test releases, cancel that stops the
// server's work, time limits, task farming over two servers (one killed
// mid-farm), and many threads calling at once.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <thread>
#include <vector>

#include "async_support.h"
#include "../support/raw_peer.h"
#include "numrpc.h"
#include "protocol.h"
extern "C" {
#include "msg.h"
#include "transport.h"
#include "wire.h"
}

namespace {

void configure(const std::string &servers)
{
    numrpc_config cfg{servers.c_str(), 0, nullptr, nullptr};
    ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK) << numrpc_last_error_detail();
}

class OneServer : public ::testing::Test {
  protected:
    static void SetUpTestSuite()
    {
        dir_ = new AsyncDir();
        server_ = new ServerProc(dir_->server_args(6));
    }
    static void TearDownTestSuite()
    {
        numrpc_finalize();
        delete server_;
        delete dir_;
    }
    void SetUp() override { configure(server_->address()); }
    void TearDown() override
    {
        numrpc_set_timeout(0);
        numrpc_wait_all(); // nothing is left for the next test, pass or fail
    }
    static AsyncDir *dir_;
    static ServerProc *server_;
};
AsyncDir *OneServer::dir_ = nullptr;
ServerProc *OneServer::server_ = nullptr;

TEST_F(OneServer, AsyncResultsAndInfo)
{
    int sums[20], ids[20];
    for (int i = 0; i < 20; i++) {
        sums[i] = -1;
        ASSERT_EQ(numrpc_call_async(&ids[i], "add_int", i, 1000, &sums[i]), NUMRPC_OK)
            << numrpc_last_error_detail();
        ASSERT_GT(ids[i], 0);
    }
    for (int i = 0; i < 20; i++) {
        ASSERT_EQ(numrpc_wait(ids[i]), NUMRPC_OK) << numrpc_last_error_detail();
        EXPECT_EQ(sums[i], i + 1000);
        numrpc_call_info info;
        ASSERT_EQ(numrpc_call_info_of(ids[i], &info), NUMRPC_OK);
        EXPECT_EQ(std::string(info.server), server_->address());
        EXPECT_GT(info.bytes_sent, 0u);
        EXPECT_GT(info.bytes_received, 0u);
        EXPECT_EQ(numrpc_get_error(ids[i]), NUMRPC_OK);
    }
    // A returned call is returned once.
    EXPECT_EQ(numrpc_wait(ids[0]), NUMRPC_EINVAL);
    EXPECT_EQ(numrpc_probe(ids[0]), NUMRPC_EINVAL);
    EXPECT_EQ(numrpc_cancel(ids[0]), NUMRPC_EINVAL);
    EXPECT_EQ(numrpc_get_error(999999), NUMRPC_EINVAL);
    int id = 7;
    EXPECT_EQ(numrpc_wait_any(&id), NUMRPC_EINVAL);
    EXPECT_EQ(id, 0);
    EXPECT_EQ(numrpc_wait_all(), NUMRPC_OK);
}

TEST_F(OneServer, ArgumentsAreBoundBeforeTheCallReturns)
{
    // Wrong arity and unknown routines fail at once, with no id.
    int id = 5, sum = 0;
    EXPECT_EQ(numrpc_call_async(&id, "add_int", 1, &sum), NUMRPC_EINVAL);
    EXPECT_EQ(id, 0);
    EXPECT_NE(std::string(numrpc_last_error_detail()).find("takes 3 arguments"), std::string::npos);
    EXPECT_EQ(numrpc_call_async(&id, "no_such_routine", 1), NUMRPC_ENOENT);
    // The gate's name is copied: the caller's buffer is scribbled on at once.
    std::string gate = dir_->gate("bound");
    std::vector<char> name(gate.begin(), gate.end());
    name.push_back('\0');
    int result = 0;
    ASSERT_EQ(numrpc_call_async(&id, "hold", name.data(), 41, &result), NUMRPC_OK);
    std::fill(name.begin(), name.end() - 1, 'x');
    AsyncDir::release(gate);
    ASSERT_EQ(numrpc_wait(id), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_EQ(result, 42);
    // Tagged arguments are copied too.
    numrpc_arg args[3];
    args[0].type = NUMRPC_T_INT;
    args[0].v.i = 2;
    args[1].type = NUMRPC_T_INT;
    args[1].v.i = 3;
    args[2].type = NUMRPC_T_INT;
    args[2].v.p = &sum;
    ASSERT_EQ(numrpc_callv_async(&id, "add_int", args, 3), NUMRPC_OK);
    args[0].v.i = 100;
    ASSERT_EQ(numrpc_wait(id), NUMRPC_OK);
    EXPECT_EQ(sum, 5);
}

TEST_F(OneServer, WaitAnyReturnsTheReleasedCall)
{
    std::string ga = dir_->gate("any-a"), gb = dir_->gate("any-b");
    int ra = 0, rb = 0, a, b;
    ASSERT_EQ(numrpc_call_async(&a, "hold", ga.c_str(), 1, &ra), NUMRPC_OK);
    ASSERT_EQ(numrpc_call_async(&b, "hold", gb.c_str(), 2, &rb), NUMRPC_OK);
    ASSERT_GT(AsyncDir::started_pid(ga), 0);
    ASSERT_GT(AsyncDir::started_pid(gb), 0);
    EXPECT_EQ(numrpc_probe(a), 0);
    EXPECT_EQ(numrpc_probe(b), 0);
    EXPECT_EQ(numrpc_get_error(b), NUMRPC_EPENDING);
    int which = -1;
    EXPECT_EQ(numrpc_probe_or(std::vector<int>{a, b}.data(), 2, &which), 0);
    EXPECT_EQ(which, 0);
    AsyncDir::release(gb);
    int got = 0;
    ASSERT_EQ(numrpc_wait_any(&got), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_EQ(got, b);
    EXPECT_EQ(rb, 3);
    EXPECT_EQ(ra, 0) << "an output written before its call completed";
    EXPECT_EQ(numrpc_probe(a), 0);
    AsyncDir::release(ga);
    ASSERT_EQ(numrpc_wait(a), NUMRPC_OK);
    EXPECT_EQ(ra, 2);
}

// Cheap calls (ping is CalcOrder 1) pipeline on shared connections, but
// never behind a call that is not cheap: pings started after a held call
// all finish while it is still held.
TEST_F(OneServer, CheapCallsNeverWaitBehindALongOne)
{
    std::string g = dir_->gate("hol");
    int r = 0, held;
    ASSERT_EQ(numrpc_call_async(&held, "hold", g.c_str(), 7, &r), NUMRPC_OK);
    ASSERT_GT(AsyncDir::started_pid(g), 0);
    ASSERT_EQ(numrpc_set_timeout(30), NUMRPC_OK); // a ping stuck behind it fails, not hangs
    std::vector<int> ids(60);
    for (int &id : ids) ASSERT_EQ(numrpc_call_async(&id, "ping"), NUMRPC_OK);
    for (int id : ids) EXPECT_EQ(numrpc_wait(id), NUMRPC_OK) << numrpc_last_error_detail();
    ASSERT_EQ(numrpc_set_timeout(0), NUMRPC_OK);
    EXPECT_EQ(numrpc_probe(held), 0) << "the held call ended before its release";
    AsyncDir::release(g);
    ASSERT_EQ(numrpc_wait(held), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_EQ(r, 8);
}

TEST_F(OneServer, WaitAndWaitOr)
{
    std::string g1 = dir_->gate("or-1"), g2 = dir_->gate("or-2"), g3 = dir_->gate("or-3");
    int r[3] = {0, 0, 0}, ids[3];
    ASSERT_EQ(numrpc_call_async(&ids[0], "hold", g1.c_str(), 10, &r[0]), NUMRPC_OK);
    ASSERT_EQ(numrpc_call_async(&ids[1], "hold", g2.c_str(), 20, &r[1]), NUMRPC_OK);
    ASSERT_EQ(numrpc_call_async(&ids[2], "hold", g3.c_str(), 30, &r[2]), NUMRPC_OK);
    for (const auto &g : {g1, g2, g3}) ASSERT_GT(AsyncDir::started_pid(g), 0);
    AsyncDir::release(g2);
    int got = 0;
    ASSERT_EQ(numrpc_wait_or(ids, 3, &got), NUMRPC_OK);
    EXPECT_EQ(got, ids[1]);
    EXPECT_EQ(r[1], 21);
    // The returned one is gone: a list naming it is refused at once.
    EXPECT_EQ(numrpc_wait_and(ids, 3), NUMRPC_EINVAL);
    EXPECT_EQ(numrpc_wait_or(ids, 0, &got), NUMRPC_EINVAL);
    int rest[2] = {ids[0], ids[2]};
    int which = 0;
    EXPECT_EQ(numrpc_probe_or(rest, 2, &which), 0);
    AsyncDir::release(g1);
    AsyncDir::release(g3);
    ASSERT_EQ(numrpc_wait_and(rest, 2), NUMRPC_OK);
    EXPECT_EQ(r[0], 11);
    EXPECT_EQ(r[2], 31);
}

TEST_F(OneServer, CancelStopsTheWorker)
{
    std::string gate = dir_->gate("cancel");
    int result = -5, id;
    ASSERT_EQ(numrpc_call_async(&id, "hold", gate.c_str(), 1, &result), NUMRPC_OK);
    int pid = AsyncDir::started_pid(gate);
    ASSERT_GT(pid, 0);
    ASSERT_EQ(kill(pid, 0), 0);
    ASSERT_EQ(numrpc_cancel(id), NUMRPC_OK);
    EXPECT_EQ(numrpc_wait(id), NUMRPC_ECANCELLED);
    EXPECT_NE(std::string(numrpc_last_error_detail()).find("cancelled"), std::string::npos)
        << numrpc_last_error_detail();
    EXPECT_EQ(result, -5);
    // The server killed and reaped the worker before it answered.
    errno = 0;
    EXPECT_EQ(kill(pid, 0), -1);
    EXPECT_EQ(errno, ESRCH);
    // The server goes on: blocking and asynchronous calls succeed.
    int sum = 0;
    ASSERT_EQ(numrpc_call("add_int", 2, 2, &sum), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_EQ(sum, 4);
    ASSERT_EQ(numrpc_call_async(&id, "add_int", 3, 3, &sum), NUMRPC_OK);
    ASSERT_EQ(numrpc_wait(id), NUMRPC_OK);
    EXPECT_EQ(sum, 6);
}

// A CANCEL that arrives in the same segment as its CALL was read ahead by
// the worker with the request, where the dispatcher cannot see it: the
// call ran to the server's limit (29 of 6258 cancels in the soak).  Now the
// worker finds it before the routine starts and answers ECANCELLED.
TEST_F(OneServer, ACancelSentWithItsCallStopsItBeforeItStarts)
{
    std::string gate = dir_->gate("cancel-ahead");
    transport_bytes bytes = {nullptr, 0, 0, 1u << 20};
    wire_writer w;
    err_t err;
    ASSERT_EQ(wire_writer_init(&w, -1, 0, &err), 0) << err.detail;
    wire_writer_attach(&w, transport_memory_sink(&bytes));
    msg_hello hello = {PROTO_VERSION, PROTO_DEFAULT_PACKET, "async_test"};
    msg_call_header h = {"hold", 0, 0, 0, 0, 3};
    ASSERT_EQ(msg_write_hello(&w, 1, &hello, &err), 0) << err.detail;
    ASSERT_EQ(msg_write_call_header(&w, 2, &h, &err), 0) << err.detail;
    ASSERT_EQ(wire_put_string(&w, gate.c_str(), &err), 0) << err.detail; // IN string path
    ASSERT_EQ(wire_put_u32(&w, 7, &err), 0) << err.detail;               // IN int value
    ASSERT_EQ(wire_end(&w, &err), 0) << err.detail;
    std::vector<uint8_t> all(bytes.p, bytes.p + bytes.len), cancel = Packet(PROTO_CANCEL, 2, PROTO_FLAG_END, {});
    all.insert(all.end(), cancel.begin(), cancel.end());
    wire_writer_free(&w);
    transport_bytes_free(&bytes);

    int fd = connect_loopback(server_->port());
    ASSERT_GE(fd, 0);
    ASSERT_EQ(send(fd, all.data(), all.size(), MSG_NOSIGNAL), (ssize_t)all.size());
    EXPECT_EQ(ReadReplyStatus(fd), NUMRPC_OK); // the HELLO
    std::string detail;
    EXPECT_EQ(ReadReplyStatus(fd, &detail), NUMRPC_ECANCELLED) << detail;
    EXPECT_NE(detail.find("cancelled"), std::string::npos) << detail;
    struct stat st;
    EXPECT_NE(stat((gate + ".started").c_str(), &st), 0) << "hold started although its call was cancelled";
    // The connection goes on: the next call on it is served.
    close(fd);
    AsyncDir::release(gate);
    int sum = 0;
    ASSERT_EQ(numrpc_call("add_int", 2, 3, &sum), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_EQ(sum, 5);
}

TEST_F(OneServer, TimeoutEndsTheCall)
{
    std::string gate = dir_->gate("timeout");
    int result = 0, id;
    ASSERT_EQ(numrpc_set_timeout(-1), NUMRPC_EINVAL);
    ASSERT_EQ(numrpc_set_timeout(0.3), NUMRPC_OK);
    EXPECT_EQ(numrpc_call("hold", gate.c_str(), 1, &result), NUMRPC_ETIMEDOUT);
    ASSERT_EQ(numrpc_call_async(&id, "hold", gate.c_str(), 1, &result), NUMRPC_OK);
    EXPECT_EQ(numrpc_wait(id), NUMRPC_ETIMEDOUT);
    EXPECT_EQ(result, 0);
    ASSERT_EQ(numrpc_set_timeout(0), NUMRPC_OK);
    int sum = 0;
    ASSERT_EQ(numrpc_call("add_int", 1, 1, &sum), NUMRPC_OK);
    EXPECT_EQ(sum, 2);
}

TEST_F(OneServer, CrashIsReportedNotRetried)
{
    int id;
    ASSERT_EQ(numrpc_call_async(&id, "fail", 1), NUMRPC_OK);
    EXPECT_EQ(numrpc_wait(id), NUMRPC_ECRASHED);
    // "fail crashed: SIGSEGV" ("exit status 1" under AddressSanitizer, which catches the fault)
    EXPECT_NE(std::string(numrpc_last_error_detail()).find("fail crashed: "), std::string::npos)
        << numrpc_last_error_detail();
    ASSERT_EQ(numrpc_call_async(&id, "fail", 2), NUMRPC_OK);
    EXPECT_EQ(numrpc_wait(id), NUMRPC_ECRASHED);
    int sum = 0;
    ASSERT_EQ(numrpc_call_async(&id, "add_int", 5, 5, &sum), NUMRPC_OK);
    EXPECT_EQ(numrpc_wait(id), NUMRPC_OK);
    EXPECT_EQ(sum, 10);
}

TEST_F(OneServer, ManyThreadsBlockingAndAsync)
{
    const int threads = 8, calls = 50;
    std::vector<int> bad(threads, 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++) {
        pool.emplace_back([t, &bad] {
            for (int i = 0; i < calls; i++) {
                int sum = -1;
                if (numrpc_call("add_int", t, i, &sum) != NUMRPC_OK || sum != t + i) bad[t]++;
                if (i % 10 == 0) { // and some asynchronous ones between
                    int id, s2 = -1;
                    if (numrpc_call_async(&id, "add_int", t, -i, &s2) != NUMRPC_OK ||
                        numrpc_wait(id) != NUMRPC_OK || s2 != t - i)
                        bad[t]++;
                }
            }
        });
    }
    for (auto &th : pool) th.join();
    for (int t = 0; t < threads; t++) EXPECT_EQ(bad[t], 0) << "thread " << t;
}

// ---- Task farming over two servers ----

void ref_dgemm(int n, const std::vector<double> &a, const std::vector<double> &b, std::vector<double> &c)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int l = 0; l < n; l++) s += a[i + (size_t)l * n] * b[l + (size_t)j * n];
            c[i + (size_t)j * n] = s;
        }
}

struct Job {
    std::vector<double> a, b, c, want;
    int id = 0;
};

void make_jobs(std::vector<Job> &jobs, int n)
{
    for (size_t j = 0; j < jobs.size(); j++) {
        Job &x = jobs[j];
        x.a.resize((size_t)n * n);
        x.b.resize((size_t)n * n);
        x.c.assign((size_t)n * n, 0.0);
        x.want.resize((size_t)n * n);
        for (size_t i = 0; i < x.a.size(); i++) {
            x.a[i] = std::sin(1.0 + i + 7.0 * j);
            x.b[i] = std::cos(2.0 + i - 3.0 * j);
        }
        ref_dgemm(n, x.a, x.b, x.want);
    }
}

int start_dgemm(Job &x, int n)
{
    return numrpc_call_async(&x.id, "dgemm", 'N', 'N', n, n, n, 1.0, x.a.data(), n, x.b.data(), n, 0.0,
                             x.c.data(), n);
}

void expect_right(const Job &x)
{
    for (size_t i = 0; i < x.c.size(); i++)
        ASSERT_NEAR(x.c[i], x.want[i], 1e-9 * (1 + std::fabs(x.want[i]))) << "element " << i;
}

class TwoServers : public ::testing::Test {
  protected:
    void SetUp() override
    {
        a_.reset(new ServerProc(dir_.server_args(2)));
        b_.reset(new ServerProc(dir_.server_args(2)));
        configure(a_->address() + "," + b_->address());
    }
    void TearDown() override { numrpc_finalize(); }
    AsyncDir dir_;
    std::unique_ptr<ServerProc> a_, b_;
};

TEST_F(TwoServers, FarmSpreadsDgemmOverBoth)
{
    const int n = 96;
    std::vector<Job> jobs(64);
    make_jobs(jobs, n);
    for (auto &x : jobs) ASSERT_EQ(start_dgemm(x, n), NUMRPC_OK) << numrpc_last_error_detail();
    ASSERT_EQ(numrpc_wait_all(), NUMRPC_OK) << numrpc_last_error_detail();
    int on_a = 0, on_b = 0;
    for (auto &x : jobs) {
        expect_right(x);
        numrpc_call_info info;
        ASSERT_EQ(numrpc_call_info_of(x.id, &info), NUMRPC_OK);
        on_a += std::string(info.server) == a_->address();
        on_b += std::string(info.server) == b_->address();
    }
    EXPECT_EQ(on_a + on_b, 64);
    EXPECT_GT(on_a, 0);
    EXPECT_GT(on_b, 0);
    numrpc_server_stats st[4];
    ASSERT_EQ(numrpc_server_stats_get(st, 4), 2);
    for (int i = 0; i < 2; i++) {
        EXPECT_GT(st[i].calls, 0u) << st[i].server;
        EXPECT_GT(st[i].max_in_flight, 1) << st[i].server;
        EXPECT_GE(st[i].cap, 1);
        EXPECT_EQ(st[i].in_flight, 0);
    }
}

TEST_F(TwoServers, KilledServerCallsFinishOnTheOther)
{
    // Half the calls are started (some run, some wait for room under the
    // cap) when one server dies; the rest are started after.
    const int n = 64;
    std::vector<Job> jobs(48);
    make_jobs(jobs, n);
    for (size_t i = 0; i < jobs.size() / 2; i++) ASSERT_EQ(start_dgemm(jobs[i], n), NUMRPC_OK);
    kill(b_->pid(), SIGKILL);
    for (size_t i = jobs.size() / 2; i < jobs.size(); i++) ASSERT_EQ(start_dgemm(jobs[i], n), NUMRPC_OK);
    for (auto &x : jobs) {
        ASSERT_EQ(numrpc_wait(x.id), NUMRPC_OK) << numrpc_last_error_detail();
        expect_right(x);
        numrpc_call_info info;
        ASSERT_EQ(numrpc_call_info_of(x.id, &info), NUMRPC_OK);
    }
    // The farm goes on with the server left.
    int sum = 0, id;
    ASSERT_EQ(numrpc_call_async(&id, "add_int", 20, 22, &sum), NUMRPC_OK);
    ASSERT_EQ(numrpc_wait(id), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_EQ(sum, 42);
}

} // namespace
