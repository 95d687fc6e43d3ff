/* seeds_lsb.c -- LSB's (TR-97-06) null latency and throughput, numrpc against
 * raw TCP in the same round: one-way as a stream, paced, two-way blocking. */
#define _GNU_SOURCE
#include "seeds_lsb.h"

#include <stdio.h>

#include "numrpc.h"
#include "rawtcp.h"
#include "stats.h"

#define MAX_CALLS 4096

int seeds_lsb_calls(const struct seeds_options *o, size_t bytes)
{
    size_t m = bytes ? o->lsb_bytes / bytes : MAX_CALLS;
    return m < 4 ? 4 : m > MAX_CALLS ? MAX_CALLS : (int)m;
}

static int failed(const char *what, int rc)
{
    fprintf(stderr, "numrpc-bench-seeds: %s: %s: %s\n", what, numrpc_strerror(rc),
            numrpc_last_error_detail());
    return -1;
}

static void keep(seeds_series *s, int r, double v)
{
    if (r >= 0 && s->n < SEEDS_MAX_ROUNDS) s->v[s->n++] = v;
}

/* ---- null messages: s per message ---- */

static int null_twoway(int sys, int fd, int count, double *out)
{
    double t0 = bench_now();
    for (int i = 0; i < count; i++) {
        int rc = sys == SEEDS_RAW ? rawtcp_ping(fd, (unsigned long long)i + 1) : numrpc_call("ping");
        if (rc != 0) return sys == SEEDS_RAW ? failed("raw ping-pong", NUMRPC_EIO) : failed("ping", rc);
    }
    *out = (bench_now() - t0) / count;
    return 0;
}

/* LSB: "a number of consecutive messages", the average delay of one. */
static int null_oneway(int sys, int fd, int count, double *out)
{
    double t0 = bench_now();
    if (sys == SEEDS_RAW) {
        if (rawtcp_ping_stream(fd, count) != 0) return failed("raw ping stream", NUMRPC_EIO);
    } else {
        for (int i = 0; i < count; i++) {
            int id, rc = numrpc_call_async(&id, "ping");
            if (rc != NUMRPC_OK) return failed("ping (async)", rc);
        }
        int rc = numrpc_wait_all();
        if (rc != NUMRPC_OK) return failed("wait_all after pings", rc);
    }
    *out = (bench_now() - t0) / count;
    return 0;
}

/* ---- buffers of n doubles, m of them: s per buffer ---- */

/* Stop-and-go: each buffer's delay from our start to the receiver having it
 * all (its clock; one host, one clock), summed: LSB's D_o. */
static int paced_oneway(int sys, int fd, double *x, int n, int m, double want, double *out)
{
    double sum = 0;
    for (int i = 0; i < m; i++) {
        double ack = 0, arrived = 0, t0 = bench_now();
        int rc = sys == SEEDS_RAW ? rawtcp_sink_at(fd, RAWTCP_TUNED, x, (size_t)n * 8, &ack, &arrived)
                                  : numrpc_call("sink_at", n, x, &ack, &arrived);
        if (rc != 0) return failed(sys == SEEDS_RAW ? "raw paced sink" : "sink_at", sys == SEEDS_RAW ? NUMRPC_EIO : rc);
        if (ack != want || arrived < t0) {
            fprintf(stderr, "numrpc-bench-seeds: paced one-way: ack %g (want %g), arrival %+.6f s\n", ack,
                    want, arrived - t0);
            return -1;
        }
        sum += arrived - t0;
    }
    *out = sum / m;
    return 0;
}

/* A blocking call per buffer (LSB's D_2): the whole wait for each reply. */
static int twoway(int sys, int fd, double *x, int n, int m, double want, double *out)
{
    double t0 = bench_now();
    for (int i = 0; i < m; i++) {
        double ack = 0;
        int rc = sys == SEEDS_RAW ? rawtcp_sink(fd, RAWTCP_TUNED, x, (size_t)n * 8, &ack)
                                  : numrpc_call("sink", n, x, &ack);
        if (rc != 0) return failed(sys == SEEDS_RAW ? "raw sink" : "sink", sys == SEEDS_RAW ? NUMRPC_EIO : rc);
        if (ack != want) {
            fprintf(stderr, "numrpc-bench-seeds: two-way: ack %g, want %g\n", ack, want);
            return -1;
        }
    }
    *out = (bench_now() - t0) / m;
    return 0;
}

/* Unpaced: m buffers sent back to back (numrpc: asynchronous calls), the
 * replies counted only after the last one is sent. */
static int stream(int sys, int fd, double *x, int n, int m, double want, double *acks, double *out)
{
    double t0 = bench_now();
    if (sys == SEEDS_RAW) {
        if (rawtcp_sink_stream(fd, RAWTCP_TUNED, x, (size_t)n * 8, m) != 0)
            return failed("raw sink stream", NUMRPC_EIO);
    } else {
        for (int i = 0; i < m; i++) {
            int id, rc = numrpc_call_async(&id, "sink", n, x, &acks[i]);
            if (rc != NUMRPC_OK) return failed("sink (async)", rc);
        }
        int rc = numrpc_wait_all();
        if (rc != NUMRPC_OK) return failed("wait_all after sinks", rc);
    }
    *out = (bench_now() - t0) / m;
    for (int i = 0; sys == SEEDS_NUMRPC && i < m; i++)
        if (acks[i] != want) {
            fprintf(stderr, "numrpc-bench-seeds: stream: ack %d is %g, want %g\n", i, acks[i], want);
            return -1;
        }
    return 0;
}

int seeds_lsb_round(const struct seeds_options *o, int fd, int r, double *x, double *acks,
                    struct lsb_results *res)
{
    int count = r < 0 ? (o->null_count < 100 ? o->null_count : 100) : o->null_count;
    for (int k = 0; k < SEEDS_NSYS; k++) {
        int sys = (k + (r > 0 ? r : 0)) % SEEDS_NSYS; /* who goes first alternates */
        double v;
        if (null_twoway(sys, fd, count, &v) != 0) return -1;
        keep(&res->null2[sys], r, v);
        if (null_oneway(sys, fd, count, &v) != 0) return -1;
        keep(&res->null1[sys], r, v);
    }
    for (int s = 0; s < o->nlsb; s++) {
        int n = (int)(o->lsb_sizes[s] / 8), m = r < 0 ? 2 : seeds_lsb_calls(o, o->lsb_sizes[s]);
        x[0] = 1000.0 * (r + 2) + s; /* a new ack every round and size */
        double want = rawtcp_sink_ack(x, (size_t)n * 8);
        for (int k = 0; k < SEEDS_NSYS; k++) {
            int sys = (k + (r > 0 ? r : 0)) % SEEDS_NSYS;
            double v;
            if (paced_oneway(sys, fd, x, n, m, want, &v) != 0) return -1;
            keep(&res->tput[s][LSB_PACED1][sys], r, v);
            if (twoway(sys, fd, x, n, m, want, &v) != 0) return -1;
            keep(&res->tput[s][LSB_TWOWAY][sys], r, v);
            if (stream(sys, fd, x, n, m, want, acks, &v) != 0) return -1;
            keep(&res->tput[s][LSB_STREAM][sys], r, v);
        }
    }
    return 0;
}
