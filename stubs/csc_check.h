/* csc_check.h -- checks of a sparse matrix's compressed-sparse-column arrays
 * that came from the network, made before SuperLU reads them. */
#ifndef NUMRPC_STUBS_CSC_CHECK_H
#define NUMRPC_STUBS_CSC_CHECK_H

/* The info values of a refusal: LAPACK's -i for argument i of dgssv/zgssv
 * (stubs/sparse.idl: n, nnz, values, rowind, colptr, nrhs, b, info). */
enum {
    CSC_BAD_N = -1,
    CSC_BAD_NNZ = -2,
    CSC_BAD_ROWIND = -4,
    CSC_BAD_COLPTR = -5,
    CSC_BAD_NRHS = -6,
};

/* 0 when n, nnz and nrhs are >= 0 and the arrays describe an n x n matrix
 * (colptr rising from 0 to nnz, each row index in 0..n-1 and at most once
 * per column), else the CSC_BAD_* of the first fault in the order n, nnz,
 * nrhs, colptr, rowind.  rowind holds nnz ints, colptr n+1; scratch holds
 * n ints (the caller's, clobbered). */
int csc_check_arrays(int n, int nnz, int nrhs, const int *rowind, const int *colptr, int *scratch);

/* For arrays csc_check_arrays accepted: -1 when every column can be given
 * a row of its own among its entries (a perfect matching: A is
 * structurally nonsingular), else the first column left without one (A is
 * singular whatever its values).  Hopcroft-Karp, O(nnz sqrt(n)) time;
 * scratch holds 5n ints (the caller's, clobbered). */
int csc_unmatched_column(int n, const int *rowind, const int *colptr, int *scratch);

#endif
