/* transport.h -- the byte streams under the framing: a small table of
 * operations per kind of connection (plain TCP today; TLS or same-host
 * shared memory later, each one file behind the same table). */
#ifndef NUMRPC_COMMON_TRANSPORT_H
#define NUMRPC_COMMON_TRANSPORT_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

typedef struct transport transport;
typedef struct transport_bytes transport_bytes;

/* What a kind of stream must do.  Every entry is called by the one thread
 * that owns the stream; none takes a lock.  Time limits come from the
 * socket (SO_SNDTIMEO / SO_RCVTIMEO) or the caller's deadline. */
typedef struct transport_ops {
    const char *name; /* "tcp": in logs and `numrpc status` */
    /* Reads 1..n bytes into buf, blocking until some arrive.  Returns the
     * count, 0 when the peer closed, or -1 with errno set: EAGAIN when the
     * receive time limit passed, EINTR (the caller retries), others fatal. */
    ssize_t (*recv)(transport *t, void *buf, size_t n);
    /* Writes 1..n bytes from buf, blocking until the stream takes some.
     * Returns the count, or -1 with errno as for recv; never raises
     * SIGPIPE (a peer that left is EPIPE or ECONNRESET). */
    ssize_t (*send)(transport *t, const void *buf, size_t n);
    /* Brings up the stream's own session on a connected socket (a TLS
     * handshake); server_side tells which end.  Blocks within the socket's
     * time limits.  0, or an error in err (the stream is then closed). */
    int (*start)(transport *t, int server_side, err_t *err);
    /* Bytes the stream holds already decoded, which poll() on fd cannot
     * see (TLS records read ahead).  Never blocks. */
    size_t (*pending)(const transport *t);
    /* Ends the session and closes fd; safe on a closed stream. */
    void (*close)(transport *t);

    /* ---- Without blocking, for a server that looks at a stream between
     * its messages (NULL in the kinds only a client uses) ---- */
    /* Copies up to n of the bytes ready into buf, consuming them when take:
     * the count, 0 when none are ready yet, -1 when the peer closed with
     * nothing left or the stream failed. */
    long (*look)(transport *t, void *buf, size_t n, int take);
    /* The bytes ready now (TLS: the records received, opened), or -1. */
    long (*ready)(transport *t);
    /* How much of a message can ever be ready at once: wait for no more. */
    size_t (*window)(const transport *t);
    /* Replaces out's bytes (plaintext framed in memory) by what the socket
     * carries for them (TLS: sealed records).  0, or a code with err set. */
    int (*seal)(transport *t, transport_bytes *out, err_t *err);
    /* Sends len bytes (sealed first) if the socket takes them now: the
     * socket bytes sent, 0 when it took none (nothing is used up then: a
     * TLS record's number and key are free again), -1 when it failed.
     * *size (if not NULL) gets the socket bytes meant, sent or not. */
    ssize_t (*send_now)(transport *t, const void *bytes, size_t len, size_t *size);
} transport_ops;

/* One stream: plain data, copied freely by its owner; ops and session
 * stay valid until close. */
struct transport {
    const transport_ops *ops;
    int fd;        /* the socket; -1 when closed or never opened */
    void *session; /* the kind's per-stream state (NULL for TCP) */
};

/* ---- Kinds ---- */
extern const transport_ops transport_tcp_ops;

/* A plain TCP stream over a connected socket fd (which it now owns). */
transport transport_tcp(int fd);
/* A stream that is not open (fd -1): reads and writes fail with EBADF. */
transport transport_none(void);
/* Reads the len bytes at buf (valid until close), then 0; writes fail with
 * EBADF.  It has no fd: close it with its ops->close. */
transport transport_memory(const void *buf, size_t len);

/* Bytes a sink stream collects: start as {.max = LIMIT}; p is malloc'd by
 * the sink as it grows and freed by the owner (transport_bytes_free). */
struct transport_bytes {
    unsigned char *p;
    size_t len, cap;
    size_t max; /* a write that would pass it fails with ENOBUFS */
};

/* A write-only stream that appends to *out (which must outlive it); reads
 * fail with EBADF.  A writer framing into it builds whole messages in
 * memory, to be sent without blocking by their owner.  No fd, no session:
 * closing it is a no-op. */
transport transport_memory_sink(transport_bytes *out);
void transport_bytes_free(transport_bytes *b);

/* ---- Helpers over the table ---- */
/* Connects to host:port within timeout_ms, tunes the socket and starts the
 * stream of kind ops.  0, or a negative code with err set. */
int transport_connect(transport *t, const transport_ops *ops, const char *host, int port,
                      int timeout_ms, err_t *err);
/* Closes t (if open: a socket or a session) and marks it closed. */
void transport_close(transport *t);

#endif
