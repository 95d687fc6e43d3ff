/* bench_handles.c -- put and get throughput of a data handle against the same
 * bytes moved one way by a call (dcopy's halves, dnrm2), interleaved rounds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numrpc.h"
#include "stats.h"

#define MAX_ROUNDS 99

/* One round's seconds per measurement (each over the same bytes). */
enum { PUT, GET, DCOPY_OUT, DCOPY_BACK, DCOPY_HALF, DNRM2_OUT, NFIG };
static const char *const fig_name[NFIG] = {
    "numrpc_data_put (wall)",
    "numrpc_data_get (wall)",
    "dcopy: x out (send_seconds)",
    "dcopy: y back (receive_seconds)",
    "dcopy: half the round trip",
    "dnrm2: x out (wall - compute)",
};

static int failed(const char *what, int rc)
{
    fprintf(stderr, "numrpc-bench-handles: %s: %s (%s): %s\n", what, numrpc_strerror(rc), numrpc_errname(rc),
            numrpc_last_error_detail());
    return 1;
}

/* One round: put, get, dcopy, dnrm2 of x (n doubles); every result checked.
 * y is scratch of n doubles. */
static int one_round(const char *server, int n, const double *x, double *y, double *fig)
{
    numrpc_call_info ci;
    numrpc_data *h = NULL;
    double t0 = bench_now();
    int rc = numrpc_data_put(&h, server, NUMRPC_T_DOUBLE, x, (size_t)n, 1, (size_t)n);
    fig[PUT] = bench_now() - t0;
    if (rc != NUMRPC_OK) return failed("numrpc_data_put", rc);
    memset(y, 0, (size_t)n * sizeof *y);
    t0 = bench_now();
    rc = numrpc_data_get(h, y, (size_t)n);
    fig[GET] = bench_now() - t0;
    int free_rc = numrpc_data_free(h);
    if (rc != NUMRPC_OK) return failed("numrpc_data_get", rc);
    if (free_rc != NUMRPC_OK) return failed("numrpc_data_free", free_rc);
    if (memcmp(x, y, (size_t)n * sizeof *y) != 0) {
        fprintf(stderr, "numrpc-bench-handles: the handle's data came back changed\n");
        return 1;
    }

    memset(y, 0, (size_t)n * sizeof *y);
    t0 = bench_now();
    rc = numrpc_call("dcopy", n, x, 1, y, 1);
    double wall = bench_now() - t0;
    if (rc != NUMRPC_OK) return failed("dcopy", rc);
    numrpc_last_call_info(&ci);
    fig[DCOPY_OUT] = ci.send_seconds;
    fig[DCOPY_BACK] = ci.receive_seconds;
    fig[DCOPY_HALF] = wall / 2;
    if (memcmp(x, y, (size_t)n * sizeof *y) != 0) {
        fprintf(stderr, "numrpc-bench-handles: dcopy's y differs from x\n");
        return 1;
    }

    double norm = -1.0;
    t0 = bench_now();
    rc = numrpc_call("dnrm2", n, x, 1, &norm);
    wall = bench_now() - t0;
    if (rc != NUMRPC_OK) return failed("dnrm2", rc);
    numrpc_last_call_info(&ci);
    fig[DNRM2_OUT] = wall - ci.compute_seconds;
    /* x[i] = 1: the norm is sqrt(n) (exact enough in double). */
    if (!(fabs(norm - sqrt((double)n)) <= 1e-6 * sqrt((double)n))) {
        fprintf(stderr, "numrpc-bench-handles: dnrm2 gave %.17g, want %.17g\n", norm, sqrt((double)n));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: numrpc-bench-handles HOST:PORT [MIB=64] [ROUNDS=7]\n"
                        "  (a server with the blas module; one warm-up round is dropped)\n");
        return 2;
    }
    const char *server = argv[1];
    long mib = argc > 2 ? strtol(argv[2], NULL, 10) : 64, rounds = argc > 3 ? strtol(argv[3], NULL, 10) : 7;
    if (mib < 1 || mib > 4096 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "numrpc-bench-handles: MIB in 1..4096, ROUNDS in 1..%d\n", MAX_ROUNDS);
        return 2;
    }
    const int n = (int)(mib << 20) / (int)sizeof(double);
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    if (x == NULL || y == NULL) {
        fprintf(stderr, "numrpc-bench-handles: out of memory for %ld MiB\n", mib);
        return 1;
    }
    for (int i = 0; i < n; i++) x[i] = 1.0;
    numrpc_config cfg = {.servers = server};
    int rc = numrpc_init(&cfg);
    if (rc != NUMRPC_OK) return failed("numrpc_init", rc);

    static double fig[NFIG][MAX_ROUNDS];
    double one[NFIG];
    int status = 0;
    for (long r = -1; r < rounds && status == 0; r++) {
        status = one_round(server, n, x, y, one);
        for (int f = 0; f < NFIG && r >= 0; f++) fig[f][r] = one[f];
    }
    numrpc_finalize();
    free(x);
    free(y);
    if (status != 0) return status;

    const double bytes = (double)n * sizeof(double);
    double mbs[NFIG];
    printf("%ld MiB one way, %ld interleaved rounds after a warm-up (MB/s = 1e6 bytes / s)\n", mib, rounds);
    for (int f = 0; f < NFIG; f++) {
        double lo = bench_min(fig[f], (size_t)rounds), hi = bench_max(fig[f], (size_t)rounds);
        double med = bench_median(fig[f], (size_t)rounds);
        mbs[f] = bytes / med / 1e6;
        printf("  %-32s median %8.1f MB/s  (%7.2f ms; spread %.2f..%.2f ms)\n", fig_name[f], mbs[f], med * 1e3,
               lo * 1e3, hi * 1e3);
    }
    printf("  put / dcopy x out          %.3f\n", mbs[PUT] / mbs[DCOPY_OUT]);
    printf("  put / dnrm2 x out          %.3f\n", mbs[PUT] / mbs[DNRM2_OUT]);
    printf("  put / half a dcopy         %.3f\n", mbs[PUT] / mbs[DCOPY_HALF]);
    printf("  get / dcopy y back         %.3f\n", mbs[GET] / mbs[DCOPY_BACK]);
    printf("  get / half a dcopy         %.3f\n", mbs[GET] / mbs[DCOPY_HALF]);
    return 0;
}
