/* live.h -- live registration: the modules changed while the server runs,
 * and the admin requests that change them (live.c). */
#ifndef NUMRPC_SERVER_LIVE_H
#define NUMRPC_SERVER_LIVE_H

#include <stddef.h>

#include "conn.h"

/* The local admin socket (unless --admin-socket none), the directory of
 * module copies, and a check of the remote admin secret. */
void live_setup(dispatcher *d);
/* One admin command line (from the local socket, or checked by control.c
 * for a remote administrator; owner is the dispatcher): 0 with "ok ..." in
 * reply, or -1 with "error ...". */
int live_exec(void *owner, const char *line, char *reply, size_t len);
/* Rereads --token-file into d->tokens (workers forked from now on get
 * them): 0 with "ok ..." in reply, or -1 with "error ..." and the old
 * tokens kept (a bad file, or none left on a port beyond loopback). */
int live_reload_tokens(dispatcher *d, char *reply, size_t len);
/* A request on the local admin socket: accepted, answered, closed. */
void live_request(dispatcher *d);

#endif
