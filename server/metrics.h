/* metrics.h -- numrpc-server's HTTP port (--http-port): /metrics in the
 * Prometheus text format, from the shared counters (metrics.c). */
#ifndef NUMRPC_SERVER_METRICS_H
#define NUMRPC_SERVER_METRICS_H

#include "config.h"
#include "error.h"
#include "tokens.h"

/* Starts the port when cfg asks for one (0 with nothing done otherwise),
 * once server_stats is mapped; HTTPS with cfg's --tls-cert, tokens copied.
 * 0, or the error (the server does not start). */
int metrics_start(const server_config *cfg, const token_table *tokens, err_t *err);
/* The tokens again, after a reload of the token file. */
void metrics_set_tokens(const token_table *tokens);
/* Stops the port (before server_stats is unmapped); idempotent. */
void metrics_stop(void);

#endif
