// status_test.cc -- what a server tells its administrator, with real
// processes: `numrpc status --json` counts every call exactly, one log line
// per call at info level, and remote admin by challenge-response.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/raw_peer.h"
#include "../support/server_proc.h"
#include "../support/test_util.h"
#include "hmac.h"
#include "json_mini.h"
#include "numrpc.h"
#include "protocol.h"

namespace {

const std::string kFaults = TOP_BUILDDIR "/tests/server/.libs";
const std::string kStubs = TOP_BUILDDIR "/stubs/.libs";
const std::string kServer = TOP_BUILDDIR "/server/numrpc-server";
const std::string kCli = TOP_BUILDDIR "/cli/numrpc";

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif

bool Contains(const std::string &s, const std::string &part)
{
    return s.find(part) != std::string::npos;
}

std::string ReadFile(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A server whose log (stderr) goes to a file of the test's.
struct LoggedServer {
    pid_t pid = -1;
    int port = 0;
    std::string log;
    LoggedServer(const TempDir &dir, std::vector<std::string> args)
    {
        const std::string port_file = dir.path + "/port";
        log = dir.path + "/server.log";
        args.insert(args.begin(), {kServer, "--port", "0", "--bind", "127.0.0.1", "--port-file", port_file,
                                   "--blas-threads", "1", "--workers", "2", "--admin-socket", "none"});
        pid = fork();
        if (pid == 0) {
            std::vector<char *> argv;
            for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
            argv.push_back(nullptr);
            if (freopen("/dev/null", "w", stdout) == nullptr || freopen(log.c_str(), "w", stderr) == nullptr)
                _exit(127);
            execv(argv[0], argv.data());
            _exit(127);
        }
        for (int i = 0; i < 2000 && port == 0; i++) {  // bounded wait for the port file
            std::ifstream in(port_file);
            if (!(in >> port)) {
                port = 0;
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        }
    }
    std::string address() const { return "127.0.0.1:" + std::to_string(port); }
    ~LoggedServer()
    {
        if (pid <= 0) return;
        kill(pid, SIGTERM);
        for (int i = 0; i < 1000; i++) {
            if (waitpid(pid, nullptr, WNOHANG) == pid) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
    }
};

typedef CommandRun CliRun;

// Runs the numrpc command with args (already quoted where needed).
CliRun Cli(const std::string &args, const TempDir &dir)
{
    return RunCommand(kCli + " " + args, dir.path + "/cli.err");
}

Json StatusJson(const std::string &addr, const TempDir &dir)
{
    CliRun r = Cli("status --json " + addr, dir);
    EXPECT_EQ(r.status, 0) << r.err;
    return Json::Parse(r.out);
}

const Json *FindRoutine(const Json &status, const std::string &name)
{
    for (const Json &r : status["routines"].items)
        if (r["name"].str == name && r["offered"].b) return &r;
    return nullptr;
}

void UseServer(const std::string &addr)
{
    numrpc_finalize();
    numrpc_config cfg{addr.c_str(), 0, nullptr, nullptr};
    ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK);
}

// A stub directory of links to the test's modules.
void LinkModules(const TempDir &dir, const std::string &sub)
{
    mkdir((dir.path + "/" + sub).c_str(), 0700);
    ASSERT_EQ(symlink((kStubs + "/blas.so").c_str(), (dir.path + "/" + sub + "/blas.so").c_str()), 0);
    ASSERT_EQ(symlink((kFaults + "/faults.so").c_str(), (dir.path + "/" + sub + "/faults.so").c_str()), 0);
}

// ---- Status ----

TEST(Status, JsonCountsEveryCallExactly)
{
    TempDir dir;
    LinkModules(dir, "stubs");
    LoggedServer server(dir, {"--stubs", dir.path + "/stubs", "--max-array-elems", "100", "--log-level", "info"});
    ASSERT_GT(server.port, 0);
    UseServer(server.address());
    uint64_t ping_in = 0, ping_out = 0;
    for (int i = 0; i < 5; i++) {
        ASSERT_EQ(numrpc_call("ping"), NUMRPC_OK) << numrpc_last_error_detail();
        numrpc_call_info info;
        numrpc_last_call_info(&info);
        ping_in += info.bytes_sent;
        ping_out += info.bytes_received;
    }
    std::vector<double> x(200, 2.0), y(200, 0.0);
    for (int i = 0; i < 3; i++) ASSERT_EQ(numrpc_call("dcopy", 50, x.data(), 1, y.data(), 1), NUMRPC_OK);
    for (int i = 0; i < 2; i++) ASSERT_EQ(numrpc_call("dcopy", 200, x.data(), 1, y.data(), 1), NUMRPC_ELIMIT);
    ASSERT_EQ(numrpc_call("crash", 1), NUMRPC_ECRASHED);
    for (int i = 0; i < 2; i++) ASSERT_EQ(numrpc_call("crash", 0), NUMRPC_OK) << numrpc_last_error_detail();
    numrpc_finalize();

    Json s = StatusJson(server.address(), dir);
    EXPECT_EQ(s["worker_restarts"].num, 1);
    EXPECT_EQ(s["calls_in_flight"].num, 0);
    EXPECT_EQ(s["calls_queued"].num, 0);
    EXPECT_FALSE(s["draining"].b);
    EXPECT_GE(s["uptime_seconds"].num, 0);
    EXPECT_EQ(s["load"].items.size(), 3u);
    const Json *ping = FindRoutine(s, "ping"), *dcopy = FindRoutine(s, "dcopy"), *crash = FindRoutine(s, "crash");
    ASSERT_TRUE(ping && dcopy && crash);
    EXPECT_EQ((*ping)["calls"].num, 5);
    EXPECT_EQ((*ping)["errors"].num, 0);
    // The server counts the bytes the client framed and received.
    EXPECT_EQ((*ping)["bytes_in"].num, static_cast<double>(ping_in));
    EXPECT_EQ((*ping)["bytes_out"].num, static_cast<double>(ping_out));
    EXPECT_EQ((*dcopy)["calls"].num, 5);
    EXPECT_EQ((*dcopy)["errors"].num, 2);
    EXPECT_GT((*dcopy)["bytes_in"].num, 3 * 50 * 8);
    EXPECT_EQ((*crash)["calls"].num, 3);
    EXPECT_EQ((*crash)["errors"].num, 1);
    EXPECT_EQ((*crash)["module"].str, "faults");
    EXPECT_EQ((*dcopy)["version"].str.size(), 16u);
    EXPECT_GT((*dcopy)["mean_seconds"].num, 0);
    // p99 is a bucket's upper edge: at least the smallest time, never 0.
    EXPECT_GT((*dcopy)["p99_seconds"].num, 0);
    const Json *daxpy = FindRoutine(s, "daxpy");
    ASSERT_TRUE(daxpy);
    EXPECT_EQ((*daxpy)["calls"].num, 0);

    CliRun table = Cli("status " + server.address(), dir);
    EXPECT_EQ(table.status, 0) << table.err;
    EXPECT_TRUE(Contains(table.out, "ROUTINE")) << table.out;
    EXPECT_TRUE(Contains(table.out, "dcopy ")) << table.out;
    EXPECT_TRUE(Contains(table.out, "1 restarted")) << table.out;
}

TEST(Status, CountsTheDataHandlesKeptAndTheirBytes)
{
    TempDir dir;
    LinkModules(dir, "stubs");
    LoggedServer server(dir, {"--stubs", dir.path + "/stubs"});
    ASSERT_GT(server.port, 0);
    UseServer(server.address());
    std::vector<double> a(30 * 20, 1.5), v(1000, 2.0);
    numrpc_data *ha = nullptr, *hv = nullptr;
    ASSERT_EQ(numrpc_data_put(&ha, nullptr, NUMRPC_T_DOUBLE, a.data(), 25, 20, 30), NUMRPC_OK)
        << numrpc_last_error_detail();
    ASSERT_EQ(numrpc_data_new(&hv, nullptr, NUMRPC_T_DOUBLE, 1000, 1, 1000), NUMRPC_OK)
        << numrpc_last_error_detail();
    const double kept = (30 * 20 + 1000) * sizeof(double); // ld x cols each
    Json s = StatusJson(server.address(), dir);
    EXPECT_EQ(s["handles"].num, 2);
    EXPECT_EQ(s["handle_bytes"].num, kept);
    CliRun table = Cli("status " + server.address(), dir);
    EXPECT_EQ(table.status, 0) << table.err;
    EXPECT_TRUE(Contains(table.out, "\ndata handles: 2, 12.5 KiB\n")) << table.out;

    ASSERT_EQ(numrpc_data_free(ha), NUMRPC_OK) << numrpc_last_error_detail();
    ASSERT_EQ(numrpc_data_free(hv), NUMRPC_OK) << numrpc_last_error_detail();
    numrpc_finalize();
    s = StatusJson(server.address(), dir);
    EXPECT_EQ(s["handles"].num, 0);
    EXPECT_EQ(s["handle_bytes"].num, 0);
    table = Cli("status " + server.address(), dir);
    EXPECT_TRUE(Contains(table.out, "\ndata handles: 0, 0 B\n")) << table.out;
}

TEST(Status, AnsweredWhileEveryWorkerIsBusyAndAnUnreachableServerIsAClearError)
{
    TempDir dir;
    LoggedServer server(dir, {"--stubs", kFaults, "--workers", "1", "--max-workers", "1", "--worker-dir", dir.path});
    ASSERT_GT(server.port, 0);
    UseServer(server.address());
    const std::string gate = dir.path + "/gate";
    int rc = -1;
    std::thread holder([&] { rc = numrpc_call("hold", gate.c_str()); });
    for (int i = 0; i < 10000 && access((gate + ".started").c_str(), F_OK) != 0; i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    Json s = StatusJson(server.address(), dir);
    EXPECT_EQ(s["calls_in_flight"].num, 1);
    std::ofstream(gate) << "";
    holder.join();
    EXPECT_EQ(rc, NUMRPC_OK);
    numrpc_finalize();

    int fd = connect_loopback(server.port);  // a port nobody listens on: free it
    ASSERT_GE(fd, 0);
    close(fd);
    CliRun r = Cli("status 127.0.0.1:1", dir);
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(Contains(r.err, "numrpc status: cannot connect to server")) << r.err;
}

// ---- Log lines ----

std::vector<std::string> CallLines(const std::string &log, const std::string &routine)
{
    std::vector<std::string> out;
    std::istringstream in(log);
    std::string line;
    while (std::getline(in, line))
        if (Contains(line, "call routine=" + routine + " ")) out.push_back(line);
    return out;
}

TEST(Logs, OneLinePerCallAtInfoLevelWithTheCauseOfErrors)
{
    TempDir dir;
    LinkModules(dir, "stubs");
    {
        LoggedServer server(dir, {"--stubs", dir.path + "/stubs", "--max-array-elems", "100", "--log-level", "info"});
        ASSERT_GT(server.port, 0);
        UseServer(server.address());
        std::vector<double> x(200, 2.0), y(200, 0.0);
        ASSERT_EQ(numrpc_call("dcopy", 50, x.data(), 1, y.data(), 1), NUMRPC_OK);
        ASSERT_EQ(numrpc_call("dcopy", 200, x.data(), 1, y.data(), 1), NUMRPC_ELIMIT);
        ASSERT_EQ(numrpc_call("crash", 1), NUMRPC_ECRASHED);
        numrpc_finalize();
    }  // the server has exited: its log is complete
    const std::string log = ReadFile(dir.path + "/server.log");
    std::vector<std::string> dcopy = CallLines(log, "dcopy"), crash = CallLines(log, "crash");
    ASSERT_EQ(dcopy.size(), 2u) << log;
    EXPECT_TRUE(Contains(dcopy[0], "outcome=ok bytes_in=")) << dcopy[0];
    EXPECT_TRUE(Contains(dcopy[0], " seconds=")) << dcopy[0];
    EXPECT_FALSE(Contains(dcopy[0], "cause=")) << dcopy[0];
    EXPECT_TRUE(Contains(dcopy[1], "outcome=error code=ELIMIT ")) << dcopy[1];
    EXPECT_TRUE(Contains(dcopy[1], "cause=\"dcopy: array x has 200 elements, over this server's limit of 100\""))
        << dcopy[1];
    ASSERT_EQ(crash.size(), 1u) << log;
    EXPECT_TRUE(Contains(crash[0], "outcome=error code=ECRASHED ")) << crash[0];
    EXPECT_TRUE(Contains(crash[0], kAsan ? "cause=\"crash crashed: " : "cause=\"crash crashed: SIGSEGV\"")) << crash[0];
}

TEST(Logs, NoCallLinesAtTheDefaultLevel)
{
    TempDir dir;
    {
        LoggedServer server(dir, {"--stubs", kStubs});
        ASSERT_GT(server.port, 0);
        UseServer(server.address());
        ASSERT_EQ(numrpc_call("ping"), NUMRPC_OK);
        numrpc_finalize();
    }
    const std::string log = ReadFile(dir.path + "/server.log");
    EXPECT_TRUE(CallLines(log, "ping").empty()) << log;
    CliRun bad = Cli("status --json 127.0.0.1:1 extra", dir);
    EXPECT_EQ(bad.status, 2);
}

TEST(Logs, BadLevelIsAClearError)
{
    TempDir dir;
    std::string cmd = kServer + " --log-level loud --port 0 2>" + dir.path + "/err";
    EXPECT_NE(system(cmd.c_str()), 0);
    EXPECT_TRUE(Contains(ReadFile(dir.path + "/err"), "log-level wants error, warn, notice, info or debug"));
}

// ---- Remote administration ----

void WriteSecret(const std::string &path, const std::string &secret, mode_t mode = 0600)
{
    std::ofstream(path) << secret << "\n";
    chmod(path.c_str(), mode);
}

std::string CopyModule(const std::string &from, const std::string &to)
{
    std::string cmd = "cp '" + from + "' '" + to + "'";
    EXPECT_EQ(system(cmd.c_str()), 0);
    return to;
}

TEST(RemoteAdmin, RightSecretRegistersAModuleOfTheStubDirectory)
{
    TempDir dir;
    LinkModules(dir, "stubs");
    const std::string secret = dir.path + "/secret";
    WriteSecret(secret, "correct horse battery staple");
    LoggedServer server(dir, {"--stubs", dir.path + "/stubs", "--admin-secret-file", secret});
    ASSERT_GT(server.port, 0);
    UseServer(server.address());
    int v = 0;
    EXPECT_EQ(numrpc_call("live_version", &v), NUMRPC_ENOENT);
    // The administrator copied the module there; remote admin makes it live.
    CopyModule(kFaults + "/live1.so", dir.path + "/stubs/live1.so");
    const std::string admin = "admin --server " + server.address() + " --secret-file " + secret + " ";
    CliRun r = Cli(admin + "register live1.so", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(Contains(r.out, "registered module live")) << r.out;
    bool callable = false;
    for (int i = 0; i < 5000 && !callable; i++) {  // bounded: workers roll over
        callable = numrpc_call("live_version", &v) == NUMRPC_OK;
        if (!callable) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_TRUE(callable) << numrpc_last_error_detail();
    EXPECT_EQ(v, 1);
    r = Cli(admin + "list", dir);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(Contains(r.out, "registered live ")) << r.out;
    r = Cli(admin + "unregister live", dir);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(numrpc_call("live_version", &v), NUMRPC_ENOENT);
    numrpc_finalize();
    EXPECT_TRUE(Contains(ReadFile(server.log), "remote admin from 127.0.0.1:")) << ReadFile(server.log);
}

TEST(RemoteAdmin, WrongSecretIsRefusedAndLogged)
{
    TempDir dir;
    LinkModules(dir, "stubs");
    const std::string secret = dir.path + "/secret", wrong = dir.path + "/wrong";
    WriteSecret(secret, "correct horse battery staple");
    WriteSecret(wrong, "correct horse battery stapler");
    LoggedServer server(dir, {"--stubs", dir.path + "/stubs", "--admin-secret-file", secret});
    ASSERT_GT(server.port, 0);
    CliRun r = Cli("admin --server " + server.address() + " --secret-file " + wrong + " unregister blas", dir);
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(Contains(r.err, "numrpc admin: not authorised: wrong secret")) << r.err;
    r = Cli("admin --server " + server.address() + " unregister blas", dir);
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(Contains(r.err, "no secret: give --secret-file")) << r.err;
    UseServer(server.address());
    std::vector<double> x(4, 1.0), y(4, 0.0);
    EXPECT_EQ(numrpc_call("dcopy", 4, x.data(), 1, y.data(), 1), NUMRPC_OK) << numrpc_last_error_detail();
    numrpc_finalize();
    EXPECT_TRUE(Contains(ReadFile(server.log), "refused (wrong secret): unregister blas")) << ReadFile(server.log);
}

// Raw ADMIN messages, for requests the command never sends.
std::vector<uint8_t> AdminPacket(uint32_t call_id, const std::vector<uint8_t> &payload)
{
    std::vector<uint8_t> p = {0x4E, 0x52, PROTO_VERSION, 8};
    auto u32 = [&p](uint32_t v) {
        for (int s = 24; s >= 0; s -= 8) p.push_back(static_cast<uint8_t>(v >> s));
    };
    u32(call_id);
    u32(1);  // END
    u32(static_cast<uint32_t>(payload.size()));
    p.insert(p.end(), payload.begin(), payload.end());
    return p;
}

void PutU32(std::vector<uint8_t> &p, uint32_t v)
{
    for (int s = 24; s >= 0; s -= 8) p.push_back(static_cast<uint8_t>(v >> s));
}

void PutOpaque(std::vector<uint8_t> &p, const void *data, size_t n)
{
    PutU32(p, static_cast<uint32_t>(n));
    const uint8_t *b = static_cast<const uint8_t *>(data);
    p.insert(p.end(), b, b + n);
    while (p.size() % 4) p.push_back(0);
}

// Status and detail of the next REPLY on fd (INT32_MIN if none).
std::pair<int32_t, std::string> ReadReply(int fd)
{
    std::string detail;
    int32_t status = ReadReplyStatus(fd, &detail);
    return {status, detail};
}

TEST(RemoteAdmin, UnauthenticatedRequestsAreRefused)
{
    TempDir dir;
    const std::string secret = dir.path + "/secret";
    WriteSecret(secret, "correct horse battery staple");
    LoggedServer server(dir, {"--stubs", kStubs, "--admin-secret-file", secret});
    ASSERT_GT(server.port, 0);
    // A command without asking for a challenge first.
    int fd = connect_loopback(server.port);
    ASSERT_GE(fd, 0);
    std::vector<uint8_t> body;
    PutU32(body, 2);
    const std::string cmd = "unregister blas";
    PutOpaque(body, cmd.data(), cmd.size());
    uint8_t mac[32] = {0};
    PutOpaque(body, mac, sizeof mac);
    std::vector<uint8_t> pkt = AdminPacket(5, body);
    ASSERT_EQ(send(fd, pkt.data(), pkt.size(), 0), static_cast<ssize_t>(pkt.size()));
    auto reply = ReadReply(fd);
    EXPECT_EQ(reply.first, NUMRPC_EAUTH);
    EXPECT_TRUE(Contains(reply.second, "without a challenge")) << reply.second;
    // A challenge, then an answer made without the secret (empty key).
    std::vector<uint8_t> ask;
    PutU32(ask, 1);
    pkt = AdminPacket(6, ask);
    ASSERT_EQ(send(fd, pkt.data(), pkt.size(), 0), static_cast<ssize_t>(pkt.size()));
    reply = ReadReply(fd);
    ASSERT_EQ(reply.first, NUMRPC_OK) << reply.second;
    hmac_sha256("", 0, cmd.data(), cmd.size(), nullptr, 0, nullptr, 0, mac);
    body.clear();
    PutU32(body, 2);
    PutOpaque(body, cmd.data(), cmd.size());
    PutOpaque(body, mac, sizeof mac);
    pkt = AdminPacket(7, body);
    ASSERT_EQ(send(fd, pkt.data(), pkt.size(), 0), static_cast<ssize_t>(pkt.size()));
    reply = ReadReply(fd);
    EXPECT_EQ(reply.first, NUMRPC_EAUTH);
    EXPECT_TRUE(Contains(reply.second, "wrong secret")) << reply.second;
    close(fd);

    // A server without a secret takes no remote admin at all.
    TempDir other;
    LoggedServer closed(other, {"--stubs", kStubs});
    ASSERT_GT(closed.port, 0);
    CliRun r = Cli("admin --server " + closed.address() + " --secret-file " + secret + " list", dir);
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(Contains(r.err, "remote administration is off on this server")) << r.err;

    // A secret file others may read is refused, and the server says why.
    TempDir loose;
    const std::string open_secret = loose.path + "/secret";
    WriteSecret(open_secret, "correct horse battery staple", 0644);
    LoggedServer careless(loose, {"--stubs", kStubs, "--admin-secret-file", open_secret});
    ASSERT_GT(careless.port, 0);
    r = Cli("admin --server " + careless.address() + " --secret-file " + open_secret + " list", dir);
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(Contains(r.err, "misconfigured")) << r.err;
    EXPECT_TRUE(Contains(ReadFile(careless.log), "may be read by others (mode 644)")) << ReadFile(careless.log);
}

TEST(RemoteAdmin, ModulesOutsideTheStubDirectoryAreRefused)
{
    TempDir dir;
    LinkModules(dir, "stubs");
    const std::string secret = dir.path + "/secret";
    WriteSecret(secret, "correct horse battery staple");
    LoggedServer server(dir, {"--stubs", dir.path + "/stubs", "--admin-secret-file", secret});
    ASSERT_GT(server.port, 0);
    mkdir((dir.path + "/elsewhere").c_str(), 0700);
    CopyModule(kFaults + "/live1.so", dir.path + "/elsewhere/live1.so");
    symlink((dir.path + "/elsewhere/live1.so").c_str(), (dir.path + "/stubs/sneaky.so").c_str());
    const std::string admin = "admin --server " + server.address() + " --secret-file " + secret + " ";
    for (const std::string &path : {dir.path + "/elsewhere/live1.so", std::string("../elsewhere/live1.so"),
                                    std::string("sneaky.so")}) {
        CliRun r = Cli(admin + "register " + path, dir);
        EXPECT_EQ(r.status, 1) << path;
        EXPECT_TRUE(Contains(r.err, "outside this server's stub directory")) << path << ": " << r.err;
    }
    CliRun r = Cli(admin + "register missing.so", dir);
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(Contains(r.err, "missing.so: no such module in this server's stub directory")) << r.err;
    r = Cli(admin + "unregister ../x", dir);
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(Contains(r.err, "unregister wants a module name")) << r.err;
    UseServer(server.address());
    int v = 0;
    EXPECT_EQ(numrpc_call("live_version", &v), NUMRPC_ENOENT);
    numrpc_finalize();
    EXPECT_TRUE(Contains(ReadFile(server.log), "outside this server's stub directory")) << ReadFile(server.log);
}

// A control packet of any type (STATUS 9, ADMIN 8), for malformed requests.
std::vector<uint8_t> ControlPacket(uint8_t type, uint32_t call_id, const std::vector<uint8_t> &payload)
{
    std::vector<uint8_t> p = AdminPacket(call_id, payload);
    p[3] = type;
    return p;
}

TEST(RemoteAdmin, MalformedControlRequestsAreRefusedOneByOne)
{
    TempDir dir;
    const std::string secret = dir.path + "/secret";
    WriteSecret(secret, "correct horse battery staple");
    LoggedServer server(dir, {"--stubs", kStubs, "--admin-secret-file", secret});
    ASSERT_GT(server.port, 0);
    int fd = connect_loopback(server.port);
    ASSERT_GE(fd, 0);
    auto ask = [fd](uint8_t type, uint32_t id, const std::vector<uint8_t> &body) {
        std::vector<uint8_t> pkt = ControlPacket(type, id, body);
        EXPECT_EQ(send(fd, pkt.data(), pkt.size(), 0), static_cast<ssize_t>(pkt.size()));
        return ReadReply(fd);
    };
    std::vector<uint8_t> body;
    PutU32(body, PROTO_VERSION);
    PutU32(body, 0);  // a STATUS with a field too many
    auto reply = ask(PROTO_STATUS, 1, body);
    EXPECT_EQ(reply.first, NUMRPC_EPROTO);
    EXPECT_EQ(reply.second, "malformed STATUS request");
    body.clear();
    PutU32(body, PROTO_VERSION + 1);
    reply = ask(PROTO_STATUS, 2, body);
    EXPECT_EQ(reply.first, NUMRPC_EVERSION);
    EXPECT_TRUE(Contains(reply.second, "client speaks protocol")) << reply.second;
    reply = ask(PROTO_ADMIN, 3, {});
    EXPECT_EQ(reply.first, NUMRPC_EPROTO);
    EXPECT_EQ(reply.second, "malformed ADMIN request");
    body.clear();
    PutU32(body, 3);
    reply = ask(PROTO_ADMIN, 4, body);
    EXPECT_EQ(reply.first, NUMRPC_EPROTO);
    EXPECT_EQ(reply.second, "unknown ADMIN step");
    body.clear();
    PutU32(body, 1);
    PutU32(body, 0);
    reply = ask(PROTO_ADMIN, 5, body);
    EXPECT_EQ(reply.first, NUMRPC_EPROTO);
    EXPECT_EQ(reply.second, "malformed ADMIN challenge request");
    // Commands: a short MAC, a NUL inside, a command over 1 KiB.
    const uint8_t mac[32] = {0};
    const std::string with_nul("list\0x", 6), long_cmd(1025, 'x');
    for (const std::string &cmd : {std::string("list"), with_nul, long_cmd}) {
        body.clear();
        PutU32(body, 2);
        PutOpaque(body, cmd.data(), cmd.size());
        PutOpaque(body, mac, cmd == "list" ? 16 : sizeof mac);
        reply = ask(PROTO_ADMIN, 6, body);
        EXPECT_EQ(reply.first, NUMRPC_EPROTO) << cmd.size();
        EXPECT_EQ(reply.second, "malformed ADMIN command") << cmd.size();
    }
    // The connection still serves a good request.
    body.clear();
    PutU32(body, PROTO_VERSION);
    reply = ask(PROTO_STATUS, 7, body);
    EXPECT_EQ(reply.first, NUMRPC_OK) << reply.second;
    close(fd);
}

// ---- The keyed hash (RFC 4231 test cases 1, 2 and 6) ----

std::string Hex(const uint8_t *m)
{
    char out[65];
    for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", m[i]);
    return out;
}

TEST(Hmac, Rfc4231Vectors)
{
    uint8_t mac[32], key[131];
    memset(key, 0x0b, 20);
    hmac_sha256(key, 20, "Hi There", 8, nullptr, 0, nullptr, 0, mac);
    EXPECT_EQ(Hex(mac), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    hmac_sha256("Jefe", 4, "what do ya want ", 16, "for ", 4, "nothing?", 8, mac);
    EXPECT_EQ(Hex(mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    memset(key, 0xaa, sizeof key);
    const char *text = "Test Using Larger Than Block-Size Key - Hash Key First";
    hmac_sha256(key, sizeof key, text, strlen(text), nullptr, 0, nullptr, 0, mac);
    EXPECT_EQ(Hex(mac), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    uint8_t other[32];
    memcpy(other, mac, 32);
    EXPECT_TRUE(hmac_equal(mac, other));
    other[31] ^= 1;
    EXPECT_FALSE(hmac_equal(mac, other));
}

}  // namespace
