/* serve.c -- one metaserver connection: a server's registration (JOIN, then
 * routine lists, load and heartbeats) or a client's queries and reports. */
#include "metaserver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "marshal.h"
#include "protocol.h"
#include "sock.h"

#define MAX_RANKED 32
#define MAX_REPORTS 4096

typedef struct mconn {
    int fd;
    const char *peer;  /* the client's address: who measured a throughput */
    wire_reader r;
    wire_writer w;
    uint32_t server_id; /* set once a server joined on this connection   */
} mconn;

static int reply_begin(mconn *c, uint32_t call_id, int status, const char *detail, err_t *err)
{
    wire_begin(&c->w, PROTO_REPLY, call_id);
    int rc = wire_put_u32(&c->w, (uint32_t)status, err);
    if (rc == 0) rc = wire_put_string(&c->w, detail, err);
    return rc;
}

static int reply_error(mconn *c, uint32_t call_id, const err_t *e, err_t *err)
{
    int rc = reply_begin(c, call_id, e->code, e->detail, err);
    return rc == 0 ? wire_end(&c->w, err) : rc;
}

static int serve_hello(mconn *c, uint32_t call_id, err_t *err)
{
    uint32_t version, packet;
    char *peer = NULL;
    int rc = wire_get_u32(&c->r, &version, err);
    if (rc == 0) rc = wire_get_u32(&c->r, &packet, err);
    if (rc == 0) rc = wire_get_string(&c->r, &peer, 256, err);
    if (rc == 0) rc = wire_expect_end(&c->r, err);
    free(peer);
    if (rc != 0) return rc;
    if (version != PROTO_VERSION) {
        err_t e;
        err_set(&e, NUMRPC_EVERSION, "client speaks protocol %u, metaserver %u", version, PROTO_VERSION);
        return reply_error(c, call_id, &e, err);
    }
    rc = reply_begin(c, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = wire_put_u32(&c->w, PROTO_VERSION, err);
    if (rc == 0) rc = wire_put_u32(&c->w, PROTO_MAX_PACKET, err);
    if (rc == 0) rc = wire_put_string(&c->w, "numrpc-metaserver " PACKAGE_VERSION, err);
    if (rc == 0) rc = wire_end(&c->w, err);
    return rc;
}

static int serve_list(mconn *c, uint32_t call_id, err_t *err)
{
    int rc = wire_expect_end(&c->r, err);
    char **names = NULL;
    uint64_t *hashes = NULL;
    uint32_t count = 0;
    if (rc == 0 && table_list(&names, &hashes, &count) != 0) rc = err_set(err, NUMRPC_ENOMEM, "routine list");
    if (rc == 0) rc = reply_begin(c, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = wire_put_u32(&c->w, count, err);
    for (uint32_t i = 0; rc == 0 && i < count; i++) {
        rc = wire_put_string(&c->w, names[i], err);
        if (rc == 0) rc = wire_put_u64(&c->w, hashes[i], err);
    }
    if (rc == 0) rc = wire_end(&c->w, err);
    for (uint32_t i = 0; names && i < count; i++) free(names[i]);
    free(names);
    free(hashes);
    return rc;
}

static int serve_get_iface(mconn *c, uint32_t call_id, err_t *err)
{
    char *name = NULL;
    uint8_t *blob = NULL;
    uint32_t len = 0;
    int rc = wire_get_string(&c->r, &name, IFACE_MAX_NAME, err);
    if (rc == 0) rc = wire_expect_end(&c->r, err);
    if (rc == 0) {
        err_t e;
        if (table_descriptor(name, &blob, &len, &e) != 0) rc = reply_error(c, call_id, &e, err);
        else {
            rc = reply_begin(c, call_id, NUMRPC_OK, "", err);
            if (rc == 0) rc = wire_put_opaque(&c->w, blob, len, err);
            if (rc == 0) rc = wire_end(&c->w, err);
        }
    }
    free(name);
    free(blob);
    return rc;
}

/* u32 count, then per routine: string name, u64 hash, opaque descriptor.
 * Every descriptor is decoded and validated; its name and hash must be
 * the ones announced. */
static int read_routines(mconn *c, meta_routine **out, uint32_t *count_out, err_t *err)
{
    uint32_t count;
    int rc = wire_get_u32(&c->r, &count, err);
    if (rc == 0 && count > META_MAX_ROUTINES)
        rc = err_set(err, NUMRPC_ELIMIT, "%u routines: the metaserver takes %d per server", count, META_MAX_ROUTINES);
    meta_routine *list = rc == 0 ? calloc(count + 1, sizeof *list) : NULL;
    if (rc == 0 && list == NULL) rc = err_set(err, NUMRPC_ENOMEM, "routine list");
    uint32_t n = 0;
    for (; rc == 0 && n < count; n++) {
        char *name = NULL;
        uint64_t hash = 0;
        meta_routine *r = &list[n];
        rc = wire_get_string(&c->r, &name, IFACE_MAX_NAME, err);
        if (rc == 0) rc = wire_get_u64(&c->r, &hash, err);
        if (rc == 0) rc = wire_get_opaque(&c->r, &r->blob, &r->blob_len, IFACE_MAX_BLOB, err);
        if (rc == 0) rc = iface_decode(r->blob, r->blob_len, &r->iface, err);
        if (rc == 0 && (strcmp(r->iface.name, name) != 0 || r->iface.hash != hash))
            rc = err_set(err, NUMRPC_EPROTO, "routine %s: the descriptor does not match its name and hash", name);
        r->calib = 1;
        free(name);
    }
    if (rc == 0) {
        *out = list;
        *count_out = count;
    } else {
        routines_free(list, n);
    }
    return rc;
}

static int serve_join(mconn *c, uint32_t call_id, err_t *err)
{
    meta_server proto;
    memset(&proto, 0, sizeof proto);
    proto.fd = c->fd;
    char *host = NULL, *name = NULL;
    uint32_t port = 0, slots = 0, npoints = 0, nroutines = 0;
    meta_routine *routines = NULL;
    int rc = c->server_id ? err_set(err, NUMRPC_EPROTO, "this connection joined already") : 0;
    if (rc == 0) rc = wire_get_string(&c->r, &host, META_HOST_MAX - 1, err);
    if (rc == 0) rc = wire_get_u32(&c->r, &port, err);
    if (rc == 0) rc = wire_get_string(&c->r, &name, sizeof proto.name - 1, err);
    if (rc == 0) rc = wire_get_u32(&c->r, &slots, err);
    if (rc == 0) rc = wire_get_u32(&c->r, &npoints, err);
    if (rc == 0 && (npoints > META_MAX_POINTS || port == 0 || port > 65535 || slots == 0 || slots > 4096))
        rc = err_set(err, NUMRPC_EPROTO, "JOIN: bad port %u, slots %u or speed points %u", port, slots, npoints);
    for (uint32_t i = 0; rc == 0 && i < npoints; i++) {
        rc = wire_get_double(&c->r, &proto.pt_n[i], err);
        if (rc == 0) rc = wire_get_double(&c->r, &proto.pt_rate[i], err);
        if (rc == 0 && !(proto.pt_n[i] >= 1 && proto.pt_rate[i] > 0 && proto.pt_rate[i] < 1e18 &&
                         (i == 0 || proto.pt_n[i] > proto.pt_n[i - 1])))
            rc = err_set(err, NUMRPC_EPROTO, "JOIN: speed point %u is not increasing and positive", i);
    }
    if (rc == 0) rc = read_routines(c, &routines, &nroutines, err);
    if (rc == 0) rc = wire_expect_end(&c->r, err);
    if (rc == 0) {
        /* An empty host means "the address this connection comes from". */
        snprintf(proto.host, sizeof proto.host, "%s", host[0] ? host : c->peer);
        proto.port = (int)port;
        snprintf(proto.label, sizeof proto.label, "%s:%d", proto.host, proto.port);
        snprintf(proto.name, sizeof proto.name, "%s", name);
        proto.slots = (int)slots;
        proto.npoints = (int)npoints;
        err_t e;
        uint32_t id = 0;
        if (table_join(&proto, routines, nroutines, &id, &e) != 0) {
            rc = reply_error(c, call_id, &e, err);
        } else {
            c->server_id = id;
            rc = reply_begin(c, call_id, NUMRPC_OK, "", err);
            if (rc == 0) rc = wire_put_u32(&c->w, id, err);
            if (rc == 0) rc = wire_put_u32(&c->w, (uint32_t)(meta.opt->drop_after * 1000 / 3), err);
            if (rc == 0) rc = wire_end(&c->w, err);
        }
        routines = NULL; /* table_join owns them */
    }
    routines_free(routines, nroutines);
    free(host);
    free(name);
    return rc;
}

static int serve_routines(mconn *c, err_t *err)
{
    meta_routine *routines = NULL;
    uint32_t n = 0;
    int rc = c->server_id ? read_routines(c, &routines, &n, err)
                          : err_set(err, NUMRPC_EPROTO, "ROUTINES before JOIN");
    if (rc == 0) rc = wire_expect_end(&c->r, err);
    if (rc == 0) table_set_routines(c->server_id, routines, n);
    else routines_free(routines, n);
    return rc;
}

static int serve_load(mconn *c, err_t *err)
{
    uint32_t in_flight, queued, draining;
    double loadavg;
    int rc = c->server_id ? wire_get_u32(&c->r, &in_flight, err)
                          : err_set(err, NUMRPC_EPROTO, "LOAD before JOIN");
    if (rc == 0) rc = wire_get_u32(&c->r, &queued, err);
    if (rc == 0) rc = wire_get_u32(&c->r, &draining, err);
    if (rc == 0) rc = wire_get_double(&c->r, &loadavg, err);
    if (rc == 0) rc = wire_expect_end(&c->r, err);
    if (rc == 0) table_set_load(c->server_id, in_flight, queued, draining, loadavg);
    return rc;
}

static int serve_query(mconn *c, uint32_t call_id, err_t *err)
{
    char *routine = NULL;
    uint64_t hash, bytes_in, bytes_out;
    double flops;
    uint32_t max;
    int rc = wire_get_string(&c->r, &routine, IFACE_MAX_NAME, err);
    if (rc == 0) rc = wire_get_u64(&c->r, &hash, err);
    if (rc == 0) rc = wire_get_double(&c->r, &flops, err);
    if (rc == 0) rc = wire_get_u64(&c->r, &bytes_in, err);
    if (rc == 0) rc = wire_get_u64(&c->r, &bytes_out, err);
    if (rc == 0) rc = wire_get_u32(&c->r, &max, err);
    if (rc == 0) rc = wire_expect_end(&c->r, err);
    if (rc != 0) {
        free(routine);
        return rc;
    }
    meta_estimate est[MAX_RANKED];
    if (!(flops >= 0 && flops < 1e30)) flops = 0;
    int n = table_rank(routine, hash, flops, bytes_in, bytes_out, c->peer, est,
                       max == 0 || max > MAX_RANKED ? MAX_RANKED : (int)max);
    if (n == 0) {
        err_t e;
        err_set(&e, NUMRPC_ENOSERVER, "no server known to the metaserver offers \"%s\"%s", routine,
                hash ? " in this version" : "");
        rc = reply_error(c, call_id, &e, err);
    } else {
        rc = reply_begin(c, call_id, NUMRPC_OK, "", err);
        if (rc == 0) rc = wire_put_u32(&c->w, (uint32_t)meta.opt->lease_ms, err);
        if (rc == 0) rc = wire_put_u32(&c->w, (uint32_t)n, err);
        for (int i = 0; rc == 0 && i < n; i++) {
            const meta_estimate *e = &est[i];
            rc = wire_put_string(&c->w, e->srv->host, err);
            if (rc == 0) rc = wire_put_u32(&c->w, (uint32_t)e->srv->port, err);
            if (rc == 0) rc = wire_put_u32(&c->w, (uint32_t)e->srv->slots, err);
            if (rc == 0) rc = wire_put_u32(&c->w, (uint32_t)e->throughput_known, err);
            if (rc == 0) rc = wire_put_double(&c->w, e->latency, err);
            if (rc == 0) rc = wire_put_double(&c->w, e->bytes_per_second, err);
            if (rc == 0) rc = wire_put_double(&c->w, e->flops_per_second, err);
            if (rc == 0) rc = wire_put_double(&c->w, e->share, err);
            if (rc == 0) rc = wire_put_double(&c->w, e->predicted, err);
        }
        if (rc == 0) rc = wire_end(&c->w, err);
    }
    free(routine);
    return rc;
}

static int serve_report(mconn *c, err_t *err)
{
    uint32_t count;
    int rc = wire_get_u32(&c->r, &count, err);
    if (rc == 0 && count > MAX_REPORTS) rc = err_set(err, NUMRPC_ELIMIT, "REPORT of %u calls (at most %d)", count, MAX_REPORTS);
    for (uint32_t i = 0; rc == 0 && i < count; i++) {
        char *server = NULL, *routine = NULL;
        double flops, predicted, total, compute;
        uint64_t sent, received;
        uint32_t flags = 0;
        rc = wire_get_string(&c->r, &server, META_HOST_MAX + 7, err);
        if (rc == 0) rc = wire_get_string(&c->r, &routine, IFACE_MAX_NAME, err);
        if (rc == 0) rc = wire_get_double(&c->r, &flops, err);
        if (rc == 0) rc = wire_get_u64(&c->r, &sent, err);
        if (rc == 0) rc = wire_get_u64(&c->r, &received, err);
        if (rc == 0) rc = wire_get_double(&c->r, &predicted, err);
        if (rc == 0) rc = wire_get_double(&c->r, &total, err);
        if (rc == 0) rc = wire_get_double(&c->r, &compute, err);
        if (rc == 0) rc = wire_get_u32(&c->r, &flags, err);
        /* Nonsense figures are ignored, never believed. */
        if (rc == 0 && flops >= 0 && flops < 1e30 && total >= 0 && total < 1e7 && compute >= 0 &&
            compute <= total + 1 && predicted >= 0 && predicted < 1e9)
            table_report(c->peer, server, routine, flops, sent, received, predicted, total, compute, flags);
        free(server);
        free(routine);
    }
    if (rc == 0) rc = wire_expect_end(&c->r, err);
    return rc;
}

static int serve_status(mconn *c, uint32_t call_id, err_t *err)
{
    uint32_t format;
    int rc = wire_get_u32(&c->r, &format, err);
    if (rc == 0) rc = wire_expect_end(&c->r, err);
    if (rc != 0) return rc;
    char *text = table_status(format == 1);
    if (text == NULL) {
        err_t e;
        err_set(&e, NUMRPC_ENOMEM, "status text");
        return reply_error(c, call_id, &e, err);
    }
    rc = reply_begin(c, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = wire_put_string(&c->w, text, err);
    if (rc == 0) rc = wire_end(&c->w, err);
    free(text);
    return rc;
}

void serve_connection(int fd, const char *peer)
{
    mconn c = {.fd = fd, .peer = peer};
    err_t err;
    if (wire_reader_init(&c.r, fd, PROTO_MAX_PACKET, &err) != 0 || wire_writer_init(&c.w, fd, 0, &err) != 0)
        goto done;
    for (;;) {
        uint32_t type, call_id;
        int rc = wire_next_message(&c.r, &type, &call_id, &err);
        if (rc != 0) break;
        switch (type) {
        case PROTO_HELLO: rc = serve_hello(&c, call_id, &err); break;
        case PROTO_LIST: rc = serve_list(&c, call_id, &err); break;
        case PROTO_GET_IFACE: rc = serve_get_iface(&c, call_id, &err); break;
        case PROTO_META_JOIN: rc = serve_join(&c, call_id, &err); break;
        case PROTO_META_ROUTINES: rc = serve_routines(&c, &err); break;
        case PROTO_META_LOAD: rc = serve_load(&c, &err); break;
        case PROTO_META_HEARTBEAT:
            rc = wire_skip_message(&c.r, &err);
            if (c.server_id) table_heard(c.server_id);
            break;
        case PROTO_META_QUERY: rc = serve_query(&c, call_id, &err); break;
        case PROTO_META_REPORT: rc = serve_report(&c, &err); break;
        case PROTO_META_STATUS: rc = serve_status(&c, call_id, &err); break;
        default: {
            err_t e;
            err_set(&e, NUMRPC_EPROTO, "message type %u is not served by the metaserver", type);
            rc = wire_skip_message(&c.r, &err);
            if (rc == 0) rc = reply_error(&c, call_id, &e, &err);
        }
        }
        /* A request (JOIN, QUERY) that is well framed but wrong gets its
         * error; anything else broken ends the connection. */
        if (rc != 0 && rc != NUMRPC_EIO && !c.w.in_message && (type == PROTO_META_JOIN || type == PROTO_META_QUERY)) {
            err_t e = err;
            rc = c.r.in_message ? wire_skip_message(&c.r, &err) : 0;
            if (rc == 0) rc = reply_error(&c, call_id, &e, &err);
            if (type == PROTO_META_JOIN && rc == 0) rc = NUMRPC_EPROTO; /* a server that failed to join leaves */
        }
        if (rc != 0) break;
    }
done:
    if (c.server_id) table_leave(c.server_id, "connection closed");
    wire_reader_free(&c.r);
    wire_writer_free(&c.w);
    close(fd);
}
