/* routines.c -- a stand-in table of the engine's routines: pdgesv done
 * simply, until the ScaLAPACK routines of issue 19's second part replace it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "numrpc.h"

void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb, const int *irsrc,
               const int *icsrc, const int *ictxt, const int *lld, int *info);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void pdgemr2d_(const int *m, const int *n, const double *a, const int *ia, const int *ja, const int *desca,
               double *b, const int *ib, const int *jb, const int *descb, const int *ictxt);
void pdgesv_(const int *n, const int *nrhs, double *a, const int *ia, const int *ja, const int *desca, int *ipiv,
             double *b, const int *ib, const int *jb, const int *descb, int *info);

static int max1(int v)
{
    return v > 1 ? v : 1;
}

/* A descriptor of an m x n matrix: on ctxt_root for rank 0's global array
 * (leading dimension ld), or on the grid for a rank's local part. */
static void describe(const engine_grid *g, int root, int m, int n, int ld, int *desc, int *local_rows)
{
    int zero = 0, info = 0, ctxt = root ? g->ctxt_root : g->ctxt;
    int rows = root ? ld : max1(numroc_(&m, &g->nb, &g->myrow, &zero, &g->nprow));
    *local_rows = rows;
    if (root && g->rank != 0) {
        memset(desc, 0, 9 * sizeof *desc);
        desc[1] = -1; /* not in the 1 x 1 context */
        return;
    }
    descinit_(desc, &m, &n, &g->nb, &g->nb, &zero, &zero, &ctxt, &rows, &info);
}

static double *local_block(const engine_grid *g, int m, int n)
{
    int zero = 0;
    size_t rows = (size_t)max1(numroc_(&m, &g->nb, &g->myrow, &zero, &g->nprow));
    size_t cols = (size_t)max1(numroc_(&n, &g->nb, &g->mycol, &zero, &g->npcol));
    return calloc(rows * cols, sizeof(double));
}

/* pdgesv(n, nrhs, a, lda, ipiv, b, ldb, info), as dgesv's argument list. */
static int run_pdgesv(const engine_grid *g, engine_call *c)
{
    int n = *(int32_t *)c->argv[0], nrhs = *(int32_t *)c->argv[1];
    int lda = *(int32_t *)c->argv[3], ldb = *(int32_t *)c->argv[6];
    int32_t *info = c->argv[7];
    *info = 0;
    if (n < 0 || nrhs < 0 || lda < max1(n) || ldb < max1(n)) {
        c->code = NUMRPC_EINVAL;
        strcpy(c->detail, "pdgesv: want n >= 0, nrhs >= 0, lda and ldb >= max(1, n)");
        return -1;
    }
    if (n == 0 || nrhs == 0) return 0;
    int one = 1, lrows, descA0[9], descB0[9], descA[9], descB[9];
    double t0 = MPI_Wtime();
    describe(g, 1, n, n, lda, descA0, &lrows);
    describe(g, 1, n, nrhs, ldb, descB0, &lrows);
    describe(g, 0, n, n, 0, descA, &lrows);
    describe(g, 0, n, nrhs, 0, descB, &lrows);
    double *a = local_block(g, n, n), *b = local_block(g, n, nrhs);
    int *ipiv = calloc((size_t)lrows + (size_t)g->nb, sizeof(int));
    int32_t *pivots = calloc((size_t)n, sizeof(int32_t));
    int failed = a == NULL || b == NULL || ipiv == NULL || pivots == NULL;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_LOR, g->comm);
    if (failed) {
        free(a), free(b), free(ipiv), free(pivots);
        c->code = NUMRPC_ENOMEM;
        strcpy(c->detail, "pdgesv: out of memory on a rank");
        return -1;
    }
    pdgemr2d_(&n, &n, c->argv[2], &one, &one, descA0, a, &one, &one, descA, &g->ctxt);
    pdgemr2d_(&n, &nrhs, c->argv[5], &one, &one, descB0, b, &one, &one, descB, &g->ctxt);
    MPI_Barrier(g->comm);
    double t1 = MPI_Wtime();
    int status = 0;
    pdgesv_(&n, &nrhs, a, &one, &one, descA, ipiv, b, &one, &one, descB, &status);
    MPI_Barrier(g->comm);
    double t2 = MPI_Wtime();
    pdgemr2d_(&n, &n, a, &one, &one, descA, c->argv[2], &one, &one, descA0, &g->ctxt);
    pdgemr2d_(&n, &nrhs, b, &one, &one, descB, c->argv[5], &one, &one, descB0, &g->ctxt);
    /* Global row i's pivot sits on process row (i / nb) % nprow, replicated
     * across columns: column 0 contributes, rank 0 sums. */
    for (int i = 0; g->mycol == 0 && i < n; i++)
        if ((i / g->nb) % g->nprow == g->myrow) pivots[i] = ipiv[(i / (g->nb * g->nprow)) * g->nb + i % g->nb];
    MPI_Reduce(g->rank == 0 ? MPI_IN_PLACE : pivots, pivots, n, MPI_INT32_T, MPI_SUM, 0, g->comm);
    if (g->rank == 0) memcpy(c->argv[4], pivots, (size_t)n * sizeof(int32_t));
    *info = status;
    c->scatter_s = t1 - t0;
    c->compute_s = t2 - t1;
    c->gather_s = MPI_Wtime() - t2;
    free(a), free(b), free(ipiv), free(pivots);
    return 0;
}

const engine_routine engine_routines[] = {
    {"pdgesv", 8, run_pdgesv},
    {NULL, 0, NULL},
};

const engine_routine *engine_routine_find(const char *name)
{
    for (const engine_routine *r = engine_routines; r->name; r++)
        if (strcmp(r->name, name) == 0) return r;
    return NULL;
}
