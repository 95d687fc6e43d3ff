/* linpack_run.h -- numrpc-linpack's runners: the best of R solves of one problem
 * locally (LAPACK), on a numrpc server, or through the omniORB baseline. */
#ifndef NUMRPC_LINPACK_RUN_H
#define NUMRPC_LINPACK_RUN_H

#include <stdint.h>

#include "linpack_problem.h"

/* The remote solve: one "linpack" call, or "dgefa" then "dgesl" (a mask). */
enum mode { MODE_LINPACK = 1, MODE_DGEFA_DGESL = 2, MODE_BOTH = 3 };

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
};

/* Best time of R local solves (dgetrf + dgetrs) after one untimed warm-up
 * (BLAS threads start, pages fault in); residual of the last.  0 or -1. */
int run_local(struct problem *p, int repeat, double *best_s, double *resid);
/* Best of R remote solves in mode after one untimed warm-up (connection,
 * interface fetch): fills row's remote figures and sets remote_ok.  0 or -1. */
int run_remote(struct problem *p, int mode, int repeat, struct row *row);
#ifdef HAVE_CORBA
/* Best of R CORBA solves after one untimed warm-up: fills row's corba
 * figures and sets corba_ok.  0 or -1. */
int run_corba(struct problem *p, int mode, int repeat, struct row *row);
#endif

#endif
