/* init.h -- the library's life: loading the configuration once, the
 * servers a call may go to, numrpc_init and numrpc_finalize (init.c). */
#ifndef NUMRPC_CLIENT_INIT_H
#define NUMRPC_CLIENT_INIT_H

#include "config.h"

/* Loads the configuration once (numrpc_init or the environment). */
int client_ensure_init(err_t *err);
/* The configured servers (NUMRPC_SERVER), else those the metaserver named
 * lately; fills up to CLIENT_MAX_SERVERS, returns the count or an error
 * (NUMRPC_ENOSERVER when there is none). */
int client_servers(endpoint *out, err_t *err);
/* Where name goes: loads the configuration, then a numrpc:// URL's server
 * (*pinned = 1) or the configured servers.  The routine's name goes into
 * routine (len bytes).  Returns the count of servers in eps, or an error. */
int client_locate(const char *name, endpoint *eps, char *routine, size_t len, int *pinned,
                  err_t *err);

#endif
