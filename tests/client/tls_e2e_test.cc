// tls_e2e_test.cc -- TLS end to end with real processes (issue 15): a TLS
// metaserver, numrpc-servers joined to it over TLS and the client library;
// results against local BLAS/LAPACK, mutual TLS, tokens over TLS, session
// resumption on a pooled reconnect, and refusals a TLS client can read.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../common/tls_support.h"
#include "../stubs/local_lapack.h"
#include "../support/meta_proc.h"
#include "../support/server_proc.h"
#include "../support/test_util.h"
#include "../support/token_dir.h"

extern "C" {
#include "msg.h"
#include "msg_control.h"
#include "msg_meta.h"
#include "numrpc.h"
#include "protocol.h"
#include "tls.h"
}

using tls_support::Pki;
using tls_support::Random;

namespace {

const std::string kMeta = TOP_BUILDDIR "/metaserver/numrpc-metaserver";
const std::string kServer = TOP_BUILDDIR "/server/numrpc-server";
const char kBobSecret[] = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";

// --tls-cert and --tls-key of the test PKI's server certificate.
std::vector<std::string> TlsIdentity()
{
    return {"--tls-cert", Pki("server.pem"), "--tls-key", Pki("server.key")};
}

// A TLS metaserver on a free port.
std::unique_ptr<Proc> StartMeta()
{
    std::vector<std::string> args = {kMeta, "--port", "0", "--quiet", "--drop-after", "30", "--lease-ms", "0"};
    for (const std::string &a : TlsIdentity()) args.push_back(a);
    return std::make_unique<Proc>(args);
}

// A TLS numrpc-server (no admin socket), joined over TLS to the metaserver
// on meta_port when it is not 0, with the extra arguments.
std::unique_ptr<Proc> StartServer(int meta_port, const std::vector<std::string> &extra = {})
{
    std::vector<std::string> args = {kServer, "--port", "0", "--stubs", TOP_BUILDDIR "/stubs/.libs", "--quiet",
                                     "--workers", "2", "--blas-threads", "1", "--admin-socket", "none"};
    for (const std::string &a : TlsIdentity()) args.push_back(a);
    if (meta_port != 0) {
        args.insert(args.end(), {"--metaserver", "127.0.0.1:" + std::to_string(meta_port), "--metaserver-tls-ca",
                                 Pki("ca.pem")});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<Proc>(args);
}

std::string Address(int port)
{
    return "127.0.0.1:" + std::to_string(port);
}

// A TLS connection of the test's own (the CA of the test PKI), for the
// servers' and the metaserver's status and to hold a connection open.
class Peer {
  public:
    explicit Peer(int port)
    {
        ctx_ = tls_client_context_new(Pki("ca.pem").c_str(), nullptr, nullptr, &err_);
        ok_ = ctx_ != nullptr && msg_conn_open_tls(&c_, ctx_, nullptr, "127.0.0.1", port, 5000, 5000,
                                                    PROTO_DEFAULT_PACKET, &err_) == 0;
    }
    ~Peer()
    {
        if (ok_) msg_conn_free(&c_);
        tls_context_free(ctx_);
    }
    // HELLO and its reply: the connection is then counted by the server.
    int Hello()
    {
        msg_hello h = {}, back = {};
        h.version = PROTO_VERSION;
        h.packet_size = PROTO_DEFAULT_PACKET;
        int rc = ok_ ? msg_write_hello(&c_.writer, 1, &h, &err_) : err_.code;
        return rc == 0 ? msg_read_hello_reply(&c_.reader, 1, c_.label, &back, &err_) : rc;
    }
    // A server's open connections (this one included), or -1.
    int ServerConnections()
    {
        msg_status st = {};
        int n = Hello() == 0 && msg_write_status(&c_.writer, 2, &err_) == 0 &&
                        msg_read_status_reply(&c_.reader, 2, c_.label, &st, &err_) == 0
                    ? (int)st.connections
                    : -1;
        msg_status_free(&st);
        return n;
    }
    // A metaserver's status in JSON, or "".
    std::string MetaStatus()
    {
        char *text = nullptr;
        std::string out;
        if (Hello() == 0 && msg_write_meta_status(&c_.writer, 2, MSG_META_STATUS_JSON, &err_) == 0 &&
            msg_read_reply(&c_.reader, 2, c_.label, &err_) == 0 && msg_read_meta_status_reply(&c_.reader, &text, &err_) == 0)
            out = text;
        free(text);
        return out;
    }
    const char *detail() const { return err_.detail; }

  private:
    tls_context *ctx_ = nullptr;
    msg_conn c_;
    err_t err_ = {};
    bool ok_ = false;
};

// Waits (bounded: 15 s; a server joins in well under one) until the
// metaserver lists every server in ports.
bool WaitListed(int meta_port, const std::vector<int> &ports)
{
    for (int i = 0; i < 750; i++) {
        std::string js = Peer(meta_port).MetaStatus();
        bool all = !js.empty();
        for (int p : ports) all = all && Contains(js, "\"server\":\"" + Address(p) + "\"");
        if (all) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

// Waits (bounded: 10 s) until the server on port has no connection open
// but the one asking.
bool WaitNoOtherConnection(int port)
{
    for (int i = 0; i < 500; i++) {
        if (Peer(port).ServerConnections() == 1) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

// The library restarted: servers (NUMRPC_SERVER) or a metaserver
// (NUMRPC_METASERVER), TLS with the test CA unless ca is nullptr, the
// client certificate and token from the environment unless given.
int UseLibrary(const std::string &servers, int meta_port, const char *ca = "ca.pem",
               const std::string &token_file = "")
{
    numrpc_finalize();
    if (meta_port != 0) setenv("NUMRPC_METASERVER", Address(meta_port).c_str(), 1);
    else unsetenv("NUMRPC_METASERVER");
    numrpc_config cfg = {};
    std::string ca_path = ca ? Pki(ca) : "";
    cfg.servers = servers.empty() ? nullptr : servers.c_str();
    cfg.tls_ca = ca ? ca_path.c_str() : nullptr;
    cfg.token_file = token_file.empty() ? nullptr : token_file.c_str();
    return numrpc_init(&cfg);
}

// dgemm C = A*B of n-by-n through the library against the local BLAS;
// *server: who ran it.
void ExpectRightDgemm(int n, unsigned seed, std::string *server = nullptr)
{
    std::vector<double> a = Random((size_t)n * n, seed), b = Random((size_t)n * n, seed + 1);
    std::vector<double> c((size_t)n * n, 0.0), want((size_t)n * n, 0.0);
    double one = 1, zero = 0;
    ASSERT_EQ(numrpc_call("dgemm", 'N', 'N', n, n, n, one, a.data(), n, b.data(), n, zero, c.data(), n),
              NUMRPC_OK)
        << Detail();
    dgemm_("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, want.data(), &n, 1, 1);
    EXPECT_EQ(c, want);
    numrpc_call_info info;
    numrpc_last_call_info(&info);
    if (server) *server = info.server;
}

// dgesv of an n-by-n system through the library against the local LAPACK.
void ExpectRightDgesv(int n, unsigned seed)
{
    std::vector<double> a = Random((size_t)n * n, seed), b = Random((size_t)n, seed + 1);
    for (int i = 0; i < n; i++) a[(size_t)i * n + i] += n; // well conditioned
    std::vector<double> la = a, lb = b;
    std::vector<int> ipiv(n), lipiv(n);
    int nrhs = 1, info = -1, linfo = -1;
    ASSERT_EQ(numrpc_call("dgesv", n, nrhs, a.data(), n, ipiv.data(), b.data(), n, &info), NUMRPC_OK) << Detail();
    dgesv_(&n, &nrhs, la.data(), &n, lipiv.data(), lb.data(), &n, &linfo);
    EXPECT_EQ(info, linfo);
    EXPECT_EQ(b, lb);
    EXPECT_EQ(a, la);
    EXPECT_EQ(ipiv, lipiv);
}

class TlsE2e : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { openblas_set_num_threads(1); } // as the servers' workers
    void TearDown() override
    {
        numrpc_finalize();
        unsetenv("NUMRPC_METASERVER");
        unsetenv("NUMRPC_TLS_CERT");
        unsetenv("NUMRPC_TLS_KEY");
    }
};

} // namespace

// A TLS metaserver, two TLS servers joined to it over TLS, the library
// placing calls through it: results equal the local ones, and when the
// server that ran them stops, the other one (checked against the
// certificate it announced too) runs the next.
TEST_F(TlsE2e, CallsPlacedByATlsMetaserverOnTlsServersEqualLocal)
{
    auto meta = StartMeta();
    auto s1 = StartServer(meta->port()), s2 = StartServer(meta->port());
    // A TLS server's helper measures the server through a connection of
    // its own before it joins: that connection must speak TLS too.
    ASSERT_TRUE(WaitListed(meta->port(), {s1->port(), s2->port()}))
        << "the TLS servers did not join: " << Peer(meta->port()).MetaStatus();
    ASSERT_EQ(UseLibrary("", meta->port()), NUMRPC_OK) << Detail();
    std::string ran;
    ExpectRightDgemm(60, 1, &ran);
    ExpectRightDgesv(50, 3);
    ASSERT_TRUE(ran == Address(s1->port()) || ran == Address(s2->port())) << ran;
    Proc &first = ran == Address(s1->port()) ? *s1 : *s2, &other = ran == Address(s1->port()) ? *s2 : *s1;
    first.stop(SIGTERM);
    std::string then;
    ExpectRightDgemm(40, 5, &then);
    EXPECT_EQ(then, Address(other.port()));
    EXPECT_TRUE(meta->alive());
}

// Mutual TLS: without a client certificate the call is refused with a clear
// error and the server goes on; with NUMRPC_TLS_CERT/KEY it runs.
TEST_F(TlsE2e, MutualTlsNeedsTheClientCertificate)
{
    auto server = StartServer(0, {"--tls-client-ca", Pki("ca.pem")});
    ASSERT_EQ(UseLibrary(Address(server->port()), 0), NUMRPC_OK) << Detail();
    std::vector<double> x(8, 1.0), y(8, 0.0);
    int rc = numrpc_call("dcopy", 8, x.data(), 1, y.data(), 1);
    EXPECT_EQ(rc, NUMRPC_EAUTH) << Detail();
    EXPECT_TRUE(Contains(Detail(), Address(server->port()) + " refused this client's TLS certificate: ")) << Detail();
    EXPECT_TRUE(Contains(Detail(), "certificate required")) << Detail();
    EXPECT_TRUE(Contains(Detail(), "set NUMRPC_TLS_CERT and NUMRPC_TLS_KEY")) << Detail();
    EXPECT_EQ(y, std::vector<double>(8, 0.0));
    setenv("NUMRPC_TLS_CERT", Pki("client.pem").c_str(), 1);
    setenv("NUMRPC_TLS_KEY", Pki("client.key").c_str(), 1);
    ASSERT_EQ(UseLibrary(Address(server->port()), 0), NUMRPC_OK) << Detail();
    ExpectRightDgemm(30, 7);
    ExpectRightDgesv(20, 9);
    EXPECT_TRUE(server->alive());
}

// The same refusal for an asynchronous call (issue 29: it was NUMRPC_EIO
// "receive: Protocol error"): whether the interface is fetched first or
// the farm's connection meets it.
TEST_F(TlsE2e, MutualTlsRefusalIsEauthForAsynchronousCallsToo)
{
    auto server = StartServer(0, {"--tls-client-ca", Pki("ca.pem")});
    ASSERT_EQ(UseLibrary(Address(server->port()), 0), NUMRPC_OK) << Detail();
    std::vector<double> x(8, 1.0), y(8, 0.0);
    int id = 0;
    int rc = numrpc_call_async(&id, "dcopy", 8, x.data(), 1, y.data(), 1);
    if (rc == NUMRPC_OK) rc = numrpc_wait(id);
    EXPECT_EQ(rc, NUMRPC_EAUTH) << Detail();
    EXPECT_TRUE(Contains(Detail(), "refused this client's TLS certificate")) << Detail();
    EXPECT_TRUE(Contains(Detail(), "set NUMRPC_TLS_CERT and NUMRPC_TLS_KEY")) << Detail();
    EXPECT_EQ(y, std::vector<double>(8, 0.0));
    EXPECT_TRUE(server->alive());
}

// A token limited to the BLAS module: its BLAS calls run over TLS, a LAPACK
// call is refused by code and message.
TEST_F(TlsE2e, TokenLimitedToOneModuleIsRefusedAnotherOverTls)
{
    TokenDir dir;
    std::string table = dir.Write("server.tokens", std::string("bob ") + kBobSecret + " call:blas\n");
    std::string bob = dir.Write("bob.token", std::string("bob ") + kBobSecret + "\n");
    auto server = StartServer(0, {"--token-file", table});
    ASSERT_EQ(UseLibrary(Address(server->port()), 0, "ca.pem", bob), NUMRPC_OK) << Detail();
    ExpectRightDgemm(20, 11);
    int n = 2, nrhs = 1, info = -1;
    std::vector<double> a = {4, 1, 2, 3}, b = {1, 2};
    std::vector<int> ipiv(2);
    EXPECT_EQ(numrpc_call("dgesv", n, nrhs, a.data(), n, ipiv.data(), b.data(), n, &info), NUMRPC_EAUTH);
    EXPECT_TRUE(Contains(Detail(), "token bob may not call module lapack")) << Detail();
    EXPECT_EQ(b, (std::vector<double>{1, 2}));
    ExpectRightDgemm(20, 13); // the connection and the server go on
}

// The server closes the idle pooled connection; the next call reconnects
// and its handshake resumes the session (numrpc_call_info says so).
TEST_F(TlsE2e, PooledReconnectResumesTheSession)
{
    auto server = StartServer(0, {"--idle-timeout", "200"});
    ASSERT_EQ(UseLibrary(Address(server->port()), 0), NUMRPC_OK) << Detail();
    numrpc_call_info info;
    ExpectRightDgemm(20, 15);
    numrpc_last_call_info(&info);
    EXPECT_EQ(info.connections, 1u);
    EXPECT_EQ(info.tls_resumed, 0u) << "the first connection: a full handshake";
    ExpectRightDgemm(20, 17);
    numrpc_last_call_info(&info);
    EXPECT_EQ(info.connections, 0u) << "a pooled connection";
    ASSERT_TRUE(WaitNoOtherConnection(server->port())) << "the server closed the idle connection";
    ExpectRightDgemm(20, 19);
    numrpc_last_call_info(&info);
    EXPECT_EQ(info.connections, 1u) << "reconnected";
    EXPECT_EQ(info.tls_resumed, 1u) << "the session resumed";
}

// A TLS server refusing at accept time answers in plain numrpc framing,
// without a handshake: the TLS client reads its code and detail.
TEST_F(TlsE2e, RefusalBeforeTlsIsReadByTheTlsClient)
{
    auto server = StartServer(0, {"--max-connections-per-peer", "1"});
    Peer held(server->port());
    ASSERT_EQ(held.Hello(), 0) << held.detail();
    ASSERT_EQ(UseLibrary(Address(server->port()), 0), NUMRPC_OK) << Detail();
    std::vector<double> x(8, 1.0), y(8, 0.0);
    EXPECT_EQ(numrpc_call("dcopy", 8, x.data(), 1, y.data(), 1), NUMRPC_EBUSY) << Detail();
    EXPECT_TRUE(Contains(Detail(), "too many connections from this address: 1 open (limit 1, "
                                   "--max-connections-per-peer)"))
        << Detail();
    EXPECT_TRUE(Contains(Detail(), "said before TLS, unauthenticated")) << Detail();
    EXPECT_TRUE(server->alive());
}

// A plain client to a TLS server still hears what to set.
TEST_F(TlsE2e, PlainClientToATlsServerHearsThatTlsIsRequired)
{
    auto server = StartServer(0);
    ASSERT_EQ(UseLibrary(Address(server->port()), 0, nullptr), NUMRPC_OK) << Detail();
    std::vector<double> x(8, 1.0), y(8, 0.0);
    EXPECT_EQ(numrpc_call("dcopy", 8, x.data(), 1, y.data(), 1), NUMRPC_EAUTH) << Detail();
    EXPECT_TRUE(Contains(Detail(), "this server requires TLS (set NUMRPC_TLS_CA)")) << Detail();
    ASSERT_EQ(UseLibrary(Address(server->port()), 0), NUMRPC_OK) << Detail();
    ExpectRightDgemm(10, 21);
}
