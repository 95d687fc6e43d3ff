/* dispatcher.c -- the server's main process: accepts connections, keeps
 * idle ones, lends them to pre-forked workers, and reports crashes,
 * deadlines and keepalives from the workers' shared slots. */
#define _GNU_SOURCE
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "metajoin.h"
#include "sock.h"

enum conn_state { CONN_FREE = 0, CONN_IDLE, CONN_QUEUED, CONN_HELD };
enum worker_state { WORKER_DEAD = 0, WORKER_FREE, WORKER_HOLDING };
enum event_kind { EV_LISTEN = 1, EV_SIGNAL, EV_CONN, EV_WORKER, EV_ADMIN, EV_LINGER };

/* Refused connections stay open until the peer has read the refusal and
 * closed (or a few seconds pass): closing at once would reset the
 * connection under the client's first request and lose the reply. */
#define LINGER_MAX 64
#define LINGER_SECONDS 3.0

typedef struct conn {
    int fd;
    int state;
    int worker;   /* index when HELD */
    double since; /* monotonic seconds: idle since (when IDLE) */
    uint64_t calls;      /* calls completed on it (as of its last loan), and
                            control messages the dispatcher answered on it */
    uint64_t calls_base; /* its worker's slot->calls when lent            */
    int fresh;           /* new, waiting for its first bytes: counts as queued */
    control_state ctl;   /* a STATUS or ADMIN being read; admin challenge */
} conn;

typedef struct worker {
    pid_t pid;
    int ctl;
    int state;
    int conn;          /* index when HOLDING */
    int release_sent;
    int kill_reason;   /* 0, or NUMRPC_ETIMEDOUT / ECANCELLED when the dispatcher killed it */
    unsigned generation; /* of the configuration and modules it loaded */
} worker;

typedef struct dispatcher {
    server_config *cfg;
    int argc;
    char **argv;
    int epfd, listen_fd, sig_fd, admin_fd;
    module_list mods;    /* live registrations; workers inherit them     */
    unsigned generation; /* bumped by every change workers must reload   */
    double drain_until;  /* SIGTERM: monotonic seconds to give up at     */
    conn *conns;
    int nconns_cap, nconns_open;
    worker *workers;
    worker_slot *slots; /* shared memory, one per worker index */
    int nworkers_cap;
    int *queue; /* conn indices waiting for a worker */
    int qhead, qlen;
    int stopping;        /* SIGTERM received: draining                   */
    int linger_fd[LINGER_MAX];
    double linger_since[LINGER_MAX];
    uint64_t restarts;   /* workers that died and were replaced          */
    double started;      /* monotonic seconds at start (uptime)          */
    wire_writer notice; /* writes error replies for crashed calls */
} dispatcher;

static uint64_t ev_data(int kind, int index)
{
    return ((uint64_t)kind << 32) | (uint32_t)index;
}

static void watch(dispatcher *d, int fd, int kind, int index)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = ev_data(kind, index)};
    epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void unwatch(dispatcher *d, int fd)
{
    epoll_ctl(d->epfd, EPOLL_CTL_DEL, fd, NULL);
}

/* ---- Workers ---- */

static int spawn_worker(dispatcher *d, int index)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return -1;
    worker_slot *slot = &d->slots[index];
    memset(slot, 0, sizeof *slot);
    atomic_store(&slot->draining, d->stopping);
    slot->stat_index = -1;
    slot->generation = d->generation;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (pid == 0) {
        server_child_dies_with(parent); /* a SIGKILLed server leaves nothing running */
        /* Keep only stdio and the control socket: the worker must not hold
         * other connections open. */
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_IGN);
        if (sv[1] != 3) {
            dup2(sv[1], 3);
        }
        close_range(4, ~0u, 0);
        worker_main(d->cfg, &d->mods, 3, slot);
    }
    close(sv[1]);
    worker *w = &d->workers[index];
    memset(w, 0, sizeof *w);
    w->pid = pid;
    w->ctl = sv[0];
    w->state = WORKER_FREE;
    w->conn = -1;
    w->generation = d->generation;
    watch(d, w->ctl, EV_WORKER, index);
    return 0;
}

/* A free worker of an older generation leaves: closing its control socket
 * makes it exit.  Its slot may be reused at once. */
static void retire_worker(dispatcher *d, int index)
{
    worker *w = &d->workers[index];
    unwatch(d, w->ctl);
    close(w->ctl);
    memset(w, 0, sizeof *w);
    w->state = WORKER_DEAD;
    w->conn = -1;
}

static void ask_release(dispatcher *d, int index)
{
    worker *h = &d->workers[index];
    if (h->state != WORKER_HOLDING || h->release_sent) return;
    ctl_msg m = {CTL_RELEASE, h->conn};
    sock_send_fd(h->ctl, -1, &m, sizeof m);
    h->release_sent = 1;
}

static int count_workers(const dispatcher *d)
{
    int n = 0;
    for (int i = 0; i < d->nworkers_cap; i++) n += d->workers[i].state != WORKER_DEAD;
    return n;
}

/* ---- Connections ---- */

static void close_conn(dispatcher *d, int c)
{
    if (d->conns[c].state == CONN_IDLE) unwatch(d, d->conns[c].fd);
    control_forget(&d->conns[c].ctl);
    close(d->conns[c].fd);
    d->conns[c].state = CONN_FREE;
    d->conns[c].fd = -1;
    d->nconns_open--;
}

/* Answers whatever the peer sent (or will send) first with an error, then
 * closes.  The call id comes from the first packet's header if it is there;
 * a client reads a refusal of its HELLO whatever its id.  The request bytes
 * are read away before close so that the reply is not lost to a reset. */
static void refuse_fd(dispatcher *d, int fd, int code, const char *detail)
{
    uint8_t hdr[PROTO_HEADER_SIZE];
    uint32_t call_id = 0;
    if (recv(fd, hdr, sizeof hdr, MSG_PEEK | MSG_DONTWAIT) == (ssize_t)sizeof hdr)
        call_id = (uint32_t)hdr[4] << 24 | (uint32_t)hdr[5] << 16 | (uint32_t)hdr[6] << 8 | hdr[7];
    err_t err;
    sock_set_timeouts(fd, 200, 0);
    wire_writer_attach(&d->notice, transport_tcp(fd));
    session_reply_error(&d->notice, call_id, code, detail, &err);
    shutdown(fd, SHUT_WR);
    for (int i = 0; i < LINGER_MAX; i++) {
        if (d->linger_fd[i] >= 0) continue;
        d->linger_fd[i] = fd;
        d->linger_since[i] = sock_now();
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = ev_data(EV_LINGER, i)};
        epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev);
        return;
    }
    close(fd);
}

/* A refused peer sent more (drop it) or closed (so do we). */
static void linger_event(dispatcher *d, int i, int force)
{
    int fd = d->linger_fd[i];
    if (fd < 0) return;
    char sink[4096];
    ssize_t k = 0;
    while (!force && (k = recv(fd, sink, sizeof sink, MSG_DONTWAIT)) > 0) {
    }
    if (!force && k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    unwatch(d, fd);
    close(fd);
    d->linger_fd[i] = -1;
}

static void refuse_conn(dispatcher *d, int c, int code, const char *detail)
{
    if (d->conns[c].state == CONN_IDLE) unwatch(d, d->conns[c].fd);
    control_forget(&d->conns[c].ctl);
    refuse_fd(d, d->conns[c].fd, code, detail);
    d->conns[c].state = CONN_FREE;
    d->conns[c].fd = -1;
    d->nconns_open--;
}

static int readable(int fd)
{
    int n = 0;
    return ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

static void make_idle(dispatcher *d, int c, double since)
{
    d->conns[c].state = CONN_IDLE;
    d->conns[c].since = since;
    watch(d, d->conns[c].fd, EV_CONN, c);
}

static void enqueue(dispatcher *d, int c)
{
    d->conns[c].fresh = 0;
    d->queue[(d->qhead + d->qlen) % d->nconns_cap] = c;
    d->qlen++;
    d->conns[c].state = CONN_QUEUED;
}

static int assign(dispatcher *d, int w, int c)
{
    ctl_msg m = {CTL_ASSIGN, c};
    if (sock_send_fd(d->workers[w].ctl, d->conns[c].fd, &m, sizeof m) != 0) return -1;
    d->workers[w].state = WORKER_HOLDING;
    d->workers[w].conn = c;
    d->workers[w].release_sent = 0;
    d->conns[c].state = CONN_HELD;
    d->conns[c].worker = w;
    d->conns[c].calls_base = atomic_load(&d->slots[w].calls);
    return 0;
}

/* Gives queued connections to workers: a free one, a new one, or one that
 * holds an idle connection and is asked to give it back.  While draining,
 * no connection is taken back: each one's call finishes first. */
static void schedule(dispatcher *d)
{
    while (d->qlen > 0) {
        int w = -1, spare = -1;
        for (int i = 0; i < d->nworkers_cap; i++) {
            if (d->workers[i].state == WORKER_FREE) {
                w = i;
                break;
            }
            if (d->workers[i].state == WORKER_DEAD && spare < 0) spare = i;
        }
        if (w < 0 && spare >= 0 && spare < d->cfg->max_workers && spawn_worker(d, spare) == 0)
            w = spare;
        if (w < 0) {
            for (int i = 0; i < d->nworkers_cap && !d->stopping; i++) {
                worker *h = &d->workers[i];
                if (h->state == WORKER_HOLDING && !h->release_sent &&
                    atomic_load(&d->slots[i].state) == SLOT_IDLE) {
                    ask_release(d, i);
                    break;
                }
            }
            return;
        }
        int c = d->queue[d->qhead];
        d->qhead = (d->qhead + 1) % d->nconns_cap;
        d->qlen--;
        if (assign(d, w, c) != 0) close_conn(d, c);
    }
}

static void log_line(const dispatcher *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_line(const dispatcher *d, const char *fmt, ...)
{
    if (!server_log_enabled(d->cfg, LOG_LEVEL_NOTICE)) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    server_log(d->cfg, LOG_LEVEL_NOTICE, "%s", line);
}

/* New connections still waiting for their first bytes. */
static int count_fresh(const dispatcher *d)
{
    int n = 0;
    for (int c = 0; c < d->nconns_cap; c++) n += d->conns[c].state == CONN_IDLE && d->conns[c].fresh;
    return n;
}

static void route(dispatcher *d, int c);

static void accept_all(dispatcher *d)
{
    for (;;) {
        int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) return;
        char detail[160];
        if (d->stopping) {
            refuse_fd(d, fd, NUMRPC_EBUSY, "server shutting down");
            continue;
        }
        if (d->nconns_open >= d->cfg->max_connections) {
            snprintf(detail, sizeof detail, "server at its connection limit (%d connections)",
                     d->cfg->max_connections);
            refuse_fd(d, fd, NUMRPC_EBUSY, detail);
            log_line(d, "refused a connection: %s", detail);
            continue;
        }
        int waiting = d->cfg->max_queue > 0 ? d->qlen + count_fresh(d) : 0;
        if (waiting >= d->cfg->max_queue && d->cfg->max_queue > 0) {
            schedule(d);
            waiting = d->qlen + count_fresh(d);
        }
        if (d->cfg->max_queue > 0 && waiting >= d->cfg->max_queue) {
            snprintf(detail, sizeof detail,
                     "server busy: %d connections already wait for a worker (limit %d, %d workers)",
                     waiting, d->cfg->max_queue, d->cfg->max_workers);
            refuse_fd(d, fd, NUMRPC_EBUSY, detail);
            log_line(d, "refused a connection: %s", detail);
            continue;
        }
        int c = 0;
        while (d->conns[c].state != CONN_FREE) c++;
        sock_tune(fd);
        d->conns[c].fd = fd;
        d->conns[c].since = sock_now();
        d->conns[c].calls = 0;
        memset(&d->conns[c].ctl, 0, sizeof d->conns[c].ctl);
        d->nconns_open++;
        /* Its first message decides: STATUS and ADMIN are answered here,
         * anything else waits for a worker. */
        d->conns[c].state = CONN_QUEUED; /* not in epoll */
        d->conns[c].fresh = 1;
        if (readable(fd)) route(d, c);
        else make_idle(d, c, d->conns[c].since);
    }
}

/* ---- Worker messages and exits ---- */

/* A connection came back from a worker (or its call was answered by the
 * dispatcher): it waits in epoll, or is turned away while draining. */
static void conn_back(dispatcher *d, int c, double since)
{
    if (!d->stopping) {
        make_idle(d, c, since);
        return;
    }
    if (d->conns[c].calls == 0) { /* accepted before the signal; its call is due */
        make_idle(d, c, since);
        return;
    }
    d->conns[c].state = CONN_QUEUED; /* not in epoll */
    if (readable(d->conns[c].fd)) refuse_conn(d, c, NUMRPC_EBUSY, "server shutting down");
    else close_conn(d, c);
}

static void worker_message(dispatcher *d, int w)
{
    ctl_msg m;
    int fd;
    /* The event may be stale: a SIGCHLD earlier in the same batch replaced
     * the worker of this index, whose new socket has nothing to read yet. */
    struct pollfd pending = {d->workers[w].ctl, POLLIN, 0};
    if (d->workers[w].state == WORKER_DEAD || poll(&pending, 1, 0) <= 0) return;
    ssize_t k = sock_recv_fd(d->workers[w].ctl, &fd, &m, sizeof m);
    if (fd >= 0) close(fd);
    if (k <= 0) {
        unwatch(d, d->workers[w].ctl); /* it is exiting; SIGCHLD follows */
        return;
    }
    int c = d->workers[w].conn;
    if (c < 0 || c != m.conn_id) return;
    d->workers[w].state = WORKER_FREE;
    d->workers[w].conn = -1;
    d->conns[c].calls += atomic_load(&d->slots[w].calls) - d->conns[c].calls_base;
    if (m.kind == CTL_CLOSED) {
        d->conns[c].state = CONN_QUEUED; /* not in epoll */
        close_conn(d, c);
    } else {
        conn_back(d, c, d->slots[w].last_active);
    }
    if (d->workers[w].generation != d->generation) retire_worker(d, w);
    schedule(d);
}

static void describe_exit(int status, char *buf, size_t len)
{
    if (WIFSIGNALED(status)) {
        const char *abbrev = sigabbrev_np(WTERMSIG(status));
        snprintf(buf, len, "SIG%s", abbrev ? abbrev : "?");
    } else {
        snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
    }
}

static void worker_exited(dispatcher *d, int w, int status)
{
    worker *wk = &d->workers[w];
    worker_slot *slot = &d->slots[w];
    int state = atomic_load(&slot->state);
    int c = wk->conn;
    unwatch(d, wk->ctl);
    close(wk->ctl);
    if (!d->stopping || c >= 0) d->restarts++;
    if (c >= 0) {
        /* A call that died while computing gets its error; the connection
         * stays usable only if no bytes of a later request were lost. */
        if ((state == SLOT_COMPUTING || state == SLOT_KEEPALIVE) && !slot->pipelined) {
            char how[64], detail[320];
            int code = wk->kill_reason ? wk->kill_reason : NUMRPC_ECRASHED;
            describe_exit(status, how, sizeof how);
            if (code == NUMRPC_ETIMEDOUT && slot->limit_deadline)
                snprintf(detail, sizeof detail, "%s ran past this server's limit of %d s per call and was stopped",
                         slot->routine, d->cfg->max_call_seconds);
            else if (code == NUMRPC_ETIMEDOUT)
                snprintf(detail, sizeof detail, "%s exceeded its deadline and was stopped", slot->routine);
            else if (code == NUMRPC_ECANCELLED)
                snprintf(detail, sizeof detail, "%s was cancelled by the client and stopped", slot->routine);
            else if (d->cfg->max_worker_memory && WIFSIGNALED(status) &&
                     (WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGABRT || WTERMSIG(status) == SIGBUS))
                snprintf(detail, sizeof detail,
                         "%s crashed: %s (a worker may use %llu MiB of memory on this server; the routine may have run out)",
                         slot->routine, how, (unsigned long long)(d->cfg->max_worker_memory >> 20));
            else
                snprintf(detail, sizeof detail, "%s crashed: %s", slot->routine, how);
            log_line(d, "%s", detail);
            /* Counted before the caller hears of it (a STATUS right after
             * the reply sees the call). */
            double seconds = sock_now() - slot->started;
            stats_record(server_stats, slot->stat_index, 1, 0, 0, seconds);
            server_log_call(d->cfg, slot->routine, 0, 0, seconds, code, detail);
            err_t err;
            wire_writer_attach(&d->notice, transport_tcp(d->conns[c].fd));
            if (session_reply_error(&d->notice, slot->call_id, code, detail, &err) == 0) {
                conn_back(d, c, sock_now());
            } else {
                d->conns[c].state = CONN_QUEUED;
                close_conn(d, c);
            }
        } else {
            d->conns[c].state = CONN_QUEUED;
            close_conn(d, c);
        }
    }
    memset(wk, 0, sizeof *wk);
    wk->state = WORKER_DEAD;
    wk->conn = -1;
    atomic_store(&slot->state, SLOT_IDLE); /* calls in flight count the busy slots */
    if (!d->stopping && count_workers(d) < d->cfg->min_workers) spawn_worker(d, w);
    schedule(d);
}

static void reap(dispatcher *d)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (metajoin_is_helper(pid)) {
            char how[64];
            describe_exit(status, how, sizeof how);
            log_line(d, "the process reporting to the metaserver ended (%s): this server is no longer listed", how);
        }
        for (int i = 0; i < d->nworkers_cap; i++)
            if (d->workers[i].pid == pid && d->workers[i].state != WORKER_DEAD) worker_exited(d, i, status);
    }
}

/* Keepalives for long computations, deadlines and idle connections, from
 * the shared slots. */
static void tick(dispatcher *d)
{
    double now = sock_now();
    double idle = d->cfg->idle_timeout_ms / 1000.0;
    for (int i = 0; i < d->nworkers_cap; i++) {
        worker *w = &d->workers[i];
        worker_slot *slot = &d->slots[i];
        if (w->state != WORKER_HOLDING) continue;
        int state = atomic_load(&slot->state);
        if (state == SLOT_IDLE && idle > 0 && now - slot->last_active > idle) ask_release(d, i);
        if (state == SLOT_IDLE && w->generation != d->generation) ask_release(d, i);
        if (state != SLOT_COMPUTING) continue;
        if (slot->deadline > 0 && now > slot->deadline && !w->kill_reason) {
            w->kill_reason = NUMRPC_ETIMEDOUT;
            kill(w->pid, SIGKILL);
            continue;
        }
        if (!w->kill_reason && cancel_poll(d->conns[w->conn].fd, slot)) { /* cancel.c */
            w->kill_reason = NUMRPC_ECANCELLED;
            kill(w->pid, SIGKILL);
            continue;
        }
        if (now - slot->last_keepalive < d->cfg->keepalive_ms / 1000.0) continue;
        int expected = SLOT_COMPUTING;
        if (!atomic_compare_exchange_strong(&slot->state, &expected, SLOT_KEEPALIVE)) continue;
        err_t err;
        wire_send_empty(&(transport){&transport_tcp_ops, d->conns[w->conn].fd, NULL}, PROTO_KEEPALIVE, slot->call_id, &err);
        slot->last_keepalive = now;
        atomic_store(&slot->state, SLOT_COMPUTING);
    }
    for (int i = 0; i < LINGER_MAX; i++)
        if (d->linger_fd[i] >= 0 && now - d->linger_since[i] > LINGER_SECONDS) linger_event(d, i, 1);
    if (idle > 0) {
        for (int c = 0; c < d->nconns_cap; c++) {
            if (d->conns[c].state != CONN_IDLE || now - d->conns[c].since <= idle) continue;
            log_line(d, "closing connection %d: idle for %.0f s (--idle-timeout)", c, now - d->conns[c].since);
            close_conn(d, c);
        }
    }
}

/* New workers load the current modules and configuration; old ones leave
 * once they hold no connection (an idle holder is asked to give it back,
 * a busy one after its call). */
static void roll_workers(dispatcher *d)
{
    d->generation++;
    for (int i = 0; i < d->nworkers_cap; i++) {
        if (d->workers[i].state == WORKER_FREE) retire_worker(d, i);
        else if (d->workers[i].state == WORKER_HOLDING) ask_release(d, i);
    }
    for (int i = 0; i < d->nworkers_cap && count_workers(d) < d->cfg->min_workers; i++)
        if (d->workers[i].state == WORKER_DEAD) spawn_worker(d, i);
}

/* SIGTERM: calls in flight and queued finish; connections with nothing
 * to do are closed; whatever arrives later is refused. */
static void start_drain(dispatcher *d)
{
    if (d->stopping) return;
    /* Connections the kernel completed before the signal was read are
     * accepted: their clients saw connect() succeed before the signal. */
    accept_all(d);
    d->stopping = 1;
    d->drain_until = sock_now() + d->cfg->drain_timeout_ms / 1000.0;
    log_line(d, "SIGTERM: finishing calls in flight, refusing new ones");
    for (int i = 0; i < d->nworkers_cap; i++) atomic_store(&d->slots[i].draining, 1);
    for (int c = 0; c < d->nconns_cap; c++) {
        if (d->conns[c].state != CONN_IDLE) continue;
        if (readable(d->conns[c].fd)) {
            unwatch(d, d->conns[c].fd);
            d->conns[c].state = CONN_QUEUED; /* not in epoll */
            route(d, c);
        } else if (d->conns[c].calls > 0) {
            close_conn(d, c);
        }
    }
    /* Connections that have made calls and wait idle in a worker come back
     * (and are closed); new ones mid-handshake keep their worker. */
    for (int i = 0; i < d->nworkers_cap; i++) {
        worker *w = &d->workers[i];
        if (w->state != WORKER_HOLDING || atomic_load(&d->slots[i].state) != SLOT_IDLE) continue;
        const conn *c = &d->conns[w->conn];
        if (c->calls + atomic_load(&d->slots[i].calls) - c->calls_base > 0) ask_release(d, i);
    }
}

/* SIGHUP: the configuration file again, then the command line; what needs
 * a restart (sockets, table sizes) keeps its value. */
static void reload(dispatcher *d)
{
    server_config fresh;
    err_t err;
    int help;
    if (config_build(&fresh, d->argc, d->argv, &help, &err) != 0) {
        fprintf(stderr, "numrpc-server: SIGHUP: configuration not changed: %s\n", err.detail);
        return;
    }
    fresh.port = d->cfg->port;
    memcpy(fresh.bind_addr, d->cfg->bind_addr, sizeof fresh.bind_addr);
    memcpy(fresh.admin_socket, d->cfg->admin_socket, sizeof fresh.admin_socket);
    memcpy(fresh.module_dir, d->cfg->module_dir, sizeof fresh.module_dir);
    fresh.max_connections = d->cfg->max_connections;
    fresh.max_workers = d->cfg->max_workers;
    if (fresh.min_workers > fresh.max_workers) fresh.min_workers = fresh.max_workers;
    *d->cfg = fresh;
    log_line(d, "SIGHUP: configuration reread%s%s; workers restart as they become free",
             d->cfg->config_file[0] ? " from " : "", d->cfg->config_file);
    roll_workers(d);
}

static int handle_signals(dispatcher *d)
{
    struct signalfd_siginfo si;
    while (read(d->sig_fd, &si, sizeof si) == sizeof si) {
        if (si.ssi_signo == SIGCHLD) reap(d);
        else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) start_drain(d);
        else if (si.ssi_signo == SIGHUP) reload(d);
    }
    return 0;
}

/* ---- Live registration (requests on the admin socket) ---- */

static module_entry *find_module(dispatcher *d, const char *name)
{
    for (size_t i = 0; i < d->mods.count; i++)
        if (strcmp(d->mods.items[i].name, name) == 0) return &d->mods.items[i];
    return NULL;
}

/* Loads the module in a short-lived child (never in the dispatcher, which
 * must not start a library's threads) to check it and learn its name. */
static int probe_module(const char *path, char *name, err_t *err)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return err_set(err, NUMRPC_ESERVER, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return err_set(err, NUMRPC_ESERVER, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(p[0]);
        err_t e;
        char buf[IFACE_MAX_NAME + 1 + ERR_DETAIL_MAX + 8];
        int rc = registry_probe(path, name, &e);
        int n = rc == 0 ? snprintf(buf, sizeof buf, "ok %s", name) : snprintf(buf, sizeof buf, "error %s", e.detail);
        if (write(p[1], buf, (size_t)n) < 0) _exit(1);
        _exit(rc == 0 ? 0 : 1);
    }
    close(p[1]);
    char buf[IFACE_MAX_NAME + 1 + ERR_DETAIL_MAX + 8] = {0};
    size_t got = 0;
    ssize_t k;
    while (got < sizeof buf - 1 && (k = read(p[0], buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)k;
    close(p[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (strncmp(buf, "ok ", 3) == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        snprintf(name, IFACE_MAX_NAME + 1, "%.*s", (int)IFACE_MAX_NAME, buf + 3);
        return 0;
    }
    if (strncmp(buf, "error ", 6) == 0) return err_set(err, NUMRPC_EINVAL, "%s", buf + 6);
    char how[64];
    describe_exit(status, how, sizeof how);
    return err_set(err, NUMRPC_EINVAL, "loading %s killed the checking process (%s)", path, how);
}

static int admin_register(dispatcher *d, const char *src, char *reply, size_t len)
{
    err_t err;
    module_entry e = {0};
    if (src[0] != '/') {
        snprintf(reply, len, "error %s: give an absolute path", src);
        return -1;
    }
    if (admin_store_module(src, d->cfg->module_dir, &e, &err) != 0 || probe_module(e.path, e.name, &err) != 0) {
        snprintf(reply, len, "error %s", err.detail);
        return -1;
    }
    module_entry *old = find_module(d, e.name);
    int replaced = old != NULL;
    if (old) {
        *old = e;
    } else {
        module_entry *grown = realloc(d->mods.items, (d->mods.count + 1) * sizeof *grown);
        if (grown == NULL) {
            snprintf(reply, len, "error out of memory");
            return -1;
        }
        d->mods.items = grown;
        d->mods.items[d->mods.count++] = e;
    }
    roll_workers(d);
    snprintf(reply, len, "ok %s module %s (%016llx) from %s", replaced ? "replaced" : "registered", e.name,
             (unsigned long long)e.hash, src);
    return 0;
}

static int admin_unregister(dispatcher *d, const char *name, char *reply, size_t len)
{
    if (name[0] == '\0' || strlen(name) > IFACE_MAX_NAME) {
        snprintf(reply, len, "error unregister wants a module name");
        return -1;
    }
    module_entry *e = find_module(d, name);
    if (e == NULL) {
        module_entry *grown = realloc(d->mods.items, (d->mods.count + 1) * sizeof *grown);
        if (grown == NULL) {
            snprintf(reply, len, "error out of memory");
            return -1;
        }
        d->mods.items = grown;
        e = &d->mods.items[d->mods.count++];
        memset(e, 0, sizeof *e);
        snprintf(e->name, sizeof e->name, "%s", name);
    }
    e->path[0] = '\0';
    e->hash = 0;
    roll_workers(d);
    snprintf(reply, len, "ok unregistered module %s", name);
    return 0;
}

static void admin_list(dispatcher *d, char *reply, size_t len)
{
    size_t used = (size_t)snprintf(reply, len, "ok stub directory %s; %zu live change%s", d->cfg->stubs_dir,
                                   d->mods.count, d->mods.count == 1 ? "" : "s");
    for (size_t i = 0; i < d->mods.count && used < len; i++) {
        const module_entry *e = &d->mods.items[i];
        if (e->path[0])
            used += (size_t)snprintf(reply + used, len - used, "\nregistered %s %016llx %s", e->name,
                                     (unsigned long long)e->hash, e->path);
        else
            used += (size_t)snprintf(reply + used, len - used, "\nunregistered %s", e->name);
    }
}

/* One admin command line (from the local socket, or checked by control.c
 * for a remote administrator): 0 with "ok ..." in reply, or -1. */
static int admin_exec(void *owner, const char *line, char *reply, size_t len)
{
    dispatcher *d = owner;
    if (strncmp(line, "register ", 9) == 0) return admin_register(d, line + 9, reply, len);
    if (strncmp(line, "unregister ", 11) == 0) return admin_unregister(d, line + 11, reply, len);
    if (strcmp(line, "list") == 0) {
        admin_list(d, reply, len);
        return 0;
    }
    snprintf(reply, len, "error unknown admin request \"%.64s\"", line);
    return -1;
}

static void admin_request(dispatcher *d)
{
    int fd = accept4(d->admin_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) return;
    char line[CONFIG_PATH_MAX + 64], reply[8192];
    err_t err;
    if (admin_read_request(fd, line, sizeof line, &err) != 0) {
        log_line(d, "admin: refused: %s", err.detail);
        snprintf(reply, sizeof reply, "error %s", err.detail);
    } else {
        admin_exec(d, line, reply, sizeof reply);
    }
    if (strncmp(line, "list", 4) != 0) log_line(d, "admin: %s", reply);
    size_t n = strlen(reply);
    reply[n++] = '\n';
    ssize_t k = write(fd, reply, n);
    (void)k;
    close(fd);
}

/* --port-file: the chosen port, written when the listening and admin
 * sockets both accept (the file is the readiness signal scripts wait for). */
static int write_port_file(const server_config *cfg, err_t *err)
{
    if (cfg->port_file[0] == '\0') return 0;
    FILE *f = fopen(cfg->port_file, "w");
    if (f == NULL) return err_set(err, NUMRPC_ESERVER, "cannot write %s: %s", cfg->port_file, strerror(errno));
    fprintf(f, "%d\n", cfg->port);
    if (fclose(f) != 0) return err_set(err, NUMRPC_ESERVER, "cannot write %s: %s", cfg->port_file, strerror(errno));
    return 0;
}

/* ---- Messages answered here (control.c) ---- */

static void serve_control(dispatcher *d, int c)
{
    control_ctx ctx = {.cfg = d->cfg, .writer = &d->notice, .admin_exec = admin_exec, .owner = d};
    status_view *v = &ctx.view;
    v->uptime = sock_now() - d->started;
    v->workers = count_workers(d);
    v->max_workers = d->cfg->max_workers;
    v->restarts = d->restarts;
    v->queued = d->qlen + count_fresh(d);
    v->connections = d->nconns_open;
    v->draining = d->stopping;
    v->generation = d->generation;
    v->in_flight = (int)session_calls_in_flight(NULL);
    d->conns[c].calls++;
    if (control_serve(&ctx, d->conns[c].fd, &d->conns[c].ctl) == 0) make_idle(d, c, sock_now());
    else close_conn(d, c);
}

/* A connection in the dispatcher's hands (not in epoll) with something to
 * read: a control message is answered here; anything else waits for a
 * worker, or is refused if it comes after SIGTERM on a connection that
 * already had its calls. */
static void route(dispatcher *d, int c)
{
    switch (control_next(d->conns[c].fd, &d->conns[c].ctl)) {
    case CONTROL_READY: serve_control(d, c); return;
    case CONTROL_PARTIAL: make_idle(d, c, d->conns[c].since); return;
    case CONTROL_BROKEN: close_conn(d, c); return;
    case CONTROL_BAD:
        refuse_conn(d, c, NUMRPC_EPROTO, "malformed control message (STATUS and ADMIN fit one packet of 4 KiB)");
        return;
    default: break;
    }
    if (d->stopping && d->conns[c].calls > 0) refuse_conn(d, c, NUMRPC_EBUSY, "server shutting down");
    else enqueue(d, c);
}

static void setup_admin(dispatcher *d)
{
    d->admin_fd = -1;
    server_config *cfg = d->cfg;
    int local = strcmp(cfg->admin_socket, "none") != 0;
    char where[CONFIG_PATH_MAX];
    if (local && cfg->admin_socket[0] == '\0') admin_default_socket(cfg->port, cfg->admin_socket, sizeof cfg->admin_socket);
    if (local) snprintf(where, sizeof where, "%s", cfg->admin_socket);
    else admin_default_socket(cfg->port, where, sizeof where); /* remote admin copies modules too */
    if (cfg->module_dir[0] == '\0') {
        int n = snprintf(cfg->module_dir, sizeof cfg->module_dir, "%s.modules", where);
        if (n < 0 || (size_t)n >= sizeof cfg->module_dir) cfg->module_dir[0] = '\0';
    }
    if (cfg->admin_secret_file[0]) { /* a bad secret file is said at start, not at the first request */
        uint8_t secret[4096];
        size_t len;
        err_t e;
        if (control_load_secret(cfg->admin_secret_file, secret, sizeof secret, &len, &e) != 0)
            server_log(cfg, LOG_LEVEL_ERROR, "remote admin will refuse every request: %s", e.detail);
        memset(secret, 0, sizeof secret);
    }
    if (!local) return;
    err_t err;
    d->admin_fd = admin_listen(cfg->admin_socket, &err);
    if (d->admin_fd < 0) {
        fprintf(stderr, "numrpc-server: no admin socket: %s\n", err.detail);
        return;
    }
    watch(d, d->admin_fd, EV_ADMIN, 0);
}

static void shutdown_workers(dispatcher *d)
{
    d->stopping = 1;
    for (int i = 0; i < d->nworkers_cap; i++)
        if (d->workers[i].state != WORKER_DEAD) kill(d->workers[i].pid, SIGTERM);
    for (int i = 0; i < d->nworkers_cap; i++)
        if (d->workers[i].state != WORKER_DEAD) waitpid(d->workers[i].pid, NULL, 0);
}

int dispatcher_run(server_config *cfg, int argc, char **argv, int listen_fd, err_t *err)
{
    dispatcher d = {0};
    d.cfg = cfg;
    d.argc = argc;
    d.argv = argv;
    d.listen_fd = listen_fd;
    d.nconns_cap = cfg->max_connections + 1;
    d.nworkers_cap = cfg->max_workers;
    d.conns = calloc((size_t)d.nconns_cap, sizeof *d.conns);
    d.queue = calloc((size_t)d.nconns_cap, sizeof *d.queue);
    d.workers = calloc((size_t)d.nworkers_cap, sizeof *d.workers);
    d.slots = mmap(NULL, (size_t)d.nworkers_cap * sizeof *d.slots, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    d.started = sock_now();
    server_stats = stats_create();
    if (!d.conns || !d.queue || !d.workers || d.slots == MAP_FAILED || server_stats == NULL ||
        wire_writer_init(&d.notice, -1, 0, err) != 0) {
        free(d.conns);
        free(d.queue);
        free(d.workers);
        if (d.slots != MAP_FAILED) munmap(d.slots, (size_t)d.nworkers_cap * sizeof *d.slots);
        stats_destroy(server_stats);
        server_stats = NULL;
        return err_set(err, NUMRPC_ENOMEM, "dispatcher tables");
    }
    for (int i = 0; i < d.nworkers_cap; i++) d.workers[i].conn = -1;
    session_set_peers(d.slots, d.nworkers_cap);
    for (int i = 0; i < LINGER_MAX; i++) d.linger_fd[i] = -1;

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    d.sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    d.epfd = epoll_create1(EPOLL_CLOEXEC);
    fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
    watch(&d, listen_fd, EV_LISTEN, 0);
    watch(&d, d.sig_fd, EV_SIGNAL, 0);
    setup_admin(&d);
    for (int i = 0; i < cfg->min_workers && i < d.nworkers_cap; i++) spawn_worker(&d, i);
    if (write_port_file(cfg, err) != 0) return -1;

    /* Keepalives and deadlines are checked at least this often. */
    int tick_ms = cfg->keepalive_ms / 2 < 200 ? cfg->keepalive_ms / 2 : 200;
    double next_tick = 0;
    for (;;) {
        struct epoll_event evs[64];
        int n = epoll_wait(d.epfd, evs, 64, tick_ms);
        for (int i = 0; i < n; i++) {
            int kind = (int)(evs[i].data.u64 >> 32), index = (int)(uint32_t)evs[i].data.u64;
            if (kind == EV_LISTEN) accept_all(&d);
            else if (kind == EV_SIGNAL) handle_signals(&d);
            else if (kind == EV_WORKER) worker_message(&d, index);
            else if (kind == EV_ADMIN) admin_request(&d);
            else if (kind == EV_LINGER) linger_event(&d, index, 0);
            else if (kind == EV_CONN && d.conns[index].state == CONN_IDLE) {
                unwatch(&d, d.conns[index].fd);
                d.conns[index].state = CONN_QUEUED; /* not in epoll */
                route(&d, index);
            }
        }
        schedule(&d);
        atomic_store(&server_stats->load_queued, d.qlen); /* for replies (session.c) */
        if (metajoin_active()) /* load changes reach the metaserver (metajoin.c) */
            metajoin_note_load((int)session_calls_in_flight(NULL), d.qlen, d.stopping);
        if (sock_now() >= next_tick) {
            tick(&d);
            next_tick = sock_now() + tick_ms / 1000.0;
        }
        if (d.stopping && (d.nconns_open == 0 || sock_now() > d.drain_until)) break;
    }
    shutdown_workers(&d);
    for (int c = 0; c < d.nconns_cap; c++) {
        if (d.conns[c].state != CONN_FREE) close(d.conns[c].fd);
        control_forget(&d.conns[c].ctl);
    }
    for (int i = 0; i < LINGER_MAX; i++)
        if (d.linger_fd[i] >= 0) close(d.linger_fd[i]);
    if (d.admin_fd >= 0) {
        close(d.admin_fd);
        unlink(cfg->admin_socket);
    }
    wire_writer_free(&d.notice);
    munmap(d.slots, (size_t)d.nworkers_cap * sizeof *d.slots);
    stats_destroy(server_stats);
    server_stats = NULL;
    free(d.mods.items);
    free(d.conns);
    free(d.queue);
    free(d.workers);
    close(d.epfd);
    close(d.sig_fd);
    return 0;
}
