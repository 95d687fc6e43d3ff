/* msg_control.c -- STATUS and ADMIN, the messages a server's dispatcher
 * answers itself: the client's writers and readers beside the server's. */
#include "msg_control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reply to want_id up to its status: the dispatcher answers a
 * connection it refused before reading its request (busy, shutting down)
 * with call id 0, so that id is the reply too.  0 with the body to read. */
static int read_control_reply(wire_reader *r, uint32_t want_id, const char *label, err_t *err)
{
    uint32_t type, id;
    int rc = wire_next_message(r, &type, &id, err);
    if (rc == NUMRPC_EIO) return err_set(err, NUMRPC_EIO, "%s closed the connection without a reply", label);
    if (rc != 0) return rc;
    return msg_reply_status(r, type, id, id == 0 ? 0 : want_id, label, err);
}

/* ---- STATUS ---- */

int msg_write_status(wire_writer *w, uint32_t call_id, err_t *err)
{
    wire_begin(w, PROTO_STATUS, call_id);
    int rc = wire_put_u32(w, PROTO_VERSION, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_status(wire_reader *r, uint32_t *version, err_t *err)
{
    int rc = wire_get_u32(r, version, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    return rc;
}

static int put_status_routine(wire_writer *w, const msg_status_routine *x, err_t *err)
{
    int rc = wire_put_string(w, x->name, err);
    if (rc == 0) rc = wire_put_string(w, x->module, err);
    if (rc == 0) rc = wire_put_u64(w, x->hash, err);
    if (rc == 0) rc = wire_put_u32(w, x->offered, err);
    if (rc == 0) rc = wire_put_u64(w, x->calls, err);
    if (rc == 0) rc = wire_put_u64(w, x->errors, err);
    if (rc == 0) rc = wire_put_u64(w, x->bytes_in, err);
    if (rc == 0) rc = wire_put_u64(w, x->bytes_out, err);
    if (rc == 0) rc = wire_put_double(w, x->total_s, err);
    if (rc == 0) rc = wire_put_double(w, x->p99_s, err);
    return rc;
}

static int get_status_routine(wire_reader *r, msg_status_routine *x, err_t *err)
{
    int rc = wire_get_string_into(r, x->name, sizeof x->name, IFACE_MAX_NAME, err);
    if (rc == 0) rc = wire_get_string_into(r, x->module, sizeof x->module, IFACE_MAX_NAME, err);
    if (rc == 0) rc = wire_get_u64(r, &x->hash, err);
    if (rc == 0) rc = wire_get_u32(r, &x->offered, err);
    if (rc == 0) rc = wire_get_u64(r, &x->calls, err);
    if (rc == 0) rc = wire_get_u64(r, &x->errors, err);
    if (rc == 0) rc = wire_get_u64(r, &x->bytes_in, err);
    if (rc == 0) rc = wire_get_u64(r, &x->bytes_out, err);
    if (rc == 0) rc = wire_get_double(r, &x->total_s, err);
    if (rc == 0) rc = wire_get_double(r, &x->p99_s, err);
    return rc;
}

int msg_write_status_reply(wire_writer *w, uint32_t call_id, const msg_status *s, err_t *err)
{
    int rc = msg_reply_begin(w, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = wire_put_string(w, s->server, err);
    if (rc == 0) rc = wire_put_double(w, s->uptime, err);
    for (int i = 0; rc == 0 && i < 3; i++) rc = wire_put_double(w, s->load[i], err);
    if (rc == 0) rc = wire_put_u32(w, s->workers, err);
    if (rc == 0) rc = wire_put_u32(w, s->max_workers, err);
    if (rc == 0) rc = wire_put_u64(w, s->restarts, err);
    if (rc == 0) rc = wire_put_u32(w, s->in_flight, err);
    if (rc == 0) rc = wire_put_u32(w, s->queued, err);
    if (rc == 0) rc = wire_put_u32(w, s->connections, err);
    if (rc == 0) rc = wire_put_u32(w, s->draining, err);
    if (rc == 0) rc = wire_put_u32(w, s->nroutines, err);
    for (uint32_t i = 0; rc == 0 && i < s->nroutines; i++) rc = put_status_routine(w, &s->rows[i], err);
    if (rc == 0) rc = wire_put_u32(w, s->security, err);
    if (rc == 0) rc = wire_put_u64(w, s->handles, err);
    if (rc == 0) rc = wire_put_u64(w, s->handle_bytes, err);
    if (rc == 0) rc = wire_put_u64(w, s->pulled_bytes, err);
    if (rc == 0) rc = wire_put_u64(w, s->lent_bytes, err);
    /* The rows' origins: a trailing list, one string per row. */
    if (rc == 0) rc = wire_put_u32(w, s->nroutines, err);
    for (uint32_t i = 0; rc == 0 && i < s->nroutines; i++) rc = wire_put_string(w, s->rows[i].origin, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_status_reply(wire_reader *r, uint32_t want_id, const char *label, msg_status *s,
                          err_t *err)
{
    memset(s, 0, sizeof *s);
    uint32_t n = 0;
    int rc = read_control_reply(r, want_id, label, err);
    if (rc == 0) rc = wire_get_string_into(r, s->server, sizeof s->server, IFACE_MAX_TEXT, err);
    if (rc == 0) rc = wire_get_double(r, &s->uptime, err);
    for (int i = 0; rc == 0 && i < 3; i++) rc = wire_get_double(r, &s->load[i], err);
    if (rc == 0) rc = wire_get_u32(r, &s->workers, err);
    if (rc == 0) rc = wire_get_u32(r, &s->max_workers, err);
    if (rc == 0) rc = wire_get_u64(r, &s->restarts, err);
    if (rc == 0) rc = wire_get_u32(r, &s->in_flight, err);
    if (rc == 0) rc = wire_get_u32(r, &s->queued, err);
    if (rc == 0) rc = wire_get_u32(r, &s->connections, err);
    if (rc == 0) rc = wire_get_u32(r, &s->draining, err);
    if (rc == 0) rc = wire_get_u32(r, &n, err);
    if (rc == 0 && n > MSG_STATUS_MAX_ROUTINES) rc = err_set(err, NUMRPC_EPROTO, "%s reports %u routines", label, n);
    if (rc == 0 && (s->rows = calloc(n ? n : 1, sizeof *s->rows)) == NULL)
        rc = err_set(err, NUMRPC_ENOMEM, "status of %u routines", n);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        s->nroutines = i + 1;
        rc = get_status_routine(r, &s->rows[i], err);
    }
    /* Trailing fields, each absent from older servers' replies; fields
     * added after them are skipped. */
    int at_end = 1;
    if (rc == 0) rc = wire_at_end(r, &at_end, err);
    if (rc == 0 && !at_end) {
        rc = wire_get_u32(r, &s->security, err);
        s->has_security = rc == 0;
        if (rc == 0) rc = wire_at_end(r, &at_end, err);
    }
    if (rc == 0 && !at_end) {
        rc = wire_get_u64(r, &s->handles, err);
        if (rc == 0) rc = wire_get_u64(r, &s->handle_bytes, err);
        s->has_handles = rc == 0;
        if (rc == 0) rc = wire_at_end(r, &at_end, err);
    }
    if (rc == 0 && !at_end) {
        rc = wire_get_u64(r, &s->pulled_bytes, err);
        if (rc == 0) rc = wire_get_u64(r, &s->lent_bytes, err);
        s->has_moves = rc == 0;
        if (rc == 0) rc = wire_at_end(r, &at_end, err);
    }
    if (rc == 0 && !at_end) {
        uint32_t k = 0;
        rc = wire_get_u32(r, &k, err);
        if (rc == 0 && k != s->nroutines)
            rc = err_set(err, NUMRPC_EPROTO, "%s sends %u origins for %u routines", label, k, s->nroutines);
        for (uint32_t i = 0; rc == 0 && i < k; i++)
            rc = wire_get_string_into(r, s->rows[i].origin, sizeof s->rows[i].origin, MSG_STATUS_ORIGIN_MAX, err);
        s->has_origins = rc == 0;
        if (rc == 0) rc = wire_at_end(r, &at_end, err);
    }
    if (rc == 0) rc = at_end ? wire_expect_end(r, err) : wire_skip_message(r, err);
    if (rc != 0) msg_status_free(s);
    return rc;
}

void msg_status_free(msg_status *s)
{
    free(s->rows);
    s->rows = NULL;
    s->nroutines = 0;
}

/* ---- ADMIN ---- */

int msg_write_admin_challenge(wire_writer *w, uint32_t call_id, err_t *err)
{
    wire_begin(w, PROTO_ADMIN, call_id);
    int rc = wire_put_u32(w, MSG_ADMIN_CHALLENGE, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_write_admin_challenge_reply(wire_writer *w, uint32_t call_id, const uint8_t *nonce,
                                    uint32_t len, err_t *err)
{
    int rc = msg_reply_begin(w, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = wire_put_opaque(w, nonce, len, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_admin_challenge_reply(wire_reader *r, uint32_t want_id, const char *label,
                                   uint8_t **nonce, uint32_t *len, err_t *err)
{
    uint8_t *got = NULL; /* given to *nonce on success */
    int rc = read_control_reply(r, want_id, label, err);
    if (rc == 0) rc = wire_get_opaque(r, &got, len, MSG_ADMIN_NONCE_MAX, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc == 0) *nonce = got;
    else free(got);
    return rc;
}

int msg_write_admin_command(wire_writer *w, uint32_t call_id, const char *command,
                            const uint8_t mac[HMAC_SHA256_BYTES], err_t *err)
{
    wire_begin(w, PROTO_ADMIN, call_id);
    int rc = wire_put_u32(w, MSG_ADMIN_COMMAND, err);
    if (rc == 0) rc = wire_put_string(w, command, err);
    if (rc == 0) rc = wire_put_opaque(w, mac, HMAC_SHA256_BYTES, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_write_admin_command_reply(wire_writer *w, uint32_t call_id, const char *text, err_t *err)
{
    int rc = msg_reply_begin(w, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = wire_put_string(w, text, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_admin_command_reply(wire_reader *r, uint32_t want_id, const char *label, char **text,
                                 err_t *err)
{
    char *got = NULL; /* given to *text on success */
    int rc = read_control_reply(r, want_id, label, err);
    if (rc == 0) rc = wire_get_string(r, &got, MSG_ADMIN_TEXT_MAX, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc == 0) *text = got;
    else free(got);
    return rc;
}

int msg_read_admin_step(wire_reader *r, uint32_t *step, err_t *err)
{
    return wire_get_u32(r, step, err);
}

int msg_read_admin_command(wire_reader *r, char *cmd, uint32_t *cmd_len,
                           uint8_t mac[HMAC_SHA256_BYTES], err_t *err)
{
    uint8_t *text = NULL, *sum = NULL; /* freed here */
    uint32_t len = 0, sum_len = 0;
    int rc = wire_get_opaque(r, &text, &len, MSG_ADMIN_COMMAND_MAX, err);
    if (rc == 0) rc = wire_get_opaque(r, &sum, &sum_len, HMAC_SHA256_BYTES, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc == 0 && sum_len != HMAC_SHA256_BYTES)
        rc = err_set(err, NUMRPC_EPROTO, "an admin command's MAC has %u bytes, not %u", sum_len,
                     HMAC_SHA256_BYTES);
    if (rc == 0 && memchr(text, '\0', len) != NULL)
        rc = err_set(err, NUMRPC_EPROTO, "an admin command holds a NUL byte");
    if (rc == 0) {
        memcpy(cmd, text, len);
        cmd[len] = '\0';
        *cmd_len = len;
        memcpy(mac, sum, HMAC_SHA256_BYTES);
    }
    free(text);
    free(sum);
    return rc;
}
