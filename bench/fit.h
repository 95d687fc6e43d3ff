/* fit.h -- the TTCP-style linear model of a transfer: T = b0 + b1*m fitted by
 * least squares, with confidence intervals, peak rate, n-half and jitter. */
#ifndef NUMRPC_BENCH_FIT_H
#define NUMRPC_BENCH_FIT_H

#include <stddef.h>

typedef struct fit_result {
    double b0, b1;         /* T = b0 + b1 * m (seconds, seconds per byte)   */
    double b0_half, b1_half; /* half-widths of their confidence intervals   */
    double r_max;          /* peak rate 1/b1, bytes per second (0 if b1<=0) */
    double n_half;         /* bytes at which half the peak is reached: b0/b1 */
    double t0;             /* start-up latency: b0                           */
    size_t n;
} fit_result;

/* Least-squares fit of y = b0 + b1 x over n >= 3 points with two-sided
 * confidence level `level` (0.90 or 0.95).  Returns 0, or -1 when the x
 * values do not vary or n < 3. */
int fit_linear(const double *x, const double *y, size_t n, double level, fit_result *out);

/* Two-sided Student t quantile for `level` (0.90 or 0.95) and df degrees of
 * freedom (a table to df 30, the normal value beyond). */
double fit_t_quantile(double level, size_t df);

/* Sample standard deviation of v[first..n-1] (first = 1 leaves out the first
 * call, which pays for connections and caches). */
double fit_stddev(const double *v, size_t n, size_t first);

#endif
