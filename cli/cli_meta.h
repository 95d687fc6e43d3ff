/* cli_meta.h -- `numrpc status --metaserver HOST:PORT [--json]` (cli_meta.c). */
#ifndef NUMRPC_CLI_META_H
#define NUMRPC_CLI_META_H

/* True when the status arguments name a metaserver. */
int cli_meta_wanted(int argc, char **argv);
/* Prints the metaserver's servers, routines, load, measured throughput
 * and prediction errors, then each server's security as its own STATUS
 * says; the arguments after "status". */
int cli_meta_status(int argc, char **argv);

#endif
