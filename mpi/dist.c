/* dist.c -- rank 0's global blocks to the grid's block-cyclic layout and back
 * (packed and sent by rank 0, received in place), pivots through pigemr2d (dist.h). */
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

enum { DEFAULT_CHUNK = 1 << 19, DIST_TAG = 7401 }; /* 4 MiB of doubles */
static int chunk_elements = DEFAULT_CHUNK;

void dist_set_chunk_limit(int elements)
{
    chunk_elements = elements > 0 ? elements : DEFAULT_CHUNK;
}

/* Where rank r's part lies: its grid coordinates and local extents. */
typedef struct part {
    int prow, pcol, mloc, nloc;
    int cols_per_chunk; /* local columns per message */
} part;

static part part_of(const engine_grid *g, const dist_matrix *d, int r)
{
    part p;
    Cblacs_pcoord(g->ctxt, r, &p.prow, &p.pcol);
    p.mloc = local_count(d->m, g->nb, p.prow, g->nprow);
    p.nloc = local_count(d->n, g->nb, p.pcol, g->npcol);
    p.cols_per_chunk = p.mloc > 0 && p.mloc < chunk_elements ? chunk_elements / p.mloc : 1;
    return p;
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
    if (d->local == NULL)
        return -1;
    if (g->rank == 0 && g->size > 1) { /* staging for the other ranks' chunks */
        size_t stage = 0;
        for (int r = 1; r < g->size; r++) {
            part p = part_of(g, d, r);
            size_t chunk = (size_t)p.mloc * (size_t)(p.nloc < p.cols_per_chunk ? p.nloc : p.cols_per_chunk);
            stage = chunk > stage ? chunk : stage;
        }
        for (int k = 0; k < 2 && stage > 0; k++)
            if ((d->stage[k] = malloc(stage * sizeof(double))) == NULL)
                return -1;
    }
    return 0;
}

void dist_matrix_free(dist_matrix *d)
{
    free(d->local);
    free(d->stage[0]);
    free(d->stage[1]);
    d->local = d->stage[0] = d->stage[1] = NULL;
}

/* ---- Matrices: rank 0 packs each rank's part as that rank's local array
 * (its blocks in local order, lld = mloc) and sends it in chunks of whole
 * local columns; the rank receives straight into d->local.  Gathering is
 * the same backwards.  (pdgemr2d does this too, several times slower.) ---- */

/* The global index of local index k on the process at coordinate mine of procs. */
static size_t global_index(int k, int nb, int mine, int procs)
{
    return ((size_t)(k / nb) * (size_t)procs + (size_t)mine) * (size_t)nb + (size_t)(k % nb);
}

/* Copies local columns j0..j1-1 of part p between rank 0's global array and
 * packed (the part's columns from j0 on, lld p->mloc); to_packed says which way. */
static void copy_part(const engine_grid *g, const part *p, double *global, int lda, double *packed, int j0, int j1,
                      int to_packed)
{
    for (int lj = j0; lj < j1; lj++) {
        double *col = global + global_index(lj, g->nb, p->pcol, g->npcol) * (size_t)lda;
        double *mine = packed + (size_t)(lj - j0) * (size_t)p->mloc;
        for (int li = 0; li < p->mloc; li += g->nb) {
            size_t i = global_index(li, g->nb, p->prow, g->nprow);
            size_t bytes = (size_t)(p->mloc - li < g->nb ? p->mloc - li : g->nb) * sizeof(double);
            if (to_packed)
                memcpy(mine + li, col + i, bytes);
            else
                memcpy(col + i, mine + li, bytes);
        }
    }
}

static int chunk_end(const part *p, int j0)
{
    return p->nloc - j0 < p->cols_per_chunk ? p->nloc : j0 + p->cols_per_chunk;
}

void dist_scatter(const engine_grid *g, const double *global, int lda, dist_matrix *d)
{
    if (d->m == 0 || d->n == 0)
        return;
    if (g->rank != 0) {
        part p = part_of(g, d, g->rank);
        for (int j0 = 0; j0 < p.nloc && p.mloc > 0; j0 = chunk_end(&p, j0))
            MPI_Recv(d->local + (size_t)j0 * (size_t)p.mloc, (chunk_end(&p, j0) - j0) * p.mloc, MPI_DOUBLE, 0,
                     DIST_TAG, g->comm, MPI_STATUS_IGNORE);
        return;
    }
    /* Rank 0: its own part in place, the others' through two staging
     * buffers, one filling while the other is sent. */
    MPI_Request sent[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int k = 0;
    for (int r = 0; r < g->size; r++) {
        part p = part_of(g, d, r);
        if (p.mloc == 0)
            continue; /* nothing, and no messages: its loop above skips alike */
        for (int j0 = 0; j0 < p.nloc; j0 = chunk_end(&p, j0)) {
            int j1 = chunk_end(&p, j0);
            if (r == 0) {
                copy_part(g, &p, (double *)global, lda, d->local + (size_t)j0 * (size_t)p.mloc, j0, j1, 1);
                continue;
            }
            MPI_Wait(&sent[k], MPI_STATUS_IGNORE);
            copy_part(g, &p, (double *)global, lda, d->stage[k], j0, j1, 1);
            MPI_Isend(d->stage[k], (j1 - j0) * p.mloc, MPI_DOUBLE, r, DIST_TAG, g->comm, &sent[k]);
            k ^= 1;
        }
    }
    MPI_Waitall(2, sent, MPI_STATUSES_IGNORE);
}

void dist_gather(const engine_grid *g, const dist_matrix *d, double *global, int lda)
{
    if (d->m == 0 || d->n == 0)
        return;
    if (g->rank != 0) {
        part p = part_of(g, d, g->rank);
        for (int j0 = 0; j0 < p.nloc && p.mloc > 0; j0 = chunk_end(&p, j0))
            MPI_Send(d->local + (size_t)j0 * (size_t)p.mloc, (chunk_end(&p, j0) - j0) * p.mloc, MPI_DOUBLE, 0,
                     DIST_TAG, g->comm);
        return;
    }
    for (int r = 0; r < g->size; r++) {
        part p = part_of(g, d, r);
        if (p.mloc == 0)
            continue;
        for (int j0 = 0; j0 < p.nloc; j0 = chunk_end(&p, j0)) {
            int j1 = chunk_end(&p, j0);
            double *packed = d->local + (size_t)j0 * (size_t)p.mloc;
            if (r != 0) {
                packed = d->stage[0];
                MPI_Recv(packed, (j1 - j0) * p.mloc, MPI_DOUBLE, r, DIST_TAG, g->comm, MPI_STATUS_IGNORE);
            }
            copy_part(g, &p, global, lda, packed, j0, j1, 0);
        }
    }
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
