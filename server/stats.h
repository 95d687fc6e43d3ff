/* stats.h -- per-routine counters shared by every worker (stats.c): one
 * entry per routine version (name + hash), claimed by the first worker
 * that loads it, updated with atomic adds by every call, read by the
 * dispatcher for STATUS.  Times go into log-spaced buckets (4 per octave
 * from 1 us): p99 is the upper edge of its bucket, at most 19% high. */
#ifndef NUMRPC_SERVER_STATS_H
#define NUMRPC_SERVER_STATS_H

#include <stdatomic.h>
#include <stdint.h>

#include "iface.h"

#define STATS_MAX_ROUTINES 512
#define STATS_BUCKETS 128
#define STATS_CODES 32 /* errors by code: index -code (the last: any code beyond) */
typedef struct routine_stats {
    _Atomic int state;                 /* 0 free, 1 being filled, 2 ready */
    char name[IFACE_MAX_NAME + 1];
    char module[IFACE_MAX_NAME + 1];
    uint64_t hash;
    _Atomic unsigned generation;       /* newest worker generation offering it */
    _Atomic uint64_t calls, errors, bytes_in, bytes_out, nanos;
    _Atomic uint64_t buckets[STATS_BUCKETS];
    _Atomic uint64_t by_code[STATS_CODES];
    /* Routines of the MPI job: nanoseconds of its phases (scatter, compute,
     * gather, as rank 0 timed them) over their successful calls. */
    _Atomic uint64_t mpi_nanos[3];
    /* And their arguments rank 0 held already (not sent), those bytes, and
     * the bytes workers sent to rank 0 (docs/mpi.md "Handles"). */
    _Atomic uint64_t mpi_kept, mpi_kept_bytes, mpi_sent_bytes;
} routine_stats;

/* The limits of the handle store (HANDLE_LIMITS, handles.h). */
#define STATS_HANDLE_LIMITS 6

/* The dispatcher's own figures, stored by its loop (handles at each tick)
 * for readers in other threads (the HTTP port's /metrics: metrics.c). */
typedef struct dispatcher_gauges {
    _Atomic int workers, busy, queued, connections, draining;
    _Atomic uint64_t restarts, handles, handle_bytes, pulled_bytes, lent_bytes;
    _Atomic uint64_t handle_refusals[STATS_HANDLE_LIMITS]; /* by enum handle_limit */
} dispatcher_gauges;

typedef struct stats_table {
    _Atomic unsigned newest; /* newest generation whose workers registered */
    _Atomic int lock;        /* held while an entry is claimed            */
    /* Connections waiting for a worker, as the dispatcher last saw them
     * (every pass of its loop); CALL replies carry it (reply.c). */
    _Atomic int load_queued;
    dispatcher_gauges gauges;
    routine_stats items[STATS_MAX_ROUTINES];
} stats_table;

/* The dispatcher maps it before the first fork; workers inherit it. */
extern stats_table *server_stats;
/* Maps the table (shared, zeroed); NULL on failure. */
stats_table *stats_create(void);
void stats_destroy(stats_table *t);
/* A worker of this generation offers f: its entry's index, or -1. */
int stats_register(stats_table *t, const iface_t *f, unsigned generation);
/* One call of entry index (ignored when index < 0) that ended with code
 * (NUMRPC_OK or an error). */
void stats_record(stats_table *t, int index, int code, uint64_t bytes_in, uint64_t bytes_out, double seconds);
/* One successful MPI call of entry index: its phases (scatter, compute,
 * gather s), the arguments the job held already and their bytes, the
 * bytes sent to rank 0. */
void stats_record_mpi(stats_table *t, int index, const double phases[3], uint32_t kept, uint64_t kept_bytes,
                      uint64_t sent_bytes);
/* The calls of an entry that took at most 2^k microseconds, for k = 0 ..
 * n - 1 (cumulative, from the buckets: exact at those edges); returns
 * their total over every bucket. */
uint64_t stats_cumulative(const routine_stats *r, uint64_t *at_most, int n);
/* The 99th percentile of an entry's times in seconds (0 when no call). */
double stats_p99(const routine_stats *r);

#endif
