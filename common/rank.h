/* rank.h -- the prediction model of docs/metaserver.md, written once for the
 * metaserver's ranking and the client's lease and farm ranking. */
#ifndef NUMRPC_COMMON_RANK_H
#define NUMRPC_COMMON_RANK_H

#include <stdint.h>

#define RANK_MAX_POINTS    8    /* points of a speed curve P(n)                 */
#define RANK_DEFAULT_RATE  1e9  /* flops/s of a server with no curve            */
#define RANK_QUEUE_LATENCY 1e-4 /* seconds a call waits per call queued ahead   */

/* ---- The speed curve P(n), measured by a server's helper with dmmul ---- */
typedef struct rank_curve {
    int npoints;
    double n[RANK_MAX_POINTS];    /* increasing                    */
    double rate[RANK_MAX_POINTS]; /* flops per second at n[i]      */
} rank_curve;

/* P at a call's size: the points are dgemm-like (2 n^3 flops), so the
 * call's n is the cube root of half its flops; interpolated in log n
 * between the points, flat beyond them; RANK_DEFAULT_RATE with no point. */
double rank_speed_at(const rank_curve *c, double flops);

/* ---- One server's figures for one call ---- */
/* The share of a server's speed a new call gets with busy calls beside it:
 * min(1, slots / (busy + 1)); slots below 1 count as 1. */
double rank_share(int slots, uint32_t busy);

typedef struct rank_terms {
    double latency;          /* seconds, one round trip                     */
    double bytes_per_second; /* of the link (<= 0: transfer not counted)    */
    double flops_per_second; /* P(n) over the calibration (<= 0: not counted) */
    double share;            /* rank_share (<= 0 or > 1: taken as 1)        */
    double correction;       /* measured / predicted compute (<= 0: 1)      */
} rank_terms;

/* T = latency + bytes / B + flops x correction / (P x share)
 *     + (1 / share - 1) x RANK_QUEUE_LATENCY:
 * the seconds a call of flops moving bytes (both ways) takes there. */
double rank_predict(const rank_terms *t, double flops, uint64_t bytes);

/* ---- Corrections learned from measured calls ---- */
/* A new sample of compute correction: measured compute seconds over what
 * flops take at flops_per_second x share (0 when nothing can be said). */
double rank_correction_sample(double compute_seconds, double flops, double flops_per_second,
                              double share);
/* Exponentially weighted mean: old <= 0 means none yet (the sample). */
double rank_ewma(double old, double sample, double alpha);

/* ---- A farm's placement ---- */
/* When a call would finish on a server already given backlog predicted
 * compute seconds (run slots at a time) and link seconds of transfer (one
 * link), if its own predicted time there is own. */
double rank_finish_time(double backlog, int slots, double link, double own);

#endif
