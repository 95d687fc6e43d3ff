/* cancel.h -- CANCEL of a running call, seen by the dispatcher (cancel.c). */
#ifndef NUMRPC_SERVER_CANCEL_H
#define NUMRPC_SERVER_CANCEL_H

#include "slots.h"
#include "transport.h"

/* While slot's worker computes, takes a CANCEL for its call from the head
 * of the connection's stream t and returns 1 with the slot held (the
 * worker cannot reply): the caller kills the worker.  0 when there is none. */
int cancel_poll(transport *t, worker_slot *slot);

#endif
