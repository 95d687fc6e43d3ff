/* tls_server_bench.c -- numrpc-server itself, TLS against plain TCP: PROBE
 * round trips (a ping, 8 MiB each way) to two servers, interleaved. */
#include "tls_server_bench.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "msg.h"
#include "protocol.h"
#include "stats.h"
#include "tls.h"

#define SERVER_RUNS 20
#define SERVER_PINGS 200
#define SERVER_BIG (8u << 20)
#define SERVER_PACKET (256u << 10)

enum { PLAIN = 0, SECURE = 1 };

/* Runs the server with TLS or not; its pid, with its port in *port once
 * it listens (within 20 s), or -1. */
static pid_t start(const char *server, const char *stubs, const char *cert, const char *key, int tls, int *port)
{
    char port_file[] = "/tmp/numrpc-tls-server-bench-XXXXXX";
    int fd = mkstemp(port_file);
    if (fd < 0) return -1;
    close(fd);
    unlink(port_file);
    pid_t pid = fork();
    if (pid == 0) {
        const char *plain[] = {server, "--port", "0", "--port-file", port_file, "--stubs", stubs, "--workers", "2",
                               "--admin-socket", "none", "--quiet", NULL, NULL, NULL, NULL, NULL};
        if (tls) {
            plain[12] = "--tls-cert", plain[13] = cert, plain[14] = "--tls-key", plain[15] = key;
        }
        if (freopen("/dev/null", "w", stdout) == NULL) _exit(127);
        execv(server, (char *const *)plain);
        _exit(127);
    }
    for (int i = 0; pid > 0 && i < 2000; i++) {
        FILE *f = fopen(port_file, "r");
        int ok = f != NULL && fscanf(f, "%d", port) == 1;
        if (f != NULL) fclose(f);
        if (ok) {
            unlink(port_file);
            return pid;
        }
        usleep(10000);
    }
    if (pid > 0) kill(pid, SIGKILL);
    return -1;
}

/* A connection that said HELLO: plain, or TLS verified against ca. */
static int open_conn(msg_conn *c, int port, tls_context *ca, err_t *err)
{
    int rc;
    if (ca == NULL) {
        rc = msg_conn_open(c, "127.0.0.1", port, 10000, 10000, SERVER_PACKET, err);
    } else {
        transport t;
        rc = msg_conn_init(c, SERVER_PACKET, err);
        if (rc == 0) rc = tls_client_connect(&t, ca, "127.0.0.1", port, 10000, NULL, err);
        if (rc == 0) msg_conn_attach(c, t, "tls server");
    }
    msg_hello h = {.version = PROTO_VERSION, .packet_size = SERVER_PACKET}, back;
    if (rc == 0) rc = msg_write_hello(&c->writer, 1, &h, err);
    if (rc == 0) rc = msg_read_hello_reply(&c->reader, 1, c->label, &back, err);
    return rc;
}

/* One PROBE round trip of n bytes each way. */
static int probe(msg_conn *c, uint32_t n, err_t *err)
{
    uint64_t back;
    uint32_t id = msg_conn_next_id(c);
    int rc = msg_write_probe(&c->writer, id, n, n, err);
    return rc == 0 ? msg_read_probe_reply(&c->reader, id, c->label, &back, err) : rc;
}

static void report(const char *what, const char *unit, double scale, double v[2][SERVER_RUNS])
{
    double med[2];
    printf("%-22s", what);
    for (int k = 0; k < 2; k++) {
        double lo = bench_min(v[k], SERVER_RUNS) * scale, hi = bench_max(v[k], SERVER_RUNS) * scale;
        med[k] = bench_median(v[k], SERVER_RUNS) * scale;
        printf("  %s %.1f %s [%.1f..%.1f]", k == PLAIN ? "tcp" : "tls", med[k], unit, lo, hi);
    }
    printf("  ratio tls/tcp %.2f\n", med[SECURE] / med[PLAIN]);
}

int tls_server_figures(const char *server, const char *stubs, const char *cert, const char *key)
{
    err_t err = {0};
    int port[2], failed = 0;
    pid_t pid[2];
    msg_conn c[2];
    memset(c, 0, sizeof c);
    tls_context *ca = tls_client_context_new(cert, NULL, NULL, &err);
    for (int k = 0; k < 2; k++) pid[k] = start(server, stubs, cert, key, k == SECURE, &port[k]);
    if (ca == NULL || pid[PLAIN] < 0 || pid[SECURE] < 0) failed = 1;
    for (int k = 0; k < 2 && !failed; k++) failed = open_conn(&c[k], port[k], k == SECURE ? ca : NULL, &err) != 0;
    double ping[2][SERVER_RUNS], big[2][SERVER_RUNS];
    for (int run = 0; run < SERVER_RUNS && !failed; run++) {
        for (int k = 0; k < 2 && !failed; k++) {
            double t0 = bench_now();
            for (int i = 0; i < SERVER_PINGS && !failed; i++) failed = probe(&c[k], 0, &err) != 0;
            ping[k][run] = (bench_now() - t0) / SERVER_PINGS;
            t0 = bench_now();
            failed = failed || probe(&c[k], SERVER_BIG, &err) != 0;
            big[k][run] = bench_now() - t0;
        }
    }
    if (failed) {
        fprintf(stderr, "tls_bench --server: %s\n", err.detail[0] ? err.detail : "a server did not start");
    } else {
        printf("numrpc-server, TLS or not: loopback, %d interleaved runs; median [min..max] per run\n", SERVER_RUNS);
        report("PROBE ping", "us", 1e6, ping);
        report("PROBE 8 MiB each way", "ms", 1e3, big);
    }
    for (int k = 0; k < 2; k++) {
        msg_conn_free(&c[k]);
        if (pid[k] > 0) {
            kill(pid[k], SIGTERM);
            waitpid(pid[k], NULL, 0);
        }
    }
    tls_context_free(ca);
    return failed;
}
