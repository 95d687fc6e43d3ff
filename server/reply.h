/* reply.h -- what every reply to a CALL carries after status and detail
 * (compute seconds and the server's load), for the worker's replies and
 * for the errors the dispatcher answers itself (reply.c). */
#ifndef NUMRPC_SERVER_REPLY_H
#define NUMRPC_SERVER_REPLY_H

#include <stdint.h>

#include "error.h"
#include "slots.h"
#include "wire.h"

/* The compute seconds, then the load: calls in flight in the other
 * workers (self: the replying worker's slot, or NULL) and connections
 * queued, which a client ranking servers uses. */
int reply_put_result(wire_writer *w, double compute_seconds, const worker_slot *self, err_t *err);
/* A whole REPLY carrying only an error (and the load). */
int reply_error(wire_writer *w, uint32_t call_id, int code, const char *detail, err_t *err);

#endif
