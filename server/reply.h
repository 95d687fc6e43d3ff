/* reply.h -- replies of both the workers and the dispatcher: what every
 * reply to a CALL carries after status and detail (compute seconds and the
 * server's load), errors, and the answer to HELLO (reply.c). */
#ifndef NUMRPC_SERVER_REPLY_H
#define NUMRPC_SERVER_REPLY_H

#include <stdint.h>

#include "error.h"
#include "msg.h"
#include "slots.h"
#include "wire.h"

/* The compute seconds, then the load: calls in flight in the other
 * workers (self: the replying worker's slot, or NULL) and connections
 * queued, which a client ranking servers uses. */
int reply_put_result(wire_writer *w, double compute_seconds, const worker_slot *self, err_t *err);
/* A whole REPLY carrying only an error (and the load). */
int reply_error(wire_writer *w, uint32_t call_id, int code, const char *detail, err_t *err);
/* Answers the HELLO h (read already) on w: NUMRPC_EVERSION for another
 * protocol version, else the server's version and packet limit, with the
 * token fields of proof_fields (name, nonce, proof; NULL: none).  0, or an
 * error writing. */
int reply_hello(wire_writer *w, uint32_t call_id, const msg_hello *h, const msg_hello *proof_fields, err_t *err);

#endif
