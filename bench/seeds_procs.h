/* seeds_procs.h -- the processes numrpc-bench-seeds runs against: a stubs dir
 * with the benchsink module, numrpc-servers on chosen ports, stopping them. */
#ifndef NUMRPC_BENCH_SEEDS_PROCS_H
#define NUMRPC_BENCH_SEEDS_PROCS_H

#include <stddef.h>
#include <sys/types.h>

/* A fresh /tmp dir linking every module of stubs and benchsink_so; its path
 * goes to dir (cap bytes).  Returns 0 or -1 (message printed). */
int seeds_stubs_dir(const char *stubs, const char *benchsink_so, char *dir, size_t cap);
/* Removes what seeds_stubs_dir made. */
void seeds_stubs_dir_remove(const char *dir);
/* k loopback ports free right now (bound together, then released).  0 or -1. */
int seeds_free_ports(int *ports, int k);
/* numrpc-server on 127.0.0.1:port (0 = any; the port is written back),
 * one BLAS thread, --pull-from pull_from when not NULL, pinned to cpu (set
 * before exec, so its workers inherit it; cpu < 0: not pinned); waits until
 * it serves.  Returns its pid or -1 (message printed). */
pid_t seeds_spawn_server(const char *bin, const char *stubs, int *port, const char *pull_from, int cpu);
/* Pins the calling process to cpu; cpu < 0 does nothing. */
void seeds_pin(int cpu);
/* Stopping the servers and finding their program: sibling.h. */

#endif
