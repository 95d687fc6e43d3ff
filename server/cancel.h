/* cancel.h -- CANCEL of a running call, seen by the dispatcher (cancel.c). */
#ifndef NUMRPC_SERVER_CANCEL_H
#define NUMRPC_SERVER_CANCEL_H

#include "slots.h"
#include "tls.h"

/* While slot's worker computes, takes a CANCEL for its call from the head
 * of fd (opened through its TLS state tls, or NULL) and returns 1 with the slot held (the worker cannot reply): the
 * caller kills the worker.  0 when there is none. */
int cancel_poll(int fd, tls_stream_state *tls, worker_slot *slot);

#endif
