/* tls_attacker.c -- a hostile TLS peer for attack_p99.sh: after OpenSSL's handshake it seals its
 * own records (empty ones too) with the client's keys from the key log, and reconnects when cut. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "attack_script.h"
#include "protocol.h"
#include "sock.h"
#include "tls_ossl.h"

#define MAX_SOURCES 64
#define MAX_CONNS   1024
#define BATCH       256 /* empty records sealed per send in the flood */
#define IO_MS       3000

typedef enum { MODE_FLOOD, MODE_TRICKLE } tls_mode;

static struct options {
    char host[64];
    int port;
    char sources[MAX_SOURCES][64];
    int nsources, connections;
    tls_mode mode;
    const char *ca;
    double seconds, report_every, interval_ms;
} opt = {.connections = 1, .seconds = 60, .report_every = 5, .interval_ms = 200};

/* Counts kept by every connection's thread (atomically). */
static struct counters {
    long connects, connect_failed, handshakes, handshake_failed, hello_failed;
    long records, cut_send, cut_read, replies;
} count;
#define ADD(field, n) __atomic_add_fetch(&count.field, (n), __ATOMIC_RELAXED)
#define GET(field)    __atomic_load_n(&count.field, __ATOMIC_RELAXED)

static volatile sig_atomic_t stop_requested;
static SSL_CTX *ctx;
static attack_bytes hello_bytes;
static int started; /* threads past their first handshake (or its failure) */

static void usage(void)
{
    fprintf(
        stderr,
        "usage: numrpc-tls-attacker --target HOST:PORT --ca FILE [--mode flood|trickle]\n"
        "         [--connections N] [--sources ADDR[,ADDR...]] [--seconds S] [--interval-ms MS]\n"
        "         [--report-every S]\n"
        "N threads, each a TLS 1.3 connection (bound to a source address in turn), reopened\n"
        "whenever the server cuts it, for S seconds (default 60):\n"
        "  flood    empty application records, as fast as they can be sent\n"
        "  trickle  a HELLO, the first packet of a CALL (no END flag), then one empty\n"
        "           record every --interval-ms (default 200)\n"
        "Prints \"ready\" once every connection had its first handshake (or 10 s passed),\n"
        "a line of counts every --report-every s, and a last line \"done ...\".\n");
    exit(2);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void add_sources(const char *list)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        struct in_addr a;
        if (opt.nsources == MAX_SOURCES || inet_pton(AF_INET, it, &a) != 1) usage();
        snprintf(opt.sources[opt.nsources++], sizeof opt.sources[0], "%s", it);
    }
}

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL) usage();
        err_t err;
        if (strcmp(a, "--target") == 0) {
            if (sock_parse_hostport(v, opt.host, sizeof opt.host, &opt.port, &err) != 0) usage();
        } else if (strcmp(a, "--ca") == 0) {
            opt.ca = v;
        } else if (strcmp(a, "--mode") == 0) {
            if (strcmp(v, "flood") == 0)
                opt.mode = MODE_FLOOD;
            else if (strcmp(v, "trickle") == 0)
                opt.mode = MODE_TRICKLE;
            else
                usage();
        } else if (strcmp(a, "--connections") == 0) {
            opt.connections = atoi(v);
        } else if (strcmp(a, "--sources") == 0) {
            add_sources(v);
        } else if (strcmp(a, "--seconds") == 0) {
            opt.seconds = atof(v);
        } else if (strcmp(a, "--interval-ms") == 0) {
            opt.interval_ms = atof(v);
        } else if (strcmp(a, "--report-every") == 0) {
            opt.report_every = atof(v);
        } else {
            usage();
        }
        i++;
    }
    if (opt.port <= 0 || opt.ca == NULL || opt.connections < 1 || opt.connections > MAX_CONNS ||
        opt.seconds <= 0 || opt.interval_ms < 1 || opt.report_every <= 0)
        usage();
    if (opt.nsources == 0) add_sources("127.0.0.1");
}

/* A TCP connection from source to the target within IO_MS, with every later
 * send and receive bounded by IO_MS too; -1 on failure. */
static int connect_from(const char *source)
{
    struct sockaddr_in from = {.sin_family = AF_INET}, to = {.sin_family = AF_INET};
    if (inet_pton(AF_INET, source, &from.sin_addr) != 1 ||
        inet_pton(AF_INET, opt.host, &to.sin_addr) != 1)
        return -1;
    to.sin_port = htons((uint16_t)opt.port);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    if (bind(fd, (struct sockaddr *)&from, sizeof from) != 0) goto fail;
    if (connect(fd, (struct sockaddr *)&to, sizeof to) != 0) {
        struct pollfd p = {fd, POLLOUT, 0};
        int e = 0;
        socklen_t el = sizeof e;
        if (errno != EINPROGRESS || poll(&p, 1, IO_MS) != 1 ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0 || e != 0)
            goto fail;
    }
    if (fcntl(fd, F_SETFL, 0) != 0) goto fail; /* blocking again, bounded below */
    sock_set_timeouts(fd, IO_MS, IO_MS);
    return fd;
fail:
    close(fd);
    return -1;
}

/* The key log: the client's application traffic secret, into the
 * connection's secret buffer (the SSL's app data). */
typedef struct secret_buf {
    unsigned char b[TLS_SECRET_MAX];
    size_t len;
} secret_buf;

static int hexval(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static void keylog(const SSL *ssl, const char *line)
{
    static const char label[] = "CLIENT_TRAFFIC_SECRET_0 ";
    secret_buf *s = SSL_get_app_data(ssl);
    if (s == NULL || strncmp(line, label, sizeof label - 1) != 0) return;
    const char *hex = strchr(line + sizeof label - 1, ' ');
    if (hex == NULL) return;
    size_t n = 0;
    for (hex++; hex[0] && hex[1] && n < sizeof s->b; hex += 2) {
        int hi = hexval(hex[0]), lo = hexval(hex[1]);
        if (hi < 0 || lo < 0) return;
        s->b[n++] = (unsigned char)(hi << 4 | lo);
    }
    s->len = n;
}

/* One connection's state: OpenSSL for the handshake and reading, st for
 * the records written here. */
typedef struct peer {
    int fd;
    SSL *ssl;
    secret_buf secret;
    tls_stream_state st;
    unsigned char rec[TLS_RECORD_MAX];
    unsigned char batch[BATCH * (TLS_RECORD_HEADER + 1 + TLS_TAG_SIZE)];
} peer;

static void peer_close(peer *p)
{
    if (p->ssl) SSL_free(p->ssl);
    if (p->fd >= 0) close(p->fd);
    p->ssl = NULL;
    p->fd = -1;
}

/* Connects and does the handshake: 0, or -1 (counted). */
static int peer_open(peer *p, const char *source)
{
    p->fd = connect_from(source);
    if (p->fd < 0) {
        ADD(connect_failed, 1);
        return -1;
    }
    ADD(connects, 1);
    p->secret.len = 0;
    p->ssl = SSL_new(ctx);
    if (p->ssl == NULL) goto fail;
    SSL_set_app_data(p->ssl, &p->secret);
    SSL_set_fd(p->ssl, p->fd);
    if (SSL_connect(p->ssl) != 1 || p->secret.len == 0) goto fail;
    memset(&p->st, 0, sizeof p->st);
    p->st.suite = SSL_CIPHER_get_protocol_id(SSL_get_current_cipher(p->ssl));
    if (tls_record_keys(&p->st.out, p->st.suite, p->secret.b, p->secret.len) != 0) goto fail;
    ADD(handshakes, 1);
    return 0;
fail:
    ERR_clear_error();
    ADD(handshake_failed, 1);
    peer_close(p);
    return -1;
}

/* One record of len bytes (0: empty): 0, or -1 when it could not go. */
static int peer_send(peer *p, const void *buf, size_t len)
{
    size_t n = tls_seal_one(&p->st, TLS_TYPE_APPLICATION, buf, len, p->rec);
    if (n == 0 || send(p->fd, p->rec, n, MSG_NOSIGNAL) != (ssize_t)n) return -1;
    ADD(records, 1);
    return 0;
}

/* Reads n bytes through OpenSSL: 0, or -1. */
static int peer_read(peer *p, uint8_t *buf, size_t n)
{
    for (size_t got = 0; got < n;) {
        int r = SSL_read(p->ssl, buf + got, (int)(n - got));
        if (r <= 0) {
            ERR_clear_error();
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

/* Reads one whole message's packets (the HELLO's reply): 0, or -1. */
static int peer_read_message(peer *p)
{
    uint8_t h[PROTO_HEADER_SIZE], skip[4096];
    for (int packets = 0; packets < 64; packets++) {
        if (peer_read(p, h, sizeof h) != 0 || h[0] != 0x4E || h[1] != 0x52) return -1;
        uint32_t flags = (uint32_t)h[8] << 24 | (uint32_t)h[9] << 16 | (uint32_t)h[10] << 8 | h[11];
        uint32_t len = (uint32_t)h[12] << 24 | (uint32_t)h[13] << 16 | (uint32_t)h[14] << 8 | h[15];
        if (len > PROTO_MAX_PACKET) return -1;
        while (len > 0) {
            size_t k = len < sizeof skip ? len : sizeof skip;
            if (peer_read(p, skip, k) != 0) return -1;
            len -= (uint32_t)k;
        }
        if (flags & PROTO_FLAG_END) return 0;
    }
    return -1;
}

/* The flood: batches of empty records until a send fails. */
static void flood(peer *p)
{
    const size_t one = TLS_RECORD_HEADER + 1 + TLS_TAG_SIZE;
    while (!stop_requested) {
        size_t len = 0;
        for (int i = 0; i < BATCH; i++) {
            size_t n = tls_seal_one(&p->st, TLS_TYPE_APPLICATION, "", 0, p->batch + len);
            if (n != one) return;
            len += n;
        }
        if (send(p->fd, p->batch, len, MSG_NOSIGNAL) != (ssize_t)len) {
            ADD(cut_send, 1);
            return;
        }
        ADD(records, BATCH);
    }
}

/* A HELLO, the first packet of a CALL without its END flag, then an empty
 * record every interval until the server answers, closes or refuses one. */
static void trickle(peer *p)
{
    static const uint8_t body[64] = {0, 0, 0, 5, 'd', 'a', 'x', 'p', 'y'};
    uint8_t call[PROTO_HEADER_SIZE + sizeof body] = {
        0x4E, 0x52, PROTO_VERSION, PROTO_CALL, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, sizeof body};
    memcpy(call + PROTO_HEADER_SIZE, body, sizeof body);
    if (peer_send(p, hello_bytes.p, hello_bytes.len) != 0 || peer_read_message(p) != 0) {
        ADD(hello_failed, 1);
        return;
    }
    if (peer_send(p, call, sizeof call) != 0) {
        ADD(cut_send, 1);
        return;
    }
    while (!stop_requested) {
        struct pollfd pf = {p->fd, POLLIN, 0};
        int r = poll(&pf, 1, (int)opt.interval_ms);
        if (r > 0) { /* a reply (the request's refusal) or the end */
            uint8_t h[PROTO_HEADER_SIZE];
            if (peer_read(p, h, sizeof h) == 0) ADD(replies, 1); /* else an alert, or the end */
            ADD(cut_read, 1);
            return;
        }
        if (peer_send(p, "", 0) != 0) {
            ADD(cut_send, 1);
            return;
        }
    }
}

static void *connection_thread(void *arg)
{
    long index = (long)arg;
    peer *p = calloc(1, sizeof *p);
    int first = 1, backoff = 0;
    if (p == NULL) return NULL;
    p->fd = -1;
    while (!stop_requested) {
        int rc = peer_open(p, opt.sources[index % opt.nsources]);
        if (first) {
            __atomic_add_fetch(&started, 1, __ATOMIC_RELAXED);
            first = 0;
        }
        if (rc != 0) { /* back off while the server refuses us */
            backoff = backoff ? (backoff * 2 > 1000 ? 1000 : backoff * 2) : 20;
            sleep_ms(backoff);
            continue;
        }
        backoff = 0;
        if (opt.mode == MODE_FLOOD)
            flood(p);
        else
            trickle(p);
        peer_close(p);
    }
    peer_close(p);
    free(p);
    return NULL;
}

static void print_counts(const char *what, double t0)
{
    printf("%s t=%.1f connects=%ld connect_failed=%ld handshakes=%ld handshake_failed=%ld "
           "hello_failed=%ld "
           "records=%ld cut_send=%ld cut_read=%ld replies=%ld\n",
           what, now_s() - t0, GET(connects), GET(connect_failed), GET(handshakes),
           GET(handshake_failed), GET(hello_failed), GET(records), GET(cut_send), GET(cut_read),
           GET(replies));
    fflush(stdout);
}

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    err_t err;
    if (attack_add_hello(&hello_bytes, &err) != 0) {
        fprintf(stderr, "numrpc-tls-attacker: HELLO: %s\n", err.detail);
        return 1;
    }
    ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL || SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1 ||
        SSL_CTX_load_verify_locations(ctx, opt.ca, NULL) != 1) {
        fprintf(stderr, "numrpc-tls-attacker: the CA %s cannot be used\n", opt.ca);
        return 1;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_keylog_callback(ctx, keylog);
    double t0 = now_s(), next_report = t0 + opt.report_every;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (long i = 0; i < opt.connections; i++) {
        pthread_t t;
        if (pthread_create(&t, &attr, connection_thread, (void *)i) != 0) {
            fprintf(stderr, "numrpc-tls-attacker: thread %ld not started\n", i);
            return 1;
        }
    }
    int ready = 0;
    while (!stop_requested && now_s() - t0 < opt.seconds) {
        sleep_ms(50);
        if (!ready &&
            (__atomic_load_n(&started, __ATOMIC_RELAXED) == opt.connections || now_s() - t0 > 10)) {
            print_counts("ready", t0);
            ready = 1;
        }
        if (now_s() >= next_report) {
            print_counts("counts", t0);
            next_report += opt.report_every;
        }
    }
    stop_requested = 1;
    print_counts("done", t0);
    sleep_ms(100); /* threads see the flag; blocked ones are bounded by IO_MS, exit ends them */
    return 0;
}
