/* seeds_lsb.h -- one round of the LSB paper's measurements (TR-97-06 4.1-4.2)
 * for numrpc and raw TCP: null latency, paced / two-way / stream throughput. */
#ifndef NUMRPC_BENCH_SEEDS_LSB_H
#define NUMRPC_BENCH_SEEDS_LSB_H

#include "seeds.h"

/* Calls per buffer size in one round: lsb_bytes / size, kept in [4, 4096]. */
int seeds_lsb_calls(const struct seeds_options *o, size_t bytes);
/* Round r (r < 0: a warm-up, nothing kept) against numrpc's current server
 * (numrpc_init done; it serves benchsink) and the raw peer on fd (tuned
 * rawtcp).  x holds the largest buffer; acks has room for 4096 doubles.
 * Appends one figure per series to res.  0, or -1 after a failed call or a
 * wrong answer (message printed). */
int seeds_lsb_round(const struct seeds_options *o, int fd, int r, double *x, double *acks,
                    struct lsb_results *res);

#endif
