/* bench_mpi_keep.c -- K solves of order n on the server's MPI job: one put,
 * one pdgetrf and K pdgetrs through handles, against K pdgesv (A sent each time). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numrpc.h"
#include "stats.h"

#define ROUNDS 3

static void fill(double *a, size_t count, unsigned *seed)
{
    for (size_t i = 0; i < count; i++) a[i] = (double)rand_r(seed) / RAND_MAX - 0.5;
}

static int fail(const char *what, int rc)
{
    fprintf(stderr, "bench_mpi_keep: %s: %s (%s)\n", what, numrpc_errname(rc), numrpc_last_error_detail());
    return 1;
}

/* One round through handles: seconds of the put, the pdgetrf and the K pdgetrs. */
static int handles_round(int n, int k, const double *a, double *b, double *put_s, double *rf_s, double *rs_s)
{
    numrpc_data *ha = NULL, *hp = NULL;
    int info = 0, rc;
    double t = bench_now();
    if ((rc = numrpc_data_put(&ha, NULL, NUMRPC_T_DOUBLE, a, n, n, n)) != 0) return fail("put", rc);
    if ((rc = numrpc_data_new(&hp, NULL, NUMRPC_T_INT, n, 1, n)) != 0) return fail("new", rc);
    *put_s = bench_now() - t;
    t = bench_now();
    if ((rc = numrpc_call("pdgetrf", n, n, ha, n, hp, &info)) != 0 || info != 0) return fail("pdgetrf", rc);
    *rf_s = bench_now() - t;
    t = bench_now();
    for (int j = 0; j < k; j++)
        if ((rc = numrpc_call("pdgetrs", 'N', n, 1, ha, n, hp, b + (size_t)j * n, n, &info)) != 0 || info != 0)
            return fail("pdgetrs", rc);
    *rs_s = bench_now() - t;
    numrpc_data_free(ha);
    numrpc_data_free(hp);
    return 0;
}

/* One round of K pdgesv, each with a fresh copy of A: seconds. */
static int gesv_round(int n, int k, const double *a, double *b, double *s)
{
    double *copy = malloc((size_t)n * n * sizeof *copy);
    int *ipiv = malloc((size_t)n * sizeof *ipiv), info = 0, rc = 0;
    double t = bench_now();
    for (int j = 0; j < k && rc == 0; j++) {
        memcpy(copy, a, (size_t)n * n * sizeof *copy);
        rc = numrpc_call("pdgesv", n, 1, copy, n, ipiv, b + (size_t)j * n, n, &info);
    }
    *s = bench_now() - t;
    free(copy);
    free(ipiv);
    return rc ? fail("pdgesv", rc) : 0;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000, k = argc > 2 ? atoi(argv[2]) : 10;
    unsigned seed = 1;
    double *a = malloc((size_t)n * n * sizeof *a), *b = malloc((size_t)n * k * sizeof *b),
           *b0 = malloc((size_t)n * k * sizeof *b0), *x = malloc((size_t)n * k * sizeof *x);
    fill(a, (size_t)n * n, &seed);
    fill(b0, (size_t)n * k, &seed);
    double put[ROUNDS], rf[ROUNDS], rs[ROUNDS], kept[ROUNDS], gesv[ROUNDS], diff = 0;
    for (int r = 0; r < ROUNDS; r++) {
        memcpy(b, b0, (size_t)n * k * sizeof *b);
        if (handles_round(n, k, a, b, &put[r], &rf[r], &rs[r])) return 1;
        kept[r] = put[r] + rf[r] + rs[r];
        memcpy(x, b0, (size_t)n * k * sizeof *x);
        if (gesv_round(n, k, a, x, &gesv[r])) return 1;
        for (size_t i = 0; i < (size_t)n * k; i++) diff = fmax(diff, fabs(b[i] - x[i]));
    }
    double kept_lo = bench_min(kept, ROUNDS), kept_hi = bench_max(kept, ROUNDS);
    double gesv_lo = bench_min(gesv, ROUNDS), gesv_hi = bench_max(gesv, ROUNDS);
    double kept_med = bench_median(kept, ROUNDS), gesv_med = bench_median(gesv, ROUNDS);
    double rs_med = bench_median(rs, ROUNDS);
    printf("n %d, %d solves, medians of %d rounds (min-max)\n", n, k, ROUNDS);
    printf("handles: %.3f s (%.3f-%.3f) = put %.3f + pdgetrf %.3f + %d pdgetrs %.3f (%.4f each)\n", kept_med,
           kept_lo, kept_hi, bench_median(put, ROUNDS), bench_median(rf, ROUNDS), k, rs_med, rs_med / k);
    printf("pdgesv:  %.3f s (%.3f-%.3f), %.3f each\n", gesv_med, gesv_lo, gesv_hi, gesv_med / k);
    printf("ratio pdgesv / handles: %.2f; largest |x_handles - x_pdgesv| %.2e\n", gesv_med / kept_med, diff);
    free(a), free(b), free(b0), free(x);
    return 0;
}
