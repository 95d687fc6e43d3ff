/* wire.h -- framing of messages into packets on a stream socket: a writer
 * that encodes into a reused batch of packets, a reader that decodes in place. */
#ifndef NUMRPC_COMMON_WIRE_H
#define NUMRPC_COMMON_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "protocol.h"
#include "transport.h"

/* Reader and writer move bytes through a transport (transport.h).  Time
 * limits come from the socket (SO_SNDTIMEO / SO_RCVTIMEO): a send or read
 * that times out fails with NUMRPC_ETIMEDOUT.  Code outside common/ uses
 * the functions below, never the structures' fields. */

/* ---- Packet header ---- */
/* Decodes a 16-byte packet header (magic and version checked). */
int wire_parse_header(const uint8_t hdr[PROTO_HEADER_SIZE], uint32_t *type, uint32_t *call_id,
                      uint32_t *flags, uint32_t *len, err_t *err);

/* ---- Writer ----
 * A message is a byte stream cut into packets of packet_size bytes (16-byte
 * header + payload, payload a multiple of 8).  Full packets collect in a
 * batch buffer that goes to the kernel in one write.  Owned by one thread. */
typedef struct wire_writer {
    transport tp;     /* a copy of its owner's stream                  */
    size_t packet_size;
    uint8_t *buf;     /* malloc'd batch of whole packets               */
    size_t cap;       /* bytes in buf: a multiple of packet_size       */
    size_t pkt;       /* offset of the current packet's header         */
    size_t pos;       /* next payload byte                             */
    uint32_t type, call_id;
    int in_message;
    uint64_t msg_bytes; /* payload bytes of the current message          */
    uint64_t bytes_out; /* total bytes framed for the socket (sent or held) */
    double deadline;    /* monotonic seconds a send may wait until; 0 = none */
    int broken;         /* a send failed: the stream is out of step        */
} wire_writer;

/* Allocates the batch buffer; packet_size is clamped to the protocol's
 * range and rounded down to a multiple of 8. */
int wire_writer_init(wire_writer *w, int fd, size_t packet_size, err_t *err);
void wire_writer_free(wire_writer *w);
/* Writes to tp from now on; a message cut short on the old stream (its
 * peer left mid-reply) and any held one are forgotten. */
void wire_writer_attach(wire_writer *w, transport tp);
/* Every wait for the peer to take bytes ends by `deadline` (monotonic
 * seconds, 0 = only the socket's own time limit): past it a send fails with
 * NUMRPC_ETIMEDOUT and the message is cut (the stream is then unusable). */
void wire_writer_set_deadline(wire_writer *w, double deadline);
/* The packet size messages are cut into now. */
size_t wire_writer_packet_size(const wire_writer *w);
/* Bytes framed for the stream so far (sent or held). */
uint64_t wire_writer_bytes(const wire_writer *w);
/* True between messages on a stream whose every send went whole. */
int wire_writer_idle(const wire_writer *w);
int wire_set_packet_size(wire_writer *w, size_t packet_size, err_t *err);

int wire_begin(wire_writer *w, uint32_t type, uint32_t call_id);
/* Copies n bytes into the message. */
int wire_put(wire_writer *w, const void *p, size_t n, err_t *err);
/* Zero bytes until the message offset is a multiple of 8. */
int wire_pad8(wire_writer *w, err_t *err);
/* n zero bytes (a probe's payload). */
int wire_put_zeros(wire_writer *w, uint64_t n, err_t *err);
/* Space for at least one 8-byte unit in the current packet: *avail bytes
 * at *p, a multiple of 8 when the message is 8-aligned.  Then commit. */
int wire_reserve(wire_writer *w, uint8_t **p, size_t *avail, err_t *err);
void wire_commit(wire_writer *w, size_t n);
/* Ends the message (END flag) and sends everything buffered. */
int wire_end(wire_writer *w, err_t *err);
/* Ends the message but holds it with the others ended so, to go out in one
 * write with the next message sent by wire_end or by wire_flush (or when the
 * batch is full).  The owner must flush before it waits for anything. */
int wire_end_held(wire_writer *w, err_t *err);
int wire_flush(wire_writer *w, err_t *err);
/* True when ended messages are held, unsent. */
int wire_writer_holding(const wire_writer *w);
/* Ends the message with END|ABORT: the receiver drops it. */
int wire_abort(wire_writer *w, err_t *err);
/* Sends one empty single-packet message (CANCEL, KEEPALIVE) at once. */
int wire_send_empty(const transport *t, uint32_t type, uint32_t call_id, err_t *err);

/* Zeroes the writer's buffer (bytes of a caller that must not outlive its
 * loan); between messages only. */
void wire_writer_wipe(wire_writer *w);

/* ---- Reader ----
 * Reads large chunks into a buffer and hands out payload bytes in place;
 * keepalive packets are counted and skipped.  Owned by one thread. */
typedef struct wire_reader {
    transport tp;
    uint8_t *buf;
    size_t cap;
    size_t head, tail;    /* buffered bytes are buf[head, tail)        */
    uint64_t payload_left; /* of the current packet                    */
    uint32_t type, call_id, flags;
    int in_message;
    uint64_t msg_offset;   /* payload bytes consumed in this message   */
    uint64_t bytes_in;     /* total bytes read from the socket         */
    uint64_t keepalives;   /* keepalive packets seen                   */
    size_t max_packet;     /* larger packet headers are a protocol error */
    double deadline;       /* monotonic seconds a wait may last until; 0 = none */
    double pace_grace;     /* a message may take this long, then ...    */
    double pace_rate;      /* ... must arrive at this many bytes/s (0 = off) */
    double pace_started;   /* monotonic seconds its current message began */
    double pace_from;      /* the next message's first byte came then (0: when it is read) */
    uint64_t pace_base;    /* bytes_in then, less what was buffered       */
    int broken;            /* a receive failed: nothing more can be read */
    /* Side messages (wire_reader_set_side): one-packet messages of
     * side_type met between messages go to side_fn, not to the caller. */
    uint32_t side_type;
    int (*side_fn)(struct wire_reader *r, uint32_t call_id, void *arg, err_t *err);
    void *side_arg;
} wire_reader;

int wire_reader_init(wire_reader *r, int fd, size_t max_packet, err_t *err);
void wire_reader_free(wire_reader *r);
/* Reads from tp from now on; whatever was buffered or half read from the
 * old stream is forgotten. */
/* Zeroes the reader's buffer and forgets what it held; between messages. */
void wire_reader_wipe(wire_reader *r);
void wire_reader_attach(wire_reader *r, transport tp);
/* Every wait for bytes ends by `deadline` (monotonic seconds, as
 * sock_now(); 0 = only the socket's own time limits): past it a read fails
 * with NUMRPC_ETIMEDOUT, whatever arrives meanwhile (keepalives too). */
void wire_reader_set_deadline(wire_reader *r, double deadline);
/* A sender's pace: reading a message (from wire_next_message to its end)
 * may take grace_s seconds plus one second per rate bytes that arrived for
 * it; a slower sender fails with NUMRPC_ETIMEDOUT as soon as it falls
 * behind, on the clock, whether bytes come or not.  rate 0 turns it off.
 * Kept across attach (a policy of the owner, not of a stream). */
void wire_reader_set_pace(wire_reader *r, double grace_s, double rate);
/* The next message's first byte reached the process before this reader
 * (the dispatcher saw it at first_byte, monotonic seconds): its pace
 * counts from then. */
void wire_reader_pace_from(wire_reader *r, double first_byte);
/* True once a receive failed (timed out, peer gone, garbage): the stream
 * is out of step and the connection must be closed, never reused. */
int wire_reader_broken(const wire_reader *r);
/* Bytes read from the stream but not yet consumed (a pipelined request). */
size_t wire_reader_buffered(const wire_reader *r);
/* The current message: its type, call id and payload bytes consumed. */
uint32_t wire_reader_type(const wire_reader *r);
uint32_t wire_reader_call_id(const wire_reader *r);
uint64_t wire_reader_offset(const wire_reader *r);
/* True while a message is being read. */
int wire_reader_in_message(const wire_reader *r);
/* Totals since init: bytes read from the stream, keepalives skipped. */
uint64_t wire_reader_bytes(const wire_reader *r);
uint64_t wire_reader_keepalives(const wire_reader *r);
/* True when a whole one-packet message is buffered: reading it will not
 * wait for the peer. */
int wire_reader_has_message(const wire_reader *r);
/* True when the next buffered message is a whole one-packet message of
 * this type and call id (nothing is consumed). */
int wire_reader_next_is(const wire_reader *r, uint32_t type, uint32_t call_id);
/* True when no byte is buffered (the connection may change hands). */
int wire_reader_idle(const wire_reader *r);
/* A hook for side messages (PROGRESS): from now on, wire_next_message
 * hands every whole one-packet message of `type` that arrives before the
 * next message to fn(r, call_id, arg, err), which reads its body with a message
 * reader (msg_*.c) and ends it; a non-zero return ends wire_next_message
 * with that error.  A packet of that type without END is a protocol
 * error.  fn NULL removes the hook (such messages are then returned like
 * any other).  The framing reader never decodes them itself. */
void wire_reader_set_side(wire_reader *r, uint32_t type,
                          int (*fn)(wire_reader *r, uint32_t call_id, void *arg, err_t *err), void *arg);

/* Waits for the next message's first packet; returns its type and call id.
 * NUMRPC_EIO when the peer closed cleanly between messages (detail
 * "closed"), NUMRPC_EPROTO on garbage. */
int wire_next_message(wire_reader *r, uint32_t *type, uint32_t *call_id,
                      err_t *err);
/* Copies n payload bytes out of the message (across packets). */
int wire_get(wire_reader *r, void *p, size_t n, err_t *err);
/* Skips payload to the next multiple of 8 of the message offset. */
int wire_skip_pad8(wire_reader *r, err_t *err);
/* Drops n payload bytes of the message (across packets). */
int wire_skip(wire_reader *r, uint64_t n, err_t *err);
/* Payload bytes of the current packet available in place (at least 1,
 * reading more if none is buffered). */
int wire_peek(wire_reader *r, const uint8_t **p, size_t *avail, err_t *err);
void wire_consume(wire_reader *r, size_t n);
/* *at_end: 1 when the message has no payload left (optional trailing
 * fields are absent), 0 when some follows. */
int wire_at_end(wire_reader *r, int *at_end, err_t *err);
/* Succeeds if the message ends exactly here. */
int wire_expect_end(wire_reader *r, err_t *err);
/* Reads and drops the rest of the current message. */
int wire_skip_message(wire_reader *r, err_t *err);

/* ---- Single XDR values (wire_fields.c): the fields of message headers ---- */
#define WIRE_MAX_STRING (1u << 20) /* a string field's bytes at most */
int wire_put_u32(wire_writer *w, uint32_t v, err_t *err);
int wire_put_u64(wire_writer *w, uint64_t v, err_t *err);
int wire_put_double(wire_writer *w, double v, err_t *err);
/* s may be NULL (sent as "").  Longer than WIRE_MAX_STRING: NUMRPC_ELIMIT. */
int wire_put_string(wire_writer *w, const char *s, err_t *err);
/* Opaque bytes: length, bytes, padding to 4. */
int wire_put_opaque(wire_writer *w, const void *p, uint32_t len, err_t *err);
int wire_get_u32(wire_reader *r, uint32_t *v, err_t *err);
int wire_get_u64(wire_reader *r, uint64_t *v, err_t *err);
int wire_get_double(wire_reader *r, double *v, err_t *err);
/* Strings and opaques longer than max are NUMRPC_ELIMIT.  *out is malloc'd
 * (NUL-terminated); the caller frees it. */
int wire_get_string(wire_reader *r, char **out, uint32_t max, err_t *err);
/* A string field of at most max bytes (more is NUMRPC_ELIMIT) copied into
 * buf of size bytes, cut to fit when max >= size. */
int wire_get_string_into(wire_reader *r, char *buf, size_t size, uint32_t max, err_t *err);
int wire_get_opaque(wire_reader *r, uint8_t **out, uint32_t *len, uint32_t max, err_t *err);

#endif
