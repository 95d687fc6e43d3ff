/* peer.h -- this server as a client of another numrpc peer (a server or
 * the metaserver): a connection opened, HELLO said, a token proved (peer.c). */
#ifndef NUMRPC_SERVER_PEER_H
#define NUMRPC_SERVER_PEER_H

#include "error.h"
#include "msg.h"
#include "tls.h"
#include "tokens.h"

/* Connects to host:port within connect_ms (over TLS with tls, a client
 * context, else plain TCP; every send and receive then limited to io_ms)
 * and says HELLO as peer_name, proving own (a token, or NULL) or the token
 * of the file token_file (NULL or "": none) first, bound to the TLS
 * channel.  0, or an error with c freed. */
int peer_open(msg_conn *c, tls_context *tls, const char *host, int port, const token *own, const char *token_file,
              const char *peer_name, int connect_ms, int io_ms, err_t *err);

#endif
