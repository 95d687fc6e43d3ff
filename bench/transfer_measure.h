/* transfer_measure.h -- one timed measurement of numrpc-bench-transfer: a round
 * trip, ping, cold call or one-way transfer of one system, and the samples kept. */
#ifndef NUMRPC_BENCH_TRANSFER_MEASURE_H
#define NUMRPC_BENCH_TRANSFER_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "rawtcp.h"

/* ---- the systems measured ---- */
enum system_id {
    SYS_RAW_TUNED,
    SYS_RAW_NAIVE,
    SYS_NUMRPC,
    SYS_CORBA,
    SYS_GRPC,
    SYS_RAW_PING,
    SYS_NUMRPC_PING,
    SYS_CORBA_PING,
    SYS_GRPC_PING,
    SYS_RAW_COLD,    /* connect + one 8-byte ping-pong */
    SYS_NUMRPC_COLD, /* a first ping: connect, hello + interface, call */
    SYS_RAW_SINK,    /* one-way bulk (TTCP): array out, 8-byte ack back */
    SYS_NUMRPC_SINK,
    SYS_CORBA_SINK,
    SYS_GRPC_SINK,
    SYS_COUNT
};
/* Their names in tables and CSVs. */
extern const char *const measure_sys_name[SYS_COUNT];
/* The systems this placement measures (the baselines only if built and up). */
extern int measure_on[SYS_COUNT];
#define FOR_BULK(sys) for (int sys = SYS_RAW_TUNED; sys <= SYS_GRPC; sys++) if (measure_on[sys])
#define FOR_PING(sys) for (int sys = SYS_RAW_PING; sys <= SYS_GRPC_PING; sys++) if (measure_on[sys])
#define FOR_SINK(sys) for (int sys = SYS_RAW_SINK; sys <= SYS_GRPC_SINK; sys++) if (measure_on[sys])
/* True for the 8-byte latency systems (pings and cold calls). */
int measure_is_ping(int sys);

/* ---- samples ---- */
/* One (placement, size, system, round) measurement: the median of reps. */
struct sample {
    int placement;
    size_t bytes;
    size_t packet; /* numrpc packet size asked for; 0 = default */
    int system;
    int round;
    int reps;
    double median_s;
    double send_s, compute_s, receive_s; /* numrpc: means over the reps */
    double jitter_all, jitter_rest;      /* std dev of the reps, without the first */
    uint64_t wire_sent, wire_received;   /* numrpc: last call's wire bytes */
    int sockbuf, nodelay;                /* buffer sweep: NUMRPC_SOCKBUF (0 = default), NODELAY */
};
/* Keeps a copy of *s (exits with status 2 when out of memory). */
void measure_add_sample(const struct sample *s);
/* Every sample kept so far, in the order they were added; *n their count. */
const struct sample *measure_samples(size_t *n);
/* Transfers whose data or acknowledgement came back wrong so far. */
int measure_verify_failures(void);

/* ---- measuring ---- */
/* The raw TCP connections, by rawtcp_mode. */
struct measure_ctx {
    int fd[2];
};
/* Allocates the source and destination arrays for transfers of up to
 * maxbytes and fills the source.  Returns 0 or -1. */
int measure_alloc_buffers(size_t maxbytes);
/* (Re)initialises the numrpc library on host:port with packet size packet
 * (0 = default).  Returns numrpc_init's code, reported on stderr. */
int measure_numrpc_setup(int port, size_t packet);
/* Runs reps calls of system sys moving bytes each way; fills s (system,
 * bytes, reps, timings).  Returns 0 or -1 (reported on stderr). */
int measure_one(struct measure_ctx *c, int sys, size_t bytes, int reps, struct sample *s);
/* Cold calls, reps of each (at most 64): a fresh TCP connection and one
 * 8-byte ping-pong into *rs, numrpc's first call on a fresh library state
 * on port into *ns.  Returns 0 or -1. */
int measure_cold(const rawtcp_server *raw, int port, int reps, struct sample *rs,
                 struct sample *ns);
/* Calls per round for a transfer of bytes (--reps, or by size and --quick). */
int measure_reps_for(size_t bytes);

#endif
