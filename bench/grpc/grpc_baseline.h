/* grpc_baseline.h -- a C interface to the gRPC baseline (server in a child
 * process, client calls), so the C benchmark runs it beside numrpc. */
#ifndef NUMRPC_GRPC_BASELINE_H
#define NUMRPC_GRPC_BASELINE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Serves on NUMRPC_BENCH_HOST or 127.0.0.1 (a free port, written to port_file) until killed. */
int grpc_baseline_serve(const char *port_file);
/* Connects the client to that host's port.  Returns 0 or -1. */
int grpc_baseline_open(int port);
void grpc_baseline_close(void);
int grpc_baseline_ping(void);
/* Sends x[0..n) and stores the copy the server returns in y; 0 or -1. */
int grpc_baseline_dcopy(const double *x, double *y, size_t n);
/* One-way: sends x[0..n); *ack = the server's x[0] + x[n/2] + x[n-1]. */
int grpc_baseline_sink(const double *x, size_t n, double *ack);
const char *grpc_baseline_error(void);

#ifdef __cplusplus
}
#endif
#endif
