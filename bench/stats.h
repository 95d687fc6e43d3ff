/* stats.h -- small statistics for the benchmarks: medians, a bootstrap
 * confidence interval of a median (fixed seed), a monotonic clock. */
#ifndef NUMRPC_BENCH_STATS_H
#define NUMRPC_BENCH_STATS_H

#include <stddef.h>

double bench_now(void);
/* Median of v[0..n-1]; v is left sorted.  n == 0 gives 0. */
double bench_median(double *v, size_t n);
/* Bootstrap percentile interval (level e.g. 0.90) of the median of v[0..n-1]:
 * resamples with replacement, fixed seed, so runs are reproducible. */
void bench_bootstrap_median_ci(const double *v, size_t n, int resamples, double level,
                               double *lo, double *hi);
double bench_min(const double *v, size_t n);
double bench_max(const double *v, size_t n);

#endif
