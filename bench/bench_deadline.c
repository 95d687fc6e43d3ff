/* bench_deadline.c -- how far past its time limit a call with a large input
 * returns: linpack on an n x n matrix under numrpc_set_timeout, in rounds. */
#include <stdio.h>
#include <stdlib.h>

#include "numrpc.h"
#include "stats.h"

#define MAX_ROUNDS 101

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 5) {
        fprintf(stderr, "usage: numrpc-bench-deadline HOST:PORT [TIMEOUT_S (0.3)] [N (4950)] [ROUNDS (11)]\n"
                        "  (a server with the linpack module; N = 4950 sends a 196 MB matrix)\n");
        return 2;
    }
    double timeout = argc > 2 ? atof(argv[2]) : 0.3;
    int n = argc > 3 ? atoi(argv[3]) : 4950, rounds = argc > 4 ? atoi(argv[4]) : 11;
    if (!(timeout > 0) || n < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "numrpc-bench-deadline: TIMEOUT_S > 0, N >= 1, 1 <= ROUNDS <= %d\n", MAX_ROUNDS);
        return 2;
    }
    size_t elems = (size_t)n * (size_t)n;
    double *a = malloc(elems * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    int *ipvt = malloc((size_t)n * sizeof *ipvt);
    if (a == NULL || b == NULL || ipvt == NULL) {
        fprintf(stderr, "numrpc-bench-deadline: out of memory for n = %d\n", n);
        return 1;
    }
    for (size_t i = 0; i < elems; i++) a[i] = (double)(i % 1009) / 1009.0 + (i % ((size_t)n + 1) == 0 ? n : 0);
    numrpc_config cfg = {.servers = argv[1], .pin_file = ""};
    int rc = numrpc_init(&cfg);
    double past[MAX_ROUNDS];
    int info = 0, other = 0;
    for (int r = 0; rc == NUMRPC_OK && r < rounds; r++) {
        for (int i = 0; i < n; i++) b[i] = 1.0;
        numrpc_set_timeout(timeout);
        double t0 = bench_now();
        int got = numrpc_call("linpack", a, n, n, ipvt, b, &info);
        past[r] = bench_now() - t0 - timeout;
        numrpc_set_timeout(0);
        if (got != NUMRPC_ETIMEDOUT) {
            fprintf(stderr, "round %d: %s (%s), not ETIMEDOUT\n", r, numrpc_strerror(got), numrpc_last_error_detail());
            other++;
        }
        /* The worker is free again: a small call goes through at once. */
        double x = 1, y = 0;
        rc = numrpc_call("dcopy", 1, &x, 1, &y, 1);
    }
    if (rc != NUMRPC_OK) {
        fprintf(stderr, "numrpc-bench-deadline: %s: %s\n", numrpc_strerror(rc), numrpc_last_error_detail());
        return 1;
    }
    double lo = bench_min(past, (size_t)rounds), hi = bench_max(past, (size_t)rounds);
    double med = bench_median(past, (size_t)rounds);
    printf("linpack n=%d (%.0f MB in), timeout %.3f s, %d rounds: returned past the timeout by (ms)\n", n,
           (double)elems * 8 / 1e6, timeout, rounds);
    printf("median %8.1f  min %8.1f  max %8.1f   (median call %.3f s = %.2f x the timeout)%s\n", med * 1e3, lo * 1e3,
           hi * 1e3, timeout + med, (timeout + med) / timeout, other ? "  SOME NOT ETIMEDOUT" : "");
    numrpc_finalize();
    free(a);
    free(b);
    free(ipvt);
    return other ? 1 : 0;
}
