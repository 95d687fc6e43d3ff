/* limits_peer.c -- attack_limits.sh's peers: one token filling a server's handles, another's
 * puts and gets beside it, forged REPORTs and the speed a metaserver predicts after them. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "msg.h"
#include "msg_meta.h"
#include "numrpc.h"
#include "protocol.h"
#include "sock.h"
#include "stats.h"
#include "transport.h"

#define MAX_HELD  65536
#define MAX_CODES 64

static volatile sig_atomic_t stop_requested;

static void usage(void)
{
    fprintf(
        stderr,
        "usage: numrpc-limits-peer fill --server HOST:PORT [--max N]\n"
        "       numrpc-limits-peer good --server HOST:PORT [--puts K] [--timeout S]\n"
        "       numrpc-limits-peer reports --meta HOST:PORT --server HOST:PORT --routine R\n"
        "                          [--count N] [--from ADDR] [--flops F] [--seconds S]\n"
        "fill: tiny puts (one double each) until the server refuses one (at most N, default\n"
        "  65536), then prints \"ready held=H refused=CODE ...\" and holds them until SIGTERM.\n"
        "good: K times (default 200) a put of 16 doubles, its get (checked equal) and its free;\n"
        "  the last line: summary puts=K ok= refused= errors= wrong= put_p50_ms= put_p99_ms=\n"
        "  get_p50_ms= get_p99_ms= codes=.  Both take their token from NUMRPC_TOKEN_FILE.\n"
        "reports: the speed the metaserver predicts for SERVER's ROUTINE at F flops (default\n"
        "  1e9), then N (default 100) REPORTs from ADDR (default 127.0.0.2, no token) of calls\n"
        "  of F flops taking S seconds (default 1e6), then the speed again: a line\n"
        "  \"reports sent=N before=B after=A ratio=A/B\".\n");
    exit(2);
}

static const char *opt_value(int argc, char **argv, const char *name, const char *dflt)
{
    for (int i = 2; i + 1 < argc; i += 2)
        if (strcmp(argv[i], name) == 0) return argv[i + 1];
    return dflt;
}

static void check_options(int argc, char **argv, const char *const *known)
{
    if ((argc - 2) % 2 != 0) usage();
    for (int i = 2; i < argc; i += 2) {
        int ok = 0;
        for (const char *const *k = known; *k; k++)
            ok |= strcmp(argv[i], *k) == 0;
        if (!ok) usage();
    }
}

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* Error names without their NUMRPC_ prefix. */
static const char *code_name(int code)
{
    const char *name = numrpc_errname(code);
    return strncmp(name, "NUMRPC_", 7) == 0 ? name + 7 : name;
}

static void print_codes(const long *codes)
{
    const char *sep = " codes=";
    int any = 0;
    for (int c = 1; c < MAX_CODES; c++)
        if (codes[c]) printf("%s%s:%ld", sep, code_name(-c), codes[c]), sep = ";", any = 1;
    if (!any) printf(" codes=-");
}

/* ---- fill ---- */

static int fill(const char *server, long max)
{
    static numrpc_data *held[MAX_HELD];
    long n = 0;
    int rc = NUMRPC_OK;
    double t0 = bench_now();
    if (max > MAX_HELD) max = MAX_HELD;
    while (n < max && !stop_requested) {
        double v = (double)n;
        rc = numrpc_data_put(&held[n], server, NUMRPC_T_DOUBLE, &v, 1, 1, 1);
        if (rc != NUMRPC_OK) break;
        n++;
    }
    printf("ready held=%ld refused=%s seconds=%.2f detail=\"%s\"\n", n,
           rc == NUMRPC_OK ? "-" : code_name(rc), bench_now() - t0,
           rc == NUMRPC_OK ? "" : numrpc_last_error_detail());
    fflush(stdout);
    while (!stop_requested)
        pause(); /* the handles stay held until the end */
    return 0;
}

/* ---- good ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The nearest-rank quantile q of v[0..n-1] (sorted here), in ms; NAN when none. */
static double quantile_ms(double *v, size_t n, double q)
{
    if (n == 0) return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    size_t r = (size_t)ceil(q * (double)n);
    return 1e3 * v[r < 1 ? 0 : r - 1];
}

static void print_ms(const char *name, double ms)
{
    if (isnan(ms))
        printf(" %s=-", name);
    else
        printf(" %s=%.3f", name, ms);
}

static int good(const char *server, int puts, double timeout)
{
    double *put_s = calloc((size_t)puts, sizeof *put_s),
           *get_s = calloc((size_t)puts, sizeof *get_s);
    long codes[MAX_CODES] = {0}, ok = 0, refused = 0, errors = 0, wrong = 0;
    size_t nput = 0, nget = 0;
    if (put_s == NULL || get_s == NULL) return 1;
    numrpc_set_timeout(timeout);
    for (int k = 0; k < puts && !stop_requested; k++) {
        double a[16], back[16];
        for (int i = 0; i < 16; i++) {
            a[i] = k * 16.0 + i + 0.5;
            back[i] = -1;
        }
        numrpc_data *h = NULL;
        double t0 = bench_now();
        int rc = numrpc_data_put(&h, server, NUMRPC_T_DOUBLE, a, 16, 1, 16);
        double t1 = bench_now();
        if (rc == NUMRPC_OK) {
            put_s[nput++] = t1 - t0;
            rc = numrpc_data_get(h, back, 16);
            if (rc == NUMRPC_OK) get_s[nget++] = bench_now() - t1;
            if (rc == NUMRPC_OK && memcmp(a, back, sizeof a) != 0)
                wrong++;
            else if (rc == NUMRPC_OK)
                ok++;
            numrpc_data_free(h);
        }
        if (rc != NUMRPC_OK) {
            if (rc == NUMRPC_ELIMIT || rc == NUMRPC_EBUSY)
                refused++;
            else
                errors++;
            if (rc < 0 && rc > -MAX_CODES) codes[-rc]++;
        }
    }
    printf("summary puts=%d ok=%ld refused=%ld errors=%ld wrong=%ld", puts, ok, refused, errors,
           wrong);
    print_ms("put_p50_ms", quantile_ms(put_s, nput, 0.5));
    print_ms("put_p99_ms", quantile_ms(put_s, nput, 0.99));
    print_ms("get_p50_ms", quantile_ms(get_s, nget, 0.5));
    print_ms("get_p99_ms", quantile_ms(get_s, nget, 0.99));
    print_codes(codes);
    printf("\n");
    free(put_s);
    free(get_s);
    return wrong ? 1 : 0;
}

/* ---- reports ---- */

/* A message connection from source address from to host:port (every read
 * and write bounded by 5 s), HELLO done without a token: 0, or -1. */
static int meta_open(msg_conn *c, const char *from, const char *host, int port, uint32_t *id,
                     err_t *err)
{
    struct sockaddr_in a = {.sin_family = AF_INET}, to = {.sin_family = AF_INET};
    to.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, from, &a.sin_addr) != 1 || inet_pton(AF_INET, host, &to.sin_addr) != 1)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sock_set_timeouts(fd, 5000, 5000);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        connect(fd, (struct sockaddr *)&to, sizeof to) != 0 ||
        msg_conn_init(c, PROTO_DEFAULT_PACKET, err) != 0) {
        close(fd);
        return -1;
    }
    msg_conn_attach(c, transport_tcp(fd), "metaserver");
    msg_hello h = {.version = PROTO_VERSION, .packet_size = PROTO_DEFAULT_PACKET};
    snprintf(h.peer, sizeof h.peer, "numrpc-limits-peer");
    *id = 1;
    if (msg_write_hello(&c->writer, *id, &h, err) != 0 ||
        msg_read_hello_reply(&c->reader, *id, "metaserver", &h, err) != 0) {
        msg_conn_free(c);
        return -1;
    }
    return 0;
}

/* The speed the metaserver predicts for routine at flops on server
 * ("host:port"): flop/s, 0 when it names no such server, -1 on failure. */
static double predicted_speed(msg_conn *c, uint32_t *id, const char *routine, double flops,
                              const char *server, err_t *err)
{
    msg_meta_query q = {.flops = flops, .max_servers = 8};
    msg_meta_ranked got[8];
    uint32_t lease = 0, n = 0;
    snprintf(q.routine, sizeof q.routine, "%s", routine);
    ++*id;
    if (msg_write_meta_query(&c->writer, *id, &q, err) != 0 ||
        msg_read_reply(&c->reader, *id, "metaserver", err) != 0 ||
        msg_read_meta_query_reply(&c->reader, &lease, got, 8, &n, err) != 0)
        return -1;
    char host[256];
    int port;
    if (sock_parse_hostport(server, host, sizeof host, &port, err) != 0) return -1;
    for (uint32_t i = 0; i < n && i < 8; i++)
        if (strcmp(got[i].host, host) == 0 && got[i].port == (uint32_t)port)
            return got[i].flops_per_second;
    return 0;
}

static int reports(const char *meta, const char *server, const char *routine, int count,
                   const char *from, double flops, double seconds)
{
    char host[64];
    int port;
    err_t err = {0, ""};
    msg_conn good, forged;
    uint32_t gid, fid;
    if (sock_parse_hostport(meta, host, sizeof host, &port, &err) != 0) usage();
    if (meta_open(&good, "127.0.0.1", host, port, &gid, &err) != 0) {
        printf("reports failed=connect detail=\"%s\"\n", err.detail);
        return 1;
    }
    /* The server is named once its measured join is in (at most 60 s). */
    double before = 0;
    for (int i = 0; i < 600 && !(before > 0); i++) {
        before = predicted_speed(&good, &gid, routine, flops, server, &err);
        if (before < 0 && err.code != NUMRPC_ENOENT && err.code != NUMRPC_ENOSERVER)
            break; /* the link broke */
        if (!(before > 0)) usleep(100000);
    }
    if (!(before > 0)) {
        printf("reports failed=not-listed detail=\"%s\"\n", err.detail);
        msg_conn_free(&good);
        return 1;
    }
    if (meta_open(&forged, from, host, port, &fid, &err) != 0) {
        printf("reports failed=forger-connect detail=\"%s\"\n", err.detail);
        msg_conn_free(&good);
        return 1;
    }
    int sent = 0;
    for (; sent < count; sent++) {
        msg_meta_call call = {.flops = flops, .total_seconds = seconds, .compute_seconds = seconds};
        snprintf(call.server, sizeof call.server, "%s", server);
        snprintf(call.routine, sizeof call.routine, "%s", routine);
        if (msg_write_meta_report(&forged.writer, ++fid, &call, 1, &err) != 0) break;
        if (wire_writer_holding(&forged.writer) && wire_flush(&forged.writer, &err) != 0) break;
    }
    /* A QUERY on the forger's connection is read after its reports. */
    double seen = predicted_speed(&forged, &fid, routine, flops, server, &err);
    double after = predicted_speed(&good, &gid, routine, flops, server, &err);
    printf("reports sent=%d before=%.6g after=%.6g ratio=%.6g forger_sees=%.6g\n", sent, before,
           after, after > 0 ? after / before : 0.0, seen);
    msg_conn_free(&forged);
    msg_conn_free(&good);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) usage();
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *cmd = argv[1];
    if (strcmp(cmd, "fill") == 0) {
        static const char *const known[] = {"--server", "--max", NULL};
        check_options(argc, argv, known);
        const char *server = opt_value(argc, argv, "--server", NULL);
        if (server == NULL) usage();
        return fill(server, atol(opt_value(argc, argv, "--max", "65536")));
    }
    if (strcmp(cmd, "good") == 0) {
        static const char *const known[] = {"--server", "--puts", "--timeout", NULL};
        check_options(argc, argv, known);
        const char *server = opt_value(argc, argv, "--server", NULL);
        int puts = atoi(opt_value(argc, argv, "--puts", "200"));
        if (server == NULL || puts < 1) usage();
        return good(server, puts, atof(opt_value(argc, argv, "--timeout", "5")));
    }
    if (strcmp(cmd, "reports") == 0) {
        static const char *const known[] = {"--meta", "--server", "--routine", "--count",
                                            "--from", "--flops",  "--seconds", NULL};
        check_options(argc, argv, known);
        const char *meta = opt_value(argc, argv, "--meta", NULL),
                   *server = opt_value(argc, argv, "--server", NULL);
        const char *routine = opt_value(argc, argv, "--routine", NULL);
        int count = atoi(opt_value(argc, argv, "--count", "100"));
        double flops = atof(opt_value(argc, argv, "--flops", "1e9"));
        double seconds = atof(opt_value(argc, argv, "--seconds", "1e6"));
        if (meta == NULL || server == NULL || routine == NULL || count < 0 || !(flops > 0) ||
            !(seconds > 0))
            usage();
        return reports(meta, server, routine, count, opt_value(argc, argv, "--from", "127.0.0.2"),
                       flops, seconds);
    }
    usage();
}
