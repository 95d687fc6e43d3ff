// tls_client_threads_test.cc -- one client TLS stream used by a writing and a
// reading thread at once (a farm's pipelined connection), against an OpenSSL
// server that keeps sending KeyUpdates that ask for an answer and tickets.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tls_support.h"

using namespace tls_support;

namespace {

const int kMessages = 400;

// Whole reads and writes on an OpenSSL server session: true when done.
bool SslReadFull(SSL *ssl, void *buf, size_t n)
{
    for (size_t got = 0; got < n;) {
        int r = SSL_read(ssl, static_cast<char *>(buf) + got, (int)(n - got));
        if (r <= 0) return false;
        got += (size_t)r;
    }
    return true;
}

bool SslWriteFull(SSL *ssl, const void *buf, size_t n)
{
    for (size_t put = 0; put < n;) {
        int r = SSL_write(ssl, static_cast<const char *>(buf) + put, (int)(n - put));
        if (r <= 0) return false;
        put += (size_t)r;
    }
    return true;
}

// The server: echoes kMessages messages (8-byte length, bytes); before every
// third echo it asks the client for a KeyUpdate, before the next it sends a
// new session ticket, so
// the client's reading thread has records to answer while its writing
// thread seals.  Exit code 0 when every echo went out.
int TicketingEchoServer(int lfd)
{
    signal(SIGPIPE, SIG_IGN); // a failed write is reported, not a death
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    CHILD_CHECK(ctx && SSL_CTX_use_certificate_chain_file(ctx, Pki("server.pem").c_str()) == 1 &&
                    SSL_CTX_use_PrivateKey_file(ctx, Pki("server.key").c_str(), SSL_FILETYPE_PEM) == 1,
                "server context");
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    int fd = accept(lfd, nullptr, nullptr);
    CHILD_CHECK(fd >= 0, "accept: %s", strerror(errno));
    SSL *ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    CHILD_CHECK(SSL_accept(ssl) == 1, "handshake");
    for (int i = 0; i < kMessages; i++) {
        uint64_t len = 0;
        CHILD_CHECK(SslReadFull(ssl, &len, sizeof len) && len <= (1u << 20), "length of message %d: %s", i,
                    ERR_error_string(ERR_peek_last_error(), nullptr));
        std::vector<unsigned char> bytes(len);
        CHILD_CHECK(SslReadFull(ssl, bytes.data(), len), "message %d: %s", i,
                    ERR_error_string(ERR_peek_last_error(), nullptr));
        if (i % 3 == 0) CHILD_CHECK(SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) == 1, "KeyUpdate");
        if (i % 3 == 1) CHILD_CHECK(SSL_new_session_ticket(ssl) == 1, "ticket");
        CHILD_CHECK(SslWriteFull(ssl, &len, sizeof len) && SslWriteFull(ssl, bytes.data(), len), "echo %d: %s", i,
                    ERR_error_string(ERR_peek_last_error(), nullptr));
    }
    char byte; // the client's answers to the last KeyUpdates, then its close_notify
    while (SSL_read(ssl, &byte, 1) > 0) {
    }
    SSL_shutdown(ssl);
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    return 0;
}

size_t SizeOf(int i)
{
    return 1 + (size_t)(i * 7919) % 70000; // 1 B to 68 KiB: single records and batches
}

} // namespace

TEST(TlsClientThreads, AWriterAndAReaderShareOneSessionWhileTheServerUpdatesKeys)
{
    err_t err;
    tls_context *ctx = tls_client_context_new(Pki("ca.pem").c_str(), nullptr, nullptr, &err); // made before the fork
    ServerProc server(TicketingEchoServer);
    ASSERT_NE(ctx, nullptr) << err.detail;
    transport t;
    ASSERT_EQ(tls_client_connect(&t, ctx, "127.0.0.1", server.port(), 5000, nullptr, &err), 0) << err.detail;

    int written = 0;
    std::thread writer([&] {
        for (; written < kMessages; written++)
            if (WriteMessage(&t, Pattern(SizeOf(written), (unsigned)written)) != 0) return;
    });
    int echoed = 0;
    std::string wrong;
    for (; echoed < kMessages; echoed++) {
        std::vector<unsigned char> back;
        if (ReadMessage(&t, &back) != 0) {
            wrong = "echo " + std::to_string(echoed) + ": " + strerror(errno) + " " + tls_stream_failure(&t);
            break;
        }
        if (back != Pattern(SizeOf(echoed), (unsigned)echoed)) {
            wrong = "echo " + std::to_string(echoed) + " came back changed";
            break;
        }
    }
    if (echoed < kMessages) shutdown(t.fd, SHUT_RDWR); // lets a stuck writer go
    writer.join();
    EXPECT_EQ(wrong, "");
    EXPECT_EQ(written, kMessages) << tls_stream_failure(&t);
    EXPECT_EQ(echoed, kMessages) << tls_stream_failure(&t);
    transport_close(&t);
    EXPECT_EQ(server.Wait(), 0) << "the server saw every message whole";
    tls_context_free(ctx);
}
