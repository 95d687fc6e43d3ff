// tls_client_test.cc -- libnumrpc and the metaserver over TLS (issue 15):
// calls placed by a TLS metaserver, the client's clear errors, token proofs
// bound to the channel, and a lease that cannot send a call elsewhere.
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../common/tls_support.h"
#include "../stubs/local_lapack.h"
#include "../support/meta_proc.h"
#include "../support/server_proc.h"
#include "../support/token_dir.h"

extern "C" {
#include "auth.h"
#include "iface.h"
#include "msg.h"
#include "msg_meta.h"
#include "numrpc.h"
#include "protocol.h"
#include "sock.h"
#include "tls.h"
#include "tokens.h"
}

using tls_support::Fingerprint;
using tls_support::Pki;

namespace {

const std::string kMeta = TOP_BUILDDIR "/metaserver/numrpc-metaserver";
const char kJoinSecret[] = "00112233445566778899aabbccddeeff";

// A metaserver on a free port; TLS with the certificate `cert` of the test
// PKI ("" = plain), then the extra arguments.
std::unique_ptr<Proc> StartMeta(const std::string &cert, const std::vector<std::string> &extra = {})
{
    std::vector<std::string> args = {kMeta, "--port", "0", "--quiet", "--drop-after", "30", "--lease-ms", "0"};
    if (!cert.empty()) {
        args.insert(args.end(), {"--tls-cert", Pki((cert + ".pem").c_str()), "--tls-key", Pki((cert + ".key").c_str())});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<Proc>(args);
}

// A TLS front for a plain numrpc-server (the server itself is plain until
// the server side's TLS lands): a process that takes TLS connections with
// the certificate `cert` of the test PKI and relays each, through the
// record layer, to 127.0.0.1:backend.  Killed at the end.
class TlsFront {
  public:
    TlsFront(const std::string &cert, int backend)
    {
        err_t err;
        int lfd = sock_listen("127.0.0.1", 0, &port_, &err);
        if (lfd < 0) return;
        pid_ = fork();
        if (pid_ == 0) Serve(lfd, cert, backend);
        close(lfd);
    }
    ~TlsFront()
    {
        if (pid_ > 0) stop_process(pid_, SIGKILL, 1);
    }
    int port() const { return port_; }

  private:
    [[noreturn]] static void Serve(int lfd, const std::string &cert, int backend)
    {
        signal(SIGCHLD, SIG_IGN); // relays are not waited for
        err_t err;
        tls_context *ctx = tls_server_context_new(Pki((cert + ".pem").c_str()).c_str(),
                                                  Pki((cert + ".key").c_str()).c_str(), nullptr, &err);
        for (;;) {
            int fd = accept(lfd, nullptr, nullptr);
            if (fd < 0) continue;
            if (fork() == 0) {
                close(lfd);
                _exit(ctx ? Relay(ctx, fd, backend) : 1);
            }
            close(fd);
        }
    }
    // Bytes both ways until either side ends (bounded by 60 s of silence).
    static int Relay(tls_context *ctx, int fd, int backend)
    {
        err_t err;
        static tls_stream_state st;
        if (tls_accept_blocking(ctx, fd, 10000, &st, &err) != 0) return 1;
        transport tls = tls_record_transport(fd, &st);
        int plain = connect_loopback(backend);
        if (plain < 0) return 1;
        char buf[65536];
        for (;;) {
            pollfd p[2] = {{fd, POLLIN, 0}, {plain, POLLIN, 0}};
            if (tls.ops->pending(&tls) == 0 && poll(p, 2, 60000) <= 0) return 1;
            if (tls.ops->pending(&tls) > 0 || (p[0].revents & (POLLIN | POLLHUP))) {
                ssize_t n = tls.ops->recv(&tls, buf, sizeof buf);
                if (n <= 0 || write(plain, buf, (size_t)n) != n) return 0;
            }
            if (p[1].revents & (POLLIN | POLLHUP)) {
                ssize_t n = read(plain, buf, sizeof buf);
                if (n <= 0 || tls_support::WriteFull(&tls, buf, (size_t)n) != 0) return 0;
            }
        }
    }
    pid_t pid_ = -1;
    int port_ = 0;
};

// A joiner written in the test: over TLS (the test CA) to a metaserver, it
// proves the join token and announces host:port with an announced
// certificate fingerprint and the routines (descriptors fetched from a
// real server).
class Joiner {
  public:
    Joiner(int meta_port, const std::string &token_file) : token_file_(token_file)
    {
        ctx_ = tls_client_context_new(Pki("ca.pem").c_str(), nullptr, nullptr, &err_);
        ok_ = ctx_ && msg_conn_open_tls(&c_, ctx_, nullptr, "127.0.0.1", meta_port, 5000, 5000,
                                        PROTO_DEFAULT_PACKET, &err_) == 0;
    }
    ~Joiner()
    {
        if (ok_) msg_conn_free(&c_);
        tls_context_free(ctx_);
    }
    // HELLO proving the token (bound to the channel), then JOIN.
    int Join(int port, const std::string &fingerprint, const std::vector<msg_meta_routine> &routines, double flops)
    {
        if (!ok_) return err_.code;
        msg_hello h = {};
        h.version = PROTO_VERSION;
        h.packet_size = PROTO_DEFAULT_PACKET;
        int proving = 0;
        int rc = auth_client_hello_file(&c_, token_file_.c_str(), &h, 1, 2, &proving, &err_);
        if (rc == 0 && proving) rc = auth_client_finish(&c_, 2, &err_);
        else if (rc == 0) rc = msg_write_hello(&c_.writer, 1, &h, &err_);
        if (rc == 0 && !proving) rc = msg_read_hello_reply(&c_.reader, 1, "joiner", &h, &err_);
        msg_meta_join j = {};
        snprintf(j.host, sizeof j.host, "127.0.0.1");
        j.port = (uint32_t)port;
        snprintf(j.name, sizeof j.name, "tls_client_test");
        j.slots = 2;
        j.curve.npoints = 1;
        j.curve.n[0] = 512;
        j.curve.rate[0] = flops;
        j.routines = const_cast<msg_meta_routine *>(routines.data());
        j.nroutines = (uint32_t)routines.size();
        snprintf(j.fingerprint, sizeof j.fingerprint, "%s", fingerprint.c_str());
        msg_meta_joined joined;
        if (rc == 0) rc = msg_write_meta_join(&c_.writer, 3, &j, &err_);
        if (rc == 0) rc = msg_read_reply(&c_.reader, 3, "joiner", &err_);
        if (rc == 0) rc = msg_read_meta_join_reply(&c_.reader, &joined, &err_);
        return rc;
    }
    const char *detail() const { return err_.detail; }

  private:
    std::string token_file_;
    tls_context *ctx_ = nullptr;
    msg_conn c_;
    err_t err_ = {};
    bool ok_ = false;
};

// The descriptor of routine from a plain server (owned by the caller:
// free r.blob).
msg_meta_routine Descriptor(int port, const char *routine)
{
    msg_meta_routine r = {};
    msg_conn c;
    err_t err;
    iface_t f;
    msg_hello h = {};
    h.version = PROTO_VERSION;
    h.packet_size = PROTO_DEFAULT_PACKET;
    snprintf(r.name, sizeof r.name, "%s", routine);
    if (msg_conn_open(&c, "127.0.0.1", port, 5000, 5000, PROTO_DEFAULT_PACKET, &err) != 0) return r;
    int rc = msg_write_hello(&c.writer, 1, &h, &err);
    if (rc == 0) rc = msg_read_hello_reply(&c.reader, 1, "server", &h, &err);
    if (rc == 0) rc = msg_write_get_iface(&c.writer, 2, routine, &err);
    if (rc == 0) rc = msg_read_iface_reply(&c.reader, 2, "server", &r.blob, &r.len, &err);
    if (rc == 0 && iface_decode(r.blob, r.len, &f, &err) == 0) {
        r.hash = f.hash;
        iface_free(&f);
    }
    msg_conn_close(&c);
    msg_conn_free(&c);
    return r;
}

// The client library for one test: NUMRPC_METASERVER, a CA (nullptr: plain).
class Client {
  public:
    Client(int meta_port, const char *ca)
    {
        setenv("NUMRPC_METASERVER", ("127.0.0.1:" + std::to_string(meta_port)).c_str(), 1);
        unsetenv("NUMRPC_SERVER");
        unsetenv("NUMRPC_TOKEN_FILE");
        numrpc_config cfg = {};
        cfg.tls_ca = ca;
        rc_ = numrpc_init(&cfg);
    }
    ~Client()
    {
        numrpc_finalize();
        unsetenv("NUMRPC_METASERVER");
    }
    int init_rc() const { return rc_; }

  private:
    int rc_;
};

// dcopy of 8 doubles through the library; *y_ok: y is what local BLAS gives.
int RemoteDcopy(bool *y_ok)
{
    double x[8], y[8] = {}, want[8] = {};
    for (int i = 0; i < 8; i++) x[i] = 0.5 * i - 1.25;
    int n = 8, one = 1;
    dcopy_(&n, x, &one, want, &one);
    int rc = numrpc_call("dcopy", 8, x, 1, y, 1);
    *y_ok = memcmp(y, want, sizeof y) == 0;
    return rc;
}

// One plain server behind two TLS fronts, both announced with dcopy to a
// TLS metaserver: the liar, ranked first (it claims 1e15 flop/s) with
// another certificate's fingerprint, and the honest one.
struct LiarAndHonest {
    ServerProc server;
    std::unique_ptr<Proc> meta = StartMeta("server");
    TlsFront liar{"server", server.port()}, honest{"server", server.port()};
    Joiner liar_joiner{meta->port(), ""}, honest_joiner{meta->port(), ""};
    // Both joined: "", or what failed.
    std::string Announce()
    {
        msg_meta_routine dcopy = Descriptor(server.port(), "dcopy");
        if (dcopy.blob == nullptr) return "no descriptor of dcopy";
        std::string failed;
        if (liar_joiner.Join(liar.port(), Fingerprint(Pki("client.pem")), {dcopy}, 1e15) != 0)
            failed = liar_joiner.detail();
        else if (honest_joiner.Join(honest.port(), Fingerprint(Pki("server.pem")), {dcopy}, 1e6) != 0)
            failed = honest_joiner.detail();
        free(dcopy.blob);
        return failed;
    }
};

// What the tests share: token files (a metaserver's, a joiner's).
class TlsClientTest : public ::testing::Test {
  protected:
    void SetUp() override
    {
        meta_tokens_ = dir_.Write("meta.tokens", std::string("srv ") + kJoinSecret + " join\n");
        join_token_ = dir_.Write("srv.token", std::string("srv ") + kJoinSecret + "\n");
    }
    TokenDir dir_;
    std::string meta_tokens_, join_token_;
};

} // namespace

// The TLS core's helper for --tls-cert: the fingerprint clients will expect.
TEST(TlsFingerprint, OfACertificateFileIsTheOneItsHandshakeShows)
{
    char fp[TLS_FINGERPRINT_HEX + 1];
    err_t err;
    ASSERT_EQ(tls_file_fingerprint(Pki("server.pem").c_str(), fp, &err), 0) << err.detail;
    EXPECT_EQ(std::string(fp), Fingerprint(Pki("server.pem")));
    EXPECT_EQ(tls_file_fingerprint("/nonexistent.pem", fp, &err), NUMRPC_EINVAL);
    EXPECT_NE(std::string(err.detail).find("/nonexistent.pem"), std::string::npos) << err.detail;
}

// A server announced over TLS (the front shows the announced certificate),
// queried over TLS, its call run: result against local BLAS.
TEST_F(TlsClientTest, CallPlacedByATlsMetaserverRuns)
{
    ServerProc server;
    auto meta = StartMeta("server");
    TlsFront front("server", server.port());
    msg_meta_routine dcopy = Descriptor(server.port(), "dcopy");
    ASSERT_NE(dcopy.blob, nullptr);
    Joiner joiner(meta->port(), "");
    ASSERT_EQ(joiner.Join(front.port(), Fingerprint(Pki("server.pem")), {dcopy}, 1e9), 0) << joiner.detail();
    free(dcopy.blob);
    Client client(meta->port(), Pki("ca.pem").c_str());
    ASSERT_EQ(client.init_rc(), 0) << numrpc_last_error_detail();
    bool y_ok = false;
    ASSERT_EQ(RemoteDcopy(&y_ok), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_TRUE(y_ok);
    numrpc_call_info info;
    numrpc_last_call_info(&info);
    EXPECT_EQ(std::string(info.server), "127.0.0.1:" + std::to_string(front.port()));
}

// A lease names a server and the certificate it announced: a server that
// presents another one (here: the announced fingerprint is another
// certificate's) is refused, and the call runs on the next ranked server.
TEST_F(TlsClientTest, FingerprintMismatchIsRefusedAndTheNextServerUsed)
{
    LiarAndHonest s; // the liar claims to be much faster: it is ranked first
    ASSERT_EQ(s.Announce(), "");
    Client client(s.meta->port(), Pki("ca.pem").c_str());
    bool y_ok = false;
    ASSERT_EQ(RemoteDcopy(&y_ok), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_TRUE(y_ok);
    numrpc_call_info info;
    numrpc_last_call_info(&info);
    EXPECT_EQ(std::string(info.server), "127.0.0.1:" + std::to_string(s.honest.port()));
}

// The same through the asynchronous farm: a certificate that is not the
// announced one fails the connect before any byte of the call left, so the
// calls move on to the next server like after any other connect failure;
// only when every server fails is the error reported (as
// FingerprintMismatchAloneIsAClearError shows for one call).
TEST_F(TlsClientTest, FingerprintMismatchInTheAsyncFarmMovesOnToTheNextServer)
{
    LiarAndHonest s;
    ASSERT_EQ(s.Announce(), "");
    Client client(s.meta->port(), Pki("ca.pem").c_str());
    const int kCalls = 8, n = 8;
    double x[n], want[n];
    std::vector<std::vector<double>> y(kCalls, std::vector<double>(n, 0.0));
    for (int i = 0; i < n; i++) x[i] = 0.5 * i - 1.25;
    int one = 1, nn = n;
    dcopy_(&nn, x, &one, want, &one);
    int ids[kCalls];
    for (int c = 0; c < kCalls; c++)
        ASSERT_EQ(numrpc_call_async(&ids[c], "dcopy", n, x, 1, y[c].data(), 1), NUMRPC_OK) << numrpc_last_error_detail();
    for (int c = 0; c < kCalls; c++) {
        ASSERT_EQ(numrpc_wait(ids[c]), NUMRPC_OK) << "call " << c << ": " << numrpc_last_error_detail();
        EXPECT_EQ(std::vector<double>(want, want + n), y[c]) << "call " << c;
    }
    numrpc_server_stats stats[4];
    int nstats = std::min(numrpc_server_stats_get(stats, 4), 4);
    for (int i = 0; i < nstats; i++)
        if (std::string(stats[i].server) == "127.0.0.1:" + std::to_string(s.liar.port()))
            EXPECT_EQ(stats[i].calls, 0u) << "a call ran on the server with the wrong certificate";
}

// A lone server that fails verification: a clear error, for a blocking
// call and for an asynchronous one (once the farm has no other server to
// try), and nothing written to the caller's arrays.
TEST_F(TlsClientTest, FingerprintMismatchAloneIsAClearError)
{
    ServerProc server;
    auto meta = StartMeta("server");
    TlsFront liar("server", server.port());
    msg_meta_routine dcopy = Descriptor(server.port(), "dcopy");
    Joiner j1(meta->port(), "");
    ASSERT_EQ(j1.Join(liar.port(), Fingerprint(Pki("client.pem")), {dcopy}, 1e9), 0) << j1.detail();
    free(dcopy.blob);
    Client client(meta->port(), Pki("ca.pem").c_str());
    bool y_ok = false;
    EXPECT_EQ(RemoteDcopy(&y_ok), NUMRPC_EAUTH);
    std::string detail = numrpc_last_error_detail();
    EXPECT_NE(detail.find("presented certificate " + Fingerprint(Pki("server.pem"))), std::string::npos) << detail;
    EXPECT_NE(detail.find("expected " + Fingerprint(Pki("client.pem"))), std::string::npos) << detail;

    double x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8] = {};
    int id = 0;
    int rc = numrpc_call_async(&id, "dcopy", 8, x, 1, y, 1);
    if (rc == NUMRPC_OK) rc = numrpc_wait(id);
    EXPECT_EQ(rc, NUMRPC_EAUTH);
    detail = numrpc_last_error_detail();
    EXPECT_NE(detail.find("presented certificate " + Fingerprint(Pki("server.pem"))), std::string::npos) << detail;
    EXPECT_EQ(std::vector<double>(y, y + 8), std::vector<double>(8, 0.0)); // nothing written
}

// Each client-side failure is a clear error that names its cause.
struct ErrorCase {
    const char *meta_cert; // "" = a plain metaserver
    const char *client_ca; // nullptr = a plain client
    int code;
    const char *says;
};

class TlsClientErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(TlsClientErrors, NameTheirCause)
{
    const ErrorCase &e = GetParam();
    auto meta = StartMeta(e.meta_cert);
    Client client(meta->port(), e.client_ca ? Pki(e.client_ca).c_str() : nullptr);
    ASSERT_EQ(client.init_rc(), 0) << numrpc_last_error_detail();
    bool y_ok = false;
    EXPECT_EQ(RemoteDcopy(&y_ok), e.code);
    std::string detail = numrpc_last_error_detail();
    EXPECT_NE(detail.find(e.says), std::string::npos) << detail;
    EXPECT_TRUE(meta->alive()); // the metaserver is unharmed
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TlsClientErrors,
    ::testing::Values(ErrorCase{"server", "other-ca.pem", NUMRPC_EAUTH, "unable to get local issuer certificate"},
                      ErrorCase{"expired", "ca.pem", NUMRPC_EAUTH, "certificate has expired"},
                      ErrorCase{"otherhost", "ca.pem", NUMRPC_EAUTH, "not for host 127.0.0.1"},
                      ErrorCase{"server", nullptr, NUMRPC_EAUTH, "this metaserver requires TLS (set NUMRPC_TLS_CA"},
                      ErrorCase{"", "ca.pem", NUMRPC_ECONNECT, "did not answer TLS"}));

TEST(TlsClientConfig, ABadCaFileFailsInitWithItsName)
{
    numrpc_config cfg = {};
    cfg.tls_ca = "/nonexistent/ca.pem";
    EXPECT_EQ(numrpc_init(&cfg), NUMRPC_EINVAL);
    EXPECT_NE(std::string(numrpc_last_error_detail()).find("/nonexistent/ca.pem"), std::string::npos)
        << numrpc_last_error_detail();
    numrpc_finalize();
}

// Tokens over TLS: the proofs both ways cover the channel binding, so a
// proof made without it (as over plain TCP) is refused.
TEST_F(TlsClientTest, TokenProofsOverTlsCoverTheChannel)
{
    auto meta = StartMeta("server", {"--token-file", meta_tokens_});
    { // bound (auth_client_hello_file): joins
        Joiner ok(meta->port(), join_token_);
        EXPECT_EQ(ok.Join(9, "", {}, 1e9), 0) << ok.detail();
    }
    err_t err;
    tls_context *ctx = tls_client_context_new(Pki("ca.pem").c_str(), nullptr, nullptr, &err);
    ASSERT_NE(ctx, nullptr) << err.detail;
    token t = {};
    ASSERT_EQ(tokens_load_own(join_token_.c_str(), &t, &err), 0) << err.detail;
    msg_hello h = {}, reply = {};
    h.version = PROTO_VERSION;
    h.packet_size = PROTO_DEFAULT_PACKET;
    { // the metaserver's proof is bound: checked without the binding, it fails
        msg_conn c;
        ASSERT_EQ(msg_conn_open_tls(&c, ctx, nullptr, "127.0.0.1", meta->port(), 5000, 5000, PROTO_DEFAULT_PACKET,
                                    &err), 0) << err.detail;
        EXPECT_EQ(auth_client_hello(&c, &t, &h, nullptr, 1, 2, &err), NUMRPC_EAUTH);
        EXPECT_NE(std::string(err.detail).find("did not prove"), std::string::npos) << err.detail;
        msg_conn_free(&c);
    }
    { // the client's proof without the binding is refused
        msg_conn c;
        ASSERT_EQ(msg_conn_open_tls(&c, ctx, nullptr, "127.0.0.1", meta->port(), 5000, 5000, PROTO_DEFAULT_PACKET,
                                    &err), 0) << err.detail;
        msg_hello mine = h;
        mine.has_token = 1;
        snprintf(mine.token, sizeof mine.token, "srv");
        ASSERT_EQ(auth_nonce(mine.nonce, &err), 0);
        ASSERT_EQ(msg_write_hello(&c.writer, 1, &mine, &err), 0);
        ASSERT_EQ(msg_read_hello_reply(&c.reader, 1, "meta", &reply, &err), 0) << err.detail;
        uint8_t proof[HMAC_SHA256_BYTES];
        auth_proof(&t, AUTH_BY_CLIENT, mine.nonce, reply.nonce, nullptr, proof);
        ASSERT_EQ(msg_write_auth(&c.writer, 2, proof, &err), 0);
        EXPECT_EQ(auth_client_finish(&c, 2, &err), NUMRPC_EAUTH);
        EXPECT_NE(std::string(err.detail).find("token srv was refused"), std::string::npos) << err.detail;
        msg_conn_free(&c);
    }
    tls_context_free(ctx);
}
