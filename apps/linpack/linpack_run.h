/* linpack_run.h -- numrpc-linpack's runners: the best of R solves of one problem
 * locally (LAPACK), on a numrpc server, or through the omniORB baseline. */
#ifndef NUMRPC_LINPACK_RUN_H
#define NUMRPC_LINPACK_RUN_H

#include <stdint.h>

#include <numrpc.h>

#include "linpack_problem.h"

/* The remote solves (a mask): one "linpack" call; "dgefa" then "dgesl"
 * shipping the matrix each time; the matrix put in a handle once, dgefa and
 * dgesl on the handle; and the multi-solve (one put and dgefa, K dgesl). */
enum mode {
    MODE_LINPACK = 1,
    MODE_DGEFA_DGESL = 2,
    MODE_BOTH = 3,
    MODE_HANDLES = 4,
    MODE_MULTISOLVE = 8,
    MODE_ALL = 15
};

/* LAPACK from OpenBLAS: the same work the server does. */
extern void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
extern void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda,
                    const int *ipiv, double *b, const int *ldb, int *info, size_t trans_len);

/* One result line of the table / CSV. */
struct row {
    int n;
    const char *mode;
    double local_s, remote_s;
    double send_s, compute_s, receive_s;
    uint64_t bytes;
    double resid_local, resid_remote;
    int remote_ok;
    double corba_s, resid_corba; /* the omniORB baseline, if run */
    int corba_ok;
    /* A multi-solve row (mode "multisolve"; rhs 0 elsewhere): local_s is
     * dgetrf + rhs dgetrs, remote_s put + dgefa + rhs dgesl + free, and
     * the residuals the worst of the rhs solutions. */
    int rhs;
    double solve_s;    /* one remote dgesl on the handle (mean)           */
    double linpacks_s; /* rhs one-call linpacks, one after the other      */
    double transfer_s; /* one numrpc_data_put of the matrix, timed alone  */
};

/* Best time of R local solves (dgetrf + dgetrs) after W untimed warm-ups
 * (BLAS threads start, pages fault in); residual of the last.  0 or -1. */
int run_local(struct problem *p, int warmup, int repeat, double *best_s, double *resid);
/* Best of R remote solves in mode after W untimed warm-ups (connection,
 * interface fetch): fills row's remote figures and sets remote_ok.  0 or -1. */
int run_remote(struct problem *p, int mode, int warmup, int repeat, struct row *row);

/* ---- shared with the multi-solve (linpack_multisolve.c) ---- */
/* The end of one remote call of routine: a failure (rc) or a LAPACK error
 * (info) is reported on stderr and gives -1; the call's figures add to out. */
int remote_call_done(const char *routine, int n, int rc, int info, struct row *out);
/* Puts p's original matrix in a new handle *h (the caller frees it) and
 * factors it there with dgefa (pivots in p->ipvt); the put's time counts as
 * sending.  0, or -1 with *h freed and NULL. */
int remote_put_and_factor(struct problem *p, numrpc_data **h, struct row *out);
#ifdef HAVE_CORBA
/* Best of R CORBA solves after W untimed warm-ups: fills row's corba
 * figures and sets corba_ok.  0 or -1. */
int run_corba(struct problem *p, int mode, int warmup, int repeat, struct row *row);
#endif

#endif
