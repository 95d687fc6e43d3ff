/* stats.c -- medians, min/max and a fixed-seed bootstrap interval of the
 * median for the benchmark programs. */
#include "stats.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
    if (n == 0) return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double bench_min(const double *v, size_t n)
{
    double m = n ? v[0] : 0.0;
    for (size_t i = 1; i < n; i++)
        if (v[i] < m) m = v[i];
    return m;
}

double bench_max(const double *v, size_t n)
{
    double m = n ? v[0] : 0.0;
    for (size_t i = 1; i < n; i++)
        if (v[i] > m) m = v[i];
    return m;
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

void bench_bootstrap_median_ci(const double *v, size_t n, int resamples, double level,
                               double *lo, double *hi)
{
    *lo = *hi = 0.0;
    if (n == 0 || resamples <= 0) return;
    double *meds = malloc((size_t)resamples * sizeof *meds);
    double *tmp = malloc(n * sizeof *tmp);
    if (!meds || !tmp) {
        free(meds);
        free(tmp);
        return;
    }
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (int r = 0; r < resamples; r++) {
        for (size_t i = 0; i < n; i++) tmp[i] = v[xorshift(&seed) % n];
        meds[r] = bench_median(tmp, n);
    }
    qsort(meds, (size_t)resamples, sizeof *meds, cmp_double);
    double tail = (1.0 - level) / 2.0;
    size_t ilo = (size_t)(tail * (resamples - 1) + 0.5);
    size_t ihi = (size_t)((1.0 - tail) * (resamples - 1) + 0.5);
    *lo = meds[ilo];
    *hi = meds[ihi];
    free(meds);
    free(tmp);
}
