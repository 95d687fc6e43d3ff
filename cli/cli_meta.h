/* cli_meta.h -- `numrpc status --metaserver HOST:PORT [--json]`, and the
 * servers a metaserver lists (cli_meta.c). */
#ifndef NUMRPC_CLI_META_H
#define NUMRPC_CLI_META_H

/* True when the status arguments name a metaserver. */
int cli_meta_wanted(int argc, char **argv);
/* Prints the metaserver's servers, routines, load, measured throughput
 * and prediction errors, then each server's security as its own STATUS
 * says; the arguments after "status". */
int cli_meta_status(int argc, char **argv);

/* Labels ("host:port") of at most max servers the metaserver at where
 * lists, each checked as host:port, into labels; the count, or a negative
 * code with err set. */
#define CLI_LABEL_MAX 128
#include "error.h"
int cli_meta_servers(const char *where, char labels[][CLI_LABEL_MAX], int max, err_t *err);

#endif
