/* start.h -- starting a call object, blocking or asynchronous alike: its
 * servers and the one bind of its arguments (start.c). */
#ifndef NUMRPC_CLIENT_START_H
#define NUMRPC_CLIENT_START_H

#include "bind.h"
#include "callobj.h"
#include "handles.h"
#include "move.h"

/* Starts call k of name (a routine, or a numrpc:// URL) with src's
 * arguments; k->deadline is set, k->moves is moves (the caller's, empty).
 * Sets k->routine and fills eps with the servers the call may run on, in
 * order: the URL's one server or the one holding the handles it names
 * (k->pinned, *placed with *named: the first handle named there; IN
 * handles elsewhere are copied there into moves), else the metaserver's
 * ranking (k->meta, with predictions made for a farm when async), else
 * NUMRPC_SERVER.  Placement and ranking bind the arguments; an
 * asynchronous call is bound here in any case and captured (call_capture:
 * it no longer reads the caller's argument list), a blocking one binds at
 * its first server's interface.  The count of servers, or an error in err. */
int call_start(call_obj *k, const char *name, arg_source *src, int async, endpoint *eps, handle_moves *moves,
               int *placed, handle_facts *named, err_t *err);

#endif
