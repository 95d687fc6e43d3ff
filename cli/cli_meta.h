/* cli_meta.h -- `numrpc status --metaserver HOST:PORT [--json]` (cli_meta.c). */
#ifndef NUMRPC_CLI_META_H
#define NUMRPC_CLI_META_H

#include "msg.h"

/* True when the status arguments name a metaserver. */
int cli_meta_wanted(int argc, char **argv);
/* Prints the metaserver's servers, routines, load, measured throughput
 * and prediction errors; the arguments after "status". */
int cli_meta_status(int argc, char **argv);
/* msg_conn_open to "host:port" where, over TLS when NUMRPC_TLS_CA is set
 * (with NUMRPC_TLS_CERT / NUMRPC_TLS_KEY for mutual TLS), as the library
 * does: the command's one connection to a server or a metaserver. */
int cli_conn_open(msg_conn *c, const char *where, int connect_ms, int io_ms, err_t *err);

#endif
