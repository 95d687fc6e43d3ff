/* farm_pick.c -- the farm's state and its choice of server and connection
 * for a call: least outstanding work under an adaptive cap, or the metaserver's cost. */
#include <stdlib.h>
#include <string.h>

#include "farm_parts.h"
#include "rank.h"
#include "sock.h"

#define CAP_START 4         /* calls in flight per server, at first       */
#define CAP_MAX 256
/* Cheap calls (k->cheap): the throttle is for work, so they get a deeper
 * cap, and they share pipelined connections (one worker) instead of waking
 * a worker each -- never queued behind a call that is not cheap. */
#define CAP_CHEAP CAP_MAX
#define PIPELINE_DEPTH 128

farm_state farm = {.threads_cv = PTHREAD_COND_INITIALIZER};

aserver *pick_server_for_endpoint(const endpoint *ep)
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
void pick_adapt_cap(aserver *s, const call_obj *k)
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
aserver *pick_server(const call_obj *k, int *full)
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
aconn *pick_conn(aserver *s, const call_obj *k, int *open_new)
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
    *open_new = fluid < FARM_CONNS && s->nconns < FARM_CONNS_MAX;
    return best ? best : any;
}
