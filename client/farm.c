/* farm.c -- where asynchronous calls run: servers chosen by least
 * outstanding work under an adaptive cap, pipelined connections with a
 * sending and a receiving thread each, retry while no reply byte landed. */
#include "farm.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "bind.h"
#include "call.h"
#include "callq.h"
#include "calltab.h"
#include "iface_cache.h"
#include "marshal.h"
#include "meta.h"
#include "rank.h"
#include "sock.h"

#define FARM_SERVERS 32     /* servers the farm remembers (bits of a mask) */
#define FARM_CONNS 4        /* pipelined connections per server           */
#define FARM_CONNS_MAX 16   /* with stalled ones (a call runs for long)    */
#define CAP_START 4         /* calls in flight per server, at first       */
#define CAP_MAX 256
#define DOWN_SECONDS 2.0    /* a server that cannot be reached is skipped */
/* Cheap calls (k->cheap): the throttle is for work, so they get a deeper
 * cap, and they share pipelined connections (one worker) instead of waking
 * a worker each -- never queued behind a call that is not cheap. */
#define CAP_CHEAP CAP_MAX
#define PIPELINE_DEPTH 128

typedef struct aconn aconn;

typedef struct aserver {
    endpoint ep;
    int index;             /* its bit in call masks                        */
    int in_flight;         /* calls handed to its connections, not done    */
    int max_in_flight;
    int cap;               /* adaptive cap on in_flight                    */
    double work;           /* flops of the calls in flight                 */
    double down_until;     /* monotonic seconds                            */
    uint64_t calls;        /* completed here                               */
    /* throughput window of the cap's hill climbing */
    int win_calls, win_saturated;
    double win_flops, win_start, last_rate;
    double service;        /* moving average of a call's time at the head */
    double meta_backlog;   /* predicted compute seconds of its ranked calls in flight */
    double meta_link;      /* and their transfer seconds (one link, not per slot) */
    int meta_slots;        /* calls it runs at once at full speed (metaserver) */
    aconn *conns[FARM_CONNS_MAX];
    int nconns;
} aserver;

/* A pipelined connection: the writer sends calls in order, the reader
 * reads their replies in the same order.  Freed by the last thread out. */
struct aconn {
    aserver *srv;
    client_conn *c;            /* set by the writer once connected       */
    callq sendq;               /* to send                                */
    callq replyq;              /* sent (or being sent), in order         */
    call_obj *sending;         /* the writer works on it unlocked        */
    call_obj *reading;         /* the reader writes its results unlocked */
    int outstanding;           /* calls in sendq + replyq + sending      */
    int heavy;                 /* of them, calls that are not cheap      */
    double head_since;         /* when replyq's head became the head     */
    int failed;                /* no new calls; its threads leave        */
    int threads;
    pthread_cond_t cv;
};

static struct {
    aserver *servers[FARM_SERVERS];
    int nservers;
    callq pending;                    /* waiting for room on a server   */
    int threads;                      /* connection threads running     */
    int shutting;
    pthread_cond_t threads_cv;
} farm = {.threads_cv = PTHREAD_COND_INITIALIZER};

static void dispatch_locked(void);

/* ---- Servers ---- */

static aserver *server_for_locked(const endpoint *ep)
{
    for (int i = 0; i < farm.nservers; i++)
        if (strcmp(farm.servers[i]->ep.label, ep->label) == 0) return farm.servers[i];
    if (farm.nservers == FARM_SERVERS) return NULL;
    aserver *s = calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    s->ep = *ep;
    s->index = farm.nservers;
    s->cap = CAP_START;
    farm.servers[farm.nservers++] = s;
    return s;
}

/* The hill climbing of the cap: every window of completions, a rate that
 * rose while the server was kept full earns a larger cap; one that fell
 * clearly gives a smaller one. */
static void adapt_cap(aserver *s, const call_obj *k)
{
    double now = sock_now();
    if (s->win_calls == 0) s->win_start = k->t_sent > 0 ? k->t_sent : now;
    s->win_calls++;
    s->win_flops += k->flops > 0 ? k->flops : 1;
    if (s->in_flight >= s->cap) s->win_saturated = 1;
    int window = s->cap < 4 ? 4 : s->cap;
    if (s->win_calls < window || now <= s->win_start) return;
    double rate = s->win_flops / (now - s->win_start);
    int step = s->cap / 4 > 1 ? s->cap / 4 : 1;
    if (s->win_saturated && (s->last_rate == 0 || rate > 1.05 * s->last_rate))
        s->cap = s->cap + step > CAP_MAX ? CAP_MAX : s->cap + step;
    else if (s->last_rate > 0 && rate < 0.8 * s->last_rate && s->cap > 1)
        s->cap -= s->cap / 8 > 1 ? s->cap / 8 : 1;
    s->last_rate = rate;
    s->win_calls = 0;
    s->win_flops = 0;
    s->win_saturated = 0;
}

/* A call leaves its server's books (completed, failed or moved). */
static void leave_server(call_obj *k)
{
    aserver *s = k->srv;
    if (s == NULL) return;
    s->in_flight--;
    s->work -= k->flops;
    if (k->meta) {
        s->meta_backlog -= k->meta_cost[s->index] - k->meta_xcost[s->index];
        s->meta_link -= k->meta_xcost[s->index];
    }
    if (s->in_flight == 0 || s->meta_backlog < 0) s->meta_backlog = 0;
    if (s->in_flight == 0 || s->meta_link < 0) s->meta_link = 0;
    if (s->in_flight == 0 || s->work < 0) s->work = 0;
    if (k->conn) {
        k->conn->outstanding--;
        k->conn->heavy -= !k->cheap;
    }
    k->srv = NULL;
    k->conn = NULL;
}

static void finish(call_obj *k, int rc, const err_t *err)
{
    aserver *s = k->srv;
    if (s && rc != NUMRPC_ECANCELLED) {
        s->calls++;
        adapt_cap(s, k);
    }
    if (s && rc == 0 && meta_enabled()) /* what the metaserver learns from (meta.c) */
        meta_note_call(k->routine, k->flops, k->meta ? k->meta_cost[s->index] : 0, &k->info, k->server_busy, 1);
    leave_server(k);
    if (k->ref) {
        iface_cache_put(k->ref);
        k->ref = NULL;
    }
    async_complete_locked(k, rc, err);
}

/* A call that did not reach the caller's memory goes back to the queue,
 * to another server if there is one, or fails once it was tried enough. */
static void requeue(call_obj *k, int rc, const err_t *err)
{
    if (k->srv) k->tried |= 1u << k->srv->index;
    leave_server(k);
    if (k->ref) {
        iface_cache_put(k->ref);
        k->ref = NULL;
    }
    int allowed = __builtin_popcount(k->allowed);
    k->state = CALL_QUEUED;
    k->sent = 0;
    k->cancel_sent = 0;
    if (farm.shutting || k->cancel_requested || ++k->attempts > 2 * allowed + 1) {
        err_t e;
        if (farm.shutting || k->cancel_requested)
            err_set(&e, NUMRPC_ECANCELLED, "%s: cancelled before it ran", k->routine);
        else if (err)
            e = *err;
        else
            err_set(&e, rc, "%s", numrpc_strerror(rc));
        if (!farm.shutting && !k->cancel_requested && allowed > 1)
            err_prefix(&e, "every server failed; the last");
        async_complete_locked(k, e.code, &e);
        return;
    }
    callq_push_front(&farm.pending, k);
}

/* ---- Connections ---- */

static void thread_exit_locked(aconn *a)
{
    if (--a->threads == 0) {
        if (a->c) conn_discard(a->c);
        pthread_cond_destroy(&a->cv);
        free(a);
    }
    farm.threads--;
    pthread_cond_broadcast(&farm.threads_cv);
}

/* The connection failed (or the farm shuts down): every call on it that
 * no thread is working on is moved or failed; the threads leave. */
static void conn_fail_locked(aconn *a, int rc, const err_t *err)
{
    if (a->failed) return;
    a->failed = 1;
    pthread_cond_broadcast(&a->cv);
    aserver *s = a->srv;
    for (int i = 0; i < s->nconns; i++) {
        if (s->conns[i] == a) {
            s->conns[i] = s->conns[--s->nconns];
            break;
        }
    }
    if (a->c) msg_conn_shutdown(&a->c->m); /* wakes its reader */
    call_obj *lists[2] = {a->replyq.head, a->sendq.head};
    a->replyq = a->sendq = (callq){NULL, NULL};
    for (int l = 0; l < 2; l++) {
        call_obj *k = lists[l];
        while (k) {
            call_obj *next = k->next;
            k->next = NULL;
            if (k == a->sending || k == a->reading) {
                /* its thread decides when it comes back */
            } else if (k->touched) {
                err_t e;
                err_set(&e, rc, "%s: %s (results had started to arrive: not resent)", k->routine, err->detail);
                finish(k, rc, &e);
            } else {
                requeue(k, rc, err);
            }
            k = next;
        }
    }
    dispatch_locked();
}

/* The call the thread worked on unlocked, after the connection failed. */
static void settle_after_failure(aconn *a, call_obj *k, int rc, const err_t *err)
{
    callq_unlink(&a->replyq, k);
    if (k->state == CALL_DONE) return;
    if (k->touched) finish(k, rc, err);
    else requeue(k, rc, err);
    dispatch_locked();
}

/* The interface of k's routine on server s: cached, or fetched now on a
 * pooled connection of the blocking kind. */
static int iface_for(const aserver *s, const char *routine, iface_ref **out, err_t *err)
{
    *out = iface_cache_peek(s->ep.label, routine);
    return *out ? 0 : iface_lookup(&s->ep, 1, routine, 0, out, NULL, err);
}

static call_obj *cancel_to_send(aconn *a)
{
    for (call_obj *k = a->replyq.head; k; k = k->next)
        if (k->cancel_requested && !k->cancel_sent && k->sent) return k;
    return NULL;
}

static void *writer_main(void *arg)
{
    aconn *a = arg;
    err_t err;
    client_conn *c = NULL;
    int rc = conn_acquire(&a->srv->ep, 0, &c, &err);
    pthread_mutex_lock(&farm_lock);
    if (rc != 0) {
        a->srv->down_until = sock_now() + DOWN_SECONDS;
        conn_fail_locked(a, rc, &err);
    } else {
        a->c = c;
        pthread_cond_broadcast(&a->cv);
    }
    while (!a->failed) {
        call_obj *x = NULL;
        if (a->sendq.head == NULL && wire_writer_holding(&c->m.writer)) {
            /* Requests held to go out together: send them before waiting. */
            pthread_mutex_unlock(&farm_lock);
            rc = wire_flush(&c->m.writer, &err);
            pthread_mutex_lock(&farm_lock);
            if (rc != 0 && !a->failed) conn_fail_locked(a, NUMRPC_EIO, &err);
            continue;
        }
        int waited = 0;
        while (!a->failed && a->sendq.head == NULL && (x = cancel_to_send(a)) == NULL) {
            pthread_cond_wait(&a->cv, &farm_lock);
            waited = 1;
        }
        if (a->failed) break;
        if (waited && x == NULL && a->sendq.head == a->sendq.tail) {
            /* Woken for one call: let the caller that queued it go on, so
             * that a burst of calls leaves in one write (on one vCPU the
             * wakeup would otherwise run this thread at once, per call). */
            pthread_mutex_unlock(&farm_lock);
            sched_yield();
            pthread_mutex_lock(&farm_lock);
            if (a->failed) break;
            if (a->sendq.head == NULL) continue;
        }
        if (x) {
            x->cancel_sent = 1;
            uint32_t id = x->wire_id;
            pthread_mutex_unlock(&farm_lock);
            rc = wire_flush(&c->m.writer, &err); /* the call goes out before its cancel */
            if (rc == 0) rc = msg_send_cancel(&c->m, id, &err);
            pthread_mutex_lock(&farm_lock);
            if (rc != 0) conn_fail_locked(a, rc, &err);
            continue;
        }
        call_obj *k = a->sendq.head;
        callq_unlink(&a->sendq, k);
        a->sending = k;
        pthread_mutex_unlock(&farm_lock);

        iface_ref *ref = NULL;
        rc = iface_for(a->srv, k->routine, &ref, &err);
        if (rc == 0) {
            arg_source src = {k->nargs, k->args, NULL, NULL};
            rc = call_bind(k, &ref->iface, &src, &err);
        }
        if (rc == 0) rc = call_prepare(k, &ref->iface, a->srv->ep.label, &err);
        pthread_mutex_lock(&farm_lock);
        k->ref = ref;
        if (rc == 0 && k->cancel_requested) rc = err_set(&err, NUMRPC_ECANCELLED, "%s: cancelled", k->routine);
        if (rc == 0 && a->failed) rc = err_set(&err, NUMRPC_EIO, "%s: connection lost", a->srv->ep.label);
        if (rc != 0) {
            a->sending = NULL;
            if (rc == NUMRPC_ECONNECT || rc == NUMRPC_EIO) requeue(k, rc, &err);
            else finish(k, rc, &err);
            dispatch_locked();
            continue;
        }
        k->wire_id = client_next_call_id();
        k->state = CALL_SENT;
        k->sent = 0;
        if (a->replyq.head == NULL) a->head_since = sock_now();
        callq_push_back(&a->replyq, k);
        pthread_cond_broadcast(&a->cv);
        /* More to send: hold this request to go out with the next ones. */
        int hold = a->sendq.head != NULL;
        pthread_mutex_unlock(&farm_lock);

        rc = call_write(k, c, &ref->iface, hold, &err);
        if (rc != 0) rc = conn_explain_failure(c, rc, &err); /* a refused TLS certificate: EAUTH */

        pthread_mutex_lock(&farm_lock);
        a->sending = NULL;
        k->sent = 1;
        pthread_cond_broadcast(&a->cv);
        if (rc != 0 && !a->failed)
            conn_fail_locked(a, rc == NUMRPC_ETIMEDOUT || rc == NUMRPC_EAUTH ? rc : NUMRPC_EIO, &err);
        else if (a->failed && k != a->reading) settle_after_failure(a, k, NUMRPC_EIO, &err);
    }
    thread_exit_locked(a);
    pthread_mutex_unlock(&farm_lock);
    return NULL;
}

/* A reply whose status is an error the farm handles itself: a stale
 * interface (refetch, resend) or a refusal (another server). */
static int retry_status(int rc)
{
    return rc == NUMRPC_ESTALE || rc == NUMRPC_EBUSY;
}

static void *reader_main(void *arg)
{
    aconn *a = arg;
    err_t err;
    pthread_mutex_lock(&farm_lock);
    while (!a->failed && a->c == NULL) pthread_cond_wait(&a->cv, &farm_lock);
    client_conn *c = a->c;
    while (!a->failed) {
        /* Waiters wake once per run of replies that arrived together. */
        async_defer_wakeups_locked(a->replyq.head != NULL && wire_reader_has_message(&c->m.reader));
        while (!a->failed && a->replyq.head == NULL) pthread_cond_wait(&a->cv, &farm_lock);
        if (a->failed) break;
        call_obj *k = a->replyq.head;
        a->reading = k;
        pthread_mutex_unlock(&farm_lock);

        int rc = call_receive_status(k, c, &err);
        if (rc != 0) rc = conn_explain_failure(c, rc, &err);

        pthread_mutex_lock(&farm_lock);
        while (a->sending == k) pthread_cond_wait(&a->cv, &farm_lock); /* the writer's, until sent */
        int keep = call_conn_usable(rc) && !a->failed && !wire_reader_broken(&c->m.reader);
        if (rc == 0 && keep && !k->cancel_requested) {
            k->touched = 1; /* from here on, results land in the caller's memory */
            pthread_mutex_unlock(&farm_lock);
            rc = call_receive_results(k, c, &k->ref->iface, &err);
            pthread_mutex_lock(&farm_lock);
            keep = rc == 0 && !a->failed;
        } else if (rc == 0 && keep) {
            pthread_mutex_unlock(&farm_lock);
            rc = wire_skip_message(&c->m.reader, &err); /* cancelled: results dropped */
            pthread_mutex_lock(&farm_lock);
            keep = rc == 0 && !a->failed;
            if (rc == 0) rc = err_set(&err, NUMRPC_ECANCELLED, "%s: cancelled (it had finished on %s; results dropped)",
                                      k->routine, a->srv->ep.label);
        }
        a->reading = NULL;
        callq_unlink(&a->replyq, k);
        if (keep) {
            double now = sock_now(), took = now - a->head_since;
            a->srv->service = a->srv->service > 0 ? 0.8 * a->srv->service + 0.2 * took : took;
            a->head_since = now;
        }
        if (rc == NUMRPC_ESTALE && k->ref) iface_cache_invalidate(k->ref);
        if (keep) { /* the reply was read whole: rc is the call's outcome */
            if (retry_status(rc)) requeue(k, rc, &err);
            else finish(k, rc, &err);
        } else if (k->touched) {
            finish(k, rc != 0 ? rc : NUMRPC_EIO, &err);
        } else if (rc != 0 && call_conn_usable(rc) && !retry_status(rc)) {
            finish(k, rc, &err); /* the server's answer, read whole */
        } else if (rc == 0 || rc == NUMRPC_EIO || rc == NUMRPC_EPROTO || rc == NUMRPC_EBUSY) {
            requeue(k, rc != 0 ? rc : NUMRPC_EIO, &err); /* no reply byte reached the caller */
        } else {
            finish(k, rc, &err);
        }
        if (!keep && !a->failed) {
            if (rc == NUMRPC_EBUSY) a->srv->down_until = sock_now() + DOWN_SECONDS;
            conn_fail_locked(a, rc == 0 ? NUMRPC_EIO : rc, &err);
        }
        dispatch_locked();
    }
    async_defer_wakeups_locked(0);
    thread_exit_locked(a);
    pthread_mutex_unlock(&farm_lock);
    return NULL;
}

static aconn *conn_open_locked(aserver *s)
{
    aconn *a = calloc(1, sizeof *a);
    if (a == NULL) return NULL;
    a->srv = s;
    pthread_cond_init(&a->cv, NULL);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    if (pthread_create(&t, &attr, writer_main, a) != 0) {
        pthread_attr_destroy(&attr);
        pthread_cond_destroy(&a->cv);
        free(a);
        return NULL;
    }
    a->threads = 1;
    farm.threads++;
    if (pthread_create(&t, &attr, reader_main, a) == 0) {
        a->threads++;
        farm.threads++;
    } else {
        err_t err;
        err_set(&err, NUMRPC_ENOMEM, "cannot start a connection thread");
        conn_fail_locked(a, NUMRPC_ENOMEM, &err);
        a = NULL;
    }
    pthread_attr_destroy(&attr);
    if (a) s->conns[s->nconns++] = a;
    return a;
}

/* ---- Scheduling ---- */

static int effective_cap(const aserver *s, const call_obj *k)
{
    return k->cheap && s->cap < CAP_CHEAP ? CAP_CHEAP : s->cap;
}

/* A call the metaserver ranked goes where it would finish first: the
 * predicted compute backlog of the server's ranked calls over its slots,
 * their transfers (one link), plus the call's own predicted time there; it
 * waits when that server is full. */
static aserver *pick_server_meta(const call_obj *k, int *full)
{
    double now = sock_now(), best_cost = 0;
    aserver *best = NULL;
    int best_rank = 0;
    *full = 0;
    for (int i = 0; i < farm.nservers; i++) {
        aserver *s = farm.servers[i];
        if (!(k->allowed & (1u << i))) continue;
        int rank = s->down_until > now ? 2 : (k->tried & (1u << i)) ? 1 : 0;
        double cost = rank_finish_time(s->meta_backlog, s->meta_slots, s->meta_link, k->meta_cost[i]);
        if (best == NULL || rank < best_rank || (rank == best_rank && cost < best_cost)) {
            best = s;
            best_rank = rank;
            best_cost = cost;
        }
    }
    if (best && best->in_flight >= effective_cap(best, k)) {
        *full = 1;
        return NULL;
    }
    return best;
}

/* The server for k: least outstanding work among those allowed, up and
 * under their cap; servers it failed on only when no other is left. */
static aserver *pick_server(const call_obj *k, int *full)
{
    if (k->meta) return pick_server_meta(k, full);
    double now = sock_now();
    aserver *best = NULL;
    int best_rank = 0;
    *full = 0;
    for (int i = 0; i < farm.nservers; i++) {
        aserver *s = farm.servers[i];
        if (!(k->allowed & (1u << i))) continue;
        if (s->in_flight >= effective_cap(s, k)) {
            *full = 1;
            continue;
        }
        /* rank: 0 = fresh and up, 1 = tried before, 2 = down */
        int rank = s->down_until > now ? 2 : (k->tried & (1u << i)) ? 1 : 0;
        if (best == NULL || rank < best_rank ||
            (rank == best_rank && (s->work < best->work ||
                                   (s->work == best->work && s->in_flight < best->in_flight)))) {
            best = s;
            best_rank = rank;
        }
    }
    /* A full server that is up beats one that is down or failed this call. */
    if (best && best_rank > 0 && *full) return NULL;
    return best;
}

/* The connection for call k on s: an idle one; for a cheap call, the
 * least busy connection that carries only cheap calls (up to
 * PIPELINE_DEPTH deep); else a new one, or the one with the fewest calls.
 * A connection whose head call has run far longer than calls on this
 * server take (a long solve, a routine that waits) is stalled: calls do
 * not queue behind it, and it does not count against the connections a
 * server gets. */
static aconn *pick_conn(aserver *s, const call_obj *k)
{
    double now = sock_now();
    double stall = s->service * 10 > 0.05 ? s->service * 10 : 0.05;
    aconn *best = NULL, *any = NULL, *light = NULL;
    int fluid = 0;
    for (int i = 0; i < s->nconns; i++) {
        aconn *a = s->conns[i];
        if (a->outstanding == 0) return a;
        if (any == NULL || a->outstanding < any->outstanding) any = a;
        if (a->replyq.head && now - a->head_since > stall) continue;
        fluid++;
        if (best == NULL || a->outstanding < best->outstanding) best = a;
        if (a->heavy == 0 && (light == NULL || a->outstanding < light->outstanding)) light = a;
    }
    if (k->cheap && light && light->outstanding < PIPELINE_DEPTH) return light;
    if (fluid < FARM_CONNS && s->nconns < FARM_CONNS_MAX) {
        aconn *fresh = conn_open_locked(s);
        if (fresh) return fresh;
    }
    return best ? best : any;
}

static void dispatch_locked(void)
{
    /* Server sets that had no room in this pass: later calls with the same
     * set are skipped without a look (a long queue costs one pass).  Not
     * for ranked calls: each has its own best server, and a small call
     * bound for an idle one must not wait behind a large one bound for a
     * full one. */
    uint32_t no_room[4];
    int n_no_room = 0;
    call_obj *k = farm.pending.head;
    while (k) {
        call_obj *next = k->next;
        int full, skip = 0;
        for (int i = 0; i < n_no_room && !k->meta; i++) skip |= no_room[i] == k->allowed;
        if (skip) {
            k = next;
            continue;
        }
        aserver *s = pick_server(k, &full);
        if (s == NULL && full && !k->meta && n_no_room < 4) no_room[n_no_room++] = k->allowed;
        aconn *a = s ? pick_conn(s, k) : NULL;
        if (a) {
            callq_unlink(&farm.pending, k);
            k->srv = s;
            k->conn = a;
            s->in_flight++;
            s->work += k->flops;
            if (k->meta) {
                s->meta_backlog += k->meta_cost[s->index] - k->meta_xcost[s->index];
                s->meta_link += k->meta_xcost[s->index];
            }
            if (s->in_flight > s->max_in_flight) s->max_in_flight = s->in_flight;
            a->outstanding++;
            a->heavy += !k->cheap;
            call_set_server(&k->info, s->ep.label);
            callq_push_back(&a->sendq, k);
            pthread_cond_broadcast(&a->cv);
        } else if (s != NULL) {
            callq_unlink(&farm.pending, k);
            err_t e;
            err_set(&e, NUMRPC_ENOMEM, "%s: no connection to %s could be opened", k->routine, s->ep.label);
            async_complete_locked(k, e.code, &e);
        }
        k = next;
    }
}

void farm_submit_locked(call_obj *k, const endpoint *eps, int n)
{
    k->allowed = 0;
    for (int i = 0; i < n; i++) {
        aserver *s = server_for_locked(k->pinned ? &k->pin : &eps[i]);
        if (s) k->allowed |= 1u << s->index;
        if (s && k->meta && !k->pinned) {
            k->meta_cost[s->index] = k->meta_pred[i];
            k->meta_xcost[s->index] = k->meta_xfer[i];
            s->meta_slots = k->meta_slots[i];
        }
        if (k->pinned) break;
    }
    k->state = CALL_QUEUED;
    if (k->allowed == 0) {
        err_t e;
        err_set(&e, NUMRPC_ENOMEM, "%s: the farm knows %d servers already", k->routine, FARM_SERVERS);
        async_complete_locked(k, e.code, &e);
        return;
    }
    callq_push_back(&farm.pending, k);
    dispatch_locked();
}

void farm_cancel_locked(call_obj *k)
{
    k->cancel_requested = 1;
    err_t e;
    err_set(&e, NUMRPC_ECANCELLED, "%s: cancelled before it was sent", k->routine);
    if (k->conn == NULL) {
        if (callq_unlink(&farm.pending, k)) async_complete_locked(k, e.code, &e);
        return;
    }
    aconn *a = k->conn;
    if (callq_unlink(&a->sendq, k)) {
        finish(k, e.code, &e);
        dispatch_locked();
        return;
    }
    pthread_cond_broadcast(&a->cv); /* the writer sends a CANCEL */
}

void farm_shutdown(void)
{
    err_t e;
    err_set(&e, NUMRPC_ECANCELLED, "the library was finalised or reconfigured while the call ran");
    pthread_mutex_lock(&farm_lock);
    farm.shutting = 1;
    while (farm.pending.head) {
        call_obj *k = farm.pending.head;
        callq_unlink(&farm.pending, k);
        async_complete_locked(k, e.code, &e);
    }
    for (int i = 0; i < farm.nservers; i++)
        while (farm.servers[i]->nconns > 0) conn_fail_locked(farm.servers[i]->conns[0], NUMRPC_ECANCELLED, &e);
    while (farm.threads > 0) pthread_cond_wait(&farm.threads_cv, &farm_lock);
    for (int i = 0; i < farm.nservers; i++) free(farm.servers[i]);
    farm.nservers = 0;
    farm.shutting = 0;
    pthread_mutex_unlock(&farm_lock);
}

int numrpc_server_stats_get(numrpc_server_stats *out, int max)
{
    pthread_mutex_lock(&farm_lock);
    int n = farm.nservers;
    for (int i = 0; i < n && i < max && out; i++) {
        const aserver *s = farm.servers[i];
        numrpc_server_stats *o = &out[i];
        memset(o, 0, sizeof *o);
        snprintf(o->server, sizeof o->server, "%.63s", s->ep.label);
        o->calls = s->calls;
        o->in_flight = s->in_flight;
        o->max_in_flight = s->max_in_flight;
        o->cap = s->cap;
        o->connections = s->nconns;
        o->flops_per_second = s->last_rate;
    }
    pthread_mutex_unlock(&farm_lock);
    return n;
}
