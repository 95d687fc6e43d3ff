/* status.c -- the metaserver's status, for people (the text `numrpc status
 * --metaserver` prints) and for programs and the status page (JSON). */
#include "metaserver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sock.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double table_median(const double *v, int n)
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
                  "metaserver: up %.1f s, %d server%s, %llu queries, %llu reports (%llu dropped, %llu over the rate), "
                  "drop after %.1f s, lease %d ms, %s\n",
                  now - meta.started, nservers, nservers == 1 ? "" : "s", (unsigned long long)meta.queries,
                  (unsigned long long)meta.reports, (unsigned long long)meta.reports_dropped,
                  (unsigned long long)meta.reports_limited, meta.opt->drop_after,
                  meta.opt->lease_ms, rights_on() ? "tokens required" : "no tokens");
    int subscribers;
    uint64_t events, dropped;
    events_counts(&subscribers, &events, &dropped);
    strbuf_printf(b, "events: %d subscriber%s, %llu published, %llu subscriber%s dropped (queue full)\n", subscribers,
                  subscribers == 1 ? "" : "s", (unsigned long long)events, (unsigned long long)dropped,
                  dropped == 1 ? "" : "s");
    strbuf_printf(b, "\n%-22s %5s %5s %6s %6s %7s %8s %6s %6s %7s %9s  %s\n", "SERVER", "ID", "SLOTS", "CALLS",
                  "QUEUED", "LOADAVG", "HEARD", "ROUT.", "PLACED", "REPORTS", "PRED.ERR", "SPEED (n: GFlop/s)");
    for (int i = 0; i < META_MAX_SERVERS; i++) {
        const meta_server *s = &meta.servers[i];
        if (!s->used) continue;
        double med = table_median(s->err, s->nerr);
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
            if (s->used && table_routine_of_locked((meta_server *)s, names[k].name, 0))
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
    double med = table_median(meta.err_all, meta.nerr_all);
    if (med < 0) strbuf_printf(b, "\nPREDICTIONS: no reported call longer than 10 ms yet\n");
    else
        strbuf_printf(b, "\nPREDICTIONS: median error %.1f%% over the last %d calls longer than 10 ms\n", 100 * med,
                      meta.nerr_all);
    if (meta.nerrors > 0) strbuf_printf(b, "\nRECENT ERRORS (refusals, servers dropped)\n");
    for (int i = 0; i < meta.nerrors; i++) {
        const meta_event *e = &meta.errors[(meta.errors_pos - meta.nerrors + i + META_RECENT) % META_RECENT];
        strbuf_printf(b, "%8.1f s ago  %s\n", now - e->at, e->text);
    }
}

/* "name": followed by s escaped (a peer's text), with a comma before
 * unless first. */
static void json_string(strbuf *b, const char *name, const char *s, int first)
{
    strbuf_printf(b, "%s\"%s\":", first ? "" : ",", name);
    strbuf_escaped(b, s, STRBUF_JSON);
}

static void json_server_locked(strbuf *b, const meta_server *s, double now)
{
    strbuf_printf(b, "{");
    json_string(b, "server", s->label, 1);
    json_string(b, "owner", s->owner, 0);
    strbuf_printf(b, ",\"tls\":%s", s->fingerprint[0] ? "true" : "false");
    json_string(b, "fingerprint", s->fingerprint, 0);
    json_string(b, "name", s->name, 0);
    strbuf_printf(b,
                  ",\"id\":%u,\"slots\":%d,\"in_flight\":%u,\"queued\":%u,\"draining\":%u,\"loadavg\":%.3f,"
                  "\"heard_ago\":%.3f,\"placed\":%llu,\"active_placements\":%d,\"reports\":%llu,"
                  "\"prediction_error\":%.4f,\"compared\":%llu,\"predicted_seconds\":%.6g,\"measured_seconds\":%.6g,"
                  "\"speed\":[",
                  s->id, s->slots, s->in_flight, s->queued, s->draining, s->loadavg, now - s->last_heard,
                  (unsigned long long)s->placed, table_active_placements_locked(s, now), (unsigned long long)s->reports,
                  table_median(s->err, s->nerr), (unsigned long long)s->compared, s->predicted_sum, s->measured_sum);
    for (int k = 0; k < s->curve.npoints; k++)
        strbuf_printf(b, "%s{\"n\":%.0f,\"flops\":%.6g}", k ? "," : "", s->curve.n[k], s->curve.rate[k]);
    strbuf_printf(b, "],\"routines\":[");
    for (uint32_t k = 0; k < s->nroutines; k++) {
        strbuf_printf(b, "%s", k ? "," : "");
        strbuf_escaped(b, s->routines[k].iface.name, STRBUF_JSON);
    }
    strbuf_printf(b, "]}");
}

static void status_json_locked(strbuf *b, double now)
{
    int subscribers;
    uint64_t events, dropped;
    events_counts(&subscribers, &events, &dropped);
    strbuf_printf(b, "{\"subscribers\":%d,\"events_published\":%llu,\"subscribers_dropped\":%llu,", subscribers,
                  (unsigned long long)events, (unsigned long long)dropped);
    strbuf_printf(b,
                  "\"uptime\":%.3f,\"queries\":%llu,\"reports\":%llu,\"reports_dropped\":%llu,\"tokens\":%d,"
                  "\"reports_limited\":%llu,\"drop_after\":%.3f,\"lease_ms\":%d,\"servers\":[",
                  now - meta.started, (unsigned long long)meta.queries, (unsigned long long)meta.reports,
                  (unsigned long long)meta.reports_dropped, rights_on(), (unsigned long long)meta.reports_limited,
                  meta.opt->drop_after, meta.opt->lease_ms);
    int first = 1;
    for (int i = 0; i < META_MAX_SERVERS; i++) {
        if (!meta.servers[i].used) continue;
        strbuf_printf(b, "%s", first ? "" : ",");
        json_server_locked(b, &meta.servers[i], now);
        first = 0;
    }
    strbuf_printf(b, "],\"throughput\":[");
    for (int i = 0; i < meta.npairs; i++) {
        const meta_pair *p = &meta.pairs[i];
        strbuf_printf(b, "%s{", i ? "," : "");
        json_string(b, "client", p->client, 1);
        json_string(b, "server", p->server, 0);
        strbuf_printf(b, ",\"latency\":%.6g,\"bytes_per_second\":%.6g,\"calls\":%llu}", p->latency,
                      p->bytes_per_second, (unsigned long long)p->samples);
    }
    strbuf_printf(b, "],\"recent\":[");
    for (int i = 0; i < meta.nrecent; i++) {
        const meta_recent *x = &meta.recent[(meta.recent_pos - meta.nrecent + i + META_RECENT) % META_RECENT];
        strbuf_printf(b, "%s{", i ? "," : "");
        json_string(b, "on", x->server, 1);
        json_string(b, "routine", x->routine, 0);
        json_string(b, "client", x->client, 0);
        strbuf_printf(b, ",\"age\":%.3f,\"flops\":%.6g,\"predicted\":%.6g,\"measured\":%.6g}", now - x->at,
                      x->flops, x->predicted, x->measured);
    }
    strbuf_printf(b, "],\"errors\":[");
    for (int i = 0; i < meta.nerrors; i++) {
        const meta_event *e = &meta.errors[(meta.errors_pos - meta.nerrors + i + META_RECENT) % META_RECENT];
        strbuf_printf(b, "%s{\"age\":%.3f", i ? "," : "", now - e->at);
        json_string(b, "text", e->text, 0);
        strbuf_printf(b, "}");
    }
    strbuf_printf(b, "],\"prediction_error_median\":%.4f,\"prediction_samples\":%d}\n",
                  table_median(meta.err_all, meta.nerr_all), meta.nerr_all);
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
