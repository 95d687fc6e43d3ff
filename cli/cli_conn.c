/* cli_conn.c -- the numrpc command's connection to a server or a metaserver:
 * plain TCP, or TLS (with a client certificate) as NUMRPC_TLS_* say; its errors, said. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_conn.h"
#include "numrpc.h"
#include "sock.h"
#include "tls.h"

int cli_conn_open(msg_conn *c, const char *where, int connect_ms, int io_ms, err_t *err)
{
    static tls_context *tls; /* made once; the command's life */
    char host[256];
    int port = 0;
    const char *ca = getenv("NUMRPC_TLS_CA"), *cert = getenv("NUMRPC_TLS_CERT"), *key = getenv("NUMRPC_TLS_KEY");
    memset(c, 0, sizeof *c); /* msg_conn_free is safe on it */
    int rc = sock_parse_hostport(where, host, sizeof host, &port, err);
    if (rc == 0 && ca && *ca && tls == NULL &&
        (tls = tls_client_context_new(ca, cert && *cert ? cert : NULL, key && *key ? key : NULL, err)) == NULL)
        rc = err->code;
    if (rc == 0) rc = msg_conn_open_tls(c, tls, NULL, host, port, connect_ms, io_ms, PROTO_DEFAULT_PACKET, err);
    return rc;
}

int cli_fail(const char *what, const err_t *err)
{
    fprintf(stderr, "numrpc %s: %s: %s (%s)\n", what, numrpc_strerror(err->code), err->detail,
            numrpc_errname(err->code));
    return 1;
}
