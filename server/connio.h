/* connio.h -- a connection's bytes as the dispatcher and the workers see
 * them: straight from its socket, or through its TLS stream state (connio.c). */
#ifndef NUMRPC_SERVER_CONNIO_H
#define NUMRPC_SERVER_CONNIO_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "tls.h"
#include "transport.h"

/* Each function takes the connection's socket fd and its TLS stream state
 * tls (NULL for a plain connection).  None blocks.  On TLS, "ready" bytes
 * are opened plaintext: records are pulled from the socket first, and bytes
 * may wait in tls that poll() on fd cannot see (connio_buffered). */

/* Copies up to n of the bytes ready into buf without consuming them: the
 * count (0: none yet), or -1 when the peer closed with nothing left or the
 * stream failed. */
long connio_peek(int fd, tls_stream_state *tls, void *buf, size_t n);
/* The same, consuming the bytes copied. */
long connio_take(int fd, tls_stream_state *tls, void *buf, size_t n);
/* The bytes ready now, or -1 as connio_peek. */
long connio_ready(int fd, tls_stream_state *tls);
/* How much of a message can ever be ready at once (a plain socket's buffer,
 * or one TLS record: its state holds two): wait for no more than this. */
size_t connio_window(const tls_stream_state *tls);
/* True when tls holds plaintext, or a whole record, not consumed yet. */
int connio_buffered(const tls_stream_state *tls);
/* On TLS, replaces out's bytes (plaintext framed in memory) by the records
 * sealing them; plain, leaves them.  0, or a negative code with err set. */
int connio_seal(tls_stream_state *tls, transport_bytes *out, err_t *err);
/* Sends the len bytes at bytes (sealed first on TLS) if the socket takes
 * them now: the count of socket bytes sent, 0 when it took none (a TLS
 * record's sequence number is then freed again), -1 when it failed.  *size
 * (if not NULL) gets the socket bytes meant, sent or not. */
ssize_t connio_send_now(int fd, tls_stream_state *tls, const void *bytes, size_t len, size_t *size);

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

/* ---- A worker's stream ---- */
/* The stream a worker lent the connection reads and writes: "tls-record"
 * over *tls, or "tcp".  It owns the worker's copy of fd. */
transport connio_transport(int fd, tls_stream_state *tls);
/* Closes the worker's stream without ending the connection: on TLS no
 * close_notify goes out, the state stays as it is for the dispatcher. */
void connio_give_back(transport *t);

#endif
