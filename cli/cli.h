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
/* numrpc watch [--metaserver HOST:PORT] [--types a,b] [--count N] [--seconds S]
 * (cli_watch.c) */
int cli_watch(int argc, char **argv);
/* A server's STATUS as the table `numrpc status` prints (cli_status.c). */
void cli_print_status(const char *server, const msg_status *s);
/* numrpc admin --server HOST:PORT [--secret-file F] COMMAND (cli_status.c) */
int cli_admin(int argc, char **argv);
/* The admin command of the words argv ("register M.so", "unregister M",
 * "list") into command: 0, or -1 when they are none of these. */
#define CLI_ADMIN_COMMAND_MAX 1100
int cli_admin_command(int argc, char **argv, char command[CLI_ADMIN_COMMAND_MAX]);
/* One admin command on server, its answer on stdout (after "server: "
 * with labelled): 0, or a negative code with err set (cli_status.c). */
int cli_remote_admin(const char *server, const char *secret_file, const char *command, int labelled, err_t *err);

/* The group of --all: the servers a metaserver lists (--metaserver H:P,
 * else NUMRPC_METASERVER), else NUMRPC_SERVER's list (cli_group.c). */
int cli_all_wanted(int argc, char **argv);
/* numrpc status --all [--metaserver H:P]: a block per server. */
int cli_status_all(int argc, char **argv);
/* numrpc admin --all [--metaserver H:P] [--secret-file F] COMMAND: a line
 * per server. */
int cli_admin_all(int argc, char **argv);

#endif
