/* bench_c_client.c -- the C client's side of python_figures.sh: the wall time of
 * each warm null call (ddot, n = 1) and each warm dcopy of N bytes, medians printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numrpc.h"
#include "stats.h"

#define WARM_NULL_CALLS 50
#define WARM_DCOPY_CALLS 2
#define CALL_TIMEOUT_SECONDS 60 /* figures.py's numrpc.set_timeout: both sides make the same calls */
#define WRONG_RESULT 1 /* positive: never a NUMRPC_E* code */

/* Median seconds of `calls` null calls (after the warm ones); each result checked. */
static int time_null_calls(long calls, double *median)
{
    double x = 1.5, result = 0, *seconds = malloc((size_t)calls * sizeof *seconds);
    int rc = seconds ? NUMRPC_OK : NUMRPC_ENOMEM;
    for (long i = -WARM_NULL_CALLS; rc == NUMRPC_OK && i < calls; i++) {
        double t0 = bench_now();
        rc = numrpc_call("ddot", 1, &x, 1, &x, 1, &result);
        if (i >= 0) seconds[i] = bench_now() - t0;
        if (rc == NUMRPC_OK && result != 2.25) {
            fprintf(stderr, "numrpc-bench-c-client: ddot gave %g, not 2.25\n", result);
            rc = WRONG_RESULT;
        }
    }
    if (rc == NUMRPC_OK) *median = bench_median(seconds, (size_t)calls);
    free(seconds);
    return rc;
}

/* Median seconds of `calls` dcopy calls of n doubles (after the warm ones);
 * y is cleared before each call and compared with x after it. */
static int time_dcopies(long n, long calls, double *median)
{
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    double *seconds = malloc((size_t)calls * sizeof *seconds);
    int rc = x && y && seconds ? NUMRPC_OK : NUMRPC_ENOMEM;
    for (long i = 0; rc == NUMRPC_OK && i < n; i++) x[i] = (double)(i % 1000) + 0.25;
    for (long i = -WARM_DCOPY_CALLS; rc == NUMRPC_OK && i < calls; i++) {
        memset(y, 0, (size_t)n * sizeof *y);
        double t0 = bench_now();
        rc = numrpc_call("dcopy", (int)n, x, 1, y, 1);
        if (i >= 0) seconds[i] = bench_now() - t0;
        if (rc == NUMRPC_OK && memcmp(x, y, (size_t)n * sizeof *x) != 0) {
            fprintf(stderr, "numrpc-bench-c-client: dcopy's y differs from x\n");
            rc = WRONG_RESULT;
        }
    }
    if (rc == NUMRPC_OK) *median = bench_median(seconds, (size_t)calls);
    free(x);
    free(y);
    free(seconds);
    return rc;
}

int main(int argc, char **argv)
{
    char *end1, *end2, *end3;
    long null_calls = argc == 5 ? strtol(argv[2], &end1, 10) : 0;
    long dcopy_bytes = argc == 5 ? strtol(argv[3], &end2, 10) : 0;
    long dcopy_calls = argc == 5 ? strtol(argv[4], &end3, 10) : 0;
    if (argc != 5 || *end1 || *end2 || *end3 || null_calls < 1 || null_calls > 1000000 || dcopy_bytes < 8 ||
        dcopy_bytes % 8 || dcopy_bytes > (1L << 30) || dcopy_calls < 1 || dcopy_calls > 10000) {
        fprintf(stderr, "usage: numrpc-bench-c-client HOST:PORT NULL_CALLS DCOPY_BYTES DCOPY_CALLS\n"
                        "  (DCOPY_BYTES a multiple of 8, at most 1 GiB); prints the median wall seconds\n"
                        "  of a warm ddot (n = 1) and of a warm dcopy, one 'name seconds' line each\n");
        return 2;
    }
    numrpc_config cfg = {.servers = argv[1]};
    double null_median = 0, dcopy_median = 0;
    int rc = numrpc_init(&cfg);
    if (rc == NUMRPC_OK) rc = numrpc_set_timeout(CALL_TIMEOUT_SECONDS);
    if (rc == NUMRPC_OK) rc = time_null_calls(null_calls, &null_median);
    if (rc == NUMRPC_OK) rc = time_dcopies(dcopy_bytes / 8, dcopy_calls, &dcopy_median);
    if (rc != NUMRPC_OK) {
        if (rc != WRONG_RESULT)
            fprintf(stderr, "numrpc-bench-c-client: %s: %s\n", numrpc_strerror(rc), numrpc_last_error_detail());
        numrpc_finalize();
        return 1;
    }
    printf("null_call_seconds %.9f\n", null_median);
    printf("dcopy_seconds %.9f\n", dcopy_median);
    numrpc_finalize();
    return 0;
}
