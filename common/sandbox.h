/* sandbox.h -- kernel confinement of a process that runs routines on hostile
 * input: no-new-privs, no capabilities, a seccomp filter and Landlock (sandbox.c). */
#ifndef NUMRPC_COMMON_SANDBOX_H
#define NUMRPC_COMMON_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

#define SANDBOX_MAX_RULES 64
#define SANDBOX_PATH_MAX 1100

/* What a rule grants beneath its path (a directory: everything under it;
 * a file: that file). */
enum {
    SANDBOX_READ = 1,  /* read files, list directories, execute        */
    SANDBOX_WRITE = 2, /* also write, truncate, make and remove entries */
    SANDBOX_DEV = 4,   /* also ioctl on device files (/dev/null, ...)  */
};

typedef struct sandbox_rule {
    char path[SANDBOX_PATH_MAX];
    int access; /* SANDBOX_* */
    const char *why; /* for messages: "the stubs directory (--stubs)" */
} sandbox_rule;

typedef struct sandbox_policy {
    sandbox_rule rules[SANDBOX_MAX_RULES];
    int nrules;
    /* socket() of every family but AF_UNIX fails with EPERM, and (Landlock
     * ABI 4) TCP bind and connect are refused.  Off for MPI ranks. */
    int deny_inet;
    /* Landlock ABI 6: no signal to a process outside the domain (the
     * dispatcher, other workers); no connect to an abstract unix socket
     * made outside it. */
    int scope_signals;
    int scope_abstract_unix;
    /* connect() of any socket, and sendto() with an address, fail with
     * EPERM: Landlock (up to ABI 7) does not cover a connect to a unix
     * socket by its path, and the owner's 0600 sockets (the admin socket,
     * systemd's, Docker's) take a process of the same uid.  For a worker
     * that connects nowhere: one whose server runs no MPI job. */
    int deny_connect;
    /* Become uid/gid (supplementary groups: gid only) before dropping the
     * capabilities. */
    int set_user;
    uid_t uid;
    gid_t gid;
    /* The parts sandbox_apply does (0: all).  An MPI rank drops its
     * privileges and loads the filter before MPI_Init, so that the threads
     * MPI starts inherit them, and takes Landlock after it, once MPI has
     * made its files. */
    int parts;
} sandbox_policy;

enum {
    SANDBOX_PART_PRIVS = 1,    /* no-new-privs, the user, no capabilities */
    SANDBOX_PART_SECCOMP = 2,  /* the filter                              */
    SANDBOX_PART_LANDLOCK = 4, /* files, TCP, scopes                      */
};

/* What sandbox_apply could do on this kernel. */
typedef struct sandbox_status {
    int landlock_abi;       /* 0: Landlock unavailable, files not confined  */
    int threads_before;     /* threads of the process when it was confined  */
    int blas_threads_ended; /* OpenBLAS's pool was stopped first (it restarts
                             * lazily, from the confined thread)            */
} sandbox_status;

void sandbox_policy_init(sandbox_policy *p);
/* Adds a rule (path made absolute; a path that does not exist is skipped at
 * apply time).  NUMRPC_EINVAL when the table is full or the path too long. */
int sandbox_policy_add(sandbox_policy *p, const char *path, int access, const char *why, err_t *err);
/* The system's libraries and data every routine may need, read-only: /usr,
 * /lib*, /opt, a few files of /etc (not the whole: keys live there), /proc,
 * /sys, /dev/null, /dev/zero, /dev/urandom, /dev/random. */
int sandbox_policy_add_system(sandbox_policy *p, err_t *err);
/* 1 when file (resolved, symbolic links followed) lies beneath one of p's
 * rules, with that rule in *rule; else 0.  A file that does not exist is 0. */
int sandbox_policy_reaches(const sandbox_policy *p, const char *file, const sandbox_rule **rule);

/* A user's uid and primary gid (by name, or a number). */
int sandbox_lookup_user(const char *name, uid_t *uid, gid_t *gid, err_t *err);

/* Confines the calling process, for good: no-new-privs; the user of the
 * policy; no capabilities (effective, permitted, inheritable, ambient,
 * bounding); the seccomp filter (every thread, TSYNC); Landlock (best
 * effort across ABI 1..7; st->landlock_abi 0 when the kernel has none).
 * Denied system calls fail with EPERM (ENOSYS for clone3, so that glibc
 * falls back to clone, whose flags the filter can see): the caller sees an
 * error and goes on, rather than being killed.  Stops OpenBLAS's thread
 * pool first, since Landlock and capabilities hold per thread and only
 * threads made after confinement inherit them.  0, or NUMRPC_ESERVER (the
 * process is then partly confined and should not run routines). */
int sandbox_apply(const sandbox_policy *p, sandbox_status *st, err_t *err);

/* The kernel's Landlock ABI version (0: none, or turned off at boot). */
int sandbox_landlock_abi(void);

/* Threads of the calling process (/proc/self/task), or -1. */
int sandbox_thread_count(void);

/* PR_SET_DUMPABLE 0: no core dump, and no process of the same user without
 * CAP_SYS_PTRACE may ptrace it or open its /proc/PID/mem, environ, fd. */
int sandbox_no_dump(void);

#endif
