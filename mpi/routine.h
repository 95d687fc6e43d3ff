/* routine.h -- the engine's ScaLAPACK routines (mpi/routine_*.c), each with
 * its LAPACK counterpart's arguments; the table in routines.c lists them. */
#ifndef NUMRPC_MPI_ROUTINE_H
#define NUMRPC_MPI_ROUTINE_H

#include "engine.h"

/* Each is an engine_routine_fn (engine.h): collective, returns 0 or -1. */
int routine_pdgesv(const engine_grid *g, engine_call *c);
int routine_pdposv(const engine_grid *g, engine_call *c);
int routine_pdgemm(const engine_grid *g, engine_call *c);
int routine_pdsyev(const engine_grid *g, engine_call *c);
int routine_pdgetrf(const engine_grid *g, engine_call *c);
int routine_pdgetrs(const engine_grid *g, engine_call *c);

/* engine_layout_fn's (engine.h): the routines that keep arrays between
 * calls.  Also 1 when the call has nothing to compute. */
int layout_pdgetrf(engine_call *c, struct plan *p);
int layout_pdgetrs(engine_call *c, struct plan *p);
/* Collective: pdgetrf's info for the m-row matrix whose global copy is
 * argv[a_arg] on rank 0, made dgetrf's where ScaLAPACK's differs. */
int routine_getrf_info(const engine_grid *g, const engine_call *c, int m, int a_arg, int info);

#endif
