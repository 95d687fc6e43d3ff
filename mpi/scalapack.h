/* scalapack.h -- the BLACS, ScaLAPACK and LAPACK entry points the engine calls
 * (Debian's libscalapack-openmpi ships no header); Fortran char lengths last. */
#ifndef NUMRPC_MPI_SCALAPACK_H
#define NUMRPC_MPI_SCALAPACK_H

#include <stddef.h>

#include <mpi.h>

/* ---- Array descriptors: the nine fields of a dense matrix's DESC ---- */
enum { DESC_DTYPE, DESC_CTXT, DESC_M, DESC_N, DESC_MB, DESC_NB, DESC_RSRC, DESC_CSRC, DESC_LLD,
       DESC_LEN };

/* ---- BLACS (C interface) ---- */
void Cblacs_pinfo(int *mypnum, int *nprocs);
int Csys2blacs_handle(MPI_Comm comm);
void Cfree_blacs_system_handle(int handle);
void Cblacs_gridinit(int *context, const char *order, int nprow, int npcol);
void Cblacs_gridmap(int *context, int *usermap, int ldumap, int nprow, int npcol);
void Cblacs_gridinfo(int context, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_pcoord(int context, int pnum, int *prow, int *pcol);
void Cblacs_gridexit(int context);

/* ---- Redistribution between two layouts (context gctxt holds both) ---- */
void Cpdgemr2d(int m, int n, double *a, int ia, int ja, int *desca, double *b, int ib, int jb,
               int *descb, int gctxt);
void Cpigemr2d(int m, int n, int *a, int ia, int ja, int *desca, int *b, int ib, int jb,
               int *descb, int gctxt);

/* ---- Tools ---- */
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc,
            const int *nprocs);

/* ---- The routines (global indices ia, ja, ... are 1-based) ---- */
void pdgesv_(const int *n, const int *nrhs, double *a, const int *ia, const int *ja,
             const int *desca, int *ipiv, double *b, const int *ib, const int *jb,
             const int *descb, int *info);
void pdposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *ia,
             const int *ja, const int *desca, double *b, const int *ib, const int *jb,
             const int *descb, int *info, size_t uplo_len);
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja,
             const int *desca, const double *b, const int *ib, const int *jb, const int *descb,
             const double *beta, double *c, const int *ic, const int *jc, const int *descc,
             size_t transa_len, size_t transb_len);
void pdsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *ia,
             const int *ja, const int *desca, double *w, double *z, const int *iz,
             const int *jz, const int *descz, double *work, const int *lwork, int *info,
             size_t jobz_len, size_t uplo_len);
void pdgetrf_(const int *m, const int *n, double *a, const int *ia, const int *ja,
              const int *desca, int *ipiv, int *info);
void pdgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *ia,
              const int *ja, const int *desca, const int *ipiv, double *b, const int *ib,
              const int *jb, const int *descb, int *info, size_t trans_len);

/* ---- LAPACK on rank 0 alone: dsyev's workspace query ---- */
void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
            double *w, double *work, const int *lwork, int *info, size_t jobz_len,
            size_t uplo_len);

#endif
