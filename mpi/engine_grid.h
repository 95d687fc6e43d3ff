/* engine_grid.h -- the job's process grid (engine.h's engine_grid): set up
 * once when numrpc-mpi-engine starts, on every rank together. */
#ifndef NUMRPC_MPI_ENGINE_GRID_H
#define NUMRPC_MPI_ENGINE_GRID_H

#include "engine.h"

/* The squarest nprow x npcol with nprow * npcol == size, nprow <= npcol. */
void engine_grid_squarest(int size, int *nprow, int *npcol);
/* Sets up g on every rank: comm, the nprow x npcol BLACS grid (row-major)
 * and rank 0's 1 x 1 context.  0, or -1 with a sentence in why (then
 * nothing was set up; every rank returns the same). */
int engine_grid_setup(engine_grid *g, int nprow, int npcol, int nb, char *why, size_t len);
void engine_grid_free(engine_grid *g);

#endif
