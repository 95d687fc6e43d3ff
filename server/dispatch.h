/* dispatch.h -- the dispatcher, numrpc-server's main process (dispatch.c,
 * with conn.c, pool.c and live.c). */
#ifndef NUMRPC_SERVER_DISPATCH_H
#define NUMRPC_SERVER_DISPATCH_H

#include "config.h"
#include "error.h"
#include "slots.h"
#include "tls.h"
#include "tokens.h"

/* The tables the dispatcher shares with its workers (their slots, the
 * counters, the handle store), made before the spawner forks so that the
 * spawner's workers map them too; --max-connections fitted to the open-file
 * limit.  *slots: cfg->max_workers of them.  0, or -1 with err set. */
int dispatcher_tables_open(server_config *cfg, worker_slot **slots, err_t *err);
/* Unmaps them (dispatcher_run does when it returns); idempotent. */
void dispatcher_tables_close(void);

/* Accepts connections and lends them to workers until SIGTERM has drained
 * them; argv is kept to rebuild the configuration on SIGHUP.  tokens (from
 * --token-file; empty: none) become the dispatcher's (*tokens emptied).
 * tls (--tls-cert's context, or NULL: plain TCP) stays the caller's: with
 * it every connection on the port is TLS. */
int dispatcher_run(server_config *cfg, int argc, char **argv, int listen_fd, token_table *tokens, tls_context *tls,
                   err_t *err);

#endif
