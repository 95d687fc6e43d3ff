// tls_server_test.cc -- numrpc-server with --tls-cert: calls over TLS equal
// local BLAS (lent to workers and back, pipelined, 8 MiB, resumed), a crash
// notice sealed right, clear refusals, mutual TLS, slow handshakes, tokens
// bound to the channel, and the refuse-to-start rule.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../common/tls_support.h"
#include "../support/raw_peer.h"
#include "../support/server_proc.h"
#include "../support/test_util.h"
#include "../support/token_dir.h"
#include "protocol.h"
extern "C" {
#include "auth.h"
#include "iface.h"
#include "marshal.h"
#include "msg.h"
#include "msg_control.h"
#include "sock.h"
#include "tls.h"
void dcopy_(const int *n, const double *x, const int *incx, double *y, const int *incy);
double ddot_(const int *n, const double *x, const int *incx, const double *y, const int *incy);
}

namespace {

using tls_support::Pki;
using tls_support::Random;

const char kFaults[] = TOP_BUILDDIR "/tests/server/.libs";

// The arguments of a TLS server with the given certificate (server, expired...).
std::vector<std::string> TlsArgs(const std::string &cert = "server", std::vector<std::string> more = {})
{
    std::vector<std::string> args = {"--tls-cert", Pki((cert + ".pem").c_str()), "--tls-key",
                                     Pki((cert + ".key").c_str())};
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

// A client connection through common's TLS stream and message layer.
struct Client {
    tls_context *ctx = nullptr;
    msg_conn c{};
    err_t err{};
    uint32_t next_id = 1;

    // ca: the CA file servers are checked against; cert/key: mutual TLS.
    explicit Client(const char *ca = "ca.pem", const char *cert = nullptr, const char *key = nullptr)
    {
        ctx = tls_client_context_new(Pki(ca).c_str(), cert ? Pki(cert).c_str() : nullptr,
                                     key ? Pki(key).c_str() : nullptr, &err);
        msg_conn_init(&c, PROTO_DEFAULT_PACKET, &err);
    }
    ~Client()
    {
        msg_conn_free(&c);
        tls_context_free(ctx);
    }
    int Connect(int port, const char *host = "127.0.0.1")
    {
        transport t;
        int rc = tls_client_connect(&t, ctx, host, port, 5000, nullptr, &err);
        if (rc == 0) msg_conn_attach(&c, t, "tls server");
        return rc;
    }
    int Hello()
    {
        msg_hello h = {}, back = {};
        h.version = PROTO_VERSION;
        h.packet_size = PROTO_DEFAULT_PACKET;
        uint32_t id = next_id++;
        int rc = msg_write_hello(&c.writer, id, &h, &err);
        if (rc == 0) rc = msg_read_hello_reply(&c.reader, id, c.label, &back, &err);
        return rc;
    }
    int Iface(const char *name, iface_t *f)
    {
        uint32_t id = next_id++;
        uint8_t *blob = nullptr;
        uint32_t len = 0;
        int rc = msg_write_get_iface(&c.writer, id, name, &err);
        if (rc == 0) rc = msg_read_iface_reply(&c.reader, id, c.label, &blob, &len, &err);
        if (rc == 0) rc = iface_decode(blob, len, f, &err);
        free(blob);
        return rc;
    }
    // Connected, HELLO said, and name's interface in *f.
    int Open(int port, const char *name, iface_t *f)
    {
        int rc = Connect(port);
        if (rc == 0) rc = Hello();
        return rc == 0 ? Iface(name, f) : rc;
    }
    // A CALL of f with argv, written (its id returned in *id).
    int Send(const iface_t *f, void *const *argv, iface_shape *shapes, uint32_t *id)
    {
        msg_call_header h = {};
        snprintf(h.name, sizeof h.name, "%s", f->name);
        h.hash = f->hash;
        h.nargs = f->nparams;
        *id = next_id++;
        int rc = marshal_eval_shapes(f, argv, shapes, &err);
        if (rc == 0) rc = msg_write_call_header(&c.writer, *id, &h, &err);
        if (rc == 0) rc = marshal_write(&c.writer, f, argv, shapes, MARSHAL_REQUEST, &err);
        if (rc == 0) rc = wire_end(&c.writer, &err);
        return rc;
    }
    // Its reply, the results into argv.
    int Receive(const iface_t *f, void *const *argv, const iface_shape *shapes, uint32_t id)
    {
        msg_call_result res;
        int rc = msg_read_reply(&c.reader, id, c.label, &err);
        if (rc == 0) rc = msg_read_call_result(&c.reader, &res, &err);
        if (rc == 0) rc = marshal_read_scalars(&c.reader, f, argv, shapes, MARSHAL_REPLY, &err);
        if (rc == 0) rc = marshal_read_arrays(&c.reader, f, argv, shapes, MARSHAL_REPLY, &err);
        if (rc == 0) rc = wire_expect_end(&c.reader, &err);
        return rc;
    }
    int Call(const iface_t *f, void *const *argv)
    {
        std::vector<iface_shape> shapes(f->nparams);
        uint32_t id;
        int rc = Send(f, argv, shapes.data(), &id);
        return rc != 0 ? rc : Receive(f, argv, shapes.data(), id);
    }
    int Status(msg_status *st)
    {
        uint32_t id = next_id++;
        int rc = msg_write_status(&c.writer, id, &err);
        if (rc == 0) rc = msg_read_status_reply(&c.reader, id, c.label, st, &err);
        return rc;
    }
};

// dcopy of n doubles on cl (interface fetched already): y equals local dcopy's.
void ExpectRightDcopy(Client *cl, const iface_t *f, int n, unsigned seed)
{
    std::vector<double> x = Random(static_cast<size_t>(n), seed), y(n, 0.0), want(n, 0.0);
    int inc = 1;
    void *argv[] = {&n, x.data(), &inc, y.data(), &inc};
    ASSERT_EQ(cl->Call(f, argv), 0) << cl->err.detail;
    dcopy_(&n, x.data(), &inc, want.data(), &inc);
    EXPECT_EQ(memcmp(y.data(), want.data(), y.size() * sizeof(double)), 0) << "n " << n;
}

void ExpectRightDdot(Client *cl, const iface_t *f, int n, unsigned seed)
{
    std::vector<double> x = Random(static_cast<size_t>(n), seed), y = Random(static_cast<size_t>(n), seed + 1);
    int inc = 1;
    double result = 0;
    void *argv[] = {&n, x.data(), &inc, y.data(), &inc, &result};
    ASSERT_EQ(cl->Call(f, argv), 0) << cl->err.detail;
    EXPECT_EQ(result, ddot_(&n, x.data(), &inc, y.data(), &inc));
}

// A connected client that said HELLO and holds dcopy's and ddot's interfaces.
struct BlasClient : Client {
    iface_t dcopy{}, ddot{};
    bool ready = false;
    explicit BlasClient(int port, const char *ca = "ca.pem", const char *cert = nullptr, const char *key = nullptr)
        : Client(ca, cert, key)
    {
        ready = Connect(port) == 0 && Hello() == 0 && Iface("dcopy", &dcopy) == 0 && Iface("ddot", &ddot) == 0;
    }
    ~BlasClient()
    {
        iface_free(&dcopy);
        iface_free(&ddot);
    }
};

// ---- Calls ----

TEST(TlsServer, HelloAndCallsEqualLocalBlas)
{
    ServerProc server(TlsArgs());
    BlasClient cl(server.port());
    ASSERT_TRUE(cl.ready) << cl.err.detail;
    ExpectRightDcopy(&cl, &cl.dcopy, 1000, 1);
    ExpectRightDdot(&cl, &cl.ddot, 1000, 2);
    Client status; // STATUS goes to the dispatcher, on a connection no worker holds
    ASSERT_EQ(status.Connect(server.port()), 0) << status.err.detail;
    msg_status st = {};
    ASSERT_EQ(status.Status(&st), 0) << status.err.detail;
    EXPECT_TRUE(st.has_security);
    EXPECT_EQ(st.security, MSG_STATUS_TLS) << "TLS, no tokens";
    msg_status_free(&st);
}

TEST(TlsServer, EightMiBCopy)
{
    ServerProc server(TlsArgs());
    BlasClient cl(server.port());
    ASSERT_TRUE(cl.ready) << cl.err.detail;
    ExpectRightDcopy(&cl, &cl.dcopy, 1 << 20, 3);
}

// The shared stream states (about 50 KiB per connection the server may
// hold) are mapped in every worker, beside --max-worker-memory.
TEST(TlsServer, SharedStatesDoNotCountAgainstWorkerMemory)
{
    ServerProc server(TlsArgs("server", {"--max-connections", "30000", "--max-worker-memory", "1G"}));
    BlasClient cl(server.port());
    ASSERT_TRUE(cl.ready) << cl.err.detail;
    ExpectRightDcopy(&cl, &cl.dcopy, 1 << 20, 4);
}

TEST(TlsServer, PipelinedCalls)
{
    ServerProc server(TlsArgs());
    BlasClient cl(server.port());
    ASSERT_TRUE(cl.ready) << cl.err.detail;
    const int kCalls = 8;
    int n = 3000, inc = 1;
    std::vector<std::vector<double>> xs, ys(kCalls, std::vector<double>(n, 0.0));
    std::vector<std::vector<iface_shape>> shapes(kCalls, std::vector<iface_shape>(cl.dcopy.nparams));
    std::vector<uint32_t> ids(kCalls);
    for (int i = 0; i < kCalls; i++) xs.push_back(Random(static_cast<size_t>(n), 10 + i));
    std::vector<std::vector<void *>> argvs;
    for (int i = 0; i < kCalls; i++) argvs.push_back({&n, xs[i].data(), &inc, ys[i].data(), &inc});
    for (int i = 0; i < kCalls; i++) ASSERT_EQ(cl.Send(&cl.dcopy, argvs[i].data(), shapes[i].data(), &ids[i]), 0);
    for (int i = 0; i < kCalls; i++) {
        ASSERT_EQ(cl.Receive(&cl.dcopy, argvs[i].data(), shapes[i].data(), ids[i]), 0) << cl.err.detail;
        EXPECT_EQ(ys[i], xs[i]) << "call " << i;
    }
}

// HELLO and GET_IFACE in one TLS record: the dispatcher answers HELLO, and
// GET_IFACE waits in the stream state where epoll cannot see it.
TEST(TlsServer, RequestLeftInTheStateAfterHelloIsServed)
{
    ServerProc server(TlsArgs());
    Client cl;
    ASSERT_EQ(cl.Connect(server.port()), 0) << cl.err.detail;
    sock_set_timeouts(msg_conn_fd(&cl.c), 10000, 10000); // a request left unserved fails, not hangs
    msg_hello h = {}, back = {};
    h.version = PROTO_VERSION;
    h.packet_size = PROTO_DEFAULT_PACKET;
    transport_bytes both = {};
    both.max = 1 << 16;
    wire_writer w;
    ASSERT_EQ(wire_writer_init(&w, -1, 0, &cl.err), 0);
    wire_writer_attach(&w, transport_memory_sink(&both));
    ASSERT_EQ(msg_write_hello(&w, 1, &h, &cl.err), 0);
    ASSERT_EQ(msg_write_get_iface(&w, 2, "ddot", &cl.err), 0);
    wire_writer_free(&w);
    ASSERT_EQ(cl.c.tp.ops->send(&cl.c.tp, both.p, both.len), static_cast<ssize_t>(both.len)) << "one record";
    transport_bytes_free(&both);
    EXPECT_EQ(msg_read_hello_reply(&cl.c.reader, 1, cl.c.label, &back, &cl.err), 0) << cl.err.detail;
    uint8_t *blob = nullptr;
    uint32_t len = 0;
    EXPECT_EQ(msg_read_iface_reply(&cl.c.reader, 2, cl.c.label, &blob, &len, &cl.err), 0) << cl.err.detail;
    free(blob);
}

// One worker, two connections taking turns: each call is a loan of the
// connection to the worker and its return, the stream state going along.
TEST(TlsServer, ConnectionsLentToAWorkerAndBackManyTimes)
{
    ServerProc server(TlsArgs("server", {"--workers", "1", "--max-workers", "1"}));
    BlasClient a(server.port()), b(server.port());
    ASSERT_TRUE(a.ready && b.ready) << a.err.detail << b.err.detail;
    for (int i = 0; i < 40; i++) {
        ExpectRightDdot(&a, &a.ddot, 100 + i, 20 + i);
        ExpectRightDcopy(&b, &b.dcopy, 20000 + i, 40 + i);
        if (::testing::Test::HasFailure()) break;
    }
}

TEST(TlsServer, SecondConnectionResumesTheSession)
{
    ServerProc server(TlsArgs());
    Client cl;
    for (int i = 0; i < 2; i++) {
        ASSERT_EQ(cl.Connect(server.port()), 0) << cl.err.detail;
        ASSERT_EQ(cl.Hello(), 0) << cl.err.detail; // its reply comes after the tickets
        int resumed = -1;
        ASSERT_EQ(tls_client_peer(&cl.c.tp, nullptr, nullptr, &resumed), 0);
        EXPECT_EQ(resumed, i) << "connection " << i;
        iface_t f{};
        ASSERT_EQ(cl.Iface("dcopy", &f), 0) << cl.err.detail;
        ExpectRightDcopy(&cl, &f, 500, 50 + i);
        iface_free(&f);
        msg_conn_close(&cl.c);
    }
}

// ---- A worker crash ----

TEST(TlsServer, CrashNoticeIsSealedAndTheNextCallsWork)
{
    ServerProc server(TlsArgs("server", {"--stubs", kFaults, "--workers", "1"}));
    Client cl;
    iface_t crash{};
    ASSERT_EQ(cl.Open(server.port(), "crash", &crash), 0) << cl.err.detail;
    int how = 1;
    void *argv[] = {&how};
    EXPECT_EQ(cl.Call(&crash, argv), NUMRPC_ECRASHED);
    EXPECT_TRUE(Contains(cl.err.detail, "crash crashed: ")) << cl.err.detail; // SIGSEGV (ASan: exit status 1)
    how = 0;
    EXPECT_EQ(cl.Call(&crash, argv), 0) << "the same connection, after the notice: " << cl.err.detail;
    msg_conn_close(&cl.c);
    ASSERT_EQ(cl.Connect(server.port()), 0) << cl.err.detail;
    EXPECT_EQ(cl.Call(&crash, argv), 0) << "a new connection: " << cl.err.detail;
    iface_free(&crash);
}

// Keepalives while a routine computes are sealed by the dispatcher in turn
// with the worker's records; a CANCEL is found in the decrypted stream.
TEST(TlsServer, KeepalivesAndCancelOverTls)
{
    ServerProc server(TlsArgs("server", {"--stubs", kFaults, "--keepalive-ms", "20"}));
    Client cl;
    iface_t spin{};
    ASSERT_EQ(cl.Open(server.port(), "spin", &spin), 0) << cl.err.detail;
    int seconds = 1;
    void *argv[] = {&seconds};
    ASSERT_EQ(cl.Call(&spin, argv), 0) << cl.err.detail;
    EXPECT_GT(wire_reader_keepalives(&cl.c.reader), 5u) << "keepalives came, and opened";
    seconds = -1; // for ever, until cancelled
    std::vector<iface_shape> shapes(spin.nparams);
    uint32_t id;
    ASSERT_EQ(cl.Send(&spin, argv, shapes.data(), &id), 0) << cl.err.detail;
    std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the routine runs by then
    sock_set_timeouts(msg_conn_fd(&cl.c), 20000, 20000); // an unseen CANCEL fails the test, not hangs it
    ASSERT_EQ(msg_send_cancel(&cl.c, id, &cl.err), 0) << cl.err.detail;
    EXPECT_EQ(cl.Receive(&spin, argv, shapes.data(), id), NUMRPC_ECANCELLED) << cl.err.detail;
    seconds = 0;
    EXPECT_EQ(cl.Call(&spin, argv), 0) << "the connection goes on: " << cl.err.detail;
    iface_free(&spin);
}

// ---- Refusals ----

void ExpectServerUnharmed(int port)
{
    BlasClient cl(port);
    ASSERT_TRUE(cl.ready) << cl.err.detail;
    ExpectRightDdot(&cl, &cl.ddot, 100, 7);
}

TEST(TlsServer, ClientSideErrorsLeaveTheServerUnharmed)
{
    ServerProc server(TlsArgs()), expired(TlsArgs("expired")), otherhost(TlsArgs("otherhost"));
    Client wrong_ca("other-ca.pem");
    EXPECT_NE(wrong_ca.Connect(server.port()), 0);
    EXPECT_TRUE(Contains(wrong_ca.err.detail, "certificate verify failed: unable to get local issuer certificate"))
        << wrong_ca.err.detail;
    Client cl;
    EXPECT_NE(cl.Connect(expired.port()), 0);
    EXPECT_TRUE(Contains(cl.err.detail, "certificate has expired")) << cl.err.detail;
    EXPECT_NE(cl.Connect(otherhost.port(), "localhost"), 0);
    EXPECT_TRUE(Contains(cl.err.detail, "server certificate is not for host localhost")) << cl.err.detail;
    ExpectServerUnharmed(server.port());
}

TEST(TlsServer, PlainClientHearsThatTlsIsRequired)
{
    ServerProc server(TlsArgs());
    msg_conn c;
    err_t err;
    ASSERT_EQ(msg_conn_open(&c, "127.0.0.1", server.port(), 5000, 5000, PROTO_DEFAULT_PACKET, &err), 0);
    msg_hello h = {}, back = {};
    h.version = PROTO_VERSION;
    h.packet_size = PROTO_DEFAULT_PACKET;
    ASSERT_EQ(msg_write_hello(&c.writer, 1, &h, &err), 0);
    EXPECT_EQ(msg_read_hello_reply(&c.reader, 1, c.label, &back, &err), NUMRPC_EAUTH);
    EXPECT_TRUE(Contains(err.detail, ": this server requires TLS (set NUMRPC_TLS_CA)")) << err.detail;
    msg_conn_free(&c);
    ExpectServerUnharmed(server.port());
}

TEST(TlsServer, TlsClientToAPlainServerHearsWhy)
{
    ServerProc plain;
    Client cl;
    EXPECT_NE(cl.Connect(plain.port()), 0);
    EXPECT_TRUE(Contains(cl.err.detail, "did not answer TLS (is it a plain numrpc server?)")) << cl.err.detail;
}

TEST(TlsServer, MutualTlsRequiresAClientCertificate)
{
    ServerProc server(TlsArgs("server", {"--tls-client-ca", Pki("ca.pem")}));
    Client anonymous;
    // In TLS 1.3 the refusal reaches the client on its first read.
    int rc = anonymous.Connect(server.port());
    if (rc == 0) rc = anonymous.Hello();
    EXPECT_NE(rc, 0);
    EXPECT_TRUE(Contains(tls_stream_failure(&anonymous.c.tp), "alert certificate required"))
        << anonymous.err.detail << " / " << tls_stream_failure(&anonymous.c.tp);
    BlasClient known(server.port(), "ca.pem", "client.pem", "client.key");
    ASSERT_TRUE(known.ready) << known.err.detail;
    ExpectRightDdot(&known, &known.ddot, 300, 8);
}

// Half a ClientHello, then nothing: no worker is held (a call on one worker
// goes through meanwhile), and the server closes it after --request-timeout.
TEST(TlsServer, SlowHandshakeHoldsNoWorkerAndIsClosed)
{
    ServerProc server(TlsArgs("server", {"--workers", "1", "--max-workers", "1", "--request-timeout", "300"}));
    int slow = connect_loopback(server.port());
    ASSERT_GE(slow, 0);
    const unsigned char half[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03};
    ASSERT_EQ(send(slow, half, sizeof half, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof half));
    ExpectServerUnharmed(server.port());
    EXPECT_TRUE(ClosedByPeer(slow)) << "closed by --request-timeout";
    close(slow);
    ExpectServerUnharmed(server.port());
}

// ---- Tokens over TLS: the proofs cover the channel ----

const char kAliceSecret[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

token Alice()
{
    token t = {};
    snprintf(t.name, sizeof t.name, "alice");
    t.secret_len = strlen(kAliceSecret) / 2;
    for (size_t i = 0; i < t.secret_len; i++)
        t.secret[i] = static_cast<uint8_t>(std::stoi(std::string(kAliceSecret + 2 * i, 2), nullptr, 16));
    return t;
}

TEST(TlsServer, TokenProofsCoverTheChannelBinding)
{
    TokenDir dir;
    std::string tokens = dir.Write("server.tokens", std::string("alice ") + kAliceSecret + " call status\n");
    ServerProc server(TlsArgs("server", {"--token-file", tokens}));
    token alice = Alice();
    msg_hello hello = {};
    hello.version = PROTO_VERSION;
    hello.packet_size = PROTO_DEFAULT_PACKET;
    // Bound to this channel: granted, and STATUS says TLS and tokens.
    Client cl;
    ASSERT_EQ(cl.Connect(server.port()), 0) << cl.err.detail;
    unsigned char binding[TLS_BINDING_SIZE];
    ASSERT_EQ(tls_client_peer(&cl.c.tp, nullptr, binding, nullptr), 0);
    ASSERT_EQ(auth_client_hello(&cl.c, &alice, &hello, binding, 1, 2, &cl.err), 0) << cl.err.detail;
    ASSERT_EQ(auth_client_finish(&cl.c, 2, &cl.err), 0) << cl.err.detail;
    cl.next_id = 3;
    msg_status st = {};
    ASSERT_EQ(cl.Status(&st), 0) << cl.err.detail;
    EXPECT_EQ(st.security, MSG_STATUS_TLS | MSG_STATUS_TOKENS);
    msg_status_free(&st);
    // The same secret without the binding (a proof made for another
    // channel): the server's proof does not check out.
    Client unbound;
    ASSERT_EQ(unbound.Connect(server.port()), 0) << unbound.err.detail;
    EXPECT_EQ(auth_client_hello(&unbound.c, &alice, &hello, nullptr, 1, 2, &unbound.err), NUMRPC_EAUTH);
    EXPECT_TRUE(Contains(unbound.err.detail, "did not prove it holds token alice")) << unbound.err.detail;
}

// ---- Refuse to start ----

TEST(TlsServer, BeyondLoopbackWithTlsStartsWithoutItRefuses)
{
    std::string text;
    EXPECT_EQ(run_server_to_exit({"--bind", "0.0.0.0"}, &text), 2);
    EXPECT_TRUE(Contains(text, "without --token-file or --tls-cert")) << text;
    {
        ServerProc open(TlsArgs("server", {"--bind", "0.0.0.0"}));
        EXPECT_TRUE(open.alive());
    }
    TokenDir dir; // TLS from the configuration file
    std::string conf =
        dir.Write("server.conf", "tls-cert = " + Pki("server.pem") + "\ntls-key = " + Pki("server.key") + "\n");
    ServerProc configured({"--config", conf});
    Client cl;
    EXPECT_EQ(cl.Connect(configured.port()), 0) << cl.err.detail;
    EXPECT_EQ(cl.Hello(), 0) << cl.err.detail;
    EXPECT_EQ(run_server_to_exit({"--tls-cert", Pki("server.pem")}, &text), 2);
    EXPECT_TRUE(Contains(text, "--tls-cert and --tls-key go together")) << text;
    EXPECT_EQ(run_server_to_exit({"--tls-cert", Pki("server.pem"), "--tls-key", Pki("client.key")}, &text), 2);
    EXPECT_TRUE(Contains(text, "do not match")) << text;
}

} // namespace
