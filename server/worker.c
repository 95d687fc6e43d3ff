/* worker.c -- a pre-forked worker process: borrows a client connection from
 * the dispatcher, serves its messages directly, and gives it back. */
#define _GNU_SOURCE
#include "worker.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "access.h"
#include "arrival.h"
#include "connio.h"
#include "log.h"
#include "reply.h"
#include "session.h"
#include "sock.h"
#include "stats.h"
#include "worker_sandbox.h"

/* A worker idle this long gives back the memory its calls left. */
#define WORKER_IDLE_TRIM_MS 2000

/* poll(), with the idle worker's memory given back when nothing comes
 * for WORKER_IDLE_TRIM_MS after a call. */
static int wait_events(session *s, struct pollfd *p, nfds_t n)
{
    for (;;) {
        int k = poll(p, n, session_trim_pending(s) ? WORKER_IDLE_TRIM_MS : -1);
        if (k != 0) return k;
        session_trim(s);
    }
}

/* Whom the handle budgets charge for connection fd: the token it proved,
 * or without tokens its peer's address as --max-connections-per-peer
 * counts it (IPv4, or an IPv6 address's /64: one host's usual share). */
static void set_account(session *s, int fd)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    char text[INET6_ADDRSTRLEN] = "an unknown address";
    if (access_on(s->tokens)) {
        memcpy(s->account, s->identity, sizeof s->account);
        return;
    }
    const char *suffix = "";
    int known = getpeername(fd, (struct sockaddr *)&sa, &len) == 0;
    if (known && sa.ss_family == AF_INET) {
        inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, text, sizeof text);
    } else if (known && sa.ss_family == AF_INET6) {
        struct in6_addr a = ((struct sockaddr_in6 *)&sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(&a)) {
            inet_ntop(AF_INET, a.s6_addr + 12, text, sizeof text);
        } else {
            memset(a.s6_addr + 8, 0, 8);
            inet_ntop(AF_INET6, &a, text, sizeof text);
            suffix = "/64";
        }
    }
    snprintf(s->account, sizeof s->account, "%s%s", text, suffix);
}

static void tell_dispatcher(int ctl_fd, int kind, int conn_id)
{
    ctl_msg m = {.kind = kind, .conn_id = conn_id};
    if (sock_send_fd(ctl_fd, -1, &m, sizeof m) != 0) _exit(0); /* dispatcher gone */
}

/* The dispatcher's end of this worker's control socket. */
static int dispatcher_fd = -1;

/* session.wake_dispatcher: the dispatcher stops the routine at its
 * deadline, however soon, rather than at its next tick, and gives the
 * workers a request held back was waiting for (pool.c next_eligible). */
static void wake_dispatcher(const session *s)
{
    tell_dispatcher(dispatcher_fd, CTL_DEADLINE, s->conn_id);
}

/* Gives the connection back to the dispatcher (which keeps it, or hears
 * that it closed). */
static void give_back(session *s, int ctl_fd, int kind)
{
    connio_give_back(&s->conn.tp); /* a TLS stream goes on in the dispatcher */
    msg_conn_close(&s->conn);
    session_forget_caller(s); /* the next loan may be anyone's */
    tell_dispatcher(ctl_fd, kind, s->conn_id);
}

/* Set when the worker's stdout and stderr are the dispatcher's pipe. */
static int words_captured;

void worker_words_captured(void)
{
    words_captured = 1;
}

/* How long a message waits for the dispatcher to read what an earlier
 * call wrote, at most: past that the worker leaves rather than let those
 * words count as the next caller's (last_words.h). */
#define WORDS_SETTLE_MS 2000

/* Before each message: the pipe holds nothing of earlier calls.  The
 * dispatcher reads it as soon as it is written, so this waits only after
 * a routine wrote something, for the dispatcher's next turn. */
static void words_settle(const session *s)
{
    int n = 0;
    if (!words_captured || ioctl(2, FIONREAD, &n) != 0 || n <= 0) return;
    for (int i = 0; i < WORDS_SETTLE_MS * 10; i++) {
        usleep(100);
        if (ioctl(2, FIONREAD, &n) != 0 || n <= 0) return;
    }
    server_log(s->cfg, LOG_LEVEL_ERROR, "the dispatcher has not read this worker's output for %d ms: the worker leaves",
               WORDS_SETTLE_MS);
    _exit(1);
}

/* A request that begins arriving on a connection this worker holds idle
 * is read here only once its first packet is (ARRIVAL_READY): a sender
 * that trickles it holds the dispatcher's attention, not a worker.  A
 * packet split by the network gets a moment to join up first. */
#define ARRIVAL_WORKER_WAIT_MS 2
static int request_has_arrived(transport *t)
{
    double until = sock_now() + ARRIVAL_WORKER_WAIT_MS / 1000.0;
    for (;;) {
        if (arrival_check(t) != ARRIVAL_PARTIAL) return 1; /* ready, or closed: the reader sees which */
        struct pollfd p = {t->fd, POLLRDHUP, 0};
        if (poll(&p, 1, 0) > 0) return 1; /* cut short by the peer: the reader says so */
        if (sock_now() >= until) return 0;
        usleep(500);
    }
}

/* Serves one borrowed connection until it ends or the dispatcher wants it
 * back while no request is in progress. */
static void serve_connection(session *s, int ctl_fd, int fd, tls_stream_state *tls)
{
    err_t err;
    char label[32];
    /* Both limits hold inside a message; between messages the worker waits
     * in poll(), which no socket time limit touches.  Set once per loan:
     * a system call per message would show in every null call. */
    sock_set_timeouts(fd, s->cfg->io_timeout_ms, s->cfg->io_timeout_ms);
    /* Whatever the previous loan left half written or half read (a client
     * that hung up mid-reply) is forgotten with it. */
    snprintf(label, sizeof label, "connection %d", s->conn_id);
    msg_conn_attach(&s->conn, connio_transport(fd, tls), label);
    wire_reader *r = &s->conn.reader;
    wire_reader_set_pace(r, s->cfg->request_timeout_ms / 1000.0, (double)s->cfg->min_rate);
    s->slot->last_active = sock_now();
    for (;;) {
        /* TLS bytes already in the state are ready without a poll. */
        if (wire_reader_idle(r) && !(wire_reader_buffered(r) == 0 && s->conn.tp.ops->pending(&s->conn.tp) > 0)) {
            struct pollfd p[2] = {{ctl_fd, POLLIN, 0}, {fd, POLLIN, 0}};
            int n = wait_events(s, p, 2);
            if (n < 0 && errno == EINTR) continue;
            if (p[0].revents) {
                ctl_msg m;
                int ignored;
                ssize_t k = sock_recv_fd(ctl_fd, &ignored, &m, sizeof m);
                if (k <= 0) _exit(0);
                if (ignored >= 0) close(ignored);
                if (m.kind == CTL_RELEASE) {
                    give_back(s, ctl_fd, CTL_RETURNED);
                    return;
                }
                continue;
            }
            if (s->next_began == 0) s->next_began = sock_now();
            if (wire_reader_buffered(r) == 0 && !request_has_arrived(&s->conn.tp)) {
                s->next_began = 0;
                give_back(s, ctl_fd, CTL_RETURNED);
                return;
            }
        }
        words_settle(s);
        int rc = session_serve_one(s, &err);
        if (rc != 0 && err.code == NUMRPC_ETIMEDOUT && wire_reader_in_message(r)) {
            /* A sender that stalls mid-request (--io-timeout) or trickles
             * it (--min-rate) hears why. */
            err_t ignored;
            char detail[sizeof err.detail + 64];
            if (strcmp(err.detail, "receive timed out") == 0) /* the socket's limit */
                snprintf(detail, sizeof detail, "request stalled: no byte for %d ms; the server closes the connection",
                         s->cfg->io_timeout_ms);
            else
                snprintf(detail, sizeof detail, "%s; the server closes the connection", err.detail);
            reply_error(&s->conn.writer, wire_reader_call_id(r), NUMRPC_ETIMEDOUT, detail, &ignored);
        }
        if (rc == 0 && atomic_load(&s->slot->draining) && s->last_type == PROTO_CALL && wire_reader_idle(r)) {
            /* Shutting down: this connection's call is done; the dispatcher
             * refuses whatever it sends next. */
            give_back(s, ctl_fd, CTL_RETURNED);
            return;
        }
        if (rc != 0) {
            /* A TLS client gone between messages without close_notify has
             * lost nothing: as quiet as a plain client that closed. */
            int left_quietly = tls != NULL && tls->truncated && wire_reader_idle(r);
            if (strcmp(err.detail, "closed") != 0 && !left_quietly)
                server_log(s->cfg, LOG_LEVEL_NOTICE, "closing connection %d: %s%s%s%s", s->conn_id, err.detail,
                           tls && tls->why[0] ? " (TLS: " : "", tls ? tls->why : "", tls && tls->why[0] ? ")" : "");
            give_back(s, ctl_fd, CTL_CLOSED);
            return;
        }
    }
}

/* --max-worker-memory: the worker's address space, once its modules are
 * loaded, plus shared (what the dispatcher lends it beyond its calls) (by default twice the call bytes allowed, 256 MiB per BLAS thread
 * and 1 GiB: config.c).  Not under AddressSanitizer, whose shadow memory is
 * terabytes. */
static void limit_memory(const server_config *cfg, uint64_t shared)
{
#if defined(__SANITIZE_ADDRESS__)
    (void)shared;
    if (cfg->max_worker_memory)
        server_log(cfg, LOG_LEVEL_DEBUG, "--max-worker-memory ignored in an AddressSanitizer build");
#else
    if (cfg->max_worker_memory == 0) return;
    /* A lent connection's TLS state is mapped in the worker but is no
     * call's: it comes on top of the limit. */
    rlim_t cap = cfg->max_worker_memory + shared < shared ? RLIM_INFINITY : cfg->max_worker_memory + shared;
    struct rlimit lim = {cap, cap};
    if (setrlimit(RLIMIT_AS, &lim) != 0)
        server_log(cfg, LOG_LEVEL_ERROR, "cannot limit worker memory: %s", strerror(errno));
#endif
}

void worker_main(const server_config *cfg, const module_list *mods, const token_table *tokens, int ctl_fd,
                 worker_slot *slot)
{
    registry reg;
    err_t err;
    /* BLAS reads its thread count when the modules load it: set it first,
     * so no thread beyond the configured ones ever starts. */
    char threads[16];
    snprintf(threads, sizeof threads, "%d", cfg->blas_threads);
    setenv("OPENBLAS_NUM_THREADS", threads, 1);
    if (registry_load(&reg, cfg, mods, &err) != 0) {
        server_log(cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        _exit(1);
    }
    /* Confined once its modules are loaded (a module may be a link to a
     * library anywhere) and before it takes a connection: BLAS threads the
     * modules started are stopped first and start again confined
     * (worker_sandbox.h). */
    if (sandbox_confine_worker(cfg, &err) != 0) {
        server_log(cfg, LOG_LEVEL_ERROR, "worker not started: %s", err.detail);
        _exit(1);
    }
    limit_memory(cfg, cfg->tls_cert[0] ? connio_state_size() : 0); /* a lent TLS state comes on top */
    /* This worker's routines in the shared counters (STATUS reads them). */
    for (size_t i = 0; i < reg.count; i++)
        reg.items[i].stat_index = stats_register(server_stats, &reg.items[i].iface, slot->generation);
    session s = {0};
    s.cfg = cfg;
    s.reg = &reg;
    s.tokens = tokens;
    s.slot = slot;
    dispatcher_fd = ctl_fd;
    s.wake_dispatcher = wake_dispatcher;
    if (msg_conn_init(&s.conn, cfg->packet_size, &err) != 0) {
        server_log(cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        _exit(1);
    }
    for (;;) {
        ctl_msg m;
        int fds[2];
        struct pollfd ctl = {ctl_fd, POLLIN, 0};
        wait_events(&s, &ctl, 1);
        ssize_t k = sock_recv_fds(ctl_fd, fds, 2, &m, sizeof m);
        if (k <= 0) _exit(0);
        /* On TLS the connection's state comes with it, mapped only while
         * this worker holds the connection. */
        tls_stream_state *tls = fds[1] >= 0 ? connio_state_map(fds[1]) : NULL;
        if (fds[1] >= 0) close(fds[1]);
        if (m.kind != CTL_ASSIGN || fds[0] < 0 || m.conn_id < 0 || m.conn_id > cfg->max_connections ||
            (fds[1] >= 0 && tls == NULL)) {
            if (fds[0] >= 0) close(fds[0]);
            connio_state_unmap(tls);
            continue;
        }
        s.conn_id = m.conn_id;
        s.next_began = m.arrived;
        memcpy(s.identity, m.identity, sizeof s.identity);
        s.identity[TOKEN_NAME_MAX] = '\0';
        set_account(&s, fds[0]);
        serve_connection(&s, ctl_fd, fds[0], tls);
        connio_state_unmap(tls);
    }
}
