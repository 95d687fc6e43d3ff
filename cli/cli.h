/* cli.h -- the subcommands of the `numrpc` command that live in files of
 * their own; each takes the arguments after its name. */
#ifndef NUMRPC_CLI_H
#define NUMRPC_CLI_H

#include "msg_control.h"

/* numrpc bench [--quick] [--out DIR] */
int cli_bench(int argc, char **argv);

/* numrpc describe --c-header MODULE [HOST:PORT]; server may be NULL. */
int cli_c_header(const char *module, const char *server);
/* numrpc describe --pin ROUTINE...: a pin file on stdout (cli_header.c). */
int cli_pins(int nroutines, char **routines);

/* numrpc status [--json] HOST:PORT (cli_status.c) */
int cli_status(int argc, char **argv);
/* A server's STATUS into *s (msg_status_free it on success), over TLS and
 * with NUMRPC_TOKEN_FILE's token as those variables say (cli_status.c). */
int cli_server_status(const char *server, int connect_ms, int io_ms, msg_status *s, err_t *err);
/* "TLS, tokens required" and the like: what s says of the server's
 * security (a static string). */
const char *cli_security_words(const msg_status *s);
/* s on stdout as a JSON string, quotes and control characters escaped. */
void cli_json_string(const char *s);
/* numrpc status --all [--metaserver HOST:PORT]: every server of the group
 * (the metaserver's, else NUMRPC_SERVER's), a block each (cli_status.c). */
int cli_all_wanted(int argc, char **argv);
int cli_status_all(int argc, char **argv);
/* numrpc admin --server HOST:PORT | --all [--metaserver HOST:PORT]
 * [--secret-file F] COMMAND (cli_status.c) */
int cli_admin(int argc, char **argv);

#endif
