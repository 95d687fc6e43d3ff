/* pull_broker.c -- the process that pulls handles for workers: it alone holds
 * the peer credentials and connects to sources, each fetch in a child of its own. */
#define _GNU_SOURCE
#include "pull.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "marshal.h"
#include "msg.h"
#include "peer.h"
#include "protocol.h"
#include "sock.h"
#include "worker.h"

#define PULL_CONNECT_MS 2000

/* Messages from the dispatcher on the broker's control socket. */
enum broker_ctl_kind {
    BROKER_CHANNEL = 1, /* a worker's channel (its fd attached) */
    BROKER_RELOAD = 2   /* the reread settings below */
};
typedef struct broker_ctl {
    int kind;
    int io_timeout_ms;
    uint64_t handle_bytes;
    char pull_from[CONFIG_PATH_MAX];
    char peer_token_file[CONFIG_PATH_MAX];
    char peer_tls_ca[CONFIG_PATH_MAX];
} broker_ctl;

/* One worker's channel, as the broker sees it. */
typedef struct channel {
    int fd;          /* -1: closed (its entry goes when its fetch is reaped) */
    pid_t child;     /* the fetch in flight (0: none) */
    uint32_t call_id; /* the request it answers */
    double kill_at;  /* monotonic seconds its fetch is killed at */
    int killed;      /* it was, for its time */
    char source[MSG_DATA_SOURCE_MAX + 1];
} channel;

static struct {
    pid_t pid; /* the dispatcher's: the broker (0: none) */
    int ctl;   /* the dispatcher's end of the control socket */
} broker = {0, -1};

int pull_listed(const char *list, const char *source)
{
    size_t n = strlen(source);
    for (const char *p = list; *p;) {
        while (*p == ',' || *p == ' ') p++;
        size_t len = strcspn(p, ", ");
        if (len == n && len > 0 && strncmp(p, source, n) == 0) return 1;
        p += len;
    }
    return 0;
}

int pull_limit_ms(const server_config *cfg, uint32_t asked)
{
    int own = cfg->io_timeout_ms > 0 ? cfg->io_timeout_ms : 60000;
    return asked > 0 && asked < (uint32_t)own ? (int)asked : own;
}

int pull_refuse_source(const char *list, const char *source, err_t *err)
{
    return err_set(err, NUMRPC_EAUTH, "this server fetches handles only from the servers of its --pull-from "
                   "(%s); %s is not one", list[0] ? list : "none", source);
}

/* ---- The fetch (in a child of the broker) ---- */

/* Reads the source's reply to the GET into map (the new handle's pages,
 * shaped want): the shape must be the announced one, and the elements
 * exactly rows x cols (marshal_read_block checks the count first). */
static int read_elements(msg_conn *c, uint32_t get_id, const msg_data_shape *want, void *map, err_t *err)
{
    msg_data_shape got;
    int rc = msg_read_reply(&c->reader, get_id, c->label, err);
    if (rc == 0) rc = msg_read_data_get_reply_header(&c->reader, &got, err);
    if (rc == 0 && (got.type != want->type || got.rows != want->rows || got.cols != want->cols))
        return err_set(err, NUMRPC_EPROTO, "the source sent a handle of type %u shaped %llu x %llu; %u, %llu x %llu "
                       "was announced", got.type, (unsigned long long)got.rows, (unsigned long long)got.cols,
                       want->type, (unsigned long long)want->rows, (unsigned long long)want->cols);
    iface_param p;
    iface_shape sh;
    msg_data_as_param(want, &p, &sh);
    if (rc == 0) rc = marshal_read_block(&c->reader, &p, &sh, map, err);
    if (rc == 0) rc = wire_expect_end(&c->reader, err);
    return rc;
}

/* Connects to the source and redeems the ticket into map. */
static int fetch(const server_config *cfg, const msg_data_pull *q, void *map, err_t *err)
{
    char host[MSG_DATA_SOURCE_MAX + 1];
    int port, ms = pull_limit_ms(cfg, q->deadline_ms);
    double deadline = sock_now() + ms / 1000.0;
    tls_context *tls = NULL;
    msg_conn c;
    int rc = msg_data_split_source(q->source, host, sizeof host, &port, err);
    if (rc == 0 && cfg->peer_tls_ca[0] &&
        (tls = tls_client_context_new(cfg->peer_tls_ca, cfg->tls_cert[0] ? cfg->tls_cert : NULL,
                                      cfg->tls_key[0] ? cfg->tls_key : NULL, err)) == NULL)
        rc = err->code;
    if (rc == 0) rc = peer_open(&c, tls, host, port, NULL, cfg->peer_token_file, "numrpc-server pull",
                                ms < PULL_CONNECT_MS ? ms : PULL_CONNECT_MS, ms, err);
    if (rc == NUMRPC_EAUTH && !cfg->peer_token_file[0]) /* the source's words are for clients */
        err_prefix(err, "this server pulls with no token (--peer-token-file)");
    if (rc == 0) {
        wire_reader_set_deadline(&c.reader, deadline);
        wire_writer_set_deadline(&c.writer, deadline);
        uint32_t id = msg_conn_next_id(&c);
        rc = msg_write_data_get(&c.writer, id, &q->ticket, err);
        if (rc == 0) rc = read_elements(&c, id, &q->shape, map, err);
        msg_conn_free(&c);
    }
    tls_context_free(tls);
    return rc;
}

/* ---- Channels ---- */

/* The answer to call_id on fd: a REPLY with code and detail (capped), one
 * datagram, never waiting (a worker that does not read loses its channel).
 * 0, or -1 when it could not go. */
static int answer(int fd, uint32_t call_id, int code, const char *detail)
{
    char capped[PULL_DETAIL_MAX + 1];
    snprintf(capped, sizeof capped, "%s", code == NUMRPC_OK ? "" : detail);
    transport_bytes out = {.max = PULL_MSG_MAX};
    wire_writer w;
    err_t err;
    int rc = wire_writer_init(&w, -1, PROTO_DEFAULT_PACKET, &err);
    if (rc == 0) {
        wire_writer_attach(&w, transport_memory_sink(&out));
        rc = msg_reply_simple(&w, call_id, code, capped, &err);
    }
    if (rc == 0 && send(fd, out.p, out.len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)out.len) rc = -1;
    wire_writer_free(&w);
    transport_bytes_free(&out);
    return rc == 0 ? 0 : -1;
}

/* One request's words (len bytes at buf): a DATA_PULL message, read by
 * the protocol's own reader (every field checked), its call id in *call_id. */
static int parse_request(const uint8_t *buf, size_t len, uint32_t *call_id, msg_data_pull *q, err_t *err)
{
    wire_reader r;
    uint32_t type;
    *call_id = 0;
    if (len > PULL_MSG_MAX) return err_set(err, NUMRPC_EPROTO, "a pull request of more than %d bytes", PULL_MSG_MAX);
    int rc = wire_reader_init(&r, -1, PROTO_DEFAULT_PACKET, err);
    if (rc != 0) return rc;
    transport t = transport_memory(buf, len);
    wire_reader_attach(&r, t);
    rc = wire_next_message(&r, &type, call_id, err);
    if (rc == 0 && type != PROTO_DATA_PULL) rc = err_set(err, NUMRPC_EPROTO, "message %u is not a pull request", type);
    if (rc == 0) rc = msg_read_data_pull(&r, q, err);
    wire_reader_attach(&r, transport_none());
    transport_close(&t);
    wire_reader_free(&r);
    return rc;
}

/* The file a request came with: a regular file open for reading and
 * writing, of at least the shape's bytes (the reader checked ld x cols x
 * element size against overflow), which are within --handle-bytes. */
static int check_file(const server_config *cfg, int fd, const msg_data_shape *shape, uint64_t *bytes, err_t *err)
{
    struct stat st;
    *bytes = msg_data_mem_elems(shape) * iface_type_size(shape->type);
    if (cfg->handle_bytes > 0 && *bytes > cfg->handle_bytes)
        return err_set(err, NUMRPC_ELIMIT, "a pull request of %llu bytes, beyond --handle-bytes (%llu)",
                       (unsigned long long)*bytes, (unsigned long long)cfg->handle_bytes);
    if (fd < 0) return err_set(err, NUMRPC_EINVAL, "a pull request without the handle's file");
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return err_set(err, NUMRPC_EINVAL, "a pull request whose descriptor is not a regular file");
    if ((fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDWR)
        return err_set(err, NUMRPC_EINVAL, "a pull request whose file is not open for reading and writing");
    if ((uint64_t)st.st_size < *bytes || *bytes > SIZE_MAX)
        return err_set(err, NUMRPC_EINVAL, "a pull request whose file has %lld bytes; its shape needs %llu",
                       (long long)st.st_size, (unsigned long long)*bytes);
    return 0;
}

/* The fetch's child: the received file mapped (exactly the shape's bytes),
 * filled from the source, and the answer written.  Never returns. */
static void fetch_child(const server_config *cfg, const channel *ch, const msg_data_pull *q, int file, uint64_t bytes)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_IGN);
    err_t err;
    err_clear(&err);
    void *map = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, file, 0);
    close(file);
    int rc = map == MAP_FAILED ? err_set(&err, NUMRPC_ESERVER, "cannot map the handle's file: %s", strerror(errno))
                               : fetch(cfg, q, map, &err);
    if (map != MAP_FAILED) munmap(map, (size_t)bytes);
    _exit(answer(ch->fd, ch->call_id, rc, err.detail) == 0 ? 0 : 1);
}

/* The broker's state (in the broker process). */
typedef struct broker_state {
    server_config cfg;
    int ctl, sig;
    channel *ch;
    int n, cap;
} broker_state;

/* Serves the request waiting on channel i: refused at once when it is
 * malformed or hostile, else fetched by a child.  -1: drop the channel. */
static int serve_request(broker_state *b, int i)
{
    channel *ch = &b->ch[i];
    uint8_t buf[PULL_MSG_MAX + 1];
    int file = -1;
    ssize_t k = sock_recv_fd(ch->fd, &file, buf, sizeof buf);
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (k <= 0) {
        if (file >= 0) close(file);
        return -1; /* the worker is gone */
    }
    msg_data_pull q;
    uint64_t bytes = 0;
    err_t err;
    err_clear(&err);
    int rc = parse_request(buf, (size_t)k, &ch->call_id, &q, &err);
    if (rc == 0 && !pull_listed(b->cfg.pull_from, q.source)) rc = pull_refuse_source(b->cfg.pull_from, q.source, &err);
    if (rc == 0) rc = check_file(&b->cfg, file, &q.shape, &bytes, &err);
    if (rc != 0) {
        char said[ERR_DETAIL_MAX];
        snprintf(said, sizeof said, "%s", err.detail);
        for (char *c = said; *c; c++)
            if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f) *c = '?'; /* one log line */
        server_log(&b->cfg, LOG_LEVEL_NOTICE, "pull broker: a worker's request refused: %s", said);
        if (file >= 0) close(file);
        return answer(ch->fd, ch->call_id, rc, err.detail);
    }
    pid_t broker_pid = getpid(), pid = fork();
    if (pid == 0) {
        server_child_dies_with(broker_pid);
        close(b->ctl);
        close(b->sig);
        for (int j = 0; j < b->n; j++)
            if (j != i && b->ch[j].fd >= 0) close(b->ch[j].fd);
        fetch_child(&b->cfg, ch, &q, file, bytes);
    }
    close(file);
    if (pid < 0) {
        err_set(&err, NUMRPC_ESERVER, "cannot start a fetch: %s", strerror(errno));
        return answer(ch->fd, ch->call_id, err.code, err.detail);
    }
    ch->child = pid;
    ch->killed = 0;
    ch->kill_at = sock_now() + (pull_limit_ms(&b->cfg, q.deadline_ms) + PULL_KILL_GRACE_MS) / 1000.0;
    memcpy(ch->source, q.source, sizeof ch->source);
    return 0;
}

/* A message from the dispatcher: a new channel, or new settings.  -1: the
 * dispatcher is gone. */
static int serve_control(broker_state *b)
{
    broker_ctl m;
    int fd = -1;
    ssize_t k = sock_recv_fd(b->ctl, &fd, &m, sizeof m);
    if (k < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
    if (k <= 0) return -1;
    if (k == (ssize_t)sizeof m && m.kind == BROKER_RELOAD) {
        m.pull_from[sizeof m.pull_from - 1] = m.peer_token_file[sizeof m.peer_token_file - 1] = '\0';
        m.peer_tls_ca[sizeof m.peer_tls_ca - 1] = '\0';
        memcpy(b->cfg.pull_from, m.pull_from, sizeof m.pull_from);
        memcpy(b->cfg.peer_token_file, m.peer_token_file, sizeof m.peer_token_file);
        memcpy(b->cfg.peer_tls_ca, m.peer_tls_ca, sizeof m.peer_tls_ca);
        b->cfg.io_timeout_ms = m.io_timeout_ms;
        b->cfg.handle_bytes = m.handle_bytes;
    }
    if (fd < 0) return 0;
    if (k == (ssize_t)sizeof m && m.kind == BROKER_CHANNEL && b->n == b->cap) {
        channel *grown = realloc(b->ch, (size_t)(b->cap * 2 + 8) * sizeof *b->ch);
        if (grown != NULL) {
            b->ch = grown;
            b->cap = b->cap * 2 + 8;
        }
    }
    if (k != (ssize_t)sizeof m || m.kind != BROKER_CHANNEL || b->n == b->cap) {
        close(fd); /* the worker's end then reads EOF: its pulls fail */
        return 0;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    b->ch[b->n++] = (channel){.fd = fd};
    return 0;
}

/* Fetches that ended: each one's answer, when its child could not give
 * it (crashed, killed for its time), and closed channels' entries go. */
static void reap(broker_state *b)
{
    struct signalfd_siginfo si;
    while (read(b->sig, &si, sizeof si) == (ssize_t)sizeof si) {}
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int i = 0; i < b->n; i++) {
            channel *ch = &b->ch[i];
            if (ch->child != pid) continue;
            ch->child = 0;
            if (ch->fd >= 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
                char how[64], why[ERR_DETAIL_MAX];
                server_describe_exit(status, how, sizeof how);
                if (ch->killed)
                    snprintf(why, sizeof why, "the fetch from %s took longer than its time limit", ch->source);
                else
                    snprintf(why, sizeof why, "the fetch from %s ended (%s)", ch->source, how);
                if (answer(ch->fd, ch->call_id, ch->killed ? NUMRPC_ETIMEDOUT : NUMRPC_ESERVER, why) != 0) {
                    close(ch->fd);
                    ch->fd = -1;
                }
            }
        }
    }
    int kept = 0; /* closed and idle entries go */
    for (int i = 0; i < b->n; i++)
        if (b->ch[i].fd >= 0 || b->ch[i].child > 0) b->ch[kept++] = b->ch[i];
    b->n = kept;
}

/* A closed channel: its fetch, if any, is killed; its entry goes once reaped. */
static void drop(channel *ch)
{
    if (ch->child > 0) kill(ch->child, SIGKILL);
    close(ch->fd);
    ch->fd = -1;
}

/* The broker's loop: the control socket, SIGCHLD, and each channel --
 * readable while it has no fetch in flight (so one worker gets one fetch
 * at a time), watched for its end while it has one. */
static void broker_main(broker_state *b) __attribute__((noreturn));
static void broker_main(broker_state *b)
{
    struct pollfd *p = NULL;
    int p_cap = 0;
    for (;;) {
        if (p_cap < b->n + 2) {
            struct pollfd *grown = realloc(p, (size_t)(b->n + 10) * sizeof *p);
            if (grown == NULL) break;
            p = grown;
            p_cap = b->n + 10;
        }
        double now = sock_now(), next = 0;
        p[0] = (struct pollfd){.fd = b->ctl, .events = POLLIN};
        p[1] = (struct pollfd){.fd = b->sig, .events = POLLIN};
        int n = b->n;
        for (int i = 0; i < n; i++) {
            channel *ch = &b->ch[i];
            p[i + 2] = (struct pollfd){.fd = ch->fd, .events = ch->child > 0 ? 0 : POLLIN};
            if (ch->child > 0 && !ch->killed && now >= ch->kill_at) {
                kill(ch->child, SIGKILL);
                ch->killed = 1;
            }
            if (ch->child > 0 && !ch->killed && (next == 0 || ch->kill_at < next)) next = ch->kill_at;
        }
        int wait_ms = next == 0 ? -1 : (int)((next - now) * 1000) + 1;
        if (poll(p, (nfds_t)n + 2, wait_ms) < 0 && errno != EINTR) break;
        if (p[0].revents && serve_control(b) != 0) break;
        for (int i = 0; i < n; i++) {
            channel *ch = &b->ch[i];
            short ev = p[i + 2].revents;
            if (ch->fd < 0 || ev == 0 || (ev & POLLNVAL)) continue;
            if (ch->child > 0) drop(ch); /* only its end wakes a busy channel */
            else if (serve_request(b, i) != 0) drop(ch);
        }
        reap(b);
    }
    for (int i = 0; i < b->n; i++)
        if (b->ch[i].child > 0) kill(b->ch[i].child, SIGKILL);
    _exit(0);
}

int pull_broker_start(const server_config *cfg, err_t *err)
{
    if (!cfg->pull_from[0] || broker.pid > 0) return 0;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return err_set(err, NUMRPC_ESERVER, "pull broker: socketpair: %s", strerror(errno));
    pid_t parent = getpid(), pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return err_set(err, NUMRPC_ESERVER, "cannot start the pull broker: %s", strerror(errno));
    }
    if (pid == 0) {
        server_child_dies_with(parent);
        prctl(PR_SET_NAME, "numrpc-pull");
        /* Signals stay the server's (SIGCHLD is read from a signalfd), and
         * the only descriptors kept are stdio and the control socket. */
        static broker_state b;
        sigset_t all, chld;
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        b.cfg = *cfg;
        b.ctl = sv[1] == 3 ? 3 : dup2(sv[1], 3);
        close_range(4, ~0u, 0);
        b.sig = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
        if (b.ctl != 3 || b.sig < 0) _exit(1);
        fcntl(b.ctl, F_SETFD, FD_CLOEXEC);
        broker_main(&b);
    }
    close(sv[1]);
    fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK); /* a wedged broker never holds the dispatcher */
    broker.ctl = sv[0];
    broker.pid = pid;
    return 0;
}

int pull_broker_channel(err_t *err)
{
    err_clear(err);
    if (broker.pid <= 0) return -1;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return err_set(err, NUMRPC_ESERVER, "pull channel: socketpair: %s", strerror(errno)), -1;
    broker_ctl m;
    memset(&m, 0, sizeof m);
    m.kind = BROKER_CHANNEL;
    if (sock_send_fd(broker.ctl, sv[1], &m, sizeof m) != 0) {
        err_set(err, NUMRPC_ESERVER, "the pull broker takes no channel: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    close(sv[1]);
    return sv[0];
}

void pull_broker_reload(const server_config *cfg)
{
    if (broker.pid <= 0) return;
    broker_ctl m;
    memset(&m, 0, sizeof m);
    m.kind = BROKER_RELOAD;
    m.io_timeout_ms = cfg->io_timeout_ms;
    m.handle_bytes = cfg->handle_bytes;
    memcpy(m.pull_from, cfg->pull_from, sizeof m.pull_from);
    memcpy(m.peer_token_file, cfg->peer_token_file, sizeof m.peer_token_file);
    memcpy(m.peer_tls_ca, cfg->peer_tls_ca, sizeof m.peer_tls_ca);
    sock_send_fd(broker.ctl, -1, &m, sizeof m);
}

int pull_broker_is(pid_t pid)
{
    return broker.pid > 0 && pid == broker.pid;
}

void pull_broker_stop(void)
{
    if (broker.pid <= 0) return;
    close(broker.ctl); /* the broker reads EOF and leaves */
    waitpid(broker.pid, NULL, 0);
    broker.ctl = -1;
    broker.pid = 0;
}
