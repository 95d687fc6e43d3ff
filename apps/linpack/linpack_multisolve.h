/* linpack_multisolve.h -- numrpc-linpack --mode multisolve: one factorization
 * kept on the server and K solves, against K one-call linpacks and local LAPACK. */
#ifndef NUMRPC_LINPACK_MULTISOLVE_H
#define NUMRPC_LINPACK_MULTISOLVE_H

#include "linpack_problem.h"
#include "linpack_run.h"

/* After W untimed warm-ups of each (one right-hand side), R rounds of:
 * put + dgefa + rhs dgesl on the handle + free; rhs one-call linpacks (the
 * calls' time only, A's copies between them not counted); local dgetrf + rhs
 * dgetrs; and one numrpc_data_put of A alone (the transfer).  Fills row
 * (mode "multisolve") with the best of each; the residuals are the worst of
 * every solution computed.  0, or -1 after a failure reported on stderr. */
int run_multisolve(struct problem *p, int rhs, int warmup, int repeat, struct row *row);

/* The multi-solve table on stdout. */
void report_multisolve_header(void);
void report_multisolve_row(const struct row *r);

#endif
