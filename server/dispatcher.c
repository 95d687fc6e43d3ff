/* dispatcher.c -- the server's main process: accepts connections, keeps
 * idle ones, lends them to pre-forked workers, and reports crashes,
 * deadlines and keepalives from the workers' shared slots. */
#define _GNU_SOURCE
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sock.h"

enum conn_state { CONN_FREE = 0, CONN_IDLE, CONN_QUEUED, CONN_HELD };
enum worker_state { WORKER_DEAD = 0, WORKER_FREE, WORKER_HOLDING };
enum event_kind { EV_LISTEN = 1, EV_SIGNAL, EV_CONN, EV_WORKER };

typedef struct conn {
    int fd;
    int state;
    int worker; /* index when HELD */
} conn;

typedef struct worker {
    pid_t pid;
    int ctl;
    int state;
    int conn;          /* index when HOLDING */
    int release_sent;
    int kill_reason;   /* 0, or NUMRPC_ETIMEDOUT when the dispatcher killed it */
} worker;

typedef struct dispatcher {
    const server_config *cfg;
    int epfd, listen_fd, sig_fd;
    conn *conns;
    int nconns_cap, nconns_open;
    worker *workers;
    worker_slot *slots; /* shared memory, one per worker index */
    int nworkers_cap;
    int *queue; /* conn indices waiting for a worker */
    int qhead, qlen;
    int stopping;
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
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (pid == 0) {
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
        worker_main(d->cfg, 3, slot);
    }
    close(sv[1]);
    worker *w = &d->workers[index];
    memset(w, 0, sizeof *w);
    w->pid = pid;
    w->ctl = sv[0];
    w->state = WORKER_FREE;
    w->conn = -1;
    watch(d, w->ctl, EV_WORKER, index);
    return 0;
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
    close(d->conns[c].fd);
    d->conns[c].state = CONN_FREE;
    d->conns[c].fd = -1;
    d->nconns_open--;
}

static void enqueue(dispatcher *d, int c)
{
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
    return 0;
}

/* Gives queued connections to workers: a free one, a new one, or one that
 * holds an idle connection and is asked to give it back. */
static void schedule(dispatcher *d)
{
    while (d->qlen > 0 && !d->stopping) {
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
            for (int i = 0; i < d->nworkers_cap; i++) {
                worker *h = &d->workers[i];
                if (h->state == WORKER_HOLDING && !h->release_sent &&
                    atomic_load(&d->slots[i].state) == SLOT_IDLE) {
                    ctl_msg m = {CTL_RELEASE, h->conn};
                    sock_send_fd(h->ctl, -1, &m, sizeof m);
                    h->release_sent = 1;
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

static void accept_all(dispatcher *d)
{
    for (;;) {
        int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) return;
        if (d->nconns_open >= d->cfg->max_connections) {
            wire_writer *w = &d->notice;
            err_t err;
            w->fd = fd;
            session_reply_error(w, 0, NUMRPC_EBUSY, "server at its connection limit", &err);
            close(fd);
            continue;
        }
        int c = 0;
        while (d->conns[c].state != CONN_FREE) c++;
        sock_tune(fd);
        d->conns[c].fd = fd;
        d->nconns_open++;
        enqueue(d, c);
    }
}

/* ---- Worker messages and exits ---- */

static void worker_message(dispatcher *d, int w)
{
    ctl_msg m;
    int fd;
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
    if (m.kind == CTL_CLOSED) {
        d->conns[c].state = CONN_QUEUED; /* not in epoll */
        close_conn(d, c);
    } else {
        d->conns[c].state = CONN_IDLE;
        watch(d, d->conns[c].fd, EV_CONN, c);
    }
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
    if (c >= 0) {
        /* A call that died while computing gets its error; the connection
         * stays usable only if no bytes of a later request were lost. */
        if ((state == SLOT_COMPUTING || state == SLOT_KEEPALIVE) && !slot->pipelined) {
            char how[64], detail[256];
            int code = wk->kill_reason ? wk->kill_reason : NUMRPC_ECRASHED;
            describe_exit(status, how, sizeof how);
            if (code == NUMRPC_ETIMEDOUT)
                snprintf(detail, sizeof detail, "%s exceeded its deadline and was stopped", slot->routine);
            else
                snprintf(detail, sizeof detail, "%s crashed: %s", slot->routine, how);
            if (!d->cfg->quiet) fprintf(stderr, "numrpc-server: %s\n", detail);
            err_t err;
            d->notice.fd = d->conns[c].fd;
            if (session_reply_error(&d->notice, slot->call_id, code, detail, &err) == 0) {
                d->conns[c].state = CONN_IDLE;
                watch(d, d->conns[c].fd, EV_CONN, c);
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
    if (!d->stopping && count_workers(d) < d->cfg->min_workers) spawn_worker(d, w);
    schedule(d);
}

static void reap(dispatcher *d)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int i = 0; i < d->nworkers_cap; i++)
            if (d->workers[i].pid == pid && d->workers[i].state != WORKER_DEAD) worker_exited(d, i, status);
    }
}

/* Keepalives for long computations and deadlines, from the shared slots. */
static void tick(dispatcher *d)
{
    double now = sock_now();
    for (int i = 0; i < d->nworkers_cap; i++) {
        worker *w = &d->workers[i];
        worker_slot *slot = &d->slots[i];
        if (w->state != WORKER_HOLDING || atomic_load(&slot->state) != SLOT_COMPUTING) continue;
        if (slot->deadline > 0 && now > slot->deadline && !w->kill_reason) {
            w->kill_reason = NUMRPC_ETIMEDOUT;
            kill(w->pid, SIGKILL);
            continue;
        }
        if (now - slot->last_keepalive < d->cfg->keepalive_ms / 1000.0) continue;
        int expected = SLOT_COMPUTING;
        if (!atomic_compare_exchange_strong(&slot->state, &expected, SLOT_KEEPALIVE)) continue;
        err_t err;
        wire_send_empty(d->conns[w->conn].fd, PROTO_KEEPALIVE, slot->call_id, &err);
        slot->last_keepalive = now;
        atomic_store(&slot->state, SLOT_COMPUTING);
    }
}

static int handle_signals(dispatcher *d)
{
    struct signalfd_siginfo si;
    while (read(d->sig_fd, &si, sizeof si) == sizeof si) {
        if (si.ssi_signo == SIGCHLD) reap(d);
        else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) return 1;
    }
    return 0;
}

static void shutdown_workers(dispatcher *d)
{
    d->stopping = 1;
    for (int i = 0; i < d->nworkers_cap; i++)
        if (d->workers[i].state != WORKER_DEAD) kill(d->workers[i].pid, SIGTERM);
    for (int i = 0; i < d->nworkers_cap; i++)
        if (d->workers[i].state != WORKER_DEAD) waitpid(d->workers[i].pid, NULL, 0);
}

int dispatcher_run(const server_config *cfg, int listen_fd, err_t *err)
{
    dispatcher d = {0};
    d.cfg = cfg;
    d.listen_fd = listen_fd;
    d.nconns_cap = cfg->max_connections + 1;
    d.nworkers_cap = cfg->max_workers;
    d.conns = calloc((size_t)d.nconns_cap, sizeof *d.conns);
    d.queue = calloc((size_t)d.nconns_cap, sizeof *d.queue);
    d.workers = calloc((size_t)d.nworkers_cap, sizeof *d.workers);
    d.slots = mmap(NULL, (size_t)d.nworkers_cap * sizeof *d.slots, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (!d.conns || !d.queue || !d.workers || d.slots == MAP_FAILED ||
        wire_writer_init(&d.notice, -1, 0, err) != 0)
        return err_set(err, NUMRPC_ENOMEM, "dispatcher tables");
    for (int i = 0; i < d.nworkers_cap; i++) d.workers[i].conn = -1;

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
    for (int i = 0; i < cfg->min_workers && i < d.nworkers_cap; i++) spawn_worker(&d, i);

    /* Keepalives and deadlines are checked at least this often. */
    int tick_ms = cfg->keepalive_ms / 2 < 200 ? cfg->keepalive_ms / 2 : 200;
    double next_tick = 0;
    for (;;) {
        struct epoll_event evs[64];
        int n = epoll_wait(d.epfd, evs, 64, tick_ms);
        int stop = 0;
        for (int i = 0; i < n; i++) {
            int kind = (int)(evs[i].data.u64 >> 32), index = (int)(uint32_t)evs[i].data.u64;
            if (kind == EV_LISTEN) accept_all(&d);
            else if (kind == EV_SIGNAL) stop |= handle_signals(&d);
            else if (kind == EV_WORKER) worker_message(&d, index);
            else if (kind == EV_CONN && d.conns[index].state == CONN_IDLE) {
                unwatch(&d, d.conns[index].fd);
                enqueue(&d, index);
            }
        }
        schedule(&d);
        if (sock_now() >= next_tick) {
            tick(&d);
            next_tick = sock_now() + tick_ms / 1000.0;
        }
        if (stop) break;
    }
    shutdown_workers(&d);
    for (int c = 0; c < d.nconns_cap; c++)
        if (d.conns[c].state != CONN_FREE) close(d.conns[c].fd);
    wire_writer_free(&d.notice);
    munmap(d.slots, (size_t)d.nworkers_cap * sizeof *d.slots);
    free(d.conns);
    free(d.queue);
    free(d.workers);
    close(d.epfd);
    close(d.sig_fd);
    return 0;
}
