/* seeds_report.h -- numrpc-bench-seeds' tables (the papers' published figures
 * beside numrpc's and raw TCP's) as markdown on a stream, and its CSV. */
#ifndef NUMRPC_BENCH_SEEDS_REPORT_H
#define NUMRPC_BENCH_SEEDS_REPORT_H

#include <stdio.h>

#include "seeds.h"

/* The ring's model for one system: t(n) = t0 + n / r_max per hop. */
struct ring_fit {
    int ok;
    double r_max, r_lo, r_hi; /* bytes/s, and its 90 % interval (r_hi 0: unbounded) */
    double r2;                /* coefficient of determination of the fit */
    double b0, b0_half;       /* the fit's intercept, s, and its 90 % half-width */
    double t0;                /* the measured hop at the smallest size, s */
    double n_half;            /* t0 * r_max, bytes */
};

/* Fits every (size, round) hop of system sys.  0, or -1 when it cannot. */
int seeds_ring_fit(const struct seeds_options *o, const struct ring_results *g, int sys,
                   struct ring_fit *f);
/* The LSB tables: null latency, then throughput by buffer size. */
void seeds_report_lsb(FILE *f, const struct seeds_options *o, const struct lsb_results *l);
/* The ring tables: the fit beside NAS-96-006's Tables 1 and 4, hop times. */
void seeds_report_ring(FILE *f, const struct seeds_options *o, const struct ring_results *g);
/* experiment,system,mode,bytes,round,seconds_per_op,ops_per_round: 0 or -1. */
int seeds_write_csv(const char *path, const struct seeds_options *o, const struct lsb_results *l,
                    const struct ring_results *g);

#endif
