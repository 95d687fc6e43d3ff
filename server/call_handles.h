/* call_handles.h -- the data handles a CALL names (PROTO_CALL_HANDLES): read,
 * checked against the call's shapes, mapped as its arguments, results kept. */
#ifndef NUMRPC_SERVER_CALL_HANDLES_H
#define NUMRPC_SERVER_CALL_HANDLES_H

#include <stdint.h>

#include "error.h"
#include "handles.h"
#include "iface.h"
#include "msg_data.h"
#include "msg_mpi.h"
#include "wire.h"

/* One handle a call names, once bound. */
typedef struct call_handle {
    handle_ref ref;
    void *map;  /* the handle's file mapped whole (ref.bytes), or NULL */
    int writes; /* INOUT or OUT: claimed; kept when the call succeeds */
    int committed; /* the result replaced the handle's file */
} call_handle;

/* The call's handles: named by the request, bound by call_handles_bind,
 * let go by call_handles_end (which every path of the call reaches). */
typedef struct call_handles {
    uint32_t n;
    msg_call_handle named[IFACE_MAX_PARAMS];
    call_handle bound[IFACE_MAX_PARAMS];
} call_handles;

/* Nothing named, nothing bound. */
void call_handles_init(call_handles *ch);
/* Reads the handle block of a CALL with nargs arguments (msg_data.h). */
int call_handles_read(call_handles *ch, wire_reader *r, uint32_t nargs, err_t *err);
/* For each named handle of owner: the parameter must be an array of the
 * handle's element type whose memory block (shapes) fits the handle
 * (NUMRPC_EINVAL naming the parameter, both shapes and the id), the handle
 * must be owner's (NUMRPC_ENOHANDLE) and, to be written, not written by
 * another call (NUMRPC_EBUSY).  Then argv points at its mapping: IN
 * read-only and shared, INOUT a fresh copy that becomes the handle on
 * success (HANDLE_MAP_NEXT), OUT the same with its block zeroed; the shape
 * is marked held (the walker skips it). */
int call_handles_bind(call_handles *ch, const char *owner, const iface_t *f, iface_shape *shapes, void **argv,
                      err_t *err);
/* The keys of the bound handles for the MPI job (ascending by parameter):
 * an argument read from a handle is named by its id and the version of
 * the bytes mapped (none if unsure), one written by the version its result
 * takes if the call succeeds and commits. */
void call_handles_keys(const call_handles *ch, const iface_t *f, msg_mpi_handles *out);
/* The routine succeeded: each INOUT and OUT handle takes its result. */
int call_handles_commit(call_handles *ch, err_t *err);
/* Unmaps and lets go every handle (claims end); safe to repeat. */
void call_handles_end(call_handles *ch);

#endif
