/* farm.c -- where asynchronous calls run: the farm's books (calls handed
 * to servers, finished, settled by the one retry rule) and its public edges. */
#include "farm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "calltab.h"
#include "farm_parts.h"
#include "iface_cache.h"
#include "meta.h"
#include "sock.h"

farm_state farm = {.threads_cv = PTHREAD_COND_INITIALIZER};

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

void farm_finish_locked(call_obj *k, int rc, const err_t *err)
{
    aserver *s = k->srv;
    if (s && rc != NUMRPC_ECANCELLED) {
        s->calls++;
        pick_adapt_cap(s, k);
    }
    if (s && rc == 0 && meta_enabled()) /* what the metaserver learns from (meta.c) */
        meta_note_call(k->routine, k->flops, k->meta ? k->meta_cost[s->index] : 0, &k->info, k->server_busy, 1);
    err_t e;
    if (rc != 0 && k->failures.count > 0) { /* it failed elsewhere before: say so */
        e = *err;
        failover_note(&k->failures, s ? s->ep.label : k->routine, err);
        failover_explain(&k->failures, k->routine, s ? s->ep.label : k->routine, 0, 0, &e);
        err = &e;
    }
    leave_server(k);
    if (k->ref) {
        iface_cache_put(k->ref);
        k->ref = NULL;
    }
    async_complete_locked(k, rc, err);
}

void farm_settle_locked(call_obj *k, failover_facts facts, const err_t *err)
{
    facts.again = k->again;
    failover_step step = failover_decide(&facts);
    if (step == FAILOVER_REPORT) {
        farm_finish_locked(k, facts.rc, err);
        return;
    }
    aserver *s = k->srv;
    char label[sizeof s->ep.label];
    snprintf(label, sizeof label, "%s", s ? s->ep.label : "");
    if (step == FAILOVER_NEXT) {
        failover_note(&k->failures, label, err);
        if (s) k->tried |= 1u << s->index;
        k->again = 0;
    } else {
        k->again++;
    }
    leave_server(k);
    if (k->ref) {
        iface_cache_put(k->ref);
        k->ref = NULL;
    }
    k->state = CALL_QUEUED;
    k->sent = 0;
    k->cancel_sent = 0;
    err_t e;
    if (farm.shutting || k->cancel_requested) {
        err_set(&e, NUMRPC_ECANCELLED, "%s: cancelled before it ran", k->routine);
        async_complete_locked(k, e.code, &e);
    } else if (step == FAILOVER_NEXT && (k->tried & k->allowed) == k->allowed) {
        e = *err; /* no server left to try */
        if (__builtin_popcount(k->allowed) > 1) failover_explain(&k->failures, k->routine, label, 1, 0, &e);
        async_complete_locked(k, e.code, &e);
    } else {
        callq_push_front(&farm.pending, k);
    }
}

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
        aserver *s = pick_server_for_endpoint(k->pinned ? &k->pin : &eps[i]);
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
    farm_dispatch_locked();
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
        farm_finish_locked(k, e.code, &e);
        farm_dispatch_locked();
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
        while (farm.servers[i]->nconns > 0) farm_conn_fail_locked(farm.servers[i]->conns[0], NUMRPC_ECANCELLED, &e, 0);
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
