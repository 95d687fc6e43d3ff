/* callobj.h -- the call object: one per call, blocking or not.  Data only;
 * binding (bind.h), the exchange (call.h), the id table (calltab.h) and
 * the farm (farm.h) work on it. */
#ifndef NUMRPC_CLIENT_CALLOBJ_H
#define NUMRPC_CLIENT_CALLOBJ_H

#include <stdint.h>

#include "config.h"
#include "error.h"
#include "failover.h"
#include "iface.h"
#include "msg_data.h"
#include "numrpc.h"

/* A blocking call lives on its caller's stack and is started and waited
 * for by the caller's thread (the I/O runs there); an asynchronous one is
 * on the heap, owned by the call table (calltab.c), and its I/O runs on a
 * farm connection's threads (farm.c). */
typedef union value_slot {
    int32_t i;
    int64_t l;
    float f;
    double d;
    char c;
    const char *s;
    float _Complex fz;
    double _Complex dz;
} value_slot;

enum call_state { CALL_QUEUED = 0, CALL_SENT = 1, CALL_DONE = 2 };

struct aconn;
struct aserver;
struct iface_ref;

typedef struct call_obj {
    int id;                          /* public id; 0 for a blocking call     */
    char routine[IFACE_MAX_NAME + 1];
    int pinned;                      /* a numrpc:// URL names the server     */
    endpoint pin;
    void *tag;                       /* the GridRPC handle that started it   */
    const char *expect_pin;          /* a typed header's pin line (caller's),
                                        checked before binding; NULL: none   */
    /* The one bind (bind.c): each parameter's mode, type and rank, which
     * every later interface must share; the in strings and file paths an
     * asynchronous call copied (malloc'd; k->slots point at them). */
    int bound_once;
    uint32_t nbound;
    uint8_t bound_sig[IFACE_MAX_PARAMS][3];
    char *copies[IFACE_MAX_PARAMS];
    double flops;                    /* the complexity expression's value    */
    int cheap;                       /* CalcOrder known, < PROTO_CHEAP_FLOPS  */
    double deadline;                 /* monotonic seconds, 0 = none          */
    uint32_t deadline_ms;            /* what is left of it, for the server   */
    /* One exchange on one connection */
    void *argv[IFACE_MAX_PARAMS];
    value_slot slots[IFACE_MAX_PARAMS];
    iface_shape shapes[IFACE_MAX_PARAMS];
    uint32_t wire_id;
    uint32_t nhandles;               /* arguments that are data handles     */
    msg_call_handle handles[IFACE_MAX_PARAMS]; /* (place.c), by parameter   */
    const struct handle_moves *moves; /* handles copied to the call's server
                                         for it (move.h; NULL: none)        */
    struct handle_moves *own_moves;  /* an async call's (moves == own_moves):
                                        released after it is returned       */
    int touched;                     /* a reply byte reached caller memory   */
    double t_start, t_sent, t_reply; /* first request byte written, last
                                        written, the reply's first read  */
    uint64_t out0, in0;              /* writer bytes, reader keepalives      */
    uint32_t server_busy;            /* the reply's load: calls in flight
                                        besides this one + queued           */
    /* Outcome */
    int state;                       /* enum call_state (farm_lock)          */
    err_t err;
    numrpc_call_info info;
    /* Farming (farm_lock) */
    int cancel_requested;
    int cancel_sent;
    int again;                       /* tries again on its server (failover.h) */
    failover_log failures;           /* the servers it moved on from, why    */
    uint32_t tried;                  /* bit i: farm server i was tried       */
    uint32_t allowed;                /* bit i: farm server i may run it      */
    int sent;                        /* its request is on the wire whole     */
    struct iface_ref *ref;           /* the interface it was sent against    */
    struct aserver *srv;
    struct aconn *conn;
    /* Ranked by the metaserver (meta.c): predicted seconds and parallel
     * slots on the servers handed to the farm, in that order, and the
     * prediction by farm server index (farm.c) */
    int meta;
    double meta_pred[CLIENT_MAX_SERVERS];
    int meta_slots[CLIENT_MAX_SERVERS];
    double meta_cost[32];
    double meta_xfer[CLIENT_MAX_SERVERS]; /* of meta_pred: the transfer part */
    double meta_xcost[32];
    struct call_obj *next;           /* in a queue                           */
    struct call_obj *hnext;          /* in the id table                      */
} call_obj;

#endif
