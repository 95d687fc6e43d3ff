/* farm_books.c -- the farm's books: a call leaves its server finished, or
 * is settled by the one retry rule (again, the next server, reported). */
#include <stdio.h>

#include "calltab.h"
#include "farm_parts.h"
#include "iface_cache.h"
#include "meta.h"

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
    if (rc != 0 && s && __builtin_popcount(k->allowed) > 1) { /* as a blocking call's error says it */
        e = *err;
        failover_note(&k->failures, s->ep.label, err);
        failover_facts untouched = {rc, 0, 0, 0}; /* what the rule says had nothing landed */
        failover_explain(&k->failures, k->routine, s->ep.label, 0,
                         k->touched && failover_decide(&untouched) == FAILOVER_NEXT, &e);
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
