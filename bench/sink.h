/* sink.h -- bench_sink(n, x, ack): the one-way bulk routine of the transfer
 * benchmark (module benchsink, bench/sink.idl). */
#ifndef NUMRPC_BENCH_SINK_H
#define NUMRPC_BENCH_SINK_H

/* *ack := x[0] + x[n/2] + x[n-1], or 0 when n < 1; x is not changed. */
void bench_sink(int n, double *x, double *ack);
/* The same ack, and *arrived := CLOCK_MONOTONIC seconds at entry: on one host
 * the client's clock, so arrived - start is the request's one-way delay. */
void bench_sink_at(int n, double *x, double *ack, double *arrived);

#endif
