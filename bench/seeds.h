/* seeds.h -- numrpc-bench-seeds' options and results: the LSB paper's latency
 * and paced throughput runs and the PVM paper's ring, numrpc beside raw TCP. */
#ifndef NUMRPC_BENCH_SEEDS_H
#define NUMRPC_BENCH_SEEDS_H

#include <stddef.h>

#define SEEDS_MAX_ROUNDS 64
#define SEEDS_MAX_SIZES 16
#define SEEDS_MAX_RING 8

struct seeds_options {
    const char *server_bin; /* numrpc-server */
    const char *stubs;      /* a stubs dir holding blas and benchsink */
    int rounds;
    int quick;
    int null_count;         /* null messages per system and round (LSB: 10 000) */
    size_t lsb_bytes;       /* bytes per buffer size, mode, system and round */
    size_t lsb_sizes[SEEDS_MAX_SIZES];
    int nlsb;
    size_t ring_sizes[SEEDS_MAX_SIZES];
    int nring;
    int ring_k;             /* servers in the ring */
    const char *csv;
    const char *markdown;
    char placement[80];     /* where the client and the servers ran, for the tables */
};

/* One figure per round: seconds per operation (a message, a buffer, a hop). */
typedef struct seeds_series {
    double v[SEEDS_MAX_ROUNDS];
    int n;
} seeds_series;

enum { SEEDS_NUMRPC = 0, SEEDS_RAW = 1, SEEDS_NSYS = 2 };

/* LSB's throughput modes (TR-97-06 4.1): paced one-way (stop-and-go, the
 * receiver's clock), two-way (a blocking call per buffer), and the unpaced
 * stream (buffers sent back to back, replies counted at the end). */
enum { LSB_PACED1 = 0, LSB_TWOWAY = 1, LSB_STREAM = 2, LSB_NMODES = 3 };

struct lsb_results {
    seeds_series null1[SEEDS_NSYS]; /* one-way null latency, s per message */
    seeds_series null2[SEEDS_NSYS]; /* two-way null latency */
    seeds_series tput[SEEDS_MAX_SIZES][LSB_NMODES][SEEDS_NSYS]; /* s per buffer */
};

struct ring_results {
    seeds_series hop[SEEDS_MAX_SIZES][SEEDS_NSYS]; /* trip time / k, s */
    seeds_series stay[SEEDS_MAX_SIZES]; /* the same dcopy with both handles on one server */
};

#endif
