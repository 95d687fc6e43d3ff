// tls_record_test.cc -- the record layer and the handshake engine given
// hostile bytes over a socketpair, checked against a sealer written here.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <poll.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <thread>
#include <string>
#include <vector>

#include <openssl/evp.h>
#include <openssl/hmac.h>
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

// Opens one record sealed with d at seq (AES-128-GCM, RFC 8446 §5.2 read
// directly): true with its content and inner type, false for a bad tag.
bool Open(const tls_direction &d, uint64_t seq, const Bytes &rec, std::string *content, int *type)
{
    if (rec.size() < 5 + 16) return false;
    size_t body = rec.size() - 5 - 16;
    unsigned char nonce[12];
    memcpy(nonce, d.iv, 12);
    for (int b = 0; b < 8; b++) nonce[11 - b] ^= static_cast<unsigned char>(seq >> (8 * b));
    Bytes out(body + 1);
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int n = 0, m = 0;
    bool ok = EVP_DecryptInit_ex(c, EVP_aes_128_gcm(), nullptr, d.key, nonce) == 1 &&
              EVP_DecryptUpdate(c, nullptr, &n, rec.data(), 5) == 1 &&
              EVP_DecryptUpdate(c, out.data(), &n, rec.data() + 5, static_cast<int>(body)) == 1 &&
              EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 16, const_cast<unsigned char *>(rec.data() + 5 + body)) == 1 &&
              EVP_DecryptFinal_ex(c, out.data() + n, &m) == 1;
    EVP_CIPHER_CTX_free(c);
    if (!ok) return false;
    size_t len = body;
    while (len > 0 && out[len - 1] == 0) len--;
    if (len == 0) return false;
    *type = out[len - 1];
    content->assign(reinterpret_cast<const char *>(out.data()), len - 1);
    return true;
}

// HKDF-Expand-Label(secret, label, "", 32) with SHA-256, written here from
// RFC 8446 §7.1 (one HMAC block).
Bytes ExpandLabel(const unsigned char *secret, size_t secret_len, const std::string &label, size_t len)
{
    Bytes info = {static_cast<unsigned char>(len >> 8), static_cast<unsigned char>(len),
                  static_cast<unsigned char>(6 + label.size())};
    for (char ch : "tls13 " + label) info.push_back(static_cast<unsigned char>(ch));
    info.push_back(0);
    info.push_back(1);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    HMAC(EVP_sha256(), secret, static_cast<int>(secret_len), info.data(), info.size(), md, &n);
    return Bytes(md, md + len);
}

// The keys after a KeyUpdate of d (RFC 8446 §7.2, "traffic upd").
tls_direction Next(const tls_direction &d)
{
    Bytes next = ExpandLabel(d.secret, d.secret_len, "traffic upd", 32);
    tls_direction n;
    EXPECT_EQ(tls_record_keys(&n, 0x1301, next.data(), next.size()), 0);
    return n;
}

// The whole records at p[0, len).
std::vector<Bytes> Records(const unsigned char *p, size_t len)
{
    std::vector<Bytes> out;
    for (size_t at = 0; at + 5 <= len;) {
        size_t size = 5 + (static_cast<size_t>(p[at + 3]) << 8 | p[at + 4]);
        out.emplace_back(p + at, p + at + size);
        at += size;
    }
    return out;
}

const std::string kKeyUpdate("\x18\x00\x00\x01\x00", 5), kKeyUpdateRequested("\x18\x00\x00\x01\x01", 5);

// A server's stream state with AES-128-GCM keys from random traffic
// secrets, its peer (the test) on the other end of a socketpair.
class RecordLink : public ::testing::Test {
  protected:
    void SetUp() override
    {
        ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd_), 0);
        memset(&st_, 0, sizeof st_);
        st_.suite = 0x1301;
        unsigned char secret[32];
        RAND_bytes(secret, sizeof secret);
        ASSERT_EQ(tls_record_keys(&st_.in, 0x1301, secret, sizeof secret), 0);
        RAND_bytes(secret, sizeof secret);
        ASSERT_EQ(tls_record_keys(&st_.out, 0x1301, secret, sizeof secret), 0);
        peer_in_ = st_.out;
        peer_seq_ = 0;
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
    // The next record the server sent (empty after 2 s without one).
    Bytes ReadRecord()
    {
        Bytes rec(5);
        struct pollfd p = {fd_[1], POLLIN, 0};
        if (poll(&p, 1, 2000) != 1 || recv(fd_[1], rec.data(), 5, MSG_WAITALL) != 5) return {};
        size_t len = static_cast<size_t>(rec[3]) << 8 | rec[4];
        rec.resize(5 + len);
        if (recv(fd_[1], rec.data() + 5, len, MSG_WAITALL) != (ssize_t)len) return {};
        return rec;
    }
    // The server's next record as the peer opens it (keys peer_in_).
    bool ReadOpen(std::string *content, int *type)
    {
        Bytes rec = ReadRecord();
        return !rec.empty() && Open(peer_in_, peer_seq_++, rec, content, type);
    }
    // The fatal alert the server sent next: its description, or -1.
    int PeerAlert()
    {
        std::string content;
        int type = 0;
        if (!ReadOpen(&content, &type) || type != 21 || content.size() != 2 || content[0] != 2) return -1;
        return static_cast<unsigned char>(content[1]);
    }
    int fd_[2];
    tls_stream_state st_;
    transport t_;
    tls_direction peer_in_; // the keys the peer opens the server's records with
    uint64_t peer_seq_;
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
    EXPECT_EQ(errno, ECONNRESET);
    EXPECT_STREQ(st_.why, "the peer closed the connection inside a TLS record (50 bytes of it came) without "
                          "close_notify: the stream is truncated");
    EXPECT_TRUE(st_.truncated);
}

// A FIN between records without close_notify: what came before is read,
// then the end is reported as a truncation, not as EOF.
TEST_F(RecordLink, EndWithoutCloseNotifyBetweenRecordsIsTruncation)
{
    Send(Seal(st_.in, 0, 23, "whole"));
    shutdown(fd_[1], SHUT_WR);
    std::string got;
    EXPECT_EQ(Recv(&got), 5);
    EXPECT_EQ(got, "whole");
    EXPECT_EQ(Recv(), -1);
    EXPECT_EQ(errno, ECONNRESET);
    EXPECT_STREQ(st_.why, "the peer closed the connection without close_notify: the stream may be truncated");
    EXPECT_TRUE(st_.truncated);
    EXPECT_TRUE(st_.broken);
}

TEST_F(RecordLink, PullReportsTruncationOnceThePlaintextIsTaken)
{
    err_t err;
    ASSERT_EQ(fcntl(fd_[0], F_SETFL, O_NONBLOCK), 0);
    Send(Seal(st_.in, 0, 23, "last words"));
    shutdown(fd_[1], SHUT_WR);
    EXPECT_EQ(tls_record_pull(fd_[0], &st_, &err), 10) << "the plaintext before the end is still good";
    EXPECT_TRUE(st_.eof && st_.truncated);
    tls_record_consume(&st_, 10);
    EXPECT_LT(tls_record_pull(fd_[0], &st_, &err), 0);
    EXPECT_STREQ(err.detail, "the peer closed the connection without close_notify: the stream may be truncated");
}

TEST_F(RecordLink, CloseNotifyIsAnOrderlyEnd)
{
    err_t err;
    ASSERT_EQ(fcntl(fd_[0], F_SETFL, O_NONBLOCK), 0);
    Send(Seal(st_.in, 0, 23, "bye"));
    Send(Seal(st_.in, 1, 21, std::string("\x01\x00", 2)));
    shutdown(fd_[1], SHUT_WR);
    EXPECT_EQ(tls_record_pull(fd_[0], &st_, &err), 3);
    tls_record_consume(&st_, 3);
    EXPECT_EQ(tls_record_pull(fd_[0], &st_, &err), 0);
    EXPECT_TRUE(st_.eof);
    EXPECT_FALSE(st_.truncated);
    EXPECT_EQ(Recv(), 0);
    EXPECT_FALSE(st_.broken);
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
    EXPECT_EQ(PeerAlert(), 22) << "record_overflow";
}

// RFC 8446 §5.4: padding counts in the 2^14 + 1 bytes of TLSInnerPlaintext.
TEST_F(RecordLink, PaddingUpToTheLimitOpensAndOneByteMoreOverflows)
{
    Send(Seal(st_.in, 0, 23, "pad", TLS_PLAINTEXT_MAX + 1 - 4)); // 16385 bytes inside
    std::string got;
    EXPECT_EQ(Recv(&got), 3) << st_.why;
    EXPECT_EQ(got, "pad");
    Send(Seal(st_.in, 1, 23, "pad", TLS_PLAINTEXT_MAX + 2 - 4));
    EXPECT_EQ(Recv(), -1);
    EXPECT_STREQ(st_.why, "TLS record of 16385 bytes is too long");
    EXPECT_EQ(PeerAlert(), 22) << "record_overflow";
}

TEST_F(RecordLink, ZeroLengthApplicationDataIsSkippedNotEnd)
{
    Send(Seal(st_.in, 0, 23, ""));
    Send(Seal(st_.in, 1, 23, "", 100));
    Send(Seal(st_.in, 2, 23, "after"));
    std::string got;
    EXPECT_EQ(Recv(&got), 5);
    EXPECT_EQ(got, "after");
    EXPECT_EQ(st_.in.seq, 3u);
}

TEST_F(RecordLink, AlertsTellThePeerWhatWasWrong)
{
    struct Case {
        std::function<Bytes(const tls_direction &)> rec; // sealed with the keys of each run
        int alert;
        const char *why;
    };
    const Case cases[] = {
        {[](const tls_direction &d) {
             Bytes bad_tag = Seal(d, 0, 23, "data");
             bad_tag[7] ^= 0x40;
             return bad_tag;
         },
         20, "TLS record 0 failed authentication (bad tag)"},
        {[](const tls_direction &d) { return Seal(d, 0, 24, "heartbeat"); }, 10,
         "bad TLS inner content type 24 (length 9)"},
        {[](const tls_direction &d) { return Seal(d, 0, 20, "\x01"); }, 10, "bad TLS inner content type 20 (length 1)"},
        {[](const tls_direction &d) { return Seal(d, 0, 0, "", 5); }, 10, "TLS record without a content type"},
        {[](const tls_direction &d) { return Seal(d, 0, 21, std::string("\x02\x28\x02", 3)); }, 50,
         "TLS alert record of 3 bytes"},
        {[](const tls_direction &) { return Bytes{22, 3, 3, 0, 5, 1, 0, 0, 1, 0}; }, 10,
         "unexpected TLS record type 22 after the handshake"},
        {[](const tls_direction &) { return Bytes{23, 3, 3, 0x48, 0x01}; }, 22, "TLS record length 18433 out of range"},
    };
    for (const Case &c : cases) {
        TearDown();
        SetUp();
        Send(c.rec(st_.in));
        EXPECT_EQ(Recv(), -1);
        EXPECT_EQ(errno, EPROTO);
        EXPECT_STREQ(st_.why, c.why);
        EXPECT_EQ(PeerAlert(), c.alert) << c.why;
    }
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
        // padding within the 2^14 + 1 bytes of TLSInnerPlaintext (RFC 8446 §5.4)
        Bytes r = Seal(st_.in, seq, 23, content, seq % 5 == 0 && len + 41 <= TLS_PLAINTEXT_MAX + 1 ? 40 : 0);
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

// ---- KeyUpdate (RFC 8446 §4.6.3) ----

TEST_F(RecordLink, PeerKeyUpdateMovesTheReceiveKeys)
{
    tls_direction in0 = st_.in, in1 = Next(in0);
    Send(Seal(in0, 0, 23, "old"));
    Send(Seal(in0, 1, 22, kKeyUpdate));
    Send(Seal(in1, 0, 23, "new"));
    std::string got, more;
    while (got.size() < 6 && Recv(&more) > 0) got += more;
    EXPECT_EQ(got, "oldnew") << st_.why;
    EXPECT_EQ(st_.in.updates, 1u);
    EXPECT_EQ(st_.in.seq, 1u);
    EXPECT_EQ(memcmp(st_.in.key, in1.key, 16), 0);
    EXPECT_EQ(st_.out.update_due, 0u) << "update_not_requested owes nothing";
    Send(Seal(in0, 2, 23, "the old key is gone"));
    EXPECT_EQ(Recv(), -1);
    EXPECT_STREQ(st_.why, "TLS record 1 failed authentication (bad tag)");
}

TEST_F(RecordLink, RequestedKeyUpdateIsAnsweredBeforeOurNextRecord)
{
    tls_direction in0 = st_.in;
    Send(Seal(in0, 0, 22, kKeyUpdateRequested));
    Send(Seal(Next(in0), 0, 23, "ping"));
    std::string got;
    EXPECT_EQ(Recv(&got), 4);
    EXPECT_EQ(got, "ping");
    EXPECT_EQ(st_.out.update_due, 1u);
    ASSERT_EQ(t_.ops->send(&t_, "pong", 4), 4);
    std::string content;
    int type = 0;
    ASSERT_TRUE(ReadOpen(&content, &type)) << "the KeyUpdate, with the old key";
    EXPECT_EQ(type, 22);
    EXPECT_EQ(content, kKeyUpdate) << "update_not_requested";
    peer_in_ = Next(peer_in_);
    peer_seq_ = 0;
    ASSERT_TRUE(ReadOpen(&content, &type)) << "the data, with the next key";
    EXPECT_EQ(type, 23);
    EXPECT_EQ(content, "pong");
    EXPECT_EQ(st_.out.updates, 1u);
    EXPECT_EQ(st_.out.update_due, 0u);
}

TEST_F(RecordLink, BadKeyUpdatesAndHandshakeMessagesGetTheirAlerts)
{
    struct Case {
        std::string msg;
        int alert;
        const char *why;
    };
    const Case cases[] = {
        {std::string("\x18\x00\x00\x00", 4), 50, "TLS KeyUpdate of 0 bytes (1 expected)"},
        {std::string("\x18\x00\x00\x02\x00\x00", 6), 50, "TLS KeyUpdate of 2 bytes (1 expected)"},
        {std::string("\x18\x00\x00\x01\x02", 5), 47, "TLS KeyUpdate with request_update 2"},
        {std::string("\x18\x00\x00\x01\xff", 5), 47, "TLS KeyUpdate with request_update 255"},
        {kKeyUpdate + kKeyUpdate, 10, "TLS KeyUpdate not alone in its record (10 bytes)"},
        {std::string("\x18\x00", 2), 10, "a TLS handshake message cut across records after the handshake (2 bytes)"},
        {std::string("\x04\x00\x00\x01\x00", 5), 10, "the peer sent a TLS handshake message (type 4) after the handshake"},
    };
    for (const Case &c : cases) {
        TearDown();
        SetUp();
        Send(Seal(st_.in, 0, 22, c.msg));
        EXPECT_EQ(Recv(), -1);
        EXPECT_STREQ(st_.why, c.why);
        EXPECT_EQ(PeerAlert(), c.alert) << c.why;
    }
}

TEST_F(RecordLink, OurKeyUpdateGoesBeforeTheLimit)
{
    tls_record_set_key_update_limit(&st_, 4);
    tls_direction d = st_.out;
    transport_bytes out = {};
    out.max = 1 << 20;
    err_t err;
    for (int i = 0; i < 10; i++) {
        std::string msg = "record " + std::to_string(i);
        ASSERT_EQ(tls_record_seal(&st_, msg.data(), msg.size(), &out, &err), 0) << err.detail;
    }
    uint64_t seq = 0, per_key = 0;
    int data = 0, updates = 0;
    for (const Bytes &rec : Records(out.p, out.len)) {
        std::string content;
        int type = 0;
        ASSERT_TRUE(Open(d, seq++, rec, &content, &type)) << "record " << seq - 1 << " of key " << updates;
        ASSERT_LE(++per_key, 4u) << "no key seals more than the limit, its KeyUpdate included";
        if (type == 22) {
            EXPECT_EQ(content, kKeyUpdate);
            d = Next(d);
            seq = per_key = 0;
            updates++;
        } else {
            EXPECT_EQ(type, 23);
            EXPECT_EQ(content, "record " + std::to_string(data++));
        }
    }
    EXPECT_EQ(data, 10);
    EXPECT_EQ(updates, 3) << "3 data records per key, then the KeyUpdate";
    EXPECT_EQ(st_.out.updates, 3u);
    transport_bytes_free(&out);
}

// ---- One holder at a time ----

// A state a worker gave back with counts beyond its buffers (its routine
// taken over) is refused whole: nothing is read or written past them.
TEST_F(RecordLink, CountsOutOfBoundsBreakTheStateInsteadOfBeingUsed)
{
    err_t err;
    st_.cipher_len = sizeof st_.cipher + 1000;
    EXPECT_LT(tls_record_pull(fd_[0], &st_, &err), 0);
    EXPECT_TRUE(st_.broken);
    EXPECT_EQ(0u, st_.cipher_len);
    EXPECT_STREQ(st_.why, "TLS state with counts out of bounds: refused");
    st_.broken = 0;
    st_.plain_off = 10;
    st_.plain_len = sizeof st_.plain; // off + len past the end
    errno = 0;
    EXPECT_EQ(Recv(), -1);
    EXPECT_TRUE(st_.broken);
    EXPECT_EQ(0u, st_.plain_len);
}

TEST_F(RecordLink, ASecondHolderGetsEbusyAndSealsOrOpensNothing)
{
    err_t err;
    transport_bytes out = {};
    out.max = 1 << 20;
    Send(Seal(st_.in, 0, 23, "waiting"));
    uint64_t out_seq = st_.out.seq;
    st_.busy = 1; // another holder: a thread, or a process sharing the state
    EXPECT_EQ(tls_record_seal(&st_, "x", 1, &out, &err), NUMRPC_EBUSY);
    EXPECT_STREQ(err.detail, "TLS state in use by another holder");
    EXPECT_EQ(out.len, 0u);
    EXPECT_EQ(tls_record_pull(fd_[0], &st_, &err), NUMRPC_EBUSY);
    errno = 0;
    EXPECT_EQ(t_.ops->send(&t_, "x", 1), -1);
    EXPECT_EQ(errno, EBUSY);
    errno = 0;
    EXPECT_EQ(Recv(), -1);
    EXPECT_EQ(errno, EBUSY);
    EXPECT_EQ(st_.out.seq, out_seq);
    EXPECT_EQ(st_.in.seq, 0u);
    EXPECT_EQ(st_.cipher_len, 0u) << "nothing was even received";
    EXPECT_FALSE(st_.broken) << "contention does not break the stream";
    st_.busy = 0;
    std::string got;
    EXPECT_EQ(Recv(&got), 7);
    EXPECT_EQ(got, "waiting");
    EXPECT_EQ(st_.busy, 0u) << "given back";
    EXPECT_EQ(tls_record_holder_died(&st_), 0) << "not held: nothing to do";
    EXPECT_FALSE(st_.broken);
    st_.busy = 1;
    EXPECT_EQ(tls_record_holder_died(&st_), 1);
    EXPECT_TRUE(st_.broken);
    EXPECT_EQ(st_.busy, 0u);
    EXPECT_STREQ(st_.why, "the holder of the TLS state died inside a record operation");
    transport_bytes_free(&out);
}

// Two threads seal on one state as fast as they can: the loser of each
// race gets EBUSY; every record sealed opens under a number of its own.
TEST_F(RecordLink, ConcurrentSealersNeverShareASequenceNumber)
{
    const int rounds = 3000;
    std::vector<Bytes> sealed[2];
    std::atomic<int> refused{0};
    std::atomic<bool> go{false};
    auto sealer = [&](int id) {
        while (!go) {
        }
        for (int i = 0; i < rounds; i++) {
            transport_bytes out = {};
            out.max = 1 << 16;
            err_t err;
            std::string msg = "thread " + std::to_string(id) + " record " + std::to_string(i);
            int rc = tls_record_seal(&st_, msg.data(), msg.size(), &out, &err);
            if (rc == NUMRPC_EBUSY) {
                refused++;
                EXPECT_EQ(out.len, 0u);
            } else {
                EXPECT_EQ(rc, 0) << err.detail;
                sealed[id].emplace_back(out.p, out.p + out.len);
            }
            transport_bytes_free(&out);
        }
    };
    std::thread a(sealer, 0), b(sealer, 1);
    go = true;
    a.join();
    b.join();
    size_t n = sealed[0].size() + sealed[1].size();
    EXPECT_EQ(n + static_cast<size_t>(refused), 2u * rounds);
    EXPECT_EQ(st_.out.seq, n) << "one number per record sealed, none lost";
    std::vector<int> owner(n, -1);
    for (int id = 0; id < 2; id++) {
        uint64_t from = 0; // a thread's numbers grow
        for (const Bytes &rec : sealed[id]) {
            std::string content;
            int type;
            uint64_t seq = from;
            while (seq < n && !Open(peer_in_, seq, rec, &content, &type)) seq++;
            ASSERT_LT(seq, n) << "a record of thread " << id << " opens under no number";
            EXPECT_EQ(owner[seq], -1) << "number " << seq << " used twice";
            owner[seq] = id;
            from = seq + 1;
        }
    }
    printf("%zu records sealed, %d refused with EBUSY\n", n, refused.load());
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
