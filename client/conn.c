/* conn.c -- libnumrpc's connections: a pool of idle connections per server,
 * the HELLO handshake (pipelined with the first request; with a token, its
 * AUTH is), reply headers. */
#include "conn.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth.h"
#include "sock.h"
#include "tls.h"

#define CONNECT_TIMEOUT_MS 10000

static client_conn *idle_pool; /* guarded by client_lock */
static atomic_uint call_ids = 1;

uint32_t client_next_call_id(void)
{
    return atomic_fetch_add(&call_ids, 1);
}

/* A pooled connection to ep's server (with the certificate ep expects, if
 * any), or NULL. */
static client_conn *take_idle(const endpoint *ep)
{
    client_conn *c = NULL;
    pthread_mutex_lock(&client_lock);
    for (client_conn **p = &idle_pool; *p; p = &(*p)->next) {
        if (strcmp((*p)->m.label, ep->label) == 0 &&
            (ep->fingerprint[0] == '\0' || strcasecmp((*p)->fingerprint, ep->fingerprint) == 0)) {
            c = *p;
            *p = c->next;
            c->next = NULL;
            break;
        }
    }
    pthread_mutex_unlock(&client_lock);
    return c;
}

/* Every wait on c ends by deadline (0: no deadline). */
static void set_deadline(client_conn *c, double deadline)
{
    wire_reader_set_deadline(&c->m.reader, deadline);
    wire_writer_set_deadline(&c->m.writer, deadline);
}

int conn_acquire(const endpoint *ep, double deadline, client_conn **out, err_t *err)
{
    client_conn *c = take_idle(ep);
    size_t packet = client_packet_size();
    if (c) {
        c->reused = 1;
        if (wire_writer_packet_size(&c->m.writer) != (packet & ~(size_t)7) &&
            wire_set_packet_size(&c->m.writer, packet, err) != 0) {
            conn_discard(c);
            return err->code;
        }
        set_deadline(c, deadline);
        *out = c;
        return 0;
    }
    /* The connection (and a TLS handshake) ends by the deadline too. */
    double left_ms = deadline > 0 ? (deadline - sock_now()) * 1000 : CONNECT_TIMEOUT_MS;
    if (left_ms <= 0) return err_set(err, NUMRPC_ETIMEDOUT, "the call's time limit passed before %s was reached", ep->label);
    transport tp;
    msg_hello hello = {.version = PROTO_VERSION, .packet_size = (uint32_t)packet, .peer = "libnumrpc " PACKAGE_VERSION};
    c = calloc(1, sizeof *c);
    if (c == NULL) return err_set(err, NUMRPC_ENOMEM, "connection");
    c->rfile_fd = -1;
    int rc = msg_conn_init(&c->m, packet, err);
    if (rc != 0) goto fail_free;
    rc = msg_transport_connect(&tp, client_tls(), ep->fingerprint[0] ? ep->fingerprint : NULL, ep->host,
                               ep->port, left_ms < CONNECT_TIMEOUT_MS ? (int)left_ms + 1 : CONNECT_TIMEOUT_MS, err);
    if (rc != 0 && deadline > 0 && sock_now() >= deadline)
        rc = err_set(err, NUMRPC_ETIMEDOUT, "the call's time limit passed while connecting to %s", ep->label);
    if (rc != 0) goto fail;
    msg_conn_attach(&c->m, tp, ep->label);
    set_deadline(c, deadline);
    tls_peer peer;
    uint8_t binding[AUTH_BINDING_BYTES];
    int resumed, is_tls = tls_client_peer(&c->m.tp, &peer, binding, &resumed) == 0;
    if (is_tls) {
        snprintf(c->fingerprint, sizeof c->fingerprint, "%s", peer.fingerprint);
        c->tls_resumed = resumed;
    }
    const token *own = client_token();
    if (own) { /* one round trip for the server's proof; AUTH goes with the first request */
        uint32_t hello_id = client_next_call_id();
        c->auth_id = client_next_call_id();
        rc = auth_client_hello(&c->m, own, &hello, is_tls ? binding : NULL, hello_id, c->auth_id, err);
    } else {
        rc = msg_write_hello(&c->m.writer, client_next_call_id(), &hello, err);
    }
    if (rc != 0) goto fail;
    c->hello_pending = 1;
    *out = c;
    return 0;
fail:
    msg_conn_free(&c->m);
fail_free:
    free(c);
    return rc;
}

void conn_release(client_conn *c)
{
    if (!msg_conn_idle(&c->m)) {
        conn_discard(c);
        return;
    }
    set_deadline(c, 0); /* the last call's */
    pthread_mutex_lock(&client_lock);
    c->next = idle_pool;
    idle_pool = c;
    pthread_mutex_unlock(&client_lock);
}

void conn_discard(client_conn *c)
{
    if (c == NULL) return;
    msg_conn_free(&c->m);
    free(c);
}

int call_conn_usable(int rc)
{
    return rc == NUMRPC_OK || rc == NUMRPC_ENOENT || rc == NUMRPC_EINVAL || rc == NUMRPC_ESTALE ||
           rc == NUMRPC_ELIMIT || rc == NUMRPC_ESERVER || rc == NUMRPC_ECRASHED ||
           rc == NUMRPC_ENOMEM || rc == NUMRPC_ECANCELLED || rc == NUMRPC_ETIMEDOUT ||
           rc == NUMRPC_ENOHANDLE;
}

void conn_done(client_conn *c, int rc)
{
    if (c == NULL) return;
    if (call_conn_usable(rc) && !c->hello_pending) conn_release(c);
    else conn_discard(c);
}

void conn_pool_clear(void)
{
    pthread_mutex_lock(&client_lock);
    client_conn *list = idle_pool;
    idle_pool = NULL;
    pthread_mutex_unlock(&client_lock);
    while (list) {
        client_conn *next = list->next;
        conn_discard(list);
        list = next;
    }
}

int conn_finish_hello(client_conn *c, err_t *err)
{
    if (!c->hello_pending) return 0;
    /* The HELLO was the first message on the connection; its call id is
     * whatever we sent, so accept the first reply. */
    msg_hello reply;
    int rc = c->auth_id ? auth_client_finish(&c->m, c->auth_id, err)
                        : msg_read_hello_reply(&c->m.reader, 0, c->m.label, &reply, err);
    if (rc == 0) c->hello_pending = 0;
    return rc;
}

int conn_explain_failure(const client_conn *c, int rc, err_t *err)
{
    if (rc != NUMRPC_EIO || !c->hello_pending || !tls_stream_refused(&c->m.tp)) return rc;
    return err_set(err, NUMRPC_EAUTH,
                   "%s refused this client's TLS certificate: %s (mutual TLS: set NUMRPC_TLS_CERT and "
                   "NUMRPC_TLS_KEY to a certificate its CA signed)",
                   c->m.label, tls_stream_failure(&c->m.tp));
}

int conn_read_reply_status(client_conn *c, uint32_t call_id, err_t *err)
{
    int rc = conn_finish_hello(c, err);
    if (rc == 0) rc = msg_read_reply(&c->m.reader, call_id, c->m.label, err);
    return rc;
}

uint64_t conn_reply_bytes(const client_conn *c, uint64_t keepalives0)
{
    /* The reply's packets (the reader reads ahead, so its byte count may
     * hold the next replies of a pipelined connection too). */
    const wire_reader *r = &c->m.reader;
    uint64_t payload = wire_reader_offset(r), per = wire_writer_packet_size(&c->m.writer) - PROTO_HEADER_SIZE;
    uint64_t packets = payload == 0 ? 1 : (payload + per - 1) / per;
    return payload + (packets + wire_reader_keepalives(r) - keepalives0) * PROTO_HEADER_SIZE;
}
