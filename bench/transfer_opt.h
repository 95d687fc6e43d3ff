/* transfer_opt.h -- numrpc-bench-transfer's options (filled in bench_transfer.c),
 * read by every layer: placement, measurement, sweeps and report. */
#ifndef NUMRPC_BENCH_TRANSFER_OPT_H
#define NUMRPC_BENCH_TRANSFER_OPT_H

#include <stddef.h>

#define MAX_SIZES 32
#define MAX_ROUNDS 1000

struct transfer_options {
    const char *server_bin;
    const char *stubs;
    const char *corba_bin; /* omniORB baseline server, or NULL */
    const char *grpc_bin;  /* gRPC baseline server, or NULL */
    const char *proxy_bin; /* numrpc-delay-proxy */
    double delay_ms;       /* one-way latency added by proxies; 0 = none */
    size_t sizes[MAX_SIZES];
    int nsizes;
    int rounds;
    int quick;
    int packet_sweep;
    const char *csv;
    const char *markdown;
    int placement_only; /* -1 all, else index */
    int reps;           /* calls per round and size; 0 = by size */
    const char *host;   /* servers' address (NUMRPC_BENCH_HOST), default 127.0.0.1 */
    const char *server_netns; /* servers run in this network namespace (ip netns name) */
    int netns_fd, home_netns_fd;
    const char *link;   /* label of the link in CSVs and reports */
    int buffer_sweep;   /* run only the packet x socket buffer x NODELAY sweep */
    size_t sweep_bytes;
    size_t sweep_packets[16];
    int nsweep_packets;
    int sweep_bufs[8];
    int nsweep_bufs;
    const char *sweep_csv;
    char stubs_tmp[64]; /* a stubs dir: bench_opt.stubs' modules + benchsink, removed at exit */
    const char *stubs_given; /* the stubs dir the links point into */
};

/* The one set of options of this run. */
extern struct transfer_options bench_opt;
/* "8", "64K", "8M", "1G" (powers of 1024) in bytes; 0 when not positive. */
size_t bench_parse_size(const char *s);

#endif
