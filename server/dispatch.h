/* dispatch.h -- the dispatcher, numrpc-server's main process (dispatch.c,
 * with conn.c, pool.c and live.c). */
#ifndef NUMRPC_SERVER_DISPATCH_H
#define NUMRPC_SERVER_DISPATCH_H

#include "config.h"
#include "error.h"
#include "tokens.h"

/* Accepts connections and lends them to workers until SIGTERM has drained
 * them; argv is kept to rebuild the configuration on SIGHUP.  tokens (from
 * --token-file; empty: none) become the dispatcher's (*tokens emptied). */
int dispatcher_run(server_config *cfg, int argc, char **argv, int listen_fd, token_table *tokens, err_t *err);

#endif
