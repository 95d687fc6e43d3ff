/* fit.c -- least-squares fit of transfer time against message size, its
 * confidence intervals (Student t), and the jitter of repeated calls. */
#include "fit.h"

#include <math.h>

double fit_t_quantile(double level, size_t df)
{
    /* Upper (1 + level) / 2 quantiles of Student's t, df = 1..30. */
    static const double t90[30] = {6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860,
                                   1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753, 1.746,
                                   1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711,
                                   1.708, 1.706, 1.703, 1.701, 1.699, 1.697};
    static const double t95[30] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                   2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                   2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                   2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    int ninety = level < 0.925;
    if (df == 0) return INFINITY;
    if (df <= 30) return ninety ? t90[df - 1] : t95[df - 1];
    return ninety ? 1.645 : 1.960;
}

int fit_linear(const double *x, const double *y, size_t n, double level, fit_result *out)
{
    if (n < 3) return -1;
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (sxx <= 0) return -1;
    double b1 = sxy / sxx, b0 = my - b1 * mx;
    double sse = 0;
    for (size_t i = 0; i < n; i++) {
        double r = y[i] - (b0 + b1 * x[i]);
        sse += r * r;
    }
    double s2 = sse / (double)(n - 2);
    double t = fit_t_quantile(level, n - 2);
    out->b0 = b0;
    out->b1 = b1;
    out->b1_half = t * sqrt(s2 / sxx);
    out->b0_half = t * sqrt(s2 * (1.0 / (double)n + mx * mx / sxx));
    out->r_max = b1 > 0 ? 1.0 / b1 : 0;
    out->n_half = b1 > 0 ? b0 / b1 : 0;
    out->t0 = b0;
    out->n = n;
    return 0;
}

double fit_stddev(const double *v, size_t n, size_t first)
{
    if (n < first + 2) return 0;
    double m = 0, ss = 0;
    for (size_t i = first; i < n; i++) m += v[i];
    m /= (double)(n - first);
    for (size_t i = first; i < n; i++) ss += (v[i] - m) * (v[i] - m);
    return sqrt(ss / (double)(n - first - 1));
}
