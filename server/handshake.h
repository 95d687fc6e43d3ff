/* handshake.h -- the dispatcher's TLS handshakes, run without blocking in
 * its event loop (handshake.c). */
#ifndef NUMRPC_SERVER_HANDSHAKE_H
#define NUMRPC_SERVER_HANDSHAKE_H

#include "conn.h"

/* The first byte of a TLS client's first record (a handshake record). */
#define TLS_HANDSHAKE_BYTE 0x16

/* What a step left connection c as. */
enum handshake_result {
    HANDSHAKE_DONE = 0, /* its TLS stream is up: c is in the dispatcher's hands (QUEUED, not in epoll) */
    HANDSHAKE_WAITING,  /* HANDSHAKE, in epoll for the socket's readiness */
    HANDSHAKE_ENDED     /* failed: c is closed, or refused (a plain client) */
};

/* Starts the handshake of c, accepted just now (in the dispatcher's hands,
 * not in epoll), and runs it as far as the socket allows. */
int handshake_start(dispatcher *d, int c);
/* The socket of c (HANDSHAKE) is ready: the handshake goes on. */
int handshake_step(dispatcher *d, int c);

#endif
