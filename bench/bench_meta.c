/* bench_meta.c -- the metaserver's figures: a farm of 200 mixed calls over
 * heterogeneous servers (ranked vs the farm's default, round-robin and a
 * load-only rule, against the work/capacity bound), query cost vs raw TCP,
 * prediction error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msg.h"
#include "msg_meta.h"
#include "numrpc.h"
#include "rawtcp.h"
#include "sock.h"

#define MAX_SERVERS 8
#define NCALLS 200

static const char *meta_addr;
static char servers[MAX_SERVERS][128];
static int nservers;

/* ---- The metaserver's protocol, spoken directly ---- */

static int meta_open(msg_conn *c, const char *where)
{
    char host[256];
    int port;
    err_t err;
    if (sock_parse_hostport(where, host, sizeof host, &port, &err) != 0) return -1;
    return msg_conn_open(c, host, port, 5000, 0, PROTO_DEFAULT_PACKET, &err) == 0 ? 0 : -1;
}

/* Reads the REPLY to id and its status: 0 when OK, the body follows. */
static int read_status(msg_conn *c, uint32_t id)
{
    err_t err;
    if (msg_read_reply(&c->reader, id, c->label, &err) == 0) return 0;
    fprintf(stderr, "bench_meta: metaserver: %s\n", err.detail);
    return -1;
}

/* The status JSON (malloc'd) or NULL. */
static char *meta_json(void)
{
    msg_conn c;
    char *text = NULL;
    err_t err;
    if (meta_open(&c, meta_addr) != 0) return NULL;
    uint32_t id = msg_conn_next_id(&c);
    if (msg_write_meta_status(&c.writer, id, MSG_META_STATUS_JSON, &err) == 0 && read_status(&c, id) == 0)
        msg_read_meta_status_reply(&c.reader, &text, &err);
    msg_conn_free(&c);
    return text;
}

/* One QUERY's round trip (the answer is read whole). */
static int one_query(msg_conn *c, double flops)
{
    err_t err;
    msg_meta_query q = {.routine = "ping", .flops = flops, .bytes_in = 16, .bytes_out = 16, .max_servers = 16};
    msg_meta_ranked ranked[16];
    uint32_t lease_ms, n, id = msg_conn_next_id(c);
    int rc = msg_write_meta_query(&c->writer, id, &q, &err);
    if (rc == 0) rc = read_status(c, id);
    if (rc == 0) rc = msg_read_meta_query_reply(&c->reader, &lease_ms, ranked, 16, &n, &err);
    return rc;
}

/* ---- Figures ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A server's measured speed at n = 512 (flops/s) from the status JSON. */
static double speed_of(const char *json, const char *label)
{
    char key[200];
    snprintf(key, sizeof key, "\"server\":\"%s\"", label);
    const char *at = strstr(json, key);
    const char *pt = at ? strstr(at, "{\"n\":512,\"flops\":") : NULL;
    double v = 0;
    if (pt && sscanf(pt, "{\"n\":512,\"flops\":%lf", &v) != 1) v = 0;
    return v;
}

/* ---- The farm ---- */

typedef struct job {
    int kind; /* 0 dgemm, 1 daxpy */
    int n;
    double *c; /* dgemm: result; daxpy: y */
    int id;
} job;

static double *ga[4], *gb[4], *gx;
static const int sizes[4] = {150, 300, 500, 700};
#define AXPY_N (1 << 19)

static void make_jobs(job *jobs, double *work)
{
    unsigned seed = 12345;
    *work = 0;
    for (int i = 0; i < NCALLS; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned r = (seed >> 16) % 100;
        job *j = &jobs[i];
        if (r < 10) {
            j->kind = 1;
            j->n = AXPY_N;
            j->c = malloc(sizeof(double) * AXPY_N);
            *work += 2.0 * AXPY_N;
        } else {
            j->kind = 0;
            j->n = sizes[r < 45 ? 0 : r < 75 ? 1 : r < 92 ? 2 : 3];
            j->c = malloc(sizeof(double) * (size_t)j->n * j->n);
            *work += 2.0 * j->n * j->n * (double)j->n;
        }
    }
}

static int size_index(int n)
{
    for (int i = 0; i < 4; i++)
        if (sizes[i] == n) return i;
    return 0;
}

/* Every job's output as the farm's start needs it (daxpy's y = 1; dgemm's
 * C touched), written before the clock starts: no rule is timed filling
 * buffers or faulting in their pages. */
static void reset_jobs(job *jobs)
{
    for (int i = 0; i < NCALLS; i++) {
        size_t n = jobs[i].kind == 1 ? AXPY_N : (size_t)jobs[i].n * jobs[i].n;
        for (size_t e = 0; e < n; e++) jobs[i].c[e] = 1.0;
    }
}

/* Starts job J as an asynchronous call to NAME (a routine, or a URL naming
 * the server); exits on a refused call. */
static void submit_job(job *j, const char *name, int index)
{
    int rc;
    if (j->kind == 0) {
        int k = size_index(j->n);
        rc = numrpc_call_async(&j->id, name, 'N', 'N', j->n, j->n, j->n, 1.0, ga[k], j->n, gb[k], j->n, 0.0, j->c, j->n);
    } else {
        rc = numrpc_call_async(&j->id, name, AXPY_N, 2.0, gx, 1, j->c, 1);
    }
    if (rc != 0) {
        fprintf(stderr, "bench_meta: call %d: %s\n", index, numrpc_last_error_detail());
        exit(1);
    }
}

/* The load-only rule: each call goes to the server with the fewest calls in
 * flight, at most LOAD_ONLY_SLOTS each (the servers' worker count); when
 * every server is full the next call waits for one to finish.  It knows
 * load and nothing else: not speed, not the network, not the call's size. */
#define LOAD_ONLY_SLOTS 2
static int least_loaded(const int *in_flight)
{
    int best = 0;
    for (int s = 1; s < nservers; s++)
        if (in_flight[s] < in_flight[best]) best = s;
    return best;
}

static void submit_load_only(job *jobs)
{
    int in_flight[MAX_SERVERS] = {0}, server_of[NCALLS];
    for (int i = 0; i < NCALLS; i++) {
        int best;
        while (in_flight[best = least_loaded(in_flight)] >= LOAD_ONLY_SLOTS) {
            int done = -1;
            if (numrpc_wait_any(&done) != 0) {
                fprintf(stderr, "bench_meta: load-only: %s\n", numrpc_last_error_detail());
                exit(1);
            }
            for (int k = 0; k < i; k++)
                if (jobs[k].id == done) {
                    in_flight[server_of[k]]--;
                    jobs[k].id = -1; /* already waited for */
                }
        }
        char name[300];
        snprintf(name, sizeof name, "numrpc://%s/%s", servers[best], jobs[i].kind == 0 ? "dgemm" : "daxpy");
        submit_job(&jobs[i], name, i);
        server_of[i] = best;
        in_flight[best]++;
    }
}

/* Runs the 200 calls; mode 0 ranked by the metaserver, 1 the farm's
 * default over NUMRPC_SERVER, 2 round-robin, 3 the load-only rule.
 * Returns the makespan. */
static double run_farm(job *jobs, int mode)
{
    char list[MAX_SERVERS * 130] = "";
    for (int i = 0; i < nservers; i++) {
        if (i) strcat(list, ",");
        strcat(list, servers[i]);
    }
    if (mode == 0) {
        setenv("NUMRPC_METASERVER", meta_addr, 1);
        unsetenv("NUMRPC_SERVER");
    } else {
        unsetenv("NUMRPC_METASERVER");
        setenv("NUMRPC_SERVER", list, 1);
    }
    numrpc_init(NULL);
    reset_jobs(jobs);
    double t0 = sock_now();
    if (mode == 3) submit_load_only(jobs);
    for (int i = 0; i < NCALLS && mode != 3; i++) {
        job *j = &jobs[i];
        char name[300];
        const char *routine = j->kind == 0 ? "dgemm" : "daxpy";
        if (mode == 2) snprintf(name, sizeof name, "numrpc://%s/%s", servers[i % nservers], routine);
        else snprintf(name, sizeof name, "%s", routine);
        submit_job(j, name, i);
    }
    double submitted = sock_now() - t0;
    int rc = numrpc_wait_all();
    double t = sock_now() - t0;
    if (getenv("NUMRPC_BENCH_META_TRACE"))
        fprintf(stderr, "  trace rule %d: submitted in %.3f s, makespan %.3f s\n", mode, submitted, t);
    if (rc != 0) {
        fprintf(stderr, "bench_meta: farm: %s\n", numrpc_last_error_detail());
        exit(1);
    }
    /* NUMRPC_BENCH_META_TRACE=1: where each rule's calls ran, per server:
     * calls, GFlop, summed compute seconds, the longest call (queued time
     * included), the farm's cap and its peak of calls in flight. */
    if (getenv("NUMRPC_BENCH_META_TRACE") && mode != 3) {
        numrpc_server_stats stats[MAX_SERVERS];
        int nstats = numrpc_server_stats_get(stats, MAX_SERVERS);
        for (int s = 0; s < nservers; s++) {
            int calls = 0;
            double gflop = 0, compute = 0, last = 0;
            for (int i = 0; i < NCALLS; i++) {
                numrpc_call_info info;
                if (numrpc_call_info_of(jobs[i].id, &info) != 0 || strcmp(info.server, servers[s]) != 0) continue;
                calls++;
                gflop += jobs[i].kind == 0 ? 2e-9 * jobs[i].n * jobs[i].n * (double)jobs[i].n : 2e-9 * AXPY_N;
                compute += info.compute_seconds;
                if (info.total_seconds > last) last = info.total_seconds;
            }
            int cap = 0, peak = 0;
            for (int x = 0; x < nstats && x < MAX_SERVERS; x++)
                if (strcmp(stats[x].server, servers[s]) == 0) {
                    cap = stats[x].cap;
                    peak = stats[x].max_in_flight;
                }
            fprintf(stderr, "  trace rule %d %s: %d calls, %.2f GFlop, compute %.3f s, longest %.3f s, cap %d, peak %d in flight\n",
                    mode, servers[s], calls, gflop, compute, last, cap, peak);
        }
    }
    /* Spot checks: daxpy exactly, dgemm element (0,0) against a dot. */
    for (int i = 0; i < NCALLS; i += 7) {
        job *j = &jobs[i];
        int k = size_index(j->n);
        double want = 0;
        if (j->kind == 1) want = 2.0 * gx[AXPY_N - 1] + 1.0;
        else
            for (int l = 0; l < j->n; l++) want += ga[k][(size_t)l * j->n] * gb[k][l];
        double got = j->kind == 1 ? j->c[AXPY_N - 1] : j->c[0];
        if (fabs(got - want) > 1e-9 * (1 + fabs(want))) {
            fprintf(stderr, "bench_meta: wrong result in call %d: %g, want %g\n", i, got, want);
            exit(1);
        }
    }
    numrpc_finalize();
    return t;
}

int main(int argc, char **argv)
{
    int rounds = 3;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--meta") == 0 && i + 1 < argc) meta_addr = argv[++i];
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--servers") == 0 && i + 1 < argc) {
            char *list = strdup(argv[++i]), *save = NULL;
            for (char *t = strtok_r(list, ",", &save); t && nservers < MAX_SERVERS; t = strtok_r(NULL, ",", &save))
                snprintf(servers[nservers++], sizeof servers[0], "%s", t);
            free(list);
        }
    }
    if (meta_addr == NULL || nservers == 0) {
        fprintf(stderr, "usage: numrpc-bench-meta --meta HOST:PORT --servers A,B,C [--rounds R]\n"
                        "(bench/bench_meta.sh builds the heterogeneous servers and runs this)\n");
        return 2;
    }
    rawtcp_server raw;
    if (rawtcp_server_spawn(&raw, -1) != 0) {
        perror("bench_meta: raw TCP server");
        return 1;
    }
    for (int k = 0; k < 4; k++) {
        size_t nn = (size_t)sizes[k] * sizes[k];
        ga[k] = malloc(nn * sizeof(double));
        gb[k] = malloc(nn * sizeof(double));
        for (size_t e = 0; e < nn; e++) {
            ga[k][e] = sin(1.0 + (double)e);
            gb[k][e] = cos(2.0 + (double)e);
        }
    }
    gx = malloc(sizeof(double) * AXPY_N);
    for (int e = 0; e < AXPY_N; e++) gx[e] = 0.25 + e % 5;

    /* 1. The client's throughput to each server, from its own calls. */
    setenv("NUMRPC_METASERVER", meta_addr, 1);
    numrpc_init(NULL);
    double *y = malloc(sizeof(double) * AXPY_N);
    for (int s = 0; s < nservers; s++)
        for (int i = 0; i < 3; i++) {
            char url[1100];
            snprintf(url, sizeof url, "numrpc://%s/daxpy", servers[s]);
            for (int e = 0; e < AXPY_N; e++) y[e] = 1;
            if (numrpc_call(url, AXPY_N, 1.0, gx, 1, y, 1) != 0) {
                fprintf(stderr, "bench_meta: warm-up: %s\n", numrpc_last_error_detail());
                return 1;
            }
        }
    numrpc_finalize();

    /* 2. The farm, three rules interleaved. */
    job jobs[NCALLS];
    double work;
    make_jobs(jobs, &work);
    char *json = meta_json();
    printf("servers, P_calc(512) measured at start-up:");
    for (int s = 0; s < nservers; s++) printf(" %s %.2f GFlop/s;", servers[s], json ? speed_of(json, servers[s]) / 1e9 : 0);
    printf("\n");
    free(json);
    /* The capacity now: each server alone, dgemm n = 500 calls back to
     * back for 0.5 s, seen from here (transfer included). */
    double capacity = 0;
    printf("servers, dgemm n=500 one call at a time now:");
    for (int s = 0; s < nservers; s++) {
        char url[1100];
        snprintf(url, sizeof url, "numrpc://%s/dgemm", servers[s]);
        int k = size_index(500), reps = 0;
        double *cbuf = malloc(sizeof(double) * 500 * 500);
        double t0 = sock_now(), flops = 0;
        while (sock_now() - t0 < 0.5 || reps < 2) {
            if (numrpc_call(url, 'N', 'N', 500, 500, 500, 1.0, ga[k], 500, gb[k], 500, 0.0, cbuf, 500) != 0) {
                fprintf(stderr, "bench_meta: %s\n", numrpc_last_error_detail());
                return 1;
            }
            flops += 2.0 * 500 * 500 * 500;
            reps++;
        }
        double rate = flops / (sock_now() - t0);
        free(cbuf);
        capacity += rate;
        printf(" %s %.2f GFlop/s;", servers[s], rate / 1e9);
    }
    printf("\n");
    numrpc_finalize();
    double bound = capacity > 0 ? work / capacity : 0;
    enum { NRULES = 4 };
    double t[NRULES][16];
    static const char *names[NRULES] = {"metaserver ranking", "farm default (least outstanding flops)", "round-robin",
                                        "load-only (fewest calls in flight, 2 each)"};
    if (rounds > 16) rounds = 16;
    for (int r = 0; r < rounds; r++)
        for (int m = 0; m < NRULES; m++) t[m][r] = run_farm(jobs, m);
    printf("farm of %d mixed calls (dgemm n=150..700, daxpy 4 MB; %.1f GFlop) over %d servers, %d rounds:\n", NCALLS,
           work / 1e9, nservers, rounds);
    printf("  lower bound (work / sum of the speeds measured now): %.3f s\n", bound);
    double med[NRULES];
    for (int m = 0; m < NRULES; m++) {
        med[m] = median(t[m], rounds);
        printf("  %-40s median makespan %.3f s = %.2fx the bound", names[m], med[m], bound > 0 ? med[m] / bound : 0);
        if (m > 0) printf("; metaserver %.0f%% shorter", 100 * (1 - med[0] / med[m]));
        printf("\n");
    }

    /* 3. A query's cost against a raw TCP round trip. */
    msg_conn c;
    if (meta_open(&c, meta_addr) != 0) return 1;
    int fd = rawtcp_connect(&raw, RAWTCP_TUNED);
    double q[2000], rt[2000], ping[2];
    char b8[8] = {0}, r8[8];
    for (int i = 0; i < 2000; i++) {
        double t0 = sock_now();
        if (one_query(&c, 1) != 0) return 1;
        double t1 = sock_now();
        if (rawtcp_echo(fd, RAWTCP_TUNED, b8, r8, 8) != 0) return 1;
        q[i] = t1 - t0;
        rt[i] = sock_now() - t1;
    }
    msg_conn_free(&c);
    close(fd);
    double mq = median(q, 2000), mr = median(rt, 2000);
    printf("metaserver QUERY round trip: median %.1f us; raw TCP round trip (8 bytes): %.1f us; difference %+.1f us\n",
           mq * 1e6, mr * 1e6, (mq - mr) * 1e6);
    /* A call under a lease vs the same call, to the server the lease chose,
     * without a metaserver: blocks of 200 interleaved over 10 rounds, so
     * that the machine's drift hits both alike. */
    char chosen[256];
    snprintf(chosen, sizeof chosen, "%s", servers[0]);
    static double lease_pings[2000], direct_pings[2000];
    for (int r = 0; r < 10; r++)
        for (int m = 0; m < 2; m++) {
            if (m == 0) setenv("NUMRPC_METASERVER", meta_addr, 1);
            else unsetenv("NUMRPC_METASERVER");
            setenv("NUMRPC_SERVER", servers[0], 1);
            numrpc_init(NULL);
            char url[1100];
            snprintf(url, sizeof url, "numrpc://%s/ping", chosen);
            double *out = m == 0 ? lease_pings : direct_pings;
            for (int i = 0; i < 200; i++) {
                double t0 = sock_now();
                if (numrpc_call(m == 0 ? "ping" : url) != 0) return 1;
                out[r * 200 + i] = sock_now() - t0;
            }
            if (m == 0) {
                numrpc_call_info info;
                numrpc_last_call_info(&info);
                snprintf(chosen, sizeof chosen, "%s", info.server);
            }
            numrpc_finalize();
        }
    ping[0] = median(lease_pings, 2000);
    ping[1] = median(direct_pings, 2000);
    printf("ping: median %.1f us through a metaserver lease vs %.1f us to the server it chose (%s) named "
           "directly (%+.1f us)\n",
           ping[0] * 1e6, ping[1] * 1e6, chosen, (ping[0] - ping[1]) * 1e6);

    /* 4. Prediction error of blocking calls longer than 10 ms. */
    setenv("NUMRPC_METASERVER", meta_addr, 1);
    unsetenv("NUMRPC_SERVER");
    numrpc_init(NULL);
    for (int i = 0; i < 40; i++) {
        job *j = &jobs[i];
        int k = size_index(j->n);
        if (j->kind == 0 && numrpc_call("dgemm", 'N', 'N', j->n, j->n, j->n, 1.0, ga[k], j->n, gb[k], j->n, 0.0, j->c,
                                        j->n) != 0)
            return 1;
        if (j->kind == 1 && numrpc_call("daxpy", AXPY_N, 2.0, gx, 1, j->c, 1) != 0) return 1;
    }
    numrpc_finalize(); /* sends the reports */
    usleep(100000);
    json = meta_json();
    double err = -1;
    int samples = 0;
    const char *at = json ? strstr(json, "\"prediction_error_median\":") : NULL;
    if (at) sscanf(at, "\"prediction_error_median\":%lf,\"prediction_samples\":%d", &err, &samples);
    printf("prediction error (|predicted - measured| / measured, calls > 10 ms): median %.1f%% over %d calls\n",
           100 * err, samples);
    free(json);
    rawtcp_server_stop(&raw);
    for (int i = 0; i < NCALLS; i++) free(jobs[i].c);
    return 0;
}
