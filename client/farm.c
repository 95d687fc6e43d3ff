/* farm.c -- where asynchronous calls run: the farm's public edges (submit,
 * cancel, shut down, figures) over its connections, books and choices. */
#include "farm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calltab.h"
#include "farm_parts.h"

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
