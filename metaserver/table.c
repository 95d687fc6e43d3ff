/* table.c -- the metaserver's state: servers with their routines, speed
 * curves and load, client-to-server throughput, and the prediction model. */
#include "metaserver.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "sock.h"

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
    meta.started_unix = (double)time(NULL);
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

/* Refuses proto's join when its host:port is another owner's, when its
 * owner or its address holds its share of the table already, or when the
 * table is down to its reserve and either holds an entry (replacing: the
 * entry it would replace, NULL if none).  0 or the error; meta.lock held. */
static int join_allowed_locked(const meta_server *proto, const meta_server *replacing, err_t *err)
{
    if (replacing && strcmp(replacing->owner, proto->owner) != 0)
        return err_set(err, NUMRPC_EAUTH, "%s is held by another identity", proto->label);
    int held = 0, held_from = 0, free_entries = 0;
    for (int i = 0; i < META_MAX_SERVERS; i++) {
        const meta_server *s = &meta.servers[i];
        free_entries += !s->used;
        if (!s->used || s == replacing) continue;
        held += strcmp(s->owner, proto->owner) == 0;
        held_from += strcmp(s->from, proto->from) == 0;
    }
    int cap = meta.opt->max_per_identity;
    if (held >= cap)
        return err_set(err, NUMRPC_EBUSY,
                       "%s holds %d servers on this metaserver already, the most one identity may "
                       "(--max-servers-per-identity %d)",
                       proto->owner, held, cap);
    if (held_from >= cap)
        return err_set(err, NUMRPC_EBUSY,
                       "the address %s holds %d servers on this metaserver already, the most one address may "
                       "(--max-servers-per-identity %d)",
                       proto->from, held_from, cap);
    if (replacing == NULL && free_entries > 0 && free_entries <= META_RESERVED && (held > 0 || held_from > 0))
        return err_set(err, NUMRPC_ELIMIT,
                       "the metaserver's last %d entries go one per identity and address, and %s (from %s) "
                       "holds %d already",
                       META_RESERVED, proto->owner, proto->from, held > held_from ? held : held_from);
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
        events_server(MSG_EVENT_LEAVE, s, NULL, "replaced: the same server joined again");
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
        events_server(MSG_EVENT_JOIN, s, NULL, "%d slots, %u routines", s->slots, n);
    }
    pthread_mutex_unlock(&meta.lock);
    if (rc == 0) log_event("joined: %s (%s)\n", proto->label, proto->owner);
    return rc;
}

/* Whether list (n routines) holds r (the same name and version). */
static int holds(const meta_routine *list, uint32_t n, const meta_routine *r)
{
    for (uint32_t i = 0; i < n; i++)
        if (list[i].iface.hash == r->iface.hash && strcmp(list[i].iface.name, r->iface.name) == 0) return 1;
    return 0;
}

/* Events of type for the routines of `to` that `from` lacks: one per
 * module, naming its routines (up to DIFF_EVENTS modules, then one event
 * counting the rest); meta.lock held. */
#define DIFF_EVENTS 32
static void publish_diff_locked(const meta_server *s, const meta_routine *from, uint32_t nfrom,
                                const meta_routine *to, uint32_t nto, uint32_t type)
{
    char *mark = nto && events_wanted(type) ? calloc(nto, 1) : NULL; /* 1: new, 2: told */
    if (mark == NULL) return;
    for (uint32_t i = 0; i < nto; i++) mark[i] = !holds(from, nfrom, &to[i]);
    uint32_t events = 0, rest = 0;
    for (uint32_t i = 0; i < nto; i++) {
        if (mark[i] != 1) continue;
        if (events == DIFF_EVENTS) {
            rest++;
            continue;
        }
        char names[MSG_EVENT_DETAIL_MAX + 1] = "";
        size_t used = 0;
        uint32_t count = 0;
        for (uint32_t k = i; k < nto; k++) {
            if (mark[k] != 1 || strcmp(to[k].iface.module, to[i].iface.module) != 0) continue;
            mark[k] = 2;
            count++;
            int w = snprintf(names + used, sizeof names - used, "%s%s", used ? " " : "", to[k].iface.name);
            used = w < 0 || (size_t)w >= sizeof names - used ? sizeof names - 1 : used + (size_t)w;
        }
        events_server(type, s, to[i].iface.module, "%u routine%s: %s", count, count == 1 ? "" : "s", names);
        events++;
    }
    if (rest) events_server(type, s, NULL, "%u routines more in other modules", rest);
    free(mark);
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
        publish_diff_locked(s, s->routines, s->nroutines, routines, n, MSG_EVENT_REGISTER);
        publish_diff_locked(s, routines, n, s->routines, s->nroutines, MSG_EVENT_UNREGISTER);
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
    msg_event told[2]; /* published once the lock is let go */
    int ntold = 0;
    pthread_mutex_lock(&meta.lock);
    meta_server *s = find_id_locked(id);
    if (s) {
        if (!s->draining != !draining)
            ntold += events_make(&told[ntold], draining ? MSG_EVENT_DRAIN : MSG_EVENT_UNDRAIN, s,
                                 "%u calls in flight, %u queued", in_flight, queued);
        uint32_t limit = meta.opt->overload_queue > 0 ? (uint32_t)meta.opt->overload_queue : (uint32_t)s->slots;
        if (queued > limit && !s->overloaded)
            ntold += events_make(&told[ntold], MSG_EVENT_OVERLOAD, s, "%u requests queued, more than %u", queued,
                                 limit);
        s->overloaded = queued > limit;
        s->in_flight = in_flight;
        s->queued = queued;
        s->draining = draining;
        s->loadavg = loadavg;
        s->last_heard = s->last_load = sock_now();
    }
    pthread_mutex_unlock(&meta.lock);
    for (int i = 0; i < ntold; i++) events_publish(&told[i]);
}

void table_heard(uint32_t id)
{
    pthread_mutex_lock(&meta.lock);
    meta_server *s = find_id_locked(id);
    if (s) s->last_heard = sock_now();
    pthread_mutex_unlock(&meta.lock);
}

static void note_error_locked(const char *text)
{
    meta_event *e = &meta.errors[meta.errors_pos];
    e->at = sock_now();
    snprintf(e->text, sizeof e->text, "%s", text);
    meta.errors_pos = (meta.errors_pos + 1) % META_RECENT;
    if (meta.nerrors < META_RECENT) meta.nerrors++;
    meta.errors_total++;
}

void table_note_error(const char *fmt, ...)
{
    char text[sizeof meta.errors[0].text];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&meta.lock);
    note_error_locked(text);
    pthread_mutex_unlock(&meta.lock);
}

static void drop_locked(meta_server *s, const char *why, int failed)
{
    log_event("left: %s (%s)\n", s->label, why);
    events_server(MSG_EVENT_LEAVE, s, NULL, "%s", why);
    if (failed) {
        char text[sizeof meta.errors[0].text];
        snprintf(text, sizeof text, "server %s left: %s", s->label, why);
        note_error_locked(text);
    }
    routines_free(s->routines, s->nroutines);
    if (s->fd >= 0) shutdown(s->fd, SHUT_RDWR);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

void table_leave(uint32_t id, const char *why)
{
    pthread_mutex_lock(&meta.lock);
    meta_server *s = find_id_locked(id);
    if (s) drop_locked(s, why, 0);
    pthread_mutex_unlock(&meta.lock);
}

void table_reap(void)
{
    pthread_mutex_lock(&meta.lock);
    double now = sock_now();
    for (int i = 0; i < META_MAX_SERVERS; i++) {
        meta_server *s = &meta.servers[i];
        if (s->used && now - s->last_heard > meta.opt->drop_after) drop_locked(s, "silent past --drop-after", 1);
    }
    pthread_mutex_unlock(&meta.lock);
}

/* ---- The model ---- */

/* The model itself (speed curve, share, T) is common/rank.c. */

meta_routine *table_routine_of_locked(meta_server *s, const char *name, uint64_t hash)
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

int table_active_placements_locked(const meta_server *s, double now)
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
    uint32_t placed = (uint32_t)table_active_placements_locked(s, now);
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
        meta_routine *r = q->routine[0] ? table_routine_of_locked(s, q->routine, q->hash) : NULL;
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

/* Keeps a calibration within META_CALIB_WINDOW of 1, so that reports can
 * never move a server's speed beyond that factor of the curve it measured
 * itself and sent with its JOIN, however many of them come. */
static double within_window(double calib)
{
    if (calib > META_CALIB_WINDOW) return META_CALIB_WINDOW;
    if (calib < 1 / META_CALIB_WINDOW) return 1 / META_CALIB_WINDOW;
    return calib;
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

/* Takes one report from identity's bucket: 1, or 0 when it is empty (the
 * report is to be dropped).  The buckets of identities not heard from
 * lately give way to new ones (meta.lock held). */
static int report_admitted_locked(const char *identity, double now)
{
    double rate = meta.opt->reports_per_minute / 60.0, cap = meta.opt->reports_per_minute;
    meta_bucket *b = NULL, *stale = &meta.buckets[0];
    for (int i = 0; i < META_REPORT_BUCKETS && b == NULL; i++) {
        meta_bucket *x = &meta.buckets[i];
        if (x->who[0] && strcmp(x->who, identity) == 0) b = x;
        else if (!x->who[0] || (stale->who[0] && x->at < stale->at)) stale = x;
    }
    if (b == NULL) { /* a new identity: a full bucket in the longest-quiet place */
        b = stale;
        snprintf(b->who, sizeof b->who, "%s", identity);
        b->level = cap;
        b->at = now;
    }
    b->level += (now - b->at) * rate;
    if (b->level > cap) b->level = cap;
    b->at = now;
    if (b->level < 1) return 0;
    b->level -= 1;
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
    if (!report_admitted_locked(identity, sock_now())) {
        meta.reports_limited++;
        pthread_mutex_unlock(&meta.lock);
        return;
    }
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
        meta_routine *r = table_routine_of_locked(s, routine, 0);
        if (r && flops > 0 && compute > 1e-3)
            r->calib = within_window(ewma(r->calib, bounded_step(r->calib, rank_correction_sample(compute, flops,
                                                                                  rank_speed_at(&s->curve, flops), 1))));
        if (!(flags & PROTO_REPORT_QUEUED) && predicted > 0) {
            meta_recent *x = &meta.recent[meta.recent_pos];
            snprintf(x->server, sizeof x->server, "%s", server);
            snprintf(x->routine, sizeof x->routine, "%s", routine);
            snprintf(x->client, sizeof x->client, "%s", client);
            x->at = sock_now();
            x->flops = flops;
            x->predicted = predicted;
            x->measured = total;
            s->compared++;
            s->predicted_sum += predicted;
            s->measured_sum += total;
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
        meta_routine *r = s->used ? table_routine_of_locked(s, routine, 0) : NULL;
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
