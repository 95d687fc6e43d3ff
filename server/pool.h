/* pool.h -- the dispatcher's worker processes: their lifecycle (fork,
 * respawn, retire), loans of connections, crashes, deadlines, keepalives
 * (pool.c). */
#ifndef NUMRPC_SERVER_POOL_H
#define NUMRPC_SERVER_POOL_H

#include <stddef.h>

#include "conn.h"

/* Forks worker index (its slot zeroed).  0, or -1 when it cannot. */
int pool_spawn(dispatcher *d, int index);
/* A free worker leaves (closing its control socket makes it exit). */
void pool_retire(dispatcher *d, int index);
/* Asks a worker holding an idle connection to give it back. */
void pool_ask_release(dispatcher *d, int index);
/* Workers alive. */
int pool_count(const dispatcher *d);
/* Gives queued connections to free (or new) workers. */
void pool_schedule(dispatcher *d);
/* Requests from address p waiting for a worker. */
int pool_queued_from(const dispatcher *d, const peer_key *p);
/* A message on worker w's control socket (a connection came back). */
void pool_message(dispatcher *d, int w);
/* Worker w's routines wrote to stdout or stderr: logged (last_words.h). */
void pool_words(dispatcher *d, int w);
/* SIGCHLD: reaps workers (their calls answered, replaced if needed). */
void pool_reap(dispatcher *d);
/* Keepalives, deadlines, cancels, idle holders: called every tick, and
 * when a routine's deadline comes. */
void pool_tick(dispatcher *d, double now);
/* The soonest deadline of a routine running now (monotonic seconds; 0 =
 * none): the event loop wakes for it (a worker that starts a routine under
 * a deadline says so: CTL_DEADLINE). */
double pool_next_deadline(const dispatcher *d);
/* The soonest PROGRESS frame due (monotonic seconds), 0 for none. */
double pool_next_progress(const dispatcher *d, double now);
/* A new generation: workers reload modules and configuration as they
 * become free. */
void pool_roll(dispatcher *d);
/* Ends every worker (SIGTERM) and waits for them. */
void pool_shutdown(dispatcher *d);

#endif
