/* progress.h -- the caller's progress handler (numrpc_set_progress): the
 * flags a CALL asks for frames with, and the frames' delivery. */
#ifndef NUMRPC_CLIENT_PROGRESS_H
#define NUMRPC_CLIENT_PROGRESS_H

#include <stdint.h>

#include "callobj.h"
#include "error.h"
#include "wire.h"

/* The CALL header flags that ask for frames at the handler's period
 * (PROTO_CALL_WANT_PROGRESS and the period), or 0 with no handler. */
uint32_t progress_call_flags(void);
/* The wire reader's hook for PROGRESS (wire_reader_set_side) while call
 * arg (a call_obj) waits for its reply: decodes the frame and gives it to
 * the handler, in this thread, as call arg's (a frame of another call id
 * is dropped).  A malformed frame is an error of the connection. */
int progress_on_frame(wire_reader *r, uint32_t call_id, void *arg, err_t *err);

#endif
