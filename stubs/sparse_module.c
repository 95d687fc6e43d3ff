/* sparse_module.c -- the routines of the sparse stub module (stubs/sparse.idl):
 * SuperLU's dgssv and zgssv on CSC arrays checked here before SuperLU reads them. */
#include <stdio.h>
#include <stdlib.h>

#include <slu_ddefs.h>
#include <slu_zdefs.h>

#include "numrpc.h"
#include "stubmod.h"

/* Set by the server when it loads the module (stubmod.h). */
__attribute__((visibility("default"))) const stub_services *numrpc_stub_services;

void numrpc_sparse_dgssv(int n, int nnz, double *values, int *rowind, int *colptr, int nrhs,
                         double *b, int *info);
void numrpc_sparse_zgssv(int n, int nnz, doublecomplex *values, int *rowind, int *colptr,
                         int nrhs, doublecomplex *b, int *info);

/* info for arguments that describe no matrix: LAPACK's -i for argument i. */
enum {
    INFO_BAD_N = -1,
    INFO_BAD_NNZ = -2,
    INFO_BAD_ROWIND = -4,
    INFO_BAD_COLPTR = -5,
    INFO_BAD_NRHS = -6,
};

/* SuperLU's simple drivers, dgssv and zgssv, share this signature. */
typedef void gssv_driver(superlu_options_t *options, SuperMatrix *a, int *perm_c, int *perm_r,
                         SuperMatrix *l, SuperMatrix *u, SuperMatrix *b, SuperLUStat_t *stat,
                         int *info);

static void fail(int code, const char *detail)
{
    if (numrpc_stub_services) numrpc_stub_services->fail(code, detail);
}

/* 0 when the scalars and arrays are a valid CSC matrix, else the negative
 * info of the first fault in the order n, nnz, nrhs, colptr, rowind.  The
 * arrays hold nnz and n+1 elements (the IDL's shapes); last_column is
 * scratch of n ints, where a row records the last column it appeared in. */
static int csc_check(int n, int nnz, const int *rowind, const int *colptr, int nrhs,
                     int *last_column)
{
    if (n < 0) return INFO_BAD_N;
    if (nnz < 0) return INFO_BAD_NNZ;
    if (nrhs < 0) return INFO_BAD_NRHS;
    if (colptr[0] != 0 || colptr[n] != nnz) return INFO_BAD_COLPTR;
    for (int j = 0; j < n; j++)
        if (colptr[j + 1] < colptr[j]) return INFO_BAD_COLPTR;
    for (int i = 0; i < n; i++) last_column[i] = -1;
    for (int j = 0; j < n; j++)
        for (int k = colptr[j]; k < colptr[j + 1]; k++) {
            int row = rowind[k];
            /* SuperLU would write outside its arrays, or keep only one of two
             * entries of the same place. */
            if (row < 0 || row >= n || last_column[row] == j) return INFO_BAD_ROWIND;
            last_column[row] = j;
        }
    return 0;
}

/* Checks the arrays, then solves with driver on matrices of element type
 * dtype that borrow the caller's arrays (no copy); B becomes X. */
static void solve_csc(const char *routine, gssv_driver *driver, Dtype_t dtype, int n, int nnz,
                      void *values, int *rowind, int *colptr, int nrhs, void *b, int *info)
{
    /* perm_c, perm_r and the check's scratch, n ints each. */
    size_t count = n > 0 ? (size_t)n : 1;
    int *ints = malloc(3 * count * sizeof *ints);
    if (ints == NULL) {
        char detail[96];
        snprintf(detail, sizeof detail, "%s: no memory for %d permutation entries", routine, n);
        fail(NUMRPC_ENOMEM, detail);
        return;
    }
    int *perm_c = ints, *perm_r = ints + count, *last_column = ints + 2 * count;
    *info = csc_check(n, nnz, rowind, colptr, nrhs, last_column);
    if (*info != 0 || n == 0) {
        free(ints);
        return;
    }
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
