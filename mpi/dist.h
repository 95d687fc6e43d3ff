/* dist.h -- moving a routine's arrays between rank 0's global column-major
 * blocks and the grid's 2-D block-cyclic layout, and the phases' clock. */
#ifndef NUMRPC_MPI_DIST_H
#define NUMRPC_MPI_DIST_H

#include <stdint.h>

#include "engine.h"
#include "scalapack.h"

/* ---- A dense m x n matrix on the grid, g->nb x g->nb blocks from (0, 0) ---- */
typedef struct dist_matrix {
    int desc[DESC_LEN];
    int m, n;
    int mloc, nloc; /* this rank's rows and columns              */
    double *local;  /* this rank's part, lld = max(1, mloc); owned:
                       dist_matrix_free releases it              */
    double *stage[2]; /* rank 0 of several: two buffers a chunk of
                         another rank's part is packed in; owned   */
} dist_matrix;

/* Describes and allocates (zeroed) this rank's part.  Returns 0, or -1 when
 * this rank is out of memory or the part exceeds ScaLAPACK's int indices;
 * the caller agrees with the other ranks (dist_agree) before going on. */
int dist_matrix_init(const engine_grid *g, dist_matrix *d, int m, int n);
void dist_matrix_free(dist_matrix *d);

/* Collective.  global is rank 0's m x n block with leading dimension
 * lda >= max(1, m) (ignored on other ranks); rows m..lda-1 are never touched. */
void dist_scatter(const engine_grid *g, const double *global, int lda, dist_matrix *d);
void dist_gather(const engine_grid *g, const dist_matrix *d, double *global, int lda);
/* A part travels in messages of whole local columns, at most this many
 * elements when a column fits (0: the default, 4 MiB of doubles); smaller
 * only to test the chunks.  Set it alike on every rank, between calls. */
void dist_set_chunk_limit(int elements);

/* ---- Pivots: ScaLAPACK's ipiv, split over process rows as A's rows are and
 *      the same in every process column; global 1-based row numbers ---- */
typedef struct dist_pivots {
    int m;      /* rows of the matrix they belong to      */
    int mloc;   /* this rank's rows                        */
    int *local; /* mloc + nb entries, zeroed; owned        */
    int *root;  /* rank 0: an m x npcol block to send or receive
                   them through (NULL elsewhere); owned      */
} dist_pivots;

/* Returns 0, or -1 when this rank is out of memory (then dist_agree). */
int dist_pivots_init(const engine_grid *g, dist_pivots *p, int m);
void dist_pivots_free(dist_pivots *p);
/* Collective: rank 0 receives the first count (<= m) pivots, as LAPACK has them. */
void dist_pivots_gather(const engine_grid *g, dist_pivots *p, int32_t *global, int count);
/* Collective: rank 0's m pivots to every process column. */
void dist_pivots_scatter(const engine_grid *g, const int32_t *global, dist_pivots *p);

/* Collective: the first of rank 0's m pivots outside 1..m (its index, and
 * its value in *value), or -1 when all are rows of the matrix; every rank
 * gets rank 0's answer. */
int dist_pivots_check(const engine_grid *g, const int32_t *global, int m, int32_t *value);

/* ---- Agreement and time ---- */
/* 1 when ok is non-zero on every rank (collective). */
int dist_agree(const engine_grid *g, int ok);
/* Collective: waits for every rank, then rank 0's MPI_Wtime(), so that a
 * phase between two clocks is the slowest rank's. */
double dist_clock(const engine_grid *g);
/* Collective: ends a phase begun at *since, setting *phase_s to its
 * seconds, and begins the next one now. */
void dist_lap(const engine_grid *g, double *since, double *phase_s);

#endif
