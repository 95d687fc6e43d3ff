/* bench_pinned.c -- what a typed header's pin costs a warm call: dcopy
 * (n = 8) through numrpc_call and numrpc_call_pinned, interleaved rounds. */
#include <stdio.h>
#include <stdlib.h>

#include "numrpc.h"
#include "stats.h"

#define ROUNDS 21
#define PER_ROUND 2000

/* Seconds per call of PER_ROUND warm dcopy calls, pinned or not. */
static int round_of(const char *pin, double *x, double *y, double *seconds)
{
    double t0 = bench_now();
    for (int i = 0; i < PER_ROUND; i++) {
        int rc = pin ? numrpc_call_pinned(pin, "dcopy", 8, x, 1, y, 1) : numrpc_call("dcopy", 8, x, 1, y, 1);
        if (rc != NUMRPC_OK) return rc;
    }
    *seconds = (bench_now() - t0) / PER_ROUND;
    return NUMRPC_OK;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: numrpc-bench-pinned HOST:PORT (a server with the blas module)\n");
        return 2;
    }
    numrpc_config cfg = {.servers = argv[1], .pin_file = ""};
    char *pin = NULL;
    double x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8], plain[ROUNDS], pinned[ROUNDS];
    int rc = numrpc_init(&cfg);
    if (rc == NUMRPC_OK) rc = numrpc_describe_pin("dcopy", &pin);
    for (int r = 0; rc == NUMRPC_OK && r < ROUNDS; r++) {
        rc = round_of(NULL, x, y, &plain[r]);
        if (rc == NUMRPC_OK) rc = round_of(pin, x, y, &pinned[r]);
    }
    free(pin);
    if (rc != NUMRPC_OK) {
        fprintf(stderr, "numrpc-bench-pinned: %s: %s\n", numrpc_strerror(rc), numrpc_last_error_detail());
        return 1;
    }
    /* The first round of each warms connection and interface: dropped. */
    double p_min = bench_min(plain + 1, ROUNDS - 1), p_max = bench_max(plain + 1, ROUNDS - 1);
    double q_min = bench_min(pinned + 1, ROUNDS - 1), q_max = bench_max(pinned + 1, ROUNDS - 1);
    double p = bench_median(plain + 1, ROUNDS - 1), q = bench_median(pinned + 1, ROUNDS - 1);
    printf("warm dcopy n=8, %d rounds of %d calls each, interleaved (us per call)\n", ROUNDS - 1, PER_ROUND);
    printf("numrpc_call         median %7.2f  min %7.2f  max %7.2f\n", p * 1e6, p_min * 1e6, p_max * 1e6);
    printf("numrpc_call_pinned  median %7.2f  min %7.2f  max %7.2f\n", q * 1e6, q_min * 1e6, q_max * 1e6);
    printf("pinned / plain      %.3f (medians), %+.2f us\n", q / p, (q - p) * 1e6);
    numrpc_finalize();
    return 0;
}
