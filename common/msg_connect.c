/* msg_connect.c -- opening a message connection to a peer: its stream over
 * TCP or TLS (a peer that does not answer TLS named as such), then attached. */
#include <stdio.h>
#include <string.h>

#include "msg.h"
#include "sock.h"
#include "tls.h"

int msg_conn_open(msg_conn *c, const char *host, int port, int connect_ms, int io_ms,
                  size_t packet_size, err_t *err)
{
    return msg_conn_open_tls(c, NULL, NULL, host, port, connect_ms, io_ms, packet_size, err);
}

int msg_transport_connect(transport *tp, tls_context *tls, const char *expect_fingerprint, const char *host,
                          int port, int connect_ms, err_t *err)
{
    if (tls == NULL) return transport_connect(tp, &transport_tcp_ops, host, port, connect_ms, err);
    int rc = tls_client_connect(tp, tls, host, port, connect_ms, expect_fingerprint, err);
    if (rc == NUMRPC_EPROTO) rc = err->code = NUMRPC_ECONNECT; /* a peer that does not speak TLS */
    return rc;
}

int msg_conn_open_tls(msg_conn *c, tls_context *tls, const char *expect_fingerprint, const char *host,
                      int port, int connect_ms, int io_ms, size_t packet_size, err_t *err)
{
    transport tp;
    char label[MSG_LABEL_MAX];
    int rc = msg_conn_init(c, packet_size, err);
    if (rc != 0) return rc;
    rc = msg_transport_connect(&tp, tls, expect_fingerprint, host, port, connect_ms, err);
    if (rc != 0) {
        msg_conn_free(c);
        return rc;
    }
    snprintf(label, sizeof label, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
    if (io_ms > 0) sock_set_timeouts(tp.fd, io_ms, io_ms);
    msg_conn_attach(c, tp, label);
    return 0;
}
