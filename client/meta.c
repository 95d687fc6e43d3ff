/* meta.c -- asking a metaserver (NUMRPC_METASERVER) where a call should run:
 * ranked servers under a lease, re-ranked per call, and reports of calls. */
#include "meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "iface_cache.h"
#include "marshal.h"
#include "msg_meta.h"
#include "probe.h"
#include "protocol.h"
#include "rank.h"
#include "sock.h"

#define LEASES 64
#define REPORTS_MAX 512        /* buffered reports (older ones are dropped) */
#define REPORT_FLUSH_COUNT 32  /* with a valid lease, flush at this many    */
#define REPORT_FLUSH_SECONDS 1.0
#define REPORT_LATEST_SECONDS 2.0 /* a report waits this long at most (the reporter) */
#define DOWN_SECONDS 2.0       /* an unreachable metaserver is not asked   */
#define PROBE_WORTH_BYTES (64u << 10) /* a call moving less does not probe */
#define ADJUST_WEIGHT 0.4      /* of a new sample in a lease's speed correction */
#define ADJUST_MIN_COMPUTE 5e-4 /* seconds: shorter calls do not correct it */

/* What the metaserver said about one server: the model's figures
 * (model.correction: the EWMA of measured / predicted compute under this
 * lease). */
typedef struct meta_choice {
    endpoint ep;
    int slots;
    rank_terms model;
    int throughput_known; /* the metaserver has measured (or this client probed) */
} meta_choice;

/* A link this client probed itself (probe.c), until the metaserver knows;
 * bytes_per_second 0: the probe failed (an older server), not retried. */
typedef struct meta_probed {
    char label[CLIENT_HOST_MAX + 16];
    double latency, bytes_per_second; /* 0: the probe failed ...          */
    double retry_at;                  /* ... and is not tried again before */
} meta_probed;

/* A link whose probe failed keeps its guess this long, then is probed again
 * (a server that was down, or a port now someone else's). */
#define PROBE_RETRY_SECONDS 10.0

/* An answer that may be reused until `until` for calls of the same
 * routine and a similar size (flops within a factor of 8). */
typedef struct meta_lease {
    char routine[IFACE_MAX_NAME + 1];
    int size_class;
    double until;
    int count;
    meta_choice choice[CLIENT_MAX_SERVERS];
} meta_lease;

typedef msg_meta_call meta_report; /* one call for the next META_REPORT */

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
    double first_waiting;  /* when the oldest report still buffered came   */
    pid_t reporter;        /* the process whose reporter thread runs (0: none;
                              a forked child has none of its parent's)   */
    int reporter_stop;
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
        if (rc != 0) return rc;
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

/* The model (common/rank.c) applied to this call's own sizes; idle: as if
 * the server had nothing else to run (a farm adds its own backlog). */
static double predict(const meta_choice *c, double flops, uint64_t bytes, int idle)
{
    rank_terms t = c->model;
    if (idle) t.share = 1;
    return rank_predict(&t, flops, bytes);
}

static pthread_cond_t report_cv = PTHREAD_COND_INITIALIZER; /* with meta_lock */
static pthread_t reporter_thread;
static void *reporter_main(void *arg);

/* Appends a report for the metaserver (the oldest is dropped when full);
 * meta_lock held.  The reporter sends it within REPORT_LATEST_SECONDS if
 * no query carries it first. */
static void push_report_locked(const meta_report *r)
{
    if (mc.nreports == REPORTS_MAX) {
        memmove(mc.reports, mc.reports + 1, (REPORTS_MAX - 1) * sizeof *mc.reports);
        mc.nreports--;
    }
    if (mc.nreports == 0) mc.first_waiting = sock_now();
    mc.reports[mc.nreports++] = *r;
    pid_t self = getpid();
    if (mc.reporter != self && !mc.reporter_stop && pthread_create(&reporter_thread, NULL, reporter_main, NULL) == 0)
        mc.reporter = self;
    pthread_cond_signal(&report_cv);
}

/* ---- Talking to the metaserver ---- */

static void put_reports(client_conn *c, const meta_report *r, int n, err_t *err, int *rc)
{
    *rc = msg_write_meta_report(&c->m.writer, client_next_call_id(), r, (uint32_t)n, err);
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
               uint64_t bytes_out, const msg_meta_held *held, uint32_t nheld, meta_lease *l, err_t *err)
{
    client_conn *c = NULL;
    meta_report *reports = NULL;
    int nrep = take_reports(&reports);
    int rc = conn_acquire(mep, 0, &c, err);
    if (rc == 0 && nrep > 0) put_reports(c, reports, nrep, err, &rc);
    uint32_t id = client_next_call_id(), lease_ms = 0, count = 0;
    msg_meta_query q = {.hash = hash, .flops = flops, .bytes_in = bytes_in, .bytes_out = bytes_out,
                        .max_servers = CLIENT_MAX_SERVERS};
    msg_meta_ranked ranked[CLIENT_MAX_SERVERS];
    snprintf(q.routine, sizeof q.routine, "%s", routine);
    q.nheld = nheld < MSG_META_MAX_HELD ? nheld : MSG_META_MAX_HELD;
    if (q.nheld) memcpy(q.held, held, q.nheld * sizeof *held);
    if (rc == 0) rc = msg_write_meta_query(&c->m.writer, id, &q, err);
    if (rc == 0) rc = conn_read_reply_status(c, id, err);
    if (rc == 0) rc = msg_read_meta_query_reply(&c->m.reader, &lease_ms, ranked, CLIENT_MAX_SERVERS, &count, err);
    for (uint32_t i = 0; rc == 0 && i < count; i++) {
        const msg_meta_ranked *s = &ranked[i];
        meta_choice *ch = &l->choice[i];
        snprintf(ch->ep.host, sizeof ch->ep.host, "%.*s", (int)sizeof ch->ep.host - 1, s->host);
        ch->ep.port = (int)s->port;
        snprintf(ch->ep.label, sizeof ch->ep.label, "%.*s:%u", MSG_META_HOST_MAX, s->host, s->port);
        /* The certificate its JOIN announced: a lease cannot send the call
         * to another one (conn_acquire checks it under TLS). */
        snprintf(ch->ep.fingerprint, sizeof ch->ep.fingerprint, "%s", s->fingerprint);
        ch->slots = s->slots > 0 ? (int)s->slots : 1;
        ch->model = (rank_terms){.latency = s->latency,
                                 .bytes_per_second = s->bytes_per_second,
                                 .flops_per_second = s->flops_per_second,
                                 .share = s->share,
                                 .correction = 1};
        ch->throughput_known = s->throughput_known != 0;
    }
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
 * metaserver with its next reports.  A failed probe leaves the guess for
 * PROBE_RETRY_SECONDS. */
static void probe_unknown_links(meta_lease *l, uint64_t bytes)
{
    if (bytes < PROBE_WORTH_BYTES) return;
    for (int i = 0; i < l->count; i++) {
        meta_choice *ch = &l->choice[i];
        if (ch->throughput_known) continue;
        int found = -1, skip = 0;
        pthread_mutex_lock(&meta_lock);
        for (int j = 0; j < mc.nprobed && found < 0; j++)
            if (strcmp(mc.probed[j].label, ch->ep.label) == 0) found = j;
        if (found >= 0 && mc.probed[found].bytes_per_second > 0) {
            ch->model.latency = mc.probed[found].latency;
            ch->model.bytes_per_second = mc.probed[found].bytes_per_second;
            ch->throughput_known = 1;
            skip = 1;
        } else if (found >= 0) {
            skip = sock_now() < mc.probed[found].retry_at; /* failed a moment ago: the guess stays */
        }
        pthread_mutex_unlock(&meta_lock);
        if (skip) continue;
        probe_result pr;
        err_t err;
        if (probe_link(&ch->ep, &pr, &err) != 0) memset(&pr, 0, sizeof pr);
        pthread_mutex_lock(&meta_lock);
        if (found < 0 && mc.nprobed < (int)(sizeof mc.probed / sizeof mc.probed[0])) found = mc.nprobed++;
        if (found >= 0) {
            meta_probed *m = &mc.probed[found];
            snprintf(m->label, sizeof m->label, "%s", ch->ep.label);
            m->latency = pr.latency;
            m->bytes_per_second = pr.bytes_per_second;
            m->retry_at = pr.bytes_per_second > 0 ? 0 : sock_now() + PROBE_RETRY_SECONDS;
        }
        pthread_mutex_unlock(&meta_lock);
        if (pr.bytes_per_second <= 0) continue;
        ch->model.latency = pr.latency;
        ch->model.bytes_per_second = pr.bytes_per_second;
        ch->throughput_known = 1;
        meta_report empty = {.total_seconds = pr.latency, .flags = PROTO_REPORT_PROBE};
        meta_report sized = {.bytes_sent = pr.bytes / 2,
                             .bytes_received = pr.bytes / 2,
                             .total_seconds = pr.seconds,
                             .flags = PROTO_REPORT_PROBE};
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
    int rc = ask(&mep, routine, hash, flops, bytes_in, bytes_out, NULL, 0, &fresh, err);
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
    int rc = conn_acquire(&mep, 0, &c, err);
    if (rc == 0) rc = iface_cache_get(c, routine, out, err);
    if (c) {
        if (call_conn_usable(rc) && !c->hello_pending) conn_release(c);
        else conn_discard(c);
    }
    if (rc == NUMRPC_ECONNECT || rc == NUMRPC_EIO || rc == NUMRPC_ETIMEDOUT) mark_down();
    return rc;
}

/* Bytes each way of a call bound to f, from its shapes (a held array,
 * a handle's, does not travel). */
static void call_bytes(const iface_t *f, const iface_shape *shapes, uint64_t *in, uint64_t *out)
{
    *in = *out = 0;
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->rank > 0 && shapes[i].held) continue;
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

/* Ranks the servers for call k: binds k (its one bind) against the
 * interface the metaserver holds, evaluates its shapes and complexity,
 * and takes a lease; fills eps and k->meta_pred / meta_slots / meta_xfer
 * in that order.  idle: the ranking leaves out the call's wait in
 * queues (a farm adds its own backlog per server).  The count or an error. */
static int meta_plan(call_obj *k, arg_source *src, endpoint *eps, int idle, err_t *err)
{
    iface_ref *ref = NULL;
    int rc = meta_iface(k->routine, &ref, err);
    if (rc == 0) rc = call_bind(k, &ref->iface, src, err);
    if (rc == 0) rc = marshal_eval_shapes(&ref->iface, k->argv, k->shapes, err);
    uint64_t in = 0, out = 0;
    meta_lease l;
    if (rc == 0) {
        k->flops = marshal_complexity(&ref->iface, k->argv);
        call_bytes(&ref->iface, k->shapes, &in, &out);
        rc = lease_for(k->routine, ref->iface.hash, k->flops, in, out, &l, err);
    }
    if (ref) iface_cache_put(ref);
    if (rc != 0) return rc;
    int n = rank(&l, k->flops, in + out, idle, eps, k->meta_pred, k->meta_slots, k->meta_xfer);
    k->meta = 1;
    return n;
}

/* One answer of the metaserver, not kept as a lease (its held block is
 * this call's alone): a query for routine into *l. */
static int ask_once(const char *routine, uint64_t hash, double flops, uint64_t bytes_in, uint64_t bytes_out,
                    const msg_meta_held *held, uint32_t nheld, meta_lease *l, err_t *err)
{
    pthread_mutex_lock(&meta_lock);
    endpoint mep = mc.ep;
    int down = mc.down_until > sock_now();
    pthread_mutex_unlock(&meta_lock);
    if (down) return err_set(err, NUMRPC_ECONNECT, "metaserver %s: unreachable a moment ago", mep.label);
    memset(l, 0, sizeof *l);
    int rc = ask(&mep, routine, hash, flops, bytes_in, bytes_out, held, nheld, l, err);
    if (rc == 0 && l->count == 0) rc = err_set(err, NUMRPC_ENOSERVER, "metaserver %s named no server", mep.label);
    return rc;
}

int meta_place_data(uint64_t bytes, endpoint *ep, err_t *err)
{
    endpoint eps[CLIENT_MAX_SERVERS];
    double pred[CLIENT_MAX_SERVERS];
    meta_lease l;
    int rc = ask_once("", 0, 0, bytes, 0, NULL, 0, &l, err);
    if (rc != 0) return rc;
    rank(&l, 0, bytes, 0, eps, pred, NULL, NULL);
    *ep = eps[0];
    return 0;
}

int meta_rank_held(const iface_t *f, const call_obj *k, const msg_meta_held *held, uint32_t nheld, endpoint *eps,
                   err_t *err)
{
    uint64_t in = 0, out = 0;
    call_bytes(f, k->shapes, &in, &out);
    for (uint32_t i = 0; i < nheld; i++) in = held[i].bytes > UINT64_MAX - in ? UINT64_MAX : in + held[i].bytes;
    meta_lease l;
    int rc = ask_once(f->name, f->hash, marshal_complexity(f, k->argv), in, out, held, nheld, &l, err);
    if (rc != 0) return rc;
    /* The metaserver's order: it alone knows what each server holds. */
    for (int i = 0; i < l.count; i++) eps[i] = l.choice[i].ep;
    return l.count;
}

void meta_note_call(const char *routine, double flops, double predicted, const numrpc_call_info *info,
                    uint32_t server_busy, int queued)
{
    pthread_mutex_lock(&meta_lock);
    if (mc.enabled) {
        meta_report r = {.flops = flops,
                         .predicted = predicted,
                         .total_seconds = info->total_seconds,
                         .compute_seconds = info->compute_seconds,
                         .bytes_sent = info->bytes_sent,
                         .bytes_received = info->bytes_received,
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
        int learn = flops > 0 && info->compute_seconds > ADJUST_MIN_COMPUTE;
        double now = sock_now();
        for (int i = 0; i < LEASES; i++) {
            meta_lease *l = &mc.leases[i];
            if (l->until <= now) continue;
            int same_calls = learn && l->size_class == cls && strcmp(l->routine, routine) == 0;
            for (int j = 0; j < l->count; j++) {
                meta_choice *ch = &l->choice[j];
                if (strcmp(ch->ep.label, info->server) != 0) continue;
                rank_terms *m = &ch->model;
                m->share = rank_share(ch->slots, server_busy);
                if (!same_calls || m->flops_per_second <= 0) continue;
                double ratio = rank_correction_sample(info->compute_seconds, flops, m->flops_per_second, m->share);
                m->correction = rank_ewma(m->correction, ratio, ADJUST_WEIGHT);
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
    int rc = n > 0 ? conn_acquire(&mep, 0, &c, &err) : -1;
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

/* Waits on report_cv (meta_lock held) until monotonic time `until`. */
static void wait_until_locked(double until)
{
    double left = until - sock_now();
    if (left <= 0) return;
    struct timespec at;
    clock_gettime(CLOCK_REALTIME, &at);
    at.tv_sec += (time_t)left;
    at.tv_nsec += (long)((left - (double)(time_t)left) * 1e9);
    if (at.tv_nsec >= 1000000000L) {
        at.tv_sec++;
        at.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&report_cv, &meta_lock, &at);
}

/* The reporter: a report buffered REPORT_LATEST_SECONDS ago goes now (a
 * long run between calls still shows in `numrpc status`); a metaserver
 * down is tried again once it may be up. */
static void *reporter_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&meta_lock);
    while (!mc.reporter_stop) {
        double due = mc.first_waiting + REPORT_LATEST_SECONDS;
        if (mc.down_until > due) due = mc.down_until;
        if (mc.nreports == 0) pthread_cond_wait(&report_cv, &meta_lock);
        else if (sock_now() < due) wait_until_locked(due);
        else {
            pthread_mutex_unlock(&meta_lock);
            meta_flush();
            pthread_mutex_lock(&meta_lock);
        }
    }
    pthread_mutex_unlock(&meta_lock);
    return NULL;
}

void meta_finish(void)
{
    pthread_mutex_lock(&meta_lock);
    int running = mc.reporter == getpid(); /* a child joins no thread of its parent's */
    mc.reporter_stop = 1;
    pthread_cond_broadcast(&report_cv);
    pthread_mutex_unlock(&meta_lock);
    if (running) pthread_join(reporter_thread, NULL);
    meta_flush();
    pthread_mutex_lock(&meta_lock);
    mc.reporter = mc.reporter_stop = 0; /* the next calls start another */
    pthread_mutex_unlock(&meta_lock);
}

/* ---- What call.c and async.c use ---- */

/* Where a call goes when the metaserver ranked nothing (planned <= 0, its
 * reason in err): NUMRPC_SERVER, else the servers it named lately; when
 * none, the metaserver's reason stays the error. */
static int unranked_servers(int planned, endpoint *eps, err_t *err)
{
    if (planned > 0) return planned;
    err_t why = *err;
    int n = config_servers(eps, err);
    if (n == 0) n = meta_last_servers(eps, CLIENT_MAX_SERVERS);
    if (n > 0) return n;
    *err = why;
    return why.code;
}

int meta_servers_for(call_obj *k, arg_source *src, endpoint *eps, int idle, err_t *err)
{
    k->meta = 0;
    return unranked_servers(meta_plan(k, src, eps, idle, err), eps, err);
}
