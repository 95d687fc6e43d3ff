/* msg_progress.h -- the PROGRESS message (docs/protocol.md "Progress"): a
 * server tells a caller how far the routine of its call has come. */
#ifndef NUMRPC_COMMON_MSG_PROGRESS_H
#define NUMRPC_COMMON_MSG_PROGRESS_H

#include <stdint.h>

#include "error.h"
#include "protocol.h"
#include "wire.h"

/* One frame.  The writer sends what it is given (the dispatcher cleans a
 * routine's words first: msg_progress_clean); the reader checks every
 * field and refuses what no honest server sends. */
typedef struct msg_progress {
    double elapsed;   /* seconds since the request's first byte reached the server, >= 0 */
    double predicted; /* seconds the whole call should take, or -1 when unknown         */
    double fraction;  /* 0..1 when the routine says, else -1                             */
    char message[PROTO_PROGRESS_MESSAGE_MAX + 1]; /* the routine's words, or ""          */
} msg_progress;

/* The whole one-packet message (the writer's packet size must hold it:
 * 16 + 24 + 4 + 256 bytes, MSG_PROGRESS_PACKET is enough). */
#define MSG_PROGRESS_PACKET 512u
int msg_write_progress(wire_writer *w, uint32_t call_id, const msg_progress *p, err_t *err);
/* Its body after wire_next_message gave PROTO_PROGRESS (ends the message).
 * NUMRPC_EPROTO for a time that is negative or not finite, a fraction
 * outside [0, 1] other than -1, a prediction that is neither -1 nor a
 * finite non-negative time, or a message over the limit. */
int msg_read_progress(wire_reader *r, msg_progress *p, err_t *err);

/* Makes fields a routine wrote (anything at all) fit to send: message
 * copied with a bound and NUL-terminated, control bytes as blanks;
 * fraction NaN, infinite or out of [0, 1] becomes -1 (unknown). */
void msg_progress_clean(msg_progress *p, const char *raw_message, size_t raw_size, double raw_fraction);

#endif
