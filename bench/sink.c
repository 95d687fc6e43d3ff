/* sink.c -- bench_sink, served by the benchmark's stub module: it only
 * acknowledges an array, so a one-way transfer costs the transfer alone. */
#include "sink.h"

#include <time.h>

void bench_sink(int n, double *x, double *ack)
{
    *ack = n > 0 ? x[0] + x[n / 2] + x[n - 1] : 0.0;
}

void bench_sink_at(int n, double *x, double *ack, double *arrived)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *arrived = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    bench_sink(n, x, ack);
}
