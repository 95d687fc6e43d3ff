// isolation_test.cc -- a real TLS + token server running the hostile module
// (hostile.idl): a taken-over routine is refused the dispatcher, secret files
// and TCP, finds no one else's secrets in its memory, and the next call works.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "../common/tls_support.h"
#include "../support/server_proc.h"
#include "../support/test_util.h"
#include "../support/token_dir.h"
#include "numrpc.h"
extern "C" {
#include "sandbox.h"
}

namespace {

using tls_support::Pki;

const char kModules[] = TOP_BUILDDIR "/tests/server/.libs";
const char kAliceSecret[] = "a11ce0a11ce0a11ce0a11ce0a11ce0a11ce0a11ce0a11ce0a11ce0a11ce0a11c";
const char kBobSecret[] = "b0bb0b0123456789abcdef0123456789abcdef0123456789abcdef0123456789";

// What hostile_probe's result holds (hostile.idl).
enum { P_PTRACE, P_VM_READ, P_MEM, P_ENVIRON, P_KILL, P_SOCKET, P_CONNECT, P_IO_URING, P_USERNS, P_CONFINED, P_PATHS };

std::vector<uint8_t> FromHex(const std::string &hex)
{
    std::vector<uint8_t> out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back((uint8_t)std::stoi(hex.substr(i, 2), nullptr, 16));
    return out;
}

std::vector<uint8_t> Bytes(const std::string &s)
{
    return std::vector<uint8_t>(s.begin(), s.end());
}

// The TLS key's private scalar (P-256: 32 bytes, big-endian).
std::vector<uint8_t> PrivateScalar(const std::string &key_file)
{
    std::vector<uint8_t> out;
    FILE *f = fopen(key_file.c_str(), "r");
    if (f == nullptr) return out;
    EVP_PKEY *k = PEM_read_PrivateKey(f, nullptr, nullptr, nullptr);
    fclose(f);
    BIGNUM *bn = nullptr;
    if (k != nullptr && EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_PRIV_KEY, &bn) == 1) {
        out.resize(32);
        BN_bn2binpad(bn, out.data(), 32);
    }
    BN_clear_free(bn);
    EVP_PKEY_free(k);
    return out;
}

// 32 characters from the middle of the PEM file's base64 body.
std::string PemMiddle(const std::string &key_file)
{
    std::ifstream in(key_file);
    std::string line, body;
    while (std::getline(in, line))
        if (line.rfind("-----", 0) != 0) body += line;
    return body.size() >= 64 ? body.substr(body.size() / 2 - 16, 32) : body;
}

// A TCP port on 127.0.0.1 that accepts: a connect to it works unless refused.
struct Listener {
    int fd = -1, port = 0;
    Listener()
    {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (bind(fd, (sockaddr *)&a, sizeof a) == 0 && listen(fd, 8) == 0 && getsockname(fd, (sockaddr *)&a, &len) == 0)
            port = ntohs(a.sin_port);
    }
    ~Listener() { close(fd); }
};

class Isolation : public ::testing::Test {
  protected:
    void SetUp() override
    {
        tokens_ = dir_.Write("tokens", std::string("alice ") + kAliceSecret + " call status\nbob " + kBobSecret +
                                           " call status\n");
        alice_ = dir_.Write("alice", std::string("alice ") + kAliceSecret + "\n");
        bob_ = dir_.Write("bob", std::string("bob ") + kBobSecret + "\n");
        // One worker: every call of the test runs in the same process.
        server_ = new ServerProc({"--stubs", kModules, "--tls-cert", Pki("server.pem"), "--tls-key",
                                  Pki("server.key"), "--token-file", tokens_, "--workers", "1", "--max-workers", "1"});
        ASSERT_EQ(NUMRPC_OK, As(alice_)) << Detail();
    }
    void TearDown() override
    {
        numrpc_finalize();
        delete server_;
    }
    int As(const std::string &token_file) { return Use(server_->address(), token_file, true); }
    // The client library started again for the server at addr, with a
    // token file (or none) and the tests' CA (or plain TCP).
    static int Use(const std::string &addr, const std::string &token_file, bool tls)
    {
        numrpc_finalize();
        std::string ca = Pki("ca.pem");
        numrpc_config cfg{};
        cfg.servers = addr.c_str();
        cfg.token_file = token_file.empty() ? nullptr : token_file.c_str();
        cfg.pin_file = "";
        cfg.tls_ca = tls ? ca.c_str() : nullptr;
        return numrpc_init(&cfg);
    }
    // hostile_probe on the dispatcher, with the given paths.
    std::vector<int> Probe(std::vector<std::string> paths, int port)
    {
        std::vector<char *> p;
        for (auto &s : paths) p.push_back(const_cast<char *>(s.c_str()));
        std::vector<int> result(paths.size() + P_PATHS, -1);
        int k = (int)paths.size();
        int rc = numrpc_call("hostile_probe", (int)server_->pid(), k, p.data(), port, result.data());
        EXPECT_EQ(NUMRPC_OK, rc) << Detail();
        return result;
    }
    // hostile_scan for each pattern: its places in the worker's memory.
    std::vector<int> Scan(const std::vector<std::vector<uint8_t>> &patterns, double *scanned)
    {
        std::vector<int> lens;
        std::vector<char> masked;
        for (auto &p : patterns) {
            lens.push_back((int)p.size());
            for (uint8_t b : p) masked.push_back((char)(b ^ 0xA5));
        }
        std::vector<int> found(patterns.size(), -1);
        int rc = numrpc_call("hostile_scan", (int)patterns.size(), lens.data(), (int)masked.size(), masked.data(),
                             found.data(), scanned);
        EXPECT_EQ(NUMRPC_OK, rc) << Detail();
        return found;
    }
    void ExpectKeepWorks()
    {
        std::vector<double> a = {1, 2, 3.5};
        double sum = 0;
        ASSERT_EQ(NUMRPC_OK, numrpc_call("hostile_keep", 3, a.data(), &sum)) << Detail();
        EXPECT_EQ(6.5, sum);
    }

    TokenDir dir_;
    std::string tokens_, alice_, bob_;
    ServerProc *server_ = nullptr;
};

TEST_F(Isolation, ARoutineIsRefusedTheDispatcherSecretsAndTcp)
{
    Listener listener;
    ASSERT_GT(listener.port, 0);
    std::vector<std::string> paths = {tokens_, Pki("server.key"), bob_, "/etc/shadow", dir_.dir()};
    std::vector<int> r = Probe(paths, listener.port);
    EXPECT_EQ(7, r[P_CONFINED]) << "the worker is not confined (1 no-new-privs, 2 seccomp, 4 no capability): "
                                   "is sandbox_confine_worker called in worker_main?";
    EXPECT_EQ(EPERM, r[P_PTRACE]) << "ptrace(PTRACE_ATTACH) of the dispatcher";
    EXPECT_EQ(EPERM, r[P_VM_READ]) << "process_vm_readv of the dispatcher";
    EXPECT_EQ(EACCES, r[P_MEM]) << "open /proc/<dispatcher>/mem";
    EXPECT_EQ(EACCES, r[P_ENVIRON]) << "open /proc/<dispatcher>/environ";
    if (sandbox_landlock_abi() >= 6) {
        EXPECT_EQ(EPERM, r[P_KILL]) << "kill(dispatcher, 0)";
    }
    EXPECT_EQ(EPERM, r[P_SOCKET]) << "socket(AF_INET)";
    EXPECT_EQ(EPERM, r[P_CONNECT]) << "connect to 127.0.0.1:" << listener.port;
    EXPECT_EQ(EPERM, r[P_IO_URING]) << "io_uring_setup";
    EXPECT_EQ(EPERM, r[P_USERNS]) << "unshare(CLONE_NEWUSER)";
    for (size_t i = 0; i < paths.size(); i++)
        EXPECT_EQ(EACCES, r[P_PATHS + i]) << "open " << paths[i] << ": " << strerror(r[P_PATHS + i]);
    // The worker lives on, and serves the next call.
    ExpectKeepWorks();
    std::vector<int> again = Probe({tokens_}, listener.port);
    EXPECT_EQ(EACCES, again[P_PATHS]);
}

// The memory searches: what a worker may not hold (workers come from a
// spawner that never read a secret; a connection given back is wiped).
TEST_F(Isolation, NoOtherTokensSecretInTheWorker)
{
    double scanned = 0;
    std::vector<int> found = Scan({FromHex(kBobSecret), Bytes(kBobSecret)}, &scanned);
    EXPECT_GT(scanned, 1e6) << "the scan read almost nothing";
    EXPECT_EQ(0, found[0]) << "bob's secret (bytes) is in the memory of alice's worker";
    EXPECT_EQ(0, found[1]) << "bob's secret (hex) is in the memory of alice's worker";
}

TEST_F(Isolation, NoTlsPrivateKeyInTheWorker)
{
    std::vector<uint8_t> scalar = PrivateScalar(Pki("server.key"));
    ASSERT_EQ(32u, scalar.size());
    std::vector<uint8_t> reversed(scalar.rbegin(), scalar.rend()); // a BIGNUM's limbs on x86-64
    std::string pem = PemMiddle(Pki("server.key"));
    ASSERT_EQ(32u, pem.size());
    double scanned = 0;
    std::vector<int> found = Scan({scalar, reversed, Bytes(pem)}, &scanned);
    EXPECT_GT(scanned, 1e6);
    EXPECT_EQ(0, found[0]) << "the TLS private key (big-endian scalar) is in the worker";
    EXPECT_EQ(0, found[1]) << "the TLS private key (a BIGNUM's limbs) is in the worker";
    EXPECT_EQ(0, found[2]) << "the TLS private key (PEM text) is in the worker";
}

TEST_F(Isolation, NoEarlierCallersArraysInTheWorker)
{
    // bob's call leaves its array on the only worker ...
    std::vector<double> a(20000);
    for (size_t i = 0; i < a.size(); i++) a[i] = 1e-3 * (double)i + 0.123456789012345;
    const double sentinel[4] = {3.14159265358979e101, -2.71828182845904e-77, 1.41421356237309e55, 6.02214076e23};
    for (int i = 0; i < 4; i++) a[10000 + i] = sentinel[i];
    ASSERT_EQ(NUMRPC_OK, As(bob_)) << Detail();
    double sum = 0;
    ASSERT_EQ(NUMRPC_OK, numrpc_call("hostile_keep", (int)a.size(), a.data(), &sum)) << Detail();
    // ... and alice's routine looks for it there.
    ASSERT_EQ(NUMRPC_OK, As(alice_)) << Detail();
    std::vector<uint8_t> pattern((const uint8_t *)sentinel, (const uint8_t *)sentinel + sizeof sentinel);
    double scanned = 0;
    std::vector<int> found = Scan({pattern}, &scanned);
    EXPECT_EQ(0, found[0]) << "bob's array, sent in an earlier call, is in the memory of alice's worker";
}

// Another connection, alive on another worker or idle in the dispatcher:
// its TLS state (keys, and the plaintext of its last records, where bob's
// array ends) is mapped by no worker but the one it is lent to.  Before,
// every worker mapped every connection's state: bob's array was there.
TEST_F(Isolation, AnotherConnectionsPlaintextIsNotInTheWorker)
{
    ServerProc two({"--stubs", kModules, "--tls-cert", Pki("server.pem"), "--tls-key", Pki("server.key"),
                    "--token-file", tokens_, "--workers", "2", "--max-workers", "2"});
    auto init = [&](const std::string &token_file) { return Use(two.address(), token_file, true); };
    // The end of bob's request (the last TLS records) carries the sentinel.
    std::vector<double> a(20000);
    for (size_t i = 0; i < a.size(); i++) a[i] = 1e-3 * (double)i + 0.987654321098765;
    const double sentinel[4] = {2.99792458e108, -6.62607015e-74, 1.602176634e59, 9.1093837015e31};
    for (int i = 0; i < 4; i++) a[a.size() - 64 + i] = sentinel[i];
    numrpc_finalize(); // no connection of the fixture's crosses the fork
    int to_bob[2], from_bob[2];
    ASSERT_EQ(0, pipe(to_bob));
    ASSERT_EQ(0, pipe(from_bob));
    pid_t bob = fork();
    ASSERT_GE(bob, 0);
    if (bob == 0) { // bob calls, then keeps his connection open until told
        double sum = 0;
        char ok = init(bob_) == NUMRPC_OK && numrpc_call("hostile_keep", (int)a.size(), a.data(), &sum) == NUMRPC_OK;
        char go;
        if (write(from_bob[1], &ok, 1) != 1 || read(to_bob[0], &go, 1) != 1) _exit(2);
        _exit(0);
    }
    char ok = 0;
    ASSERT_EQ(1, read(from_bob[0], &ok, 1));
    EXPECT_EQ(1, ok) << "bob's call failed";
    ASSERT_EQ(NUMRPC_OK, init(alice_)) << Detail();
    std::vector<uint8_t> pattern((const uint8_t *)sentinel, (const uint8_t *)sentinel + sizeof sentinel);
    double scanned = 0;
    std::vector<int> found = Scan({pattern}, &scanned);
    EXPECT_GT(scanned, 1e6) << "the scan read almost nothing";
    EXPECT_EQ(0, found[0]) << "bob's array, on his open connection, is in the memory of alice's worker";
    ExpectKeepWorks();
    char go = 1;
    EXPECT_EQ(1, write(to_bob[1], &go, 1));
    int status = -1;
    waitpid(bob, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (int fd : {to_bob[0], to_bob[1], from_bob[0], from_bob[1]}) close(fd);
}

// Every worker maps every slot (the load and memory replies report), but
// only its own one writable: a routine cannot set another worker's
// deadline (the dispatcher would stop that caller's call) or its state.
TEST_F(Isolation, AWorkerWritesOnlyItsOwnSlot)
{
    ServerProc three({"--stubs", kModules, "--workers", "3", "--max-workers", "3", "--admin-socket", "none"});
    ASSERT_EQ(NUMRPC_OK, Use(three.address(), "", false)) << Detail();
    int result[3] = {-1, -1, -1};
    ASSERT_EQ(NUMRPC_OK, numrpc_call("hostile_slots", result)) << Detail();
    EXPECT_EQ(3, result[0]) << "the worker should map the three slots";
    EXPECT_EQ(1, result[1]) << "slots the worker may write: its own only";
    EXPECT_EQ(0, result[2]) << "mprotect made another worker's slot writable";
    ExpectKeepWorks();
}

// The admin socket answers its server's user, as a worker is without
// --user: a routine cannot connect to it (the filter refuses connect()
// in a worker that needs none) and, where a worker may connect (to an MPI
// job's socket), the socket refuses the server's own descendants.
TEST_F(Isolation, ARoutineCannotAdministerItsServer)
{
    TempDir dir;
    const std::string sock = dir.path + "/admin.sock";
    std::vector<std::string> args = {"--stubs", kModules, "--workers", "1", "--admin-socket", sock};
    struct stat st;
    const std::string engine = TOP_BUILDDIR "/mpi/numrpc-mpi-engine";
    const bool mpi = stat(engine.c_str(), &st) == 0 && system("command -v mpirun >/dev/null 2>&1") == 0;
    for (int with_mpi = 0; with_mpi <= (mpi ? 1 : 0); with_mpi++) {
        std::vector<std::string> a = args;
        if (with_mpi) a.insert(a.end(), {"--mpi-ranks", "1", "--mpi-args", "--oversubscribe", "--mpi-engine", engine});
        ServerProc server(a);
        ASSERT_EQ(NUMRPC_OK, Use(server.address(), "", false)) << Detail();
        int result[2] = {-1, -1};
        ASSERT_EQ(NUMRPC_OK, numrpc_call("hostile_admin", sock.c_str(), result)) << Detail();
        if (!with_mpi) {
            EXPECT_EQ(EPERM, result[0]) << "connect() from a routine: " << strerror(result[0]);
        } else {
            EXPECT_EQ(0, result[0]) << "with an MPI job a worker may connect: " << strerror(result[0]);
            EXPECT_EQ(1, result[1]) << "the admin socket answered a routine";
        }
        ExpectKeepWorks();
        numrpc_finalize();
    }
    if (!mpi) GTEST_SKIP() << "no MPI engine or mpirun: the admin socket's own refusal was not tried";
}

// Every thread of a worker is confined, the BLAS pool's included: OpenBLAS
// starts its threads when the modules load, before the worker confines
// itself, so they are stopped first and start again, confined, at the next
// BLAS call.  Checked from /proc after a dgemm on two BLAS threads: no
// capability, no-new-privs, the seccomp filter, on every thread.
TEST_F(Isolation, EveryThreadOfAWorkerIsConfined)
{
    ServerProc blas({"--workers", "1", "--max-workers", "1", "--blas-threads", "2", "--admin-socket", "none"});
    ASSERT_EQ(NUMRPC_OK, Use(blas.address(), "", false)) << Detail();
    const int n = 300;
    std::vector<double> a(n * n, 1.0), b(n * n, 2.0), c(n * n, 0.0);
    ASSERT_EQ(NUMRPC_OK, numrpc_call("dgemm", 'N', 'N', n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n))
        << Detail();
    EXPECT_EQ(2.0 * n, c[0]);
    int threads = 0;
    std::ifstream children("/proc/" + std::to_string(blas.pid()) + "/task/" + std::to_string(blas.pid()) + "/children");
    for (int pid; children >> pid;) {
        std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
        std::string name;
        if (!(comm >> name) || name != "numrpc-server") continue; // the spawner
        DIR *tasks = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
        ASSERT_NE(nullptr, tasks);
        while (dirent *e = readdir(tasks)) {
            if (e->d_name[0] == '.') continue;
            std::ifstream status("/proc/" + std::to_string(pid) + "/task/" + e->d_name + "/status");
            std::string line, caps, nnp, filter;
            while (std::getline(status, line)) {
                if (line.rfind("CapEff:", 0) == 0) caps = line.substr(7);
                if (line.rfind("NoNewPrivs:", 0) == 0) nnp = line.substr(11);
                if (line.rfind("Seccomp:", 0) == 0) filter = line.substr(8);
            }
            threads++;
            EXPECT_EQ("0000000000000000", caps.substr(caps.find_first_not_of(" \t"))) << "thread " << e->d_name;
            EXPECT_EQ("1", nnp.substr(nnp.find_first_not_of(" \t"))) << "thread " << e->d_name;
            EXPECT_EQ("2", filter.substr(filter.find_first_not_of(" \t"))) << "thread " << e->d_name;
        }
        closedir(tasks);
    }
    EXPECT_GE(threads, 2) << "the worker ran dgemm on one thread: nothing was checked beyond it";
}

// The scan itself finds what is there: its own caller's array of this call
// is not a pattern, but a string the module keeps is.
TEST_F(Isolation, ScanFindsWhatIsThere)
{
    double scanned = 0;
    // hostile_probe's description is in the module's read-only data.
    std::vector<int> found = Scan({Bytes("tries on process target (the dispatcher)")}, &scanned);
    EXPECT_GE(found[0], 1) << "the scan is blind: it did not find the module's own text";
}

TEST(IsolationStart, RefusesASecretWorkersCouldRead)
{
    TokenDir dir;
    std::string tokens = dir.Write("tokens", std::string("alice ") + kAliceSecret + " call\n");
    std::string err_text;
    // The token file inside the stubs directory, which workers read.
    int rc = run_server_to_exit({"--stubs", dir.dir(), "--token-file", tokens}, &err_text);
    EXPECT_NE(0, rc);
    EXPECT_NE(std::string::npos, err_text.find("--token-file " + tokens + " lies beneath")) << err_text;
}

} // namespace
