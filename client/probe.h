/* probe.h -- measuring the link to a server with PROBE messages (probe.c),
 * for a metaserver ranking a server it has not measured. */
#ifndef NUMRPC_CLIENT_PROBE_H
#define NUMRPC_CLIENT_PROBE_H

#include <stdint.h>

#include "config.h"

#define PROBE_FIRST_BYTES (64u << 10) /* each way, then x4 ...             */
#define PROBE_LAST_BYTES (1u << 20)   /* ... up to this                    */
#define PROBE_MIN_SECONDS 0.02        /* a probe this long is measured enough */
#define PROBE_MAX_SECONDS 3.0         /* the whole measurement, at most     */
typedef struct probe_result {
    double latency;          /* best empty round trip, seconds          */
    uint64_t bytes;          /* both ways, of the last sized probe      */
    double seconds;          /* its wall time                           */
    double bytes_per_second; /* bytes / (seconds - latency)             */
} probe_result;
/* Measures the link to ep with PROBE messages (3 empty ones, then 64 KiB,
 * 256 KiB, 1 MiB each way until one takes PROBE_MIN_SECONDS; a shorter last
 * one is taken twice), on a pooled connection, within PROBE_MAX_SECONDS
 * (a server that does not answer fails the measurement, closing it). */
int probe_link(const endpoint *ep, probe_result *out, err_t *err);

#endif
