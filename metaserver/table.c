/* table.c -- the metaserver's state: servers with their routines, speed
 * curves and load, client-to-server throughput, and the prediction model. */
#include "metaserver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sock.h"
#include "strbuf.h"

meta_table meta = {.lock = PTHREAD_MUTEX_INITIALIZER};

#define EWMA_ALPHA 0.3
#define CALIB_STEP 2.0 /* a report's sample: within this factor of the calibration */
#define SMALL_CALL_BYTES (64u * 1024u) /* below: the transfer is latency */
#define DEFAULT_BANDWIDTH 1e9          /* bytes/s before any measurement */
#define DEFAULT_LATENCY 1e-4

void table_init(const meta_options *opt)
{
    meta.opt = opt;
    meta.next_id = 1;
    meta.started = sock_now();
}

void routines_free(meta_routine *r, uint32_t n)
{
    for (uint32_t i = 0; r && i < n; i++) {
        iface_free(&r[i].iface);
        free(r[i].blob);
    }
    free(r);
}

static meta_server *find_id_locked(uint32_t id)
{
    for (int i = 0; i < META_MAX_SERVERS; i++)
        if (meta.servers[i].used && meta.servers[i].id == id) return &meta.servers[i];
    return NULL;
}

static void log_event(const char *fmt, const char *a, const char *b)
{
    if (meta.opt && !meta.opt->quiet) {
        printf(fmt, a, b);
        fflush(stdout);
    }
}

/* Refuses proto's join when its host:port is another owner's, or when
 * its owner holds its share of the table already (replacing: the entry it
 * would replace, NULL if none).  0 or the error; meta.lock held. */
static int join_allowed_locked(const meta_server *proto, const meta_server *replacing, err_t *err)
{
    if (replacing && strcmp(replacing->owner, proto->owner) != 0)
        return err_set(err, NUMRPC_EAUTH, "%s is held by another identity", proto->label);
    int held = 0;
    for (int i = 0; i < META_MAX_SERVERS; i++)
        held += meta.servers[i].used && &meta.servers[i] != replacing &&
                strcmp(meta.servers[i].owner, proto->owner) == 0;
    int cap = meta.opt->max_per_identity;
    if (held >= cap)
        return err_set(err, NUMRPC_EBUSY,
                       "%s holds %d servers on this metaserver already, the most one identity may "
                       "(--max-servers-per-identity %d)",
                       proto->owner, held, cap);
    return 0;
}

int table_join(const meta_server *proto, meta_routine *routines, uint32_t n, uint32_t *id_out,
               err_t *err)
{
    pthread_mutex_lock(&meta.lock);
    meta_server *s = NULL;
    for (int i = 0; i < META_MAX_SERVERS && s == NULL; i++)
        if (meta.servers[i].used && strcmp(meta.servers[i].label, proto->label) == 0) s = &meta.servers[i];
    int rc = join_allowed_locked(proto, s, err);
    /* The same owner joining again (its server restarted, or reconnected)
     * replaces its old entry. */
    if (rc == 0 && s) {
        routines_free(s->routines, s->nroutines);
        if (s->fd >= 0) shutdown(s->fd, SHUT_RDWR);
    }
    for (int i = 0; i < META_MAX_SERVERS && s == NULL; i++)
        if (!meta.servers[i].used) s = &meta.servers[i];
    if (rc == 0 && s == NULL)
        rc = err_set(err, NUMRPC_ELIMIT, "the metaserver holds %d servers already", META_MAX_SERVERS);
    if (rc != 0) {
        routines_free(routines, n);
    } else {
        *s = *proto;
        s->used = 1;
        s->id = meta.next_id++;
        s->routines = routines;
        s->nroutines = n;
        s->joined = s->last_heard = sock_now();
        *id_out = s->id;
    }
    pthread_mutex_unlock(&meta.lock);
    if (rc == 0) log_event("joined: %s (%s)\n", proto->label, proto->owner);
    return rc;
}

void table_set_routines(uint32_t id, meta_routine *routines, uint32_t n)
{
    pthread_mutex_lock(&meta.lock);
    meta_server *s = find_id_locked(id);
    if (s) {
        /* Calibration survives for routines that stay. */
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < s->nroutines; j++)
                if (strcmp(routines[i].iface.name, s->routines[j].iface.name) == 0 &&
                    routines[i].iface.hash == s->routines[j].iface.hash)
                    routines[i].calib = s->routines[j].calib;
        routines_free(s->routines, s->nroutines);
        s->routines = routines;
        s->nroutines = n;
        s->last_heard = sock_now();
        routines = NULL;
    }
    pthread_mutex_unlock(&meta.lock);
    routines_free(routines, n);
}

void table_set_load(uint32_t id, uint32_t in_flight, uint32_t queued, uint32_t draining,
                    double loadavg)
{
    pthread_mutex_lock(&meta.lock);
    meta_server *s = find_id_locked(id);
    if (s) {
        s->in_flight = in_flight;
        s->queued = queued;
        s->draining = draining;
        s->loadavg = loadavg;
        s->last_heard = s->last_load = sock_now();
    }
    pthread_mutex_unlock(&meta.lock);
}

void table_heard(uint32_t id)
{
    pthread_mutex_lock(&meta.lock);
    meta_server *s = find_id_locked(id);
    if (s) s->last_heard = sock_now();
    pthread_mutex_unlock(&meta.lock);
}

static void drop_locked(meta_server *s, const char *why)
{
    log_event("left: %s (%s)\n", s->label, why);
    routines_free(s->routines, s->nroutines);
    if (s->fd >= 0) shutdown(s->fd, SHUT_RDWR);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

void table_leave(uint32_t id, const char *why)
{
    pthread_mutex_lock(&meta.lock);
    meta_server *s = find_id_locked(id);
    if (s) drop_locked(s, why);
    pthread_mutex_unlock(&meta.lock);
}

void table_reap(void)
{
    pthread_mutex_lock(&meta.lock);
    double now = sock_now();
    for (int i = 0; i < META_MAX_SERVERS; i++) {
        meta_server *s = &meta.servers[i];
        if (s->used && now - s->last_heard > meta.opt->drop_after) drop_locked(s, "silent past --drop-after");
    }
    pthread_mutex_unlock(&meta.lock);
}

/* ---- The model ---- */

/* The model itself (speed curve, share, T) is common/rank.c. */

static meta_routine *routine_of(meta_server *s, const char *name, uint64_t hash)
{
    for (uint32_t i = 0; i < s->nroutines; i++)
        if (strcmp(s->routines[i].iface.name, name) == 0 && (hash == 0 || s->routines[i].iface.hash == hash))
            return &s->routines[i];
    return NULL;
}

static meta_pair *pair_of_locked(const char *client, const char *server, int create)
{
    for (int i = 0; i < meta.npairs; i++)
        if (strcmp(meta.pairs[i].client, client) == 0 && strcmp(meta.pairs[i].server, server) == 0)
            return &meta.pairs[i];
    if (!create) return NULL;
    int slot = meta.npairs < META_MAX_PAIRS ? meta.npairs++ : (int)(meta.reports % META_MAX_PAIRS);
    meta_pair *p = &meta.pairs[slot];
    memset(p, 0, sizeof *p);
    snprintf(p->client, sizeof p->client, "%s", client);
    snprintf(p->server, sizeof p->server, "%s", server);
    return p;
}

/* The throughput a client sees to a server it never measured: the median
 * of what it measured elsewhere, else the default. */
static double fallback_bandwidth_locked(const char *client)
{
    double v[META_MAX_PAIRS];
    int n = 0;
    for (int i = 0; i < meta.npairs; i++)
        if (strcmp(meta.pairs[i].client, client) == 0 && meta.pairs[i].bytes_per_second > 0)
            v[n++] = meta.pairs[i].bytes_per_second;
    if (n == 0) return DEFAULT_BANDWIDTH;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return v[n / 2];
}

static int active_placements(const meta_server *s, double now)
{
    int k = 0;
    for (int i = 0; i < META_MAX_PLACED; i++) k += s->placed_until[i] > now;
    return k;
}

/* The bytes of q's input that must still reach server label: what its
 * handles hold there is there already (never below 0).  Input held on
 * other servers is counted as if it crossed this server's link from the
 * client: it is pulled from its server, over a link the metaserver does
 * not know (an approximation, docs/metaserver.md). */
static uint64_t travelling_bytes(const msg_meta_query *q, const char *label)
{
    uint64_t held = msg_meta_query_held_on(q, label);
    return held >= q->bytes_in ? 0 : q->bytes_in - held;
}

/* The model's figures for server s and this call (its placement is the
 * caller's); r NULL for data that has no routine. */
static void estimate_locked(meta_server *s, meta_routine *r, const msg_meta_query *q, const char *client,
                            double now, msg_meta_ranked *e)
{
    memset(e, 0, sizeof *e);
    snprintf(e->host, sizeof e->host, "%s", s->host);
    e->port = (uint32_t)s->port;
    snprintf(e->fingerprint, sizeof e->fingerprint, "%s", s->fingerprint);
    e->slots = (uint32_t)s->slots;
    const meta_pair *p = pair_of_locked(client, s->label, 0);
    e->latency = p && p->latency > 0 ? p->latency : DEFAULT_LATENCY;
    e->throughput_known = p && p->bytes_per_second > 0;
    e->bytes_per_second = e->throughput_known ? p->bytes_per_second : fallback_bandwidth_locked(client);
    e->flops_per_second = rank_speed_at(&s->curve, q->flops) / (r && r->calib > 0 ? r->calib : 1);
    uint32_t busy = s->in_flight + s->queued;
    uint32_t placed = (uint32_t)active_placements(s, now);
    e->share = rank_share(s->slots, placed > busy ? placed : busy);
    rank_terms t = {.latency = e->latency,
                    .bytes_per_second = e->bytes_per_second,
                    .flops_per_second = e->flops_per_second,
                    .share = e->share,
                    .correction = 1};
    e->predicted = rank_predict(&t, q->flops, travelling_bytes(q, s->label) + q->bytes_out);
}

int table_rank(const msg_meta_query *q, const char *client, const char *identity, msg_meta_ranked *out,
               int max)
{
    meta_server *on[META_MAX_SERVERS]; /* the server of each out[i] */
    pthread_mutex_lock(&meta.lock);
    meta.queries++;
    double now = sock_now();
    int n = 0;
    for (int i = 0; i < META_MAX_SERVERS && n < max; i++) {
        meta_server *s = &meta.servers[i];
        if (!s->used || s->draining) continue;
        /* No routine: a place for a data handle's bytes, any server. */
        meta_routine *r = q->routine[0] ? routine_of(s, q->routine, q->hash) : NULL;
        if (r == NULL && q->routine[0]) continue;
        estimate_locked(s, r, q, client, now, &out[n]);
        on[n] = s;
        /* insertion by predicted time */
        for (int j = n; j > 0 && out[j].predicted < out[j - 1].predicted; j--) {
            msg_meta_ranked t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
            meta_server *x = on[j];
            on[j] = on[j - 1];
            on[j - 1] = x;
        }
        n++;
    }
    if (n > 0) {
        /* The call is placed on the first: later queries see it (no herd). */
        meta_server *s = on[0];
        int oldest = 0;
        for (int i = 1; i < META_MAX_PLACED; i++)
            if (s->placed_until[i] < s->placed_until[oldest]) oldest = i;
        s->placed_until[oldest] = now + out[0].predicted;
        snprintf(s->placed_for[oldest], sizeof s->placed_for[oldest], "%s", identity);
        s->placed++;
    }
    pthread_mutex_unlock(&meta.lock);
    return n;
}

static void record_error(double *ring, int *count, int *pos, double e)
{
    ring[*pos] = e;
    *pos = (*pos + 1) % META_ERRORS;
    if (*count < META_ERRORS) (*count)++;
}

static double ewma(double old, double sample)
{
    return rank_ewma(old, sample, EWMA_ALPHA);
}

/* One report moves a calibration at most CALIB_STEP times up or down
 * before the average: a forged report cannot make a server look absurdly
 * slow or fast, while a real change is learnt within a few reports. */
static double bounded_step(double current, double sample)
{
    double base = current > 0 ? current : 1;
    if (sample > base * CALIB_STEP) return base * CALIB_STEP;
    if (sample < base / CALIB_STEP) return base / CALIB_STEP;
    return sample;
}

/* Ends the placement made for identity on s that ends first; 0 when none
 * is running (meta.lock held). */
static int end_placement_locked(meta_server *s, const char *identity, double now)
{
    int end = -1;
    for (int i = 0; i < META_MAX_PLACED; i++)
        if (s->placed_until[i] > now && strcmp(s->placed_for[i], identity) == 0 &&
            (end < 0 || s->placed_until[i] < s->placed_until[end]))
            end = i;
    if (end < 0) return 0;
    s->placed_until[end] = 0;
    return 1;
}

void table_report_dropped(void)
{
    pthread_mutex_lock(&meta.lock);
    meta.reports_dropped++;
    pthread_mutex_unlock(&meta.lock);
}

void table_report(const char *client, const char *identity, const msg_meta_call *call)
{
    const char *server = call->server, *routine = call->routine;
    double flops = call->flops, predicted = call->predicted, total = call->total_seconds,
           compute = call->compute_seconds;
    uint64_t bytes_sent = call->bytes_sent, bytes_received = call->bytes_received;
    uint32_t flags = call->flags;
    pthread_mutex_lock(&meta.lock);
    meta.reports++;
    meta_server *s = NULL;
    for (int i = 0; i < META_MAX_SERVERS && s == NULL; i++)
        if (meta.servers[i].used && strcmp(meta.servers[i].label, server) == 0) s = &meta.servers[i];
    meta_pair *p = pair_of_locked(client, server, 1);
    double xfer = total - compute;
    if (xfer < 0) xfer = 0;
    uint64_t bytes = bytes_sent + bytes_received;
    p->samples++;
    if (flags & PROTO_REPORT_QUEUED) {
        /* queued in the client: the transfer time is unknown */
    } else if (bytes < SMALL_CALL_BYTES) {
        p->latency = ewma(p->latency, xfer);
    } else {
        double moving = xfer - (p->latency > 0 ? p->latency : 0);
        if (moving < 1e-6) moving = 1e-6;
        p->bytes_per_second = ewma(p->bytes_per_second, (double)bytes / moving);
    }
    if (s && !(flags & PROTO_REPORT_PROBE)) {
        s->reports++;
        /* The call is over: its placement ends and it no longer loads the
         * server, whatever the server's last LOAD (sent when its
         * dispatcher next wakes) says -- only for a placement made for
         * this identity, so that reports cannot empty a busy server. */
        if (!(flags & PROTO_REPORT_QUEUED) && end_placement_locked(s, identity, sock_now()) && s->in_flight > 0)
            s->in_flight--;
        meta_routine *r = routine_of(s, routine, 0);
        if (r && flops > 0 && compute > 1e-3)
            r->calib = ewma(r->calib, bounded_step(r->calib, rank_correction_sample(compute, flops,
                                                                                  rank_speed_at(&s->curve, flops), 1)));
        if (!(flags & PROTO_REPORT_QUEUED) && predicted > 0) {
            meta_recent *x = &meta.recent[meta.recent_pos];
            snprintf(x->server, sizeof x->server, "%s", server);
            snprintf(x->routine, sizeof x->routine, "%s", routine);
            x->flops = flops;
            x->predicted = predicted;
            x->measured = total;
            meta.recent_pos = (meta.recent_pos + 1) % META_RECENT;
            if (meta.nrecent < META_RECENT) meta.nrecent++;
        }
        if (!(flags & PROTO_REPORT_QUEUED) && predicted > 0 && total > 0.01) {
            double e = fabs(predicted - total) / total;
            record_error(s->err, &s->nerr, &s->err_pos, e);
            record_error(meta.err_all, &meta.nerr_all, &meta.err_all_pos, e);
        }
    }
    pthread_mutex_unlock(&meta.lock);
}

int table_descriptor(const char *routine, uint8_t **blob, uint32_t *len, char *module, err_t *err)
{
    int rc = err_set(err, NUMRPC_ENOENT, "no server known to the metaserver offers \"%s\"", routine);
    pthread_mutex_lock(&meta.lock);
    for (int i = 0; i < META_MAX_SERVERS && rc != 0; i++) {
        meta_server *s = &meta.servers[i];
        meta_routine *r = s->used ? routine_of(s, routine, 0) : NULL;
        if (r == NULL) continue;
        *blob = malloc(r->blob_len);
        if (*blob == NULL) {
            rc = err_set(err, NUMRPC_ENOMEM, "descriptor copy");
            break;
        }
        memcpy(*blob, r->blob, r->blob_len);
        *len = r->blob_len;
        snprintf(module, IFACE_MAX_NAME + 1, "%s", r->iface.module);
        rc = 0;
    }
    pthread_mutex_unlock(&meta.lock);
    if (rc == 0) err_clear(err);
    return rc;
}

int table_list(int (*visible)(const char *module, const void *arg), const void *arg, msg_routine_entry **items_out,
               uint32_t *count)
{
    pthread_mutex_lock(&meta.lock);
    uint32_t cap = 0, n = 0;
    for (int i = 0; i < META_MAX_SERVERS; i++)
        if (meta.servers[i].used) cap += meta.servers[i].nroutines;
    msg_routine_entry *items = calloc(cap + 1, sizeof *items);
    for (int i = 0; items && i < META_MAX_SERVERS; i++) {
        const meta_server *s = &meta.servers[i];
        for (uint32_t j = 0; s->used && j < s->nroutines; j++) {
            int seen = visible && !visible(s->routines[j].iface.module, arg);
            for (uint32_t k = 0; k < n && !seen; k++) seen = strcmp(items[k].name, s->routines[j].iface.name) == 0;
            if (seen) continue;
            snprintf(items[n].name, sizeof items[n].name, "%s", s->routines[j].iface.name);
            items[n++].hash = s->routines[j].iface.hash;
        }
    }
    pthread_mutex_unlock(&meta.lock);
    if (items == NULL) return NUMRPC_ENOMEM;
    *items_out = items;
    *count = n;
    return 0;
}

/* ---- Status ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    if (n == 0) return -1;
    double tmp[META_ERRORS];
    memcpy(tmp, v, (size_t)n * sizeof *v);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

static void status_text_locked(strbuf *b, double now)
{
    int nservers = 0;
    for (int i = 0; i < META_MAX_SERVERS; i++) nservers += meta.servers[i].used;
    strbuf_printf(b,
                  "metaserver: up %.1f s, %d server%s, %llu queries, %llu reports (%llu dropped), drop after %.1f s, "
                  "lease %d ms, %s\n",
                  now - meta.started, nservers, nservers == 1 ? "" : "s", (unsigned long long)meta.queries,
                  (unsigned long long)meta.reports, (unsigned long long)meta.reports_dropped, meta.opt->drop_after,
                  meta.opt->lease_ms, rights_on() ? "tokens required" : "no tokens");
    strbuf_printf(b, "\n%-22s %5s %5s %6s %6s %7s %8s %6s %6s %7s %9s  %s\n", "SERVER", "ID", "SLOTS", "CALLS",
                  "QUEUED", "LOADAVG", "HEARD", "ROUT.", "PLACED", "REPORTS", "PRED.ERR", "SPEED (n: GFlop/s)");
    for (int i = 0; i < META_MAX_SERVERS; i++) {
        const meta_server *s = &meta.servers[i];
        if (!s->used) continue;
        double med = median(s->err, s->nerr);
        char errtxt[32];
        if (med < 0) snprintf(errtxt, sizeof errtxt, "-");
        else snprintf(errtxt, sizeof errtxt, "%.1f%%", 100 * med);
        strbuf_printf(b, "%-22s %5u %5d %6u %6u %7.2f %6.1fs %6u %6llu %7llu %9s %s", s->label, s->id, s->slots,
                      s->in_flight, s->queued, s->loadavg, now - s->last_heard, s->nroutines,
                      (unsigned long long)s->placed, (unsigned long long)s->reports, errtxt,
                      s->draining ? "(draining) " : "");
        for (int k = 0; k < s->curve.npoints; k++) strbuf_printf(b, " %.0f:%.2f", s->curve.n[k], s->curve.rate[k] / 1e9);
        strbuf_printf(b, "\n");
    }
    strbuf_printf(b, "\nIDENTITY (certificate as announced; clients check it)\n%-22s %-6s %-18s %s\n", "SERVER", "TLS",
                  "FINGERPRINT", "OWNER");
    for (int i = 0; i < META_MAX_SERVERS; i++) {
        const meta_server *s = &meta.servers[i];
        if (s->used)
            strbuf_printf(b, "%-22s %-6s %-18.16s %s\n", s->label, s->fingerprint[0] ? "yes" : "no",
                          s->fingerprint[0] ? s->fingerprint : "-", s->owner);
    }
    strbuf_printf(b, "\nROUTINES\n");
    msg_routine_entry *names = NULL;
    uint32_t count = 0;
    pthread_mutex_unlock(&meta.lock);
    int rc = table_list(NULL, NULL, &names, &count);
    pthread_mutex_lock(&meta.lock);
    for (uint32_t k = 0; rc == 0 && k < count; k++) {
        strbuf_printf(b, "  %-16s", names[k].name);
        for (int i = 0; i < META_MAX_SERVERS; i++) {
            const meta_server *s = &meta.servers[i];
            if (s->used && routine_of((meta_server *)s, names[k].name, 0))
                strbuf_printf(b, " %s", s->label);
        }
        strbuf_printf(b, "\n");
    }
    free(names);
    strbuf_printf(b, "\nTHROUGHPUT (measured by clients)\n%-16s %-22s %10s %10s %8s\n", "CLIENT", "SERVER", "LATENCY",
                  "MB/s", "CALLS");
    for (int i = 0; i < meta.npairs; i++) {
        const meta_pair *p = &meta.pairs[i];
        char bw[32];
        if (p->bytes_per_second > 0) snprintf(bw, sizeof bw, "%.1f", p->bytes_per_second / 1e6);
        else snprintf(bw, sizeof bw, "unknown");
        strbuf_printf(b, "%-16s %-22s %8.0fus %10s %8llu\n", p->client, p->server, p->latency * 1e6, bw,
                      (unsigned long long)p->samples);
    }
    strbuf_printf(b, "\nRECENT CALLS (predicted vs measured)\n%-22s %-12s %10s %10s %10s %7s\n", "SERVER", "ROUTINE",
                  "MFLOP", "PREDICTED", "MEASURED", "ERROR");
    for (int i = 0; i < meta.nrecent; i++) {
        const meta_recent *x = &meta.recent[(meta.recent_pos - meta.nrecent + i + META_RECENT) % META_RECENT];
        strbuf_printf(b, "%-22s %-12s %10.1f %8.2fms %8.2fms %6.0f%%\n", x->server, x->routine, x->flops / 1e6,
                      x->predicted * 1e3, x->measured * 1e3,
                      x->measured > 0 ? 100 * (x->predicted - x->measured) / x->measured : 0);
    }
    double med = median(meta.err_all, meta.nerr_all);
    if (med < 0) strbuf_printf(b, "\nPREDICTIONS: no reported call longer than 10 ms yet\n");
    else
        strbuf_printf(b, "\nPREDICTIONS: median error %.1f%% over the last %d calls longer than 10 ms\n", 100 * med,
                      meta.nerr_all);
}

static void status_json_locked(strbuf *b, double now)
{
    strbuf_printf(b,
                  "{\"uptime\":%.3f,\"queries\":%llu,\"reports\":%llu,\"reports_dropped\":%llu,\"tokens\":%d,"
                  "\"drop_after\":%.3f,\"lease_ms\":%d,\"servers\":[",
                  now - meta.started, (unsigned long long)meta.queries, (unsigned long long)meta.reports,
                  (unsigned long long)meta.reports_dropped, rights_on(), meta.opt->drop_after,
                  meta.opt->lease_ms);
    int first = 1;
    for (int i = 0; i < META_MAX_SERVERS; i++) {
        const meta_server *s = &meta.servers[i];
        if (!s->used) continue;
        strbuf_printf(b, "%s{\"server\":\"%s\",\"owner\":\"%s\",\"tls\":%s,\"fingerprint\":\"%s\",\"id\":%u,\"slots\":%d,\"in_flight\":%u,\"queued\":%u,\"draining\":%u,"
                     "\"loadavg\":%.3f,\"heard_ago\":%.3f,\"placed\":%llu,\"reports\":%llu,\"prediction_error\":%.4f,"
                     "\"speed\":[",
                      first ? "" : ",", s->label, s->owner, s->fingerprint[0] ? "true" : "false", s->fingerprint, s->id, s->slots, s->in_flight, s->queued, s->draining, s->loadavg,
                      now - s->last_heard, (unsigned long long)s->placed, (unsigned long long)s->reports,
                      median(s->err, s->nerr));
        for (int k = 0; k < s->curve.npoints; k++)
            strbuf_printf(b, "%s{\"n\":%.0f,\"flops\":%.6g}", k ? "," : "", s->curve.n[k], s->curve.rate[k]);
        strbuf_printf(b, "],\"routines\":[");
        for (uint32_t k = 0; k < s->nroutines; k++)
            strbuf_printf(b, "%s\"%s\"", k ? "," : "", s->routines[k].iface.name);
        strbuf_printf(b, "]}");
        first = 0;
    }
    strbuf_printf(b, "],\"throughput\":[");
    for (int i = 0; i < meta.npairs; i++) {
        const meta_pair *p = &meta.pairs[i];
        strbuf_printf(b, "%s{\"client\":\"%s\",\"server\":\"%s\",\"latency\":%.6g,\"bytes_per_second\":%.6g,\"calls\":%llu}",
                      i ? "," : "", p->client, p->server, p->latency, p->bytes_per_second,
                      (unsigned long long)p->samples);
    }
    strbuf_printf(b, "],\"recent\":[");
    for (int i = 0; i < meta.nrecent; i++) {
        const meta_recent *x = &meta.recent[(meta.recent_pos - meta.nrecent + i + META_RECENT) % META_RECENT];
        strbuf_printf(b, "%s{\"on\":\"%s\",\"routine\":\"%s\",\"flops\":%.6g,\"predicted\":%.6g,\"measured\":%.6g}",
                      i ? "," : "", x->server, x->routine, x->flops, x->predicted, x->measured);
    }
    strbuf_printf(b, "],\"prediction_error_median\":%.4f,\"prediction_samples\":%d}\n",
                  median(meta.err_all, meta.nerr_all), meta.nerr_all);
}

char *table_status(int json)
{
    strbuf b = {0};
    pthread_mutex_lock(&meta.lock);
    double now = sock_now();
    if (json) status_json_locked(&b, now);
    else status_text_locked(&b, now);
    pthread_mutex_unlock(&meta.lock);
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
