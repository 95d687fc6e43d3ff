/* msg_meta.h -- the metaserver's messages (docs/protocol.md types 16-22):
 * a plain struct of each message's fields, one writer and one reader each. */
#ifndef NUMRPC_COMMON_MSG_META_H
#define NUMRPC_COMMON_MSG_META_H

#include <stdint.h>

#include "error.h"
#include "iface.h"
#include "msg.h"
#include "rank.h"
#include "wire.h"

/* Limits a reader enforces before it allocates anything. */
#define MSG_META_HOST_MAX     255 /* a server's host name, in bytes          */
#define MSG_META_LABEL_MAX    263 /* "host:port" of a reported server        */
#define MSG_META_NAME_MAX     63  /* a joining server's name                 */
#define MSG_META_MAX_SLOTS    4096
#define MSG_META_MAX_ROUTINES 1024        /* routines of one server                  */
#define MSG_META_MAX_REPORTS  4096        /* calls in one META_REPORT                */
#define MSG_META_MAX_STATUS   (64u << 20) /* bytes of a status text             */
#define MSG_META_FINGERPRINT  64          /* a TLS certificate's SHA-256, hex    */
#define MSG_META_MAX_HELD     16          /* servers of a QUERY's held block     */

/* Readers run after wire_next_message gave the message's type (requests)
 * or after the REPLY's status was read as OK (replies: msg_read_reply in
 * msg.h, or the client's own), and end the message (wire_expect_end). */

/* ---- A routine list (JOIN, ROUTINES): name, hash, descriptor ---- */
typedef struct msg_meta_routine {
    char name[IFACE_MAX_NAME + 1];
    uint64_t hash;
    uint8_t *blob; /* the descriptor (malloc'd, owned by the list)          */
    uint32_t len;
    iface_t iface; /* reader only: blob decoded, validated (owned)          */
} msg_meta_routine;
/* Frees n entries and the array (blobs and decoded interfaces). */
void msg_meta_routines_free(msg_meta_routine *list, uint32_t n);

/* ---- META_JOIN (server -> metaserver) and its reply ---- */
typedef struct msg_meta_join {
    char host[MSG_META_HOST_MAX + 1]; /* "" = the connection's address      */
    uint32_t port;                    /* 1..65535                            */
    char name[MSG_META_NAME_MAX + 1]; /* "numrpc-server pid 1234"            */
    uint32_t slots;                   /* 1..MSG_META_MAX_SLOTS               */
    rank_curve curve;                 /* P(n), n increasing, rates positive  */
    msg_meta_routine *routines;       /* the writer's (borrowed) or, read,
                                       * malloc'd: msg_meta_routines_free    */
    uint32_t nroutines;
    /* The SHA-256 of the server's TLS certificate in lower-case hex, or ""
     * for a plain server.  Optional trailing field: sent only when set, so
     * a plain server's JOIN is what it always was. */
    char fingerprint[MSG_META_FINGERPRINT + 1];
} msg_meta_join;
int msg_write_meta_join(wire_writer *w, uint32_t call_id, const msg_meta_join *j, err_t *err);
/* Every descriptor is decoded and must carry the name and hash announced.
 * On failure nothing is left to free. */
int msg_read_meta_join(wire_reader *r, msg_meta_join *j, err_t *err);

typedef struct msg_meta_joined {
    uint32_t server_id;
    uint32_t heartbeat_ms; /* read: outside 20 ms .. 10 min it is 1000     */
} msg_meta_joined;
/* The OK reply, whole. */
int msg_write_meta_join_reply(wire_writer *w, uint32_t call_id, const msg_meta_joined *j,
                              err_t *err);
int msg_read_meta_join_reply(wire_reader *r, msg_meta_joined *j, err_t *err);

/* ---- META_ROUTINES (server -> metaserver, one-way): the whole list ---- */
int msg_write_meta_routines(wire_writer *w, uint32_t call_id, const msg_meta_routine *list,
                            uint32_t n, err_t *err);
/* *list malloc'd (msg_meta_routines_free), checked as for JOIN. */
int msg_read_meta_routines(wire_reader *r, msg_meta_routine **list, uint32_t *n, err_t *err);

/* ---- META_LOAD (server -> metaserver, one-way) ---- */
typedef struct msg_meta_load {
    uint32_t in_flight, queued, draining;
    double loadavg; /* finite, >= 0 */
} msg_meta_load;
int msg_write_meta_load(wire_writer *w, uint32_t call_id, const msg_meta_load *l, err_t *err);
int msg_read_meta_load(wire_reader *r, msg_meta_load *l, err_t *err);

/* ---- META_HEARTBEAT (server -> metaserver, one-way, empty) ---- */
/* One packet with no payload, the same bytes as wire_send_empty. */
int msg_write_meta_heartbeat(wire_writer *w, uint32_t call_id, err_t *err);
int msg_read_meta_heartbeat(wire_reader *r, err_t *err);

/* ---- META_QUERY (client -> metaserver) and its reply ---- */
/* Bytes of a call's input that are on a server already (its handles). */
typedef struct msg_meta_held {
    char server[MSG_META_LABEL_MAX + 1]; /* "host:port"                      */
    uint64_t bytes;
} msg_meta_held;
typedef struct msg_meta_query {
    char routine[IFACE_MAX_NAME + 1];
    uint64_t hash; /* 0 = any version                                */
    double flops;  /* read: outside [0, 1e30) it is 0                */
    uint64_t bytes_in, bytes_out; /* bytes_in counts the held bytes too */
    uint32_t max_servers; /* 0 = as many as the metaserver likes            */
    /* Optional trailing block, sent only when nheld > 0 (so a query
     * without handles is what it always was): per server, the bytes of
     * the call's input already there.  A reader refuses more than
     * MSG_META_MAX_HELD servers, a name that is not host:port, a server
     * named twice and bytes whose sum overflows (NUMRPC_EPROTO). */
    uint32_t nheld;
    msg_meta_held held[MSG_META_MAX_HELD];
} msg_meta_query;
int msg_write_meta_query(wire_writer *w, uint32_t call_id, const msg_meta_query *q, err_t *err);
int msg_read_meta_query(wire_reader *r, msg_meta_query *q, err_t *err);
/* True when label is "host:port": a host of letters, digits and . - _ : [ ]
 * (IPv6 in brackets), then a port 1..65535 in decimal. */
int msg_meta_label_ok(const char *label);
/* The bytes q's held block puts on server label (0 when not named). */
uint64_t msg_meta_query_held_on(const msg_meta_query *q, const char *label);

/* One ranked server of the answer, best first: the figures of the model. */
typedef struct msg_meta_ranked {
    char host[MSG_META_HOST_MAX + 1];
    uint32_t port; /* 1..65535                                  */
    uint32_t slots;
    uint32_t throughput_known; /* the link was measured, not guessed        */
    double latency, bytes_per_second, flops_per_second;
    double share;     /* 0..1                                      */
    double predicted; /* seconds; every figure finite and >= 0     */
    char fingerprint[MSG_META_FINGERPRINT + 1]; /* its JOIN's ("" = none)  */
} msg_meta_ranked;
/* The OK reply, whole: n servers under a lease of lease_ms.  The
 * fingerprints follow the n servers as one optional trailing block (n
 * strings), sent only when a server has one: while no server is TLS the
 * reply is what older clients read.  A reader takes the reply with or
 * without the block; a fingerprint that is not 64 hex digits or "" is
 * NUMRPC_EPROTO. */
int msg_write_meta_query_reply(wire_writer *w, uint32_t call_id, uint32_t lease_ms,
                               const msg_meta_ranked *servers, uint32_t n, err_t *err);
/* Its body into servers (room for max; more is NUMRPC_EPROTO). */
int msg_read_meta_query_reply(wire_reader *r, uint32_t *lease_ms, msg_meta_ranked *servers,
                              uint32_t max, uint32_t *n, err_t *err);

/* ---- META_REPORT (client -> metaserver, one-way): finished calls ---- */
typedef struct msg_meta_call {
    char server[MSG_META_LABEL_MAX + 1]; /* "host:port"                      */
    char routine[IFACE_MAX_NAME + 1];
    double flops;
    uint64_t bytes_sent, bytes_received;
    double predicted, total_seconds, compute_seconds;
    uint32_t flags; /* PROTO_REPORT_QUEUED, PROTO_REPORT_PROBE              */
} msg_meta_call;
/* Writes the n calls and ends the message held (wire_end_held): it goes
 * out with the next message sent, or at wire_flush. */
int msg_write_meta_report(wire_writer *w, uint32_t call_id, const msg_meta_call *calls, uint32_t n,
                          err_t *err);
/* *calls malloc'd (the caller frees, even when *n is 0).  Calls whose
 * figures are nonsense (negative or absurd times, compute beyond total)
 * are dropped here: they are never believed. */
int msg_read_meta_report(wire_reader *r, msg_meta_call **calls, uint32_t *n, err_t *err);

/* ---- META_STATUS (anyone -> metaserver) and its reply ---- */
#define MSG_META_STATUS_TEXT 0u
#define MSG_META_STATUS_JSON 1u
int msg_write_meta_status(wire_writer *w, uint32_t call_id, uint32_t format, err_t *err);
int msg_read_meta_status(wire_reader *r, uint32_t *format, err_t *err);
/* The OK reply, whole. */
int msg_write_meta_status_reply(wire_writer *w, uint32_t call_id, const char *text, err_t *err);
/* *text malloc'd (the caller frees), at most MSG_META_MAX_STATUS bytes. */
int msg_read_meta_status_reply(wire_reader *r, char **text, err_t *err);

#endif
