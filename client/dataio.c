/* dataio.c -- data-handle requests on pooled connections: the message
 * writers and readers of common/msg_data.c driven for the client. */
#include "dataio.h"

#include "conn.h"
#include "marshal.h"
#include "protocol.h"

/* One request: write it (begun and ended, call id given), then read the
 * rest of an OK reply. */
typedef struct request {
    int (*write)(wire_writer *w, uint32_t call_id, const void *ctx, err_t *err);
    int (*read)(wire_reader *r, void *ctx, err_t *err);
    const void *in;
    void *out;
} request;

static int exchange(const endpoint *ep, const request *q, double deadline, numrpc_call_info *info, err_t *err)
{
    client_conn *c = NULL;
    int rc;
    for (int attempt = 0;; attempt++) {
        rc = conn_acquire(ep, deadline, &c, err);
        if (rc != 0) return rc;
        if (!c->reused) {
            info->connections++;
            info->tls_resumed += c->tls_resumed != 0;
        }
        uint64_t out0 = wire_writer_bytes(&c->m.writer), keepalives0 = wire_reader_keepalives(&c->m.reader);
        uint32_t call_id = client_next_call_id();
        rc = q->write(&c->m.writer, call_id, q->in, err);
        if (rc == 0) rc = conn_read_reply_status(c, call_id, err);
        if (rc == 0) rc = q->read(&c->m.reader, q->out, err);
        if (rc != 0) rc = conn_explain_failure(c, rc, err);
        info->bytes_sent += wire_writer_bytes(&c->m.writer) - out0;
        if (rc == 0) info->bytes_received += conn_reply_bytes(c, keepalives0);
        if (rc == NUMRPC_EIO && c->reused && attempt == 0) { /* stale pooled connection */
            conn_discard(c);
            c = NULL;
            err_clear(err);
            continue;
        }
        break;
    }
    conn_done(c, rc);
    return rc;
}

/* ---- DATA_PUT ---- */

typedef struct put_in {
    const msg_data_shape *shape;
    const void *a;
} put_in;

typedef struct put_out {
    msg_data_id *id;
    uint32_t *lease_ms;
} put_out;

static int write_put(wire_writer *w, uint32_t call_id, const void *ctx, err_t *err)
{
    const put_in *in = ctx;
    int rc = msg_write_data_put_header(w, call_id, in->shape, in->a ? 0 : MSG_DATA_EMPTY, err);
    if (rc == 0 && in->a) {
        iface_param p;
        iface_shape sh;
        msg_data_as_param(in->shape, &p, &sh);
        rc = marshal_write_block(w, &p, &sh, in->a, err);
    }
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

static int read_put(wire_reader *r, void *ctx, err_t *err)
{
    put_out *out = ctx;
    return msg_read_data_put_reply(r, out->id, out->lease_ms, err);
}

int dataio_put(const endpoint *ep, const msg_data_shape *s, const void *a, double deadline, msg_data_id *id,
               uint32_t *lease_ms, numrpc_call_info *info, err_t *err)
{
    put_in in = {s, a};
    put_out out = {id, lease_ms};
    request q = {write_put, read_put, &in, &out};
    return exchange(ep, &q, deadline, info, err);
}

/* ---- DATA_GET ---- */

typedef struct get_out {
    const msg_data_shape *want;
    void *a;
    uint64_t ld;
} get_out;

static int write_get(wire_writer *w, uint32_t call_id, const void *ctx, err_t *err)
{
    return msg_write_data_get(w, call_id, ctx, err);
}

static int read_get(wire_reader *r, void *ctx, err_t *err)
{
    get_out *out = ctx;
    msg_data_shape got;
    int rc = msg_read_data_get_reply_header(r, &got, err);
    if (rc != 0) return rc;
    const msg_data_shape *w = out->want;
    if (got.type != w->type || got.rows != w->rows || got.cols != w->cols)
        return err_set(err, NUMRPC_EPROTO, "the server sent a handle of type %u shaped %llu x %llu for one of type %u "
                       "shaped %llu x %llu", got.type, (unsigned long long)got.rows, (unsigned long long)got.cols,
                       w->type, (unsigned long long)w->rows, (unsigned long long)w->cols);
    msg_data_shape into = {w->type, w->rows, w->cols, out->ld}; /* the caller's layout */
    iface_param p;
    iface_shape sh;
    msg_data_as_param(&into, &p, &sh);
    rc = marshal_read_block(r, &p, &sh, out->a, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    return rc;
}

int dataio_get(const endpoint *ep, const msg_data_id *id, const msg_data_shape *want, void *a, uint64_t ld,
               double deadline, numrpc_call_info *info, err_t *err)
{
    get_out out = {want, a, ld};
    request q = {write_get, read_get, id, &out};
    return exchange(ep, &q, deadline, info, err);
}

/* ---- DATA_FREE and DATA_RENEW ---- */

typedef struct ids_in {
    uint32_t type;
    msg_data_ids list;
} ids_in;

typedef struct ids_out {
    int32_t *statuses;
    uint32_t want;
    uint32_t *lease_ms;
} ids_out;

static int write_ids(wire_writer *w, uint32_t call_id, const void *ctx, err_t *err)
{
    const ids_in *in = ctx;
    return msg_write_data_ids(w, in->type, call_id, &in->list, err);
}

static int read_ids(wire_reader *r, void *ctx, err_t *err)
{
    ids_out *out = ctx;
    return msg_read_data_ids_reply(r, out->lease_ms, out->statuses, out->want, err);
}

int dataio_ids(const endpoint *ep, uint32_t type, const msg_data_id *ids, uint32_t n, int32_t *statuses,
               uint32_t *lease_ms, double deadline, numrpc_call_info *info, err_t *err)
{
    int rc = 0;
    for (uint32_t at = 0; rc == 0 && at < n; at += MSG_DATA_MAX_IDS) {
        uint32_t count = n - at < MSG_DATA_MAX_IDS ? n - at : MSG_DATA_MAX_IDS;
        ids_in in = {type, {count, (msg_data_id *)(uintptr_t)(ids + at)}}; /* the writer only reads them */
        ids_out out = {statuses + at, count, lease_ms};
        request q = {write_ids, read_ids, &in, &out};
        rc = exchange(ep, &q, deadline, info, err);
    }
    return rc;
}

/* ---- DATA_GRANT and DATA_PULL: a handle moved between servers ---- */

static int write_grant(wire_writer *w, uint32_t call_id, const void *ctx, err_t *err)
{
    return msg_write_data_grant(w, call_id, ctx, err);
}

static int read_grant(wire_reader *r, void *ctx, err_t *err)
{
    put_out *out = ctx; /* the ticket and its time to live: PUT's reply */
    return msg_read_data_grant_reply(r, out->id, out->lease_ms, err);
}

int dataio_grant(const endpoint *ep, const msg_data_id *id, double deadline, msg_data_id *ticket, uint32_t *ttl_ms,
                 numrpc_call_info *info, err_t *err)
{
    put_out out = {ticket, ttl_ms};
    request q = {write_grant, read_grant, id, &out};
    return exchange(ep, &q, deadline, info, err);
}

static int write_pull(wire_writer *w, uint32_t call_id, const void *ctx, err_t *err)
{
    return msg_write_data_pull(w, call_id, ctx, err);
}

int dataio_pull(const endpoint *ep, const msg_data_pull *pull, double deadline, msg_data_id *id, uint32_t *lease_ms,
                numrpc_call_info *info, err_t *err)
{
    put_out out = {id, lease_ms};
    request q = {write_pull, read_put, pull, &out};
    return exchange(ep, &q, deadline, info, err);
}
