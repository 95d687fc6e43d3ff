/* farm_conn.c -- the farm's pipelined connections (a sending and a
 * receiving thread each) and the hand-off of pending calls to them. */
#include <sched.h>
#include <stdlib.h>

#include "bind.h"
#include "call.h"
#include "calltab.h"
#include "farm_parts.h"
#include "iface_cache.h"
#include "sock.h"

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

/* Whether a's loss may be its age, not a call's: it had carried calls
 * (pipelined or pooled) that the server may have closed it after. */
static int connection_aged(const aconn *a)
{
    return a->carried > 0 || (a->c && a->c->reused);
}

/* A call on failed connection a that no thread works on: its results
 * began to land (reported), or it goes again or on as the rule says --
 * the connection's failure, not its server's answer to it. */
static void settle_victim(aconn *a, call_obj *k, int rc, const err_t *err, int opening)
{
    if (k->touched) { /* its error says it was not resent (farm_finish_locked) */
        farm_finish_locked(k, rc, err);
        return;
    }
    int vrc = opening || rc == NUMRPC_ECANCELLED ? rc : NUMRPC_EIO;
    failover_facts facts = {vrc, 0, !opening && (!k->sent || connection_aged(a)), 0};
    err_t e = *err;
    if (vrc != rc) err_set(&e, vrc, "%s: the connection to %s failed (%s)", k->routine, a->srv->ep.label, err->detail);
    farm_settle_locked(k, facts, &e);
}

void farm_conn_fail_locked(aconn *a, int rc, const err_t *err, int opening)
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
            if (k != a->sending && k != a->reading) settle_victim(a, k, rc, err, opening);
            /* else its thread decides when it comes back */
            k = next;
        }
    }
    farm_dispatch_locked();
}

/* The call a thread worked on unlocked, after the connection failed. */
static void settle_after_failure(aconn *a, call_obj *k, const err_t *err)
{
    callq_unlink(&a->replyq, k);
    if (k->state == CALL_DONE) return;
    settle_victim(a, k, NUMRPC_EIO, err, 0);
    farm_dispatch_locked();
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
        farm_conn_fail_locked(a, rc, &err, 1);
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
            if (rc != 0 && !a->failed) farm_conn_fail_locked(a, NUMRPC_EIO, &err, 0);
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
            if (rc != 0) farm_conn_fail_locked(a, rc, &err, 0);
            continue;
        }
        call_obj *k = a->sendq.head;
        callq_unlink(&a->sendq, k);
        a->sending = k;
        pthread_mutex_unlock(&farm_lock);

        iface_ref *ref = NULL;
        rc = iface_find(&a->srv->ep, 1, k->routine, 0, &ref, &err); /* cached, or fetched: pooled conn */
        if (rc == 0) rc = call_bind(k, &ref->iface, NULL, &err); /* bound at the start: agrees? */
        if (rc == 0) rc = call_prepare(k, &ref->iface, a->srv->ep.label, &err);
        pthread_mutex_lock(&farm_lock);
        k->ref = ref;
        int lost = rc == 0 && a->failed;
        if (rc == 0 && k->cancel_requested) rc = err_set(&err, NUMRPC_ECANCELLED, "%s: cancelled", k->routine);
        if (lost) rc = err_set(&err, NUMRPC_EIO, "%s: connection lost", a->srv->ep.label);
        if (rc != 0) {
            a->sending = NULL;
            farm_settle_locked(k, (failover_facts){rc, 0, lost, 0}, &err);
            farm_dispatch_locked();
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
        if (rc != 0 && !a->failed) {
            if (k != a->reading) { /* this call's failure; the others' is the connection's */
                callq_unlink(&a->replyq, k);
                farm_settle_locked(k, (failover_facts){rc, 0, connection_aged(a), 0}, &err);
            }
            farm_conn_fail_locked(a, rc, &err, 0);
        } else if (a->failed && k != a->reading) {
            settle_after_failure(a, k, &err);
        }
    }
    thread_exit_locked(a);
    pthread_mutex_unlock(&farm_lock);
    return NULL;
}

static void *reader_main(void *arg)
{
    aconn *a = arg;
    err_t err;
    pthread_mutex_lock(&farm_lock);
    while (!a->failed && a->c == NULL) pthread_cond_wait(&a->cv, &farm_lock);
    client_conn *c = a->c;
    while (!a->failed) {
        /* Waiters wake once per run of replies that arrived together: the
         * next call's reply, whole, not a keepalive or a PROGRESS frame of
         * a call still computing (waiters would sleep through it). */
        async_defer_wakeups_locked(a->replyq.head != NULL &&
                                   wire_reader_next_is(&c->m.reader, PROTO_REPLY, a->replyq.head->wire_id));
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
        if (keep) a->carried++;
        if (rc == 0 && keep) {
            farm_finish_locked(k, 0, &err);
        } else { /* kept: the server's whole answer; else the connection failed */
            if (rc == 0) rc = err_set(&err, NUMRPC_EIO, "%s: connection lost", a->srv->ep.label);
            failover_facts facts = {rc, k->touched, !keep && connection_aged(a), 0};
            if (!keep && !a->failed && rc == NUMRPC_EBUSY) a->srv->down_until = sock_now() + DOWN_SECONDS;
            farm_settle_locked(k, facts, &err);
            if (!keep && !a->failed) farm_conn_fail_locked(a, rc, &err, 0);
        }
        farm_dispatch_locked();
    }
    async_defer_wakeups_locked(0);
    thread_exit_locked(a);
    pthread_mutex_unlock(&farm_lock);
    return NULL;
}

aconn *farm_conn_open_locked(aserver *s)
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
        farm_conn_fail_locked(a, NUMRPC_ENOMEM, &err, 1);
        a = NULL;
    }
    pthread_attr_destroy(&attr);
    if (a) s->conns[s->nconns++] = a;
    return a;
}

/* ---- Handing calls to connections ---- */

void farm_dispatch_locked(void)
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
        int open_new = 0;
        aconn *a = s ? pick_conn(s, k, &open_new) : NULL;
        if (open_new) { /* more connections are wanted there */
            aconn *fresh = farm_conn_open_locked(s);
            if (fresh) a = fresh;
        }
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
