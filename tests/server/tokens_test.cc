// tokens_test.cc -- a server started with --token-file, with real processes
// on 127.0.0.1: calls with the right token give local BLAS's results; a
// missing, wrong, unknown or replayed proof, a module outside the token's
// rights and STATUS without `status` are refused by code and message and
// leave the server serving; the refuse-to-start rules; a client facing a
// server that cannot prove it holds the token refuses it.
#include <gtest/gtest.h>

#include <cblas.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/raw_peer.h"
#include "../support/server_proc.h"
#include "../support/test_util.h"
#include "../support/token_dir.h"
#include "numrpc.h"
#include "protocol.h"
extern "C" {
#include "auth.h"
#include "msg.h"
#include "msg_control.h"
#include "sock.h"
#include "tokens.h"
}

namespace {

const char kAliceSecret[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
const char kBobSecret[] = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
const char kWrongSecret[] = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

std::string ServerTokens()
{
    return std::string("# who may do what\n") + "alice " + kAliceSecret + " call status\n" + "bob " + kBobSecret +
           " call:blas   # BLAS only, no status\n";
}

// The library talks to addr as the holder of token_file ("": none).
int UseServerAs(const std::string &addr, const std::string &token_file)
{
    numrpc_finalize();
    numrpc_config cfg{addr.c_str(), 0, token_file.empty() ? nullptr : token_file.c_str(), nullptr};
    return numrpc_init(&cfg);
}

// ddot through the server, checked against the local BLAS on the same inputs.
void ExpectRightDdot()
{
    const int n = 37;
    std::vector<double> x(n), y(n);
    for (int i = 0; i < n; i++) {
        x[i] = 0.25 * i - 2;
        y[i] = 1.0 / (i + 3);
    }
    double result = -1;
    ASSERT_EQ(numrpc_call("ddot", n, x.data(), 1, y.data(), 1, &result), NUMRPC_OK) << Detail();
    EXPECT_DOUBLE_EQ(result, cblas_ddot(n, x.data(), 1, y.data(), 1));
}

// The first error a call to ddot gets, with its detail.
int DdotError(std::string *detail)
{
    std::vector<double> x(4, 1.0), y(4, 2.0);
    double result = 0;
    int rc = numrpc_call("ddot", 4, x.data(), 1, y.data(), 1, &result);
    *detail = Detail();
    return rc;
}

// A message connection to the server at port, with the msg writers.
struct Raw {
    msg_conn c;
    err_t err;
    explicit Raw(int port)
    {
        EXPECT_EQ(msg_conn_open(&c, "127.0.0.1", port, 5000, 20000, PROTO_DEFAULT_PACKET, &err), 0) << err.detail;
    }
    ~Raw() { msg_conn_free(&c); }
    // HELLO naming token name with client nonce cn; the reply's fields.
    int Hello(const char *name, const uint8_t cn[MSG_NONCE_BYTES], msg_hello *reply)
    {
        msg_hello h = {};
        h.version = PROTO_VERSION;
        h.packet_size = PROTO_DEFAULT_PACKET;
        snprintf(h.peer, sizeof h.peer, "tokens_test");
        h.has_token = 1;
        snprintf(h.token, sizeof h.token, "%s", name);
        memcpy(h.nonce, cn, MSG_NONCE_BYTES);
        int rc = msg_write_hello(&c.writer, 1, &h, &err);
        return rc == 0 ? msg_read_hello_reply(&c.reader, 1, c.label, reply, &err) : rc;
    }
    // AUTH with proof; the status of its reply.
    int Auth(const uint8_t proof[HMAC_SHA256_BYTES])
    {
        int rc = msg_write_auth(&c.writer, 2, proof, &err);
        if (rc == 0) rc = wire_flush(&c.writer, &err);
        if (rc == 0) rc = msg_read_reply(&c.reader, 2, c.label, &err);
        if (rc == 0) rc = wire_expect_end(&c.reader, &err);
        return rc;
    }
    // True when the server closes the connection (within 20 s).
    bool Closed() { return ClosedByPeer(msg_conn_fd(&c)); }
};

token MakeToken(const char *name, const char *hex)
{
    token t = {};
    snprintf(t.name, sizeof t.name, "%s", name);
    t.secret_len = strlen(hex) / 2;
    for (size_t i = 0; i < t.secret_len; i++) t.secret[i] = static_cast<uint8_t>(std::stoi(std::string(hex + 2 * i, 2), nullptr, 16));
    return t;
}

class Tokens : public ::testing::Test {
  protected:
    void SetUp() override
    {
        server_file_ = dir_.Write("server.tokens", ServerTokens());
        alice_ = dir_.Write("alice", std::string("alice ") + kAliceSecret + "\n");
        bob_ = dir_.Write("bob", std::string("bob ") + kBobSecret + "\n");
        server_ = std::make_unique<ServerProc>(std::vector<std::string>{"--token-file", server_file_});
    }
    void TearDown() override { numrpc_finalize(); }
    // The server still serves a good caller.
    void ExpectServerUnharmed()
    {
        ASSERT_TRUE(server_->alive());
        ASSERT_EQ(UseServerAs(server_->address(), alice_), NUMRPC_OK) << Detail();
        ExpectRightDdot();
    }
    // The library, holding the token `name secret`, gets EAUTH with want.
    void ExpectRefusedAs(const std::string &name, const char *secret, const std::string &want)
    {
        std::string file = dir_.Write(name + ".presented", name + " " + secret + "\n");
        ASSERT_EQ(UseServerAs(server_->address(), file), NUMRPC_OK);
        std::string detail;
        EXPECT_EQ(DdotError(&detail), NUMRPC_EAUTH);
        EXPECT_TRUE(Contains(detail, want)) << detail;
    }
    TokenDir dir_;
    std::string server_file_, alice_, bob_;
    std::unique_ptr<ServerProc> server_;
};

TEST_F(Tokens, RightTokenCallsGiveLocalBlasResults)
{
    ASSERT_EQ(UseServerAs(server_->address(), alice_), NUMRPC_OK) << Detail();
    ExpectRightDdot();
    ExpectRightDdot(); // a pooled, already authenticated connection
}

TEST_F(Tokens, MissingTokenIsRefusedAndTheConnectionCloses)
{
    ASSERT_EQ(UseServerAs(server_->address(), ""), NUMRPC_OK);
    std::string detail;
    EXPECT_EQ(DdotError(&detail), NUMRPC_EAUTH);
    EXPECT_TRUE(Contains(detail, "this server requires a token (set NUMRPC_TOKEN_FILE)")) << detail;
    // Without HELLO, a request is refused the same way, and the server closes.
    int fd = connect_loopback(server_->port());
    ASSERT_GE(fd, 0);
    std::vector<uint8_t> list = Packet(PROTO_LIST, 7, PROTO_FLAG_END, {});
    ASSERT_EQ(send(fd, list.data(), list.size(), MSG_NOSIGNAL), static_cast<ssize_t>(list.size()));
    std::string why;
    EXPECT_EQ(ReadReplyStatus(fd, &why), NUMRPC_EAUTH);
    EXPECT_EQ(why, "this server requires a token (set NUMRPC_TOKEN_FILE)");
    EXPECT_TRUE(ClosedByPeer(fd));
    close(fd);
    ExpectServerUnharmed();
}

TEST_F(Tokens, WrongSecretIsRefusedWithoutSayingWhichPart)
{
    // The library sees first that the server's proof does not match its secret.
    ExpectRefusedAs("alice", kWrongSecret, "server at " + server_->address() + " did not prove it holds token alice");
    // A peer that answers the challenge with the wrong secret anyway.
    Raw raw(server_->port());
    uint8_t cn[MSG_NONCE_BYTES] = {1, 2, 3};
    msg_hello reply;
    ASSERT_EQ(raw.Hello("alice", cn, &reply), 0) << raw.err.detail;
    ASSERT_TRUE(reply.has_proof);
    token bad = MakeToken("alice", kWrongSecret);
    uint8_t proof[HMAC_SHA256_BYTES];
    auth_proof(&bad, AUTH_BY_CLIENT, cn, reply.nonce, nullptr, proof);
    EXPECT_EQ(raw.Auth(proof), NUMRPC_EAUTH);
    EXPECT_STREQ(raw.err.detail, "token alice was refused");
    EXPECT_TRUE(raw.Closed());
    ExpectServerUnharmed();
}

TEST_F(Tokens, UnknownNameIsRefused)
{
    ExpectRefusedAs("mallory", kAliceSecret, "token mallory was refused");
    ExpectServerUnharmed();
}

TEST_F(Tokens, ReplayedAuthIsRefused)
{
    token alice = MakeToken("alice", kAliceSecret);
    uint8_t cn[MSG_NONCE_BYTES] = {9, 8, 7, 6};
    uint8_t recorded[HMAC_SHA256_BYTES];
    {
        Raw good(server_->port());
        msg_hello reply;
        ASSERT_EQ(good.Hello("alice", cn, &reply), 0) << good.err.detail;
        ASSERT_TRUE(auth_proof_ok(&alice, AUTH_BY_SERVER, cn, reply.nonce, nullptr, reply.proof));
        auth_proof(&alice, AUTH_BY_CLIENT, cn, reply.nonce, nullptr, recorded);
        ASSERT_EQ(good.Auth(recorded), 0) << good.err.detail;
    }
    // The same HELLO and the recorded AUTH on a new connection: the server's
    // nonce is new, so the old proof answers nothing.
    Raw replay(server_->port());
    msg_hello reply;
    ASSERT_EQ(replay.Hello("alice", cn, &reply), 0) << replay.err.detail;
    EXPECT_EQ(replay.Auth(recorded), NUMRPC_EAUTH);
    EXPECT_STREQ(replay.err.detail, "token alice was refused");
    EXPECT_TRUE(replay.Closed());
    ExpectServerUnharmed();
}

TEST_F(Tokens, RequestAfterHelloButBeforeAuthIsRefused)
{
    Raw raw(server_->port());
    uint8_t cn[MSG_NONCE_BYTES] = {5};
    msg_hello reply;
    ASSERT_EQ(raw.Hello("alice", cn, &reply), 0) << raw.err.detail;
    ASSERT_EQ(msg_write_list(&raw.c.writer, 3, &raw.err), 0);
    EXPECT_EQ(msg_read_reply(&raw.c.reader, 3, raw.c.label, &raw.err), NUMRPC_EAUTH);
    EXPECT_STREQ(raw.err.detail, "this server requires a token (set NUMRPC_TOKEN_FILE)");
    EXPECT_TRUE(raw.Closed());
    ExpectServerUnharmed();
}

TEST_F(Tokens, TokenLimitedToBlasMayNotCallLapack)
{
    ASSERT_EQ(UseServerAs(server_->address(), bob_), NUMRPC_OK) << Detail();
    ExpectRightDdot();
    int n = 2, nrhs = 1, lda = 2, ldb = 2, info = -1;
    std::vector<double> a = {4, 1, 2, 3}, b = {1, 2};
    std::vector<int> ipiv(2);
    EXPECT_EQ(numrpc_call("dgesv", n, nrhs, a.data(), lda, ipiv.data(), b.data(), ldb, &info), NUMRPC_EAUTH);
    EXPECT_TRUE(Contains(Detail(), "token bob may not call module lapack")) << Detail();
    // LIST shows bob only what bob may call.
    Raw raw(server_->port());
    token bob = MakeToken("bob", kBobSecret);
    msg_hello hello = {};
    hello.version = PROTO_VERSION;
    hello.packet_size = PROTO_DEFAULT_PACKET;
    ASSERT_EQ(auth_client_hello(&raw.c, &bob, &hello, nullptr, 1, 2, &raw.err), 0) << raw.err.detail;
    ASSERT_EQ(msg_write_list(&raw.c.writer, 3, &raw.err), 0);
    ASSERT_EQ(auth_client_finish(&raw.c, 2, &raw.err), 0) << raw.err.detail;
    msg_routine_entry *items = nullptr;
    uint32_t count = 0;
    ASSERT_EQ(msg_read_list_reply(&raw.c.reader, 3, raw.c.label, 10000, &items, &count, &raw.err), 0) << raw.err.detail;
    bool has_ddot = false, has_dgesv = false;
    for (uint32_t i = 0; i < count; i++) {
        has_ddot |= strcmp(items[i].name, "ddot") == 0;
        has_dgesv |= strcmp(items[i].name, "dgesv") == 0;
    }
    free(items);
    EXPECT_TRUE(has_ddot);
    EXPECT_FALSE(has_dgesv);
    // A CALL made without the interface (a client that has it from
    // elsewhere) is refused the same way before its arguments are used.
    msg_call_header h = {};
    snprintf(h.name, sizeof h.name, "dgesv");
    h.nargs = 8;
    ASSERT_EQ(msg_write_call_header(&raw.c.writer, 4, &h, &raw.err), 0);
    ASSERT_EQ(wire_end(&raw.c.writer, &raw.err), 0);
    EXPECT_EQ(msg_read_reply(&raw.c.reader, 4, raw.c.label, &raw.err), NUMRPC_EAUTH);
    EXPECT_STREQ(raw.err.detail, "token bob may not call module lapack");
    ExpectServerUnharmed();
}

// STATUS on a connection authenticated as name; its status code and detail.
int StatusAs(int port, const char *name, const char *hex, std::string *detail)
{
    Raw raw(port);
    token t = MakeToken(name, hex);
    msg_hello hello = {};
    hello.version = PROTO_VERSION;
    hello.packet_size = PROTO_DEFAULT_PACKET;
    int rc = auth_client_hello(&raw.c, &t, &hello, nullptr, 1, 2, &raw.err);
    if (rc == 0) rc = auth_client_finish(&raw.c, 2, &raw.err);
    if (rc == 0) rc = msg_write_status(&raw.c.writer, 3, &raw.err);
    msg_status st = {};
    if (rc == 0) rc = msg_read_status_reply(&raw.c.reader, 3, raw.c.label, &st, &raw.err);
    msg_status_free(&st);
    *detail = raw.err.detail;
    return rc;
}

TEST_F(Tokens, StatusNeedsTheStatusRight)
{
    std::string detail;
    EXPECT_EQ(StatusAs(server_->port(), "bob", kBobSecret, &detail), NUMRPC_EAUTH);
    EXPECT_TRUE(Contains(detail, "token bob may not read this server's status")) << detail;
    EXPECT_EQ(StatusAs(server_->port(), "alice", kAliceSecret, &detail), 0) << detail;
    // Without any token, STATUS as a connection's first message is refused.
    Raw raw(server_->port());
    ASSERT_EQ(msg_write_status(&raw.c.writer, 4, &raw.err), 0);
    msg_status st = {};
    EXPECT_EQ(msg_read_status_reply(&raw.c.reader, 4, raw.c.label, &st, &raw.err), NUMRPC_EAUTH);
    EXPECT_TRUE(Contains(raw.err.detail, "this server requires a token")) << raw.err.detail;
    ExpectServerUnharmed();
}

TEST_F(Tokens, AdminReloadTakesANewToken)
{
    std::string carol = dir_.Write("carol", std::string("carol ") + kBobSecret + "\n");
    ASSERT_EQ(UseServerAs(server_->address(), carol), NUMRPC_OK);
    std::string detail;
    EXPECT_EQ(DdotError(&detail), NUMRPC_EAUTH);
    // The server's file gains carol; SIGHUP rereads it.
    dir_.Write("server.tokens", ServerTokens() + "carol " + kBobSecret + " call\n");
    kill(server_->pid(), SIGHUP);
    int rc = NUMRPC_EAUTH;
    for (int i = 0; i < 100 && rc != NUMRPC_OK; i++) { // bounded: the dispatcher rereads at once
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ASSERT_EQ(UseServerAs(server_->address(), carol), NUMRPC_OK);
        rc = DdotError(&detail);
    }
    EXPECT_EQ(rc, NUMRPC_OK) << detail;
}

TEST(TokensStart, TokenFileReadableByOthersIsRefused)
{
    TokenDir dir;
    std::string file = dir.Write("open.tokens", ServerTokens(), 0644);
    std::string err;
    EXPECT_EQ(run_server_to_exit({"--token-file", file}, &err), 2);
    EXPECT_TRUE(Contains(err, "token file " + file + " is readable by others; chmod 600 " + file)) << err;
}

TEST(TokensStart, BadLineIsRefusedWithItsPlace)
{
    TokenDir dir;
    std::string file = dir.Write("bad.tokens", std::string("alice ") + kAliceSecret + " call\nbob 1234 call\n");
    std::string err;
    EXPECT_EQ(run_server_to_exit({"--token-file", file}, &err), 2);
    EXPECT_TRUE(Contains(err, file + ":2: the secret must be")) << err;
}

TEST(TokensStart, BeyondLoopbackNeedsTokensOrAllowInsecure)
{
    std::string err;
    EXPECT_EQ(run_server_to_exit({"--bind", "0.0.0.0"}, &err), 2);
    EXPECT_TRUE(Contains(err, "refusing to listen on 0.0.0.0:")) << err;
    EXPECT_TRUE(Contains(err, "without --token-file or --tls-cert; add one, or --allow-insecure to accept anyone "
                              "who reaches the port"))
        << err;
    // Either one lets it start (it is stopped at once).
    {
        ServerProc open({"--bind", "0.0.0.0", "--allow-insecure"});
        EXPECT_TRUE(open.alive());
    }
    TokenDir dir;
    std::string file = dir.Write("server.tokens", ServerTokens());
    ServerProc guarded({"--bind", "0.0.0.0", "--token-file", file});
    EXPECT_TRUE(guarded.alive());
    // Loopback needs neither (the default).
    ServerProc local;
    EXPECT_TRUE(local.alive());
}

// A hostile server: answers a HELLO naming a token with a made-up proof.
TEST(TokensClient, ServerThatCannotProveItsTokenIsRefused)
{
    int port = 0;
    err_t err;
    int lfd = sock_listen("127.0.0.1", 0, &port, &err);
    ASSERT_GE(lfd, 0) << err.detail;
    std::thread fake([lfd] {
        pollfd p = {lfd, POLLIN, 0};
        if (poll(&p, 1, 20000) != 1) return;
        int fd = accept(lfd, nullptr, nullptr);
        if (fd < 0) return;
        msg_conn c;
        err_t e;
        if (msg_conn_init(&c, PROTO_DEFAULT_PACKET, &e) == 0) {
            sock_set_timeouts(fd, 20000, 20000);
            msg_conn_attach(&c, transport_tcp(fd), "client");
            uint32_t type = 0, id = 0;
            msg_hello h, back = {};
            if (wire_next_message(&c.reader, &type, &id, &e) == 0 && type == PROTO_HELLO &&
                msg_read_hello(&c.reader, &h, &e) == 0) {
                back = h;
                back.has_proof = 1;
                memset(back.nonce, 0x42, sizeof back.nonce);
                memset(back.proof, 0x17, sizeof back.proof);
                msg_write_hello_reply(&c.writer, id, &back, &e);
                char sink[256];
                while (recv(fd, sink, sizeof sink, 0) > 0) {
                }
            }
            msg_conn_free(&c); // closes fd
        }
    });
    TokenDir dir;
    std::string alice = dir.Write("alice", std::string("alice ") + kAliceSecret + "\n");
    std::string addr = "127.0.0.1:" + std::to_string(port);
    ASSERT_EQ(UseServerAs(addr, alice), NUMRPC_OK);
    std::string detail;
    EXPECT_EQ(DdotError(&detail), NUMRPC_EAUTH);
    EXPECT_TRUE(Contains(detail, "server at " + addr + " did not prove it holds token alice")) << detail;
    numrpc_finalize();
    fake.join();
    close(lfd);
}

} // namespace
