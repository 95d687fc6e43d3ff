// server_test.cc -- a server administrators can trust, with real processes:
// faults stay in their worker, every limit gives its error, SIGTERM drains,
// SIGHUP rereads the configuration, modules are (un)registered live.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../support/admin_socket.h"
#include "../support/http_probe.h"
#include "../support/raw_peer.h"
#include "../support/server_proc.h"
#include "../support/test_util.h"
#include "json_mini.h"
#include "numrpc.h"
#include "protocol.h"
extern "C" {
#include "msg.h"
}

namespace {

const std::string kFaults = TOP_BUILDDIR "/tests/server/.libs";
const std::string kServer = TOP_BUILDDIR "/server/numrpc-server";

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif

double Now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void SleepMs(int ms)
{
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}


void Touch(const std::string &path)
{
    std::ofstream(path) << "";
}

bool Exists(const std::string &path)
{
    return access(path.c_str(), F_OK) == 0;
}

// Bounded wait (a safety bound, not a timing assertion).
bool WaitFor(const std::function<bool()> &cond, int max_ms = 20000)
{
    for (int i = 0; i < max_ms / 2; i++) {
        if (cond()) return true;
        SleepMs(2);
    }
    return cond();
}

// Sockets the process holds open (the dispatcher: one per connection).
int CountSockets(pid_t pid)
{
    std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR *d = opendir(dir.c_str());
    if (d == nullptr) return -1;
    int n = 0;
    while (dirent *e = readdir(d)) {
        char target[256];
        ssize_t k = readlink((dir + "/" + e->d_name).c_str(), target, sizeof target - 1);
        if (k > 0 && strncmp(target, "socket:", 7) == 0) n++;
    }
    closedir(d);
    return n;
}

// ---- Faults stay in their worker ----

class Faults : public ::testing::Test {
  protected:
    static void SetUpTestSuite()
    {
        server_ = new ServerProc({"--stubs", kFaults, "--max-call-seconds", "1", "--admin-socket", "none"});
    }
    static void TearDownTestSuite()
    {
        numrpc_finalize();
        delete server_;
    }
    void SetUp() override { UseServer(server_->address()); }
    static void ExpectServing(pid_t pid)
    {
        EXPECT_EQ(numrpc_call("ping"), NUMRPC_OK) << Detail();
        EXPECT_TRUE(server_->alive());
        EXPECT_EQ(server_->pid(), pid);
    }
    static ServerProc *server_;
};
ServerProc *Faults::server_ = nullptr;

TEST_F(Faults, CrashGivesECrashedNamingTheSignal)
{
    const pid_t pid = server_->pid();
    EXPECT_EQ(numrpc_call("crash", 1), NUMRPC_ECRASHED);
    // A sanitizer build's SEGV handler exits instead of dying of the signal.
    EXPECT_TRUE(Contains(Detail(), kAsan ? "crash crashed: " : "crash crashed: SIGSEGV")) << Detail();
    ExpectServing(pid);
}

TEST_F(Faults, AbortGivesECrashed)
{
    const pid_t pid = server_->pid();
    EXPECT_EQ(numrpc_call("abort_me", 1), NUMRPC_ECRASHED);
    EXPECT_TRUE(Contains(Detail(), "abort_me crashed: ")) << Detail();
    ExpectServing(pid);
}

TEST_F(Faults, EndlessLoopIsStoppedAtTheCallTimeLimit)
{
    const pid_t pid = server_->pid();
    EXPECT_EQ(numrpc_call("spin", -1), NUMRPC_ETIMEDOUT);
    EXPECT_TRUE(Contains(Detail(), "spin ran past this server's limit of 1 s per call")) << Detail();
    ExpectServing(pid);
    EXPECT_EQ(numrpc_call("spin", 0), NUMRPC_OK) << Detail();
}

// The processes whose parent is pid that are still alive (not zombies).
std::vector<pid_t> LiveChildren(pid_t pid)
{
    std::vector<pid_t> out;
    DIR *d = opendir("/proc");
    if (d == nullptr) return out;
    while (dirent *e = readdir(d)) {
        pid_t p = static_cast<pid_t>(atoi(e->d_name));
        if (p <= 0) continue;
        std::ifstream f("/proc/" + std::to_string(p) + "/stat");
        std::string line;
        if (!std::getline(f, line)) continue;
        size_t close_paren = line.rfind(')');
        if (close_paren == std::string::npos) continue;
        char state = 0;
        int ppid = 0;
        if (sscanf(line.c_str() + close_paren + 1, " %c %d", &state, &ppid) != 2) continue;
        if (ppid == pid && state != 'Z') out.push_back(p);
    }
    closedir(d);
    return out;
}

// The state letter of /proc/PID/stat ('R' running, 'S' sleeping, ...).
char ProcState(pid_t pid)
{
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(f, line)) return 0;
    size_t close_paren = line.rfind(')');
    return close_paren != std::string::npos && close_paren + 2 < line.size() ? line[close_paren + 2] : 0;
}

TEST(FaultsKill, WorkersDieWithAKilledDispatcher)
{
    ServerProc server({"--stubs", kFaults, "--admin-socket", "none"});
    UseServer(server.address());
    const pid_t dispatcher = server.pid();
    ASSERT_TRUE(WaitFor([&] { return !LiveChildren(dispatcher).empty(); }));
    // One worker spins without end; the caller waits in another thread.
    int spin_rc = 0;
    std::thread caller([&] { spin_rc = numrpc_call("spin", -1); });
    std::vector<pid_t> workers;
    ASSERT_TRUE(WaitFor([&] {
        workers = LiveChildren(dispatcher);
        for (pid_t w : workers)
            if (ProcState(w) == 'R') return true;
        return false;
    }));
    ASSERT_EQ(kill(dispatcher, SIGKILL), 0);
    // Every worker goes with it, the spinning one too, and the caller hears.
    bool all_gone = WaitFor([&] {
        for (pid_t w : workers)
            if (kill(w, 0) == 0 && ProcState(w) != 'Z') return false;
        return true;
    });
    EXPECT_TRUE(all_gone) << "a worker outlived its dispatcher";
    if (!all_gone)
        for (pid_t w : workers) kill(w, SIGKILL); // so that the caller returns
    caller.join();
    EXPECT_NE(spin_rc, NUMRPC_OK);
    numrpc_finalize();
}

TEST(FaultsMemory, MemoryHogHitsTheWorkerMemoryLimit)
{
    if (kAsan) GTEST_SKIP() << "RLIMIT_AS cannot apply under AddressSanitizer";
    // A server of its own, without the 1 s call limit: on a busy machine
    // touching 768 MiB may take longer than that.
    ServerProc server({"--stubs", kFaults, "--admin-socket", "none", "--max-worker-memory", "768M"});
    UseServer(server.address());
    EXPECT_EQ(numrpc_call("hog", 4096), NUMRPC_ECRASHED);
    EXPECT_TRUE(Contains(Detail(), "hog crashed: SIGABRT")) << Detail();
    EXPECT_TRUE(Contains(Detail(), "768 MiB")) << Detail();
    EXPECT_EQ(numrpc_call("ping"), NUMRPC_OK) << Detail();
    EXPECT_TRUE(server.alive());
    EXPECT_EQ(numrpc_call("hog", 16), NUMRPC_OK) << Detail();
    numrpc_finalize();
}

TEST_F(Faults, CrashedWorkersAreReplacedQuickly)
{
    const int rounds = 20;
    double t0 = Now();
    for (int i = 0; i < rounds; i++) {
        ASSERT_EQ(numrpc_call("crash", 1), NUMRPC_ECRASHED);
        ASSERT_EQ(numrpc_call("ping"), NUMRPC_OK) << Detail();
    }
    double per = (Now() - t0) / rounds * 1e3;
    printf("[ figures ] crash + good call: %.2f ms per pair (%d pairs)\n", per, rounds);
}

// ---- Limits: each gives its error and the server keeps serving ----

TEST(Limits, ArraySizeAndCallBytes)
{
    ServerProc server({"--max-array-elems", "100", "--admin-socket", "none"});
    UseServer(server.address());
    std::vector<double> x(200, 1.0), y(200, 0.0);
    EXPECT_EQ(numrpc_call("dcopy", 200, x.data(), 1, y.data(), 1), NUMRPC_ELIMIT);
    EXPECT_TRUE(Contains(Detail(), "over this server's limit of 100")) << Detail();
    EXPECT_EQ(numrpc_call("dcopy", 50, x.data(), 1, y.data(), 1), NUMRPC_OK) << Detail();

    ServerProc small({"--max-call-bytes", "1K", "--admin-socket", "none"});
    UseServer(small.address());
    EXPECT_EQ(numrpc_call("dcopy", 200, x.data(), 1, y.data(), 1), NUMRPC_ELIMIT);
    EXPECT_TRUE(Contains(Detail(), "limit of 1024 bytes")) << Detail();
    EXPECT_EQ(numrpc_call("ping"), NUMRPC_OK) << Detail();
    numrpc_finalize();
}

TEST(Limits, ConnectionsBeyondTheLimitAreRefused)
{
    ServerProc server({"--max-connections", "1", "--admin-socket", "none"});
    int held = connect_loopback(server.port());
    ASSERT_GE(held, 0);
    ASSERT_TRUE(WaitFor([&] { return CountSockets(server.pid()) >= 0; }));
    UseServer(server.address());
    EXPECT_EQ(numrpc_call("ping"), NUMRPC_EBUSY);
    EXPECT_TRUE(Contains(Detail(), "connection limit (1 connections)")) << Detail();
    close(held);
    EXPECT_TRUE(WaitFor([&] { return numrpc_call("ping") == NUMRPC_OK; })) << Detail();
    numrpc_finalize();
}

TEST(Limits, QueueBeyondBusyWorkersIsBounded)
{
    TempDir dir;
    if (!HavePrometheusParser()) GTEST_SKIP() << "no Prometheus parser: the queue is read from /metrics";
    ServerProc server({"--stubs", kFaults, "--workers", "1", "--max-workers", "1", "--max-queue", "1",
                       "--admin-socket", "none", "--worker-dir", dir.path, "--http-port", "0", "--http-port-file", dir.path + "/http.port"});
    const std::string metrics = "http://127.0.0.1:" + std::to_string(ReadPortFile(dir.path + "/http.port")) + "/metrics";
    UseServer(server.address());
    const std::string gate = dir.path + "/gate";
    int held_rc = -1;
    std::thread holder([&] { held_rc = numrpc_call("hold", gate.c_str()); });
    ASSERT_TRUE(WaitFor([&] { return Exists(gate + ".started"); }));
    // A whole request for a worker takes the one queue place (a silent
    // connection would not: it waits in no queue; nor would a HELLO, which
    // the dispatcher answers itself): a PROBE asking 8 bytes back.
    int waiting = connect_loopback(server.port());
    ASSERT_GE(waiting, 0);
    ASSERT_TRUE(SendHello(waiting));
    std::vector<uint8_t> probe = {0, 0, 0, 8};
    probe.resize(16, 0);
    std::vector<uint8_t> pkt = Packet(PROTO_PROBE, 2, PROTO_FLAG_END, probe);
    ASSERT_EQ(send(waiting, pkt.data(), pkt.size(), 0), static_cast<ssize_t>(pkt.size()));
    // The server says the PROBE holds the place (a socket count says only
    // that its connection was accepted: the ping could overtake it).
    ASSERT_TRUE(WaitFor([&] { return Fetch(metrics).Value("numrpc_server_queued_requests") == 1; }, 400))
        << "the PROBE never waited for the worker";
    EXPECT_EQ(numrpc_call("ping"), NUMRPC_EBUSY);
    EXPECT_TRUE(Contains(Detail(), "server busy")) << Detail();
    Touch(gate);
    holder.join();
    EXPECT_EQ(held_rc, NUMRPC_OK);
    close(waiting);
    EXPECT_TRUE(WaitFor([&] { return numrpc_call("ping") == NUMRPC_OK; })) << Detail();
    numrpc_finalize();
}

TEST(Limits, IdleConnectionsAreClosedAndClientsReconnect)
{
    ServerProc server({"--idle-timeout", "100", "--admin-socket", "none"});
    int fd = connect_loopback(server.port());
    ASSERT_GE(fd, 0);
    EXPECT_TRUE(ClosedByPeer(fd));
    close(fd);
    // A pooled connection the server closed is reopened by the client.
    UseServer(server.address());
    ASSERT_EQ(numrpc_call("ping"), NUMRPC_OK) << Detail();
    const int base = CountSockets(server.pid());
    ASSERT_TRUE(WaitFor([&] { return CountSockets(server.pid()) < base; }));
    EXPECT_EQ(numrpc_call("ping"), NUMRPC_OK) << Detail();
    numrpc_finalize();
}

TEST(Limits, SlowSenderIsCutOffWithETimedOut)
{
    ServerProc server({"--io-timeout", "200", "--admin-socket", "none"});
    int fd = connect_loopback(server.port());
    ASSERT_GE(fd, 0);
    // The first packet of a CALL to ping, without END; the rest never comes.
    std::vector<uint8_t> body = {0, 0, 0, 4, 'p', 'i', 'n', 'g'};
    body.resize(body.size() + 8 + 4 * 4, 0);
    body.resize(40, 0);
    std::vector<uint8_t> pkt = Packet(4, 77, 0, body);
    ASSERT_EQ(send(fd, pkt.data(), pkt.size(), 0), static_cast<ssize_t>(pkt.size()));
    // Others are served meanwhile.
    UseServer(server.address());
    EXPECT_EQ(numrpc_call("ping"), NUMRPC_OK) << Detail();
    EXPECT_EQ(ReadReplyStatus(fd), NUMRPC_ETIMEDOUT);
    EXPECT_TRUE(ClosedByPeer(fd));
    close(fd);
    EXPECT_EQ(numrpc_call("ping"), NUMRPC_OK) << Detail();
    EXPECT_TRUE(server.alive());
    numrpc_finalize();
}

TEST(Limits, AClientThatHangsUpMidReplyLeavesItsWorkerSound)
{
    // One worker: the connection after the broken one is served by it.
    ServerProc server({"--workers", "1", "--max-workers", "1", "--admin-socket", "none"});
    int fd = connect_loopback(server.port());
    ASSERT_GE(fd, 0);
    // A PROBE asking 16 MiB back: u32 reply_bytes, u64 n = 0, padding.
    std::vector<uint8_t> body = {0x01, 0x00, 0x00, 0x00};
    body.resize(16, 0);
    std::vector<uint8_t> pkt = Packet(PROTO_PROBE, 9, PROTO_FLAG_END, body);
    ASSERT_EQ(send(fd, pkt.data(), pkt.size(), 0), static_cast<ssize_t>(pkt.size()));
    // The reply has begun (its first header is here), and more than the
    // socket buffers hold is still to come: the worker is mid-message.
    uint8_t hdr[PROTO_HEADER_SIZE];
    ASSERT_EQ(recv(fd, hdr, sizeof hdr, MSG_WAITALL), static_cast<ssize_t>(sizeof hdr));
    ASSERT_EQ(hdr[3], PROTO_REPLY);
    linger hard{1, 0};  // close with a reset: the worker's send fails
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    close(fd);
    // An innocent caller, next on the same worker, gets its answer.
    UseServer(server.address());
    const int n = 1000;
    std::vector<double> x(n), y(n, 0.0);
    for (int i = 0; i < n; i++) x[i] = 0.5 * i - 7.0;
    for (int round = 0; round < 3; round++) {
        ASSERT_EQ(numrpc_call("dcopy", n, x.data(), 1, y.data(), 1), NUMRPC_OK) << Detail();
        EXPECT_EQ(x, y);
    }
    EXPECT_TRUE(server.alive());
    numrpc_finalize();
}

// ---- Signals and the configuration file ----

// A server process of this test's own, to see its exit status.
struct OwnServer {
    pid_t pid = -1;
    int port = 0;
    // nofile > 0: the server starts under that open-file limit (soft and hard).
    explicit OwnServer(std::vector<std::string> args, const std::string &port_file, rlim_t nofile = 0)
    {
        args.insert(args.begin(), {kServer, "--port", "0", "--bind", "127.0.0.1", "--port-file", port_file,
                                   "--quiet", "--blas-threads", "1"});
        pid = fork();
        if (pid == 0) {
            std::vector<char *> argv;
            for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
            argv.push_back(nullptr);
            if (freopen("/dev/null", "w", stdout) == nullptr) _exit(127);
            rlimit lim = {nofile, nofile};
            if (nofile > 0 && setrlimit(RLIMIT_NOFILE, &lim) != 0) _exit(127);
            execv(argv[0], argv.data());
            _exit(127);
        }
        WaitFor([&] {
            std::ifstream in(port_file);
            return static_cast<bool>(in >> port) && port > 0;
        });
    }
    // Exit status after it ends by itself (-1 if it had to be killed).
    int Wait()
    {
        int status = 0;
        for (int i = 0; i < 10000; i++) {
            if (waitpid(pid, &status, WNOHANG) == pid) {
                pid = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            SleepMs(2);
        }
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        pid = -1;
        return -1;
    }
    ~OwnServer()
    {
        if (pid > 0) {
            kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
        }
    }
};

// What `numrpc status --json` says (the dispatcher answers it even while
// every worker is busy), or the error that refused it.
struct StatusProbe {
    bool ok = false;
    Json json;
    std::string err;
};

StatusProbe ProbeStatus(const std::string &addr, const std::string &dir)
{
    StatusProbe p;
    const std::string err = dir + "/status.err";
    std::string cmd = std::string(TOP_BUILDDIR "/cli/numrpc status --json ") + addr + " 2>" + err;
    FILE *f = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    size_t k;
    while (f && (k = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, k);
    p.ok = f && pclose(f) == 0;
    std::ifstream in(err);
    p.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (p.ok) p.json = Json::Parse(out);
    return p;
}

// The dispatcher used to lose connections the kernel had completed but it
// had not accepted when SIGTERM arrived; the test also waited on a socket
// count taken before the workers existed, and made its "late" call before
// knowing the signal had been handled.  Now every step waits on what the
// server reports.
TEST(Limits, ConnectionsAreClampedUnderTheOpenFileLimit)
{
    TempDir dir;
    // 64 descriptors and 2 workers leave room for 64 - (2 x 2 + 32) = 28
    // connections; the default --max-connections (1024) would run out of
    // descriptors first (the dispatcher then spun and new clients hung).
    OwnServer server({"--stubs", kFaults, "--workers", "2", "--max-workers", "2", "--admin-socket", "none",
                      "--max-connections-per-peer", "1000"},
                     dir.path + "/port", 64);
    ASSERT_GT(server.port, 0);
    std::vector<int> fds;
    for (int i = 0; i < 40; i++) {
        int fd = connect_loopback(server.port);
        ASSERT_GE(fd, 0);
        fds.push_back(fd);
    }
    // The 12 beyond the limit are refused at once, by a reply naming it.
    int refused = 0;
    for (int round = 0; round < 100 && refused < 12; round++) {
        for (int &fd : fds) {
            pollfd p = {fd, POLLIN, 0};
            if (fd < 0 || poll(&p, 1, 0) <= 0) continue;
            msg_conn c;
            err_t err;
            ASSERT_EQ(msg_conn_init(&c, 4096, &err), 0);
            msg_conn_attach(&c, transport_tcp(fd), "server");
            EXPECT_EQ(msg_read_reply(&c.reader, 0, c.label, &err), NUMRPC_EBUSY) << err.detail;
            EXPECT_TRUE(Contains(err.detail, "connection limit (28 connections)")) << err.detail;
            msg_conn_free(&c);  // closes fd
            fd = -1;
            refused++;
        }
        SleepMs(20);
    }
    EXPECT_EQ(refused, 12);
    for (int fd : fds)
        if (fd >= 0) close(fd);
    UseServer("127.0.0.1:" + std::to_string(server.port));
    EXPECT_EQ(numrpc_call("ping"), NUMRPC_OK) << Detail();
    numrpc_finalize();
}

TEST(Signals, SigtermFinishesAcceptedCallsRefusesNewOnesAndExitsZero)
{
    TempDir dir;
    OwnServer server({"--stubs", kFaults, "--workers", "4", "--max-workers", "4", "--admin-socket", "none",
                      "--worker-dir", dir.path},
                     dir.path + "/port");
    ASSERT_GT(server.port, 0);
    const std::string addr = "127.0.0.1:" + std::to_string(server.port);
    UseServer(addr);
    const int kCalls = 20;
    std::vector<int> rc(kCalls, 1);
    std::vector<std::string> details(kCalls);
    std::vector<std::thread> calls;
    for (int i = 0; i < kCalls; i++)
        calls.emplace_back([&, i] {
            std::string gate = dir.path + "/gate" + std::to_string(i);
            rc[i] = numrpc_call("hold", gate.c_str());
            details[i] = Detail();
        });
    // Four run (their workers hold them), sixteen wait for a worker: the
    // server has accepted all twenty.
    ASSERT_TRUE(WaitFor([&] {
        StatusProbe p = ProbeStatus(addr, dir.path);
        return p.ok && p.json["calls_in_flight"].num == 4 && p.json["calls_queued"].num == kCalls - 4;
    })) << ProbeStatus(addr, dir.path).err;
    kill(server.pid, SIGTERM);
    // The signal is handled once new connections are turned away.
    StatusProbe refused;
    ASSERT_TRUE(WaitFor([&] {
        refused = ProbeStatus(addr, dir.path);
        return !refused.ok;
    }));
    EXPECT_TRUE(Contains(refused.err, "server shutting down")) << refused.err;
    // A call made after the signal is refused with its error.
    int late = NUMRPC_OK;
    std::string late_detail;
    std::thread([&] {
        late = numrpc_call(("numrpc://" + addr + "/ping").c_str());
        late_detail = Detail();
    }).join();
    EXPECT_EQ(late, NUMRPC_EBUSY);
    EXPECT_TRUE(Contains(late_detail, "server shutting down")) << late_detail;
    for (int i = 0; i < kCalls; i++) Touch(dir.path + "/gate" + std::to_string(i));
    for (auto &t : calls) t.join();
    for (int i = 0; i < kCalls; i++) EXPECT_EQ(rc[i], NUMRPC_OK) << "call " << i << ": " << details[i];
    numrpc_finalize();
    EXPECT_EQ(server.Wait(), 0);
}

// A client that said HELLO and then kept its connection without a call (the
// farm opens connections it may not use) held the drain open for
// --drain-timeout (10 minutes): a connection that made no call was owed one
// with no limit.  Now it is owed one within --request-timeout.
TEST(Signals, SigtermEndsAConnectionThatSaidOnlyHello)
{
    TempDir dir;
    OwnServer server({"--stubs", kFaults, "--workers", "2", "--max-workers", "2", "--admin-socket", "none",
                      "--request-timeout", "300"},
                     dir.path + "/port");
    ASSERT_GT(server.port, 0);
    msg_conn c;
    err_t err;
    ASSERT_EQ(msg_conn_open(&c, "127.0.0.1", server.port, 5000, 5000, 4096, &err), 0) << err.detail;
    msg_hello h = {PROTO_VERSION, 4096, "drain test", 0, "", {}, {}, 0}, back;
    ASSERT_EQ(msg_write_hello(&c.writer, 1, &h, &err), 0) << err.detail;
    ASSERT_EQ(msg_read_hello_reply(&c.reader, 1, c.label, &back, &err), 0) << err.detail;
    kill(server.pid, SIGTERM);
    EXPECT_EQ(server.Wait(), 0) << "the drain waited for a call that never came";
    msg_conn_free(&c);
}

// An asynchronous farm leaves its connections with the workers that served
// them, idle between calls; a drain never asked for them back and waited
// --drain-timeout (10 minutes) when the client kept them (found by the
// Python tests).
TEST(Signals, SigtermTakesBackConnectionsWorkersHoldBetweenCalls)
{
    TempDir dir;
    std::vector<std::string> args = {"--stubs", kFaults, "--workers", "2", "--max-workers", "2",
                                     "--admin-socket", "none", "--request-timeout", "300"};
    OwnServer a(args, dir.path + "/port-a"), b(args, dir.path + "/port-b");
    ASSERT_GT(a.port, 0);
    ASSERT_GT(b.port, 0);
    UseServer("127.0.0.1:" + std::to_string(a.port) + ",127.0.0.1:" + std::to_string(b.port));
    int ids[16];
    for (int &id : ids) ASSERT_EQ(numrpc_call_async(&id, "ping"), NUMRPC_OK) << Detail();
    ASSERT_EQ(numrpc_wait_all(), NUMRPC_OK) << Detail();
    kill(a.pid, SIGTERM);
    kill(b.pid, SIGTERM);
    EXPECT_EQ(a.Wait(), 0) << "the drain waited for connections its workers held";
    EXPECT_EQ(b.Wait(), 0) << "the drain waited for connections its workers held";
    numrpc_finalize();
}

TEST(Signals, ConfigurationFileAndSighup)
{
    TempDir dir;
    const std::string conf = dir.path + "/numrpc-server.conf";
    std::ofstream(conf) << "# limits\nmax-array-elems = 100   # small\nworkers = 2\nadmin-socket = none\n";
    ServerProc server({"--config", conf});
    UseServer(server.address());
    std::vector<double> x(200, 1.0), y(200, 0.0);
    EXPECT_EQ(numrpc_call("dcopy", 200, x.data(), 1, y.data(), 1), NUMRPC_ELIMIT);
    std::ofstream(conf) << "max-array-elems = 1M\nworkers = 2\nadmin-socket = none\n";
    kill(server.pid(), SIGHUP);
    // Workers restart as they become free: bounded retries.
    EXPECT_TRUE(WaitFor([&] { return numrpc_call("dcopy", 200, x.data(), 1, y.data(), 1) == NUMRPC_OK; }))
        << Detail();
    EXPECT_EQ(y, x);
    EXPECT_TRUE(server.alive());
    numrpc_finalize();
}

TEST(Signals, BadConfigurationIsAClearError)
{
    TempDir dir;
    const std::string conf = dir.path + "/bad.conf";
    std::ofstream(conf) << "max-workers = lots\n";
    std::string cmd = kServer + " --config " + conf + " --port 0 2>" + dir.path + "/err";
    EXPECT_NE(system(cmd.c_str()), 0);
    std::ifstream in(dir.path + "/err");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(Contains(text, "bad.conf:1: max-workers wants a non-negative number")) << text;
}

// ---- Live registration ----


TEST(Live, RegisterReplaceUnregisterWhileEightClientsCall)
{
    TempDir dir;
    const std::string sock = dir.path + "/admin.sock";
    ServerProc server({"--admin-socket", sock, "--module-dir", dir.path + "/modules"});
    UseServer(server.address());
    struct stat st;
    ASSERT_EQ(stat(sock.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);

    std::atomic<int> good{0}, bad{0};
    std::vector<std::thread> clients;
    for (int t = 0; t < 8; t++)
        clients.emplace_back([&, t] {
            for (int i = 0; i < 500; i++) {
                double x[4] = {1.0 * t, 2.0, 3.0, 1.0 * i}, y[4] = {0, 0, 0, 0};
                int rc = numrpc_call("dcopy", 4, x, 1, y, 1);
                (rc == NUMRPC_OK && y[3] == i ? good : bad)++;
                if (rc != NUMRPC_OK) fprintf(stderr, "client %d call %d: %s\n", t, i, Detail().c_str());
            }
        });

    int v = 0;
    EXPECT_EQ(numrpc_call("live_version", &v), NUMRPC_ENOENT);
    double t0 = Now();
    std::string reply = Admin(sock, "register " + kFaults + "/live1.so");
    double t_reply = Now();
    ASSERT_EQ(reply.rfind("ok registered module live", 0), 0u) << reply;
    ASSERT_TRUE(WaitFor([&] { return numrpc_call("live_version", &v) == NUMRPC_OK; })) << Detail();
    double t_callable = Now();
    EXPECT_EQ(v, 1);
    printf("[ figures ] admin register: reply after %.1f ms, first call done %.1f ms after the request\n",
           (t_reply - t0) * 1e3, (t_callable - t0) * 1e3);

    // Replace: the client's cached interface is stale; it refetches.
    reply = Admin(sock, "register " + kFaults + "/live2.so");
    ASSERT_EQ(reply.rfind("ok replaced module live", 0), 0u) << reply;
    // The server answers the old version hash with ESTALE; the client
    // refetches the interface and resends, unseen by the caller.
    int rc = numrpc_call("live_version", &v);
    EXPECT_EQ(rc, NUMRPC_OK) << Detail();
    EXPECT_EQ(v, 2);
    reply = Admin(sock, "list");
    EXPECT_TRUE(Contains(reply, "registered live ")) << reply;

    reply = Admin(sock, "unregister live");
    ASSERT_EQ(reply.rfind("ok unregistered module live", 0), 0u) << reply;
    EXPECT_EQ(numrpc_call("live_version", &v), NUMRPC_ENOENT) << Detail();
    for (auto &c : clients) c.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(good.load(), 4000);
    // A module of the stub directory can be hidden too.
    EXPECT_EQ(Admin(sock, "unregister blas").rfind("ok", 0), 0u);
    std::vector<double> x(4, 1.0), y(4, 0.0);
    EXPECT_EQ(numrpc_call("dcopy", 4, x.data(), 1, y.data(), 1), NUMRPC_ENOENT);
    numrpc_finalize();
}

TEST(Live, BadModulesAndUnknownRequestsAreRefused)
{
    TempDir dir;
    const std::string sock = dir.path + "/admin.sock";
    ServerProc server({"--admin-socket", sock, "--module-dir", dir.path + "/modules"});
    Touch(dir.path + "/empty.so");
    std::string reply = Admin(sock, "register " + dir.path + "/empty.so");
    EXPECT_EQ(reply.rfind("error", 0), 0u) << reply;
    reply = Admin(sock, "register " + dir.path + "/missing.so");
    EXPECT_EQ(reply.rfind("error cannot open", 0), 0u) << reply;
    reply = Admin(sock, "register relative.so");
    EXPECT_EQ(reply.rfind("error", 0), 0u) << reply;
    reply = Admin(sock, "format disk");
    EXPECT_EQ(reply.rfind("error unknown admin request", 0), 0u) << reply;
    // The command-line client speaks the same socket.
    std::string cmd = kServer + " admin --socket " + sock + " register " + kFaults + "/live1.so >/dev/null";
    EXPECT_EQ(system(cmd.c_str()), 0);
    UseServer(server.address());
    int v = 0;
    EXPECT_TRUE(WaitFor([&] { return numrpc_call("live_version", &v) == NUMRPC_OK; })) << Detail();
    EXPECT_EQ(v, 1);
    EXPECT_TRUE(server.alive());
    numrpc_finalize();
}

}  // namespace
