/* seeds_rawring.h -- the raw TCP limit of the PVM ring: k forked processes,
 * each connected to the next, passing a message around store-and-forward. */
#ifndef NUMRPC_BENCH_SEEDS_RAWRING_H
#define NUMRPC_BENCH_SEEDS_RAWRING_H

#include <stddef.h>
#include <sys/types.h>

typedef struct rawring {
    int k;
    pid_t pid[16];
    int ctl; /* node 0's control socket (a socketpair, off the ring's path) */
} rawring;

/* Forks k >= 2 nodes on 127.0.0.1 (tuned sockets: 4 MiB buffers,
 * TCP_NODELAY, 256 KiB writes), each pinned to cpu (< 0: not pinned).
 * Call while single-threaded.  0 or -1. */
int rawring_start(rawring *r, int k, int cpu);
/* Gives node 0 the n bytes of src (not part of a trip).  0 or -1. */
int rawring_put(rawring *r, const void *src, size_t n);
/* One trip: node 0 sends its n bytes to node 1, ..., node k-1 back to node
 * 0, each node receiving the whole message before it forwards it; node 0
 * then says so on the control socket.  0 or -1. */
int rawring_trip(rawring *r, size_t n);
/* Node 0's n bytes (what came back from the last trip) into dst.  0 or -1. */
int rawring_get(rawring *r, void *dst, size_t n);
/* Closes the control socket (the nodes exit one after another) and reaps. */
void rawring_stop(rawring *r);

#endif
