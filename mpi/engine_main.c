/* engine_main.c -- numrpc-mpi-engine, the resident MPI job a server starts
 * with mpirun: the grid once, then rank 0 takes calls and every rank runs them. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "engine.h"
#include "engine_grid.h"
#include "engine_serve.h"
#include "keep.h"
#include "plan.h"
#include "sandbox.h"

typedef struct engine_options {
    const char *socket_path;  /* --socket: where workers connect (rank 0) */
    const char *serving_path; /* --serving: the pid of the worker served  */
    int nprow, npcol;         /* --grid PxQ (0x0: the squarest)           */
    int nb;                   /* --block                                   */
    uint64_t max_bytes;       /* --max-bytes: arrays of one call at most   */
    uint64_t keep_bytes;      /* --keep-bytes: kept between calls at most  */
} engine_options;

static int parse_options(int argc, char **argv, engine_options *o, char *why, size_t len)
{
    *o = (engine_options){NULL, "", 0, 0, 64, (uint64_t)1 << 30, (uint64_t)1 << 30};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (v == NULL) {
            snprintf(why, len, "%s needs a value", a);
            return -1;
        }
        i++;
        if (strcmp(a, "--socket") == 0) o->socket_path = v;
        else if (strcmp(a, "--serving") == 0) o->serving_path = v;
        else if (strcmp(a, "--grid") == 0) {
            if (sscanf(v, "%dx%d", &o->nprow, &o->npcol) != 2 || o->nprow < 0 || o->npcol < 0) {
                snprintf(why, len, "--grid %s: want PxQ", v);
                return -1;
            }
        } else if (strcmp(a, "--block") == 0) o->nb = (int)strtol(v, &end, 10);
        else if (strcmp(a, "--max-bytes") == 0) o->max_bytes = strtoull(v, &end, 10);
        else if (strcmp(a, "--keep-bytes") == 0) o->keep_bytes = strtoull(v, &end, 10);
        else {
            snprintf(why, len, "unknown option %s", a);
            return -1;
        }
        if (end != NULL && (*end != '\0' || end == v)) {
            snprintf(why, len, "%s %s: want a number", a, v);
            return -1;
        }
    }
    if (o->socket_path == NULL) {
        snprintf(why, len, "--socket PATH is required");
        return -1;
    }
    return 0;
}

/* What rank 0 broadcasts for each call: the routine, the scalars, and the
 * handles' keys with what it holds of them (every rank's keep store then
 * does the same). */
typedef struct call_header {
    int32_t routine; /* index in engine_routines */
    int32_t nargs;
    int32_t is_array[IFACE_MAX_PARAMS];
    stub_scalar scalars[IFACE_MAX_PARAMS];
    engine_arg_key keys[IFACE_MAX_PARAMS];
} call_header;

/* The arrays kept between calls: each rank's part (keep.h). */
static keep_store kept;

/* A broadcast from rank 0 that waits without spinning: idle ranks sleep
 * (20 us growing to 2 ms) between tests, so a resident job costs no CPU. */
static void bcast_politely(void *buf, int bytes, MPI_Comm comm)
{
    MPI_Request req;
    MPI_Ibcast(buf, bytes, MPI_BYTE, 0, comm, &req);
    long ns = 20000;
    for (;;) {
        int done = 0;
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done) return;
        struct timespec t = {0, ns};
        nanosleep(&t, NULL);
        if (ns < 2000000) ns *= 2;
    }
}

/* Rank 0: the routine of call c, or a reason it cannot run on this job. */
static int find_routine(const engine_grid *g, const msg_mpi_call *c, err_t *why)
{
    const engine_routine *r = engine_routine_find(c->f.symbol);
    if (r == NULL)
        return err_set(why, NUMRPC_ENOENT, "%s: the MPI job has no routine %s", c->f.name, c->f.symbol);
    if ((uint32_t)r->nargs != c->f.nparams)
        return err_set(why, NUMRPC_EINVAL, "%s: the MPI job's %s takes %d arguments, the interface has %u",
                       c->f.name, r->name, r->nargs, c->f.nparams);
    if (c->f.ranks != 0 && (int)c->f.ranks != g->size)
        return err_set(why, NUMRPC_EINVAL, "%s runs on %u ranks; this server's MPI job has %d", c->f.name,
                       c->f.ranks, g->size);
    return (int)(r - engine_routines);
}

/* The call's handle keys as the job takes them. */
static void take_keys(const msg_mpi_call *c, engine_arg_key *keys)
{
    for (uint32_t k = 0; k < c->handles.n; k++) {
        const msg_mpi_handle *h = &c->handles.h[k];
        engine_arg_key *e = &keys[h->param];
        e->flags = (h->flags & MSG_MPI_KEY_NOW ? ENGINE_KEY_NOW : 0) | (h->flags & MSG_MPI_KEY_NEXT ? ENGINE_KEY_NEXT : 0);
        memcpy(e->key.id, h->key.id, sizeof e->key.id);
        e->key.version = h->key.version;
        e->next_version = h->next_version;
    }
}

/* Rank 0: the store of a routine that keeps arrays (NULL: none). */
static keep_store *store_for(const engine_routine *r)
{
    return r->layout != NULL && kept.budget > 0 ? &kept : NULL;
}

/* Rank 0: marks in h and c the arguments whose bytes the job holds in the
 * layout routine r wants (its plan from the scalars), so they do not travel. */
static void mark_held(const engine_routine *r, msg_mpi_call *c, call_header *h)
{
    engine_call probe = {.argv = c->argv, .nargs = (int)c->f.nparams, .keys = h->keys, .keep = store_for(r)};
    plan p;
    if (probe.keep == NULL || r->layout(&probe, &p) != 0) return;
    plan_mark_held(&p, &probe, h->keys);
    for (uint32_t i = 0; i < c->f.nparams; i++) c->shapes[i].held = (h->keys[i].flags & ENGINE_KEY_HELD) != 0;
}

/* Rank 0's turn: the next call that can run, as a header for every rank. */
static void next_call(const engine_grid *g, engine_server *s, msg_mpi_call *c, call_header *h)
{
    for (;;) {
        if (engine_serve_next(s, c) != 0) {
            fprintf(stderr, "numrpc-mpi-engine: rank 0 can take no more calls\n");
            MPI_Abort(g->comm, 3); /* the server's supervisor restarts the job */
        }
        err_t why;
        int index = find_routine(g, c, &why);
        memset(h, 0, sizeof *h);
        if (index >= 0) {
            h->routine = index;
            h->nargs = (int32_t)c->f.nparams;
            for (uint32_t i = 0; i < c->f.nparams; i++) {
                h->is_array[i] = c->f.params[i].rank > 0;
                if (!h->is_array[i]) h->scalars[i] = c->scalars[i];
            }
            take_keys(c, h->keys);
            mark_held(&engine_routines[index], c, h);
        }
        if (engine_serve_arrays(s, c) != 0) {
            msg_mpi_call_free(c);
            continue;
        }
        if (index >= 0) return;
        msg_mpi_phases none = {0, 0, 0};
        engine_serve_reply(s, c, why.code, why.detail, &none);
        msg_mpi_call_free(c);
    }
}

/* Confinement of a rank (common/sandbox.c; docs/security.md "Worker
 * confinement"): it runs routines on callers' data too.  Before MPI_Init,
 * for every thread MPI starts: no-new-privs, no capabilities, the seccomp
 * filter without the socket rule (MPI itself uses TCP).  OpenMPI's
 * shared-memory transport copies between ranks with process_vm_readv
 * (CMA), which the filter refuses: it is told to copy through the shared
 * segment instead. */
static void confine_early(void)
{
    setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 1);
    sandbox_policy p;
    sandbox_policy_init(&p);
    p.parts = SANDBOX_PART_PRIVS | SANDBOX_PART_SECCOMP;
    sandbox_status st;
    err_t err;
    if (sandbox_apply(&p, &st, &err) != 0) {
        fprintf(stderr, "numrpc-mpi-engine: %s\n", err.detail);
        exit(2);
    }
}

/* Once MPI is up and rank 0 listens, before any call: Landlock (the
 * system's libraries, /proc, /sys, /dev/shm for MPI's segments, the job's
 * directory), so a routine opens none of the host's files, and signals
 * nothing outside the rank.  For the thread that calls it and those it
 * starts: MPI's own threads have the filter and no capabilities. */
static int confine_files(const engine_options *o, int rank, char *why, size_t len)
{
    sandbox_policy p;
    sandbox_policy_init(&p);
    p.parts = SANDBOX_PART_LANDLOCK;
    p.scope_signals = 1;
    err_t err;
    char dir[SANDBOX_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", o->socket_path);
    char *slash = strrchr(dir, '/');
    if (slash != NULL && slash != dir) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
    sandbox_status st;
    if (sandbox_policy_add_system(&p, &err) != 0 || sandbox_policy_add(&p, "/dev/shm", SANDBOX_WRITE, "MPI", &err) != 0 ||
        sandbox_policy_add(&p, dir, SANDBOX_WRITE, "the job's directory", &err) != 0 ||
        sandbox_apply(&p, &st, &err) != 0) {
        snprintf(why, len, "%.200s", err.detail);
        return -1;
    }
    if (st.landlock_abi == 0 && rank == 0)
        fprintf(stderr, "numrpc-mpi-engine: Landlock unavailable: the ranks' file access is not confined\n");
    return 0;
}

/* Every rank, for ever: a call from rank 0, run together. */
static void serve(const engine_grid *g, engine_server *s)
{
    for (;;) {
        call_header h;
        msg_mpi_call c;
        if (g->rank == 0) next_call(g, s, &c, &h);
        bcast_politely(&h, (int)sizeof h, g->comm);
        void *argv[IFACE_MAX_PARAMS];
        for (int i = 0; i < h.nargs; i++)
            argv[i] = g->rank == 0 ? c.argv[i] : h.is_array[i] ? NULL : &h.scalars[i];
        const engine_routine *r = &engine_routines[h.routine];
        engine_call call = {.argv = argv, .nargs = h.nargs, .keys = h.keys, .keep = store_for(r)};
        int rc = r->run(g, &call);
        if (g->rank != 0) continue;
        if (rc != 0 && call.code == 0) call.code = NUMRPC_ESERVER;
        if (rc != 0 && call.detail[0] == '\0') snprintf(call.detail, sizeof call.detail, "%s failed", r->name);
        msg_mpi_phases ph = {call.scatter_s, call.compute_s, call.gather_s};
        engine_serve_reply(s, &c, rc == 0 ? 0 : call.code, call.detail, &ph);
        msg_mpi_call_free(&c);
    }
}

int main(int argc, char **argv)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a rank dies with its mpirun or orted */
    signal(SIGPIPE, SIG_IGN);
    confine_early();
    MPI_Init(&argc, &argv);
    engine_options o;
    engine_grid g = {0};
    engine_server s;
    char why[256] = "";
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int rc = parse_options(argc, argv, &o, why, sizeof why);
    if (rc == 0) rc = engine_grid_setup(&g, o.nprow, o.npcol, o.nb, why, sizeof why);
    keep_init(&kept, o.keep_bytes);
    /* Rank 0 listens last: the socket's appearance tells the server the
     * whole job is up. */
    if (rc == 0 && rank == 0 && engine_serve_open(&s, o.socket_path, o.serving_path, o.max_bytes, why, sizeof why) != 0)
        rc = -1;
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc != 0) {
        if (rank == 0) fprintf(stderr, "numrpc-mpi-engine: %s\n", why);
        MPI_Finalize();
        return 2;
    }
    if (confine_files(&o, rank, why, sizeof why) != 0) {
        fprintf(stderr, "numrpc-mpi-engine: rank %d: %s\n", rank, why);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    serve(&g, &s);
    return 0; /* not reached: mpirun's SIGTERM ends the job */
}
