/* move.h -- IN handles moved server to server for one call: a ticket from
 * the source, a pull by the target, a temporary copy freed after (move.c). */
#ifndef NUMRPC_CLIENT_MOVE_H
#define NUMRPC_CLIENT_MOVE_H

#include "handles.h"
#include "iface.h"

/* The temporary copies one call uses on its target: on the caller's stack
 * (a blocking call) or owned by the call (an asynchronous one: calltab.c
 * releases them after the call is returned); empty when the call's
 * handles are all on one server. */
typedef struct handle_moves {
    struct handle_moves *next; /* calltab.c's list of moves to release */
    uint32_t n;
    endpoint target;
    struct {
        const numrpc_data *handle; /* the caller's handle (elsewhere)   */
        msg_data_id copy;          /* its copy's id on target            */
    } items[IFACE_MAX_PARAMS];
    numrpc_call_info info; /* bytes and connections of GRANT, PULL, FREE */
} handle_moves;

/* Copies handle h (living on another server than target) to target for
 * the call: DATA_GRANT at its server, DATA_PULL at target, the copy listed
 * in *m (kept on the caller's stack, no wait past deadline).  A handle
 * moved already is not moved again.  0 or the error, naming the handle. */
int move_handle(handle_moves *m, const endpoint *target, const numrpc_data *h, const handle_facts *f,
                double deadline, err_t *err);
/* 1 with *copy when p is a handle moved for this call. */
int moves_find(const handle_moves *m, const void *p, msg_data_id *copy);
/* Frees the copies on target (best effort: their lease ends them otherwise). */
void moves_release(handle_moves *m);

#endif
