/* worker_sandbox.h -- the workers' kernel confinement (common/sandbox.c) as
 * this server's options shape it: paths, secret files kept out, --user. */
#ifndef NUMRPC_SERVER_WORKER_SANDBOX_H
#define NUMRPC_SERVER_WORKER_SANDBOX_H

#include "config.h"
#include "error.h"

/* A secret file beyond server_config's (e.g. --metaserver-token-file) that
 * no worker may be able to read; what names the option.  Before
 * sandbox_prepare. */
void sandbox_add_secret(const char *path, const char *what);

/* Once at start, in the process the workers descend from, after the handle
 * directory exists (handles_open) and before the first worker forks:
 * resolves --user, makes the workers' private temporary directory
 * ($TMPDIR/numrpc-work-PID-XXXXXX, 0700; the user's with --user, as is the
 * handle directory then), and refuses (NUMRPC_EINVAL, naming the file and
 * the path that exposes it) when a secret file -- --tls-key, --token-file,
 * --admin-secret-file, --peer-token-file, --config, those of
 * sandbox_add_secret -- lies beneath a path workers may read.  Logs once,
 * at WARN, when the kernel has no Landlock. */
int sandbox_prepare(const server_config *cfg, err_t *err);
/* At exit of the process that called sandbox_prepare: removes the
 * temporary directory and what killed workers left in it. */
void sandbox_cleanup(void);
/* The private temporary directory ("" before sandbox_prepare). */
const char *sandbox_worker_tmpdir(void);

/* In a worker, once its modules are loaded and before it takes any
 * connection (worker_main): TMPDIR becomes the private directory, then
 * sandbox_apply with the worker policy: no-new-privs, --user, no
 * capabilities, seccomp (every thread; EPERM for what is denied, socket()
 * beyond AF_UNIX included), Landlock (read: the system's libraries, /proc,
 * /sys, --stubs, --module-dir; read-write: the handle directory and the
 * private temporary one).  0, or an error: the worker must then exit
 * without serving. */
int sandbox_confine_worker(const server_config *cfg, err_t *err);

/* The dispatcher, once (before it reads a secret): not dumpable, so that a
 * process of its user without CAP_SYS_PTRACE can neither trace it nor read
 * its memory through /proc. */
void sandbox_harden_dispatcher(void);

#endif
