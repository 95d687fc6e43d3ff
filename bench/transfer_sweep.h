/* transfer_sweep.h -- numrpc-bench-transfer's loops: every size, system and round
 * of one placement (or the packet x socket buffer x TCP_NODELAY sweep). */
#ifndef NUMRPC_BENCH_TRANSFER_SWEEP_H
#define NUMRPC_BENCH_TRANSFER_SWEEP_H

#include "transfer_place.h"

/* Starts the servers for placement pl (index pi), runs the rounds the options
 * ask for (latency, cold calls, sizes, packet sweep; or only the buffer
 * sweep), keeps their samples and stops the servers.  Returns 0 or -1. */
int sweep_placement(int pi, const struct placement *pl);

#endif
