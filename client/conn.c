/* conn.c -- libnumrpc's connections: a pool of idle connections per server,
 * the HELLO handshake (pipelined with the first request), reply headers. */
#include "client.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "marshal.h"
#include "sock.h"

#define CONNECT_TIMEOUT_MS 10000

static client_conn *idle_pool; /* guarded by client_lock */
static atomic_uint call_ids = 1;

uint32_t client_next_call_id(void)
{
    return atomic_fetch_add(&call_ids, 1);
}

static int send_hello(client_conn *c, err_t *err)
{
    wire_begin(&c->writer, PROTO_HELLO, client_next_call_id());
    int rc = wire_put_u32(&c->writer, PROTO_VERSION, err);
    if (rc == 0) rc = wire_put_u32(&c->writer, (uint32_t)client_packet_size(), err);
    if (rc == 0) rc = wire_put_string(&c->writer, "libnumrpc " PACKAGE_VERSION, err);
    if (rc == 0) rc = wire_end(&c->writer, err);
    return rc;
}

int conn_acquire(const endpoint *ep, client_conn **out, err_t *err)
{
    pthread_mutex_lock(&client_lock);
    for (client_conn **p = &idle_pool; *p; p = &(*p)->next) {
        if (strcmp((*p)->label, ep->label) == 0) {
            client_conn *c = *p;
            *p = c->next;
            pthread_mutex_unlock(&client_lock);
            c->next = NULL;
            c->reused = 1;
            if (c->writer.packet_size != (client_packet_size() & ~(size_t)7) &&
                wire_set_packet_size(&c->writer, client_packet_size(), err) != 0) {
                conn_discard(c);
                return err->code;
            }
            *out = c;
            return 0;
        }
    }
    pthread_mutex_unlock(&client_lock);

    client_conn *c = calloc(1, sizeof *c);
    if (c == NULL) return err_set(err, NUMRPC_ENOMEM, "connection");
    c->fd = sock_connect(ep->host, ep->port, CONNECT_TIMEOUT_MS, err);
    if (c->fd < 0) {
        free(c);
        return err->code;
    }
    snprintf(c->label, sizeof c->label, "%s", ep->label);
    int rc = wire_reader_init(&c->reader, c->fd, PROTO_MAX_PACKET, err);
    if (rc == 0) rc = wire_writer_init(&c->writer, c->fd, client_packet_size(), err);
    if (rc == 0) rc = send_hello(c, err);
    if (rc != 0) {
        conn_discard(c);
        return rc;
    }
    c->hello_pending = 1;
    *out = c;
    return 0;
}

void conn_release(client_conn *c)
{
    if (!wire_reader_idle(&c->reader) || c->writer.in_message) {
        conn_discard(c);
        return;
    }
    pthread_mutex_lock(&client_lock);
    c->next = idle_pool;
    idle_pool = c;
    pthread_mutex_unlock(&client_lock);
}

void conn_discard(client_conn *c)
{
    if (c == NULL) return;
    if (c->fd >= 0) close(c->fd);
    wire_reader_free(&c->reader);
    wire_writer_free(&c->writer);
    free(c);
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

/* Reads status and detail of the REPLY for call_id; on a failure status the
 * rest of the message is dropped and the server's words go into err. */
static int read_status(client_conn *c, uint32_t call_id, err_t *err)
{
    uint32_t type, id, status;
    char *detail = NULL;
    int rc = wire_next_message(&c->reader, &type, &id, err);
    /* The routine reads the call's remote files meanwhile (files.c). */
    while (rc == 0 && type == PROTO_FILE_READ && id == call_id && c->rfile_iface != NULL) {
        rc = client_files_serve(c, call_id, err);
        if (rc == 0) rc = wire_next_message(&c->reader, &type, &id, err);
    }
    client_files_detach(c);
    if (rc != 0) {
        if (rc == NUMRPC_EIO && strcmp(err->detail, "closed") == 0)
            err_set(err, NUMRPC_EIO, "%s closed the connection", c->label);
        return rc;
    }
    if (type != PROTO_REPLY || id != call_id)
        return err_set(err, NUMRPC_EPROTO, "%s sent message %u for call %u, expected a reply to call %u",
                       c->label, type, id, call_id);
    rc = wire_get_u32(&c->reader, &status, err);
    if (rc == 0) rc = wire_get_string(&c->reader, &detail, MARSHAL_MAX_STRING, err);
    if (rc != 0) return rc;
    if ((int32_t)status != NUMRPC_OK) {
        rc = wire_skip_message(&c->reader, err);
        if (rc == 0) {
            int code = (int32_t)status;
            if (code > 0 || code < NUMRPC_EINTERNAL) code = NUMRPC_ESERVER;
            rc = err_set(err, code, "%s", detail);
        }
    }
    free(detail);
    return rc;
}

int conn_finish_hello(client_conn *c, err_t *err)
{
    if (!c->hello_pending) return 0;
    /* The HELLO was the first message on the connection; its call id is
     * whatever we sent, so accept the first reply. */
    uint32_t type, id, status, version, max_packet;
    char *detail = NULL, *server = NULL;
    int rc = wire_next_message(&c->reader, &type, &id, err);
    if (rc != 0) {
        if (rc == NUMRPC_EIO) err_set(err, NUMRPC_EIO, "%s closed the connection during the handshake", c->label);
        return rc;
    }
    if (type != PROTO_REPLY) return err_set(err, NUMRPC_EPROTO, "%s: bad handshake reply", c->label);
    rc = wire_get_u32(&c->reader, &status, err);
    if (rc == 0) rc = wire_get_string(&c->reader, &detail, MARSHAL_MAX_STRING, err);
    if (rc == 0 && (int32_t)status != NUMRPC_OK) {
        rc = wire_skip_message(&c->reader, err);
        if (rc == 0) rc = err_set(err, (int32_t)status, "%s: %s", c->label, detail);
    } else if (rc == 0) {
        rc = wire_get_u32(&c->reader, &version, err);
        if (rc == 0) rc = wire_get_u32(&c->reader, &max_packet, err);
        if (rc == 0) rc = wire_get_string(&c->reader, &server, IFACE_MAX_TEXT, err);
        if (rc == 0) rc = wire_expect_end(&c->reader, err);
    }
    free(detail);
    free(server);
    if (rc == 0) c->hello_pending = 0;
    return rc;
}

int conn_read_reply_status(client_conn *c, uint32_t call_id, err_t *err)
{
    int rc = conn_finish_hello(c, err);
    if (rc != 0) return rc;
    return read_status(c, call_id, err);
}
