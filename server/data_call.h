/* data_call.h -- a worker's service of the handle messages (data_call.c):
 * DATA_PUT, DATA_GET, DATA_FREE, DATA_RENEW, DATA_GRANT, DATA_PULL. */
#ifndef NUMRPC_SERVER_DATA_CALL_H
#define NUMRPC_SERVER_DATA_CALL_H

#include <stdint.h>

#include "error.h"
#include "session.h"

/* Serves one message of type PROTO_DATA_* (its header read): 0 when the
 * connection may go on, or an error when it must close. */
int data_call_serve(session *s, uint32_t type, uint32_t call_id, err_t *err);

#endif
