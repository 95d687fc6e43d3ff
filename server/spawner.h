/* spawner.h -- the process that forks the workers (spawner.c): started before
 * the server reads its TLS key, tokens or any secret, so no worker inherits one. */
#ifndef NUMRPC_SERVER_SPAWNER_H
#define NUMRPC_SERVER_SPAWNER_H

#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "registry.h"
#include "slots.h"
#include "tokens.h"

/* In main, once the shared tables (slots, counters, handle store, MPI
 * state) exist and before anything secret is read: forks the spawner, which
 * keeps slots (n of them) to hand each worker its own.  The spawner dies
 * with its parent.  0, or a negative code with err set. */
int spawner_start(worker_slot *slots, int n, err_t *err);

/* What a new worker is given besides its descriptors. */
typedef struct spawn_order {
    int index;                 /* its slot                                   */
    const server_config *cfg;  /* the configuration it serves with            */
    const module_list *mods;   /* live registrations to load                  */
    const token_table *rights; /* tokens whose secrets are never sent: names and
                                  rights only (the table itself is not changed) */
} spawn_order;

/* In the dispatcher (a child subreaper: PR_SET_CHILD_SUBREAPER): a new
 * worker for o, holding ctl_fd as descriptor 3 and pull_fd (or -1) as 4.
 * With words_fd (a pipe's write end, or -1) as its stdout and stderr, the
 * worker writes its own log lines to the server's stderr kept as 5
 * (last_words.h).  The worker becomes the dispatcher's own child (its exit
 * is reaped there).  The descriptors stay the caller's.  Its pid, or -1
 * with err set. */
pid_t spawner_spawn(const spawn_order *o, int ctl_fd, int pull_fd, int words_fd, err_t *err);

/* True for the spawner's pid (its end is news the dispatcher logs). */
int spawner_is(pid_t pid);

#endif
