/* seeds_ring.c -- a handle around a ring of numrpc-servers, each hop a dcopy
 * on the next server that pulls the previous server's handle; and raw TCP. */
#define _GNU_SOURCE
#include "seeds_ring.h"

#include <stdio.h>
#include <string.h>

#include "numrpc.h"
#include "stats.h"

static int failed(const char *what, int rc)
{
    fprintf(stderr, "numrpc-bench-seeds: ring: %s: %s: %s\n", what, numrpc_strerror(rc),
            numrpc_last_error_detail());
    return -1;
}

int seeds_ring_prepare(const struct seeds_options *o, struct seeds_ring *g)
{
    for (int s = 0; s < o->nring; s++)
        for (int i = 0; i < g->k; i++) {
            numrpc_data *h = NULL;
            size_t n = o->ring_sizes[s] / 8;
            int rc = numrpc_data_new(&h, g->label[i], NUMRPC_T_DOUBLE, n, 1, n);
            if (rc != NUMRPC_OK) return failed("numrpc_data_new", rc);
            g->held[s][i] = h;
        }
    return 0;
}

void seeds_ring_release(const struct seeds_options *o, struct seeds_ring *g)
{
    for (int s = 0; s < o->nring; s++)
        for (int i = 0; i < g->k; i++)
            if (g->held[s][i]) {
                numrpc_data_free(g->held[s][i]);
                g->held[s][i] = NULL;
            }
}

/* One trip of n doubles: put on server 0 (not timed), k hops timed, got back
 * from server 0 and compared (not timed).  *out: the trip's seconds. */
static int numrpc_trip(struct seeds_ring *g, int s, int n, const double *x, double *back, double *out,
                       double *stay)
{
    numrpc_data *h[SEEDS_MAX_RING + 1];
    int rc = numrpc_data_put(&h[0], g->label[0], NUMRPC_T_DOUBLE, x, (size_t)n, 1, (size_t)n);
    if (rc != NUMRPC_OK) return failed("numrpc_data_put", rc);
    for (int i = 1; i < g->k; i++) h[i] = g->held[s][i];
    h[g->k] = h[0];
    double t0 = bench_now();
    /* Hop i: the call writes h[i], so it runs on server i, which pulls h[i-1]
     * from server i-1 (DATA_GRANT there, DATA_PULL here; docs/handles.md). */
    for (int i = 1; i <= g->k && rc == NUMRPC_OK; i++) rc = numrpc_call("dcopy", n, h[i - 1], 1, h[i], 1);
    *out = bench_now() - t0;
    if (rc != NUMRPC_OK) {
        numrpc_data_free(h[0]);
        return failed("dcopy (a hop)", rc);
    }
    /* The same call with both handles on server 0: what a hop costs less its move. */
    t0 = bench_now();
    rc = numrpc_call("dcopy", n, h[0], 1, (numrpc_data *)g->held[s][0], 1);
    *stay = bench_now() - t0;
    if (rc == NUMRPC_OK) rc = numrpc_data_get(h[0], back, (size_t)n);
    numrpc_data_free(h[0]);
    if (rc != NUMRPC_OK) return failed("dcopy on server 0, or numrpc_data_get", rc);
    if (memcmp(back, x, (size_t)n * 8) != 0) {
        fprintf(stderr, "numrpc-bench-seeds: ring: the handle came back changed (%d doubles)\n", n);
        return -1;
    }
    return 0;
}

static int raw_trip(struct seeds_ring *g, int n, const double *x, double *back, double *out)
{
    if (rawring_put(&g->raw, x, (size_t)n * 8) != 0) return failed("raw put", NUMRPC_EIO);
    double t0 = bench_now();
    int rc = rawring_trip(&g->raw, (size_t)n * 8);
    *out = bench_now() - t0;
    if (rc != 0 || rawring_get(&g->raw, back, (size_t)n * 8) != 0) return failed("raw trip", NUMRPC_EIO);
    if (memcmp(back, x, (size_t)n * 8) != 0) {
        fprintf(stderr, "numrpc-bench-seeds: raw ring: the message came back changed\n");
        return -1;
    }
    return 0;
}

int seeds_ring_round(const struct seeds_options *o, struct seeds_ring *g, int r, double *x,
                     struct ring_results *res)
{
    size_t most = 0;
    for (int s = 0; s < o->nring; s++)
        if (o->ring_sizes[s] > most) most = o->ring_sizes[s];
    double *back = x + most / 8;
    for (int s = 0; s < o->nring; s++) {
        int n = (int)(o->ring_sizes[s] / 8);
        for (int i = 0; i < n; i++) x[i] = 0.5 * i + 1e6 * (r + 2) + s; /* new data each trip */
        for (int k = 0; k < SEEDS_NSYS; k++) {
            int sys = (k + (r > 0 ? r : 0) + s) % SEEDS_NSYS;
            double t = 0, stay = 0;
            int rc = sys == SEEDS_RAW ? raw_trip(g, n, x, back, &t) : numrpc_trip(g, s, n, x, back, &t, &stay);
            if (rc != 0) return -1;
            if (sys == SEEDS_NUMRPC && r >= 0 && res->stay[s].n < SEEDS_MAX_ROUNDS)
                res->stay[s].v[res->stay[s].n++] = stay;
            seeds_series *ser = &res->hop[s][sys];
            if (r >= 0 && ser->n < SEEDS_MAX_ROUNDS) ser->v[ser->n++] = t / g->k;
        }
    }
    return 0;
}
