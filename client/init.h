/* init.h -- the configuration loaded once and the servers a call may go
 * to (init.c). */
#ifndef NUMRPC_CLIENT_INIT_H
#define NUMRPC_CLIENT_INIT_H

#include "config.h"

/* Checks the configuration c (NULL: the environment), then loads the pins
 * (trust.h) and sets the metaserver, then commits (client_lock held): a failure leaves nothing
 * half set. */
int client_configure_locked(const numrpc_config *c, err_t *err);
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
