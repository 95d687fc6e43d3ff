/* meta.c -- asking a metaserver (NUMRPC_METASERVER) where a call should run:
 * ranked servers under a lease, re-ranked per call, and reports of calls. */
#include "meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "marshal.h"
#include "protocol.h"
#include "sock.h"

#define LEASES 64
#define REPORTS_MAX 512        /* buffered reports (older ones are dropped) */
#define REPORT_FLUSH_COUNT 32  /* with a valid lease, flush at this many    */
#define REPORT_FLUSH_SECONDS 1.0
#define DOWN_SECONDS 2.0       /* an unreachable metaserver is not asked   */
#define PROBE_WORTH_BYTES (64u << 10) /* a call moving less does not probe */

/* What the metaserver said about one server. */
typedef struct meta_choice {
    endpoint ep;
    int slots;
    double latency, bytes_per_second, flops_per_second, share;
    double adjust;        /* EWMA of measured / predicted compute under this lease */
    int throughput_known; /* the metaserver has measured (or this client probed) */
} meta_choice;

/* A link this client probed itself (probe.c), until the metaserver knows;
 * bytes_per_second 0: the probe failed (an older server), not retried. */
typedef struct meta_probed {
    char label[CLIENT_HOST_MAX + 16];
    double latency, bytes_per_second;
} meta_probed;

/* An answer that may be reused until `until` for calls of the same
 * routine and a similar size (flops within a factor of 8). */
typedef struct meta_lease {
    char routine[IFACE_MAX_NAME + 1];
    int size_class;
    double until;
    int count;
    meta_choice choice[CLIENT_MAX_SERVERS];
} meta_lease;

typedef struct meta_report {
    char server[64];
    char routine[IFACE_MAX_NAME + 1];
    double flops, predicted, total, compute;
    uint64_t sent, received;
    uint32_t flags; /* PROTO_REPORT_QUEUED, PROTO_REPORT_PROBE */
} meta_report;

static pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int enabled;
    endpoint ep;
    double down_until;
    meta_lease leases[LEASES];
    int next_lease;
    meta_report reports[REPORTS_MAX];
    int nreports;
    double last_flush;
    endpoint last[CLIENT_MAX_SERVERS];
    int nlast;
    meta_probed probed[2 * CLIENT_MAX_SERVERS];
    int nprobed;
} mc;

int meta_configure(const char *hostport, err_t *err)
{
    endpoint ep;
    int on = hostport && *hostport;
    if (on) {
        int rc = endpoint_set(&ep, hostport, err);
        if (rc != 0) {
            err_prefix(err, "NUMRPC_METASERVER");
            return rc;
        }
    }
    pthread_mutex_lock(&meta_lock);
    mc.enabled = on;
    if (on) mc.ep = ep;
    mc.down_until = 0;
    memset(mc.leases, 0, sizeof mc.leases);
    mc.nlast = 0;
    mc.nprobed = 0;
    pthread_mutex_unlock(&meta_lock);
    return 0;
}

int meta_enabled(void)
{
    pthread_mutex_lock(&meta_lock);
    int on = mc.enabled;
    pthread_mutex_unlock(&meta_lock);
    return on;
}

static int size_class(double flops)
{
    int cls = 0;
    for (double f = 8; f <= flops && cls < 200; f *= 8) cls++;
    return cls;
}

/* T = latency + bytes / B + flops / (P_calc(n) x share): the model the
 * metaserver ranks with, applied to this call's own sizes. */
static double predict(const meta_choice *c, double flops, uint64_t bytes, int idle)
{
    double share = idle || c->share <= 0 ? 1 : c->share;
    double t = c->latency + (c->bytes_per_second > 0 ? (double)bytes / c->bytes_per_second : 0);
    if (flops > 0 && c->flops_per_second > 0) t += flops * (c->adjust > 0 ? c->adjust : 1) / (c->flops_per_second * share);
    return t;
}

/* Appends a report for the metaserver (the oldest is dropped when full);
 * meta_lock held. */
static void push_report_locked(const meta_report *r)
{
    if (mc.nreports == REPORTS_MAX) {
        memmove(mc.reports, mc.reports + 1, (REPORTS_MAX - 1) * sizeof *mc.reports);
        mc.nreports--;
    }
    mc.reports[mc.nreports++] = *r;
}

/* ---- Talking to the metaserver ---- */

static void put_reports(client_conn *c, const meta_report *r, int n, err_t *err, int *rc)
{
    wire_begin(&c->m.writer, PROTO_META_REPORT, client_next_call_id());
    *rc = wire_put_u32(&c->m.writer, (uint32_t)n, err);
    for (int i = 0; *rc == 0 && i < n; i++) {
        *rc = wire_put_string(&c->m.writer, r[i].server, err);
        if (*rc == 0) *rc = wire_put_string(&c->m.writer, r[i].routine, err);
        if (*rc == 0) *rc = wire_put_double(&c->m.writer, r[i].flops, err);
        if (*rc == 0) *rc = wire_put_u64(&c->m.writer, r[i].sent, err);
        if (*rc == 0) *rc = wire_put_u64(&c->m.writer, r[i].received, err);
        if (*rc == 0) *rc = wire_put_double(&c->m.writer, r[i].predicted, err);
        if (*rc == 0) *rc = wire_put_double(&c->m.writer, r[i].total, err);
        if (*rc == 0) *rc = wire_put_double(&c->m.writer, r[i].compute, err);
        if (*rc == 0) *rc = wire_put_u32(&c->m.writer, r[i].flags, err);
    }
    if (*rc == 0) *rc = wire_end_held(&c->m.writer, err);
}

/* Takes the buffered reports (malloc'd copy in *out; the caller frees). */
static int take_reports(meta_report **out)
{
    pthread_mutex_lock(&meta_lock);
    int n = mc.nreports;
    *out = n ? malloc((size_t)n * sizeof **out) : NULL;
    if (*out) memcpy(*out, mc.reports, (size_t)n * sizeof **out);
    else n = 0;
    mc.nreports = 0;
    mc.last_flush = sock_now();
    pthread_mutex_unlock(&meta_lock);
    return n;
}

static void mark_down(void)
{
    pthread_mutex_lock(&meta_lock);
    mc.down_until = sock_now() + DOWN_SECONDS;
    pthread_mutex_unlock(&meta_lock);
}

/* Reports (held) and the query go out in one write; the answer fills *l. */
static int ask(const endpoint *mep, const char *routine, uint64_t hash, double flops, uint64_t bytes_in,
               uint64_t bytes_out, meta_lease *l, err_t *err)
{
    client_conn *c = NULL;
    meta_report *reports = NULL;
    int nrep = take_reports(&reports);
    int rc = conn_acquire(mep, &c, err);
    if (rc == 0 && nrep > 0) put_reports(c, reports, nrep, err, &rc);
    uint32_t id = client_next_call_id(), lease_ms = 0, count = 0;
    if (rc == 0) {
        wire_begin(&c->m.writer, PROTO_META_QUERY, id);
        rc = wire_put_string(&c->m.writer, routine, err);
    }
    if (rc == 0) rc = wire_put_u64(&c->m.writer, hash, err);
    if (rc == 0) rc = wire_put_double(&c->m.writer, flops, err);
    if (rc == 0) rc = wire_put_u64(&c->m.writer, bytes_in, err);
    if (rc == 0) rc = wire_put_u64(&c->m.writer, bytes_out, err);
    if (rc == 0) rc = wire_put_u32(&c->m.writer, CLIENT_MAX_SERVERS, err);
    if (rc == 0) rc = wire_end(&c->m.writer, err);
    if (rc == 0) rc = conn_read_reply_status(c, id, err);
    if (rc == 0) rc = wire_get_u32(&c->m.reader, &lease_ms, err);
    if (rc == 0) rc = wire_get_u32(&c->m.reader, &count, err);
    if (rc == 0 && count > CLIENT_MAX_SERVERS) rc = err_set(err, NUMRPC_EPROTO, "metaserver: %u servers", count);
    for (uint32_t i = 0; rc == 0 && i < count; i++) {
        meta_choice *ch = &l->choice[i];
        char *host = NULL;
        uint32_t port = 0, slots = 0, known = 0;
        double predicted;
        rc = wire_get_string(&c->m.reader, &host, CLIENT_HOST_MAX - 1, err);
        if (rc == 0) rc = wire_get_u32(&c->m.reader, &port, err);
        if (rc == 0) rc = wire_get_u32(&c->m.reader, &slots, err);
        if (rc == 0) rc = wire_get_u32(&c->m.reader, &known, err);
        if (rc == 0) rc = wire_get_double(&c->m.reader, &ch->latency, err);
        if (rc == 0) rc = wire_get_double(&c->m.reader, &ch->bytes_per_second, err);
        if (rc == 0) rc = wire_get_double(&c->m.reader, &ch->flops_per_second, err);
        if (rc == 0) rc = wire_get_double(&c->m.reader, &ch->share, err);
        if (rc == 0) rc = wire_get_double(&c->m.reader, &predicted, err);
        if (rc == 0) {
            snprintf(ch->ep.host, sizeof ch->ep.host, "%s", host);
            ch->ep.port = (int)port;
            snprintf(ch->ep.label, sizeof ch->ep.label, "%s:%u", host, port);
            ch->slots = slots > 0 ? (int)slots : 1;
            ch->adjust = 1;
            ch->throughput_known = known != 0;
        }
        free(host);
    }
    if (rc == 0) rc = wire_expect_end(&c->m.reader, err);
    if (rc == 0) {
        snprintf(l->routine, sizeof l->routine, "%s", routine);
        l->size_class = size_class(flops);
        l->until = sock_now() + lease_ms / 1000.0;
        l->count = (int)count;
    }
    if (c) {
        if (call_conn_usable(rc) && !c->hello_pending) conn_release(c);
        else conn_discard(c);
    }
    if (rc == NUMRPC_ECONNECT || rc == NUMRPC_EIO || rc == NUMRPC_ETIMEDOUT) mark_down();
    free(reports);
    return rc;
}

/* A fresh lease ranks servers whose link to this client the metaserver has
 * not measured with a guess; a call that moves enough bytes for the link
 * to matter measures each such link once (probe.c) and tells the
 * metaserver with its next reports.  A failed probe leaves the guess. */
static void probe_unknown_links(meta_lease *l, uint64_t bytes)
{
    if (bytes < PROBE_WORTH_BYTES) return;
    for (int i = 0; i < l->count; i++) {
        meta_choice *ch = &l->choice[i];
        if (ch->throughput_known) continue;
        int found = 0;
        pthread_mutex_lock(&meta_lock);
        for (int j = 0; j < mc.nprobed && !found; j++)
            if (strcmp(mc.probed[j].label, ch->ep.label) == 0) {
                found = 1;
                if (mc.probed[j].bytes_per_second <= 0) break;
                ch->latency = mc.probed[j].latency;
                ch->bytes_per_second = mc.probed[j].bytes_per_second;
                ch->throughput_known = 1;
            }
        pthread_mutex_unlock(&meta_lock);
        if (found) continue;
        probe_result pr;
        err_t err;
        if (probe_link(&ch->ep, &pr, &err) != 0) memset(&pr, 0, sizeof pr);
        pthread_mutex_lock(&meta_lock);
        if (mc.nprobed < (int)(sizeof mc.probed / sizeof mc.probed[0])) {
            meta_probed *m = &mc.probed[mc.nprobed++];
            snprintf(m->label, sizeof m->label, "%s", ch->ep.label);
            m->latency = pr.latency;
            m->bytes_per_second = pr.bytes_per_second;
        }
        pthread_mutex_unlock(&meta_lock);
        if (pr.bytes_per_second <= 0) continue;
        ch->latency = pr.latency;
        ch->bytes_per_second = pr.bytes_per_second;
        ch->throughput_known = 1;
        meta_report empty = {.total = pr.latency, .flags = PROTO_REPORT_PROBE};
        meta_report sized = {.sent = pr.bytes / 2, .received = pr.bytes / 2, .total = pr.seconds, .flags = PROTO_REPORT_PROBE};
        snprintf(empty.server, sizeof empty.server, "%s", ch->ep.label);
        snprintf(sized.server, sizeof sized.server, "%s", ch->ep.label);
        pthread_mutex_lock(&meta_lock);
        push_report_locked(&empty);
        push_report_locked(&sized);
        pthread_mutex_unlock(&meta_lock);
    }
}

/* The lease for routine at this size, from the table or a fresh query. */
static int lease_for(const char *routine, uint64_t hash, double flops, uint64_t bytes_in, uint64_t bytes_out,
                     meta_lease *out, err_t *err)
{
    endpoint mep;
    double now = sock_now();
    int cls = size_class(flops), flush = 0;
    pthread_mutex_lock(&meta_lock);
    mep = mc.ep;
    for (int i = 0; i < LEASES; i++) {
        meta_lease *l = &mc.leases[i];
        if (l->count > 0 && l->until > now && l->size_class == cls && strcmp(l->routine, routine) == 0) {
            *out = *l;
            flush = mc.nreports >= REPORT_FLUSH_COUNT ||
                    (mc.nreports > 0 && now - mc.last_flush > REPORT_FLUSH_SECONDS);
            pthread_mutex_unlock(&meta_lock);
            if (flush) meta_flush();
            return 0;
        }
    }
    int down = mc.down_until > now;
    pthread_mutex_unlock(&meta_lock);
    if (down) return err_set(err, NUMRPC_ECONNECT, "metaserver %s: unreachable a moment ago", mep.label);
    meta_lease fresh;
    memset(&fresh, 0, sizeof fresh);
    int rc = ask(&mep, routine, hash, flops, bytes_in, bytes_out, &fresh, err);
    if (rc != 0) return rc;
    probe_unknown_links(&fresh, bytes_in + bytes_out);
    pthread_mutex_lock(&meta_lock);
    mc.leases[mc.next_lease] = fresh;
    mc.next_lease = (mc.next_lease + 1) % LEASES;
    for (int i = 0; i < fresh.count; i++) {
        int seen = 0;
        for (int j = 0; j < mc.nlast && !seen; j++) seen = strcmp(mc.last[j].label, fresh.choice[i].ep.label) == 0;
        if (!seen && mc.nlast < CLIENT_MAX_SERVERS) mc.last[mc.nlast++] = fresh.choice[i].ep;
    }
    pthread_mutex_unlock(&meta_lock);
    *out = fresh;
    return 0;
}

/* The interface the metaserver holds for routine (cached like a server's). */
static int meta_iface(const char *routine, iface_ref **out, err_t *err)
{
    endpoint mep;
    pthread_mutex_lock(&meta_lock);
    mep = mc.ep;
    int down = mc.down_until > sock_now();
    pthread_mutex_unlock(&meta_lock);
    *out = iface_cache_peek(mep.label, routine);
    if (*out) return 0;
    if (down) return err_set(err, NUMRPC_ECONNECT, "metaserver %s: unreachable a moment ago", mep.label);
    client_conn *c = NULL;
    int rc = conn_acquire(&mep, &c, err);
    if (rc == 0) rc = iface_cache_get(c, routine, out, err);
    if (c) {
        if (call_conn_usable(rc) && !c->hello_pending) conn_release(c);
        else conn_discard(c);
    }
    if (rc == NUMRPC_ECONNECT || rc == NUMRPC_EIO || rc == NUMRPC_ETIMEDOUT) mark_down();
    return rc;
}

/* Bytes each way of a call bound to f, from its shapes. */
static void call_bytes(const iface_t *f, const iface_shape *shapes, uint64_t *in, uint64_t *out)
{
    *in = *out = 0;
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        uint64_t b = p->rank > 0 ? shapes[i].wire_elems * iface_type_size(p->type) : 8;
        if (iface_param_in_request(p)) *in += b;
        if (iface_param_in_reply(p)) *out += b;
    }
}

/* Ranks the lease's servers for this call (best first) into eps/pred
 * (and, if asked, the slots and the transfer part of each prediction). */
static int rank(const meta_lease *l, double flops, uint64_t bytes, int idle, endpoint *eps, double *pred,
                int *slots, double *xfer)
{
    int order[CLIENT_MAX_SERVERS];
    double t[CLIENT_MAX_SERVERS];
    for (int i = 0; i < l->count; i++) {
        t[i] = predict(&l->choice[i], flops, bytes, idle);
        order[i] = i;
        for (int j = i; j > 0 && t[order[j]] < t[order[j - 1]]; j--) {
            int x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    }
    for (int i = 0; i < l->count; i++) {
        eps[i] = l->choice[order[i]].ep;
        pred[i] = t[order[i]];
        if (slots) slots[i] = l->choice[order[i]].slots;
        if (xfer) xfer[i] = predict(&l->choice[order[i]], 0, bytes, idle);
    }
    return l->count;
}

int meta_plan_call(const char *routine, arg_source *src, endpoint *eps, double *pred, double *flops, err_t *err)
{
    iface_ref *ref = NULL;
    call_obj *k = calloc(1, sizeof *k);
    int rc = k ? meta_iface(routine, &ref, err) : err_set(err, NUMRPC_ENOMEM, "call object");
    if (rc == 0) {
        va_list ap;
        arg_source each = *src;
        if (src->va) {
            va_copy(ap, *src->va);
            each.va = &ap;
        }
        rc = call_bind(k, &ref->iface, &each, err);
        if (src->va) va_end(ap);
    }
    if (rc == 0) rc = marshal_eval_shapes(&ref->iface, k->argv, k->shapes, err);
    uint64_t in = 0, out = 0;
    meta_lease l;
    if (rc == 0) {
        *flops = marshal_complexity(&ref->iface, k->argv);
        call_bytes(&ref->iface, k->shapes, &in, &out);
        rc = lease_for(routine, ref->iface.hash, *flops, in, out, &l, err);
    }
    if (ref) iface_cache_put(ref);
    free(k);
    return rc != 0 ? rc : rank(&l, *flops, in + out, 0, eps, pred, NULL, NULL);
}

int meta_plan_async(call_obj *k, arg_source *src, endpoint *eps, err_t *err)
{
    iface_ref *ref = NULL;
    int rc = meta_iface(k->routine, &ref, err);
    if (rc == 0) {
        va_list ap;
        arg_source each = *src;
        if (src->va) {
            va_copy(ap, *src->va);
            each.va = &ap;
        }
        rc = call_capture(k, &ref->iface, &each, err);
        if (src->va) va_end(ap);
    }
    uint64_t in = 0, out = 0;
    meta_lease l;
    if (rc == 0) {
        call_bytes(&ref->iface, k->shapes, &in, &out);
        rc = lease_for(k->routine, ref->iface.hash, k->flops, in, out, &l, err);
    }
    if (ref) iface_cache_put(ref);
    if (rc != 0) {
        call_release_args(k);
        k->nargs = 0;
        return rc;
    }
    /* A farm adds its own backlog per server: the idle time of the call. */
    int n = rank(&l, k->flops, in + out, 1, eps, k->meta_pred, k->meta_slots, k->meta_xfer);
    k->meta = 1;
    return n;
}

/* The share of a server's speed a new call gets with busy calls beside it
 * (the metaserver's rule, metaserver/table.c). */
static double share_with(int slots, uint32_t busy)
{
    if (slots < 1) slots = 1;
    return busy + 1 <= (uint32_t)slots ? 1.0 : (double)slots / ((double)busy + 1);
}

void meta_note_call(const char *routine, double flops, double predicted, const numrpc_call_info *info,
                    uint32_t server_busy, int queued)
{
    pthread_mutex_lock(&meta_lock);
    if (mc.enabled) {
        meta_report r = {.flops = flops,
                         .predicted = predicted,
                         .total = info->total_seconds,
                         .compute = info->compute_seconds,
                         .sent = info->bytes_sent,
                         .received = info->bytes_received,
                         .flags = queued ? PROTO_REPORT_QUEUED : 0};
        snprintf(r.server, sizeof r.server, "%s", info->server);
        snprintf(r.routine, sizeof r.routine, "%s", routine);
        push_report_locked(&r);
        /* Until each lease ends: the server is ranked with the load its
         * reply carried (fresher than the lease's), and under a lease for
         * this routine and size the compute time predicted there is
         * corrected from what was measured (the metaserver's calibration
         * arrives with the next lease).  The load the call ran beside is
         * the share's business, not the speed's: it is taken out of the
         * correction. */
        int cls = size_class(flops);
        int learn = flops > 0 && info->compute_seconds > 5e-4;
        double now = sock_now();
        for (int i = 0; i < LEASES; i++) {
            meta_lease *l = &mc.leases[i];
            if (l->until <= now) continue;
            int same_calls = learn && l->size_class == cls && strcmp(l->routine, routine) == 0;
            for (int j = 0; j < l->count; j++) {
                meta_choice *ch = &l->choice[j];
                if (strcmp(ch->ep.label, info->server) != 0) continue;
                ch->share = share_with(ch->slots, server_busy);
                if (!same_calls || ch->flops_per_second <= 0) continue;
                double ratio = info->compute_seconds * ch->flops_per_second * ch->share / flops;
                ch->adjust = 0.6 * ch->adjust + 0.4 * ratio;
            }
        }
    }
    pthread_mutex_unlock(&meta_lock);
}

int meta_last_servers(endpoint *out, int max)
{
    pthread_mutex_lock(&meta_lock);
    int n = mc.enabled ? mc.nlast : 0;
    if (n > max) n = max;
    memcpy(out, mc.last, (size_t)n * sizeof *out);
    pthread_mutex_unlock(&meta_lock);
    return n;
}

void meta_flush(void)
{
    pthread_mutex_lock(&meta_lock);
    endpoint mep = mc.ep;
    int go = mc.enabled && mc.nreports > 0 && mc.down_until <= sock_now();
    pthread_mutex_unlock(&meta_lock);
    if (!go) return;
    meta_report *reports = NULL;
    int n = take_reports(&reports);
    err_t err;
    client_conn *c = NULL;
    int rc = n > 0 ? conn_acquire(&mep, &c, &err) : -1;
    if (rc == 0) put_reports(c, reports, n, &err, &rc);
    if (rc == 0) rc = wire_flush(&c->m.writer, &err);
    if (c) {
        /* A pooled connection must not carry an unanswered HELLO: read it. */
        if (rc == 0 && c->hello_pending) rc = conn_finish_hello(c, &err);
        if (rc == 0) conn_release(c);
        else conn_discard(c);
    }
    if (rc == NUMRPC_ECONNECT || rc == NUMRPC_EIO) mark_down();
    free(reports);
}

/* ---- What call.c and async.c use ---- */

int meta_servers_for_call(const char *routine, arg_source *src, endpoint *eps, double *pred, double *flops,
                          int *ranked, err_t *err)
{
    *ranked = 0;
    *flops = 0;
    int n = meta_plan_call(routine, src, eps, pred, flops, err);
    if (n > 0) {
        *ranked = 1;
        return n;
    }
    err_t why = *err; /* NUMRPC_SERVER or the last list, else the metaserver's reason */
    n = client_servers(eps, err);
    if (n < 0) *err = why;
    return n < 0 ? why.code : n;
}

int meta_servers_for_async(call_obj *k, arg_source *src, endpoint *eps, int *bound, err_t *err)
{
    *bound = 0;
    int n = meta_plan_async(k, src, eps, err);
    if (n > 0) {
        *bound = 1;
        return n;
    }
    err_t why = *err;
    n = client_servers(eps, err);
    if (n < 0) *err = why;
    return n < 0 ? why.code : n;
}
