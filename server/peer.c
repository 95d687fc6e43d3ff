/* peer.c -- opens a connection from this server to another numrpc peer as
 * any client would: TCP or TLS, HELLO, and a token's proof when it has one. */
#include "peer.h"

#include <stdio.h>

#include "auth.h"
#include "protocol.h"

int peer_open(msg_conn *c, tls_context *tls, const char *host, int port, const token *own, const char *token_file,
              const char *peer_name, int connect_ms, int io_ms, err_t *err)
{
    int rc = msg_conn_open_tls(c, tls, NULL, host, port, connect_ms, io_ms, PROTO_DEFAULT_PACKET, err);
    if (rc != 0) return rc;
    msg_hello h = {.version = PROTO_VERSION, .packet_size = PROTO_DEFAULT_PACKET};
    snprintf(h.peer, sizeof h.peer, "%s", peer_name);
    uint32_t id = msg_conn_next_id(c), auth_id = msg_conn_next_id(c);
    int proving = own != NULL;
    uint8_t binding[AUTH_BINDING_BYTES];
    if (own) rc = auth_client_hello(c, own, &h, auth_binding_of(c, binding), id, auth_id, err);
    else rc = auth_client_hello_file(c, token_file, &h, id, auth_id, &proving, err);
    if (rc == 0 && proving) rc = auth_client_finish(c, auth_id, err); /* a round trip more, once */
    else if (rc == 0) rc = msg_write_hello(&c->writer, id, &h, err);
    if (rc == 0 && !proving) rc = msg_read_hello_reply(&c->reader, id, c->label, &h, err);
    if (rc != 0) msg_conn_free(c);
    return rc;
}
