/* lasterr.h -- the calling thread's last error and last call's figures
 * (numrpc_last_error_detail, numrpc_last_call_info) (lasterr.c). */
#ifndef NUMRPC_CLIENT_LASTERR_H
#define NUMRPC_CLIENT_LASTERR_H

#include "error.h"
#include "numrpc.h"

/* Records err as the calling thread's last error; returns its code. */
int client_fail(const err_t *err);
/* Clears the calling thread's last error. */
void client_succeed(void);
/* Records info as the calling thread's last call (a copy). */
void client_note_info(const numrpc_call_info *info);

#endif
