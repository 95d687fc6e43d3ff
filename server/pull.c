/* pull.c -- DATA_PULL's fetch: a new handle filled from a ticket's handle on
 * another server, over a client connection this worker opens and closes. */
#include "pull.h"

#include <stdio.h>
#include <string.h>

#include "marshal.h"
#include "peer.h"
#include "protocol.h"
#include "sock.h"

#define PULL_CONNECT_MS 2000

/* Whether source ("host:port") is an entry of list ("a:1,b:2", spaces allowed). */
static int listed(const char *list, const char *source)
{
    size_t n = strlen(source);
    for (const char *p = list; *p;) {
        while (*p == ',' || *p == ' ') p++;
        size_t len = strcspn(p, ", ");
        if (len == n && len > 0 && strncmp(p, source, n) == 0) return 1;
        p += len;
    }
    return 0;
}

/* The time the whole fetch may take, in ms: the client's limit, at most
 * --io-timeout (which also bounds a server with no client limit). */
static int limit_ms(const server_config *cfg, uint32_t asked)
{
    int own = cfg->io_timeout_ms > 0 ? cfg->io_timeout_ms : 60000;
    return asked > 0 && asked < (uint32_t)own ? (int)asked : own;
}

/* Reads the source's reply to the GET into map (the new handle's pages,
 * shaped want): the shape must be the announced one, and the elements
 * exactly rows x cols (marshal_read_block checks the count first). */
static int read_elements(msg_conn *c, uint32_t get_id, const msg_data_shape *want, void *map, err_t *err)
{
    msg_data_shape got;
    int rc = msg_read_reply(&c->reader, get_id, c->label, err);
    if (rc == 0) rc = msg_read_data_get_reply_header(&c->reader, &got, err);
    if (rc == 0 && (got.type != want->type || got.rows != want->rows || got.cols != want->cols))
        return err_set(err, NUMRPC_EPROTO, "the source sent a handle of type %u shaped %llu x %llu; %u, %llu x %llu "
                       "was announced", got.type, (unsigned long long)got.rows, (unsigned long long)got.cols,
                       want->type, (unsigned long long)want->rows, (unsigned long long)want->cols);
    iface_param p;
    iface_shape sh;
    msg_data_as_param(want, &p, &sh);
    if (rc == 0) rc = marshal_read_block(&c->reader, &p, &sh, map, err);
    if (rc == 0) rc = wire_expect_end(&c->reader, err);
    return rc;
}

/* Connects to the source and redeems the ticket into map. */
static int fetch(const server_config *cfg, const msg_data_pull *q, void *map, err_t *err)
{
    char host[MSG_DATA_SOURCE_MAX + 1];
    int port, ms = limit_ms(cfg, q->deadline_ms);
    double deadline = sock_now() + ms / 1000.0;
    tls_context *tls = NULL;
    msg_conn c;
    int rc = msg_data_split_source(q->source, host, sizeof host, &port, err);
    if (rc == 0 && cfg->peer_tls_ca[0] &&
        (tls = tls_client_context_new(cfg->peer_tls_ca, cfg->tls_cert[0] ? cfg->tls_cert : NULL,
                                      cfg->tls_key[0] ? cfg->tls_key : NULL, err)) == NULL)
        rc = err->code;
    if (rc == 0) rc = peer_open(&c, tls, host, port, NULL, cfg->peer_token_file, "numrpc-server pull",
                                ms < PULL_CONNECT_MS ? ms : PULL_CONNECT_MS, ms, err);
    if (rc == NUMRPC_EAUTH && !cfg->peer_token_file[0]) /* the source's words are for clients */
        err_prefix(err, "this server pulls with no token (--peer-token-file)");
    if (rc == 0) {
        wire_reader_set_deadline(&c.reader, deadline);
        wire_writer_set_deadline(&c.writer, deadline);
        uint32_t id = msg_conn_next_id(&c);
        rc = msg_write_data_get(&c.writer, id, &q->ticket, err);
        if (rc == 0) rc = read_elements(&c, id, &q->shape, map, err);
        msg_conn_free(&c);
    }
    tls_context_free(tls);
    return rc;
}

int pull_fetch(const server_config *cfg, const char *owner, const msg_data_pull *q, handle_ref *ref, err_t *err)
{
    if (!listed(cfg->pull_from, q->source))
        return err_set(err, NUMRPC_EAUTH, "this server fetches handles only from the servers of its --pull-from "
                       "(%s); %s is not one", cfg->pull_from[0] ? cfg->pull_from : "none", q->source);
    int rc = handles_reserve(server_handles, owner, &q->shape, ref, err);
    if (rc != 0) return rc;
    void *map = NULL;
    rc = handles_create_file(server_handles, ref, q->shape.rows == q->shape.ld, err);
    if (rc == 0 && (map = handles_map(server_handles, ref, HANDLE_MAP_FILL, err)) == NULL) rc = err->code;
    if (rc == 0) rc = fetch(cfg, q, map, err);
    if (map) handles_unmap(server_handles, ref, map);
    if (rc != 0) {
        handles_discard(server_handles, ref);
        err_prefix(err, q->source);
        return rc;
    }
    handles_publish(server_handles, ref);
    handles_count_moved(server_handles, msg_data_wire_elems(&q->shape) * iface_type_size(q->shape.type), 0);
    return 0;
}
