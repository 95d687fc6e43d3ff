/* engine.h -- inside numrpc-mpi-engine, the resident MPI job: what one of
 * its ScaLAPACK routines receives and the grid it runs on (docs/mpi.md). */
#ifndef NUMRPC_MPI_ENGINE_H
#define NUMRPC_MPI_ENGINE_H

#include <mpi.h>
#include <stdint.h>

/* ---- The grid (set up once when the job starts; read-only afterwards) ---- */
typedef struct engine_grid {
    MPI_Comm comm;        /* every rank of the job                              */
    int rank, size;       /* this rank in comm, and how many                    */
    int ctxt;             /* BLACS context: nprow x npcol grid of all ranks      */
    int nprow, npcol;     /* the process grid (nprow * npcol == size)           */
    int myrow, mycol;     /* this rank's place in it                             */
    int ctxt_root;        /* BLACS context of a 1 x 1 grid of rank 0 alone: the
                             global arrays live there (-1 on other ranks)        */
    int nb;               /* block size of the 2-D block-cyclic layout          */
} engine_grid;

/* ---- Data handles (docs/mpi.md "Handles: factors kept on the grid") ----
 * A handle's bytes are named by its id (16 random bytes) and a version the
 * server gives each of its contents once: equal keys, equal bytes. */
typedef struct engine_key {
    uint8_t id[16];
    uint64_t version;
} engine_key;
enum {
    ENGINE_KEY_NOW = 0x1,  /* the argument's bytes are key's                       */
    ENGINE_KEY_NEXT = 0x2, /* its result becomes the handle at next_version       */
    ENGINE_KEY_HELD = 0x4, /* the job keeps key's bytes on the grid: rank 0's block
                              did not come (zeros); the routine must not read it */
};
typedef struct engine_arg_key {
    int flags; /* ENGINE_KEY_*, 0: not a handle */
    engine_key key;
    uint64_t next_version;
} engine_arg_key;
/* The arrays kept between calls (mpi/keep.h). */
typedef struct keep_store keep_store;

/* ---- One call ----
 * argv has one entry per parameter of the routine's interface, in IDL order.
 * Scalars: on every rank argv[i] points to the value in its C type (int32_t
 * for int, double, ...): the engine has broadcast it before the routine runs.
 * Arrays: on rank 0, argv[i] points to the whole block as a stub thunk would
 * get it (column-major, the interface's leading dimension; OUT arrays zeroed;
 * owned by the engine, valid during the call); on other ranks argv[i] is NULL.
 * The routine distributes what it needs, computes, and leaves OUT and INOUT
 * arrays and scalars filled on rank 0. */
typedef struct engine_call {
    void **argv;
    int nargs;
    /* Seconds of each phase, filled by the routine (rank 0's clock). */
    double scatter_s, compute_s, gather_s;
    /* A failure: code is a NUMRPC_E* (0 = none) with a sentence for the
     * caller; set on rank 0 (other ranks may leave it alone). */
    int code;
    char detail[256];
    /* The handles among the arguments (NULL: none), as rank 0 broadcast
     * them, and the arrays the job keeps (NULL: none kept). */
    const engine_arg_key *keys;
    keep_store *keep;
} engine_call;

/* Runs a routine collectively: every rank calls it with the same scalars.
 * Returns 0, or -1 with c->code and c->detail set.  Must not call
 * MPI_Abort or exit: a failing input is an error for this call only. */
typedef int (*engine_routine_fn)(const engine_grid *g, engine_call *c);

/* The routine's plan (mpi/plan.h) from the scalars alone, with no array
 * read: rank 0 learns from it, before the arrays travel, which of the
 * call's handles it keeps in the layout the routine wants.  Returns 0, or
 * -1 for a call the routine refuses (then nothing is held). */
struct plan;
typedef int (*engine_layout_fn)(engine_call *c, struct plan *p);

typedef struct engine_routine {
    const char *name;  /* the routine's name in the IDL ("pdgesv")       */
    int nargs;         /* its parameters in the interface                */
    engine_routine_fn run;
    engine_layout_fn layout; /* NULL: the routine keeps nothing between calls */
} engine_routine;

/* The table of routines (mpi/routines.c), ended by a { NULL } entry. */
extern const engine_routine engine_routines[];

/* The routine called name, or NULL. */
const engine_routine *engine_routine_find(const char *name);

#endif
