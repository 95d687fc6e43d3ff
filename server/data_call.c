/* data_call.c -- a worker's service of the handle messages DATA_PUT to
 * DATA_PULL (docs/protocol.md "Handles") on handles.c's store. */
#define _GNU_SOURCE
#include "data_call.h"

#include <stdlib.h>

#include "handles.h"
#include "marshal.h"
#include "msg_data.h"
#include "protocol.h"
#include "pull.h"
#include "reply.h"

/* Drops the rest of the request, then answers with the error in *why. */
static int refuse(session *s, uint32_t call_id, const err_t *why, err_t *err)
{
    int rc = wire_reader_in_message(&s->conn.reader) ? wire_skip_message(&s->conn.reader, err) : 0;
    if (rc != 0) return rc;
    return reply_error(&s->conn.writer, call_id, why->code, why->detail, err);
}

/* A request that failed to read (rc, err): one that broke the protocol
 * inside a message that still frames is refused, and the connection goes
 * on; anything else (the peer left, a stall, an aborted message) ends it. */
static int read_failed(session *s, uint32_t call_id, int rc, err_t *err)
{
    if (err->code != NUMRPC_EPROTO) return rc;
    err_t why = *err;
    return refuse(s, call_id, &why, err);
}

/* Makes the new handle's file and fills it from the request unless empty.
 * 0, or an error (the request's rest is then the caller's to judge). */
static int fill_new(session *s, handle_ref *ref, int empty, err_t *err)
{
    /* a spare's pages only when the put writes every byte */
    int recycle = !empty && ref->shape.rows == ref->shape.ld;
    if (handles_create_file(server_handles, ref, recycle, err) != 0) return err->code;
    if (empty) return 0;
    void *map = handles_map(server_handles, ref, HANDLE_MAP_FILL, err);
    if (map == NULL) return err->code;
    iface_param p;
    iface_shape sh;
    msg_data_as_param(&ref->shape, &p, &sh);
    int rc = marshal_read_block(&s->conn.reader, &p, &sh, map, err); /* straight into the file's pages */
    handles_unmap(server_handles, ref, map);
    return rc;
}

/* DATA_PUT: the shape is judged against the budgets before any byte of
 * memory is given; a put cut short leaves nothing behind. */
static int serve_put(session *s, uint32_t call_id, err_t *err)
{
    msg_data_shape shape;
    uint32_t flags;
    int rc = msg_read_data_put_header(&s->conn.reader, &shape, &flags, err);
    if (rc != 0) return read_failed(s, call_id, rc, err);
    handle_ref ref;
    err_t why;
    if (handles_reserve(server_handles, s->identity, s->account, &shape, &ref, &why) != 0) return refuse(s, call_id, &why, err);
    rc = fill_new(s, &ref, (flags & MSG_DATA_EMPTY) != 0, err);
    if (rc == 0) rc = wire_expect_end(&s->conn.reader, err);
    if (rc != 0) {
        handles_discard(server_handles, &ref);
        return err->code == NUMRPC_ESERVER ? (why = *err, refuse(s, call_id, &why, err)) : read_failed(s, call_id, rc, err);
    }
    handles_publish(server_handles, &ref);
    return msg_write_data_put_reply(&s->conn.writer, call_id, &ref.id, handles_lease_ms(server_handles), err);
}

/* DATA_GET: the elements go from the file's pages to the socket.  The id
 * names one of the caller's handles, or is a ticket (DATA_GRANT) that
 * anyone may use once. */
static int serve_get(session *s, uint32_t call_id, err_t *err)
{
    msg_data_id id;
    handle_ref ref;
    err_t why;
    int rc = msg_read_data_get(&s->conn.reader, &id, err);
    if (rc != 0) return read_failed(s, call_id, rc, err);
    void *map = NULL;
    int ticket = 0;
    if (handles_find(server_handles, s->identity, &id, &ref, &why) != 0 &&
        !(ticket = handles_redeem(server_handles, &id, &ref)))
        return refuse(s, call_id, &why, err);
    if ((map = handles_map(server_handles, &ref, HANDLE_MAP_READ, &why)) == NULL)
        return refuse(s, call_id, &why, err);
    iface_param p;
    iface_shape sh;
    msg_data_as_param(&ref.shape, &p, &sh);
    rc = msg_write_data_get_reply_header(&s->conn.writer, call_id, &ref.shape, err);
    if (rc == 0) rc = marshal_write_block(&s->conn.writer, &p, &sh, map, err);
    if (rc == 0) rc = wire_end(&s->conn.writer, err);
    handles_unmap(server_handles, &ref, map);
    if (rc == 0 && ticket)
        handles_count_moved(server_handles, 0, msg_data_wire_elems(&ref.shape) * iface_type_size(ref.shape.type));
    if (rc != 0 && !wire_writer_idle(&s->conn.writer)) {
        err_t ignored;
        wire_abort(&s->conn.writer, &ignored);
    }
    return rc;
}

/* DATA_GRANT: a one-time ticket for one of the caller's handles. */
static int serve_grant(session *s, uint32_t call_id, err_t *err)
{
    msg_data_id id, ticket;
    uint32_t ttl_ms;
    err_t why;
    int rc = msg_read_data_grant(&s->conn.reader, &id, err);
    if (rc != 0) return read_failed(s, call_id, rc, err);
    if (handles_grant(server_handles, s->identity, s->account, &id, &ticket, &ttl_ms, &why) != 0)
        return refuse(s, call_id, &why, err);
    return msg_write_data_grant_reply(&s->conn.writer, call_id, &ticket, ttl_ms, err);
}

/* DATA_PULL: a new handle of the caller's, fetched from another server. */
static int serve_pull(session *s, uint32_t call_id, err_t *err)
{
    msg_data_pull q;
    handle_ref ref;
    err_t why;
    int rc = msg_read_data_pull(&s->conn.reader, &q, err);
    if (rc != 0) return read_failed(s, call_id, rc, err);
    if (pull_fetch(s->cfg, s->identity, s->account, &q, &ref, &why) != 0) return refuse(s, call_id, &why, err);
    return msg_write_data_put_reply(&s->conn.writer, call_id, &ref.id, handles_lease_ms(server_handles), err);
}

/* DATA_FREE and DATA_RENEW: a status per id, in the request's order. */
static int serve_ids(session *s, uint32_t type, uint32_t call_id, err_t *err)
{
    msg_data_ids l;
    int rc = msg_read_data_ids(&s->conn.reader, &l, err);
    if (rc != 0) return read_failed(s, call_id, rc, err);
    int32_t *statuses = malloc(l.count * sizeof *statuses); /* freed here */
    if (statuses == NULL) {
        free(l.ids);
        err_t why;
        err_set(&why, NUMRPC_ENOMEM, "statuses of %u handles", l.count);
        return refuse(s, call_id, &why, err);
    }
    for (uint32_t i = 0; i < l.count; i++)
        statuses[i] = type == PROTO_DATA_FREE ? handles_free(server_handles, s->identity, &l.ids[i])
                                              : handles_renew(server_handles, s->identity, &l.ids[i]);
    rc = msg_write_data_ids_reply(&s->conn.writer, call_id, handles_lease_ms(server_handles), statuses, l.count,
                                  err);
    free(statuses);
    free(l.ids);
    return rc;
}

int data_call_serve(session *s, uint32_t type, uint32_t call_id, err_t *err)
{
    if (server_handles == NULL) {
        err_t why;
        err_set(&why, NUMRPC_ESERVER, "this server keeps no handles");
        return refuse(s, call_id, &why, err);
    }
    switch (type) {
    case PROTO_DATA_PUT: return serve_put(s, call_id, err);
    case PROTO_DATA_GET: return serve_get(s, call_id, err);
    case PROTO_DATA_GRANT: return serve_grant(s, call_id, err);
    case PROTO_DATA_PULL: return serve_pull(s, call_id, err);
    default: return serve_ids(s, type, call_id, err);
    }
}
