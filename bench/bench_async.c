/* bench_async.c -- asynchronous calls measured: pipelined pings against the
 * same pings made blocking, the time an async call takes to return, farms. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numrpc.h"
#include "stats.h"

static double now(void) { return bench_now(); }

static void die(const char *what, int rc)
{
    fprintf(stderr, "bench_async: %s: %s: %s\n", what, numrpc_strerror(rc),
            numrpc_last_error_detail());
    exit(1);
}

static void use_servers(const char *servers)
{
    numrpc_finalize();
    numrpc_config cfg = {.servers = servers};
    int rc = numrpc_init(&cfg);
    if (rc != NUMRPC_OK) die("numrpc_init", rc);
}

/* count pings in a row, each waiting for its reply. */
static double blocking_pings(int count)
{
    double t0 = now();
    for (int i = 0; i < count; i++) {
        int rc = numrpc_call("ping");
        if (rc != NUMRPC_OK) die("ping", rc);
    }
    return now() - t0;
}

/* count pings started at once, then all waited for. */
static double async_pings(int count)
{
    double t0 = now();
    for (int i = 0; i < count; i++) {
        int id, rc = numrpc_call_async(&id, "ping");
        if (rc != NUMRPC_OK) die("ping async", rc);
    }
    int rc = numrpc_wait_all();
    if (rc != NUMRPC_OK) die("wait_all", rc);
    return now() - t0;
}

static double *matrix(int n, unsigned seed)
{
    double *a = malloc((size_t)n * n * sizeof *a);
    if (a == NULL) exit(1);
    srand(seed);
    for (size_t i = 0; i < (size_t)n * n; i++) a[i] = rand() / (double)RAND_MAX - 0.5;
    return a;
}

/* Seconds for calls dgemm (n x n, C := A B) spread over the configured
 * servers; each call has its own C. */
static double dgemm_farm(int n, int calls, double *a, double *b, double **c)
{
    double t0 = now();
    for (int i = 0; i < calls; i++) {
        int id, rc = numrpc_call_async(&id, "dgemm", 'N', 'N', n, n, n, 1.0, a, n, b, n, 0.0,
                                       c[i], n);
        if (rc != NUMRPC_OK) die("dgemm async", rc);
    }
    int rc = numrpc_wait_all();
    if (rc != NUMRPC_OK) die("dgemm wait_all", rc);
    return now() - t0;
}

/* Microseconds numrpc_call_async takes to return for a dgemm of size n,
 * interface cached (median of reps); the call is then waited for. */
static double async_return_us(int n, int reps, double *a, double *b, double *c)
{
    double *t = malloc((size_t)reps * sizeof *t);
    for (int r = 0; r < reps; r++) {
        int id;
        double t0 = now();
        int rc = numrpc_call_async(&id, "dgemm", 'N', 'N', n, n, n, 1.0, a, n, b, n, 0.0, c, n);
        t[r] = (now() - t0) * 1e6;
        if (rc != NUMRPC_OK) die("dgemm async", rc);
        rc = numrpc_wait(id);
        if (rc != NUMRPC_OK) die("dgemm wait", rc);
    }
    double m = bench_median(t, (size_t)reps);
    free(t);
    return m;
}

int main(int argc, char **argv)
{
    const char *one = NULL, *two = NULL, *only = "all";
    int rounds = 7, pings = 200, n = 1000, calls = 50;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--server") == 0 && i + 1 < argc) one = argv[++i];
        else if (strcmp(argv[i], "--second") == 0 && i + 1 < argc) two = argv[++i];
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dgemm-n") == 0 && i + 1 < argc) n = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dgemm-calls") == 0 && i + 1 < argc) calls = atoi(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr,
                    "usage: numrpc-bench-async --server HOST:PORT [--second HOST:PORT]\n"
                    "       [--rounds R] [--dgemm-n N] [--dgemm-calls K] [--only pings|return|farm]\n");
            return 2;
        }
    }
    if (one == NULL || rounds < 1) return fprintf(stderr, "bench_async: --server is required\n"), 2;
    use_servers(one);

    if (strcmp(only, "all") == 0 || strcmp(only, "pings") == 0) {
        double *ratio = malloc((size_t)rounds * sizeof *ratio);
        double *tb = malloc((size_t)rounds * sizeof *tb), *ta = malloc((size_t)rounds * sizeof *ta);
        blocking_pings(pings); /* warm: connections, interface, workers */
        async_pings(pings);
        for (int r = 0; r < rounds; r++) { /* interleaved: drift hits both */
            tb[r] = blocking_pings(pings);
            ta[r] = async_pings(pings);
            ratio[r] = ta[r] / tb[r];
        }
        printf("pings: %d blocking %.1f us/call, %d async %.1f us/call, async/blocking %.3f "
               "(median of %d rounds; min %.3f max %.3f)\n",
               pings, bench_median(tb, (size_t)rounds) / pings * 1e6, pings,
               bench_median(ta, (size_t)rounds) / pings * 1e6, bench_median(ratio, (size_t)rounds),
               rounds, bench_min(ratio, (size_t)rounds), bench_max(ratio, (size_t)rounds));
        free(ratio);
        free(tb);
        free(ta);
    }
    double *a = NULL, *b = NULL, **c = NULL;
    if (strcmp(only, "pings") != 0) {
        a = matrix(n, 1);
        b = matrix(n, 2);
        c = calloc((size_t)calls, sizeof *c);
        for (int i = 0; i < calls; i++) c[i] = calloc((size_t)n * n, sizeof(double));
    }
    if (strcmp(only, "all") == 0 || strcmp(only, "return") == 0) {
        double mb = 3.0 * n * n * 8 / 1e6;
        printf("async return: dgemm n=%d (%.0f MB of arrays): %.1f us to return (median of %d)\n",
               n, mb, async_return_us(n, rounds, a, b, c[0]), rounds);
    }
    if ((strcmp(only, "all") == 0 || strcmp(only, "farm") == 0) && two != NULL) {
        char both[512];
        snprintf(both, sizeof both, "%s,%s", one, two);
        double *r = malloc((size_t)rounds * sizeof *r);
        double t1 = 0, t2 = 0;
        for (int k = 0; k < rounds; k++) {
            use_servers(one);
            double s1 = dgemm_farm(n, calls, a, b, c);
            use_servers(both);
            double s2 = dgemm_farm(n, calls, a, b, c);
            r[k] = s1 / s2;
            t1 += s1;
            t2 += s2;
        }
        printf("farm: %d dgemm n=%d: 1 server %.2f s, 2 servers %.2f s, throughput x%.2f "
               "(median of %d rounds)\n",
               calls, n, t1 / rounds, t2 / rounds, bench_median(r, (size_t)rounds), rounds);
        free(r);
    }
    if (c) {
        for (int i = 0; i < calls; i++) free(c[i]);
        free(c);
    }
    free(a);
    free(b);
    numrpc_finalize();
    return 0;
}
