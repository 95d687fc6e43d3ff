/* msg_data.c -- the writers and readers of the handle messages and the
 * CALL's handle block; every field from a peer is checked here before use. */
#include "msg_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "protocol.h"

#define MAX_HANDLE_BYTES (1ull << 62)

uint64_t msg_data_mem_elems(const msg_data_shape *s)
{
    return s->ld * s->cols;
}

uint64_t msg_data_wire_elems(const msg_data_shape *s)
{
    return s->rows * s->cols;
}

void msg_data_as_param(const msg_data_shape *s, iface_param *p, iface_shape *sh)
{
    memset(p, 0, sizeof *p);
    memset(sh, 0, sizeof *sh);
    p->name = "data";
    p->type = s->type;
    p->mode = IFACE_IN;
    p->rank = 2;
    sh->size[0] = (int64_t)s->ld;
    sh->count[0] = (int64_t)s->rows;
    sh->size[1] = sh->count[1] = (int64_t)s->cols;
    sh->stride[0] = sh->stride[1] = 1;
    sh->mem_elems = msg_data_mem_elems(s);
    sh->wire_elems = msg_data_wire_elems(s);
    sh->bound = -1;
}

/* A shape a peer sent: a type with elements, sizes that fit. */
static int check_shape(const msg_data_shape *s, err_t *err)
{
    int numeric = s->type >= NUMRPC_T_CHAR && s->type <= NUMRPC_T_DCOMPLEX;
    uint64_t elems, bytes;
    if (!numeric) return err_set(err, NUMRPC_EPROTO, "a handle of element type %u", s->type);
    if (s->rows == 0 || s->cols == 0 || s->rows > s->ld)
        return err_set(err, NUMRPC_EPROTO, "a handle shaped %llu x %llu with leading dimension %llu",
                       (unsigned long long)s->rows, (unsigned long long)s->cols, (unsigned long long)s->ld);
    if (__builtin_mul_overflow(s->ld, s->cols, &elems) ||
        __builtin_mul_overflow(elems, (uint64_t)iface_type_size(s->type), &bytes) || bytes > MAX_HANDLE_BYTES)
        return err_set(err, NUMRPC_EPROTO, "a handle of %llu x %llu elements is too big",
                       (unsigned long long)s->ld, (unsigned long long)s->cols);
    return 0;
}

static int put_shape(wire_writer *w, const msg_data_shape *s, err_t *err)
{
    int rc = wire_put_u32(w, s->type, err);
    if (rc == 0) rc = wire_put_u64(w, s->rows, err);
    if (rc == 0) rc = wire_put_u64(w, s->cols, err);
    if (rc == 0) rc = wire_put_u64(w, s->ld, err);
    return rc;
}

static int get_shape(wire_reader *r, msg_data_shape *s, err_t *err)
{
    int rc = wire_get_u32(r, &s->type, err);
    if (rc == 0) rc = wire_get_u64(r, &s->rows, err);
    if (rc == 0) rc = wire_get_u64(r, &s->cols, err);
    if (rc == 0) rc = wire_get_u64(r, &s->ld, err);
    return rc == 0 ? check_shape(s, err) : rc;
}

static int put_id(wire_writer *w, const msg_data_id *id, err_t *err)
{
    return wire_put(w, id->b, MSG_DATA_ID_SIZE, err);
}

static int get_id(wire_reader *r, msg_data_id *id, err_t *err)
{
    return wire_get(r, id->b, MSG_DATA_ID_SIZE, err);
}

void msg_data_id_hex(const msg_data_id *id, char out[2 * MSG_DATA_ID_SIZE + 1])
{
    for (int i = 0; i < MSG_DATA_ID_SIZE; i++) snprintf(out + 2 * i, 3, "%02x", id->b[i]);
}

/* ---- DATA_PUT ---- */

int msg_write_data_put_header(wire_writer *w, uint32_t call_id, const msg_data_shape *s,
                              uint32_t flags, err_t *err)
{
    wire_begin(w, PROTO_DATA_PUT, call_id);
    int rc = put_shape(w, s, err);
    if (rc == 0) rc = wire_put_u32(w, flags, err);
    return rc;
}

int msg_read_data_put_header(wire_reader *r, msg_data_shape *s, uint32_t *flags, err_t *err)
{
    int rc = get_shape(r, s, err);
    if (rc == 0) rc = wire_get_u32(r, flags, err);
    if (rc == 0 && (*flags & ~MSG_DATA_EMPTY) != 0)
        rc = err_set(err, NUMRPC_EPROTO, "DATA_PUT with unknown flags 0x%x", *flags);
    return rc;
}

int msg_write_data_put_reply(wire_writer *w, uint32_t call_id, const msg_data_id *id,
                             uint32_t lease_ms, err_t *err)
{
    int rc = msg_reply_begin(w, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = put_id(w, id, err);
    if (rc == 0) rc = wire_put_u32(w, lease_ms, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_data_put_reply(wire_reader *r, msg_data_id *id, uint32_t *lease_ms, err_t *err)
{
    int rc = get_id(r, id, err);
    if (rc == 0) rc = wire_get_u32(r, lease_ms, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    return rc;
}

/* ---- DATA_GET ---- */

int msg_write_data_get(wire_writer *w, uint32_t call_id, const msg_data_id *id, err_t *err)
{
    wire_begin(w, PROTO_DATA_GET, call_id);
    int rc = put_id(w, id, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_data_get(wire_reader *r, msg_data_id *id, err_t *err)
{
    int rc = get_id(r, id, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    return rc;
}

int msg_write_data_get_reply_header(wire_writer *w, uint32_t call_id, const msg_data_shape *s,
                                    err_t *err)
{
    int rc = msg_reply_begin(w, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = put_shape(w, s, err);
    return rc;
}

int msg_read_data_get_reply_header(wire_reader *r, msg_data_shape *s, err_t *err)
{
    return get_shape(r, s, err);
}

/* ---- DATA_FREE and DATA_RENEW ---- */

int msg_write_data_ids(wire_writer *w, uint32_t type, uint32_t call_id, const msg_data_ids *l,
                       err_t *err)
{
    if (type != PROTO_DATA_FREE && type != PROTO_DATA_RENEW)
        return err_set(err, NUMRPC_EINTERNAL, "msg_write_data_ids: type %u", type);
    if (l->count == 0 || l->count > MSG_DATA_MAX_IDS)
        return err_set(err, NUMRPC_EINVAL, "%u handles in one message (1 to %u)", l->count, MSG_DATA_MAX_IDS);
    wire_begin(w, type, call_id);
    int rc = wire_put_u32(w, l->count, err);
    for (uint32_t i = 0; rc == 0 && i < l->count; i++) rc = put_id(w, &l->ids[i], err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_data_ids(wire_reader *r, msg_data_ids *l, err_t *err)
{
    l->ids = NULL;
    int rc = wire_get_u32(r, &l->count, err);
    if (rc == 0 && (l->count == 0 || l->count > MSG_DATA_MAX_IDS))
        return err_set(err, NUMRPC_EPROTO, "%u handles in one message (1 to %u)", l->count, MSG_DATA_MAX_IDS);
    if (rc == 0 && (l->ids = malloc(l->count * sizeof *l->ids)) == NULL)
        return err_set(err, NUMRPC_ENOMEM, "a list of %u handles", l->count);
    for (uint32_t i = 0; rc == 0 && i < l->count; i++) rc = get_id(r, &l->ids[i], err);
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc != 0) {
        free(l->ids);
        l->ids = NULL;
    }
    return rc;
}

int msg_write_data_ids_reply(wire_writer *w, uint32_t call_id, uint32_t lease_ms,
                             const int32_t *statuses, uint32_t count, err_t *err)
{
    int rc = msg_reply_begin(w, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = wire_put_u32(w, lease_ms, err);
    if (rc == 0) rc = wire_put_u32(w, count, err);
    for (uint32_t i = 0; rc == 0 && i < count; i++) rc = wire_put_u32(w, (uint32_t)statuses[i], err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_data_ids_reply(wire_reader *r, uint32_t *lease_ms, int32_t *statuses, uint32_t want,
                            err_t *err)
{
    uint32_t count;
    int rc = wire_get_u32(r, lease_ms, err);
    if (rc == 0) rc = wire_get_u32(r, &count, err);
    if (rc == 0 && count != want)
        return err_set(err, NUMRPC_EPROTO, "the server answered for %u handles, %u were named", count, want);
    for (uint32_t i = 0; rc == 0 && i < count; i++) {
        uint32_t v;
        rc = wire_get_u32(r, &v, err);
        int32_t code = (int32_t)v;
        if (rc == 0 && !numrpc_error_valid(code))
            rc = err_set(err, NUMRPC_EPROTO, "a handle status %d that is no numrpc code", code);
        if (rc == 0) statuses[i] = code;
    }
    if (rc == 0) rc = wire_expect_end(r, err);
    return rc;
}

/* ---- DATA_GRANT ---- */

int msg_write_data_grant(wire_writer *w, uint32_t call_id, const msg_data_id *id, err_t *err)
{
    wire_begin(w, PROTO_DATA_GRANT, call_id);
    int rc = put_id(w, id, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_data_grant(wire_reader *r, msg_data_id *id, err_t *err)
{
    return msg_read_data_get(r, id, err); /* the same body: one id */
}

int msg_write_data_grant_reply(wire_writer *w, uint32_t call_id, const msg_data_id *ticket, uint32_t ttl_ms,
                               err_t *err)
{
    return msg_write_data_put_reply(w, call_id, ticket, ttl_ms, err); /* 16 bytes and a u32, as PUT's */
}

int msg_read_data_grant_reply(wire_reader *r, msg_data_id *ticket, uint32_t *ttl_ms, err_t *err)
{
    return msg_read_data_put_reply(r, ticket, ttl_ms, err);
}

/* ---- DATA_PULL ---- */

int msg_data_split_source(const char *source, char *host, size_t host_len, int *port, err_t *err)
{
    const char *colon = strrchr(source, ':');
    size_t n = colon ? (size_t)(colon - source) : 0;
    const char *h = source;
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']') h++, n -= 2;
    char *end = NULL;
    long p = colon ? strtol(colon + 1, &end, 10) : 0;
    int bad = colon == NULL || n == 0 || n >= host_len || end == colon + 1 || *end != '\0' || p < 1 || p > 65535;
    for (size_t i = 0; !bad && i < n; i++) bad = h[i] <= ' ' || h[i] == 0x7f || h[i] == '/' || h[i] == '[';
    if (bad) return err_set(err, NUMRPC_EINVAL, "a data source \"%.80s\" that is not host:port", source);
    memcpy(host, h, n);
    host[n] = '\0';
    *port = (int)p;
    return 0;
}

int msg_write_data_pull(wire_writer *w, uint32_t call_id, const msg_data_pull *q, err_t *err)
{
    wire_begin(w, PROTO_DATA_PULL, call_id);
    int rc = wire_put_string(w, q->source, err);
    if (rc == 0) rc = put_id(w, &q->ticket, err);
    if (rc == 0) rc = put_shape(w, &q->shape, err);
    if (rc == 0) rc = wire_put_u32(w, q->deadline_ms, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_data_pull(wire_reader *r, msg_data_pull *q, err_t *err)
{
    char host[MSG_DATA_SOURCE_MAX + 1];
    int port;
    int rc = wire_get_string_into(r, q->source, sizeof q->source, MSG_DATA_SOURCE_MAX, err);
    if (rc == NUMRPC_ELIMIT) rc = err_set(err, NUMRPC_EPROTO, "DATA_PULL: a source longer than %d bytes",
                                          MSG_DATA_SOURCE_MAX);
    err_t why;
    if (rc == 0 && msg_data_split_source(q->source, host, sizeof host, &port, &why) != 0)
        rc = err_set(err, NUMRPC_EPROTO, "DATA_PULL: %s", why.detail);
    if (rc == 0) rc = get_id(r, &q->ticket, err);
    if (rc == 0) rc = get_shape(r, &q->shape, err);
    if (rc == 0) rc = wire_get_u32(r, &q->deadline_ms, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    return rc;
}

/* ---- The CALL's handle block ---- */

int msg_write_call_handles(wire_writer *w, const msg_call_handle *h, uint32_t n, err_t *err)
{
    int rc = wire_put_u32(w, n, err);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        rc = wire_put_u32(w, h[i].param, err);
        if (rc == 0) rc = put_id(w, &h[i].id, err);
    }
    return rc;
}

int msg_read_call_handles(wire_reader *r, uint32_t nargs, msg_call_handle *h, uint32_t max,
                          uint32_t *n, err_t *err)
{
    int rc = wire_get_u32(r, n, err);
    if (rc == 0 && (*n == 0 || *n > max || *n > nargs))
        return err_set(err, NUMRPC_EPROTO, "a call naming %u handles (1 to %u)", *n, max < nargs ? max : nargs);
    for (uint32_t i = 0; rc == 0 && i < *n; i++) {
        rc = wire_get_u32(r, &h[i].param, err);
        if (rc == 0 && (h[i].param >= nargs || (i > 0 && h[i].param <= h[i - 1].param)))
            return err_set(err, NUMRPC_EPROTO, "a handle for argument %u (of %u, in increasing order)",
                           h[i].param, nargs);
        if (rc == 0) rc = get_id(r, &h[i].id, err);
    }
    return rc;
}
