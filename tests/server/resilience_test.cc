// resilience_test.cc -- peers that begin a request and then stall hold a
// worker only for the request's time and one address's share (first packet
// then silence; empty TLS records at the dispatcher and at a worker), while
// good calls from another address are answered (real servers on 127.0.0.1).
#include <gtest/gtest.h>

#include <cblas.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "../common/tls_support.h"
#include "../support/raw_peer.h"
#include "../support/server_proc.h"
#include "../support/test_util.h"
#include "numrpc.h"
#include "protocol.h"

namespace {

using tls_support::Pki;

// A good call, checked against the local BLAS on the same inputs.
void ExpectRightDaxpy(int n)
{
    std::vector<double> x(n), y(n), want(n);
    for (int i = 0; i < n; i++) {
        x[i] = 0.25 * i - 7;
        y[i] = want[i] = 3.0 / (i + 2);
    }
    cblas_daxpy(n, -1.5, x.data(), 1, want.data(), 1);
    ASSERT_EQ(numrpc_call("daxpy", n, -1.5, x.data(), 1, y.data(), 1), NUMRPC_OK) << numrpc_last_error_detail();
    for (int i = 0; i < n; i++) ASSERT_DOUBLE_EQ(y[i], want[i]) << i;
}

// The first packet of a CALL to daxpy (n = 4) without its END flag: the
// request has begun, and the rest never comes.
std::vector<uint8_t> CallStart(uint32_t call_id)
{
    std::vector<uint8_t> body = {0, 0, 0, 5, 'd', 'a', 'x', 'p', 'y', 0, 0, 0};
    body.resize(64, 0);
    return Packet(PROTO_CALL, call_id, 0, body);
}

void InitTlsClient(int port)
{
    numrpc_finalize();
    const std::string ca = Pki("ca.pem"), addr = "127.0.0.1:" + std::to_string(port);
    numrpc_config cfg = {};
    cfg.servers = addr.c_str();
    cfg.tls_ca = ca.c_str();
    ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK) << numrpc_last_error_detail();
}

// ---- A TLS peer that writes its own records ----

// The client's traffic secrets, as OpenSSL's key log tells them.
struct Secrets {
    std::vector<unsigned char> client;
};

void KeyLog(const SSL *ssl, const char *line)
{
    auto *s = static_cast<Secrets *>(SSL_get_app_data(ssl));
    const char label[] = "CLIENT_TRAFFIC_SECRET_0 ";
    if (s == nullptr || strncmp(line, label, sizeof label - 1) != 0) return;
    const char *hex = strchr(line + sizeof label - 1, ' ');
    if (hex == nullptr) return;
    s->client.clear();
    for (hex++; hex[0] && hex[1]; hex += 2) s->client.push_back((unsigned char)std::stoi(std::string(hex, 2), nullptr, 16));
}

// A TLS connection from address `from` whose handshake and reading are
// OpenSSL's, and whose records are sealed here (empty ones too), with the
// client's application keys taken from the key log.
class RawTlsPeer {
  public:
    bool Open(const char *from, int port)
    {
        fd_ = ConnectFrom(from, port);
        ctx_ = SSL_CTX_new(TLS_client_method());
        if (fd_ < 0 || ctx_ == nullptr) return false;
        SSL_CTX_set_min_proto_version(ctx_, TLS1_3_VERSION);
        SSL_CTX_load_verify_locations(ctx_, Pki("ca.pem").c_str(), nullptr);
        SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
        SSL_CTX_set_keylog_callback(ctx_, KeyLog);
        ssl_ = SSL_new(ctx_);
        SSL_set_app_data(ssl_, &secrets_);
        SSL_set_fd(ssl_, fd_);
        if (SSL_connect(ssl_) != 1 || secrets_.client.empty()) return false;
        memset(&st_, 0, sizeof st_);
        st_.suite = SSL_CIPHER_get_protocol_id(SSL_get_current_cipher(ssl_));
        return tls_record_keys(&st_.out, st_.suite, secrets_.client.data(), secrets_.client.size()) == 0;
    }
    ~RawTlsPeer()
    {
        if (ssl_) SSL_free(ssl_);
        if (ctx_) SSL_CTX_free(ctx_);
        if (fd_ >= 0) close(fd_);
    }
    // One record of bytes (at most TLS_PLAINTEXT_MAX; none: an empty record).
    bool Send(const std::vector<uint8_t> &bytes)
    {
        std::vector<unsigned char> rec(TLS_RECORD_HEADER + bytes.size() + 1 + TLS_TAG_SIZE);
        size_t n = tls_seal_one(&st_, TLS_TYPE_APPLICATION, bytes.data(), bytes.size(), rec.data());
        return n > 0 && send(fd_, rec.data(), n, MSG_NOSIGNAL) == (ssize_t)n;
    }
    // The status of the next REPLY (INT32_MIN when none came whole), its detail.
    int32_t ReadReply(std::string *detail)
    {
        std::vector<uint8_t> hdr(PROTO_HEADER_SIZE);
        if (!ReadFull(hdr.data(), hdr.size()) || hdr[3] != PROTO_REPLY) return INT32_MIN;
        uint32_t len = uint32_t(hdr[12]) << 24 | uint32_t(hdr[13]) << 16 | uint32_t(hdr[14]) << 8 | hdr[15];
        if (len < 8 || len > PROTO_MAX_PACKET) return INT32_MIN;
        std::vector<uint8_t> body(len);
        if (!ReadFull(body.data(), len)) return INT32_MIN;
        auto u32 = [&body](size_t at) {
            return uint32_t(body[at]) << 24 | uint32_t(body[at + 1]) << 16 | uint32_t(body[at + 2]) << 8 | body[at + 3];
        };
        uint32_t n = u32(4);
        if (detail) detail->assign(n <= len - 8 ? std::string(body.begin() + 8, body.begin() + 8 + n) : "");
        return static_cast<int32_t>(u32(0));
    }
    // What ended the stream: the name of the alert the server sent, or "closed".
    std::string End()
    {
        char byte;
        ERR_clear_error();
        int r = SSL_read(ssl_, &byte, 1);
        if (r > 0) return "data";
        int reason = ERR_GET_REASON(ERR_peek_last_error());
        if (SSL_get_error(ssl_, r) == SSL_ERROR_SSL && reason >= SSL_AD_REASON_OFFSET)
            return SSL_alert_desc_string_long(reason - SSL_AD_REASON_OFFSET);
        return "closed";
    }
    int fd() const { return fd_; }

  private:
    bool ReadFull(uint8_t *p, size_t n)
    {
        for (size_t got = 0; got < n;) {
            int r = SSL_read(ssl_, p + got, (int)(n - got));
            if (r <= 0) return false;
            got += (size_t)r;
        }
        return true;
    }
    int fd_ = -1;
    SSL_CTX *ctx_ = nullptr;
    SSL *ssl_ = nullptr;
    Secrets secrets_;
    tls_stream_state st_;
};

std::vector<std::string> TlsArgs(std::vector<std::string> more)
{
    std::vector<std::string> args = {"--tls-cert", Pki("server.pem"), "--tls-key", Pki("server.key"),
                                     "--admin-socket", "none"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

} // namespace

// Before: a worker that had taken a request waited for its next bytes up to
// --io-timeout (60 s), the rate rule ran only when bytes came, and the
// queue lent every worker to whoever came first: eight connections that
// sent a first packet and then nothing held both workers for a minute.
// Now the rate rule runs on the clock from the request's first byte, and
// one address has at most --max-receiving-per-peer workers reading.
TEST(FirstPacketThenSilence, HoldsOneWorkerForTheRequestTimeOnly)
{
    ServerProc server({"--workers", "2", "--max-workers", "2", "--max-receiving-per-peer", "1", "--request-timeout",
                       "1000", "--admin-socket", "none"});
    std::vector<int> fds;
    for (int i = 0; i < 8; i++) {
        int fd = ConnectFrom("127.0.0.2", server.port());
        ASSERT_GE(fd, 0);
        ASSERT_TRUE(SendHello(fd));
        ASSERT_EQ(ReadReplyStatus(fd), NUMRPC_OK);
        std::vector<uint8_t> start = CallStart(2);
        ASSERT_EQ(send(fd, start.data(), start.size(), MSG_NOSIGNAL), (ssize_t)start.size());
        fds.push_back(fd);
    }
    UseServer(server.address());
    numrpc_set_timeout(5); // met only while a worker is left for this address
    for (int k = 0; k < 10; k++) ExpectRightDaxpy(2000);
    for (int fd : fds) {
        std::string detail;
        EXPECT_EQ(ReadReplyStatus(fd, &detail), NUMRPC_ETIMEDOUT) << detail;
        EXPECT_TRUE(Contains(detail, "request too slow")) << detail;
        EXPECT_TRUE(ClosedByPeer(fd));
        close(fd);
    }
    ExpectRightDaxpy(10);
    EXPECT_TRUE(server.alive());
    numrpc_finalize();
}

// Before: the dispatcher opened records while bytes came, and empty ones
// never filled its buffer: a peer streaming empty records kept it from
// every other connection.  Now a pull opens 64 records at most, and more
// than 32 records in a row without application data end the stream with
// an unexpected_message alert.
TEST(EmptyTlsRecords, AtTheDispatcherEndTheStreamAndStarveNobody)
{
    ServerProc server(TlsArgs({}));
    RawTlsPeer attacker;
    ASSERT_TRUE(attacker.Open("127.0.0.2", server.port()));
    std::atomic<int> sent{0};
    std::thread flood([&] {
        for (int i = 0; i < 200000 && attacker.Send({}); i++) sent++;
    });
    InitTlsClient(server.port());
    numrpc_set_timeout(5);
    for (int k = 0; k < 5; k++) ExpectRightDaxpy(500);
    flood.join();
    EXPECT_LT(sent.load(), 200000) << "the server took every empty record";
    EXPECT_EQ(attacker.End(), "unexpected_message");
    numrpc_finalize();
}

// Before: a worker reading a request waited --io-timeout for each record,
// and an empty record every few seconds restarted it: the worker was held
// for good.  Now empty records carry no byte of the request, and the rate
// rule cuts it on the clock.
TEST(EmptyTlsRecords, AtAWorkerDoNotHoldIt)
{
    ServerProc server(TlsArgs({"--workers", "2", "--max-workers", "2", "--request-timeout", "1000"}));
    RawTlsPeer attacker;
    ASSERT_TRUE(attacker.Open("127.0.0.2", server.port()));
    ASSERT_TRUE(attacker.Send(HelloBytes()));
    ASSERT_EQ(attacker.ReadReply(nullptr), NUMRPC_OK);
    ASSERT_TRUE(attacker.Send(CallStart(2)));
    std::atomic<bool> stop{false};
    std::thread trickle([&] {
        for (int i = 0; i < 100 && !stop && attacker.Send({}); i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
    });
    InitTlsClient(server.port());
    numrpc_set_timeout(5);
    for (int k = 0; k < 5; k++) ExpectRightDaxpy(500);
    std::string detail;
    EXPECT_EQ(attacker.ReadReply(&detail), NUMRPC_ETIMEDOUT) << detail;
    EXPECT_TRUE(Contains(detail, "request too slow")) << detail;
    stop = true;
    trickle.join();
    numrpc_finalize();
}
