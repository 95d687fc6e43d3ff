/* tls_bench.c -- what TLS costs on loopback: a 64-byte ping, an 8 MiB round
 * trip and the handshakes; plain TCP, our TLS server, OpenSSL's, interleaved
 * (or, with --server, numrpc-server itself: tls_server_bench.c). */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sock.h"
#include "stats.h"
#include "tls_server_bench.h"
#include "tls_ossl.h" /* the server context's SSL_CTX, for OpenSSL's own server */

#define RUNS 20
#define PINGS_PER_RUN 200
#define BIG (8u << 20)

/* The server kinds: plain TCP, our record layer, OpenSSL's own SSL* (the
 * client is OpenSSL for both TLS kinds). */
enum { TCP = 0, TLS = 1, OSSL = 2, KINDS = 3 };
static const char *const kind_name[KINDS] = {"tcp", "tls", "openssl"};

/* ---- Whole reads and writes through a stream's table ---- */

static int io_full(transport *t, void *buf, size_t n, int writing)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t k = writing ? t->ops->send(t, p, n) : t->ops->recv(t, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* One echo: an 8-byte length, then that many bytes, each way. */
static int echo_once(transport *t, unsigned char *buf, uint64_t len)
{
    uint64_t back;
    if (io_full(t, &len, sizeof len, 1) != 0 || io_full(t, buf, len, 1) != 0) return -1;
    if (io_full(t, &back, sizeof back, 0) != 0 || back != len) return -1;
    return io_full(t, buf, len, 0);
}

/* ---- The server: a child process echoing on every connection in turn ---- */

static int serve_echo(transport *t, unsigned char *buf)
{
    uint64_t len;
    while (io_full(t, &len, sizeof len, 0) == 0 && len <= BIG)
        if (io_full(t, &len, sizeof len, 1) != 0 || io_full(t, buf, len, 0) != 0 || io_full(t, buf, len, 1) != 0)
            return -1;
    return 0;
}

static int ssl_read_full(SSL *ssl, void *buf, size_t n)
{
    size_t got = 0, k;
    while (got < n && SSL_read_ex(ssl, (unsigned char *)buf + got, n - got, &k) == 1) got += k;
    return got == n ? 0 : -1;
}

/* OpenSSL's own server on fd: its handshake, then the echoes. */
static int serve_openssl(tls_context *ctx, int fd, unsigned char *buf)
{
    SSL *ssl = SSL_new(ctx->ssl);
    uint64_t len;
    size_t k;
    int rc = -1;
    if (ssl == NULL || SSL_set_fd(ssl, fd) != 1 || SSL_accept(ssl) != 1) goto done;
    while (ssl_read_full(ssl, &len, sizeof len) == 0 && len <= BIG)
        if (ssl_read_full(ssl, buf, len) != 0 || SSL_write_ex(ssl, &len, sizeof len, &k) != 1 ||
            SSL_write_ex(ssl, buf, len, &k) != 1)
            goto done;
    rc = 0;
done:
    SSL_free(ssl);
    return rc;
}

/* Serves connections on lfd (kind) until killed: our handshake here, the
 * echoes in a child of its own (the dispatcher's way; OpenSSL's server
 * does all of it in the child). */
static void serve(int lfd, int kind, tls_context *ctx)
{
    tls_stream_state *st = malloc(sizeof *st);
    signal(SIGCHLD, SIG_IGN); /* children reap themselves */
    signal(SIGPIPE, SIG_IGN);
    for (;;) {
        err_t err;
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0 || st == NULL) continue;
        sock_tune(fd);
        sock_set_timeouts(fd, 30000, 30000);
        if (kind == TLS && tls_accept_blocking(ctx, fd, 10000, st, &err) != 0) {
            fprintf(stderr, "tls_bench server: %s\n", err.detail);
            close(fd);
            continue;
        }
        if (fork() == 0) {
            unsigned char *buf = malloc(BIG);
            transport t = kind == TLS ? tls_record_transport(fd, st) : transport_tcp(fd);
            int rc = buf == NULL ? -1 : kind == OSSL ? serve_openssl(ctx, fd, buf) : serve_echo(&t, buf);
            transport_close(&t);
            _exit(rc == 0 ? 0 : 1);
        }
        close(fd);
    }
}

static pid_t start_server(int kind, tls_context *ctx, int *port)
{
    err_t err;
    int lfd = sock_listen("127.0.0.1", 0, port, &err);
    if (lfd < 0) {
        fprintf(stderr, "tls_bench: %s\n", err.detail);
        exit(1);
    }
    pid_t pid = fork();
    if (pid == 0) {
        serve(lfd, kind, ctx);
        _exit(0);
    }
    close(lfd);
    return pid;
}

/* ---- The client ---- */

static int open_stream(int kind, tls_context *ctx, int port, transport *t, err_t *err)
{
    if (kind != TCP) return tls_client_connect(t, ctx, "127.0.0.1", port, 10000, NULL, err);
    return transport_connect(t, &transport_tcp_ops, "127.0.0.1", port, 10000, err);
}

/* A self-signed certificate for 127.0.0.1 in dir (made with the openssl
 * command), which is also the client's CA. */
static int make_certificate(const char *dir)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
             "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout %s/key.pem -out %s/cert.pem "
             ">/dev/null 2>&1",
             dir, dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void report(const char *what, const char *unit, double scale, double v[KINDS][RUNS])
{
    double med[KINDS];
    printf("%-22s", what);
    for (int k = 0; k < KINDS; k++) {
        double lo = bench_min(v[k], RUNS) * scale, hi = bench_max(v[k], RUNS) * scale;
        med[k] = bench_median(v[k], RUNS) * scale;
        printf("  %s %.1f %s [%.1f..%.1f]", kind_name[k], med[k], unit, lo, hi);
    }
    printf("  ratios tls/tcp %.2f tls/openssl %.2f\n", med[TLS] / med[TCP], med[TLS] / med[OSSL]);
}

/* numrpc-bench-tls --server PATH/numrpc-server --stubs DIR: that server,
 * TLS against plain TCP, with the certificate made here. */
static int server_mode(int argc, char **argv, const char *cert, const char *key)
{
    if (argc != 5 || strcmp(argv[1], "--server") != 0 || strcmp(argv[3], "--stubs") != 0) {
        fprintf(stderr, "usage: numrpc-bench-tls [--server PATH/numrpc-server --stubs DIR]\n");
        return 2;
    }
    return tls_server_figures(argv[2], argv[4], cert, key);
}

int main(int argc, char **argv)
{
    char dir[] = "/tmp/numrpc-tls-bench-XXXXXX", cert[256], key[256];
    err_t err;
    if (mkdtemp(dir) == NULL || make_certificate(dir) != 0) {
        fprintf(stderr, "tls_bench: cannot make a certificate with the openssl command\n");
        return 1;
    }
    snprintf(cert, sizeof cert, "%s/cert.pem", dir);
    snprintf(key, sizeof key, "%s/key.pem", dir);
    if (argc > 1) {
        int rc = server_mode(argc, argv, cert, key);
        char cleanup[300];
        snprintf(cleanup, sizeof cleanup, "rm -rf %s", dir);
        return system(cleanup) == 0 ? rc : 1;
    }
    tls_context *server_ctx = tls_server_context_new(cert, key, NULL, &err);
    tls_context *client_ctx = server_ctx ? tls_client_context_new(cert, NULL, NULL, &err) : NULL;
    if (client_ctx == NULL) {
        fprintf(stderr, "tls_bench: %s\n", err.detail);
        return 1;
    }
    int port[KINDS];
    pid_t server[KINDS];
    for (int k = 0; k < KINDS; k++) server[k] = start_server(k, server_ctx, &port[k]);
    unsigned char *buf = calloc(1, BIG);
    transport t[KINDS];
    for (int k = 0; k < KINDS; k++)
        if (buf == NULL || open_stream(k, client_ctx, port[k], &t[k], &err) != 0) {
            fprintf(stderr, "tls_bench: %s\n", err.detail);
            return 1;
        }
    double ping[KINDS][RUNS], big[KINDS][RUNS], handshake[2][RUNS];
    int failed = 0;
    for (int run = 0; run < RUNS && !failed; run++) {
        for (int k = 0; k < KINDS && !failed; k++) {
            double t0 = bench_now();
            for (int i = 0; i < PINGS_PER_RUN && !failed; i++) failed = echo_once(&t[k], buf, 64) != 0;
            ping[k][run] = (bench_now() - t0) / PINGS_PER_RUN;
            t0 = bench_now();
            failed = failed || echo_once(&t[k], buf, BIG) != 0;
            big[k][run] = bench_now() - t0;
        }
        /* handshakes: a fresh context has no session to resume; ours has */
        tls_context *fresh = tls_client_context_new(cert, NULL, NULL, &err);
        for (int k = 0; k < 2 && fresh; k++) {
            transport h;
            double t0 = bench_now();
            failed = failed || open_stream(TLS, k == 0 ? fresh : client_ctx, port[TLS], &h, &err) != 0;
            handshake[k][run] = bench_now() - t0;
            failed = failed || echo_once(&h, buf, 64) != 0; /* reads the tickets too */
            transport_close(&h);
        }
        tls_context_free(fresh);
    }
    if (failed) fprintf(stderr, "tls_bench: a round trip failed (%s)\n", err.detail);
    else {
        printf("tls_bench: loopback, %d interleaved runs; median [min..max] per run; the client is OpenSSL\n", RUNS);
        report("ping 64 B round trip", "us", 1e6, ping);
        report("8 MiB echoed", "ms", 1e3, big);
        printf("%-22s  full %9.1f us [%.1f..%.1f]  resumed %9.1f us [%.1f..%.1f]\n", "our TLS handshake",
               bench_median(handshake[0], RUNS) * 1e6, bench_min(handshake[0], RUNS) * 1e6,
               bench_max(handshake[0], RUNS) * 1e6, bench_median(handshake[1], RUNS) * 1e6,
               bench_min(handshake[1], RUNS) * 1e6, bench_max(handshake[1], RUNS) * 1e6);
    }
    for (int k = 0; k < KINDS; k++) {
        transport_close(&t[k]);
        kill(server[k], SIGTERM);
        waitpid(server[k], NULL, 0);
    }
    tls_context_free(client_ctx);
    tls_context_free(server_ctx);
    free(buf);
    char cleanup[300];
    snprintf(cleanup, sizeof cleanup, "rm -rf %s", dir);
    return system(cleanup) == 0 && !failed ? 0 : 1;
}
