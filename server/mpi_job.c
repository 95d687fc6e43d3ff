/* mpi_job.c -- the server's MPI job as the dispatcher and workers see it:
 * the --mpi-* options, the shared state, the supervisor's start and hooks. */
#define _GNU_SOURCE
#include "mpi_job.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "worker.h"

#ifndef NUMRPC_MPIRUN
#define NUMRPC_MPIRUN "mpirun"
#endif
#ifndef NUMRPC_MPI_ENGINE
#define NUMRPC_MPI_ENGINE "numrpc-mpi-engine"
#endif

static struct {
    mpi_job_options o;
    mpi_job_state *st;          /* MAP_SHARED, made before any fork          */
    char dir[CONFIG_PATH_MAX];  /* the private directory                     */
    char socket_path[CONFIG_PATH_MAX + 16];
    pid_t supervisor;
    int cmd_fd;                 /* the dispatcher's end of the pipe          */
} job = {.o = {.block = 64, .mpirun = NUMRPC_MPIRUN, .engine = NUMRPC_MPI_ENGINE, .start_seconds = 60,
               .keep_bytes = MPI_JOB_KEEP_BYTES},
         .cmd_fd = -1};

enum { OPT_RANKS, OPT_HOSTFILE, OPT_GRID, OPT_BLOCK, OPT_MPIRUN, OPT_AGENT, OPT_ARGS, OPT_ENGINE, OPT_START,
       OPT_KEEP };
static const char *const option_names[] = {"--mpi-ranks", "--mpi-hostfile", "--mpi-grid",  "--mpi-block",
                                           "--mpirun",    "--mpi-agent",    "--mpi-args",  "--mpi-engine",
                                           "--mpi-start-timeout", "--mpi-keep-bytes"};

static int option_of(const char *a)
{
    for (int k = 0; k < (int)(sizeof option_names / sizeof option_names[0]); k++) {
        size_t n = strlen(option_names[k]);
        if (strncmp(a, option_names[k], n) == 0 && (a[n] == '\0' || a[n] == '=')) return k;
    }
    return -1;
}

/* A whole number in lo..hi. */
static int number(const char *name, const char *v, int lo, int hi, int *out, err_t *err)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < lo || n > hi)
        return err_set(err, NUMRPC_EINVAL, "%s %s: want a whole number from %d to %d", name, v, lo, hi);
    *out = (int)n;
    return 0;
}

static int text(const char *name, const char *v, char *out, size_t size, err_t *err)
{
    if (strlen(v) >= size) return err_set(err, NUMRPC_EINVAL, "%s: longer than %zu characters", name, size - 1);
    memcpy(out, v, strlen(v) + 1);
    return 0;
}

static int set_option(int which, const char *name, const char *v, err_t *err)
{
    mpi_job_options *o = &job.o;
    switch (which) {
    case OPT_RANKS: return number(name, v, 1, 4096, &o->ranks, err);
    case OPT_BLOCK: return number(name, v, 1, 4096, &o->block, err);
    case OPT_START: return number(name, v, 1, 3600, &o->start_seconds, err);
    case OPT_KEEP: return config_parse_size(name, v, &o->keep_bytes, err);
    case OPT_GRID: {
        int p = 0, q = 0, used = 0;
        if (sscanf(v, "%dx%d%n", &p, &q, &used) != 2 || v[used] || p < 1 || q < 1 || p > 4096 || q > 4096)
            return err_set(err, NUMRPC_EINVAL, "%s %s: want PxQ, e.g. 2x2", name, v);
        o->nprow = p;
        o->npcol = q;
        return 0;
    }
    case OPT_HOSTFILE: return text(name, v, o->hostfile, sizeof o->hostfile, err);
    case OPT_MPIRUN: return text(name, v, o->mpirun, sizeof o->mpirun, err);
    case OPT_AGENT: return text(name, v, o->agent, sizeof o->agent, err);
    case OPT_ARGS: return text(name, v, o->args, sizeof o->args, err);
    default: return text(name, v, o->engine, sizeof o->engine, err);
    }
}

int mpi_job_take_options(int *argc, char **argv, err_t *err)
{
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i], *eq = strchr(a, '='), *v = NULL;
        int which = option_of(a);
        if (which < 0) {
            argv[out++] = argv[i];
            continue;
        }
        if (eq) v = eq + 1;
        else if (i + 1 < *argc) v = argv[++i];
        if (v == NULL || (*v == '\0' && which != OPT_ARGS))
            return err_set(err, NUMRPC_EINVAL, "%s needs a value", option_names[which]);
        int rc = set_option(which, option_names[which], v, err);
        if (rc != 0) return rc;
    }
    argv[out] = NULL;
    *argc = out;
    if (job.o.nprow && job.o.ranks && job.o.nprow * job.o.npcol != job.o.ranks)
        return err_set(err, NUMRPC_EINVAL, "--mpi-grid %dx%d has %d places for --mpi-ranks %d", job.o.nprow,
                       job.o.npcol, job.o.nprow * job.o.npcol, job.o.ranks);
    if (job.o.ranks == 0 && (job.o.hostfile[0] || job.o.nprow || job.o.agent[0] || job.o.args[0]))
        return err_set(err, NUMRPC_EINVAL, "the --mpi-* options need --mpi-ranks N");
    return 0;
}

const mpi_job_options *mpi_job_get_options(void)
{
    return &job.o;
}

int mpi_job_configured(void)
{
    return job.o.ranks > 0;
}

const mpi_job_state *mpi_job_state_get(void)
{
    return job.st;
}

const char *mpi_job_socket_path(void)
{
    return job.socket_path;
}

void mpi_job_text(char *buf, size_t len)
{
    buf[0] = '\0';
    if (job.st == NULL || len == 0) return;
    for (int tries = 0; tries < 1000; tries++) {
        unsigned before = atomic_load(&job.st->seq);
        if (before & 1) continue;
        snprintf(buf, len, "%.*s", (int)sizeof job.st->text - 1, job.st->text);
        if (atomic_load(&job.st->seq) == before) return;
    }
}

int mpi_job_start(const server_config *cfg, int listen_fd, err_t *err)
{
    if (!mpi_job_configured()) return 0;
    const char *tmp = getenv("TMPDIR");
    snprintf(job.dir, sizeof job.dir, "%s/numrpc-mpi-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(job.dir) == NULL)
        return err_set(err, NUMRPC_ESERVER, "cannot make the MPI job's directory %s: %s", job.dir, strerror(errno));
    snprintf(job.socket_path, sizeof job.socket_path, "%s/engine.sock", job.dir);
    job.st = mmap(NULL, sizeof *job.st, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int p[2];
    if (job.st == MAP_FAILED || pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        err_set(err, NUMRPC_ESERVER, "the MPI job's shared state: %s", strerror(errno));
        if (job.st != MAP_FAILED) munmap(job.st, sizeof *job.st);
        job.st = NULL;
        rmdir(job.dir);
        return err->code;
    }
    memset(job.st, 0, sizeof *job.st);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        err_set(err, NUMRPC_ESERVER, "fork: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        rmdir(job.dir);
        return err->code;
    }
    if (pid == 0) {
        close(listen_fd);
        close(p[1]);
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* it stops the job, then leaves */
        if (getppid() != parent) _exit(1);
        mpi_supervisor_main(cfg, &job.o, job.dir, job.st, p[0]);
    }
    close(p[0]);
    job.supervisor = pid;
    job.cmd_fd = p[1];
    server_log(cfg, LOG_LEVEL_NOTICE, "MPI job: %d ranks through %s, engine %s, in %s", job.o.ranks, job.o.mpirun,
               job.o.engine, job.dir);
    return 0;
}

int mpi_job_is_supervisor(pid_t pid)
{
    return job.supervisor > 0 && pid == job.supervisor;
}

void mpi_job_call_abandoned(pid_t worker)
{
    int32_t v = (int32_t)worker;
    if (job.cmd_fd >= 0 && write(job.cmd_fd, &v, sizeof v) != (ssize_t)sizeof v) {
        /* a full pipe: the supervisor has restarts to do already */
    }
}
