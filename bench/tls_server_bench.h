/* tls_server_bench.h -- numrpc-server itself, TLS against plain TCP: ping
 * and an 8 MiB round trip, interleaved (tls_server_bench.c). */
#ifndef NUMRPC_BENCH_TLS_SERVER_BENCH_H
#define NUMRPC_BENCH_TLS_SERVER_BENCH_H

/* Starts two numrpc-server processes (the program at server, modules from
 * stubs), one plain and one with --tls-cert cert --tls-key key (cert is
 * for 127.0.0.1 and is also the client's CA), measures both and prints
 * medians [min..max] and the ratio.  0, or 1 when something failed. */
int tls_server_figures(const char *server, const char *stubs, const char *cert, const char *key);

#endif
