/* lease.h -- the renewal of this process's handles on their servers: a
 * background thread while handles exist (lease.c). */
#ifndef NUMRPC_CLIENT_LEASE_H
#define NUMRPC_CLIENT_LEASE_H

/* Starts the renewal thread unless it runs (after a handle was added; also
 * makes it look at the leases again).  The thread ends by itself when no
 * handle is left. */
void lease_start(void);
/* Stops the thread and waits for it to end (numrpc_finalize). */
void lease_stop(void);

#endif
