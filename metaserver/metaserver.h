/* metaserver.h -- internals of numrpc-metaserver: the table of servers (their
 * routines, speed curves, load), client-to-server throughput, the model. */
#ifndef NUMRPC_METASERVER_H
#define NUMRPC_METASERVER_H

#include <pthread.h>
#include <stdint.h>

#include "auth_accept.h"
#include "error.h"
#include "iface.h"
#include "msg.h"
#include "msg_event.h"
#include "msg_meta.h"
#include "rank.h"
#include "strbuf.h"
#include "tokens.h"

#define META_MAX_SERVERS 64
#define META_MAX_PLACED 64    /* recent placements remembered per server     */
#define META_MAX_PAIRS 1024   /* (client, server) throughput entries         */
#define META_ERRORS 256       /* prediction errors kept for the median       */
#define META_HOST_MAX (MSG_META_HOST_MAX + 1)
#define META_OWNER_MAX (TOKEN_NAME_MAX + 1) /* a token's name or a peer's address */
#define META_PER_IDENTITY_DEFAULT (META_MAX_SERVERS / 4)
/* The table's last entries go one per identity and address (table.c). */
#define META_RESERVED (META_MAX_SERVERS / 4)
/* Reports move a routine's calibration only within this factor of 1: a
 * server's speed stays within [measured / 4, measured * 4] of its curve. */
#define META_CALIB_WINDOW 4.0
#define META_REPORTS_PER_MINUTE_DEFAULT 6000
#define META_REPORT_BUCKETS 256 /* identities whose report rate is tracked */

/* ---- Options ---- */
typedef struct meta_options {
    char bind_addr[META_HOST_MAX];
    int port;
    char port_file[1024];
    double drop_after;  /* seconds of silence before a server is dropped */
    int lease_ms;       /* how long a client may reuse an answer          */
    int max_connections; /* open connections (one thread each) at most    */
    double idle_timeout; /* seconds a connection may wait between messages */
    int quiet;
    int allow_insecure; /* --allow-insecure: serve beyond loopback unauthenticated */
    char token_file[1024];   /* --token-file ("" = no tokens)                 */
    int max_per_identity;    /* --max-servers-per-identity                    */
    char tls_cert[1024];     /* --tls-cert, --tls-key ("" = no TLS)           */
    char tls_key[1024];
    char tls_client_ca[1024]; /* --tls-client-ca ("" = no client certificates) */
    int http_port;            /* --http-port (-1 = off, 0 = a free port)     */
    char http_port_file[1024];
    int http_timeout;         /* --http-timeout: seconds a request, and its reply, may take */
    int reports_per_minute;   /* --max-reports-per-minute, per identity       */
    int overload_queue;       /* --overload-queue: queued requests past which a
                               * server is overloaded (0 = its slots)          */
} meta_options;

/* ---- One routine a server offers ---- */
typedef struct meta_routine {
    iface_t iface;     /* decoded (owned)                                  */
    uint8_t *blob;     /* its descriptor as received (owned)               */
    uint32_t blob_len;
    double calib;      /* EWMA of measured / predicted compute time         */
} meta_routine;

/* ---- One server that joined ---- */
typedef struct meta_server {
    int used;            /* the entry holds a live server                 */
    uint32_t id;
    char host[META_HOST_MAX];
    int port;
    char label[META_HOST_MAX + 8]; /* "host:port"                        */
    char name[MSG_META_NAME_MAX + 1];
    char owner[META_OWNER_MAX]; /* the identity that joined it (token name, or
                                 * the peer's address without tokens)       */
    char from[META_HOST_MAX];   /* the address its JOIN came from           */
    char fingerprint[MSG_META_FINGERPRINT + 1]; /* its TLS certificate's, as its
                                 * JOIN announced it ("" = a plain server)  */
    int slots;           /* calls that run at once at the measured speed  */
    rank_curve curve;    /* P_calc(n), flops/s                            */
    meta_routine *routines;  /* malloc'd, nroutines of them               */
    uint32_t nroutines;
    uint32_t in_flight, queued, draining;
    int overloaded;      /* its queue is past the threshold (one event a crossing) */
    double loadavg;
    double joined, last_heard, last_load;
    int fd;              /* its registration connection (shut on drop)    */
    double placed_until[META_MAX_PLACED]; /* end times of recent placements */
    char placed_for[META_MAX_PLACED][META_OWNER_MAX]; /* the identity each was for */
    uint64_t placed, reports;
    /* Reported calls that had a prediction: how many, and their predicted
     * and measured seconds added up. */
    uint64_t compared;
    double predicted_sum, measured_sum;
    double err[META_ERRORS]; /* |predicted - measured| / measured           */
    int nerr, err_pos;
} meta_server;

/* ---- Measured throughput between one client and one server ---- */
typedef struct meta_pair {
    char client[64];
    char server[META_HOST_MAX + 8];
    double latency;          /* seconds, EWMA of small calls' transfer time */
    double bytes_per_second; /* EWMA of large calls' (0 = unknown)          */
    uint64_t samples;
} meta_pair;

/* One reported call with its prediction (for the status). */
#define META_RECENT 20
typedef struct meta_recent {
    char server[META_HOST_MAX + 8];
    char routine[IFACE_MAX_NAME + 1];
    char client[64];
    double at; /* sock_now() of the report */
    double flops, predicted, measured;
} meta_recent;

/* One identity's reports: a bucket of --max-reports-per-minute, refilled
 * continuously (table.c). */
typedef struct meta_bucket {
    char who[META_OWNER_MAX]; /* "" = free */
    double level, at;         /* reports it may send now; sock_now() of level */
} meta_bucket;

/* Something that went wrong (a refusal, a server dropped), for the status. */
typedef struct meta_event {
    double at; /* sock_now() */
    char text[320];
} meta_event;

/* The whole state, behind one mutex (table.c). */
typedef struct meta_table {
    pthread_mutex_t lock;
    meta_server servers[META_MAX_SERVERS];
    uint32_t next_id;
    meta_pair pairs[META_MAX_PAIRS];
    int npairs;
    double err_all[META_ERRORS];
    meta_recent recent[META_RECENT]; /* the last calls reported with a prediction */
    int nrecent, recent_pos;
    meta_event errors[META_RECENT]; /* the last refusals and drops */
    int nerrors, errors_pos;
    uint64_t errors_total;
    int nerr_all, err_all_pos;
    uint64_t queries, reports;
    uint64_t reports_dropped; /* from identities without the `report` right */
    uint64_t reports_limited; /* beyond an identity's --max-reports-per-minute */
    meta_bucket buckets[META_REPORT_BUCKETS];
    double started;      /* sock_now() at start                          */
    double started_unix; /* the same in Unix seconds                      */
    const meta_options *opt;
    struct tls_context *tls;  /* with --tls-cert: every connection is TLS (made
                               * at start, never freed)                       */
} meta_table;

extern meta_table meta;

/* ---- table.c (every function takes meta.lock itself unless _locked) ---- */
void table_init(const meta_options *opt);
/* A server joined: takes ownership of routines (n of them); *id_out.
 * proto->owner is who asks, proto->from its address: an entry with the
 * same host:port held by another owner is never replaced (EAUTH); one
 * owner, and one address, holds at most --max-servers-per-identity
 * entries (EBUSY); the last META_RESERVED free entries go only to an owner
 * and address that hold none, and a full table is ELIMIT. */
int table_join(const meta_server *proto, meta_routine *routines, uint32_t n,
               uint32_t *id_out, err_t *err);
/* Replaces server id's routine list (takes ownership). */
void table_set_routines(uint32_t id, meta_routine *routines, uint32_t n);
void table_set_load(uint32_t id, uint32_t in_flight, uint32_t queued,
                    uint32_t draining, double loadavg);
void table_heard(uint32_t id);
/* The server's connection ended: it leaves the table. */
void table_leave(uint32_t id, const char *why);
/* Drops servers silent for longer than the option says. */
void table_reap(void);
/* Ranks the servers offering q's routine (version hash, 0 = any) for a
 * call of q's flops and bytes from client (its address), best first, with
 * the figures of the model; fills up to max, records a placement on the
 * first, made for identity.  Returns the count. */
int table_rank(const msg_meta_query *q, const char *client, const char *identity, msg_meta_ranked *out,
               int max);
/* A client's report of one finished call (PROTO_REPORT_QUEUED: its total
 * time includes a wait in the client's queues; only compute time counts;
 * PROTO_REPORT_PROBE: only the link learns).  It ends a placement (and
 * counts one call fewer in flight) only when one made for identity is
 * still running on that server.  Beyond identity's --max-reports-per-minute
 * it is dropped and counted; it moves a calibration only within
 * META_CALIB_WINDOW. */
void table_report(const char *client, const char *identity, const msg_meta_call *call);
/* A report from an identity without the `report` right, dropped. */
void table_report_dropped(void);
/* The descriptor of routine from any server (malloc'd copy in *blob) and
 * the module it belongs to (module: IFACE_MAX_NAME + 1 bytes). */
int table_descriptor(const char *routine, uint8_t **blob, uint32_t *len, char *module, err_t *err);
/* Every routine name and hash, once each, of the routines whose module
 * visible(module, arg) allows (visible NULL: all): *items malloc'd (the
 * caller frees).  visible runs under meta.lock. */
int table_list(int (*visible)(const char *module, const void *arg), const void *arg, msg_routine_entry **items,
               uint32_t *count);
void routines_free(meta_routine *r, uint32_t n);
/* Remembers a refusal or failure for the status (and the page's "recent
 * errors"); the text may hold a peer's words: readers escape it. */
void table_note_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* s's routine name (version hash; 0 = any), or NULL (meta.lock held). */
meta_routine *table_routine_of_locked(meta_server *s, const char *name, uint64_t hash);
/* Placements on s whose predicted end is still to come (meta.lock held). */
int table_active_placements_locked(const meta_server *s, double now);

/* ---- status.c ---- */
/* Status for people (json = 0) or programs (json = 1; every string
 * escaped); malloc'd, NULL out of memory. */
char *table_status(int json);
/* The median of n values (-1 when n is 0). */
double table_median(const double *v, int n);

/* ---- web.c and metrics.c: the HTTP port (--http-port) ---- */
/* Starts it when opt asks for one (0 with nothing done otherwise), with
 * the tokens in force: 0 or the error. */
int web_start(const meta_options *opt, err_t *err);
/* Gives the port the tokens in force again (after a reload). */
void web_reload_tokens(void);
/* /metrics in the Prometheus text format (0, or -1 out of memory). */
int metrics_render(void *owner, strbuf *out);

/* ---- rights.c: the tokens (--token-file), reloaded on SIGHUP ---- */
/* Reads them at start: 0, or the file's error. */
int rights_load(const meta_options *opt, err_t *err);
/* Reads them again (SIGHUP): 0 with the new ones in force, or an error
 * with the old ones kept; summary says which ("2 tokens from F", "tokens
 * not changed: WHY").  listen_fd and tls_on: the safe-default rule is
 * checked again against the new table. */
int rights_reload(const meta_options *opt, int listen_fd, int tls_on, char *summary, size_t len);
/* True when tokens are on. */
int rights_on(void);
/* A copy of the tokens in force into *out (tokens_free): 0, or -1 out of
 * memory. */
int rights_copy(token_table *out);
/* The token exchange and rights of common's auth_accept.h, asked of the
 * current table (the same arguments, without the table). */
int rights_hello(const msg_hello *h, const char *need_token, auth_peer *a, msg_hello *answer, err_t *why);
int rights_proof(auth_peer *a, const uint8_t proof[HMAC_SHA256_BYTES], err_t *why);
int rights_may(const auth_peer *a, unsigned right, const char *what, const char *need_token, err_t *why);
/* May a's token call routines of module?  0 (always without tokens), or
 * EAUTH "token NAME may not call module M" (or "... was refused": gone). */
int rights_may_call(const auth_peer *a, const char *module, err_t *why);

/* ---- events.c: subscribers of typed events (docs/metaserver.md "Events") ---- */
#define EV_MAX_SUBSCRIBERS 64 /* in all                                      */
#define EV_PER_IDENTITY 8     /* per token name, or address without tokens   */
#define EV_QUEUE 256          /* events queued per subscriber before a drop   */
/* A new subscriber of the types in mask for identity who on socket fd:
 * *slot, and *wake (an eventfd readable when events are queued).  EBUSY
 * beyond the caps; ENOMEM. */
int events_subscribe(uint32_t mask, const char *who, int fd, int *slot, int *wake, err_t *err);
/* Moves up to max queued events of slot into out: the count; *dropped set
 * once its queue overflowed (its socket is shut down then). */
int events_take(int slot, msg_event *out, int max, int *dropped);
void events_unsubscribe(int slot);
/* Queues e for every subscriber of its type; one whose queue is full is
 * dropped.  Never blocks on I/O: callable under meta.lock (taken before
 * the events' own lock, never after). */
void events_publish(const msg_event *e);
/* True when a subscriber wants events of type (to skip building them). */
int events_wanted(uint32_t type);
/* An event about server s (routine: the module, or NULL), detail from
 * fmt; the strings of peers are cleaned of control characters. */
void events_server(uint32_t type, const meta_server *s, const char *routine, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same event built into *e, to publish once meta.lock is let go (a
 * hot path: LOAD): 1, or 0 when nobody wants the type. */
int events_make(msg_event *e, uint32_t type, const meta_server *s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Subscribers now, events published, subscribers dropped (for the status). */
void events_counts(int *subscribers, uint64_t *events, uint64_t *dropped);

/* ---- serve.c ---- */
/* Serves one connection until it closes (a thread's body); takes fd. */
/* Serves fd until it closes, breaks, or stays idle idle_timeout seconds
 * between messages (a stalled message: META_IO_SECONDS). */
#define META_IO_SECONDS 30
void serve_connection(int fd, const char *peer, double idle_timeout);

#endif
