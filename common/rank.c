/* rank.c -- the prediction model T = latency + bytes/B + flops/(P(n) x share)
 * and the corrections learned from measured calls (docs/metaserver.md). */
#include "rank.h"

#include <math.h>

double rank_speed_at(const rank_curve *c, double flops)
{
    if (c->npoints <= 0) return RANK_DEFAULT_RATE;
    double n = flops > 0 ? cbrt(flops / 2) : c->n[0];
    if (n <= c->n[0]) return c->rate[0];
    for (int i = 1; i < c->npoints; i++) {
        if (n > c->n[i]) continue;
        double t = (log(n) - log(c->n[i - 1])) / (log(c->n[i]) - log(c->n[i - 1]));
        return c->rate[i - 1] + t * (c->rate[i] - c->rate[i - 1]);
    }
    return c->rate[c->npoints - 1];
}

double rank_share(int slots, uint32_t busy)
{
    if (slots < 1) slots = 1;
    double calls = (double)busy + 1;
    return calls <= slots ? 1.0 : (double)slots / calls;
}

double rank_predict(const rank_terms *t, double flops, uint64_t bytes)
{
    double share = t->share > 0 && t->share <= 1 ? t->share : 1;
    double seconds = t->latency;
    if (t->bytes_per_second > 0) seconds += (double)bytes / t->bytes_per_second;
    if (flops > 0 && t->flops_per_second > 0)
        seconds += flops * (t->correction > 0 ? t->correction : 1) / (t->flops_per_second * share);
    /* A call beside more calls than the server has slots also waits for
     * a worker: this is what ranks a busy server below an idle one for
     * calls with no complexity. */
    return seconds + (1 / share - 1) * RANK_QUEUE_LATENCY;
}

double rank_correction_sample(double compute_seconds, double flops, double flops_per_second,
                              double share)
{
    if (!(flops > 0) || !(flops_per_second > 0)) return 0;
    return compute_seconds * flops_per_second * share / flops;
}

double rank_ewma(double old, double sample, double alpha)
{
    return old > 0 ? (1 - alpha) * old + alpha * sample : sample;
}

double rank_finish_time(double backlog, int slots, double link, double own)
{
    return backlog / (slots > 0 ? slots : 1) + link + own;
}
