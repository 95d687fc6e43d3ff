/* admin.h -- local administration (admin.c): the Unix socket of a running
 * server, module copies, and the `numrpc-server admin` tool. */
#ifndef NUMRPC_SERVER_ADMIN_H
#define NUMRPC_SERVER_ADMIN_H

#include <stddef.h>

#include "error.h"
#include "registry.h"

/* `numrpc-server admin ...`: the client side. */
int admin_client_main(int argc, char **argv);
/* The default admin socket path for a port (into buf). */
void admin_default_socket(int port, char *buf, size_t len);
/* The listening Unix socket (mode 0600), or -1 with err set. */
int admin_listen(const char *path, err_t *err);
/* Reads one request line from an accepted admin connection into line,
 * checking the peer's credentials (same user or root).  0 or an error. */
int admin_read_request(int fd, char *line, size_t len, err_t *err);
/* Copies the module at src into dir as <hash>.so (content-addressed). */
int admin_store_module(const char *src, const char *dir, module_entry *out, err_t *err);

#endif
