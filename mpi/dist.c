/* dist.c -- rank 0's global blocks to the grid's block-cyclic layout and back
 * through pdgemr2d between the 1 x 1 context of rank 0 and the grid (dist.h). */
#include "dist.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(int) == sizeof(int32_t), "ScaLAPACK's INTEGER is the IDL's int");

static void describe(int *desc, int ctxt, int m, int n, int mb, int nb, int lld)
{
    desc[DESC_DTYPE] = 1; /* a dense matrix */
    desc[DESC_CTXT] = ctxt;
    desc[DESC_M] = m;
    desc[DESC_N] = n;
    desc[DESC_MB] = mb;
    desc[DESC_NB] = nb;
    desc[DESC_RSRC] = 0;
    desc[DESC_CSRC] = 0;
    desc[DESC_LLD] = lld;
}

static int local_count(int global, int block, int mine, int procs)
{
    int first = 0;
    return numroc_(&global, &block, &mine, &first, &procs);
}

static int at_least_one(int x)
{
    return x > 1 ? x : 1;
}

int dist_matrix_init(const engine_grid *g, dist_matrix *d, int m, int n)
{
    memset(d, 0, sizeof *d);
    d->m = m;
    d->n = n;
    d->mloc = local_count(m, g->nb, g->myrow, g->nprow);
    d->nloc = local_count(n, g->nb, g->mycol, g->npcol);
    describe(d->desc, g->ctxt, m, n, g->nb, g->nb, at_least_one(d->mloc));
    /* ScaLAPACK indexes a local part with Fortran INTEGERs. */
    size_t count = (size_t)at_least_one(d->mloc) * (size_t)at_least_one(d->nloc);
    if (count > (size_t)INT_MAX)
        return -1;
    d->local = calloc(count, sizeof *d->local);
    return d->local != NULL ? 0 : -1;
}

void dist_matrix_free(dist_matrix *d)
{
    free(d->local);
    d->local = NULL;
}

/* Cpdgemr2d indexes rank 0's block with C ints: a block of more elements
 * than this moves in panels of whole columns that stay under it. */
static long long panel_limit = INT_MAX;

void dist_set_panel_limit(long long elements)
{
    panel_limit = elements > 0 && elements < INT_MAX ? elements : INT_MAX;
}

/* Columns j0.. of the matrix between rank 0's block (the one block of a
 * 1 x 1 grid; ctxt_root is -1 on the other ranks, which hold none of it)
 * and the grid, one panel at a time. */
static void move(const engine_grid *g, const dist_matrix *d, double *global, int lda,
                 int to_grid)
{
    int root[DESC_LEN];
    if (d->m == 0 || d->n == 0)
        return;
    long long fit = panel_limit / lda;
    int width = fit < 1 ? 1 : fit < d->n ? (int)fit : d->n;
    for (int j = 0; j < d->n; j += width) {
        int cols = d->n - j < width ? d->n - j : width;
        double *panel = global != NULL ? global + (size_t)j * (size_t)lda : NULL;
        describe(root, g->ctxt_root, d->m, cols, d->m, cols, lda);
        if (to_grid)
            Cpdgemr2d(d->m, cols, panel, 1, 1, root, d->local, 1, j + 1, (int *)d->desc, g->ctxt);
        else
            Cpdgemr2d(d->m, cols, d->local, 1, j + 1, (int *)d->desc, panel, 1, 1, root, g->ctxt);
    }
}

void dist_scatter(const engine_grid *g, const double *global, int lda, dist_matrix *d)
{
    move(g, d, (double *)global, lda, 1);
}

void dist_gather(const engine_grid *g, const dist_matrix *d, double *global, int lda)
{
    move(g, d, global, lda, 0);
}

/* ---- Pivots ----
 * On the grid they are an m x npcol integer matrix of mb x 1 blocks: process
 * column c holds column c, its own copy.  Rank 0 keeps an m x npcol block
 * (p->root) to send the same pivots to every column, or to receive column 0. */

int dist_pivots_init(const engine_grid *g, dist_pivots *p, int m)
{
    memset(p, 0, sizeof *p);
    p->m = m;
    p->mloc = local_count(m, g->nb, g->myrow, g->nprow);
    p->local = calloc((size_t)p->mloc + (size_t)g->nb, sizeof *p->local);
    if (g->rank == 0 && m > 0)
        p->root = calloc((size_t)m * (size_t)g->npcol, sizeof *p->root);
    return p->local != NULL && (g->rank != 0 || m == 0 || p->root != NULL) ? 0 : -1;
}

void dist_pivots_free(dist_pivots *p)
{
    free(p->local);
    free(p->root);
    p->local = p->root = NULL;
}

static void pivots_move(const engine_grid *g, dist_pivots *p, int columns, int to_grid)
{
    int grid[DESC_LEN], root[DESC_LEN];
    describe(grid, g->ctxt, p->m, columns, g->nb, 1, at_least_one(p->mloc));
    describe(root, g->ctxt_root, p->m, columns, p->m, columns, p->m);
    if (to_grid)
        Cpigemr2d(p->m, columns, p->root, 1, 1, root, p->local, 1, 1, grid, g->ctxt);
    else
        Cpigemr2d(p->m, columns, p->local, 1, 1, grid, p->root, 1, 1, root, g->ctxt);
}

void dist_pivots_gather(const engine_grid *g, dist_pivots *p, int32_t *global, int count)
{
    if (p->m == 0)
        return;
    pivots_move(g, p, 1, 0);
    if (g->rank == 0)
        memcpy(global, p->root, (size_t)count * sizeof *global);
}

void dist_pivots_scatter(const engine_grid *g, const int32_t *global, dist_pivots *p)
{
    if (p->m == 0)
        return;
    if (g->rank == 0)
        for (int c = 0; c < g->npcol; c++)
            memcpy(p->root + (size_t)c * (size_t)p->m, global, (size_t)p->m * sizeof *global);
    pivots_move(g, p, g->npcol, 1);
}

int dist_pivots_check(const engine_grid *g, const int32_t *global, int m, int32_t *value)
{
    int verdict[2] = {-1, 0}; /* index, value */
    if (g->rank == 0)
        for (int i = 0; i < m; i++)
            if (global[i] < 1 || global[i] > m) {
                verdict[0] = i;
                verdict[1] = global[i];
                break;
            }
    MPI_Bcast(verdict, 2, MPI_INT, 0, g->comm);
    *value = verdict[1];
    return verdict[0];
}

/* ---- Agreement and time ---- */

int dist_agree(const engine_grid *g, int ok)
{
    int mine = ok != 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, g->comm);
    return all;
}

double dist_clock(const engine_grid *g)
{
    MPI_Barrier(g->comm);
    return MPI_Wtime();
}

void dist_lap(const engine_grid *g, double *since, double *phase_s)
{
    double now = dist_clock(g);
    *phase_s = now - *since;
    *since = now;
}
