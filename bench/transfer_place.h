/* transfer_place.h -- where numrpc-bench-transfer's peers run: CPU pinning, the
 * servers' network namespace, starting and stopping the server processes. */
#ifndef NUMRPC_BENCH_TRANSFER_PLACE_H
#define NUMRPC_BENCH_TRANSFER_PLACE_H

#include <sys/types.h>

/* A client CPU and a servers' CPU. */
struct placement {
    const char *name;
    int client_cpu, server_cpu; /* -1 = not pinned */
};

/* ---- this process ---- */
/* Pins the calling process to cpu, or to every online CPU when cpu < 0. */
void place_pin_self(int cpu);
/* Moves the calling thread into the servers' network namespace (when
 * --server-netns is set) or back; sockets opened meanwhile live there. */
void place_enter_server_netns(void);
void place_leave_server_netns(void);

/* ---- server processes (each pinned to cpu, in the servers' namespace) ---- */
/* numrpc-server on an ephemeral port; returns its pid and *port, or -1. */
pid_t place_spawn_numrpc_server(int cpu, int *port);
/* A delay proxy in front of host:*port (which it replaces with its own
 * port) when --delay-ms is set; returns its pid, 0 when not needed, or -1. */
pid_t place_spawn_delay_proxy(int cpu, int *port);
#ifdef HAVE_CORBA
/* The omniORB baseline server with its client opened on it (behind a delay
 * proxy, *proxy, if asked).  Returns its pid or -1. */
pid_t place_spawn_corba_server(int cpu, pid_t *proxy);
#endif
#ifdef HAVE_GRPC
/* The gRPC baseline server with its client connected (behind a delay proxy,
 * *proxy, if asked).  Returns its pid or -1. */
pid_t place_spawn_grpc_server(int cpu, pid_t *proxy);
#endif

#endif
