/* mpi_job.h -- the server's resident MPI job (docs/mpi.md): its options,
 * the state every process reads, the dispatcher's hooks (mpi_job.c). */
#ifndef NUMRPC_SERVER_MPI_JOB_H
#define NUMRPC_SERVER_MPI_JOB_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"

#define MPI_JOB_TEXT 1024

/* The options (--mpi-*), taken out of argv by mpi_job_take_options. */
typedef struct mpi_job_options {
    int ranks;                         /* --mpi-ranks N (0: no job)            */
    char hostfile[CONFIG_PATH_MAX];    /* --mpi-hostfile F                     */
    int nprow, npcol;                  /* --mpi-grid PxQ (0: the squarest)     */
    int block;                         /* --mpi-block NB (default 64)          */
    char mpirun[CONFIG_PATH_MAX];      /* --mpirun PATH                        */
    char agent[CONFIG_PATH_MAX];       /* --mpi-agent PATH (plm_rsh_agent)     */
    char args[MPI_JOB_TEXT];           /* --mpi-args "..." (split on blanks)   */
    char engine[CONFIG_PATH_MAX];      /* --mpi-engine PATH                    */
    int start_seconds;                 /* --mpi-start-timeout S (default 60)   */
    uint64_t keep_bytes;               /* --mpi-keep-bytes B: arrays of handles
                                          the job keeps between calls, over all
                                          its ranks (0: none)                   */
} mpi_job_options;

/* --mpi-keep-bytes's default: 1 GiB. */
#define MPI_JOB_KEEP_BYTES ((uint64_t)1 << 30)

enum mpi_job_phase { MPI_JOB_DOWN = 0, MPI_JOB_STARTING = 1, MPI_JOB_READY = 2 };

/* Written by the supervisor only, read by workers and the dispatcher
 * (shared memory, mapped before any fork).  text is guarded by seq: odd
 * while it is being written. */
typedef struct mpi_job_state {
    _Atomic int phase;          /* enum mpi_job_phase                        */
    _Atomic unsigned starts;    /* jobs started                              */
    _Atomic unsigned ends;      /* jobs that ended (died, stopped, failed)   */
    _Atomic unsigned failures;  /* starts in a row that never became ready   */
    _Atomic unsigned seq;
    _Atomic int ended_for_abandoned; /* the last job was stopped because a worker
                                        abandoned the call it computed: the calls
                                        of other workers it held may run again  */
    char text[MPI_JOB_TEXT];    /* why the last job ended, or failed to start */
} mpi_job_state;

/* Takes the --mpi-* options out of argv (the rest goes to config_build).
 * 0, or NUMRPC_EINVAL for a malformed value. */
int mpi_job_take_options(int *argc, char **argv, err_t *err);
/* The options taken (defaults when none were given). */
const mpi_job_options *mpi_job_get_options(void);
/* True when --mpi-ranks was given. */
int mpi_job_configured(void);
/* With --mpi-ranks: makes the private directory (0700) and the shared
 * state, and forks the supervisor, which starts the job at once and again
 * whenever it ends.  Call after the socket listens (the supervisor closes
 * listen_fd), before the dispatcher runs. */
int mpi_job_start(const server_config *cfg, int listen_fd, err_t *err);
/* True when pid is the supervisor (the dispatcher reaps it like a worker). */
int mpi_job_is_supervisor(pid_t pid);
/* The dispatcher: worker pid died while its call was on the job.  If rank 0
 * is still computing for it, the supervisor restarts the job, so the next
 * call does not wait for an answer nobody reads. */
void mpi_job_call_abandoned(pid_t worker);
/* The shared state (NULL without a job). */
const mpi_job_state *mpi_job_state_get(void);
/* A consistent copy of the state's text into buf. */
void mpi_job_text(char *buf, size_t len);
/* Where rank 0 listens (valid once started). */
const char *mpi_job_socket_path(void);

/* ---- Between mpi_job.c and the supervisor (mpi_supervisor.c) ---- */
/* The supervisor's loop: never returns.  dir: the private directory;
 * cmd_fd: the pipe the dispatcher names abandoned workers' pids on. */
void mpi_supervisor_main(const server_config *cfg, const mpi_job_options *o, const char *dir, mpi_job_state *st,
                         int cmd_fd) __attribute__((noreturn));

#endif
