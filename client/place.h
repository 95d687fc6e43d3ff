/* place.h -- calls that name data handles: which arguments are handles,
 * each checked against its parameter, and the server the call runs on (place.c). */
#ifndef NUMRPC_CLIENT_PLACE_H
#define NUMRPC_CLIENT_PLACE_H

#include "bind.h"
#include "callobj.h"
#include "handles.h"
#include "move.h"

/* After k's shapes were evaluated against f: every array argument that is
 * a live handle is marked held (k->shapes[i].held) and listed in
 * k->handles (its copy's id when k->moves moved it).  NUMRPC_EINVAL, naming the parameter, both shapes and the
 * handle, for a handle whose element type is not the parameter's, whose
 * memory is smaller than the parameter's block, or that lives on another
 * server than label (where the call is about to go). */
int place_bind_handles(call_obj *k, const iface_t *f, const char *label, err_t *err);
/* Where call k (its routine and deadline set) with src's arguments must
 * run: 0 when it names no handle; 1 when it does, with *ep the server and
 * *first the first handle named there; or an error.  The server is the
 * one holding the handles the call writes (OUT, INOUT: on two servers,
 * NUMRPC_EINVAL), else (a call reading handles on two servers or more,
 * with a metaserver configured) the one of their servers the metaserver
 * ranks first, their bytes counted as already there (meta_rank_held),
 * else the one holding the most bytes of them.  The IN handles elsewhere
 * are copied there server to server (move.c), listed in *moves for
 * place_bind_handles, and freed by moves_release after the call (by the
 * caller of a blocking call; by calltab.c once an async call is returned).
 * When handles exist, binds k (call_bind: the call's one bind) against
 * the routine's interface from a handle's server (cached or fetched, no
 * wait past the deadline), else from the configured servers. */
int place_call(call_obj *k, arg_source *src, endpoint *ep, handle_facts *first, handle_moves *moves, err_t *err);
/* Adds "handle ID on SERVER" to err's detail (a call or request that
 * failed on a handle's server). */
void place_name_handle(err_t *err, const handle_facts *h);

#endif
