/* msg.c -- the connection object and the messages every peer speaks: one
 * writer and one reader per message, so that the two ends cannot drift. */
#include "msg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>


/* ---- The connection ---- */

int msg_conn_init(msg_conn *c, size_t packet_size, err_t *err)
{
    memset(c, 0, sizeof *c);
    c->tp = transport_none();
    c->next_id = 1;
    int rc = wire_reader_init(&c->reader, -1, PROTO_MAX_PACKET, err);
    if (rc == 0) rc = wire_writer_init(&c->writer, -1, packet_size, err);
    if (rc != 0) msg_conn_free(c);
    return rc;
}

void msg_conn_attach(msg_conn *c, transport tp, const char *label)
{
    c->tp = tp;
    wire_reader_attach(&c->reader, tp);
    wire_writer_attach(&c->writer, tp);
    if (label != c->label) snprintf(c->label, sizeof c->label, "%s", label ? label : "");
}

void msg_conn_close(msg_conn *c)
{
    transport_close(&c->tp);
    msg_conn_attach(c, transport_none(), c->label);
}

void msg_conn_wipe(msg_conn *c)
{
    wire_reader_wipe(&c->reader);
    wire_writer_wipe(&c->writer);
}

void msg_conn_free(msg_conn *c)
{
    transport_close(&c->tp);
    wire_reader_free(&c->reader);
    wire_writer_free(&c->writer);
}

int msg_conn_idle(const msg_conn *c)
{
    return wire_reader_idle(&c->reader) && wire_writer_idle(&c->writer);
}

uint32_t msg_conn_next_id(msg_conn *c)
{
    if (c->next_id == 0) c->next_id = 1;
    return c->next_id++;
}

int msg_conn_fd(const msg_conn *c)
{
    return c->tp.fd;
}

void msg_conn_shutdown(msg_conn *c)
{
    if (c->tp.fd >= 0) shutdown(c->tp.fd, SHUT_RDWR);
}

/* ---- REPLY ---- */

int msg_reply_begin(wire_writer *w, uint32_t call_id, int code, const char *detail, err_t *err)
{
    wire_begin(w, PROTO_REPLY, call_id);
    int rc = wire_put_u32(w, (uint32_t)code, err);
    if (rc == 0) rc = wire_put_string(w, detail, err);
    return rc;
}

int msg_reply_simple(wire_writer *w, uint32_t call_id, int code, const char *detail, err_t *err)
{
    int rc = msg_reply_begin(w, call_id, code, detail, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

/* "closed" from the framing means the peer left between messages. */
static int name_closed(int rc, const char *label, const char *when, err_t *err)
{
    if (rc == NUMRPC_EIO && strcmp(err->detail, "closed") == 0)
        err_set(err, NUMRPC_EIO, "%s closed the connection%s", label, when);
    return rc;
}

/* Status and detail of a REPLY whose header was read; a failure status
 * ends the message and becomes the error, its detail prefixed with the
 * peer's label when name_peer is set. */
static int read_status(wire_reader *r, uint32_t type, uint32_t call_id, uint32_t want_id,
                       const char *label, int name_peer, err_t *err)
{
    uint32_t status;
    char *detail = NULL;
    if (type != PROTO_REPLY || call_id != want_id)
        return err_set(err, NUMRPC_EPROTO, "%s sent message %u for call %u, expected a reply to call %u",
                       label, type, call_id, want_id);
    int rc = wire_get_u32(r, &status, err);
    if (rc == 0) rc = wire_get_string(r, &detail, WIRE_MAX_STRING, err);
    if (rc == 0 && (int32_t)status != NUMRPC_OK) {
        rc = wire_skip_message(r, err);
        if (rc == 0) {
            int code = (int32_t)status;
            if (!numrpc_error_valid(code))
                rc = err_set(err, NUMRPC_EPROTO, "%s answered with status %d, which is no numrpc error code: %s",
                             label, code, detail);
            else if (name_peer)
                rc = err_set(err, code, "%s: %s", label, detail);
            else
                rc = err_set(err, code, "%s", detail);
        }
    }
    free(detail);
    return rc;
}

int msg_reply_status(wire_reader *r, uint32_t type, uint32_t call_id, uint32_t want_id,
                     const char *label, err_t *err)
{
    return read_status(r, type, call_id, want_id, label, 0, err);
}

int msg_read_reply(wire_reader *r, uint32_t want_id, const char *label, err_t *err)
{
    uint32_t type, id;
    int rc = wire_next_message(r, &type, &id, err);
    if (rc != 0) return name_closed(rc, label, "", err);
    return msg_reply_status(r, type, id, want_id, label, err);
}

/* ---- HELLO ---- */

/* A fixed-size opaque field: exactly n bytes, or a protocol error. */
static int get_opaque_exact(wire_reader *r, uint8_t *out, uint32_t n, const char *what, err_t *err)
{
    uint8_t *got = NULL; /* freed here */
    uint32_t len = 0;
    int rc = wire_get_opaque(r, &got, &len, n, err);
    if (rc == 0 && len != n) rc = err_set(err, NUMRPC_EPROTO, "%s has %u bytes, not %u", what, len, n);
    if (rc == 0) memcpy(out, got, n);
    free(got);
    return rc;
}

static int put_hello(wire_writer *w, const msg_hello *h, err_t *err)
{
    int rc = wire_put_u32(w, h->version, err);
    if (rc == 0) rc = wire_put_u32(w, h->packet_size, err);
    if (rc == 0) rc = wire_put_string(w, h->peer, err);
    if (!h->has_token) return rc;
    if (rc == 0) rc = wire_put_string(w, h->token, err);
    if (rc == 0) rc = wire_put_opaque(w, h->nonce, MSG_NONCE_BYTES, err);
    if (rc == 0) rc = wire_put_opaque(w, h->proof, h->has_proof ? HMAC_SHA256_BYTES : 0, err);
    return rc;
}

/* Version, packet size and peer name, the token's fields if they follow,
 * then the end of the message. */
static int get_hello(wire_reader *r, msg_hello *h, err_t *err)
{
    memset(h, 0, sizeof *h);
    int rc = wire_get_u32(r, &h->version, err);
    if (rc == 0) rc = wire_get_u32(r, &h->packet_size, err);
    if (rc == 0) rc = wire_get_string_into(r, h->peer, sizeof h->peer, MSG_PEER_MAX, err);
    int at_end = 1;
    if (rc == 0) rc = wire_at_end(r, &at_end, err);
    if (rc == 0 && !at_end) {
        uint8_t *proof = NULL; /* freed here */
        uint32_t proof_len = 0;
        h->has_token = 1;
        rc = wire_get_string_into(r, h->token, sizeof h->token, TOKEN_NAME_MAX, err);
        if (rc == 0) rc = get_opaque_exact(r, h->nonce, MSG_NONCE_BYTES, "a HELLO's nonce", err);
        if (rc == 0) rc = wire_get_opaque(r, &proof, &proof_len, HMAC_SHA256_BYTES, err);
        if (rc == 0 && proof_len != 0 && proof_len != HMAC_SHA256_BYTES)
            rc = err_set(err, NUMRPC_EPROTO, "a HELLO's proof has %u bytes, not %u", proof_len, HMAC_SHA256_BYTES);
        if (rc == 0 && proof_len != 0) {
            memcpy(h->proof, proof, HMAC_SHA256_BYTES);
            h->has_proof = 1;
        }
        free(proof);
    }
    if (rc == 0) rc = wire_expect_end(r, err);
    return rc;
}

int msg_write_hello(wire_writer *w, uint32_t call_id, const msg_hello *h, err_t *err)
{
    wire_begin(w, PROTO_HELLO, call_id);
    int rc = put_hello(w, h, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_hello(wire_reader *r, msg_hello *h, err_t *err)
{
    return get_hello(r, h, err);
}

int msg_write_hello_reply(wire_writer *w, uint32_t call_id, const msg_hello *h, err_t *err)
{
    int rc = msg_reply_begin(w, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = put_hello(w, h, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_hello_reply(wire_reader *r, uint32_t want_id, const char *label, msg_hello *h,
                         err_t *err)
{
    uint32_t type, id;
    int rc = wire_next_message(r, &type, &id, err);
    if (rc != 0) return name_closed(rc, label, " during the handshake", err);
    rc = read_status(r, type, id, want_id ? want_id : id, label, 1, err);
    if (rc == 0) rc = get_hello(r, h, err);
    return rc;
}

/* ---- AUTH ---- */

int msg_write_auth(wire_writer *w, uint32_t call_id, const uint8_t proof[HMAC_SHA256_BYTES], err_t *err)
{
    wire_begin(w, PROTO_AUTH, call_id);
    int rc = wire_put_opaque(w, proof, HMAC_SHA256_BYTES, err);
    if (rc == 0) rc = wire_end_held(w, err);
    return rc;
}

int msg_read_auth(wire_reader *r, uint8_t proof[HMAC_SHA256_BYTES], err_t *err)
{
    int rc = get_opaque_exact(r, proof, HMAC_SHA256_BYTES, "an AUTH's proof", err);
    if (rc == 0) rc = wire_expect_end(r, err);
    return rc;
}

/* ---- CALL ---- */

int msg_write_call_header(wire_writer *w, uint32_t call_id, const msg_call_header *h, err_t *err)
{
    wire_begin(w, PROTO_CALL, call_id);
    int rc = wire_put_string(w, h->name, err);
    if (rc == 0) rc = wire_put_u64(w, h->hash, err);
    if (rc == 0) rc = wire_put_u32(w, h->deadline_ms, err);
    if (rc == 0) rc = wire_put_u32(w, h->flags, err);
    if (rc == 0) rc = wire_put_u32(w, h->reply_packet, err);
    if (rc == 0) rc = wire_put_u32(w, h->nargs, err);
    return rc;
}

int msg_read_call_header(wire_reader *r, msg_call_header *h, err_t *err)
{
    int rc = wire_get_string_into(r, h->name, IFACE_MAX_NAME + 1, IFACE_MAX_NAME, err);
    if (rc == 0) rc = wire_get_u64(r, &h->hash, err);
    if (rc == 0) rc = wire_get_u32(r, &h->deadline_ms, err);
    if (rc == 0) rc = wire_get_u32(r, &h->flags, err);
    if (rc == 0) rc = wire_get_u32(r, &h->reply_packet, err);
    if (rc == 0) rc = wire_get_u32(r, &h->nargs, err);
    return rc;
}

int msg_write_call_result(wire_writer *w, const msg_call_result *res, err_t *err)
{
    int rc = wire_put_double(w, res->compute_seconds, err);
    if (rc == 0) rc = wire_put_u32(w, res->in_flight, err);
    if (rc == 0) rc = wire_put_u32(w, res->queued, err);
    return rc;
}

int msg_read_call_result(wire_reader *r, msg_call_result *res, err_t *err)
{
    int rc = wire_get_double(r, &res->compute_seconds, err);
    if (rc == 0) rc = wire_get_u32(r, &res->in_flight, err);
    if (rc == 0) rc = wire_get_u32(r, &res->queued, err);
    return rc;
}

/* ---- LIST ---- */

int msg_write_list(wire_writer *w, uint32_t call_id, err_t *err)
{
    wire_begin(w, PROTO_LIST, call_id);
    return wire_end(w, err);
}

int msg_write_list_reply(wire_writer *w, uint32_t call_id, const msg_routine_entry *items,
                         uint32_t n, err_t *err)
{
    int rc = msg_reply_begin(w, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = wire_put_u32(w, n, err);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        rc = wire_put_string(w, items[i].name, err);
        if (rc == 0) rc = wire_put_u64(w, items[i].hash, err);
    }
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_list_reply(wire_reader *r, uint32_t want_id, const char *label, uint32_t max,
                        msg_routine_entry **items, uint32_t *n, err_t *err)
{
    msg_routine_entry *list = NULL;
    uint32_t count = 0;
    int rc = msg_read_reply(r, want_id, label, err);
    if (rc == 0) rc = wire_get_u32(r, &count, err);
    if (rc != 0) goto fail;
    if (count > max) {
        rc = err_set(err, NUMRPC_ELIMIT, "%s lists %u routines, more than the %u this side takes", label,
                     count, max);
        goto fail;
    }
    list = calloc(count ? count : 1, sizeof *list);
    if (list == NULL) {
        rc = err_set(err, NUMRPC_ENOMEM, "list of %u routines", count);
        goto fail;
    }
    for (uint32_t i = 0; rc == 0 && i < count; i++) {
        rc = wire_get_string_into(r, list[i].name, IFACE_MAX_NAME + 1, IFACE_MAX_NAME, err);
        if (rc == 0) rc = wire_get_u64(r, &list[i].hash, err);
    }
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc != 0) goto fail;
    *items = list;
    *n = count;
    return 0;
fail:
    free(list);
    return rc;
}

/* ---- GET_IFACE ---- */

int msg_write_get_iface(wire_writer *w, uint32_t call_id, const char *name, err_t *err)
{
    wire_begin(w, PROTO_GET_IFACE, call_id);
    int rc = wire_put_string(w, name, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_get_iface(wire_reader *r, char *name, err_t *err)
{
    int rc = wire_get_string_into(r, name, IFACE_MAX_NAME + 1, IFACE_MAX_NAME, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    return rc;
}

int msg_write_iface_reply(wire_writer *w, uint32_t call_id, const uint8_t *blob, uint32_t len,
                          err_t *err)
{
    int rc = msg_reply_begin(w, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = wire_put_opaque(w, blob, len, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_iface_reply(wire_reader *r, uint32_t want_id, const char *label, uint8_t **blob,
                         uint32_t *len, err_t *err)
{
    uint8_t *b = NULL;
    int rc = msg_read_reply(r, want_id, label, err);
    if (rc == 0) rc = wire_get_opaque(r, &b, len, IFACE_MAX_BLOB, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc != 0) {
        free(b);
        return rc;
    }
    *blob = b;
    return 0;
}

/* ---- CANCEL ---- */

int msg_send_cancel(const msg_conn *c, uint32_t call_id, err_t *err)
{
    return wire_send_empty(&c->tp, PROTO_CANCEL, call_id, err);
}

/* ---- PROBE ---- */

int msg_write_probe(wire_writer *w, uint32_t call_id, uint32_t reply_bytes, uint64_t n,
                    err_t *err)
{
    wire_begin(w, PROTO_PROBE, call_id);
    int rc = wire_put_u32(w, reply_bytes, err);
    if (rc == 0) rc = wire_put_u64(w, n, err);
    if (rc == 0) rc = wire_put_zeros(w, n, err);
    if (rc == 0) rc = wire_pad8(w, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_probe(wire_reader *r, uint32_t *reply_bytes, uint64_t *n, err_t *err)
{
    int rc = wire_get_u32(r, reply_bytes, err);
    if (rc == 0) rc = wire_get_u64(r, n, err);
    return rc;
}

int msg_read_probe_payload(wire_reader *r, uint64_t n, err_t *err)
{
    int rc = wire_skip(r, n, err);
    if (rc == 0) rc = wire_skip_pad8(r, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    return rc;
}

int msg_write_probe_reply(wire_writer *w, uint32_t call_id, uint32_t reply_bytes, err_t *err)
{
    int rc = msg_reply_begin(w, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = wire_put_u64(w, reply_bytes, err);
    if (rc == 0) rc = wire_put_zeros(w, reply_bytes, err);
    if (rc == 0) rc = wire_pad8(w, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_probe_reply(wire_reader *r, uint32_t want_id, const char *label, uint64_t *back,
                         err_t *err)
{
    int rc = msg_read_reply(r, want_id, label, err);
    if (rc == 0) rc = wire_get_u64(r, back, err);
    if (rc == 0 && *back > PROTO_PROBE_MAX_BYTES)
        rc = err_set(err, NUMRPC_EPROTO, "%s answers a probe with %llu bytes, over %u", label,
                     (unsigned long long)*back, PROTO_PROBE_MAX_BYTES);
    if (rc == 0) rc = msg_read_probe_payload(r, *back, err);
    return rc;
}

/* ---- FILE_READ and FILE_DATA ---- */

int msg_write_file_read(wire_writer *w, uint32_t call_id, const msg_file_read *q, err_t *err)
{
    wire_begin(w, PROTO_FILE_READ, call_id);
    int rc = wire_put_u32(w, q->param, err);
    if (rc == 0) rc = wire_put_u64(w, q->offset, err);
    if (rc == 0) rc = wire_put_u32(w, q->length, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_file_read(wire_reader *r, msg_file_read *q, err_t *err)
{
    int rc = wire_get_u32(r, &q->param, err);
    if (rc == 0) rc = wire_get_u64(r, &q->offset, err);
    if (rc == 0) rc = wire_get_u32(r, &q->length, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    return rc;
}

int msg_write_file_data(wire_writer *w, uint32_t call_id, int code, const char *detail,
                        const void *data, uint64_t n, err_t *err)
{
    wire_begin(w, PROTO_FILE_DATA, call_id);
    int rc = wire_put_u32(w, (uint32_t)code, err);
    if (rc == 0) rc = wire_put_string(w, detail, err);
    if (rc == 0 && code == NUMRPC_OK) {
        rc = wire_put_u64(w, n, err);
        if (rc == 0) rc = wire_put(w, data, (size_t)n, err);
        if (rc == 0) rc = wire_pad8(w, err);
    }
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_file_data_head(wire_reader *r, uint32_t want_id, uint64_t max, uint64_t *n,
                            err_t *call_err, err_t *err)
{
    uint32_t type, id, status;
    char *detail = NULL;
    err_clear(call_err);
    int rc = wire_next_message(r, &type, &id, err);
    if (rc == 0 && (type != PROTO_FILE_DATA || id != want_id))
        rc = err_set(err, NUMRPC_EPROTO, "message %u for call %u, expected the file data of call %u", type,
                     id, want_id);
    if (rc == 0) rc = wire_get_u32(r, &status, err);
    if (rc == 0) rc = wire_get_string(r, &detail, ERR_DETAIL_MAX, err);
    if (rc == 0 && status != 0) {
        rc = wire_skip_message(r, err);
        if (rc == 0) err_set(call_err, NUMRPC_EIO, "%s", detail);
        free(detail);
        return rc;
    }
    free(detail);
    if (rc == 0) rc = wire_get_u64(r, n, err);
    if (rc == 0 && *n > max)
        rc = err_set(err, NUMRPC_EPROTO, "file data of %llu bytes, %llu asked", (unsigned long long)*n,
                     (unsigned long long)max);
    return rc;
}
