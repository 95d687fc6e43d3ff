/* keep.h -- the arrays the job keeps on its grid between calls, named by the
 * data handle (id, version) whose bytes they hold, within a byte budget (LRU). */
#ifndef NUMRPC_MPI_KEEP_H
#define NUMRPC_MPI_KEEP_H

#include <stdint.h>

#include "dist.h"
#include "engine.h"

/* Entries at most, whatever their bytes. */
#define KEEP_MAX_ENTRIES 64

/* One kept array: a matrix as a plan scattered it (m x n of a block with
 * leading dimension ld), or pivots of an m-row matrix (m of them). */
typedef struct keep_entry {
    int used;
    engine_key key;
    int is_pivots;
    int m, n, ld;
    uint64_t bytes;    /* global: m x n doubles, or m ints            */
    uint64_t last_use; /* the store's clock at its last find or add  */
    dist_matrix matrix;
    dist_pivots pivots;
} keep_entry;

/* Every rank has one and changes it alike: the same calls in the same
 * order with the same arguments (rank 0's, broadcast), so that rank 0's
 * finds are every rank's.  Its memory is each rank's part of the arrays. */
struct keep_store {
    uint64_t budget; /* global bytes kept at most (0: nothing is kept) */
    uint64_t bytes;
    uint64_t clock;
    keep_entry items[KEEP_MAX_ENTRIES];
};

void keep_init(keep_store *k, uint64_t budget);
/* Frees every entry (the ranks disagreed, or the job ends). */
void keep_clear(keep_store *k);
/* The entry of key in this layout, or -1 (the store unchanged: rank 0
 * looks before the call is broadcast). */
int keep_find_matrix(keep_store *k, const engine_key *key, int m, int n, int ld);
int keep_find_pivots(keep_store *k, const engine_key *key, int m);
/* Entry i is used by this call (every rank alike): the last to be evicted. */
void keep_touch(keep_store *k, int i);
/* Entry i leaves the store; its array is the caller's now (to free). */
void keep_take(keep_store *k, int i);
/* Keeps *d (or *p) as key's bytes: the store owns it and *d is emptied.
 * Entries of the same handle go first (its other versions are stale), then
 * the least recently used until it fits; an array over the whole budget is
 * freed instead. */
void keep_add_matrix(keep_store *k, const engine_key *key, int ld, dist_matrix *d);
void keep_add_pivots(keep_store *k, const engine_key *key, dist_pivots *p);

#endif
