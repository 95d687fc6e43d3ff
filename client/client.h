/* client.h -- internals of libnumrpc shared by its files: configuration,
 * pooled connections, the interface cache and per-thread call state. */
#ifndef NUMRPC_CLIENT_H
#define NUMRPC_CLIENT_H

#include <pthread.h>
#include <stdarg.h>

#include "error.h"
#include "iface.h"
#include "numrpc.h"
#include "wire.h"

#define CLIENT_MAX_SERVERS 16
#define CLIENT_HOST_MAX 256

/* One server endpoint. */
typedef struct endpoint {
    char host[CLIENT_HOST_MAX];
    int port;
    char label[CLIENT_HOST_MAX + 8]; /* "host:port" */
} endpoint;

/* A connection to one server, owned by whoever took it from the pool. */
typedef struct client_conn {
    int fd;
    wire_reader reader;
    wire_writer writer;
    int hello_pending;   /* our HELLO's reply has not been read yet */
    int reused;          /* it came from the pool (may have gone stale) */
    char label[CLIENT_HOST_MAX + 8];
    struct client_conn *next;
    /* The call whose rfile arguments this connection serves while its reply
     * is awaited (files.c); NULL when none. */
    const iface_t *rfile_iface;
    void *const *rfile_argv;
    int rfile_fd;          /* the open file of rfile_index, or -1 */
    uint32_t rfile_index;
    uint64_t rfile_bytes;  /* file bytes sent for the last call */
} client_conn;

/* A cached interface: shared, reference counted; replaced when stale. */
typedef struct iface_ref {
    iface_t iface;
    char label[CLIENT_HOST_MAX + 8];
    int refs;
    int stale;
    struct iface_ref *next;
} iface_ref;

/* ---- Configuration (config.c) ---- */
/* Loads the configuration once (numrpc_init or the environment). */
int client_ensure_init(err_t *err);
/* The configured servers; fills up to CLIENT_MAX_SERVERS, returns count. */
int client_servers(endpoint *out, err_t *err);
size_t client_packet_size(void);
/* Splits "numrpc://host:port/routine" into its endpoint and routine name;
 * returns 1 if name was such a URL, 0 if a plain name, or an error. */
int client_parse_url(const char *name, endpoint *ep, char *routine,
                     size_t routine_len, err_t *err);
int endpoint_set(endpoint *ep, const char *hostport, err_t *err);

/* ---- Connections (conn.c) ---- */
/* A connection to ep: an idle pooled one or a new one (HELLO sent). */
int conn_acquire(const endpoint *ep, client_conn **out, err_t *err);
/* Gives a healthy connection back to the pool. */
void conn_release(client_conn *c);
/* Closes and frees a connection that failed. */
void conn_discard(client_conn *c);
/* Reads the HELLO reply if still pending. */
int conn_finish_hello(client_conn *c, err_t *err);
/* Reads a REPLY for call_id: status and detail.  A non-OK status is
 * returned with the server's detail in err; the message is then ended. */
int conn_read_reply_status(client_conn *c, uint32_t call_id, err_t *err);

/* ---- Link probes (probe.c) ---- */
#define PROBE_FIRST_BYTES (64u << 10) /* each way, then x4 ...             */
#define PROBE_LAST_BYTES (1u << 20)   /* ... up to this                    */
#define PROBE_MIN_SECONDS 0.02        /* a probe this long is measured enough */
typedef struct probe_result {
    double latency;          /* best empty round trip, seconds          */
    uint64_t bytes;          /* both ways, of the last sized probe      */
    double seconds;          /* its wall time                           */
    double bytes_per_second; /* bytes / (seconds - latency)             */
} probe_result;
/* Measures the link to ep with PROBE messages (3 empty ones, then 64 KiB,
 * 256 KiB, 1 MiB each way until one takes PROBE_MIN_SECONDS; a shorter last
 * one is taken twice), on a pooled connection. */
int probe_link(const endpoint *ep, probe_result *out, err_t *err);

/* ---- Files of a call (files.c) ---- */
/* Remembers the call's arguments: its rfiles are served while it waits. */
void client_files_attach(client_conn *c, const iface_t *f, void *const *argv);
/* Closes the served file and forgets the call. */
void client_files_detach(client_conn *c);
/* Answers one FILE_READ (its header read) from the attached call's file. */
int client_files_serve(client_conn *c, uint32_t call_id, err_t *err);
/* Reads the reply's OUT files into the caller's paths; a path that cannot
 * be written is the call's error (the rest of the reply is dropped). */
int client_files_read_reply(client_conn *c, const iface_t *f, void *const *argv, err_t *err);
/* Closes every pooled connection. */
void conn_pool_clear(void);
uint32_t client_next_call_id(void);

/* ---- Interface cache (iface_cache.c) ---- */
/* The interface of name on c's server, fetched once and cached. */
int iface_cache_get(client_conn *c, const char *name, iface_ref **out, err_t *err);
void iface_cache_put(iface_ref *ref);
/* The cached interface of name on server label (a reference), or NULL;
 * never does I/O. */
iface_ref *iface_cache_peek(const char *label, const char *name);
/* Forgets ref (the server said its version changed). */
void iface_cache_invalidate(iface_ref *ref);
void iface_cache_clear(void);

/* ---- Per-thread results (call.c) ---- */
/* Records err as the calling thread's last error; returns its code. */
int client_fail(const err_t *err);
void client_succeed(void);

extern pthread_mutex_t client_lock;

/* ---- Call objects (call.c): one object per call, blocking or not ----
 * A blocking call lives on its caller's stack and is started and waited
 * for by the caller's thread (the I/O runs there); an asynchronous one is
 * on the heap, owned by the call table (async.c), and its I/O runs on a
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

typedef struct call_obj {
    int id;                          /* public id; 0 for a blocking call     */
    char routine[IFACE_MAX_NAME + 1];
    int pinned;                      /* a numrpc:// URL names the server     */
    endpoint pin;
    /* Bound arguments (asynchronous calls): copies of every in scalar, the
     * caller's pointers for the rest.  vals[] holds complex values and
     * malloc'd copies of strings that args[i].v points at. */
    int nargs;
    numrpc_arg args[IFACE_MAX_PARAMS];
    value_slot vals[IFACE_MAX_PARAMS];
    double flops;                    /* the complexity expression's value    */
    int cheap;                       /* CalcOrder known, < PROTO_CHEAP_FLOPS  */
    double deadline;                 /* monotonic seconds, 0 = none          */
    uint32_t deadline_ms;            /* what is left of it, for the server   */
    /* One exchange on one connection */
    void *argv[IFACE_MAX_PARAMS];
    value_slot slots[IFACE_MAX_PARAMS];
    iface_shape shapes[IFACE_MAX_PARAMS];
    uint32_t wire_id;
    int touched;                     /* a reply byte reached caller memory   */
    double t_start, t_sent;
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
    int attempts;
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

/* Where a call's arguments come from: a va_list or a tagged array. */
typedef struct arg_source {
    int nargs;
    const numrpc_arg *tagged; /* NULL for varargs */
    va_list *va;
} arg_source;

/* Binds src to f into k->argv/k->slots (checks arity and types). */
int call_bind(call_obj *k, const iface_t *f, arg_source *src, err_t *err);
/* Binds, then copies every in scalar into k->args/k->vals (strings are
 * duplicated) and evaluates the shapes and the complexity: afterwards the
 * call no longer reads the caller's argument list. */
int call_capture(call_obj *k, const iface_t *f, arg_source *src, err_t *err);
/* Frees what call_capture duplicated. */
void call_release_args(call_obj *k);
/* Evaluates the shapes of k (bound to f), checks them and the deadline. */
int call_prepare(call_obj *k, const iface_t *f, err_t *err);
/* Writes k's CALL on c with call id k->wire_id (after call_prepare); with
 * hold, the request stays in c's writer to go out with the next one (the
 * caller flushes before it waits). */
int call_write(call_obj *k, client_conn *c, const iface_t *f, int hold, err_t *err);
/* call_prepare, then call_write. */
int call_send(call_obj *k, client_conn *c, const iface_t *f, err_t *err);
/* Reads the reply's status and compute seconds (a failed status is the
 * server's error; the message is then ended). */
int call_receive_status(call_obj *k, client_conn *c, err_t *err);
/* Records which server ran the call (a bounded copy of label). */
void call_set_server(numrpc_call_info *info, const char *label);
/* Reads the out scalars and arrays into the caller's memory. */
int call_receive_results(call_obj *k, client_conn *c, const iface_t *f, err_t *err);
/* A connection is still usable after an exchange that ended with rc. */
int call_conn_usable(int rc);
/* The process-wide timeout of new calls in seconds (0 = none). */
double call_timeout(void);

/* ---- Asynchronous calls (async.c) and farming (farm.c) ---- */
extern pthread_mutex_t farm_lock;
/* Completes k (farm_lock held): records rc/err, wakes waiters. */
void async_complete_locked(call_obj *k, int rc, const err_t *err);
/* While this thread defers, its completions wake the waiters only when it
 * stops deferring (farm_lock held): a reader with more replies buffered. */
void async_defer_wakeups_locked(int defer);
/* Hands a captured call to the farm (farm_lock held); it may run on any
 * of the n servers eps (k->pinned: on k->pin only). */
void farm_submit_locked(call_obj *k, const endpoint *eps, int n);
/* Cancels k (farm_lock held): drops it if unsent, else asks its server. */
void farm_cancel_locked(call_obj *k);
/* Closes every farm connection; calls in flight end with NUMRPC_ECANCELLED. */
void farm_shutdown(void);

#endif
