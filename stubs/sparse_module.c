/* sparse_module.c -- the routines of the sparse stub module (stubs/sparse.idl):
 * SuperLU's dgssv and zgssv on CSC arrays checked here before SuperLU reads them. */
#include <stdio.h>
#include <stdlib.h>

#include <slu_ddefs.h>
#include <slu_zdefs.h>

#include "csc_check.h"
#include "numrpc.h"
#include "stubmod.h"

/* Set by the server when it loads the module (stubmod.h). */
__attribute__((visibility("default"))) const stub_services *numrpc_stub_services;

void numrpc_sparse_dgssv(int n, int nnz, double *values, int *rowind, int *colptr, int nrhs,
                         double *b, int *info);
void numrpc_sparse_zgssv(int n, int nnz, doublecomplex *values, int *rowind, int *colptr,
                         int nrhs, doublecomplex *b, int *info);

/* SuperLU's simple drivers, dgssv and zgssv, share this signature. */
typedef void gssv_driver(superlu_options_t *options, SuperMatrix *a, int *perm_c, int *perm_r,
                         SuperMatrix *l, SuperMatrix *u, SuperMatrix *b, SuperLUStat_t *stat,
                         int *info);

static void fail(int code, const char *detail)
{
    if (numrpc_stub_services) numrpc_stub_services->fail(code, detail);
}

/* Checks the arrays, then solves with driver on matrices of element type
 * dtype that borrow the caller's arrays (no copy); B becomes X. */
static void solve_csc(const char *routine, gssv_driver *driver, Dtype_t dtype, int n, int nnz,
                      void *values, int *rowind, int *colptr, int nrhs, void *b, int *info)
{
    /* The checks' scratch (5n ints), then perm_c and perm_r (2n). */
    size_t count = n > 0 ? (size_t)n : 1;
    int *ints = malloc(5 * count * sizeof *ints);
    if (ints == NULL) {
        char detail[96];
        snprintf(detail, sizeof detail, "%s: no memory for the checks of n = %d", routine, n);
        fail(NUMRPC_ENOMEM, detail);
        return;
    }
    *info = csc_check_arrays(n, nnz, nrhs, rowind, colptr, ints);
    if (*info != 0 || n == 0) {
        free(ints);
        return;
    }
    /* SuperLU 5.3's dpivotL writes through an uninitialised row index when
     * a column has no candidate row left (xiaoyeli/superlu#33): only a
     * structurally singular A gets there, and it is singular anyway. */
    int unmatched = csc_unmatched_column(n, rowind, colptr, ints);
    if (unmatched >= 0) {
        *info = unmatched + 1;
        free(ints);
        return;
    }
    int *perm_c = ints, *perm_r = ints + count;
    NCformat a_store = {.nnz = nnz, .nzval = values, .rowind = rowind, .colptr = colptr};
    SuperMatrix a = {.Stype = SLU_NC, .Dtype = dtype, .Mtype = SLU_GE, .nrow = n, .ncol = n,
                     .Store = &a_store};
    DNformat b_store = {.lda = n, .nzval = b};
    SuperMatrix bx = {.Stype = SLU_DN, .Dtype = dtype, .Mtype = SLU_GE, .nrow = n, .ncol = nrhs,
                      .Store = &b_store};
    SuperMatrix l, u;
    superlu_options_t options;
    set_default_options(&options); /* COLAMD ordering, partial pivoting */
    options.PrintStat = NO;
    SuperLUStat_t stat;
    StatInit(&stat);
    driver(&options, &a, perm_c, perm_r, &l, &u, &bx, &stat, info);
    StatFree(&stat);
    free(ints);
    if (*info >= 0 && *info <= n) {
        /* Solved, or U(info,info) = 0: the factors exist either way. */
        Destroy_SuperNode_Matrix(&l);
        Destroy_CompCol_Matrix(&u);
        return;
    }
    /* info > n: SuperLU ran out of memory (info - n bytes were allocated)
     * and returned without factors; what it allocated on the way is lost
     * to this worker, within the server's --max-worker-memory. */
    char detail[128];
    snprintf(detail, sizeof detail, "%s: SuperLU ran out of memory for the factors of n = %d, nnz = %d",
             routine, n, nnz);
    fail(NUMRPC_ENOMEM, detail);
}

void numrpc_sparse_dgssv(int n, int nnz, double *values, int *rowind, int *colptr, int nrhs,
                         double *b, int *info)
{
    solve_csc("dgssv", dgssv, SLU_D, n, nnz, values, rowind, colptr, nrhs, b, info);
}

void numrpc_sparse_zgssv(int n, int nnz, doublecomplex *values, int *rowind, int *colptr,
                         int nrhs, doublecomplex *b, int *info)
{
    solve_csc("zgssv", zgssv, SLU_Z, n, nnz, values, rowind, colptr, nrhs, b, info);
}
