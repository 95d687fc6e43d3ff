/* worker.h -- a pre-forked worker process (worker.c) and the messages on
 * its control socket to the dispatcher. */
#ifndef NUMRPC_SERVER_WORKER_H
#define NUMRPC_SERVER_WORKER_H

#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

#include "config.h"
#include "registry.h"
#include "slots.h"
#include "tls.h"
#include "tokens.h"

/* Messages on the dispatcher <-> worker control socket. */
enum ctl_kind {
    CTL_ASSIGN = 1,   /* dispatcher -> worker: a connection (fd attached) */
    CTL_RELEASE = 2,  /* dispatcher -> worker: give it back when idle     */
    CTL_RETURNED = 3, /* worker -> dispatcher: connection given back      */
    CTL_CLOSED = 4,   /* worker -> dispatcher: connection ended           */
    CTL_DEADLINE = 5  /* worker -> dispatcher: a routine started under a
                         deadline (wake up and watch it; the loan goes on) */
};
typedef struct ctl_msg {
    int kind;
    int conn_id;
    /* CTL_ASSIGN: the token the connection proved ("" on a server without
     * tokens); the worker checks each request against its rights. */
    char identity[TOKEN_NAME_MAX + 1];
    /* CTL_ASSIGN: monotonic seconds the first bytes of the request that
     * made the dispatcher lend it were seen (0: not known). */
    double arrived;
} ctl_msg;

/* The worker's main loop; never returns.  tokens: the names and rights of
 * the server's tokens, without their secrets (empty: no tokens).  A TLS
 * connection is lent with its state's memory file (connio.h), mapped while
 * the worker holds it. */
void worker_main(const server_config *cfg, const module_list *mods, const token_table *tokens, int ctl_fd,
                 worker_slot *slot) __attribute__((noreturn));

/* Before worker_main: its stdout and stderr are the pipe the dispatcher
 * reads (last_words.h), so each message waits until the dispatcher has
 * read what earlier calls' routines wrote. */
void worker_words_captured(void);

/* In a child just forked from parent: it is killed when parent dies, even
 * in the middle of a routine (and leaves at once if parent is already gone). */
static inline void server_child_dies_with(pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
}

#endif
