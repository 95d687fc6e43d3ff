/* msg_data.h -- the messages of data handles (docs/protocol.md types 40-43)
 * and the CALL's handle block: a plain struct of each, one writer and one reader. */
#ifndef NUMRPC_COMMON_MSG_DATA_H
#define NUMRPC_COMMON_MSG_DATA_H

#include <stdint.h>

#include "error.h"
#include "iface.h"
#include "wire.h"

#define MSG_DATA_ID_SIZE 16   /* random bytes: a handle's name, unguessable */
#define MSG_DATA_MAX_IDS 1024 /* ids in one DATA_FREE or DATA_RENEW         */
#define MSG_DATA_EMPTY 0x1u   /* DATA_PUT flag: no elements follow; zeros   */

typedef struct msg_data_id {
    uint8_t b[MSG_DATA_ID_SIZE];
} msg_data_id;

/* A handle's array: its element type (numrpc_type) and its shape in the
 * server's memory, ld x cols, of which rows x cols travel (as an array
 * argument a[ld:rows][cols] would).  A vector is rows x 1 with ld = rows.
 * Readers check: a known type other than string, 1 <= rows <= ld, cols >= 1,
 * and ld x cols x element size within 2^62 bytes. */
typedef struct msg_data_shape {
    uint32_t type;
    uint64_t rows, cols, ld;
} msg_data_shape;

/* The shape's elements in memory (ld x cols) and on the wire (rows x cols). */
uint64_t msg_data_mem_elems(const msg_data_shape *s);
uint64_t msg_data_wire_elems(const msg_data_shape *s);
/* The walker's view of a shape: a rank-2 parameter of s->type. */
void msg_data_as_param(const msg_data_shape *s, iface_param *p, iface_shape *sh);

/* Readers run after wire_next_message gave the message's type (requests)
 * or after the REPLY's status was read as OK (replies), and end the
 * message (wire_expect_end) unless they say otherwise. */

/* ---- DATA_PUT (client -> server): shape, flags, then (without
 * MSG_DATA_EMPTY) the elements as an array argument travels ---- */
/* Begins the message and writes shape and flags; the caller then writes
 * the elements with marshal_write_block (unless empty) and ends it. */
int msg_write_data_put_header(wire_writer *w, uint32_t call_id, const msg_data_shape *s,
                              uint32_t flags, err_t *err);
/* Reads and checks shape and flags; the caller judges the size, then
 * reads the elements with marshal_read_block (unless empty) and ends. */
int msg_read_data_put_header(wire_reader *r, msg_data_shape *s, uint32_t *flags, err_t *err);
/* The reply: the new handle's id and its lease (ms). */
int msg_write_data_put_reply(wire_writer *w, uint32_t call_id, const msg_data_id *id,
                             uint32_t lease_ms, err_t *err);
int msg_read_data_put_reply(wire_reader *r, msg_data_id *id, uint32_t *lease_ms, err_t *err);

/* ---- DATA_GET (client -> server): an id; the reply carries the shape,
 * then the elements ---- */
int msg_write_data_get(wire_writer *w, uint32_t call_id, const msg_data_id *id, err_t *err);
int msg_read_data_get(wire_reader *r, msg_data_id *id, err_t *err);
/* Begins the OK reply and writes the shape; the caller writes the
 * elements with marshal_write_block and ends the message. */
int msg_write_data_get_reply_header(wire_writer *w, uint32_t call_id, const msg_data_shape *s,
                                    err_t *err);
/* Reads and checks the shape; the caller compares it with what it asked,
 * reads the elements with marshal_read_block and ends the message. */
int msg_read_data_get_reply_header(wire_reader *r, msg_data_shape *s, err_t *err);

/* ---- DATA_FREE and DATA_RENEW (client -> server): a list of ids; the
 * reply has a status per id (0 or a negative numrpc code), and RENEW's
 * also the lease (ms) each renewed handle now has ---- */
typedef struct msg_data_ids {
    uint32_t count; /* 1..MSG_DATA_MAX_IDS */
    msg_data_id *ids; /* the writer's (borrowed) or, read, malloc'd: free() */
} msg_data_ids;
int msg_write_data_ids(wire_writer *w, uint32_t type, uint32_t call_id, const msg_data_ids *l,
                       err_t *err);
int msg_read_data_ids(wire_reader *r, msg_data_ids *l, err_t *err);
/* statuses: count entries (the request's order). */
int msg_write_data_ids_reply(wire_writer *w, uint32_t call_id, uint32_t lease_ms,
                             const int32_t *statuses, uint32_t count, err_t *err);
/* Reads exactly want statuses into statuses (the caller's, want entries). */
int msg_read_data_ids_reply(wire_reader *r, uint32_t *lease_ms, int32_t *statuses, uint32_t want,
                            err_t *err);

/* ---- DATA_GRANT (client -> source server): a handle's id; the reply
 * carries a one-time ticket (random, like an id) that a DATA_GET may name
 * in place of the id, once, within ttl_ms, whoever sends it ---- */
int msg_write_data_grant(wire_writer *w, uint32_t call_id, const msg_data_id *id, err_t *err);
int msg_read_data_grant(wire_reader *r, msg_data_id *id, err_t *err);
int msg_write_data_grant_reply(wire_writer *w, uint32_t call_id, const msg_data_id *ticket, uint32_t ttl_ms,
                               err_t *err);
int msg_read_data_grant_reply(wire_reader *r, msg_data_id *ticket, uint32_t *ttl_ms, err_t *err);

/* ---- DATA_PULL (client -> target server): the source "host:port", the
 * ticket, the shape the handle has there, a time limit; the target makes a
 * new handle of that shape and fills it with a DATA_GET of the ticket at
 * the source.  The reply is DATA_PUT's (the new id and its lease). ---- */
#define MSG_DATA_SOURCE_MAX 272 /* "host:port": a DNS name, brackets, a port */
typedef struct msg_data_pull {
    char source[MSG_DATA_SOURCE_MAX + 1]; /* "host:port", checked as such */
    msg_data_id ticket;
    msg_data_shape shape;
    uint32_t deadline_ms; /* 0 = the target's own limit */
} msg_data_pull;
int msg_write_data_pull(wire_writer *w, uint32_t call_id, const msg_data_pull *q, err_t *err);
int msg_read_data_pull(wire_reader *r, msg_data_pull *q, err_t *err);
/* "host:port" split, the port 1-65535 and the host non-empty, without
 * spaces or controls (a bracketed IPv6 address loses its brackets):
 * 0 or NUMRPC_EINVAL. */
int msg_data_split_source(const char *source, char *host, size_t host_len, int *port, err_t *err);

/* ---- The CALL's handle block (flag PROTO_CALL_HANDLES), after nargs:
 * u32 count, per handle u32 param and its id ---- */
typedef struct msg_call_handle {
    uint32_t param;
    msg_data_id id;
} msg_call_handle;
int msg_write_call_handles(wire_writer *w, const msg_call_handle *h, uint32_t n, err_t *err);
/* Reads at most max entries into h; params must increase and be < nargs. */
int msg_read_call_handles(wire_reader *r, uint32_t nargs, msg_call_handle *h, uint32_t max,
                          uint32_t *n, err_t *err);

/* "0123...ef": an id as 32 lower-case hex digits, for logs and errors. */
void msg_data_id_hex(const msg_data_id *id, char out[2 * MSG_DATA_ID_SIZE + 1]);

#endif
