// tls_record_test.cc -- the record layer and the handshake engine given
// hostile bytes over a socketpair, checked against a sealer written here.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <thread>
#include <string>
#include <vector>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "tls_support.h"

extern "C" {
#include "sock.h"
}

namespace {

using Bytes = std::vector<unsigned char>;

// One TLS 1.3 record sealed with AES-128-GCM from RFC 8446 §5.2 directly:
// content || type || padding zeros, nonce = iv XOR seq, header as AAD.
Bytes Seal(const tls_direction &d, uint64_t seq, int type, const std::string &content, size_t padding = 0)
{
    Bytes inner(content.begin(), content.end());
    inner.push_back(static_cast<unsigned char>(type));
    inner.resize(inner.size() + padding, 0);
    size_t body = inner.size() + 16;
    Bytes rec = {23, 3, 3, static_cast<unsigned char>(body >> 8), static_cast<unsigned char>(body)};
    unsigned char nonce[12];
    memcpy(nonce, d.iv, 12);
    for (int b = 0; b < 8; b++) nonce[11 - b] ^= static_cast<unsigned char>(seq >> (8 * b));
    rec.resize(5 + body);
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int n = 0;
    EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), nullptr, d.key, nonce);
    EVP_EncryptUpdate(c, nullptr, &n, rec.data(), 5);
    EVP_EncryptUpdate(c, rec.data() + 5, &n, inner.data(), static_cast<int>(inner.size()));
    EVP_EncryptFinal_ex(c, rec.data() + 5 + n, &n);
    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, rec.data() + 5 + inner.size());
    EVP_CIPHER_CTX_free(c);
    return rec;
}

// A server's stream state with random AES-128-GCM keys, its peer (the test)
// on the other end of a socketpair.
class RecordLink : public ::testing::Test {
  protected:
    void SetUp() override
    {
        ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd_), 0);
        memset(&st_, 0, sizeof st_);
        st_.suite = 0x1301;
        RAND_bytes(st_.in.key, sizeof st_.in.key);
        RAND_bytes(st_.in.iv, sizeof st_.in.iv);
        t_ = tls_record_transport(fd_[0], &st_);
    }
    void TearDown() override
    {
        transport_close(&t_);
        close(fd_[1]);
    }
    void Send(const Bytes &b) { ASSERT_EQ(send(fd_[1], b.data(), b.size(), 0), (ssize_t)b.size()); }
    // One recv on the server's stream: its result, the bytes in got.
    ssize_t Recv(std::string *got = nullptr)
    {
        char buf[20000];
        ssize_t k = t_.ops->recv(&t_, buf, sizeof buf);
        if (got && k > 0) got->assign(buf, static_cast<size_t>(k));
        return k;
    }
    int fd_[2];
    tls_stream_state st_;
    transport t_;
};

TEST_F(RecordLink, RecordsFromAnIndependentSealerOpen)
{
    Send(Seal(st_.in, 0, 23, "hello"));
    Send(Seal(st_.in, 1, 23, "", 0));          // empty: skipped
    Send(Seal(st_.in, 2, 23, "padded", 300));  // padding stripped
    std::string got, more;
    ASSERT_GT(Recv(&got), 0);
    if (got.size() < 11) { // the records may come in one read or two
        ASSERT_GT(Recv(&more), 0);
    }
    EXPECT_EQ(got + more, "hellopadded");
    EXPECT_EQ(st_.in.seq, 3u);
    Send(Seal(st_.in, 3, 21, std::string("\x01\x00", 2))); // close_notify
    EXPECT_EQ(Recv(), 0);
    EXPECT_TRUE(st_.eof);
    EXPECT_FALSE(st_.broken);
}

TEST_F(RecordLink, AbsurdLengthRefusedFromTheHeader)
{
    Send({23, 3, 3, 0xff, 0xff});
    EXPECT_EQ(Recv(), -1);
    EXPECT_EQ(errno, EPROTO);
    EXPECT_STREQ(st_.why, "TLS record length 65535 out of range");
    EXPECT_EQ(Recv(), -1) << "a broken stream stays broken";
}

TEST_F(RecordLink, BadTagRefused)
{
    Bytes rec = Seal(st_.in, 0, 23, "data");
    rec.back() ^= 1;
    Send(rec);
    EXPECT_EQ(Recv(), -1);
    EXPECT_STREQ(st_.why, "TLS record 0 failed authentication (bad tag)");
    EXPECT_TRUE(st_.broken);
}

TEST_F(RecordLink, WrongSequenceNumberRefused)
{
    Send(Seal(st_.in, 1, 23, "replayed or reordered"));
    EXPECT_EQ(Recv(), -1);
    EXPECT_STREQ(st_.why, "TLS record 0 failed authentication (bad tag)");
}

TEST_F(RecordLink, TruncatedRecordIsAnError)
{
    Bytes rec = Seal(st_.in, 0, 23, std::string(100, 'x'));
    rec.resize(50);
    Send(rec);
    shutdown(fd_[1], SHUT_WR);
    EXPECT_EQ(Recv(), -1);
    EXPECT_STREQ(st_.why, "connection closed inside a TLS record (50 bytes of it came)");
}

TEST_F(RecordLink, AlertsOtherThanCloseNotifyAreErrors)
{
    Send(Seal(st_.in, 0, 21, std::string("\x02\x28", 2))); // fatal handshake_failure
    EXPECT_EQ(Recv(), -1);
    EXPECT_EQ(errno, EPROTO);
    EXPECT_STREQ(st_.why, "the peer sent TLS alert 40 (handshake failure)");
}

TEST_F(RecordLink, PlaintextRecordAfterTheHandshakeRefused)
{
    Send({21, 3, 3, 0, 2, 2, 40});
    EXPECT_EQ(Recv(), -1);
    EXPECT_STREQ(st_.why, "unexpected TLS record type 21 after the handshake");
}

TEST_F(RecordLink, OversizedPlaintextRefused)
{
    Send(Seal(st_.in, 0, 23, std::string(TLS_PLAINTEXT_MAX + 1, 'x')));
    EXPECT_EQ(Recv(), -1);
    EXPECT_STREQ(st_.why, "TLS record of 16385 bytes is too long");
}

TEST_F(RecordLink, PullPeekConsumeAndSealForTheDispatcher)
{
    err_t err;
    ASSERT_EQ(fcntl(fd_[0], F_SETFL, O_NONBLOCK), 0);
    EXPECT_EQ(tls_record_pull(fd_[0], &st_, &err), 0) << "nothing yet, and no blocking";
    Bytes a = Seal(st_.in, 0, 23, "first"), b = Seal(st_.in, 1, 23, "second");
    a.insert(a.end(), b.begin(), b.begin() + 10); // the second record in part
    Send(a);
    EXPECT_EQ(tls_record_pull(fd_[0], &st_, &err), 5);
    EXPECT_EQ(t_.ops->pending(&t_), 5u);
    Send(Bytes(b.begin() + 10, b.end()));
    EXPECT_EQ(tls_record_pull(fd_[0], &st_, &err), 11);
    const unsigned char *p;
    ASSERT_EQ(tls_record_peek(&st_, &p), 11u);
    EXPECT_EQ(std::string(reinterpret_cast<const char *>(p), 11), "firstsecond");
    tls_record_consume(&st_, 5);
    std::string got;
    EXPECT_EQ(Recv(&got), 6);
    EXPECT_EQ(got, "second");

    // sealing: what the test's opener (the same keys as out) reads back
    st_.out = st_.in;
    st_.out.seq = 7;
    transport_bytes out = {};
    out.max = 1 << 20;
    std::string big(40000, 'z');
    ASSERT_EQ(tls_record_seal(&st_, big.data(), big.size(), &out, &err), 0) << err.detail;
    EXPECT_EQ(st_.out.seq, 10u) << "16384 + 16384 + 7232";
    Bytes expect;
    for (uint64_t seq = 7, at = 0; seq < 10; seq++, at += TLS_PLAINTEXT_MAX) {
        Bytes r = Seal(st_.in, seq, 23, big.substr(at, TLS_PLAINTEXT_MAX));
        expect.insert(expect.end(), r.begin(), r.end());
    }
    EXPECT_EQ(Bytes(out.p, out.p + out.len), expect);
    transport_bytes_free(&out);
}

// A big receive opens many records per system call straight into the
// caller's buffer; small receives between them still see every byte in order.
TEST_F(RecordLink, ManyRecordsInOneBigReceiveKeepTheirOrder)
{
    std::string sent;
    Bytes wire;
    const size_t sizes[] = {TLS_PLAINTEXT_MAX, 1, 0, 10000, TLS_PLAINTEXT_MAX, 7, 300};
    for (uint64_t seq = 0; seq < 70; seq++) {
        size_t len = sizes[seq % 7];
        std::string content(len, 'a');
        for (size_t i = 0; i < len; i++) content[i] = static_cast<char>('a' + (seq * 31 + i) % 26);
        Bytes r = Seal(st_.in, seq, 23, content, seq % 5 == 0 ? 40 : 0);
        wire.insert(wire.end(), r.begin(), r.end());
        sent += content;
    }
    Bytes end = Seal(st_.in, 70, 21, std::string("\x01\x00", 2)); // close_notify
    wire.insert(wire.end(), end.begin(), end.end());
    std::thread peer([&] { // more than a socketpair holds: send while the stream reads
        for (size_t at = 0; at < wire.size();) {
            ssize_t k = send(fd_[1], wire.data() + at, wire.size() - at, 0);
            if (k <= 0) break;
            at += static_cast<size_t>(k);
        }
    });
    std::string got;
    std::vector<char> big(1 << 20);
    for (int i = 0; i < 100000; i++) {
        size_t n = i % 3 == 2 ? 5 : big.size(); // big, big, small, ...
        ssize_t k = t_.ops->recv(&t_, big.data(), n);
        if (k <= 0) {
            EXPECT_EQ(k, 0) << st_.why;
            break;
        }
        got.append(big.data(), static_cast<size_t>(k));
    }
    peer.join();
    EXPECT_EQ(got.size(), sent.size());
    EXPECT_TRUE(got == sent) << "the bytes opened differ from those sealed";
    EXPECT_EQ(st_.in.seq, 71u);
    EXPECT_TRUE(st_.eof);
    EXPECT_FALSE(st_.broken);
}

// A big send seals many records and sends them at once: the test's own
// sealer, with the same keys and numbers, makes the same bytes.
TEST_F(RecordLink, BigSendSealsRecordsTheIndependentSealerMatches)
{
    st_.out = st_.in;
    st_.out.seq = 3;
    std::string big(600000, 'x');
    for (size_t i = 0; i < big.size(); i++) big[i] = static_cast<char>(i * 7 + i / 4096);
    Bytes expect;
    for (uint64_t seq = 3, at = 0; at < big.size(); seq++, at += TLS_PLAINTEXT_MAX) {
        Bytes r = Seal(st_.in, seq, 23, big.substr(at, TLS_PLAINTEXT_MAX));
        expect.insert(expect.end(), r.begin(), r.end());
    }
    Bytes got;
    std::thread reader([&] {
        unsigned char buf[65536];
        while (got.size() < expect.size()) {
            ssize_t k = recv(fd_[1], buf, sizeof buf, 0);
            if (k <= 0) break;
            got.insert(got.end(), buf, buf + k);
        }
    });
    size_t at = 0;
    while (at < big.size()) {
        ssize_t k = t_.ops->send(&t_, big.data() + at, big.size() - at);
        ASSERT_GT(k, 0) << st_.why;
        at += static_cast<size_t>(k);
    }
    reader.join();
    EXPECT_EQ(st_.out.seq, 3u + (big.size() + TLS_PLAINTEXT_MAX - 1) / TLS_PLAINTEXT_MAX);
    EXPECT_TRUE(got == expect) << "the records sent differ from the independent sealer's";
}

TEST_F(RecordLink, SendTimeLimitInsideARecordBreaksTheStream)
{
    sock_set_timeouts(fd_[0], 50, 0);
    int small = 4096;
    setsockopt(fd_[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    std::string chunk(TLS_PLAINTEXT_MAX, 'q');
    uint64_t records = 0;
    ssize_t k;
    while ((k = t_.ops->send(&t_, chunk.data(), chunk.size())) > 0) {
        ASSERT_EQ(k, (ssize_t)TLS_PLAINTEXT_MAX);
        ASSERT_LT(++records, 1000u) << "the peer reads nothing: the socket must fill";
    }
    int e = errno;
    if (st_.broken) { // part of a record went: the stream is out of step for good
        EXPECT_EQ(e, ETIMEDOUT);
        EXPECT_STREQ(st_.why, "send time limit passed inside a TLS record");
        EXPECT_EQ(t_.ops->send(&t_, "x", 1), -1);
    } else { // nothing went: the record's number is free again
        EXPECT_EQ(e, EAGAIN);
        EXPECT_EQ(st_.out.seq, records);
    }
}

TEST_F(RecordLink, KeysFromASecretFollowRfc8448)
{
    // RFC 8448 §3: the server's handshake traffic secret and its key and iv
    const unsigned char secret[32] = {0xb6, 0x7b, 0x7d, 0x69, 0x0c, 0xc1, 0x6c, 0x4e, 0x75, 0xe5, 0x42,
                                      0x13, 0xcb, 0x2d, 0x37, 0xb4, 0xe9, 0xc9, 0x12, 0xbc, 0xde, 0xd9,
                                      0x10, 0x5d, 0x42, 0xbe, 0xfd, 0x59, 0xd3, 0x91, 0xad, 0x38};
    const unsigned char key[16] = {0x3f, 0xce, 0x51, 0x60, 0x09, 0xc2, 0x17, 0x27,
                                   0xd0, 0xf2, 0xe4, 0xe8, 0x6e, 0xe4, 0x03, 0xbc};
    const unsigned char iv[12] = {0x5d, 0x31, 0x3e, 0xb2, 0x67, 0x12, 0x76, 0xee, 0x13, 0x00, 0x0b, 0x30};
    tls_direction d;
    ASSERT_EQ(tls_record_keys(&d, 0x1301, secret, sizeof secret), 0);
    EXPECT_EQ(memcmp(d.key, key, sizeof key), 0);
    EXPECT_EQ(memcmp(d.iv, iv, sizeof iv), 0);
    EXPECT_EQ(tls_record_keys(&d, 0x1304, secret, sizeof secret), -1) << "CCM is not ours";
}

// ---- The handshake engine ----

class AcceptLink : public ::testing::Test {
  protected:
    void SetUp() override
    {
        err_t err;
        ctx_ = tls_server_context_new(tls_support::Pki("server.pem").c_str(),
                                      tls_support::Pki("server.key").c_str(), nullptr, &err);
        ASSERT_NE(ctx_, nullptr) << err.detail;
        a_ = tls_acceptor_new(ctx_, &err);
        ASSERT_NE(a_, nullptr) << err.detail;
        ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fd_), 0);
    }
    void TearDown() override
    {
        tls_acceptor_free(a_);
        tls_context_free(ctx_);
        close(fd_[0]);
        close(fd_[1]);
    }
    void Send(const Bytes &b) { ASSERT_EQ(send(fd_[1], b.data(), b.size(), 0), (ssize_t)b.size()); }
    tls_context *ctx_ = nullptr;
    tls_acceptor *a_ = nullptr;
    int fd_[2];
};

TEST_F(AcceptLink, NothingYetWantsRead)
{
    err_t err;
    EXPECT_EQ(tls_accept_step(a_, fd_[0], &err), TLS_ACCEPT_WANT_READ);
}

TEST_F(AcceptLink, PlainClientIsNamedAsSuch)
{
    err_t err;
    Send({0x4E, 0x52, 0, 1});
    EXPECT_EQ(tls_accept_step(a_, fd_[0], &err), TLS_ACCEPT_NOT_TLS);
}

TEST_F(AcceptLink, AbsurdRecordLengthRefusedBeforeReadingIt)
{
    err_t err;
    Send({22, 3, 1, 0xff, 0xff});
    EXPECT_EQ(tls_accept_step(a_, fd_[0], &err), NUMRPC_EPROTO);
    EXPECT_STREQ(err.detail, "TLS record length 65535 out of range in the handshake");
    EXPECT_EQ(tls_accept_step(a_, fd_[0], &err), NUMRPC_EPROTO) << "stays failed";
}

TEST_F(AcceptLink, HugeHandshakeMessageRefused)
{
    err_t err;
    // a ClientHello header that claims 16 MiB
    Send({22, 3, 1, 0, 8, 1, 0xff, 0xff, 0xff, 3, 3, 0, 0});
    EXPECT_EQ(tls_accept_step(a_, fd_[0], &err), NUMRPC_EPROTO);
    EXPECT_NE(strstr(err.detail, "TLS handshake failed: "), nullptr) << err.detail;
}

TEST_F(AcceptLink, BlockingHandshakeKeepsItsDeadline)
{
    err_t err;
    tls_stream_state st;
    Send({22, 3, 1, 0, 100, 1}); // a ClientHello that never ends
    EXPECT_EQ(tls_accept_blocking(ctx_, fd_[0], 100, &st, &err), NUMRPC_ETIMEDOUT);
    EXPECT_STREQ(err.detail, "TLS handshake not finished within 100 ms");
}

TEST(TlsClient, HandshakeWithASilentServerKeepsItsDeadline)
{
    err_t err;
    int port = 0;
    int lfd = sock_listen("127.0.0.1", 0, &port, &err); // the kernel accepts; nobody answers
    ASSERT_GE(lfd, 0) << err.detail;
    tls_context *ctx = tls_client_context_new(tls_support::Pki("ca.pem").c_str(), nullptr, nullptr, &err);
    ASSERT_NE(ctx, nullptr) << err.detail;
    transport t;
    EXPECT_EQ(tls_client_connect(&t, ctx, "127.0.0.1", port, 200, nullptr, &err), NUMRPC_ETIMEDOUT);
    EXPECT_EQ(std::string(err.detail), "TLS handshake with 127.0.0.1:" + std::to_string(port) + " not finished in time");
    EXPECT_EQ(t.fd, -1);
    tls_context_free(ctx);
    close(lfd);
}

// An OpenSSL client on fd trusting ca.pem, without a host name to check.
SSL *PlainClient(int fd)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_load_verify_locations(ctx, tls_support::Pki("ca.pem").c_str(), nullptr);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    SSL *ssl = SSL_new(ctx);
    SSL_CTX_free(ctx); // ssl keeps its reference
    SSL_set_fd(ssl, fd);
    return ssl;
}

// The dispatcher's way: one thread steps the handshake on a non-blocking
// socket between other work (here, the client's own steps).  After the
// client's last step, `after` runs before the server steps again.  The
// results the server's steps gave are counted in seen (by result).
void StepBoth(tls_acceptor *a, int server_fd, SSL *client, const std::function<void()> &after, int seen[3])
{
    err_t err;
    bool client_done = false, server_done = false;
    for (int i = 0; i < 1000 && !(client_done && server_done); i++) {
        if (!client_done && SSL_connect(client) == 1) {
            client_done = true;
            after();
        }
        if (!server_done) {
            int rc = tls_accept_step(a, server_fd, &err);
            ASSERT_TRUE(rc == TLS_ACCEPT_WANT_READ || rc == TLS_ACCEPT_WANT_WRITE || rc == TLS_ACCEPT_DONE)
                << rc << " " << err.detail;
            seen[rc]++;
            server_done = rc == TLS_ACCEPT_DONE;
        }
    }
    ASSERT_TRUE(client_done && server_done);
}

TEST_F(AcceptLink, SteppedHandshakeKeepsWhatFollowsTheClientFinished)
{
    SSL *client = PlainClient(fd_[1]);
    int seen[3] = {0, 0, 0};
    // the client's Finished is sent: data follows at once, before the server steps again
    StepBoth(a_, fd_[0], client, [&] { ASSERT_EQ(SSL_write(client, "early bird", 10), 10); }, seen);
    tls_stream_state st;
    tls_acceptor_take_state(a_, &st);
    EXPECT_GT(st.cipher_len, 0u) << "the data record came with the Finished and stays for the record layer";
    EXPECT_EQ(st.in.seq, 0u);
    transport t = tls_record_transport(fd_[0], &st); // not closed: TearDown closes the socket
    char got[32] = {0};
    EXPECT_EQ(t.ops->recv(&t, got, sizeof got), 10);
    EXPECT_STREQ(got, "early bird");
    ASSERT_EQ(t.ops->send(&t, "and the worm", 12), 12);
    char back[32] = {0};
    EXPECT_EQ(SSL_read(client, back, sizeof back), 12) << "after the tickets, our first record";
    EXPECT_STREQ(back, "and the worm");
    SSL_free(client);
}

TEST_F(AcceptLink, OutputTheSocketCannotTakeWaitsForTheNextStep)
{
    err_t err;
    tls_context *big = tls_server_context_new(tls_support::Pki("big.pem").c_str(),
                                              tls_support::Pki("big.key").c_str(), nullptr, &err);
    ASSERT_NE(big, nullptr) << err.detail;
    tls_acceptor *a = tls_acceptor_new(big, &err);
    int small = 4096;
    setsockopt(fd_[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    SSL *client = PlainClient(fd_[1]);
    int seen[3] = {0, 0, 0};
    StepBoth(a, fd_[0], client, [] {}, seen);
    EXPECT_GT(seen[TLS_ACCEPT_WANT_WRITE], 0) << "a 60 KiB certificate does not fit the socket at once";
    tls_stream_state st;
    tls_acceptor_take_state(a, &st);
    transport t = tls_record_transport(fd_[0], &st);
    ASSERT_EQ(t.ops->send(&t, "whole", 5), 5);
    char back[8] = {0};
    EXPECT_EQ(SSL_read(client, back, sizeof back), 5);
    EXPECT_STREQ(back, "whole");
    SSL_free(client);
    tls_acceptor_free(a);
    tls_context_free(big);
}

TEST_F(AcceptLink, ClientLeavingMidHandshakeIsAnError)
{
    err_t err;
    Send({22, 3, 1, 0, 100, 1});
    close(fd_[1]);
    fd_[1] = -1;
    EXPECT_EQ(tls_accept_step(a_, fd_[0], &err), NUMRPC_EIO);
    EXPECT_STREQ(err.detail, "the client closed the connection during the TLS handshake");
}

} // namespace
