/* connio.h -- a connection's stream as the dispatcher and the workers hold
 * it: its transport over its socket and TLS state, and that state's memory (connio.c). */
#ifndef NUMRPC_SERVER_CONNIO_H
#define NUMRPC_SERVER_CONNIO_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "tls.h"
#include "transport.h"

/* A connection's bytes are read and written through the transport table
 * only (transport.h): the blocking recv and send a worker's framing uses,
 * and the looks without blocking the dispatcher makes between messages
 * (look, ready, window, pending, seal, send_now).  On TLS, "ready" bytes are
 * opened plaintext, and bytes may wait in the state that poll() on the
 * socket cannot see (pending). */

/* ---- The stream state of one TLS connection ----
 * Each connection's state is a memory file of its own (memfd, its size
 * sealed): the dispatcher maps it from the handshake to the close, and
 * lends it with the socket to the one worker that holds the connection,
 * which maps it only while it holds it.  No process maps another
 * connection's keys or plaintext. */
/* A zeroed state and its memory file (*memfd), both the caller's: freed by
 * connio_state_free.  NULL with err set when the memory cannot be had. */
tls_stream_state *connio_state_new(int *memfd, err_t *err);
/* Wipes the state (keys, sequence numbers, plaintext), unmaps it and closes
 * memfd; either may be NULL / -1. */
void connio_state_free(tls_stream_state *tls, int memfd);
/* Maps a state lent with memfd (a worker's), or NULL when memfd is not one
 * (wrong size) or cannot be mapped.  Unmapped by connio_state_unmap. */
tls_stream_state *connio_state_map(int memfd);
/* The bytes a mapped state takes (whole pages). */
size_t connio_state_size(void);
void connio_state_unmap(tls_stream_state *tls);

/* ---- The stream ---- */
/* The connection's stream: "tls-record" over *tls, or "tcp" (tls NULL).
 * Closing it closes fd (the dispatcher closes its own fd itself; a
 * worker gives its copy back with connio_give_back). */
transport connio_transport(int fd, tls_stream_state *tls);
/* Closes the worker's stream without ending the connection: on TLS no
 * close_notify goes out, the state stays as it is for the dispatcher. */
void connio_give_back(transport *t);

#endif
