/* farm.h -- where asynchronous calls run: servers, pipelined connections
 * and their threads (farm.c).  Every function here is called with
 * farm_lock (calltab.h) held, except farm_shutdown. */
#ifndef NUMRPC_CLIENT_FARM_H
#define NUMRPC_CLIENT_FARM_H

#include "callobj.h"

/* Hands a captured call to the farm; it may run on any of the n servers
 * eps (k->pinned: on k->pin only). */
void farm_submit_locked(call_obj *k, const endpoint *eps, int n);
/* Cancels k: drops it if unsent, else asks its server. */
void farm_cancel_locked(call_obj *k);
/* Closes every farm connection; calls in flight end with NUMRPC_ECANCELLED. */
void farm_shutdown(void);

#endif
