/* msg_meta.c -- writers and readers of the metaserver's messages (JOIN,
 * ROUTINES, LOAD, HEARTBEAT, QUERY, REPORT, STATUS), bounded and checked. */
#include "msg_meta.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "protocol.h"

/* A figure a peer may send: finite and not negative. */
static int figure_ok(double v)
{
    return isfinite(v) && v >= 0;
}

/* A fingerprint a peer may send: "" or 64 hex digits. */
static int fingerprint_ok(const char *f)
{
    size_t n = strspn(f, "0123456789abcdefABCDEF");
    return f[0] == '\0' || (n == MSG_META_FINGERPRINT && f[n] == '\0');
}

/* An optional trailing fingerprint field: "" when the message ends here. */
static int get_fingerprint(wire_reader *r, int optional, char out[MSG_META_FINGERPRINT + 1], err_t *err)
{
    int at_end = 0;
    out[0] = '\0';
    int rc = optional ? wire_at_end(r, &at_end, err) : 0;
    if (rc != 0 || at_end) return rc;
    rc = wire_get_string_into(r, out, MSG_META_FINGERPRINT + 1, MSG_META_FINGERPRINT, err);
    if (rc == 0 && !fingerprint_ok(out))
        rc = err_set(err, NUMRPC_EPROTO, "a certificate fingerprint is not 64 hex digits");
    return rc;
}

/* ---- Routine lists ---- */

void msg_meta_routines_free(msg_meta_routine *list, uint32_t n)
{
    for (uint32_t i = 0; list && i < n; i++) {
        iface_free(&list[i].iface);
        free(list[i].blob);
    }
    free(list);
}

static int put_routines(wire_writer *w, const msg_meta_routine *list, uint32_t n, err_t *err)
{
    int rc = wire_put_u32(w, n, err);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        rc = wire_put_string(w, list[i].name, err);
        if (rc == 0) rc = wire_put_u64(w, list[i].hash, err);
        if (rc == 0) rc = wire_put_opaque(w, list[i].blob, list[i].len, err);
    }
    return rc;
}

/* One entry: name, hash, descriptor, decoded and matched. */
static int get_routine(wire_reader *r, msg_meta_routine *m, err_t *err)
{
    int rc = wire_get_string_into(r, m->name, sizeof m->name, (uint32_t)sizeof m->name - 1, err);
    if (rc == 0) rc = wire_get_u64(r, &m->hash, err);
    if (rc == 0) rc = wire_get_opaque(r, &m->blob, &m->len, IFACE_MAX_BLOB, err);
    if (rc == 0) rc = iface_decode(m->blob, m->len, &m->iface, err);
    if (rc == 0 && (strcmp(m->iface.name, m->name) != 0 || m->iface.hash != m->hash))
        rc = err_set(err, NUMRPC_EPROTO,
                     "routine %s: the descriptor does not match its name and hash", m->name);
    return rc;
}

static int get_routines(wire_reader *r, msg_meta_routine **out, uint32_t *count_out, err_t *err)
{
    uint32_t count = 0, n = 0;
    msg_meta_routine *list = NULL;
    int rc = wire_get_u32(r, &count, err);
    if (rc == 0 && count > MSG_META_MAX_ROUTINES)
        rc = err_set(err, NUMRPC_ELIMIT, "%u routines: the metaserver takes %d per server", count,
                     MSG_META_MAX_ROUTINES);
    if (rc == 0 && (list = calloc(count + 1, sizeof *list)) == NULL)
        rc = err_set(err, NUMRPC_ENOMEM, "routine list");
    while (rc == 0 && n < count)
        rc = get_routine(r, &list[n++], err);
    if (rc != 0) goto fail;
    *out = list;
    *count_out = count;
    return 0;
fail:
    msg_meta_routines_free(list, n);
    return rc;
}

/* ---- META_JOIN ---- */

int msg_write_meta_join(wire_writer *w, uint32_t call_id, const msg_meta_join *j, err_t *err)
{
    wire_begin(w, PROTO_META_JOIN, call_id);
    int rc = wire_put_string(w, j->host, err);
    if (rc == 0) rc = wire_put_u32(w, j->port, err);
    if (rc == 0) rc = wire_put_string(w, j->name, err);
    if (rc == 0) rc = wire_put_u32(w, j->slots, err);
    if (rc == 0) rc = wire_put_u32(w, (uint32_t)j->curve.npoints, err);
    for (int i = 0; rc == 0 && i < j->curve.npoints; i++) {
        rc = wire_put_double(w, j->curve.n[i], err);
        if (rc == 0) rc = wire_put_double(w, j->curve.rate[i], err);
    }
    if (rc == 0) rc = put_routines(w, j->routines, j->nroutines, err);
    if (rc == 0 && j->fingerprint[0]) rc = wire_put_string(w, j->fingerprint, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

/* The speed curve: npoints, then n increasing and rates positive. */
static int get_curve(wire_reader *r, uint32_t npoints, rank_curve *c, err_t *err)
{
    int rc = 0;
    c->npoints = (int)npoints;
    for (uint32_t i = 0; rc == 0 && i < npoints; i++) {
        rc = wire_get_double(r, &c->n[i], err);
        if (rc == 0) rc = wire_get_double(r, &c->rate[i], err);
        if (rc == 0 && !(c->n[i] >= 1 && c->rate[i] > 0 && c->rate[i] < 1e18 &&
                         (i == 0 || c->n[i] > c->n[i - 1])))
            rc = err_set(err, NUMRPC_EPROTO, "JOIN: speed point %u is not increasing and positive",
                         i);
    }
    return rc;
}

int msg_read_meta_join(wire_reader *r, msg_meta_join *j, err_t *err)
{
    uint32_t npoints = 0;
    memset(j, 0, sizeof *j);
    int rc = wire_get_string_into(r, j->host, sizeof j->host, (uint32_t)sizeof j->host - 1, err);
    if (rc == 0) rc = wire_get_u32(r, &j->port, err);
    if (rc == 0) rc = wire_get_string_into(r, j->name, sizeof j->name, (uint32_t)sizeof j->name - 1, err);
    if (rc == 0) rc = wire_get_u32(r, &j->slots, err);
    if (rc == 0) rc = wire_get_u32(r, &npoints, err);
    if (rc == 0 && (npoints > RANK_MAX_POINTS || j->port == 0 || j->port > 65535 || j->slots == 0 ||
                    j->slots > MSG_META_MAX_SLOTS))
        rc = err_set(err, NUMRPC_EPROTO, "JOIN: bad port %u, slots %u or speed points %u", j->port,
                     j->slots, npoints);
    if (rc == 0) rc = get_curve(r, npoints, &j->curve, err);
    if (rc == 0) rc = get_routines(r, &j->routines, &j->nroutines, err);
    if (rc == 0) rc = get_fingerprint(r, 1, j->fingerprint, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc != 0) {
        msg_meta_routines_free(j->routines, j->nroutines);
        j->routines = NULL;
        j->nroutines = 0;
    }
    return rc;
}

int msg_write_meta_join_reply(wire_writer *w, uint32_t call_id, const msg_meta_joined *j,
                              err_t *err)
{
    int rc = msg_reply_begin(w, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = wire_put_u32(w, j->server_id, err);
    if (rc == 0) rc = wire_put_u32(w, j->heartbeat_ms, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_meta_join_reply(wire_reader *r, msg_meta_joined *j, err_t *err)
{
    int rc = wire_get_u32(r, &j->server_id, err);
    if (rc == 0) rc = wire_get_u32(r, &j->heartbeat_ms, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc == 0 && (j->heartbeat_ms < 20 || j->heartbeat_ms > 600000)) j->heartbeat_ms = 1000;
    return rc;
}

/* ---- META_ROUTINES ---- */

int msg_write_meta_routines(wire_writer *w, uint32_t call_id, const msg_meta_routine *list,
                            uint32_t n, err_t *err)
{
    wire_begin(w, PROTO_META_ROUTINES, call_id);
    int rc = put_routines(w, list, n, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_meta_routines(wire_reader *r, msg_meta_routine **list, uint32_t *n, err_t *err)
{
    int rc = get_routines(r, list, n, err);
    if (rc == 0 && (rc = wire_expect_end(r, err)) != 0) {
        msg_meta_routines_free(*list, *n);
        *list = NULL;
        *n = 0;
    }
    return rc;
}

/* ---- META_LOAD and META_HEARTBEAT ---- */

int msg_write_meta_load(wire_writer *w, uint32_t call_id, const msg_meta_load *l, err_t *err)
{
    wire_begin(w, PROTO_META_LOAD, call_id);
    int rc = wire_put_u32(w, l->in_flight, err);
    if (rc == 0) rc = wire_put_u32(w, l->queued, err);
    if (rc == 0) rc = wire_put_u32(w, l->draining, err);
    if (rc == 0) rc = wire_put_double(w, l->loadavg, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_meta_load(wire_reader *r, msg_meta_load *l, err_t *err)
{
    int rc = wire_get_u32(r, &l->in_flight, err);
    if (rc == 0) rc = wire_get_u32(r, &l->queued, err);
    if (rc == 0) rc = wire_get_u32(r, &l->draining, err);
    if (rc == 0) rc = wire_get_double(r, &l->loadavg, err);
    if (rc == 0 && !figure_ok(l->loadavg))
        rc = err_set(err, NUMRPC_EPROTO, "LOAD: load average %g", l->loadavg);
    if (rc == 0) rc = wire_expect_end(r, err);
    return rc;
}

int msg_write_meta_heartbeat(wire_writer *w, uint32_t call_id, err_t *err)
{
    wire_begin(w, PROTO_META_HEARTBEAT, call_id);
    return wire_end(w, err);
}

int msg_read_meta_heartbeat(wire_reader *r, err_t *err)
{
    return wire_expect_end(r, err);
}

/* ---- META_QUERY ---- */

int msg_write_meta_query(wire_writer *w, uint32_t call_id, const msg_meta_query *q, err_t *err)
{
    wire_begin(w, PROTO_META_QUERY, call_id);
    int rc = wire_put_string(w, q->routine, err);
    if (rc == 0) rc = wire_put_u64(w, q->hash, err);
    if (rc == 0) rc = wire_put_double(w, q->flops, err);
    if (rc == 0) rc = wire_put_u64(w, q->bytes_in, err);
    if (rc == 0) rc = wire_put_u64(w, q->bytes_out, err);
    if (rc == 0) rc = wire_put_u32(w, q->max_servers, err);
    if (rc == 0 && q->nheld > MSG_META_MAX_HELD)
        rc = err_set(err, NUMRPC_EINVAL, "QUERY: %u servers hold handles (at most %d)", q->nheld, MSG_META_MAX_HELD);
    if (rc == 0 && q->nheld > 0) rc = wire_put_u32(w, q->nheld, err);
    for (uint32_t i = 0; rc == 0 && i < q->nheld; i++) {
        rc = wire_put_string(w, q->held[i].server, err);
        if (rc == 0) rc = wire_put_u64(w, q->held[i].bytes, err);
    }
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

/* "host:port": a host of letters, digits and . - _ : [ ] (IPv6 in
 * brackets), then a port 1..65535 in decimal. */
int msg_meta_label_ok(const char *label)
{
    const char *colon = strrchr(label, ':');
    if (colon == NULL || colon == label || (size_t)(colon - label) > MSG_META_HOST_MAX) return 0;
    for (const char *c = label; c < colon; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || strchr(".-_:[]", *c)))
            return 0;
    size_t digits = strspn(colon + 1, "0123456789");
    if (digits == 0 || digits > 5 || colon[1 + digits] != '\0') return 0;
    long port = strtol(colon + 1, NULL, 10);
    return port >= 1 && port <= 65535;
}

/* The optional held block of a QUERY: nothing when the message ends. */
static int get_held(wire_reader *r, msg_meta_query *q, err_t *err)
{
    int at_end = 0;
    uint64_t total = 0;
    q->nheld = 0;
    int rc = wire_at_end(r, &at_end, err);
    if (rc != 0 || at_end) return rc;
    uint32_t count = 0;
    rc = wire_get_u32(r, &count, err);
    if (rc == 0 && count > MSG_META_MAX_HELD)
        rc = err_set(err, NUMRPC_EPROTO, "QUERY: %u servers hold handles (at most %d)", count, MSG_META_MAX_HELD);
    for (uint32_t i = 0; rc == 0 && i < count; i++) {
        msg_meta_held *h = &q->held[i];
        rc = wire_get_string_into(r, h->server, sizeof h->server, (uint32_t)sizeof h->server - 1, err);
        if (rc == 0) rc = wire_get_u64(r, &h->bytes, err);
        if (rc == 0 && !msg_meta_label_ok(h->server))
            rc = err_set(err, NUMRPC_EPROTO, "QUERY: a server holding handles is not host:port");
        for (uint32_t j = 0; rc == 0 && j < i; j++)
            if (strcmp(q->held[j].server, h->server) == 0)
                rc = err_set(err, NUMRPC_EPROTO, "QUERY: server %s named twice in the held block", h->server);
        if (rc == 0 && h->bytes > UINT64_MAX - total)
            rc = err_set(err, NUMRPC_EPROTO, "QUERY: the held bytes overflow");
        if (rc == 0) total += h->bytes;
    }
    if (rc == 0) q->nheld = count;
    return rc;
}

uint64_t msg_meta_query_held_on(const msg_meta_query *q, const char *label)
{
    for (uint32_t i = 0; i < q->nheld && i < MSG_META_MAX_HELD; i++)
        if (strcmp(q->held[i].server, label) == 0) return q->held[i].bytes;
    return 0;
}

int msg_read_meta_query(wire_reader *r, msg_meta_query *q, err_t *err)
{
    int rc = wire_get_string_into(r, q->routine, sizeof q->routine, (uint32_t)sizeof q->routine - 1, err);
    if (rc == 0) rc = wire_get_u64(r, &q->hash, err);
    if (rc == 0) rc = wire_get_double(r, &q->flops, err);
    if (rc == 0) rc = wire_get_u64(r, &q->bytes_in, err);
    if (rc == 0) rc = wire_get_u64(r, &q->bytes_out, err);
    if (rc == 0) rc = wire_get_u32(r, &q->max_servers, err);
    if (rc == 0) rc = get_held(r, q, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc != 0) q->nheld = 0;
    if (rc == 0 && !(q->flops >= 0 && q->flops < 1e30)) q->flops = 0;
    return rc;
}

int msg_write_meta_query_reply(wire_writer *w, uint32_t call_id, uint32_t lease_ms,
                               const msg_meta_ranked *servers, uint32_t n, err_t *err)
{
    int rc = msg_reply_begin(w, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = wire_put_u32(w, lease_ms, err);
    if (rc == 0) rc = wire_put_u32(w, n, err);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        const msg_meta_ranked *s = &servers[i];
        rc = wire_put_string(w, s->host, err);
        if (rc == 0) rc = wire_put_u32(w, s->port, err);
        if (rc == 0) rc = wire_put_u32(w, s->slots, err);
        if (rc == 0) rc = wire_put_u32(w, s->throughput_known, err);
        if (rc == 0) rc = wire_put_double(w, s->latency, err);
        if (rc == 0) rc = wire_put_double(w, s->bytes_per_second, err);
        if (rc == 0) rc = wire_put_double(w, s->flops_per_second, err);
        if (rc == 0) rc = wire_put_double(w, s->share, err);
        if (rc == 0) rc = wire_put_double(w, s->predicted, err);
    }
    int any = 0;
    for (uint32_t i = 0; i < n; i++) any |= servers[i].fingerprint[0] != '\0';
    for (uint32_t i = 0; rc == 0 && any && i < n; i++) rc = wire_put_string(w, servers[i].fingerprint, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

static int get_ranked(wire_reader *r, msg_meta_ranked *s, err_t *err)
{
    int rc = wire_get_string_into(r, s->host, sizeof s->host, (uint32_t)sizeof s->host - 1, err);
    if (rc == 0) rc = wire_get_u32(r, &s->port, err);
    if (rc == 0) rc = wire_get_u32(r, &s->slots, err);
    if (rc == 0) rc = wire_get_u32(r, &s->throughput_known, err);
    if (rc == 0) rc = wire_get_double(r, &s->latency, err);
    if (rc == 0) rc = wire_get_double(r, &s->bytes_per_second, err);
    if (rc == 0) rc = wire_get_double(r, &s->flops_per_second, err);
    if (rc == 0) rc = wire_get_double(r, &s->share, err);
    if (rc == 0) rc = wire_get_double(r, &s->predicted, err);
    if (rc == 0 && (s->port == 0 || s->port > 65535 || !figure_ok(s->latency) ||
                    !figure_ok(s->bytes_per_second) || !figure_ok(s->flops_per_second) ||
                    !figure_ok(s->share) || s->share > 1 || !figure_ok(s->predicted)))
        rc = err_set(err, NUMRPC_EPROTO, "metaserver: nonsense figures for server %s:%u", s->host,
                     s->port);
    return rc;
}

int msg_read_meta_query_reply(wire_reader *r, uint32_t *lease_ms, msg_meta_ranked *servers,
                              uint32_t max, uint32_t *n, err_t *err)
{
    uint32_t count = 0;
    int rc = wire_get_u32(r, lease_ms, err);
    if (rc == 0) rc = wire_get_u32(r, &count, err);
    if (rc == 0 && count > max) rc = err_set(err, NUMRPC_EPROTO, "metaserver: %u servers", count);
    for (uint32_t i = 0; rc == 0 && i < count; i++)
        rc = get_ranked(r, &servers[i], err);
    int at_end = 1;
    if (rc == 0) rc = wire_at_end(r, &at_end, err);
    for (uint32_t i = 0; rc == 0 && i < count; i++)
        if (at_end) servers[i].fingerprint[0] = '\0';
        else rc = get_fingerprint(r, 0, servers[i].fingerprint, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    *n = rc == 0 ? count : 0;
    return rc;
}

/* ---- META_REPORT ---- */

int msg_write_meta_report(wire_writer *w, uint32_t call_id, const msg_meta_call *calls, uint32_t n,
                          err_t *err)
{
    wire_begin(w, PROTO_META_REPORT, call_id);
    int rc = wire_put_u32(w, n, err);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        const msg_meta_call *c = &calls[i];
        rc = wire_put_string(w, c->server, err);
        if (rc == 0) rc = wire_put_string(w, c->routine, err);
        if (rc == 0) rc = wire_put_double(w, c->flops, err);
        if (rc == 0) rc = wire_put_u64(w, c->bytes_sent, err);
        if (rc == 0) rc = wire_put_u64(w, c->bytes_received, err);
        if (rc == 0) rc = wire_put_double(w, c->predicted, err);
        if (rc == 0) rc = wire_put_double(w, c->total_seconds, err);
        if (rc == 0) rc = wire_put_double(w, c->compute_seconds, err);
        if (rc == 0) rc = wire_put_u32(w, c->flags, err);
    }
    if (rc == 0) rc = wire_end_held(w, err);
    return rc;
}

static int get_call(wire_reader *r, msg_meta_call *c, err_t *err)
{
    int rc = wire_get_string_into(r, c->server, sizeof c->server, (uint32_t)sizeof c->server - 1, err);
    if (rc == 0) rc = wire_get_string_into(r, c->routine, sizeof c->routine, (uint32_t)sizeof c->routine - 1, err);
    if (rc == 0) rc = wire_get_double(r, &c->flops, err);
    if (rc == 0) rc = wire_get_u64(r, &c->bytes_sent, err);
    if (rc == 0) rc = wire_get_u64(r, &c->bytes_received, err);
    if (rc == 0) rc = wire_get_double(r, &c->predicted, err);
    if (rc == 0) rc = wire_get_double(r, &c->total_seconds, err);
    if (rc == 0) rc = wire_get_double(r, &c->compute_seconds, err);
    if (rc == 0) rc = wire_get_u32(r, &c->flags, err);
    return rc;
}

/* Figures worth believing (NaN fails every comparison). */
static int call_believable(const msg_meta_call *c)
{
    return c->flops >= 0 && c->flops < 1e30 && c->total_seconds >= 0 && c->total_seconds < 1e7 &&
           c->compute_seconds >= 0 && c->compute_seconds <= c->total_seconds + 1 &&
           c->predicted >= 0 && c->predicted < 1e9;
}

int msg_read_meta_report(wire_reader *r, msg_meta_call **calls, uint32_t *n, err_t *err)
{
    uint32_t count = 0, kept = 0;
    msg_meta_call *list = NULL;
    int rc = wire_get_u32(r, &count, err);
    if (rc == 0 && count > MSG_META_MAX_REPORTS)
        rc = err_set(err, NUMRPC_ELIMIT, "REPORT of %u calls (at most %d)", count,
                     MSG_META_MAX_REPORTS);
    if (rc == 0 && (list = malloc((count + 1) * sizeof *list)) == NULL)
        rc = err_set(err, NUMRPC_ENOMEM, "REPORT of %u calls", count);
    for (uint32_t i = 0; rc == 0 && i < count; i++) {
        rc = get_call(r, &list[kept], err);
        if (rc == 0 && call_believable(&list[kept])) kept++;
    }
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc != 0) {
        free(list);
        list = NULL;
        kept = 0;
    }
    *calls = list;
    *n = kept;
    return rc;
}

/* ---- META_STATUS ---- */

int msg_write_meta_status(wire_writer *w, uint32_t call_id, uint32_t format, err_t *err)
{
    wire_begin(w, PROTO_META_STATUS, call_id);
    int rc = wire_put_u32(w, format, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_meta_status(wire_reader *r, uint32_t *format, err_t *err)
{
    int rc = wire_get_u32(r, format, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    return rc;
}

int msg_write_meta_status_reply(wire_writer *w, uint32_t call_id, const char *text, err_t *err)
{
    int rc = msg_reply_begin(w, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = wire_put_string(w, text, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_meta_status_reply(wire_reader *r, char **text, err_t *err)
{
    *text = NULL;
    int rc = wire_get_string(r, text, MSG_META_MAX_STATUS, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc != 0) {
        free(*text);
        *text = NULL;
    }
    return rc;
}
