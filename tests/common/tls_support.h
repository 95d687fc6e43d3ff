// tls_support.h -- what the TLS tests share: certificates made once per run
// in a temp dir, server processes on loopback, whole reads and writes.
#ifndef NUMRPC_TESTS_COMMON_TLS_SUPPORT_H
#define NUMRPC_TESTS_COMMON_TLS_SUPPORT_H

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

extern "C" {
#include "tls_ossl.h"
}

namespace tls_support {

// The path of a file made for this run: ca.pem, other-ca.pem (a second CA), server.pem/.key (127.0.0.1, localhost), expired.*,
// otherhost.* (other.example), client.* (CN numrpc-client), big.* (2000
// names more: a 60 KiB certificate), each signed by ca.
std::string Pki(const char *file);
// The SHA-256 fingerprint (hex) of a PEM certificate file.
std::string Fingerprint(const std::string &pem);

// A child process running body(listening socket on 127.0.0.1:port); its
// exit code is body's result (0 = every check in it held).
class ServerProc {
  public:
    explicit ServerProc(std::function<int(int listen_fd)> body);
    ~ServerProc();
    int port() const { return port_; }
    // The child's exit code within 30 s (else it is killed: -1).
    int Wait();

  private:
    pid_t pid_ = -1;
    int port_ = 0;
};

// Whole reads and writes through a stream's table: 0, or -1 (1 for EOF
// before the first byte, on reads).
int ReadFull(transport *t, void *buf, size_t n);
int WriteFull(transport *t, const void *buf, size_t n);
// One echo message: an 8-byte length, then that many bytes.
int ReadMessage(transport *t, std::vector<unsigned char> *bytes);
int WriteMessage(transport *t, const std::vector<unsigned char> &bytes);
// n bytes of a pattern that differs with seed.
std::vector<unsigned char> Pattern(size_t n, unsigned seed);
// n doubles uniform in [-1, 1) that differ with seed.
std::vector<double> Random(size_t n, unsigned seed);

// A state in MAP_SHARED memory (for ever: the test process is short).
tls_stream_state *SharedState();
// Accepts a connection and does the whole server handshake: the socket, or
// -1 (its error in err); *not_tls is set for a plain client.
int AcceptTls(int listen_fd, tls_context *ctx, tls_stream_state *st, int *not_tls, err_t *err);

} // namespace tls_support

// In a server child: report a failed check and return 1.
#define CHILD_CHECK(cond, ...)                                                           \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "server check failed at %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                \
            fprintf(stderr, "\n");                                                       \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

#endif
