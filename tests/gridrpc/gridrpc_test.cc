// gridrpc_test.cc -- GridRPC conformance (modelled on the GridRPC
// interoperability tests) against real servers, and the example program.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "../async/async_support.h"
#include "numrpc_gridrpc.h"

extern "C" void dgemm_(const char *transa, const char *transb, const int *m, const int *n,
                       const int *k, const double *alpha, const double *a, const int *lda,
                       const double *b, const int *ldb, const double *beta, double *c,
                       const int *ldc, size_t transa_len, size_t transb_len);

namespace {

AsyncDir *dir_ = nullptr;
ServerProc *one_ = nullptr, *two_ = nullptr;
std::string config_one, config_two, config_both;

// A port nothing listens on (bound, then closed).
int dead_port()
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(fd, (sockaddr *)&a, sizeof a) != 0 || getsockname(fd, (sockaddr *)&a, &len) != 0) abort();
    close(fd);
    return ntohs(a.sin_port);
}

std::string write_file(const std::string &name, const std::string &text)
{
    std::string path = dir_->gate(name);
    std::ofstream(path) << text;
    return path;
}

class Env : public ::testing::Environment {
  public:
    void SetUp() override
    {
        dir_ = new AsyncDir();
        one_ = new ServerProc(dir_->server_args(8));
        two_ = new ServerProc(dir_->server_args(8));
        config_one = write_file("one.conf", "# the first server\nservers = " + one_->address() + "\n");
        config_two = write_file("two.conf", "servers = " + two_->address() + "\n");
        config_both = write_file("both.conf", "servers = " + one_->address() + "," + two_->address() +
                                                  "\npacket_size = 8192\n");
    }
    void TearDown() override
    {
        numrpc_finalize();
        delete one_;
        delete two_;
        delete dir_;
    }
};
::testing::Environment *const env = ::testing::AddGlobalTestEnvironment(new Env);

// Every test starts and ends outside initialize..finalize.
class Grpc : public ::testing::Test {
  protected:
    void TearDown() override
    {
        if (grpc_finalize() == GRPC_NO_ERROR) grpc_set_timeout_np(0);
        numrpc_set_timeout(0);
    }
    static void init(const std::string &config = config_one)
    {
        ASSERT_EQ(grpc_initialize(config.c_str()), GRPC_NO_ERROR) << grpc_last_error_detail_np();
    }
    // Polls until session id is complete (no clock: bounded by the hold's own limit).
    static bool completes(grpc_sessionid_t id)
    {
        for (int i = 0; i < 200000; i++) {
            grpc_error_t e = grpc_probe(id);
            if (e == GRPC_NO_ERROR) return true;
            if (e != GRPC_NOT_COMPLETED) return false;
            std::this_thread::yield();
            if (i > 1000) std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        return false;
    }
    static std::string detail() { return grpc_last_error_detail_np(); }
};

// ---- Initializing and finalizing ----

TEST_F(Grpc, InitializeTwiceAndFinalize)
{
    init();
    EXPECT_EQ(grpc_initialize(config_one.c_str()), GRPC_ALREADY_INITIALIZED);
    EXPECT_EQ(grpc_get_last_error(), GRPC_ALREADY_INITIALIZED);
    EXPECT_EQ(grpc_finalize(), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_get_last_error(), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_finalize(), GRPC_NOT_INITIALIZED);
    init(); // again after finalize
}

TEST_F(Grpc, ConfigurationFiles)
{
    EXPECT_EQ(grpc_initialize(dir_->gate("missing.conf").c_str()), GRPC_CONFIGFILE_NOT_FOUND);
    EXPECT_NE(detail().find("missing.conf"), std::string::npos) << detail();
    std::string bad = write_file("bad.conf", "servers = " + one_->address() + "\ncolour = blue\n");
    EXPECT_EQ(grpc_initialize(bad.c_str()), GRPC_CONFIGFILE_ERROR);
    EXPECT_NE(detail().find("bad.conf:2: unknown setting \"colour\""), std::string::npos) << detail();
    std::string noeq = write_file("noeq.conf", "servers\n");
    EXPECT_EQ(grpc_initialize(noeq.c_str()), GRPC_CONFIGFILE_ERROR);
    EXPECT_NE(detail().find("noeq.conf:1: want name = value"), std::string::npos) << detail();
    std::string badhost = write_file("badhost.conf", "servers = nocolon\n");
    EXPECT_EQ(grpc_initialize(badhost.c_str()), GRPC_CONFIGFILE_ERROR);
    EXPECT_NE(detail().find("\"nocolon\" is not host:port"), std::string::npos) << detail();
    std::string badnum = write_file("badnum.conf", "timeout = soon\n");
    EXPECT_EQ(grpc_initialize(badnum.c_str()), GRPC_CONFIGFILE_ERROR);
    // A failed initialize leaves the library uninitialised.
    EXPECT_EQ(grpc_finalize(), GRPC_NOT_INITIALIZED);
    // NULL: the servers already configured (here by the last good file).
    init(config_two);
    ASSERT_EQ(grpc_finalize(), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_initialize(nullptr), GRPC_NO_ERROR);
    grpc_function_handle_t h;
    ASSERT_EQ(grpc_function_handle_default(&h, "add_int"), GRPC_NO_ERROR) << detail();
    grpc_sessionid_t id;
    int sum = 0;
    ASSERT_EQ(grpc_call_async(&h, &id, 20, 22, &sum), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_wait(id), GRPC_NO_ERROR);
    EXPECT_EQ(sum, 42);
    grpc_session_info_np info;
    ASSERT_EQ(grpc_session_info_get_np(id, &info), GRPC_NO_ERROR);
    EXPECT_EQ(std::string(info.server), two_->address());
}

TEST_F(Grpc, EveryFunctionBeforeInitialize)
{
    grpc_function_handle_t h, *hp = nullptr;
    memset(&h, 0xa5, sizeof h);
    grpc_sessionid_t id = GRPC_SESSIONID_VOID, ids[2] = {1, 2};
    int x = 1, y = 0;
    grpc_session_info_np info;
    EXPECT_EQ(grpc_finalize(), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_function_handle_default(&h, "add_int"), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_function_handle_init(&h, one_->address().c_str(), "add_int"), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_function_handle_destruct(&h), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_get_handle(&hp, id), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_call(&h, x, x, &y), GRPC_NOT_INITIALIZED);
    EXPECT_EQ((grpc_call)(&h, x, x, &y), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_call_async(&h, &id, x, x, &y), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(id, GRPC_SESSIONID_VOID);
    EXPECT_EQ(grpc_probe(id), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_probe_or(ids, 2, &id), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_cancel(id), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_cancel_all(), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_wait(id), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_wait_and(ids, 2), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_wait_or(ids, 2, &id), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_wait_all(), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_wait_any(&id), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_get_error(id), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_get_failed_sessionid(&id), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_session_info_get_np(1, &info), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_set_timeout_np(1), GRPC_NOT_INITIALIZED);
    grpc_arg_stack_t *st = grpc_arg_stack_new_np(3);
    ASSERT_NE(st, nullptr); // stacks need no initialisation
    EXPECT_EQ(grpc_call_arg_stack_np(&h, st), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_call_arg_stack_async_np(&h, &id, st), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_arg_stack_destruct_np(st), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_get_last_error(), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_wait_all(), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_get_last_error(), GRPC_NOT_INITIALIZED);
    EXPECT_NE(detail().find("grpc_initialize"), std::string::npos) << detail();
}

// ---- Function handles ----

TEST_F(Grpc, HandlesBindAndFail)
{
    init();
    grpc_function_handle_t d, i, bad;
    ASSERT_EQ(grpc_function_handle_default(&d, "add_int"), GRPC_NO_ERROR) << detail();
    ASSERT_EQ(grpc_function_handle_init(&i, two_->address().c_str(), "add_int"), GRPC_NO_ERROR)
        << detail();
    int sum = 0;
    ASSERT_EQ(grpc_call(&i, 5, 6, &sum), GRPC_NO_ERROR) << detail();
    EXPECT_EQ(sum, 11);
    // The pinned handle runs every session on its server.
    grpc_sessionid_t ids[4];
    int sums[4];
    for (int k = 0; k < 4; k++) ASSERT_EQ(grpc_call_async(&i, &ids[k], k, 1, &sums[k]), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_wait_and(ids, 4), GRPC_NO_ERROR);
    for (int k = 0; k < 4; k++) {
        EXPECT_EQ(sums[k], k + 1);
        grpc_session_info_np info;
        ASSERT_EQ(grpc_session_info_get_np(ids[k], &info), GRPC_NO_ERROR);
        EXPECT_EQ(std::string(info.server), two_->address());
        EXPECT_EQ(info.complete, 1);
        EXPECT_EQ(info.error, GRPC_NO_ERROR);
        EXPECT_GT(info.bytes_sent, 0u);
        EXPECT_GT(info.bytes_received, 0u);
        EXPECT_GT(info.total_seconds, 0.0);
    }
    std::string dead = "127.0.0.1:" + std::to_string(dead_port());
    EXPECT_EQ(grpc_function_handle_init(&bad, dead.c_str(), "add_int"), GRPC_SERVER_NOT_FOUND);
    EXPECT_EQ(grpc_function_handle_init(&bad, "nocolon", "add_int"), GRPC_SERVER_NOT_FOUND);
    EXPECT_EQ(grpc_function_handle_init(&bad, nullptr, "add_int"), GRPC_SERVER_NOT_FOUND);
    EXPECT_EQ(grpc_function_handle_init(&bad, one_->address().c_str(), "no_such_routine"),
              GRPC_FUNCTION_NOT_FOUND);
    EXPECT_NE(detail().find("no_such_routine"), std::string::npos) << detail();
    EXPECT_EQ(grpc_function_handle_default(&bad, "no_such_routine"), GRPC_FUNCTION_NOT_FOUND);
    EXPECT_EQ(grpc_function_handle_default(&bad, nullptr), GRPC_FUNCTION_NOT_FOUND);
    EXPECT_EQ(grpc_function_handle_default(nullptr, "add_int"), GRPC_INVALID_FUNCTION_HANDLE);
    // Never initialised, NULL, destructed: the same clear error everywhere.
    memset(&bad, 0x5a, sizeof bad);
    grpc_sessionid_t id = 77;
    EXPECT_EQ(grpc_call(&bad, 1, 2, &sum), GRPC_INVALID_FUNCTION_HANDLE);
    EXPECT_EQ(grpc_call_async(&bad, &id, 1, 2, &sum), GRPC_INVALID_FUNCTION_HANDLE);
    EXPECT_EQ(id, GRPC_SESSIONID_VOID);
    EXPECT_EQ(grpc_call(nullptr, 1, 2, &sum), GRPC_INVALID_FUNCTION_HANDLE);
    EXPECT_EQ(grpc_function_handle_destruct(&bad), GRPC_INVALID_FUNCTION_HANDLE);
    EXPECT_EQ(grpc_function_handle_destruct(&i), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_function_handle_destruct(&i), GRPC_INVALID_FUNCTION_HANDLE);
    EXPECT_EQ(grpc_call(&i, 1, 2, &sum), GRPC_INVALID_FUNCTION_HANDLE);
    EXPECT_EQ(grpc_function_handle_destruct(&d), GRPC_NO_ERROR);
}

TEST_F(Grpc, GetHandleGivesTheSessionsHandle)
{
    init();
    grpc_function_handle_t h, *back = nullptr;
    ASSERT_EQ(grpc_function_handle_default(&h, "add_int"), GRPC_NO_ERROR);
    grpc_sessionid_t id;
    int sum = 0;
    ASSERT_EQ(grpc_call_async(&h, &id, 3, 4, &sum), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_get_handle(&back, id), GRPC_NO_ERROR);
    EXPECT_EQ(back, &h);
    ASSERT_EQ(grpc_wait(id), GRPC_NO_ERROR);
    EXPECT_EQ(sum, 7);
    back = nullptr;
    ASSERT_EQ(grpc_get_handle(&back, id), GRPC_NO_ERROR); // still known once returned
    ASSERT_EQ(back, &h);
    ASSERT_EQ(grpc_call_async(back, &id, 10, 4, &sum), GRPC_NO_ERROR); // and usable
    ASSERT_EQ(grpc_wait(id), GRPC_NO_ERROR);
    EXPECT_EQ(sum, 14);
    EXPECT_EQ(grpc_get_handle(&back, GRPC_SESSIONID_VOID), GRPC_INVALID_SESSION_ID);
    EXPECT_EQ(grpc_get_handle(&back, 987654321), GRPC_INVALID_SESSION_ID);
}

// ---- Calls ----

TEST_F(Grpc, CallsWithPlainCValues)
{
    init();
    grpc_function_handle_t add, scale, mm;
    ASSERT_EQ(grpc_function_handle_default(&add, "add_int"), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_function_handle_default(&scale, "scale"), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_function_handle_default(&mm, "dmmul"), GRPC_NO_ERROR);
    int sum = 0, pid = 0;
    ASSERT_EQ(grpc_call(&add, -8, 50, &sum), GRPC_NO_ERROR);
    EXPECT_EQ(sum, 42);
    // An int scalar, a double scalar by value, an INOUT array, an OUT scalar.
    std::vector<double> x = {1, -2, 3.5, 0.25};
    ASSERT_EQ(grpc_call(&scale, 4, 2.0, x.data(), &pid), GRPC_NO_ERROR) << detail();
    EXPECT_EQ(x, (std::vector<double>{2, -4, 7, 0.5}));
    EXPECT_GT(pid, 0);
    // The plain function (no argument count) reads as many as the interface says.
    ASSERT_EQ((grpc_call)(&add, 1, 2, &sum), GRPC_NO_ERROR);
    EXPECT_EQ(sum, 3);
    grpc_sessionid_t id;
    ASSERT_EQ((grpc_call_async)(&add, &id, 2, 2, &sum), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_wait(id), GRPC_NO_ERROR);
    EXPECT_EQ(sum, 4);
    // A wrong count is refused before any argument is read.
    sum = -1;
    EXPECT_EQ(grpc_call(&add, 1, &sum), GRPC_OTHER_ERROR_CODE);
    EXPECT_EQ(detail(), "add_int takes 3 arguments, 2 given");
    id = 5;
    EXPECT_EQ(grpc_call_async(&add, &id, 1, 2, 3, &sum), GRPC_OTHER_ERROR_CODE);
    EXPECT_EQ(detail(), "add_int takes 3 arguments, 4 given");
    EXPECT_EQ(id, GRPC_SESSIONID_VOID);
    EXPECT_EQ(grpc_call_async(&add, nullptr, 1, 2, &sum), GRPC_OTHER_ERROR_CODE);
    EXPECT_EQ(sum, -1);
    // Bad input is the server's or the binder's clear error, not a crash.
    EXPECT_EQ(grpc_call(&scale, 4, 2.0, (double *)nullptr, &pid), GRPC_OTHER_ERROR_CODE);
    EXPECT_NE(detail().find("array x is NULL"), std::string::npos) << detail();
    // dmmul against the local BLAS, blocking and asynchronous.
    const int n = 40;
    std::vector<double> a(n * n), b(n * n), c(n * n, 0), c2(n * n, 0), ref(n * n);
    for (int k = 0; k < n * n; k++) {
        a[k] = std::sin(k + 1.0);
        b[k] = std::cos(k * 0.5);
    }
    const double one = 1, zero = 0;
    dgemm_("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, ref.data(), &n, 1, 1);
    ASSERT_EQ(grpc_call(&mm, n, a.data(), b.data(), c.data()), GRPC_NO_ERROR) << detail();
    ASSERT_EQ(grpc_call_async(&mm, &id, n, a.data(), b.data(), c2.data()), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_wait(id), GRPC_NO_ERROR);
    for (int k = 0; k < n * n; k++) {
        ASSERT_NEAR(c[k], ref[k], 1e-12) << k;
        ASSERT_NEAR(c2[k], ref[k], 1e-12) << k;
    }
}

TEST_F(Grpc, ServicesThatCrashOrExit)
{
    init();
    grpc_function_handle_t fail, add;
    ASSERT_EQ(grpc_function_handle_default(&fail, "fail"), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_function_handle_default(&add, "add_int"), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_call(&fail, 1), GRPC_OTHER_ERROR_CODE);
    EXPECT_NE(detail().find("crash"), std::string::npos) << detail();
    EXPECT_EQ(grpc_call(&fail, 2), GRPC_OTHER_ERROR_CODE);
    EXPECT_FALSE(detail().empty());
    EXPECT_EQ(grpc_call(&fail, 0), GRPC_NO_ERROR); // the service itself can succeed
    // The server lives on.
    int sum = 0;
    ASSERT_EQ(grpc_call(&add, 1, 1, &sum), GRPC_NO_ERROR);
    EXPECT_EQ(sum, 2);
}

TEST_F(Grpc, ServerThatRefusesTheCall)
{
    // One connection at most: while a held call keeps it, any other is refused.
    std::vector<std::string> args = dir_->server_args(2);
    args.insert(args.end(), {"--max-connections", "1"});
    ServerProc busy(args);
    init();
    grpc_function_handle_t hold, add, late;
    ASSERT_EQ(grpc_function_handle_init(&hold, busy.address().c_str(), "hold"), GRPC_NO_ERROR) << detail();
    ASSERT_EQ(grpc_function_handle_init(&add, busy.address().c_str(), "add_int"), GRPC_NO_ERROR) << detail();
    std::string gate = dir_->gate("refuse");
    int result = 0;
    grpc_error_t held = GRPC_OTHER_ERROR_CODE;
    std::thread holder([&] { held = grpc_call(&hold, gate.c_str(), 1, &result); });
    ASSERT_GT(AsyncDir::started_pid(gate), 0); // the one connection is in use
    int sum = 0;
    EXPECT_EQ(grpc_call(&add, 1, 2, &sum), GRPC_RPC_REFUSED);
    EXPECT_NE(detail().find("connection limit"), std::string::npos) << detail();
    EXPECT_EQ(grpc_function_handle_init(&late, busy.address().c_str(), "scale"), GRPC_RPC_REFUSED);
    AsyncDir::release(gate);
    holder.join();
    EXPECT_EQ(held, GRPC_NO_ERROR);
    EXPECT_EQ(result, 2);
    ASSERT_EQ(grpc_call(&add, 1, 2, &sum), GRPC_NO_ERROR) << detail(); // served again
    EXPECT_EQ(sum, 3);
    ASSERT_EQ(grpc_finalize(), GRPC_NO_ERROR);
}

TEST_F(Grpc, ServerLostOrNeverThere)
{
    // No configured server answers: the default handle finds none.
    std::string nobody = write_file("nobody.conf", "servers = 127.0.0.1:" + std::to_string(dead_port()) + "\n");
    init(nobody);
    grpc_function_handle_t h;
    EXPECT_EQ(grpc_function_handle_default(&h, "add_int"), GRPC_SERVER_NOT_FOUND);
    ASSERT_EQ(grpc_finalize(), GRPC_NO_ERROR);
    // A server killed while it runs a blocking call and a session.
    ServerProc doomed(dir_->server_args(3));
    init();
    grpc_function_handle_t hold;
    ASSERT_EQ(grpc_function_handle_init(&hold, doomed.address().c_str(), "hold"), GRPC_NO_ERROR);
    std::string g1 = dir_->gate("lost1"), g2 = dir_->gate("lost2");
    int r1 = 0, r2 = 0;
    grpc_sessionid_t id;
    ASSERT_EQ(grpc_call_async(&hold, &id, g2.c_str(), 1, &r2), GRPC_NO_ERROR);
    grpc_error_t blocking = GRPC_NO_ERROR;
    std::thread caller([&] { blocking = grpc_call(&hold, g1.c_str(), 1, &r1); });
    int w1 = AsyncDir::started_pid(g1), w2 = AsyncDir::started_pid(g2);
    ASSERT_GT(w1, 0);
    ASSERT_GT(w2, 0);
    // The whole server goes: the dispatcher first, then its workers (they
    // hold the connections).
    kill(doomed.pid(), SIGKILL);
    siginfo_t gone{};
    ASSERT_EQ(waitid(P_PID, (id_t)doomed.pid(), &gone, WEXITED | WNOWAIT), 0); // left for stop() to reap
    kill(w1, SIGKILL);
    kill(w2, SIGKILL);
    caller.join();
    EXPECT_EQ(blocking, GRPC_COMMUNICATION_FAILED);
    EXPECT_EQ(grpc_wait(id), GRPC_SESSION_FAILED);
    EXPECT_EQ(grpc_get_error(id), GRPC_COMMUNICATION_FAILED);
    EXPECT_EQ(r1, 0);
    EXPECT_EQ(r2, 0);
}

// ---- Waiting and probing on services held until the test releases them ----

TEST_F(Grpc, WaitOrReturnsTheReleasedSessionOnce)
{
    init();
    grpc_function_handle_t hold;
    ASSERT_EQ(grpc_function_handle_default(&hold, "hold"), GRPC_NO_ERROR);
    std::string gates[3] = {dir_->gate("or0"), dir_->gate("or1"), dir_->gate("or2")};
    int results[3] = {0, 0, 0};
    grpc_sessionid_t ids[3], got = 0;
    for (int k = 0; k < 3; k++)
        ASSERT_EQ(grpc_call_async(&hold, &ids[k], gates[k].c_str(), 10 * k, &results[k]), GRPC_NO_ERROR);
    for (int k = 0; k < 3; k++) ASSERT_GT(AsyncDir::started_pid(gates[k]), 0);
    // Nothing released: probes say so, with the void id.
    EXPECT_EQ(grpc_probe(ids[1]), GRPC_NOT_COMPLETED);
    EXPECT_EQ(grpc_probe_or(ids, 3, &got), GRPC_NONE_COMPLETED);
    EXPECT_EQ(got, GRPC_SESSIONID_VOID);
    EXPECT_EQ(grpc_get_error(ids[1]), GRPC_NO_ERROR); // running, no error so far
    AsyncDir::release(gates[1]);
    ASSERT_TRUE(completes(ids[1]));
    EXPECT_EQ(grpc_probe(ids[0]), GRPC_NOT_COMPLETED);
    EXPECT_EQ(grpc_probe_or(ids, 3, &got), GRPC_NO_ERROR);
    EXPECT_EQ(got, ids[1]);
    got = 0;
    ASSERT_EQ(grpc_wait_or(ids, 3, &got), GRPC_NO_ERROR);
    EXPECT_EQ(got, ids[1]);
    EXPECT_EQ(results[1], 11);
    // Returned once: no wait, probe or cancel takes it again.
    EXPECT_EQ(grpc_wait(ids[1]), GRPC_INVALID_SESSION_ID);
    EXPECT_EQ(grpc_probe(ids[1]), GRPC_INVALID_SESSION_ID);
    EXPECT_EQ(grpc_cancel(ids[1]), GRPC_INVALID_SESSION_ID);
    EXPECT_EQ(grpc_wait_or(ids, 3, &got), GRPC_INVALID_SESSION_ID);
    EXPECT_EQ(grpc_get_error(ids[1]), GRPC_NO_ERROR);
    // The other two, in the order the test releases them.
    grpc_sessionid_t rest[2] = {ids[0], ids[2]};
    AsyncDir::release(gates[2]);
    ASSERT_EQ(grpc_wait_or(rest, 2, &got), GRPC_NO_ERROR);
    EXPECT_EQ(got, ids[2]);
    EXPECT_EQ(results[2], 21);
    EXPECT_EQ(results[0], 0); // untouched until its session completes
    AsyncDir::release(gates[0]);
    ASSERT_EQ(grpc_wait_or(rest, 1, &got), GRPC_NO_ERROR);
    EXPECT_EQ(got, ids[0]);
    EXPECT_EQ(results[0], 1);
}

TEST_F(Grpc, WaitAnyAndWaitAllAndWaitAnd)
{
    init();
    grpc_function_handle_t hold;
    ASSERT_EQ(grpc_function_handle_default(&hold, "hold"), GRPC_NO_ERROR);
    std::string g[4];
    int r[4] = {0, 0, 0, 0};
    grpc_sessionid_t ids[4], got;
    for (int k = 0; k < 4; k++) {
        g[k] = dir_->gate("any" + std::to_string(k));
        ASSERT_EQ(grpc_call_async(&hold, &ids[k], g[k].c_str(), k, &r[k]), GRPC_NO_ERROR);
    }
    AsyncDir::release(g[3]);
    ASSERT_EQ(grpc_wait_any(&got), GRPC_NO_ERROR);
    EXPECT_EQ(got, ids[3]);
    EXPECT_EQ(r[3], 4);
    AsyncDir::release(g[0]);
    ASSERT_EQ(grpc_wait_any(&got), GRPC_NO_ERROR);
    EXPECT_EQ(got, ids[0]);
    // wait_and with an id already returned: nothing is waited for.
    grpc_sessionid_t mixed[2] = {ids[1], ids[3]};
    EXPECT_EQ(grpc_wait_and(mixed, 2), GRPC_INVALID_SESSION_ID);
    EXPECT_EQ(grpc_probe(ids[1]), GRPC_NOT_COMPLETED);
    grpc_sessionid_t bad[2] = {ids[1], GRPC_SESSIONID_VOID};
    EXPECT_EQ(grpc_wait_and(bad, 2), GRPC_INVALID_SESSION_ID);
    EXPECT_EQ(grpc_wait_or(bad, 2, &got), GRPC_INVALID_SESSION_ID);
    EXPECT_EQ(grpc_probe_or(bad, 2, &got), GRPC_INVALID_SESSION_ID);
    AsyncDir::release(g[1]);
    AsyncDir::release(g[2]);
    ASSERT_EQ(grpc_wait_all(), GRPC_NO_ERROR);
    EXPECT_EQ(r[1], 2);
    EXPECT_EQ(r[2], 3);
    EXPECT_EQ(grpc_wait_all(), GRPC_NO_ERROR); // nothing left: nothing to wait for
    EXPECT_EQ(grpc_wait_any(&got), GRPC_INVALID_SESSION_ID);
    EXPECT_EQ(got, GRPC_SESSIONID_VOID);
    // wait_and proper.
    for (int k = 0; k < 3; k++) {
        g[k] = dir_->gate("and" + std::to_string(k));
        ASSERT_EQ(grpc_call_async(&hold, &ids[k], g[k].c_str(), 100 + k, &r[k]), GRPC_NO_ERROR);
    }
    for (int k = 2; k >= 0; k--) AsyncDir::release(g[k]);
    ASSERT_EQ(grpc_wait_and(ids, 3), GRPC_NO_ERROR);
    for (int k = 0; k < 3; k++) EXPECT_EQ(r[k], 101 + k);
    EXPECT_EQ(grpc_wait_and(ids, 0), GRPC_NO_ERROR);
}

TEST_F(Grpc, InvalidSessionIds)
{
    init();
    grpc_sessionid_t none = GRPC_SESSIONID_VOID, far = 987654321, got = 3;
    for (grpc_sessionid_t id : {none, far, 0}) {
        EXPECT_EQ(grpc_wait(id), GRPC_INVALID_SESSION_ID);
        EXPECT_EQ(grpc_probe(id), GRPC_INVALID_SESSION_ID);
        EXPECT_EQ(grpc_cancel(id), GRPC_INVALID_SESSION_ID);
        EXPECT_EQ(grpc_get_error(id), GRPC_INVALID_SESSION_ID);
        EXPECT_EQ(grpc_wait_and(&id, 1), GRPC_INVALID_SESSION_ID);
        EXPECT_EQ(grpc_wait_or(&id, 1, &got), GRPC_INVALID_SESSION_ID);
        EXPECT_EQ(grpc_probe_or(&id, 1, &got), GRPC_INVALID_SESSION_ID);
        grpc_session_info_np info;
        EXPECT_EQ(grpc_session_info_get_np(id, &info), GRPC_INVALID_SESSION_ID);
    }
    EXPECT_EQ(grpc_get_last_error(), GRPC_INVALID_SESSION_ID);
    EXPECT_EQ(grpc_probe_or(&none, 0, &got), GRPC_NONE_COMPLETED);
    EXPECT_EQ(got, GRPC_SESSIONID_VOID);
    EXPECT_EQ(grpc_wait_or(&none, 0, &got), GRPC_OTHER_ERROR_CODE);
    EXPECT_EQ(grpc_wait_any(nullptr), GRPC_OTHER_ERROR_CODE);
    EXPECT_EQ(grpc_get_failed_sessionid(nullptr), GRPC_OTHER_ERROR_CODE);
}

// ---- Cancel ----

TEST_F(Grpc, CancelIsNotBlockingAndStopsTheWork)
{
    init();
    grpc_function_handle_t hold, add;
    ASSERT_EQ(grpc_function_handle_default(&hold, "hold"), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_function_handle_default(&add, "add_int"), GRPC_NO_ERROR);
    std::string gate = dir_->gate("cancel");
    int result = -5;
    grpc_sessionid_t id, failed;
    ASSERT_EQ(grpc_call_async(&hold, &id, gate.c_str(), 1, &result), GRPC_NO_ERROR);
    int pid = AsyncDir::started_pid(gate);
    ASSERT_GT(pid, 0);
    // The gate is never released: cancel returning at all shows it does not wait.
    ASSERT_EQ(grpc_cancel(id), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_wait(id), GRPC_SESSION_FAILED);
    EXPECT_EQ(grpc_get_error(id), GRPC_CANCELED_NP);
    EXPECT_NE(detail().find("cancel"), std::string::npos) << detail();
    EXPECT_EQ(result, -5);
    errno = 0;
    EXPECT_EQ(kill(pid, 0), -1); // the server killed the worker
    EXPECT_EQ(errno, ESRCH);
    ASSERT_EQ(grpc_get_failed_sessionid(&failed), GRPC_NO_ERROR);
    EXPECT_EQ(failed, id);
    ASSERT_EQ(grpc_get_failed_sessionid(&failed), GRPC_NO_ERROR);
    EXPECT_EQ(failed, GRPC_SESSIONID_VOID);
    int sum = 0;
    ASSERT_EQ(grpc_call(&add, 2, 3, &sum), GRPC_NO_ERROR);
    EXPECT_EQ(sum, 5);
    // A complete session is not changed by a cancel.
    ASSERT_EQ(grpc_call_async(&add, &id, 4, 4, &sum), GRPC_NO_ERROR);
    ASSERT_TRUE(completes(id));
    EXPECT_EQ(grpc_cancel(id), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_wait(id), GRPC_NO_ERROR);
    EXPECT_EQ(sum, 8);
}

TEST_F(Grpc, CancelAllThenWaitAll)
{
    init();
    grpc_function_handle_t hold;
    ASSERT_EQ(grpc_function_handle_default(&hold, "hold"), GRPC_NO_ERROR);
    std::set<grpc_sessionid_t> started, popped;
    int r[3];
    for (int k = 0; k < 3; k++) {
        grpc_sessionid_t id;
        std::string gate = dir_->gate("all" + std::to_string(k));
        ASSERT_EQ(grpc_call_async(&hold, &id, gate.c_str(), k, &r[k]), GRPC_NO_ERROR);
        ASSERT_GT(AsyncDir::started_pid(gate), 0);
        started.insert(id);
    }
    ASSERT_EQ(grpc_cancel_all(), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_wait_all(), GRPC_SESSION_FAILED);
    for (grpc_sessionid_t id : started) EXPECT_EQ(grpc_get_error(id), GRPC_CANCELED_NP);
    for (;;) {
        grpc_sessionid_t id;
        ASSERT_EQ(grpc_get_failed_sessionid(&id), GRPC_NO_ERROR);
        if (id == GRPC_SESSIONID_VOID) break;
        EXPECT_TRUE(popped.insert(id).second) << "popped twice: " << id;
    }
    EXPECT_EQ(popped, started);
    EXPECT_EQ(grpc_cancel_all(), GRPC_NO_ERROR); // nothing in progress
}

// ---- Failed sessions and error reporting ----

TEST_F(Grpc, FailedSessionsArePoppedOncePerCall)
{
    init();
    grpc_function_handle_t fail, add;
    ASSERT_EQ(grpc_function_handle_default(&fail, "fail"), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_function_handle_default(&add, "add_int"), GRPC_NO_ERROR);
    grpc_sessionid_t crash, exits, ok, id;
    int sum = 0;
    ASSERT_EQ(grpc_call_async(&fail, &crash, 1), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_call_async(&add, &ok, 1, 2, &sum), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_call_async(&fail, &exits, 2), GRPC_NO_ERROR);
    // No failure reported yet: nothing to pop.
    ASSERT_EQ(grpc_get_failed_sessionid(&id), GRPC_NO_ERROR);
    EXPECT_EQ(id, GRPC_SESSIONID_VOID);
    EXPECT_EQ(grpc_wait_all(), GRPC_SESSION_FAILED);
    EXPECT_EQ(grpc_get_last_error(), GRPC_SESSION_FAILED);
    EXPECT_EQ(sum, 3);
    EXPECT_EQ(grpc_get_error(ok), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_get_error(crash), GRPC_OTHER_ERROR_CODE);
    EXPECT_EQ(grpc_get_error(exits), GRPC_OTHER_ERROR_CODE);
    grpc_session_info_np info;
    ASSERT_EQ(grpc_session_info_get_np(crash, &info), GRPC_NO_ERROR);
    EXPECT_EQ(info.numrpc_error, NUMRPC_ECRASHED);
    std::set<grpc_sessionid_t> popped;
    for (int k = 0; k < 2; k++) {
        ASSERT_EQ(grpc_get_failed_sessionid(&id), GRPC_NO_ERROR);
        popped.insert(id);
    }
    EXPECT_EQ(popped, (std::set<grpc_sessionid_t>{crash, exits}));
    ASSERT_EQ(grpc_get_failed_sessionid(&id), GRPC_NO_ERROR);
    EXPECT_EQ(id, GRPC_SESSIONID_VOID);
    // A single wait reports its failure too; the oldest is popped first.
    grpc_sessionid_t f1, f2;
    ASSERT_EQ(grpc_call_async(&fail, &f1, 1), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_call_async(&fail, &f2, 1), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_wait(f2), GRPC_SESSION_FAILED);
    EXPECT_EQ(grpc_wait(f1), GRPC_SESSION_FAILED);
    ASSERT_EQ(grpc_get_failed_sessionid(&id), GRPC_NO_ERROR);
    EXPECT_EQ(id, f2);
    ASSERT_EQ(grpc_get_failed_sessionid(&id), GRPC_NO_ERROR);
    EXPECT_EQ(id, f1);
    ASSERT_EQ(grpc_get_failed_sessionid(&id), GRPC_NO_ERROR);
    EXPECT_EQ(id, GRPC_SESSIONID_VOID);
}

TEST_F(Grpc, ErrorStrings)
{
    std::set<std::string> seen;
    for (int code = GRPC_NO_ERROR; code <= GRPC_LAST_ERROR_CODE; code++) {
        const char *s = grpc_error_string(code);
        ASSERT_NE(s, nullptr);
        EXPECT_TRUE(seen.insert(s).second) << "duplicate text for " << code << ": " << s;
    }
    for (int code : {GRPC_CANCELED_NP, GRPC_TIMEOUT_NP, GRPC_INVALID_DATA_NP}) EXPECT_TRUE(seen.insert(grpc_error_string(code)).second);
    const char *unknown = grpc_error_string(GRPC_UNKNOWN_ERROR_CODE);
    EXPECT_STREQ(unknown, "GridRPC unknown error code");
    for (int code : {-1, 17, 99, 103, 1000}) EXPECT_EQ(grpc_error_string(code), unknown) << code;
    EXPECT_STREQ(grpc_error_string(GRPC_NO_ERROR), "GridRPC success");
    EXPECT_STREQ(grpc_error_string(GRPC_SESSION_FAILED), "GridRPC session failed (grpc_get_error tells why)");
    // grpc_perror: the thread's last error with its detail.
    EXPECT_EQ(grpc_wait(1), GRPC_NOT_INITIALIZED);
    testing::internal::CaptureStderr();
    grpc_perror("here");
    EXPECT_EQ(testing::internal::GetCapturedStderr(),
              "here: GridRPC is not initialized (call grpc_initialize first) (grpc_wait: call "
              "grpc_initialize first)\n");
}

TEST_F(Grpc, TimeoutEndsTheSession)
{
    init();
    grpc_function_handle_t hold;
    ASSERT_EQ(grpc_function_handle_default(&hold, "hold"), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_set_timeout_np(-1), GRPC_OTHER_ERROR_CODE);
    ASSERT_EQ(grpc_set_timeout_np(0.3), GRPC_NO_ERROR);
    int result = 0;
    grpc_sessionid_t id;
    EXPECT_EQ(grpc_call(&hold, dir_->gate("never").c_str(), 1, &result), GRPC_TIMEOUT_NP);
    ASSERT_EQ(grpc_call_async(&hold, &id, dir_->gate("never").c_str(), 1, &result), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_wait(id), GRPC_SESSION_FAILED);
    EXPECT_EQ(grpc_get_error(id), GRPC_TIMEOUT_NP);
    EXPECT_EQ(result, 0);
}

// ---- Argument stacks ----

TEST_F(Grpc, ArgumentStacks)
{
    init();
    grpc_function_handle_t add, mm, hold;
    ASSERT_EQ(grpc_function_handle_default(&add, "add_int"), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_function_handle_default(&mm, "dmmul"), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_function_handle_default(&hold, "hold"), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_arg_stack_new_np(-1), nullptr);
    grpc_arg_stack_t *st = grpc_arg_stack_new_np(4);
    ASSERT_NE(st, nullptr);
    int a = 30, b = 12, sum = 0;
    ASSERT_EQ(grpc_arg_stack_push_arg_np(st, &a), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_arg_stack_push_arg_np(st, &b), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_call_arg_stack_np(&add, st), GRPC_OTHER_ERROR_CODE);
    EXPECT_EQ(detail(), "add_int takes 3 arguments, the stack holds 2");
    ASSERT_EQ(grpc_arg_stack_push_arg_np(st, &sum), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_call_arg_stack_np(&add, st), GRPC_NO_ERROR) << detail();
    EXPECT_EQ(sum, 42);
    // In scalars are copied at the start: changing them afterwards is fine.
    grpc_sessionid_t id;
    ASSERT_EQ(grpc_call_arg_stack_async_np(&add, &id, st), GRPC_NO_ERROR);
    a = 1000;
    ASSERT_EQ(grpc_wait(id), GRPC_NO_ERROR);
    EXPECT_EQ(sum, 42);
    // Pop gives the last pushed; full and empty stacks.
    EXPECT_EQ(grpc_arg_stack_pop_arg_np(st), (void *)&sum);
    ASSERT_EQ(grpc_arg_stack_push_arg_np(st, nullptr), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_call_arg_stack_np(&add, st), GRPC_OTHER_ERROR_CODE); // an OUT scalar needs a pointer
    ASSERT_EQ(grpc_arg_stack_push_arg_np(st, &sum), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_arg_stack_push_arg_np(st, &sum), GRPC_OTHER_ERROR_CODE);
    EXPECT_EQ(detail(), "grpc_arg_stack_push_arg_np: the stack is full (4)");
    for (int k = 0; k < 4; k++) EXPECT_NE(grpc_arg_stack_pop_arg_np(st), (void *)1);
    EXPECT_EQ(grpc_arg_stack_pop_arg_np(st), nullptr);
    // A scalar of mode in pushed as NULL.
    ASSERT_EQ(grpc_arg_stack_push_arg_np(st, nullptr), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_arg_stack_push_arg_np(st, &b), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_arg_stack_push_arg_np(st, &sum), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_call_arg_stack_np(&add, st), GRPC_OTHER_ERROR_CODE);
    EXPECT_NE(detail().find("argument 1 is a scalar"), std::string::npos) << detail();
    ASSERT_EQ(grpc_arg_stack_destruct_np(st), GRPC_NO_ERROR);
    // A string is pushed as itself; dmmul's arrays as pointers.
    st = grpc_arg_stack_new_np(4);
    std::string gate = dir_->gate("stack");
    int value = 7, result = 0;
    ASSERT_EQ(grpc_arg_stack_push_arg_np(st, (void *)gate.c_str()), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_arg_stack_push_arg_np(st, &value), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_arg_stack_push_arg_np(st, &result), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_call_arg_stack_async_np(&hold, &id, st), GRPC_NO_ERROR);
    AsyncDir::release(gate);
    ASSERT_EQ(grpc_wait(id), GRPC_NO_ERROR);
    EXPECT_EQ(result, 8);
    ASSERT_EQ(grpc_arg_stack_destruct_np(st), GRPC_NO_ERROR);
    const int n = 16;
    std::vector<double> A(n * n), B(n * n), C(n * n), ref(n * n);
    for (int k = 0; k < n * n; k++) {
        A[k] = k % 7 - 3;
        B[k] = k % 5 * 0.5;
    }
    const double one = 1, zero = 0;
    dgemm_("N", "N", &n, &n, &n, &one, A.data(), &n, B.data(), &n, &zero, ref.data(), &n, 1, 1);
    st = grpc_arg_stack_new_np(4);
    int nn = n;
    for (void *p : {(void *)&nn, (void *)A.data(), (void *)B.data(), (void *)C.data()})
        ASSERT_EQ(grpc_arg_stack_push_arg_np(st, p), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_call_arg_stack_np(&mm, st), GRPC_NO_ERROR) << detail();
    EXPECT_EQ(C, ref); // small integers and halves: exact
    ASSERT_EQ(grpc_arg_stack_destruct_np(st), GRPC_NO_ERROR);
    EXPECT_EQ(grpc_arg_stack_destruct_np(nullptr), GRPC_OTHER_ERROR_CODE);
}

// ---- Threads ----

TEST_F(Grpc, ThreadsWaitingAtOnceGetEachSessionOnce)
{
    init(config_both);
    grpc_function_handle_t add;
    ASSERT_EQ(grpc_function_handle_default(&add, "add_int"), GRPC_NO_ERROR);
    const int n = 60;
    std::vector<int> sums(n, -1);
    std::vector<grpc_sessionid_t> ids(n);
    for (int k = 0; k < n; k++) ASSERT_EQ(grpc_call_async(&add, &ids[k], k, k, &sums[k]), GRPC_NO_ERROR);
    std::mutex mu;
    std::vector<grpc_sessionid_t> returned;
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++)
        threads.emplace_back([&] {
            grpc_sessionid_t id;
            grpc_error_t e;
            while ((e = grpc_wait_any(&id)) == GRPC_NO_ERROR) {
                std::lock_guard<std::mutex> lock(mu);
                returned.push_back(id);
            }
            if (e != GRPC_INVALID_SESSION_ID || id != GRPC_SESSIONID_VOID) wrong++;
        });
    for (auto &t : threads) t.join();
    EXPECT_EQ(wrong.load(), 0);
    std::vector<grpc_sessionid_t> a = returned, b = ids;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b); // every session, none twice
    for (int k = 0; k < n; k++) EXPECT_EQ(sums[k], 2 * k);

    // Several threads waiting for the same session: one gets it.
    grpc_function_handle_t hold;
    ASSERT_EQ(grpc_function_handle_default(&hold, "hold"), GRPC_NO_ERROR);
    std::string gate = dir_->gate("same");
    int result = 0;
    grpc_sessionid_t id;
    ASSERT_EQ(grpc_call_async(&hold, &id, gate.c_str(), 1, &result), GRPC_NO_ERROR);
    std::atomic<int> ok{0}, invalid{0}, started{0};
    threads.clear();
    for (int t = 0; t < 3; t++)
        threads.emplace_back([&] {
            started++;
            grpc_error_t e = grpc_wait(id);
            if (e == GRPC_NO_ERROR) ok++;
            else if (e == GRPC_INVALID_SESSION_ID) invalid++;
        });
    while (started.load() < 3) std::this_thread::yield();
    AsyncDir::release(gate);
    for (auto &t : threads) t.join();
    EXPECT_EQ(ok.load(), 1);
    EXPECT_EQ(invalid.load(), 2);
    EXPECT_EQ(result, 2);

    // A wait_or in one thread and a wait on one of its sessions in another:
    // each returns a different session.
    std::string g1 = dir_->gate("or-a"), g2 = dir_->gate("or-b");
    int r1 = 0, r2 = 0;
    grpc_sessionid_t pair[2], got = 0;
    ASSERT_EQ(grpc_call_async(&hold, &pair[0], g1.c_str(), 10, &r1), GRPC_NO_ERROR);
    ASSERT_EQ(grpc_call_async(&hold, &pair[1], g2.c_str(), 20, &r2), GRPC_NO_ERROR);
    grpc_error_t e_or = GRPC_OTHER_ERROR_CODE, e_wait = GRPC_OTHER_ERROR_CODE;
    std::thread a_thread([&] { e_or = grpc_wait_or(pair, 2, &got); });
    std::thread b_thread([&] { e_wait = grpc_wait(pair[1]); });
    AsyncDir::release(g1);
    a_thread.join();
    EXPECT_EQ(e_or, GRPC_NO_ERROR);
    EXPECT_EQ(got, pair[0]);
    AsyncDir::release(g2);
    b_thread.join();
    EXPECT_EQ(e_wait, GRPC_NO_ERROR);
    EXPECT_EQ(r1, 11);
    EXPECT_EQ(r2, 21);
}

// ---- Farming over the configured servers, finalize with work running ----

TEST_F(Grpc, DefaultHandleSpreadsOverTheServers)
{
    init(config_both);
    grpc_function_handle_t mm;
    ASSERT_EQ(grpc_function_handle_default(&mm, "dmmul"), GRPC_NO_ERROR);
    const int n = 60, calls = 16;
    std::vector<std::vector<double>> A(calls), C(calls);
    std::vector<double> B(n * n);
    for (int k = 0; k < n * n; k++) B[k] = std::cos(k);
    std::vector<grpc_sessionid_t> ids(calls);
    for (int c = 0; c < calls; c++) {
        A[c].resize(n * n);
        C[c].assign(n * n, 0);
        for (int k = 0; k < n * n; k++) A[c][k] = std::sin(k + c);
        ASSERT_EQ(grpc_call_async(&mm, &ids[c], n, A[c].data(), B.data(), C[c].data()), GRPC_NO_ERROR);
    }
    ASSERT_EQ(grpc_wait_and(ids.data(), calls), GRPC_NO_ERROR);
    const double one = 1, zero = 0;
    std::set<std::string> servers;
    for (int c = 0; c < calls; c++) {
        std::vector<double> ref(n * n);
        dgemm_("N", "N", &n, &n, &n, &one, A[c].data(), &n, B.data(), &n, &zero, ref.data(), &n, 1, 1);
        for (int k = 0; k < n * n; k++) ASSERT_NEAR(C[c][k], ref[k], 1e-12);
        grpc_session_info_np info;
        ASSERT_EQ(grpc_session_info_get_np(ids[c], &info), GRPC_NO_ERROR);
        servers.insert(info.server);
    }
    for (const std::string &s : servers)
        EXPECT_TRUE(s == one_->address() || s == two_->address()) << s;
}

TEST_F(Grpc, FinalizeStopsSessionsInProgress)
{
    init();
    grpc_function_handle_t hold;
    ASSERT_EQ(grpc_function_handle_default(&hold, "hold"), GRPC_NO_ERROR);
    std::string gate = dir_->gate("final");
    int result = -1;
    grpc_sessionid_t id;
    ASSERT_EQ(grpc_call_async(&hold, &id, gate.c_str(), 1, &result), GRPC_NO_ERROR);
    int pid = AsyncDir::started_pid(gate);
    ASSERT_GT(pid, 0);
    ASSERT_EQ(grpc_finalize(), GRPC_NO_ERROR); // the gate is never released
    EXPECT_EQ(result, -1);
    errno = 0;
    EXPECT_EQ(kill(pid, 0), -1);
    EXPECT_EQ(errno, ESRCH);
    EXPECT_EQ(grpc_wait(id), GRPC_NOT_INITIALIZED);
    EXPECT_EQ(grpc_function_handle_destruct(&hold), GRPC_NOT_INITIALIZED);
}

// ---- The example program, written to the standard only ----

TEST(GridrpcExample, MatrixMultiplySyncAndAsync)
{
    std::string cmd = TOP_BUILDDIR "/tests/gridrpc_matmul '" + config_both + "' 100 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[512];
    while (fgets(buf, sizeof buf, p)) out += buf;
    int status = pclose(p);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
    EXPECT_NE(out.find("gridrpc_matmul: 12 passed, 0 failed\n"), std::string::npos) << out;
}

} // namespace
