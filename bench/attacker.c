/* attacker.c -- one hostile peer for the benchmarks: N connections to one or
 * more servers, from chosen source addresses, held from one poll loop for a
 * bounded time: silent, slow senders, slow HELLOs, unread STATUS pipelines,
 * or an HTTP slowloris (a header that never ends). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "attack_script.h"
#include "protocol.h"
#include "sock.h"
#include "wire.h"

#define MAX_LIST       64 /* targets, sources, modes                        */
#define MAX_CODES      64 /* error codes counted: -1 .. -63                  */
#define MAX_CONNECTING 256
#define TICK_MS        10

typedef enum attack_mode {
    MODE_SILENT,
    MODE_SLOW,
    MODE_SLOWHELLO,
    MODE_STATUSPIPE,
    MODE_FIRSTPACKET,
    MODE_HTTPSLOW,
    NMODES
} attack_mode;
static const char *const mode_names[NMODES] = {"silent",     "slow",        "slowhello",
                                               "statuspipe", "firstpacket", "httpslow"};

/* What a connection of one mode sends: script[0, fast) at once, the rest
 * at --rate bytes per second; at the end it starts again at loop_from (or
 * holds, -1).  Unread connections look at the server's bytes only when it
 * hangs up. */
typedef struct mode_script {
    attack_bytes bytes;
    size_t fast;
    long loop_from;
    int reads;
} mode_script;

enum { C_IDLE, C_CONNECTING, C_OPEN, C_DONE };

/* The server's bytes on one connection: where its packets and messages
 * start, and the status of each REPLY message. */
typedef struct reply_parser {
    uint8_t head[PROTO_HEADER_SIZE + 4];
    size_t have;    /* bytes of head collected            */
    uint64_t skip;  /* payload bytes of this packet to drop */
    int between;    /* the next packet starts a message    */
    int last_error; /* the last REPLY's failure code, or 0 */
} reply_parser;

typedef struct attack_conn {
    int fd, state;
    attack_mode mode;
    int target, source;
    size_t sent;       /* bytes of the script sent                         */
    double slow_since; /* when the rate-limited part began                 */
    size_t slow_sent;  /* bytes of it sent since then                      */
    double opened_at, retry_at;
    int failures; /* connections in a row that ended early (back-off) */
    reply_parser rp;
} attack_conn;

static struct options {
    char targets[MAX_LIST][64];
    int ports[MAX_LIST], ntargets;
    char sources[MAX_LIST][64];
    int nsources;
    attack_mode modes[MAX_LIST];
    int nmodes;
    int connections, pipeline, call_n, reconnect;
    double seconds, rate, report_every;
} opt = {
    .connections = 100, .pipeline = 60, .call_n = 64, .seconds = 60, .rate = 1, .report_every = 5};

static struct counters {
    long opened, connect_failed, closed, replies_ok;
    long connect_errno[256];
    long reply_errors[MAX_CODES];
    long closed_by[MAX_CODES]; /* [0]: closed without an error reply */
} count;

static volatile sig_atomic_t stop_requested;
static mode_script scripts[NMODES];
static attack_conn *conns;

static void usage(void)
{
    fprintf(
        stderr,
        "usage: numrpc-attacker --target HOST:PORT[,HOST:PORT...] [--connections N]\n"
        "         [--mode silent|slow|slowhello|statuspipe|firstpacket|httpslow[,...]]\n"
        "         [--sources ADDR[,ADDR...]]\n"
        "         [--seconds S] [--rate BYTES_PER_S] [--pipeline K] [--call-n N] [--reconnect]\n"
        "         [--report-every S]\n"
        "Opens N connections (spread over the targets, the modes and the source addresses,\n"
        "each bound before connect) and holds them for S seconds (default 60):\n"
        "  silent      connects and sends nothing\n"
        "  slow        a valid HELLO at once, then a valid CALL of dcopy(N=--call-n) at --rate\n"
        "              bytes/s (default 1), again and again\n"
        "  slowhello   the HELLO itself at --rate, then the CALL likewise\n"
        "  firstpacket a HELLO and the first packet of the CALL at once, then nothing\n"
        "  statuspipe  K STATUS requests back to back (default 60), never reading a reply\n"
        "  httpslow    an HTTP GET /metrics whose headers never end, all of it at --rate\n"
        "--reconnect: a connection the server closes is opened again (backing off while they\n"
        "end early), so that N stay open.  Prints a line of counts every --report-every s,\n"
        "\"ready\" once N connections were made (or 10 s passed), and a last line at the end.\n");
    exit(2);
}

/* Splits a comma list into up to MAX_LIST items, each through add(). */
static void each_item(const char *list, void (*add)(const char *item))
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save))
        add(it);
}

static void add_target(const char *item)
{
    err_t err;
    if (opt.ntargets == MAX_LIST ||
        sock_parse_hostport(item, opt.targets[opt.ntargets], sizeof opt.targets[0],
                            &opt.ports[opt.ntargets], &err) != 0)
        usage();
    opt.ntargets++;
}

static void add_source(const char *item)
{
    struct in_addr a;
    if (opt.nsources == MAX_LIST || inet_pton(AF_INET, item, &a) != 1) usage();
    snprintf(opt.sources[opt.nsources++], sizeof opt.sources[0], "%s", item);
}

static void add_mode(const char *item)
{
    for (int m = 0; m < NMODES; m++)
        if (strcmp(item, mode_names[m]) == 0 && opt.nmodes < MAX_LIST) {
            opt.modes[opt.nmodes++] = (attack_mode)m;
            return;
        }
    usage();
}

static void parse_options(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--reconnect") == 0) {
            opt.reconnect = 1;
            continue;
        }
        if (v == NULL) usage();
        if (strcmp(a, "--target") == 0)
            each_item(v, add_target);
        else if (strcmp(a, "--sources") == 0)
            each_item(v, add_source);
        else if (strcmp(a, "--mode") == 0)
            each_item(v, add_mode);
        else if (strcmp(a, "--connections") == 0)
            opt.connections = atoi(v);
        else if (strcmp(a, "--seconds") == 0)
            opt.seconds = atof(v);
        else if (strcmp(a, "--rate") == 0)
            opt.rate = atof(v);
        else if (strcmp(a, "--pipeline") == 0)
            opt.pipeline = atoi(v);
        else if (strcmp(a, "--call-n") == 0)
            opt.call_n = atoi(v);
        else if (strcmp(a, "--report-every") == 0)
            opt.report_every = atof(v);
        else
            usage();
        i++;
    }
    if (opt.nmodes == 0) opt.modes[opt.nmodes++] = MODE_SILENT;
    if (opt.ntargets == 0 || opt.connections < 1 || !(opt.seconds > 0) || !(opt.rate > 0) ||
        opt.pipeline < 1 || opt.call_n < 1 || opt.call_n > (1 << 20) || !(opt.report_every > 0))
        usage();
}

/* The scripts of the modes in use (the CALL's interface from the first target). */
static int build_scripts(void)
{
    err_t err = {0, ""};
    int rc = 0;
    for (int i = 0; i < opt.nmodes && rc == 0; i++) {
        attack_mode m = opt.modes[i];
        mode_script *s = &scripts[m];
        if (s->bytes.len > 0) continue;
        s->reads = m != MODE_STATUSPIPE;
        s->loop_from = -1;
        if (m == MODE_STATUSPIPE) rc = attack_add_status(&s->bytes, opt.pipeline, &err);
        if (m == MODE_SLOW || m == MODE_SLOWHELLO || m == MODE_FIRSTPACKET) {
            rc = attack_add_hello(&s->bytes, &err);
            size_t hello = s->bytes.len;
            s->fast = m == MODE_SLOW ? hello : 0;
            s->loop_from = (long)hello;
            if (rc == 0)
                rc = attack_add_dcopy_call(&s->bytes, opt.targets[0], opt.ports[0], opt.call_n,
                                           &err);
            if (m == MODE_FIRSTPACKET) { /* the HELLO and the CALL's first packet at once, then nothing */
                if (s->bytes.len > hello + PROTO_DEFAULT_PACKET) s->bytes.len = hello + PROTO_DEFAULT_PACKET;
                s->fast = s->bytes.len;
                s->loop_from = -1;
            }
        }
        if (m == MODE_STATUSPIPE) s->fast = s->bytes.len;
        if (m == MODE_HTTPSLOW) { /* a request line, then one header line that never ends */
            static const char start[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
            size_t len = sizeof start - 1 + 16384;
            s->bytes.p = malloc(len);
            if (s->bytes.p == NULL) {
                rc = -1;
            } else {
                memcpy(s->bytes.p, start, sizeof start - 1);
                memset(s->bytes.p + sizeof start - 1, 'a', len - (sizeof start - 1));
                s->bytes.len = len;
            }
        }
    }
    if (rc != 0) fprintf(stderr, "attacker: cannot build the requests: %s\n", err.detail);
    return rc;
}

/* ---- Connections ---- */

/* A connection that could not be made (errno e): counted, fd closed, tried
 * again later with --reconnect. */
static void connect_failed(attack_conn *c, int fd, int e, double now)
{
    if (fd >= 0) close(fd);
    c->fd = -1;
    count.connect_failed++;
    count.connect_errno[e & 255]++;
    c->failures++;
    c->retry_at = now + 0.2;
    c->state = opt.reconnect ? C_IDLE : C_DONE;
}

static void start_connect(attack_conn *c, double now)
{
    struct sockaddr_in to = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)opt.ports[c->target])};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int e = 0;
    if (fd < 0 || inet_pton(AF_INET, opt.targets[c->target], &to.sin_addr) != 1)
        e = fd < 0 ? errno : EINVAL;
    if (e == 0 && opt.nsources > 0) {
        struct sockaddr_in from = {.sin_family = AF_INET};
        inet_pton(AF_INET, opt.sources[c->source], &from.sin_addr);
        if (bind(fd, (struct sockaddr *)&from, sizeof from) != 0) e = errno;
    }
    if (e == 0 && connect(fd, (struct sockaddr *)&to, sizeof to) != 0 && errno != EINPROGRESS)
        e = errno;
    if (e != 0) {
        connect_failed(c, fd, e, now);
        return;
    }
    c->fd = fd;
    c->state = C_CONNECTING;
    c->sent = c->slow_sent = 0;
    c->slow_since = 0;
    c->rp = (reply_parser){.between = 1};
    c->opened_at = now;
}

/* The connection is over: counted by the last error the server sent. */
static void finish(attack_conn *c, double now)
{
    close(c->fd);
    c->fd = -1;
    count.closed++;
    int code = c->rp.last_error;
    count.closed_by[code > -MAX_CODES && code < 0 ? -code : 0]++;
    /* Ended early again: wait longer before the next (at most 2 s). */
    c->failures = now - c->opened_at < 5.0 ? c->failures + 1 : 0;
    double wait = 0.1 * (1 << (c->failures < 5 ? c->failures : 5));
    c->retry_at = now + (wait > 2.0 ? 2.0 : wait);
    c->state = opt.reconnect ? C_IDLE : C_DONE;
}

/* Feeds the server's bytes to the parser: each message's first packet, if
 * a REPLY, gives its status. */
static void parse_replies(reply_parser *p, const uint8_t *buf, size_t n)
{
    while (n > 0) {
        if (p->skip > 0) {
            size_t k = p->skip < n ? (size_t)p->skip : n;
            p->skip -= k, buf += k, n -= k;
            continue;
        }
        size_t want = p->between ? sizeof p->head : PROTO_HEADER_SIZE;
        size_t k = want - p->have < n ? want - p->have : n;
        memcpy(p->head + p->have, buf, k);
        p->have += k, buf += k, n -= k;
        if (p->have < PROTO_HEADER_SIZE) return;
        uint32_t type, id, flags, len;
        err_t err;
        if (wire_parse_header(p->head, &type, &id, &flags, &len, &err) != 0) {
            p->skip = UINT64_MAX; /* not our protocol: ignore the rest */
            return;
        }
        if (p->between && len >= 4 && p->have < sizeof p->head)
            return; /* the status is still to come */
        size_t got = p->have - PROTO_HEADER_SIZE;
        if (p->between && type == PROTO_REPLY && len >= 4) {
            int32_t status = (int32_t)((uint32_t)p->head[16] << 24 | (uint32_t)p->head[17] << 16 |
                                       (uint32_t)p->head[18] << 8 | p->head[19]);
            if (status == 0)
                count.replies_ok++;
            else if (status < 0 && status > -MAX_CODES)
                count.reply_errors[-status]++;
            if (status != 0) p->last_error = status;
        }
        p->skip = len > got ? len - got : 0;
        if (len < got) { /* a short packet: the bytes read past it are the next header's */
            memmove(p->head, p->head + PROTO_HEADER_SIZE + len, got - len);
            p->have = got - len;
        } else {
            p->have = 0;
        }
        if (type != PROTO_KEEPALIVE) p->between = (flags & PROTO_FLAG_END) != 0;
    }
}

/* Reads what is there (at most max bytes); 0 at the end of the stream or an
 * error, else 1. */
static int drain(attack_conn *c, size_t max)
{
    static uint8_t buf[65536];
    for (size_t total = 0; total < max;) {
        ssize_t k = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
        if (k == 0) return 0;
        if (k < 0) return errno == EAGAIN || errno == EINTR ? 1 : 0;
        parse_replies(&c->rp, buf, (size_t)k);
        total += (size_t)k;
    }
    return 1;
}

/* Sends what the script allows by now; 0 when the connection broke. */
static int push(attack_conn *c, double now)
{
    const mode_script *s = &scripts[c->mode];
    if (s->bytes.len == 0) return 1; /* silent */
    for (;;) {
        if (c->sent == s->bytes.len) {
            if (s->loop_from < 0) return 1;
            c->sent = (size_t)s->loop_from;
        }
        size_t n;
        if (c->sent < s->fast) {
            n = s->fast - c->sent;
        } else {
            if (c->slow_since == 0) c->slow_since = now;
            size_t allowed =
                (size_t)((now - c->slow_since) * opt.rate) + 1; /* the first byte at once */
            if (allowed <= c->slow_sent) return 1;
            n = allowed - c->slow_sent;
            if (n > s->bytes.len - c->sent) n = s->bytes.len - c->sent;
        }
        ssize_t k = send(c->fd, s->bytes.p + c->sent, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (k < 0) return errno == EAGAIN || errno == EINTR ? 1 : 0;
        if (c->sent >= s->fast) c->slow_sent += (size_t)k;
        c->sent += (size_t)k;
        if ((size_t)k < n) return 1;
    }
}

/* A connect finished (or failed). */
static void connected(attack_conn *c, double now)
{
    int e = 0;
    socklen_t len = sizeof e;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0) e = errno;
    if (e != 0) {
        connect_failed(c, c->fd, e, now);
        return;
    }
    c->state = C_OPEN;
    count.opened++;
}

/* This process's resident memory in KiB (0 if unknown). */
static long rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f != NULL) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Error names without their NUMRPC_ prefix. */
static const char *code_name(int code)
{
    const char *name = numrpc_errname(code);
    return strncmp(name, "NUMRPC_", 7) == 0 ? name + 7 : name;
}

static void print_counts(const char *what, double t, int open, int connecting)
{
    printf("%s t=%.1f open=%d connecting=%d opened=%ld closed=%ld connect_failed=%ld "
           "replies_ok=%ld rss_kib=%ld",
           what, t, open, connecting, count.opened, count.closed, count.connect_failed,
           count.replies_ok, rss_kib());
    const char *sep = " reply_errors=";
    for (int c = 1; c < MAX_CODES; c++)
        if (count.reply_errors[c])
            printf("%s%s:%ld", sep, code_name(-c), count.reply_errors[c]), sep = ",";
    sep = " closed_by=";
    for (int c = 0; c < MAX_CODES; c++)
        if (count.closed_by[c])
            printf("%s%s:%ld", sep, c ? code_name(-c) : "none", count.closed_by[c]), sep = ",";
    sep = " connect_errors=";
    for (int e = 1; e < 256; e++)
        if (count.connect_errno[e])
            printf("%s%s:%ld", sep, strerrorname_np(e) ? strerrorname_np(e) : "?",
                   count.connect_errno[e]),
                sep = ",";
    printf("\n");
    fflush(stdout);
}

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void raise_fd_limit(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
        r.rlim_cur = r.rlim_max;
        setrlimit(RLIMIT_NOFILE, &r);
    }
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY &&
        (rlim_t)opt.connections + 16 > r.rlim_cur)
        fprintf(stderr, "attacker: the open-file limit (%ld) is below %d connections\n",
                (long)r.rlim_cur, opt.connections);
}

/* One pass of the loop: opens what is due, polls, reads, sends. */
static void step(struct pollfd *pfd, int *index, double now, int *open, int *connecting)
{
    int np = 0;
    *open = *connecting = 0;
    for (int i = 0; i < opt.connections; i++) {
        attack_conn *c = &conns[i];
        if (c->state == C_IDLE && now >= c->retry_at && *connecting < MAX_CONNECTING)
            start_connect(c, now);
        if (c->state == C_CONNECTING) (*connecting)++;
        if (c->state == C_OPEN) (*open)++;
        if (c->state != C_CONNECTING && c->state != C_OPEN) continue;
        short ev =
            c->state == C_CONNECTING ? POLLOUT : POLLRDHUP | (scripts[c->mode].reads ? POLLIN : 0);
        pfd[np] = (struct pollfd){c->fd, ev, 0};
        index[np++] = i;
    }
    if (poll(pfd, (nfds_t)np, TICK_MS) < 0 && errno != EINTR) return;
    now = sock_now();
    for (int j = 0; j < np; j++) {
        attack_conn *c = &conns[index[j]];
        if (c->state == C_CONNECTING) {
            if (pfd[j].revents) connected(c, now);
            continue;
        }
        int alive = 1;
        if (pfd[j].revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR))
            alive = drain(c, scripts[c->mode].reads ? 1u << 20 : 16u << 20) &&
                    !(pfd[j].revents & (POLLRDHUP | POLLHUP | POLLERR));
        if (alive) alive = push(c, now);
        if (!alive) finish(c, now);
    }
}

int main(int argc, char **argv)
{
    parse_options(argc, argv);
    raise_fd_limit();
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    conns = calloc((size_t)opt.connections, sizeof *conns);
    struct pollfd *pfd = calloc((size_t)opt.connections, sizeof *pfd);
    int *index = calloc((size_t)opt.connections, sizeof *index);
    if (conns == NULL || pfd == NULL || index == NULL || build_scripts() != 0) return 1;
    int per = opt.nmodes * opt.ntargets;
    for (int i = 0; i < opt.connections; i++) {
        conns[i].fd = -1;
        conns[i].state = C_IDLE;
        conns[i].mode = opt.modes[i % opt.nmodes];
        conns[i].target = i / opt.nmodes % opt.ntargets;
        conns[i].source = opt.nsources ? i / per % opt.nsources : 0;
    }
    double t0 = sock_now(), next_report = t0 + opt.report_every;
    int ready = 0, open = 0, connecting = 0;
    while (!stop_requested) {
        double now = sock_now();
        if (now - t0 >= opt.seconds) break;
        step(pfd, index, now, &open, &connecting);
        if (!ready && (count.opened >= opt.connections || now - t0 >= 10)) {
            ready = 1;
            print_counts("ready", now - t0, open, connecting);
        }
        if (now >= next_report) {
            print_counts("attacker", now - t0, open, connecting);
            next_report += opt.report_every;
        }
    }
    print_counts("done", sock_now() - t0, open, connecting);
    for (int i = 0; i < opt.connections; i++)
        if (conns[i].fd >= 0) close(conns[i].fd);
    for (int m = 0; m < NMODES; m++)
        attack_bytes_free(&scripts[m].bytes);
    free(conns);
    free(pfd);
    free(index);
    return 0;
}
