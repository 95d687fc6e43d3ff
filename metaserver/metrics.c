/* metrics.c -- the metaserver's /metrics: its servers, placements (the
 * leases it counts against their slots), predictions against measured times
 * and each client-server link, in the Prometheus text format. */
#include "metaserver.h"

#include <stdio.h>

#include "prom.h"
#include "sock.h"

/* A value of server s (meta.lock held). */
typedef double (*server_value)(const meta_server *s, double now);

static double slots(const meta_server *s, double now) { (void)now; return s->slots; }
static double in_flight(const meta_server *s, double now) { (void)now; return s->in_flight; }
static double queued(const meta_server *s, double now) { (void)now; return s->queued; }
static double draining(const meta_server *s, double now) { (void)now; return s->draining; }
static double loadavg(const meta_server *s, double now) { (void)now; return s->loadavg; }
static double heard(const meta_server *s, double now) { return now - s->last_heard; }
static double nroutines(const meta_server *s, double now) { (void)now; return s->nroutines; }
static double placed(const meta_server *s, double now) { (void)now; return (double)s->placed; }
static double active(const meta_server *s, double now) { return table_active_placements_locked(s, now); }
static double reports(const meta_server *s, double now) { (void)now; return (double)s->reports; }
static double compared(const meta_server *s, double now) { (void)now; return (double)s->compared; }
static double predicted(const meta_server *s, double now) { (void)now; return s->predicted_sum; }
static double measured(const meta_server *s, double now) { (void)now; return s->measured_sum; }

static const struct {
    const char *name, *type, *help;
    server_value value;
} per_server[] = {
    {"numrpc_meta_server_slots", "gauge", "Calls a server runs at once at its measured speed.", slots},
    {"numrpc_meta_server_calls_in_flight", "gauge", "Calls running on a server, as it last said.", in_flight},
    {"numrpc_meta_server_queued_requests", "gauge", "Requests waiting for a worker on a server.", queued},
    {"numrpc_meta_server_draining", "gauge", "1 while a server drains (it gets no placement).", draining},
    {"numrpc_meta_server_load_average", "gauge", "A server host's 1-minute load average.", loadavg},
    {"numrpc_meta_server_last_heard_seconds", "gauge", "Seconds since a server was last heard from.", heard},
    {"numrpc_meta_server_routines", "gauge", "Routines a server offers.", nroutines},
    {"numrpc_meta_server_placements_total", "counter", "Calls placed first on a server by queries.", placed},
    {"numrpc_meta_server_active_placements", "gauge",
     "Placements whose predicted end is still to come: the leases counted against a server's slots.", active},
    {"numrpc_meta_server_reports_total", "counter", "Finished calls on a server that clients reported.", reports},
    {"numrpc_meta_server_compared_calls_total", "counter", "Reported calls on a server that had a prediction.",
     compared},
    {"numrpc_meta_server_predicted_seconds_total", "counter",
     "Predicted times of the compared calls on a server, added up.", predicted},
    {"numrpc_meta_server_measured_seconds_total", "counter",
     "Measured times (client side, whole call) of the compared calls on a server, added up.", measured},
};

static void servers_locked(strbuf *b, double now)
{
    for (size_t m = 0; m < sizeof per_server / sizeof per_server[0]; m++) {
        prom_family(b, per_server[m].name, per_server[m].type, per_server[m].help);
        for (int i = 0; i < META_MAX_SERVERS; i++) {
            const meta_server *s = &meta.servers[i];
            prom_label l = {"server", s->label};
            if (s->used) prom_sample(b, per_server[m].name, &l, 1, per_server[m].value(s, now));
        }
    }
    const char *name = "numrpc_meta_server_prediction_error_ratio";
    prom_family(b, name, "gauge",
                "Median of |predicted - measured| / measured over a server's last calls longer than 10 ms.");
    for (int i = 0; i < META_MAX_SERVERS; i++) {
        const meta_server *s = &meta.servers[i];
        prom_label l = {"server", s->label};
        if (s->used && s->nerr > 0) prom_sample(b, name, &l, 1, table_median(s->err, s->nerr));
    }
    name = "numrpc_meta_server_speed_flops_per_second";
    prom_family(b, name, "gauge", "A server's measured speed at problem size n (its speed curve).");
    for (int i = 0; i < META_MAX_SERVERS; i++) {
        const meta_server *s = &meta.servers[i];
        for (int k = 0; s->used && k < s->curve.npoints; k++) {
            char n[32];
            snprintf(n, sizeof n, "%.0f", s->curve.n[k]);
            prom_label l[2] = {{"server", s->label}, {"n", n}};
            prom_sample(b, name, l, 2, s->curve.rate[k]);
        }
    }
}

static void links_locked(strbuf *b)
{
    const char *names[3] = {"numrpc_meta_link_latency_seconds", "numrpc_meta_link_throughput_bytes_per_second",
                            "numrpc_meta_link_reports_total"};
    const char *helps[3] = {"Latency a client measured to a server (moving average of small calls).",
                            "Throughput a client measured to a server (moving average of large calls; absent "
                            "until one was made).",
                            "Calls a client reported on a server."};
    for (int m = 0; m < 3; m++) {
        prom_family(b, names[m], m == 2 ? "counter" : "gauge", helps[m]);
        for (int i = 0; i < meta.npairs; i++) {
            const meta_pair *p = &meta.pairs[i];
            prom_label l[2] = {{"client", p->client}, {"server", p->server}};
            if (m == 0) prom_sample(b, names[m], l, 2, p->latency);
            else if (m == 1 && p->bytes_per_second > 0) prom_sample(b, names[m], l, 2, p->bytes_per_second);
            else if (m == 2) prom_sample_u64(b, names[m], l, 2, p->samples);
        }
    }
}

static void totals_locked(strbuf *b)
{
    int n = 0, subscribers;
    uint64_t events, dropped;
    for (int i = 0; i < META_MAX_SERVERS; i++) n += meta.servers[i].used;
    events_counts(&subscribers, &events, &dropped);
    const struct {
        const char *name, *type, *help;
        double value;
    } rows[] = {
        {"numrpc_meta_servers", "gauge", "Servers joined.", n},
        {"numrpc_meta_queries_total", "counter", "Queries answered (who should run a call).", (double)meta.queries},
        {"numrpc_meta_reports_total", "counter", "Finished calls clients reported.", (double)meta.reports},
        {"numrpc_meta_reports_dropped_total", "counter", "Reports dropped: their token has no `report` right.",
         (double)meta.reports_dropped},
        {"numrpc_meta_reports_limited_total", "counter",
         "Reports dropped: beyond their identity's --max-reports-per-minute.", (double)meta.reports_limited},
        {"numrpc_meta_errors_total", "counter", "Refused connections and requests, and servers dropped as silent.",
         (double)meta.errors_total},
        {"numrpc_meta_event_subscribers", "gauge", "Connections subscribed to events.", subscribers},
        {"numrpc_meta_events_total", "counter", "Events published while someone was subscribed.", (double)events},
        {"numrpc_meta_event_subscribers_dropped_total", "counter",
         "Event subscribers dropped: their queue of 256 events was full.", (double)dropped},
        {"numrpc_meta_lease_seconds", "gauge", "How long a client may reuse an answer (--lease-ms).",
         meta.opt->lease_ms / 1000.0},
        {"numrpc_meta_start_time_seconds", "gauge", "When the metaserver started, in Unix seconds.",
         meta.started_unix},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        prom_family(b, rows[i].name, rows[i].type, rows[i].help);
        prom_sample(b, rows[i].name, NULL, 0, rows[i].value);
    }
    if (meta.nerr_all > 0) {
        const char *name = "numrpc_meta_prediction_error_ratio";
        prom_family(b, name, "gauge", "Median of |predicted - measured| / measured over the last calls longer than 10 ms.");
        prom_sample(b, name, NULL, 0, table_median(meta.err_all, meta.nerr_all));
    }
}

int metrics_render(void *owner, strbuf *b)
{
    (void)owner;
    pthread_mutex_lock(&meta.lock);
    double now = sock_now();
    totals_locked(b);
    servers_locked(b, now);
    links_locked(b);
    pthread_mutex_unlock(&meta.lock);
    return b->failed ? -1 : 0;
}
