// tls_paths_test.cc -- the paths of a TLS deployment beyond plain calls, with
// real processes: a TLS (mutual TLS, tokens) server's metaserver helper
// measures the server through its own TLS port; remote admin over TLS; a
// handle moved between two TLS servers with tokens.
#include <gtest/gtest.h>

#include <cblas.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../common/tls_support.h"
#include "../support/meta_proc.h"
#include "../support/test_util.h"
#include "../support/token_dir.h"
#include "numrpc.h"
extern "C" {
#include "msg.h"
#include "msg_meta.h"
#include "protocol.h"
}

namespace {

using tls_support::Pki;

const std::string kMeta = TOP_BUILDDIR "/metaserver/numrpc-metaserver";
const std::string kServer = TOP_BUILDDIR "/server/numrpc-server";
const std::string kCli = TOP_BUILDDIR "/cli/numrpc";
const std::string kStubs = TOP_BUILDDIR "/stubs/.libs";
const std::string kLive1 = TOP_BUILDDIR "/tests/server/.libs/live1.so";

// A client token the servers of these tests know (`call status`).
const char kClientSecret[] = "0123456789abcdef0123456789abcdef";

std::unique_ptr<Proc> StartServer(const std::vector<std::string> &extra)
{
    std::vector<std::string> args = {kServer, "--port", "0", "--bind", "127.0.0.1", "--quiet", "--workers", "2",
                                     "--blas-threads", "1", "--admin-socket", "none"};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<Proc>(args);
}

// The client library started again for servers, with mutual TLS (the
// tests' CA and client certificate) and the token file own.
int InitTlsClient(const std::string &servers, const std::string &own)
{
    numrpc_finalize();
    const std::string ca = Pki("ca.pem"), cert = Pki("client.pem"), key = Pki("client.key");
    numrpc_config cfg = {};
    cfg.servers = servers.c_str();
    cfg.token_file = own.c_str();
    cfg.tls_ca = ca.c_str();
    cfg.tls_cert = cert.c_str();
    cfg.tls_key = key.c_str();
    return numrpc_init(&cfg);
}

// The metaserver's status JSON over plain TCP without a token ("" on failure).
std::string MetaStatusJson(int port)
{
    msg_conn c;
    err_t err;
    char *text = nullptr;
    if (msg_conn_open(&c, "127.0.0.1", port, 2000, 5000, PROTO_DEFAULT_PACKET, &err) != 0) return "";
    msg_hello h = {};
    h.version = PROTO_VERSION;
    h.packet_size = PROTO_DEFAULT_PACKET;
    int rc = msg_write_hello(&c.writer, 1, &h, &err);
    if (rc == 0) rc = msg_read_hello_reply(&c.reader, 1, c.label, &h, &err);
    if (rc == 0) rc = msg_write_meta_status(&c.writer, 2, MSG_META_STATUS_JSON, &err);
    if (rc == 0) rc = msg_read_reply(&c.reader, 2, c.label, &err);
    if (rc == 0) rc = msg_read_meta_status_reply(&c.reader, &text, &err);
    msg_conn_free(&c);
    std::string out = rc == 0 && text ? text : "";
    free(text);
    return out;
}

// server's entry of the status JSON, up to the next entry ("" when absent).
std::string ServerEntry(const std::string &js, const std::string &server)
{
    size_t at = js.find("\"server\":\"" + server + "\"");
    if (at == std::string::npos) return "";
    size_t next = js.find("\"server\":\"", at + 1);
    return js.substr(at, next == std::string::npos ? std::string::npos : next - at);
}

// A server's own TLS settings, and whether it has tokens.
struct SelfCase {
    const char *name;
    const char *cert;      // its --tls-cert stem
    const char *client_ca; // --tls-client-ca ("" = none)
    bool tokens;
};

class SelfMeasure : public ::testing::TestWithParam<SelfCase> {};

// The helper that joins a metaserver measures P_calc(n) by calling its own
// server: over TLS now, trusting the server's own certificate (also one
// for another host: no host name is checked on the pinned certificate),
// presenting it when mutual TLS asks for a client certificate (here from a
// CA that did not issue it), proving a `call` token when tokens are on.
// Before, it spoke plain TCP, was refused, retried for ever and never joined.
TEST_P(SelfMeasure, ATlsServerJoinsWithAMeasuredSpeedCurve)
{
    const SelfCase &k = GetParam();
    TokenDir dir;
    auto meta = std::make_unique<Proc>(std::vector<std::string>{kMeta, "--port", "0", "--quiet"});
    ASSERT_GT(meta->port(), 0);
    std::vector<std::string> args = {"--stubs", kStubs, "--metaserver", "127.0.0.1:" + std::to_string(meta->port()),
                                     "--tls-cert", Pki((std::string(k.cert) + ".pem").c_str()), "--tls-key",
                                     Pki((std::string(k.cert) + ".key").c_str())};
    if (k.client_ca[0]) args.insert(args.end(), {"--tls-client-ca", Pki(k.client_ca)});
    if (k.tokens)
        args.insert(args.end(), {"--token-file", dir.Write("server.tokens", std::string("status-only ") +
                                                                                  "fedcba9876543210fedcba9876543210 status\n" +
                                                                                  "alice " + kClientSecret + " call\n")});
    auto server = StartServer(args);
    ASSERT_GT(server->port(), 0);
    const std::string label = "127.0.0.1:" + std::to_string(server->port());
    std::string entry;
    for (int i = 0; i < 750 && entry.find("\"n\":512,\"flops\":") == std::string::npos; i++) { // 15 s at most
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        entry = ServerEntry(MetaStatusJson(meta->port()), label);
    }
    ASSERT_NE(entry, "") << label << " never joined: " << MetaStatusJson(meta->port());
    // The measured curve (the default one has no points), with the
    // server's certificate announced for clients to check.
    EXPECT_NE(entry.find("{\"n\":64,\"flops\":"), std::string::npos) << entry;
    EXPECT_NE(entry.find("{\"n\":512,\"flops\":"), std::string::npos) << entry;
    EXPECT_NE(entry.find(tls_support::Fingerprint(Pki((std::string(k.cert) + ".pem").c_str()))), std::string::npos)
        << entry;
    EXPECT_TRUE(server->alive());
}

INSTANTIATE_TEST_SUITE_P(Tls, SelfMeasure,
                         ::testing::Values(SelfCase{"Tls", "server", "", false},
                                           SelfCase{"CertificateForAnotherHost", "otherhost", "", false},
                                           SelfCase{"MutualTlsOtherClientCa", "server", "other-ca.pem", false},
                                           SelfCase{"MutualTlsAndTokens", "server", "ca.pem", true}),
                         [](const ::testing::TestParamInfo<SelfCase> &i) { return i.param.name; });

// The numrpc command with args, the environment given before it (already
// quoted).
CommandRun Cli(const std::string &env, const std::string &args, const TempDir &dir)
{
    return RunCommand(env + " " + kCli + " " + args, dir.path + "/cli.err");
}

// Remote administration of a server that runs mutual TLS and tokens:
// `numrpc admin --server` speaks TLS with NUMRPC_TLS_CA (and the client
// certificate of NUMRPC_TLS_CERT / NUMRPC_TLS_KEY), registers a module of
// the server's stub directory, and a TLS client with a token then calls
// it; the same command without NUMRPC_TLS_CA hears that TLS is required.
TEST(RemoteAdminOverTls, RegistersAModuleAClientThenCalls)
{
    TempDir dir;
    TokenDir tokens;
    ASSERT_EQ(system(("mkdir -p '" + dir.path + "/stubs'").c_str()), 0);
    const std::string secret = tokens.Write("admin.secret", "correct horse battery staple\n");
    const std::string table = tokens.Write("server.tokens", std::string("alice ") + kClientSecret + " call\n");
    const std::string own = tokens.Write("alice.token", std::string("alice ") + kClientSecret + "\n");
    auto server = StartServer({"--stubs", dir.path + "/stubs", "--admin-secret-file", secret, "--token-file", table,
                               "--tls-cert", Pki("server.pem"), "--tls-key", Pki("server.key"), "--tls-client-ca",
                               Pki("ca.pem")});
    ASSERT_GT(server->port(), 0);
    const std::string addr = "127.0.0.1:" + std::to_string(server->port());
    ASSERT_EQ(system(("cp '" + kLive1 + "' '" + dir.path + "/stubs/live1.so'").c_str()), 0);
    const std::string admin = "admin --server " + addr + " --secret-file " + secret + " ";

    CommandRun plain = Cli("", admin + "list", dir);
    EXPECT_NE(plain.status, 0);
    EXPECT_TRUE(Contains(plain.err, "this server requires TLS (set NUMRPC_TLS_CA)")) << plain.err;

    const std::string tls_env = "NUMRPC_TLS_CA='" + Pki("ca.pem") + "' NUMRPC_TLS_CERT='" + Pki("client.pem") +
                                "' NUMRPC_TLS_KEY='" + Pki("client.key") + "'";
    CommandRun r = Cli(tls_env, admin + "register live1.so", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(Contains(r.out, "registered module live")) << r.out;

    ASSERT_EQ(InitTlsClient(addr, own), NUMRPC_OK) << numrpc_last_error_detail();
    int v = 0;
    bool callable = false;
    for (int i = 0; i < 2500 && !callable; i++) { // bounded: the workers roll over to the new module
        callable = numrpc_call("live_version", &v) == NUMRPC_OK;
        if (!callable) std::this_thread::sleep_for(std::chrono::milliseconds(4));
    }
    ASSERT_TRUE(callable) << numrpc_last_error_detail();
    EXPECT_EQ(v, 1);
    r = Cli(tls_env, admin + "unregister live", dir);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(numrpc_call("live_version", &v), NUMRPC_ENOENT) << numrpc_last_error_detail();
    numrpc_finalize();
}


// A call naming handles on two servers that run mutual TLS and tokens: the
// server that runs it pulls the other handle over TLS (--peer-tls-ca, its
// --tls-cert as client certificate) proving its own token
// (--peer-token-file); the result is dgemm's.  Without the token, or
// without TLS, the source refuses the pull and the call says why.
TEST(HandleMovesOverTls, APullSpeaksTlsAndProvesItsToken)
{
    const char kPullerSecret[] = "fedcba9876543210fedcba9876543210";
    TokenDir tokens;
    const std::string table = tokens.Write("server.tokens", std::string("alice ") + kClientSecret + " call\n" +
                                                                "puller " + kPullerSecret + " call\n");
    const std::string own = tokens.Write("alice.token", std::string("alice ") + kClientSecret + "\n");
    const std::string puller = tokens.Write("puller.token", std::string("puller ") + kPullerSecret + "\n");
    const std::vector<std::string> tls = {"--stubs", kStubs, "--token-file", table, "--tls-cert", Pki("server.pem"),
                                          "--tls-key", Pki("server.key"), "--tls-client-ca", Pki("ca.pem")};
    auto src = StartServer(tls);
    ASSERT_GT(src->port(), 0);
    const std::string src_addr = "127.0.0.1:" + std::to_string(src->port());
    auto with = [&](std::vector<std::string> more) {
        std::vector<std::string> args = tls;
        args.insert(args.end(), {"--pull-from", src_addr});
        args.insert(args.end(), more.begin(), more.end());
        return StartServer(args);
    };
    auto dst = with({"--peer-tls-ca", Pki("ca.pem"), "--peer-token-file", puller});
    auto no_token = with({"--peer-tls-ca", Pki("ca.pem")});
    auto no_tls = with({"--peer-token-file", puller});

    ASSERT_EQ(InitTlsClient(src_addr, own), NUMRPC_OK) << numrpc_last_error_detail();
    const int m = 16, k = 48, n = 48;
    std::vector<double> a(m * k), b(k * n), want(m * n, 0.0);
    for (int i = 0; i < m * k; i++) a[i] = std::sin(0.37 * i);
    for (int i = 0; i < k * n; i++) b[i] = std::cos(0.09 * i);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, want.data(),
                m);
    numrpc_data *ha = nullptr;
    ASSERT_EQ(numrpc_data_put(&ha, src_addr.c_str(), NUMRPC_T_DOUBLE, a.data(), m, k, m), NUMRPC_OK)
        << numrpc_last_error_detail();
    struct Case {
        Proc *server;
        const char *refusal; // "" when the call succeeds
    } cases[] = {{dst.get(), ""}, {no_token.get(), "this server pulls with no token (--peer-token-file)"}, {no_tls.get(), "requires TLS"}};
    for (const Case &c : cases) {
        const std::string addr = "127.0.0.1:" + std::to_string(c.server->port());
        numrpc_data *hb = nullptr;
        ASSERT_EQ(numrpc_data_put(&hb, addr.c_str(), NUMRPC_T_DOUBLE, b.data(), k, n, k), NUMRPC_OK)
            << numrpc_last_error_detail();
        std::vector<double> got(m * n, 0.0);
        int rc = numrpc_call("dgemm", 'N', 'N', m, n, k, 1.0, ha, m, hb, k, 0.0, got.data(), m);
        if (c.refusal[0] == '\0') {
            ASSERT_EQ(rc, NUMRPC_OK) << numrpc_last_error_detail();
            numrpc_call_info info;
            numrpc_last_call_info(&info);
            EXPECT_EQ(std::string(info.server), addr);
            for (int i = 0; i < m * n; i++) ASSERT_NEAR(got[i], want[i], 1e-12 * (1 + std::fabs(want[i]))) << i;
        } else {
            EXPECT_NE(rc, NUMRPC_OK);
            std::string why = numrpc_last_error_detail();
            EXPECT_TRUE(Contains(why, c.refusal)) << why;
            EXPECT_TRUE(Contains(why, "moving handle")) << why;
        }
        EXPECT_EQ(numrpc_data_free(hb), NUMRPC_OK);
    }
    EXPECT_EQ(numrpc_data_free(ha), NUMRPC_OK);
    numrpc_finalize();
}

// A routine whose threads read one remote file at once over TLS, while the
// dispatcher sends keepalives every 5 ms: each exchange holds the
// connection alone (no two records sealed with one sequence number, no two
// messages interleaved), so the sums are the file's and the connection
// serves the next call.  Before, a second reader took "someone reads" for
// "I hold the connection" (server/files_call.c).
TEST(RemoteFilesOverTls, ThreadsReadAtOnceBesideKeepalives)
{
    auto server = StartServer({"--stubs", TOP_BUILDDIR "/tests/sdpa/.libs", "--keepalive-ms", "5", "--tls-cert",
                               Pki("server.pem"), "--tls-key", Pki("server.key")});
    ASSERT_GT(server->port(), 0);
    char path[] = "/tmp/numrpc-rfile-threads-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    std::vector<unsigned char> bytes((6u << 20) + 1234);
    long want = 0;
    uint32_t x = 777;
    for (auto &b : bytes) {
        x = x * 1103515245u + 12345u;
        b = static_cast<unsigned char>(x >> 23);
        want += b;
    }
    ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    close(fd);
    numrpc_finalize();
    const std::string ca = Pki("ca.pem"), addr = "127.0.0.1:" + std::to_string(server->port());
    numrpc_config cfg = {};
    cfg.servers = addr.c_str();
    cfg.tls_ca = ca.c_str();
    ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK) << numrpc_last_error_detail();
    for (int round = 0; round < 3; round++) {
        long got_bytes = -1, got_sum = -1;
        ASSERT_EQ(numrpc_call("rfile_sum_threads", path, 4, &got_bytes, &got_sum), NUMRPC_OK)
            << "round " << round << ": " << numrpc_last_error_detail();
        EXPECT_EQ(got_bytes, static_cast<long>(bytes.size()));
        EXPECT_EQ(got_sum, want);
    }
    long got_bytes = -1, got_sum = -1; // and one reader on the same connection
    EXPECT_EQ(numrpc_call("rfile_sum", path, &got_bytes, &got_sum), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_EQ(got_sum, want);
    numrpc_finalize();
    unlink(path);
}

} // namespace
