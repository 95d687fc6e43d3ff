/* async.h -- starting an asynchronous call (async.c, beside the public
 * numrpc_call_async / numrpc_wait* family built on the call table). */
#ifndef NUMRPC_CLIENT_ASYNC_H
#define NUMRPC_CLIENT_ASYNC_H

#include "bind.h"

/* Binds src now (a cached interface, else one fetched from the first
 * server that answers) and hands the call to the farm; *id its id.  tag
 * (may be NULL) stays with the call (calltab_facts_of).  The outcome is
 * the thread's last error (lasterr.h). */
int async_start(int *id, const char *name, arg_source *src, void *tag);

#endif
