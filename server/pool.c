/* pool.c -- the dispatcher's workers: fork and respawn, lending queued
 * connections, their messages, crash and deadline reports, keepalives. */
#define _GNU_SOURCE
#include "pool.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cancel.h"
#include "connio.h"
#include "handles.h"
#include "log.h"
#include "metajoin.h"
#include "msg_progress.h"
#include "mpi_job.h"
#include "progress.h"
#include "pull.h"
#include "reply.h"
#include "sock.h"
#include "spawner.h"
#include "stats.h"
#include "worker.h"

int pool_spawn(dispatcher *d, int index)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return -1;
    worker_slot *slot = &d->slots[index];
    memset(slot, 0, sizeof *slot);
    atomic_store(&slot->draining, d->stopping);
    slot->stat_index = -1;
    slot->generation = d->generation;
    /* The spawner forks it (spawner.c): the dispatcher holds secrets a
     * worker must never inherit. */
    spawn_order order = {.index = index, .cfg = d->cfg, .mods = &d->mods, .rights = &d->tokens};
    err_t err;
    /* Its channel to the pull broker, which fetches handles for it (pull.h). */
    int pull = pull_broker_channel(&err);
    if (pull < 0 && err.code != NUMRPC_OK) server_log(d->cfg, LOG_LEVEL_ERROR, "%s", err.detail);
    /* Its stdout and stderr: a pipe read here (last_words.h).  Without
     * one it keeps the server's own, as before. */
    last_words words;
    int words_end;
    if (words_open(&words, &words_end, &err) != 0) server_log(d->cfg, LOG_LEVEL_ERROR, "%s", err.detail);
    pid_t pid = spawner_spawn(&order, sv[1], pull, words_end, &err);
    if (pull >= 0) close(pull);
    if (words_end >= 0) close(words_end);
    if (pid < 0) {
        server_log(d->cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        words_close(&words);
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    close(sv[1]);
    worker *w = &d->workers[index];
    memset(w, 0, sizeof *w);
    w->words = words;
    if (w->words.fd >= 0) conn_watch(d, w->words.fd, EV_WORDS, index);
    w->pid = pid;
    w->ctl = sv[0];
    w->state = WORKER_FREE;
    w->conn = -1;
    w->generation = d->generation;
    conn_watch(d, w->ctl, EV_WORKER, index);
    return 0;
}

/* The worker's output pipe is closed (what it held unread is lost). */
static void forget_words(dispatcher *d, worker *w)
{
    if (w->words.fd < 0) return;
    conn_unwatch(d, w->words.fd);
    words_close(&w->words);
}

void pool_words(dispatcher *d, int w)
{
    worker *wk = &d->workers[w];
    /* A stale event (the worker of this index was replaced) reads nothing. */
    if (wk->state == WORKER_DEAD || wk->words.fd < 0) return;
    words_drain(&wk->words, d->cfg, &d->slots[w], wk->pid, 0);
}

/* A free worker of an older generation leaves: closing its control socket
 * makes it exit.  Its slot may be reused at once. */
void pool_retire(dispatcher *d, int index)
{
    worker *w = &d->workers[index];
    conn_unwatch(d, w->ctl);
    close(w->ctl);
    words_drain(&w->words, d->cfg, &d->slots[index], w->pid, 1); /* what it wrote so far */
    forget_words(d, w);
    memset(w, 0, sizeof *w);
    w->state = WORKER_DEAD;
    w->conn = -1;
    w->words.fd = -1;
}

void pool_ask_release(dispatcher *d, int index)
{
    worker *h = &d->workers[index];
    if (h->state != WORKER_HOLDING || h->release_sent) return;
    ctl_msg m = {.kind = CTL_RELEASE, .conn_id = h->conn};
    sock_send_fd(h->ctl, -1, &m, sizeof m);
    h->release_sent = 1;
}

int pool_count(const dispatcher *d)
{
    int n = 0;
    for (int i = 0; i < d->nworkers_cap; i++) n += d->workers[i].state != WORKER_DEAD;
    return n;
}

static int assign(dispatcher *d, int w, int c)
{
    ctl_msg m = {.kind = CTL_ASSIGN, .conn_id = c, .arrived = d->conns[c].request_began};
    /* Before the message: the worker may serve the whole request before
     * this process runs again, and its slot must not look unstarted then. */
    double mark = d->slots[w].last_active;
    const conn_access *who = &d->conns[c].ctl.access; /* the worker learns it with the loan */
    if (who->state == AUTH_PEER_GRANTED) memcpy(m.identity, who->token, sizeof m.identity);
    /* The socket, and on TLS its state's memory: this connection's only. */
    int fds[2] = {d->conns[c].fd, d->conns[c].tls_fd};
    if (sock_send_fds(d->workers[w].ctl, fds, fds[1] >= 0 ? 2 : 1, &m, sizeof m) != 0) return -1;
    d->workers[w].state = WORKER_HOLDING;
    d->workers[w].conn = c;
    d->workers[w].fresh_mark = mark;
    d->workers[w].fresh_since = sock_now();
    d->workers[w].release_sent = 0;
    d->conns[c].state = CONN_HELD;
    d->conns[c].worker = w;
    d->conns[c].calls_base = atomic_load(&d->slots[w].calls);
    d->conns[c].request_began = 0; /* the worker sees the next one come */
    return 0;
}

/* ---- One address's share of the workers reading requests ---- */

/* Whether worker i is taken by a request still arriving on its connection:
 * reading it, or lent it and not yet seen to start. */
static int receiving(dispatcher *d, int i)
{
    worker *h = &d->workers[i];
    if (h->state != WORKER_HOLDING) return 0;
    worker_slot *slot = &d->slots[i];
    int state = atomic_load(&slot->state);
    /* Started: its slot moved.  A worker not seen to start within a second
     * is not counted either (a loaded machine may lend one more, never
     * hold an address's requests back for good). */
    if (h->fresh_since > 0 &&
        (state != SLOT_IDLE || slot->last_active != h->fresh_mark || sock_now() - h->fresh_since > 1.0))
        h->fresh_since = 0;
    return state == SLOT_READING || h->fresh_since > 0;
}

/* How many workers requests from address p are arriving at; with wake, each
 * of them is asked to wake the dispatcher once its request is read. */
static int peer_receiving(dispatcher *d, const peer_key *p, int wake)
{
    int n = 0;
    for (int i = 0; i < d->nworkers_cap; i++) {
        if (!receiving(d, i) || memcmp(&d->conns[d->workers[i].conn].peer, p, sizeof *p) != 0) continue;
        n++;
        if (wake) atomic_store(&d->slots[i].wake_when_read, 1);
    }
    return n;
}

/* The place in the queue of the first connection whose address holds fewer
 * workers with requests arriving than --max-receiving-per-peer, or -1: a
 * sender that sends a first packet and then nothing holds its share of the
 * workers for the request's time, and no more (its other requests wait). */
static int next_eligible(dispatcher *d)
{
    for (int j = 0; j < d->qlen; j++) {
        int c = d->queue[(d->qhead + j) % d->nconns_cap];
        if (peer_receiving(d, &d->conns[c].peer, 0) < d->cfg->max_receiving_per_peer) return j;
        peer_receiving(d, &d->conns[c].peer, 1);
    }
    return -1;
}

/* Takes the j-th queued connection out of the queue (those before it move up). */
static int take_queued(dispatcher *d, int j)
{
    int cap = d->nconns_cap, c = d->queue[(d->qhead + j) % cap];
    for (; j > 0; j--) d->queue[(d->qhead + j) % cap] = d->queue[(d->qhead + j - 1) % cap];
    d->qhead = (d->qhead + 1) % cap;
    d->qlen--;
    return c;
}

int pool_queued_from(const dispatcher *d, const peer_key *p)
{
    int n = 0;
    for (int j = 0; j < d->qlen; j++)
        n += memcmp(&d->conns[d->queue[(d->qhead + j) % d->nconns_cap]].peer, p, sizeof *p) == 0;
    return n;
}

/* Gives queued connections to workers: a free one, a new one, or one that
 * holds an idle connection and is asked to give it back; an address's
 * requests wait while it has its share of workers reading (next_eligible).
 * While draining, no connection is taken back: each one's call finishes
 * first. */
void pool_schedule(dispatcher *d)
{
    int j;
    while (d->qlen > 0 && (j = next_eligible(d)) >= 0) {
        int w = -1, spare = -1;
        for (int i = 0; i < d->nworkers_cap; i++) {
            if (d->workers[i].state == WORKER_FREE) {
                w = i;
                break;
            }
            if (d->workers[i].state == WORKER_DEAD && spare < 0) spare = i;
        }
        if (w < 0 && spare >= 0 && spare < d->cfg->max_workers && pool_spawn(d, spare) == 0)
            w = spare;
        if (w < 0) {
            for (int i = 0; i < d->nworkers_cap && !d->stopping; i++) {
                worker *h = &d->workers[i];
                if (h->state == WORKER_HOLDING && !h->release_sent &&
                    atomic_load(&d->slots[i].state) == SLOT_IDLE) {
                    pool_ask_release(d, i);
                    break;
                }
            }
            return;
        }
        int c = take_queued(d, j);
        if (assign(d, w, c) != 0) conn_close(d, c);
    }
}

void pool_message(dispatcher *d, int w)
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
        conn_unwatch(d, d->workers[w].ctl); /* it is exiting; SIGCHLD follows */
        return;
    }
    if (m.kind == CTL_DEADLINE) return; /* woke the loop: pool_next_deadline */
    int c = d->workers[w].conn;
    if (c < 0 || c != m.conn_id) return;
    d->workers[w].state = WORKER_FREE;
    d->workers[w].conn = -1;
    d->conns[c].calls += atomic_load(&d->slots[w].calls) - d->conns[c].calls_base;
    if (m.kind == CTL_CLOSED) {
        d->conns[c].state = CONN_QUEUED; /* not in epoll */
        conn_close(d, c);
    } else {
        conn_back(d, c, d->slots[w].last_active);
    }
    if (d->workers[w].generation != d->generation) pool_retire(d, w);
    pool_schedule(d);
}

/* Room the client's label takes in front of a detail ("host:port: "). */
#define WORDS_LABEL_ROOM 96

/* "; its last words: \"...\"" after a dead call's detail: the last lines
 * its routine wrote, as many as an error detail holds with the client's
 * label (ERR_DETAIL_MAX), escaped: hostile text for another program. */
static void append_words(const worker *wk, const worker_slot *slot, char *detail, size_t len)
{
    static const char lead[] = "; its last words: ";
    size_t used = strlen(detail);
    if (used + sizeof lead + WORDS_LABEL_ROOM + 16 >= len) return;
    char words[ERR_DETAIL_MAX];
    size_t room = len - used - (sizeof lead - 1) - WORDS_LABEL_ROOM;
    words_tail(&wk->words, slot, words, room < sizeof words ? room : sizeof words);
    size_t n = strlen(words);
    if (n == 0 || used + sizeof lead + n > len) return;
    memcpy(detail + used, lead, sizeof lead - 1);
    memcpy(detail + used + sizeof lead - 1, words, n + 1);
}

static void worker_exited(dispatcher *d, int w, int status)
{
    worker *wk = &d->workers[w];
    worker_slot *slot = &d->slots[w];
    int state = atomic_load(&slot->state);
    int c = wk->conn;
    if (atomic_load(&slot->mpi_serving)) mpi_job_call_abandoned(wk->pid); /* mpi_job.c */
    atomic_store(&slot->mpi_serving, 0);
    conn_unwatch(d, wk->ctl);
    close(wk->ctl);
    /* Everything it wrote, its last lines kept if its call was running. */
    words_drain(&wk->words, d->cfg, slot, wk->pid, 1);
    if (!d->stopping || c >= 0) d->restarts++;
    if (c >= 0) {
        /* A call that died while computing gets its error; the connection
         * stays usable only if no bytes of a later request were lost (nor
         * a keepalive cut short). */
        /* On TLS the notice is sealed with the state the worker left: one
         * it broke (a record cut) cannot carry it. */
        tls_stream_state *tls = conn_tls(d, c);
        /* A worker killed inside a record operation left the state half
         * updated: it is broken, and the connection closes. */
        if (tls != NULL) tls_record_holder_died(tls);
        if ((state == SLOT_COMPUTING || state == SLOT_KEEPALIVE) && !slot->pipelined && !wk->stream_cut &&
            (tls == NULL || !tls->broken)) {
            char how[64], detail[ERR_DETAIL_MAX];
            int code = wk->kill_reason ? wk->kill_reason : NUMRPC_ECRASHED;
            server_describe_exit(status, how, sizeof how);
            if (code == NUMRPC_ETIMEDOUT && slot->limit_deadline)
                snprintf(detail, sizeof detail, "%s ran past this server's limit of %d s per call and was stopped",
                         slot->routine, d->cfg->max_call_seconds);
            else if (code == NUMRPC_ETIMEDOUT)
                snprintf(detail, sizeof detail, "%s exceeded its deadline and was stopped", slot->routine);
            else if (code == NUMRPC_ECANCELLED)
                snprintf(detail, sizeof detail, "%s was cancelled by the client and stopped", slot->routine);
            else if (d->cfg->max_worker_memory && WIFSIGNALED(status) &&
                     (WTERMSIG(status) == SIGABRT || WTERMSIG(status) == SIGBUS))
                snprintf(detail, sizeof detail,
                         "%s crashed: %s (a worker may use %llu MiB of memory on this server; the routine may have run out)",
                         slot->routine, how, (unsigned long long)(d->cfg->max_worker_memory >> 20));
            else
                snprintf(detail, sizeof detail, "%s crashed: %s", slot->routine, how);
            append_words(wk, slot, detail, sizeof detail);
            server_log(d->cfg, LOG_LEVEL_NOTICE, "%s", detail);
            /* Counted before the caller hears of it (a STATUS right after
             * the reply sees the call). */
            double seconds = sock_now() - slot->started;
            stats_record(server_stats, slot->stat_index, code, 0, 0, seconds);
            server_log_call(d->cfg, slot->routine, 0, 0, seconds, code, detail, NULL);
            err_t err;
            d->conns[c].state = CONN_QUEUED; /* in the dispatcher's hands */
            if (reply_error(conn_writer(d, c), slot->call_id, code, detail, &err) == 0) conn_send(d, c);
            else conn_close(d, c);
        } else {
            d->conns[c].state = CONN_QUEUED;
            conn_close(d, c);
        }
    }
    forget_words(d, wk);
    memset(wk, 0, sizeof *wk);
    wk->state = WORKER_DEAD;
    wk->conn = -1;
    wk->words.fd = -1;
    atomic_store(&slot->state, SLOT_IDLE); /* calls in flight count the busy slots */
    slots_keep_memory(slot, 0);            /* and the memory they hold */
    if (!d->stopping && pool_count(d) < d->cfg->min_workers) pool_spawn(d, w);
    pool_schedule(d);
}

/* The helper processes the dispatcher hears end, and what their end means. */
static const struct {
    int (*is)(pid_t pid);
    int level;
    const char *what, *consequence;
} helpers[] = {
    {metajoin_is_helper, LOG_LEVEL_NOTICE, "the process reporting to the metaserver", "this server is no longer listed"},
    {pull_broker_is, LOG_LEVEL_ERROR, "the pull broker", "DATA_PULL fails from now on"},
    {spawner_is, LOG_LEVEL_ERROR, "the worker spawner", "no worker can be started from now on"},
    {mpi_job_is_supervisor, LOG_LEVEL_ERROR, "the MPI job's supervisor", "MPI routines fail from now on"},
};

void pool_reap(dispatcher *d)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (size_t h = 0; h < sizeof helpers / sizeof helpers[0]; h++) {
            if (!helpers[h].is(pid)) continue;
            char how[64];
            server_describe_exit(status, how, sizeof how);
            server_log(d->cfg, helpers[h].level, "%s ended (%s): %s", helpers[h].what, how, helpers[h].consequence);
        }
        handles_worker_gone(server_handles, pid); /* what it was writing stays as it was */
        for (int i = 0; i < d->nworkers_cap; i++)
            if (d->workers[i].pid == pid && d->workers[i].state != WORKER_DEAD) worker_exited(d, i, status);
    }
}

/* One keepalive packet (with progress, the call's PROGRESS frame) to the
 * caller of worker i's call, if its socket
 * takes it whole now: a caller that does not read misses it (it would not
 * have seen it), and never holds the dispatcher.  Cut short (the socket
 * took part of 16 bytes), the stream is out of step: the call ends. */
static void send_keepalive(dispatcher *d, int i, int progress, double now)
{
    worker *w = &d->workers[i];
    transport_bytes packet = {.max = progress ? 2 * MSG_PROGRESS_PACKET : 64};
    transport sink = transport_memory_sink(&packet);
    err_t err;
    /* A PROGRESS frame (progress.c) stands for a keepalive too. */
    int rc = progress ? progress_frame(&d->slots[i], i, now, &d->notice, &packet, &err)
                      : wire_send_empty(&sink, PROTO_KEEPALIVE, d->slots[i].call_id, &err);
    transport *tp = &d->conns[w->conn].tp;
    /* A frame goes only where the socket has room for it whole (POLLOUT:
     * a third of its buffer free), or a slow reader would cut it. */
    struct pollfd room = {tp->fd, POLLOUT, 0};
    if (rc == 0 && progress && poll(&room, 1, 0) <= 0) rc = -1;
    if (rc == 0) {
        size_t size = 0; /* on TLS, a record */
        ssize_t sent = tp->ops->send_now(tp, packet.p, packet.len, &size);
        if (sent > 0 && (size_t)sent < size) {
            w->stream_cut = 1;
            w->kill_reason = NUMRPC_EIO;
            kill(w->pid, SIGKILL);
        }
    }
    transport_bytes_free(&packet);
}

double pool_next_progress(const dispatcher *d, double now)
{
    double next = 0;
    for (int i = 0; i < d->nworkers_cap; i++) {
        if (d->workers[i].state != WORKER_HOLDING || d->workers[i].kill_reason) continue;
        double due = progress_next_due(&d->slots[i], i, now);
        if (due > 0 && (next == 0 || due < next)) next = due;
    }
    return next;
}

double pool_next_deadline(const dispatcher *d)
{
    double next = 0;
    for (int i = 0; i < d->nworkers_cap; i++) {
        const worker_slot *slot = &d->slots[i];
        if (d->workers[i].state != WORKER_HOLDING || d->workers[i].kill_reason) continue;
        if (atomic_load(&slot->state) != SLOT_COMPUTING || slot->deadline <= 0) continue;
        if (next == 0 || slot->deadline < next) next = slot->deadline;
    }
    return next;
}

/* Keepalives (or the PROGRESS frames a call asked for) for long
 * computations, deadlines, cancels and idle holders, from the shared slots. */
void pool_tick(dispatcher *d, double now)
{
    double idle = d->cfg->idle_timeout_ms / 1000.0;
    for (int i = 0; i < d->nworkers_cap; i++) {
        worker *w = &d->workers[i];
        worker_slot *slot = &d->slots[i];
        if (w->state != WORKER_HOLDING) continue;
        int state = atomic_load(&slot->state);
        if (state == SLOT_IDLE && idle > 0 && now - slot->last_active > idle) pool_ask_release(d, i);
        if (state == SLOT_IDLE && w->generation != d->generation) pool_ask_release(d, i);
        if (state != SLOT_COMPUTING) continue;
        if (slot->deadline > 0 && now >= slot->deadline && !w->kill_reason) {
            w->kill_reason = NUMRPC_ETIMEDOUT;
            kill(w->pid, SIGKILL);
            continue;
        }
        if (!w->kill_reason && cancel_poll(&d->conns[w->conn].tp, slot)) { /* cancel.c */
            w->kill_reason = NUMRPC_ECANCELLED;
            kill(w->pid, SIGKILL);
            continue;
        }
        double due = progress_next_due(slot, i, now);
        int progress = due > 0 && now >= due;
        if (!progress && now - slot->last_keepalive < d->cfg->keepalive_ms / 1000.0) continue;
        int expected = SLOT_COMPUTING;
        if (!atomic_compare_exchange_strong(&slot->state, &expected, SLOT_KEEPALIVE)) continue;
        send_keepalive(d, i, progress, now);
        slot->last_keepalive = now;
        atomic_store(&slot->state, SLOT_COMPUTING);
    }
}

/* New workers load the current modules and configuration; old ones leave
 * once they hold no connection (an idle holder is asked to give it back,
 * a busy one after its call). */
void pool_roll(dispatcher *d)
{
    d->generation++;
    for (int i = 0; i < d->nworkers_cap; i++) {
        if (d->workers[i].state == WORKER_FREE) pool_retire(d, i);
        else if (d->workers[i].state == WORKER_HOLDING) pool_ask_release(d, i);
    }
    for (int i = 0; i < d->nworkers_cap && pool_count(d) < d->cfg->min_workers; i++)
        if (d->workers[i].state == WORKER_DEAD) pool_spawn(d, i);
}

void pool_shutdown(dispatcher *d)
{
    d->stopping = 1;
    for (int i = 0; i < d->nworkers_cap; i++)
        if (d->workers[i].state != WORKER_DEAD) kill(d->workers[i].pid, SIGTERM);
    for (int i = 0; i < d->nworkers_cap; i++)
        if (d->workers[i].state != WORKER_DEAD) waitpid(d->workers[i].pid, NULL, 0);
}
