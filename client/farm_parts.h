/* farm_parts.h -- the farm's insides, in layers: its edges (farm.c) over its
 * connections (farm_conn.c) over its books (farm_books.c) over its choices (farm_pick.c). */
#ifndef NUMRPC_CLIENT_FARM_PARTS_H
#define NUMRPC_CLIENT_FARM_PARTS_H

#include <pthread.h>

#include "callobj.h"
#include "callq.h"
#include "conn.h"
#include "failover.h"

#define FARM_SERVERS 32     /* servers the farm remembers (bits of a mask) */
#define FARM_CONNS 4        /* pipelined connections per server           */
#define FARM_CONNS_MAX 16   /* with stalled ones (a call runs for long)    */
#define DOWN_SECONDS 2.0    /* a server that cannot be reached is skipped */

typedef struct aconn aconn;

/* A server the farm sends calls to; owned by the farm (freed at shutdown). */
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
    uint64_t carried;          /* calls answered on it                   */
    double head_since;         /* when replyq's head became the head     */
    int failed;                /* no new calls; its threads leave        */
    int threads;
    pthread_cond_t cv;
};

/* The farm (farm_pick.c; farm_lock held for every field). */
typedef struct farm_state {
    aserver *servers[FARM_SERVERS];
    int nservers;
    callq pending;                    /* waiting for room on a server   */
    int threads;                      /* connection threads running     */
    int shutting;
    pthread_cond_t threads_cv;
} farm_state;
extern farm_state farm;

/* ---- Server choice (farm_pick.c; farm_lock held) ---- */
/* The farm's server for ep (added when new); NULL when FARM_SERVERS are known. */
aserver *pick_server_for_endpoint(const endpoint *ep);
/* The server for k (NULL: none has room now, *full set when one is full). */
aserver *pick_server(const call_obj *k, int *full);
/* The connection for k on s among those open (NULL: none); *open_new
 * when a new one should be opened for it instead. */
aconn *pick_conn(aserver *s, const call_obj *k, int *open_new);
/* Learns from k's completion on s (the cap's hill climbing). */
void pick_adapt_cap(aserver *s, const call_obj *k);

/* ---- The books (farm_books.c; farm_lock held) ---- */
/* k completed on its server with rc (0 or the call's outcome). */
void farm_finish_locked(call_obj *k, int rc, const err_t *err);
/* k failed on its server as facts say: the one rule (failover.h) reports
 * it, queues it again, or moves it on to a server it has not tried (and
 * when none is left, fails it naming every server's failure). */
void farm_settle_locked(call_obj *k, failover_facts facts, const err_t *err);

/* ---- Connections (farm_conn.c; farm_lock held) ---- */
/* Hands pending calls to servers with room. */
void farm_dispatch_locked(void);
/* A new connection to s with its writer and reader threads, or NULL. */
aconn *farm_conn_open_locked(aserver *s);
/* a failed with rc (opening: it could not be opened, rc is every call's),
 * or the farm shuts down: every call on it no thread works on is settled;
 * its threads leave. */
void farm_conn_fail_locked(aconn *a, int rc, const err_t *err, int opening);

#endif
