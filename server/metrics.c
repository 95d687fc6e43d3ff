/* metrics.c -- numrpc-server's /metrics: the per-routine counters the
 * workers keep (stats.c) and the dispatcher's gauges, in Prometheus text. */
#include "metrics.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "handles.h"
#include "http_port.h"
#include "log.h"
#include "mpi_job.h"
#include "prom.h"
#include "stats.h"

/* Histogram edges: 2^k microseconds for k = 0 .. 31 (1 us to 36 min). */
#define EDGES 32

static http_port *port;
static server_config log_cfg; /* the log's settings at start (the port's
                               * thread never reads the live configuration) */
static double start_time;     /* Unix seconds */

static void log_line(void *owner, const char *line)
{
    (void)owner;
    server_log(&log_cfg, LOG_LEVEL_NOTICE, "%s", line);
}

/* A ready entry's labels: routine, module, version (its interface hash). */
static int routine_labels(const routine_stats *r, prom_label *l, char *version, size_t len)
{
    snprintf(version, len, "%016" PRIx64, r->hash);
    l[0] = (prom_label){"routine", r->name};
    l[1] = (prom_label){"module", r->module};
    l[2] = (prom_label){"version", version};
    return 3;
}

static int ready(const routine_stats *r)
{
    return atomic_load(&r->state) == 2;
}

/* One counter family over every routine (mpi_only: those that ran on the
 * MPI job, which sent it bytes): the field at offset in each entry. */
static void routine_counter(strbuf *b, const stats_table *t, const char *name, const char *help, size_t offset,
                            int mpi_only)
{
    prom_family(b, name, "counter", help);
    for (int i = 0; i < STATS_MAX_ROUTINES; i++) {
        const routine_stats *r = &t->items[i];
        if (!ready(r) || (mpi_only && atomic_load(&r->mpi_sent_bytes) == 0)) continue;
        prom_label l[3];
        char version[20];
        int n = routine_labels(r, l, version, sizeof version);
        prom_sample_u64(b, name, l, n, atomic_load((const _Atomic uint64_t *)((const char *)r + offset)));
    }
}

/* Errors by code: a sample for each code a routine has had. */
static void routine_errors(strbuf *b, const stats_table *t)
{
    const char *name = "numrpc_server_call_errors_total";
    prom_family(b, name, "counter", "Calls of a routine that ended with this error code (numrpc.h).");
    for (int i = 0; i < STATS_MAX_ROUTINES; i++) {
        const routine_stats *r = &t->items[i];
        for (int c = 1; ready(r) && c < STATS_CODES; c++) {
            uint64_t v = atomic_load(&r->by_code[c]);
            if (v == 0) continue;
            prom_label l[4];
            char version[20], code[24];
            int n = routine_labels(r, l, version, sizeof version);
            const char *full = c < STATS_CODES - 1 ? numrpc_errname(-c) : "other";
            snprintf(code, sizeof code, "%s", strncmp(full, "NUMRPC_", 7) == 0 ? full + 7 : full);
            l[n++] = (prom_label){"code", code};
            prom_sample_u64(b, name, l, n, v);
        }
    }
}

static void routine_latency(strbuf *b, const stats_table *t)
{
    const char *name = "numrpc_server_call_duration_seconds";
    prom_family(b, name, "histogram",
                "Time of a call in its worker, from the request's header to the reply (network not included).");
    /* Only routines called at least once: 35 lines each. */
    double upper[EDGES];
    for (int k = 0; k < EDGES; k++) upper[k] = (double)(1ULL << k) * 1e-6;
    for (int i = 0; i < STATS_MAX_ROUTINES; i++) {
        const routine_stats *r = &t->items[i];
        if (!ready(r) || atomic_load(&r->calls) == 0) continue;
        prom_label l[3];
        char version[20];
        int n = routine_labels(r, l, version, sizeof version);
        uint64_t at_most[EDGES];
        uint64_t count = stats_cumulative(r, at_most, EDGES);
        prom_histogram(b, name, l, n, upper, at_most, EDGES, count, (double)atomic_load(&r->nanos) * 1e-9);
    }
}

/* The MPI job's phases of each routine that ran on it (docs/mpi.md). */
static void mpi_phases(strbuf *b, const stats_table *t)
{
    static const char *const phase[3] = {"scatter", "compute", "gather"};
    const char *name = "numrpc_mpi_phase_seconds_total";
    prom_family(b, name, "counter",
                "Seconds of a routine's successful calls on the MPI job, by phase (rank 0's clock).");
    for (int i = 0; i < STATS_MAX_ROUTINES; i++) {
        const routine_stats *r = &t->items[i];
        uint64_t ns[3] = {atomic_load(&r->mpi_nanos[0]), atomic_load(&r->mpi_nanos[1]),
                          atomic_load(&r->mpi_nanos[2])};
        if (!ready(r) || ns[0] + ns[1] + ns[2] == 0) continue; /* not a routine of the job */
        for (int k = 0; k < 3; k++) {
            prom_label l[4];
            char version[20];
            int n = routine_labels(r, l, version, sizeof version);
            l[n++] = (prom_label){"phase", phase[k]};
            prom_sample(b, name, l, n, (double)ns[k] * 1e-9);
        }
    }
    routine_counter(b, t, "numrpc_mpi_kept_hits_total",
                    "Arguments of a routine's calls whose bytes the MPI job held from an earlier call (not sent).",
                    offsetof(routine_stats, mpi_kept), 1);
    routine_counter(b, t, "numrpc_mpi_kept_bytes_total", "Bytes of those arguments.",
                    offsetof(routine_stats, mpi_kept_bytes), 1);
    routine_counter(b, t, "numrpc_mpi_sent_bytes_total", "Framed bytes workers sent to the MPI job's rank 0.",
                    offsetof(routine_stats, mpi_sent_bytes), 1);
    const mpi_job_state *st = mpi_job_state_get();
    if (st == NULL) return;
    prom_family(b, "numrpc_mpi_job_up", "gauge", "1 while the MPI job takes calls.");
    prom_sample(b, "numrpc_mpi_job_up", NULL, 0, atomic_load(&st->phase) == MPI_JOB_READY);
    prom_family(b, "numrpc_mpi_job_starts_total", "counter", "Times the MPI job was started (restarts included).");
    prom_sample(b, "numrpc_mpi_job_starts_total", NULL, 0, atomic_load(&st->starts));
}

static void gauge(strbuf *b, const char *name, const char *type, const char *help, double v)
{
    prom_family(b, name, type, help);
    prom_sample(b, name, NULL, 0, v);
}

static void dispatcher_figures(strbuf *b, const dispatcher_gauges *g)
{
    int workers = atomic_load(&g->workers), busy = atomic_load(&g->busy);
    const char *name = "numrpc_server_workers";
    prom_family(b, name, "gauge", "Worker processes, busy with a call or idle.");
    prom_sample(b, name, (prom_label[]){{"state", "busy"}}, 1, busy);
    prom_sample(b, name, (prom_label[]){{"state", "idle"}}, 1, workers > busy ? workers - busy : 0);
    gauge(b, "numrpc_server_workers_max", "gauge", "Workers at most (--max-workers).", log_cfg.max_workers);
    gauge(b, "numrpc_server_queued_requests", "gauge", "Requests waiting whole for a worker.",
          atomic_load(&g->queued));
    gauge(b, "numrpc_server_connections", "gauge", "Open connections on the main port.",
          atomic_load(&g->connections));
    gauge(b, "numrpc_server_draining", "gauge", "1 while the server drains after SIGTERM.", atomic_load(&g->draining));
    gauge(b, "numrpc_server_worker_restarts_total", "counter", "Workers that died (crash, limit, cancel) and were replaced.",
          (double)atomic_load(&g->restarts));
    gauge(b, "numrpc_server_handles", "gauge", "Data handles kept.", (double)atomic_load(&g->handles));
    gauge(b, "numrpc_server_handle_bytes", "gauge", "Bytes of the data handles kept.",
          (double)atomic_load(&g->handle_bytes));
    gauge(b, "numrpc_server_handle_pulled_bytes_total", "counter", "Bytes of handles fetched from other servers.",
          (double)atomic_load(&g->pulled_bytes));
    gauge(b, "numrpc_server_handle_lent_bytes_total", "counter", "Bytes of handles sent to other servers.",
          (double)atomic_load(&g->lent_bytes));
    name = "numrpc_server_handle_refusals_total";
    prom_family(b, name, "counter", "Handle requests (put, new, pull, grant) a limit turned away, by the option.");
    for (int i = 0; i < HANDLE_LIMITS; i++)
        prom_sample_u64(b, name, (prom_label[]){{"limit", handle_limit_names[i]}}, 1,
                        atomic_load(&g->handle_refusals[i]));
    gauge(b, "numrpc_server_start_time_seconds", "gauge", "When the server started, in Unix seconds.", start_time);
}

static int render(void *owner, strbuf *b)
{
    (void)owner;
    const stats_table *t = server_stats;
    if (t == NULL) return -1;
    routine_counter(b, t, "numrpc_server_calls_total", "Calls of a routine, whatever their outcome.",
                    offsetof(routine_stats, calls), 0);
    routine_errors(b, t);
    routine_counter(b, t, "numrpc_server_received_bytes_total", "Framed bytes of a routine's requests.",
                    offsetof(routine_stats, bytes_in), 0);
    routine_counter(b, t, "numrpc_server_sent_bytes_total", "Framed bytes of a routine's replies.",
                    offsetof(routine_stats, bytes_out), 0);
    routine_latency(b, t);
    mpi_phases(b, t);
    dispatcher_figures(b, &t->gauges);
    return 0;
}

static const http_route routes[] = {
    {"/metrics", PROM_CONTENT_TYPE, NULL, render},
};

int metrics_start(const server_config *cfg, const token_table *tokens, err_t *err)
{
    if (cfg->http_port == CONFIG_HTTP_OFF || port != NULL) return 0;
    log_cfg = *cfg;
    start_time = (double)time(NULL);
    http_port_options o = {.bind_addr = cfg->bind_addr,
                           .port = cfg->http_port,
                           .port_file = cfg->http_port_file,
                           .tls_cert = cfg->tls_cert,
                           .tls_key = cfg->tls_key,
                           .tls_client_ca = cfg->tls_client_ca,
                           .allow_insecure = cfg->allow_insecure,
                           .timeout_s = cfg->http_timeout,
                           .tokens = tokens,
                           .routes = routes,
                           .nroutes = (int)(sizeof routes / sizeof routes[0]),
                           .log = log_line};
    int bound = 0;
    port = http_port_start(&o, &bound, err);
    if (port == NULL) return err->code;
    server_log(cfg, LOG_LEVEL_NOTICE, "metrics on %s://%s:%d/metrics%s", cfg->tls_cert[0] ? "https" : "http",
               cfg->bind_addr, bound, tokens && tokens->count ? " (a `status` token required)" : "");
    return 0;
}

void metrics_set_tokens(const token_table *tokens)
{
    http_port_set_tokens(port, tokens);
}

void metrics_stop(void)
{
    http_port_stop(port);
    port = NULL;
}
