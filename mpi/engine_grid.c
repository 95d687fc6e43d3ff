/* engine_grid.c -- the BLACS contexts of the resident job: the nprow x npcol
 * grid of every rank and the 1 x 1 grid of rank 0 where global arrays live. */
#include "engine_grid.h"

#include <stdio.h>

/* BLACS's C interface (libscalapack-openmpi). */
void Cblacs_pinfo(int *mypnum, int *nprocs);
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);

void engine_grid_squarest(int size, int *nprow, int *npcol)
{
    int p = 1;
    for (int d = 1; d * d <= size; d++)
        if (size % d == 0) p = d;
    *nprow = p;
    *npcol = size / p;
}

int engine_grid_setup(engine_grid *g, int nprow, int npcol, int nb, char *why, size_t len)
{
    g->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(g->comm, &g->rank);
    MPI_Comm_size(g->comm, &g->size);
    if (nprow <= 0 || npcol <= 0) engine_grid_squarest(g->size, &nprow, &npcol);
    if (nprow * npcol != g->size) {
        snprintf(why, len, "a %d x %d grid needs %d ranks; the job has %d", nprow, npcol, nprow * npcol, g->size);
        return -1;
    }
    if (nb < 1) {
        snprintf(why, len, "block size %d: at least 1", nb);
        return -1;
    }
    int me, n;
    Cblacs_pinfo(&me, &n);
    Cblacs_get(-1, 0, &g->ctxt);
    Cblacs_gridinit(&g->ctxt, "Row", nprow, npcol);
    Cblacs_gridinfo(g->ctxt, &g->nprow, &g->npcol, &g->myrow, &g->mycol);
    Cblacs_get(-1, 0, &g->ctxt_root);
    Cblacs_gridinit(&g->ctxt_root, "Row", 1, 1); /* rank 0 alone; -1 elsewhere */
    if (g->rank != 0) g->ctxt_root = -1;
    g->nb = nb;
    return 0;
}

void engine_grid_free(engine_grid *g)
{
    if (g->ctxt_root >= 0) Cblacs_gridexit(g->ctxt_root);
    Cblacs_gridexit(g->ctxt);
}
