/* protocol.h -- the numrpc wire protocol's constants: packet header, message
 * types and flags.  docs/protocol.md describes the messages in full. */
#ifndef NUMRPC_COMMON_PROTOCOL_H
#define NUMRPC_COMMON_PROTOCOL_H

#include <stdint.h>

#define PROTO_MAGIC 0x4E52u /* "NR" */
#define PROTO_VERSION 2u

#define PROTO_HEADER_SIZE 16u
#define PROTO_MIN_PACKET 64u
#define PROTO_MAX_PACKET (16u << 20)
#define PROTO_DEFAULT_PACKET 4096u

/* Message types (byte 3 of a packet header). */
enum proto_type {
    PROTO_HELLO = 1,     /* u32 version, u32 packet size, string peer name  */
    PROTO_LIST = 2,      /* (empty) -> names and hashes                      */
    PROTO_GET_IFACE = 3, /* string name -> descriptor blob                   */
    PROTO_CALL = 4,      /* call header, scalars, arrays                     */
    PROTO_CANCEL = 5,    /* (empty): cancel the call with this call id       */
    PROTO_KEEPALIVE = 6, /* (empty): the server is still computing           */
    PROTO_REPLY = 7,     /* i32 status, string detail, then per request type */
    PROTO_ADMIN = 8,     /* u32 step, then per step: challenge-response, then a
                            command (register, unregister, list); answered by
                            the dispatcher (msg_control.c)                   */
    PROTO_STATUS = 9,    /* u32 version -> the server's counters, per routine
                            and in all; answered by the dispatcher           */
    /* Remote files (docs/protocol.md, "Files"); 12-15 reserved for them. */
    PROTO_FILE_READ = 10, /* server -> client mid-call: u32 param, u64 offset, u32 length */
    PROTO_FILE_DATA = 11  /* client -> server: i32 status, string detail, u64 n, bytes */
};

/* Metaserver messages (16-31; docs/protocol.md, docs/metaserver.md).  A
 * metaserver also answers HELLO, LIST and GET_IFACE like a server. */
enum proto_meta_type {
    PROTO_META_JOIN = 16,      /* server -> meta: address, speed curve,
                                  routines; REPLY u32 id, u32 heartbeat ms */
    PROTO_META_ROUTINES = 17,  /* server -> meta, one-way: the full list   */
    PROTO_META_LOAD = 18,      /* server -> meta, one-way: load counters   */
    PROTO_META_HEARTBEAT = 19, /* server -> meta, one-way, empty           */
    PROTO_META_QUERY = 20,     /* client -> meta: routine, flops, bytes;
                                  REPLY lease, ranked servers              */
    PROTO_META_REPORT = 21,    /* client -> meta, one-way: finished calls  */
    PROTO_META_STATUS = 22,    /* anyone -> meta: REPLY string (text/JSON)  */
    PROTO_META_SUBSCRIBE = 23, /* anyone -> meta: u32 mask of event types;
                                  REPLY status, then EVENTs on the connection */
    PROTO_META_EVENT = 24      /* meta -> subscriber: one event (msg_event.h) */
};

/* META_REPORT flags, per call reported. */
#define PROTO_REPORT_QUEUED 0x1u /* its total includes a wait in the client's queues */
#define PROTO_REPORT_PROBE 0x2u  /* a link probe, not a call: only the link learns */

/* A link probe (32): u32 reply_bytes, u64 n, n bytes, padding to 8 ->
 * REPLY u64 reply_bytes, that many bytes, padding.  Clients measure the
 * latency and throughput to a server with it (client/probe.c). */
#define PROTO_PROBE 32u
#define PROTO_PROBE_MAX_BYTES (16u << 20)

/* AUTH (33): opaque proof<32> -> REPLY (status only).  The client's answer
 * to the server's challenge in a HELLO that named a token (docs/protocol.md
 * "Tokens"); the dispatcher answers it. */
#define PROTO_AUTH 33u

/* Data handles (40-45, docs/protocol.md "Handles"): arrays kept on the
 * server between calls (common/msg_data.h has each message's fields). */
#define PROTO_DATA_PUT 40u   /* shape, flags, elements -> id, lease      */
#define PROTO_DATA_GET 41u   /* id -> shape, elements                    */
#define PROTO_DATA_FREE 42u  /* ids -> a status per id                   */
#define PROTO_DATA_RENEW 43u /* ids -> lease, a status per id            */
#define PROTO_DATA_GRANT 44u /* id -> a one-time ticket for a DATA_GET   */
#define PROTO_DATA_PULL 45u  /* source, ticket, shape -> id, lease: the
                                server fetches the handle from source    */

/* The MPI job (48-52, docs/protocol.md "The MPI job"): between a server's
 * worker and rank 0 of its resident job, on a Unix socket (msg_mpi.h). */
#define PROTO_MPI_START 48u  /* rank 0 -> worker, empty: the call is taken */
#define PROTO_MPI_CALL 49u   /* descriptor, scalars, the handles' keys     */
#define PROTO_MPI_REPLY 50u  /* status, detail, phase seconds, results     */
#define PROTO_MPI_HELD 51u   /* rank 0 -> worker: arguments it holds       */
#define PROTO_MPI_ARRAYS 52u /* worker -> rank 0: the other arrays         */

/* PROGRESS (56): server -> client while the routine of a call that asked
 * for it computes (flag PROTO_CALL_WANT_PROGRESS): one packet between
 * messages, with the call's id: f64 elapsed, f64 predicted, f64 fraction,
 * string message (msg_progress.h; docs/protocol.md "Progress"). */
#define PROTO_PROGRESS 56u
#define PROTO_PROGRESS_MESSAGE_MAX 256u /* a frame's message bytes at most */
#define PROTO_PROGRESS_MIN_MS 50u       /* periods asked below it are raised to it */

/* Packet flags. */
#define PROTO_FLAG_END 0x1u   /* last packet of its message              */
#define PROTO_FLAG_ABORT 0x2u /* the sender cut the message short: drop it */

/* Call header flags. */
#define PROTO_CALL_WANT_KEEPALIVE 0x1u
#define PROTO_CALL_HANDLES 0x2u /* a handle block follows nargs: those
                                   arguments are server-side data */
/* The caller wants PROGRESS frames at most every (flags >> 16) ms (0: the
 * server's minimum).  The period rides in the flags' upper half, so the
 * header's layout is unchanged and a server that knows nothing of it
 * ignores the request. */
#define PROTO_CALL_WANT_PROGRESS 0x4u
#define PROTO_CALL_PERIOD_SHIFT 16

/* A call whose CalcOrder is under this many flops is cheap: its reply may
 * wait in the worker for the next pipelined one, and clients pipeline it on
 * a shared connection (never behind a call that is not cheap). */
#define PROTO_CHEAP_FLOPS 1e6

/* The keepalive period while a routine computes. */
#define PROTO_KEEPALIVE_SECONDS 5

#endif
