/* arrival.h -- has a connection's next request arrived far enough to give
 * it to a worker?  Looked at without reading it (arrival.c). */
#ifndef NUMRPC_SERVER_ARRIVAL_H
#define NUMRPC_SERVER_ARRIVAL_H

#include "transport.h"

/* A request's first packet is waited for whole up to this many bytes; of a
 * larger one, this many bytes (a socket buffer holds them without reading). */
#define ARRIVAL_ENOUGH_BYTES (32u << 10)

enum arrival {
    ARRIVAL_NOTHING = 0, /* no byte yet                                    */
    ARRIVAL_PARTIAL,     /* part of the first packet: wait for the rest    */
    ARRIVAL_READY,       /* enough to lend (or bytes a worker will refuse) */
    ARRIVAL_CLOSED       /* the peer closed (or the socket failed)         */
};

/* What the stream t holds of its next request (enum arrival), looked at
 * through its transport (on TLS: opened).  Never blocks. */
int arrival_check(transport *t);

#endif
