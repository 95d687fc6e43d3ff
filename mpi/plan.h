/* plan.h -- the course every engine routine takes: its arrays from rank 0 to
 * the grid, ScaLAPACK on them, the results back to rank 0, each phase timed. */
#ifndef NUMRPC_MPI_PLAN_H
#define NUMRPC_MPI_PLAN_H

#include "dist.h"
#include "engine.h"

/* How an array moves: scattered before the computation, gathered after. */
enum { PLAN_IN = 1, PLAN_OUT = 2 };
enum { PLAN_MAX_ARRAYS = 4 };
/* What a computation returns when a rank lacks memory (after dist_agree). */
#define PLAN_NO_MEMORY (-1000000)

/* Where an array's parts come from: allocated and scattered, or kept on
 * the grid from an earlier call (keep.h): lent (an IN array, which the
 * computation must only read) or taken (INOUT: overwritten). */
enum { PLAN_FRESH = 0, PLAN_LENT = 1, PLAN_TAKEN = 2 };

typedef struct plan_array {
    int arg, ld_arg; /* argv positions of rank 0's block and its leading dimension */
    int moves;       /* PLAN_IN | PLAN_OUT, or 0: on the grid only.  An array
                        with PLAN_IN alone is never written by the computation */
    int source;      /* PLAN_FRESH, PLAN_LENT or PLAN_TAKEN */
    dist_matrix d;
} plan_array;

typedef struct plan {
    const char *routine;
    int info_arg; /* argv position of the OUT info, or -1              */
    plan_array arrays[PLAN_MAX_ARRAYS];
    int count;
    /* The pivots, when the routine has some (arg -1: none). */
    int pivots_arg, pivots_m, pivots_count, pivots_moves, pivots_source;
    dist_pivots pivots;
} plan;

/* A plan of no arrays yet for routine, its info at argv[info_arg] (or -1). */
void plan_begin(plan *p, const char *routine, int info_arg);
/* An m x n array, rank 0's block at argv[arg] with its leading dimension at
 * argv[ld_arg]; returns its index in p->arrays (at most PLAN_MAX_ARRAYS). */
int plan_array_add(plan *p, int arg, int ld_arg, int m, int n, int moves);
/* Pivots of an m-row matrix; count of them travel, at argv[arg]. */
void plan_pivots(plan *p, int arg, int m, int count, int moves);

/* The computation on the grid (collective): returns ScaLAPACK's info, or
 * PLAN_NO_MEMORY when dist_agree found a rank short of memory. */
typedef int (*plan_compute_fn)(const engine_grid *g, engine_call *c, plan *p);

/* Rank 0, before the arrays travel: marks ENGINE_KEY_HELD in keys (c's,
 * writable) for each IN array and IN pivots of p whose handle key the
 * store holds in p's layout.  A key two arguments share is never held. */
void plan_mark_held(const plan *p, const engine_call *c, engine_arg_key *keys);

/* Collective: allocates the parts (or finds the held ones in c->keep; a
 * routine with c->keep promises that its PLAN_IN-only arrays stay as
 * scattered: engine_routine's layout),
 * checks IN pivots that came from rank 0, scatters what is not held,
 * computes, gathers, sets info and the phases' seconds; on success keeps
 * what the call's handles now hold (results under their next version,
 * IN arrays scattered under their version), frees the rest.  Returns 0,
 * or -1 with c->code set. */
int plan_run(const engine_grid *g, engine_call *c, plan *p, plan_compute_fn compute);

/* A routine whose plan its layout function makes (engine_layout_fn): -1 on
 * a refused argument; else info zeroed, and plan_run unless the layout said
 * there is nothing to compute. */
int plan_run_layout(const engine_grid *g, engine_call *c, engine_layout_fn layout, plan_compute_fn compute);

#endif
