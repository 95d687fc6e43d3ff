/* cli_conn.h -- the numrpc command's connection to a server or a metaserver,
 * over TLS when NUMRPC_TLS_CA is set (cli_conn.c). */
#ifndef NUMRPC_CLI_CONN_H
#define NUMRPC_CLI_CONN_H

#include "msg.h"

/* msg_conn_open to "host:port" where, over TLS when NUMRPC_TLS_CA is set
 * (with NUMRPC_TLS_CERT / NUMRPC_TLS_KEY for mutual TLS), as the library
 * does. The caller msg_conn_free's c whatever the outcome. */
int cli_conn_open(msg_conn *c, const char *where, int connect_ms, int io_ms, err_t *err);

/* The time limits of the commands that talk to servers one at a time. */
#define CLI_CONNECT_MS 10000
#define CLI_IO_MS 30000

/* Prints "numrpc WHAT: message: detail (NAME)" on stderr; returns 1, the
 * command's exit status. */
int cli_fail(const char *what, const err_t *err);

#endif
