/* cli.h -- the subcommands of the `numrpc` command that live in files of
 * their own; each takes the arguments after its name. */
#ifndef NUMRPC_CLI_H
#define NUMRPC_CLI_H

/* numrpc bench [--quick] [--out DIR] */
int cli_bench(int argc, char **argv);

/* numrpc describe --c-header MODULE [HOST:PORT]; server may be NULL. */
int cli_c_header(const char *module, const char *server);
/* numrpc describe --pin ROUTINE...: a pin file on stdout (cli_header.c). */
int cli_pins(int nroutines, char **routines);

/* numrpc status [--json] HOST:PORT (cli_status.c) */
int cli_status(int argc, char **argv);
/* numrpc admin --server HOST:PORT [--secret-file F] COMMAND (cli_status.c) */
int cli_admin(int argc, char **argv);

#endif
