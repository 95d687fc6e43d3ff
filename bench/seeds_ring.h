/* seeds_ring.h -- the PVM paper's ring (NAS-96-006 section 8) for numrpc: a
 * data handle passed server to server around k numrpc-servers, and raw TCP. */
#ifndef NUMRPC_BENCH_SEEDS_RING_H
#define NUMRPC_BENCH_SEEDS_RING_H

#include "seeds.h"
#include "seeds_rawring.h"

struct seeds_ring {
    int k;
    char label[SEEDS_MAX_RING][32]; /* "127.0.0.1:port" of each server */
    /* numrpc_data *: slot i on server i; slot 0 is only for the dcopy that
     * stays on server 0 (the hop less its move). */
    void *held[SEEDS_MAX_SIZES][SEEDS_MAX_RING];
    rawring raw;
};

/* Makes, on every server, a handle of each ring size for the hops to write.
 * 0 or -1 (message printed). */
int seeds_ring_prepare(const struct seeds_options *o, struct seeds_ring *g);
/* Round r (r < 0: a warm-up, nothing kept): for each size, one trip of the
 * handle and one of the raw ring, in alternating order; each trip's data
 * checked after it; then a dcopy between two handles on server 0 (a hop
 * without the move).  x: room for the largest size, twice.  0 or -1. */
int seeds_ring_round(const struct seeds_options *o, struct seeds_ring *g, int r, double *x,
                     struct ring_results *res);
/* Frees the handles of seeds_ring_prepare. */
void seeds_ring_release(const struct seeds_options *o, struct seeds_ring *g);

#endif
