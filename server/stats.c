/* stats.c -- per-routine counters in memory shared by the workers (calls,
 * errors by code, bytes, a log-spaced time histogram). */
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>


stats_table *server_stats;

stats_table *stats_create(void)
{
    void *p = mmap(NULL, sizeof(stats_table), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p; /* anonymous maps start zeroed */
}

void stats_destroy(stats_table *t)
{
    if (t) munmap(t, sizeof *t);
}

static void lock(stats_table *t)
{
    int expected = 0;
    while (!atomic_compare_exchange_weak(&t->lock, &expected, 1)) {
        expected = 0;
        usleep(10);
    }
}

static void unlock(stats_table *t)
{
    atomic_store(&t->lock, 0);
}

int stats_register(stats_table *t, const iface_t *f, unsigned generation)
{
    if (t == NULL) return -1;
    int found = -1;
    lock(t);
    for (int i = 0; i < STATS_MAX_ROUTINES && found < 0; i++) {
        routine_stats *r = &t->items[i];
        if (atomic_load(&r->state) == 0) {
            snprintf(r->name, sizeof r->name, "%s", f->name);
            snprintf(r->module, sizeof r->module, "%s", f->module ? f->module : "");
            r->hash = f->hash;
            atomic_store(&r->state, 2);
            found = i;
        } else if (r->hash == f->hash && strcmp(r->name, f->name) == 0) {
            found = i;
        }
    }
    if (found >= 0) {
        routine_stats *r = &t->items[found];
        unsigned g = atomic_load(&r->generation);
        while (g < generation && !atomic_compare_exchange_weak(&r->generation, &g, generation)) {
        }
    }
    unsigned n = atomic_load(&t->newest);
    while (n < generation && !atomic_compare_exchange_weak(&t->newest, &n, generation)) {
    }
    unlock(t);
    return found;
}

/* Bucket b holds times in [2^((b-1)/4), 2^(b/4)) microseconds; bucket 0
 * everything under 1 us, the last one everything longer. */
static int bucket_of(double seconds)
{
    double us = seconds * 1e6;
    if (!(us >= 1.0)) return 0;
    int b = (int)ceil(4.0 * log2(us));
    if (b < 1) b = 1;
    return b >= STATS_BUCKETS ? STATS_BUCKETS - 1 : b;
}

void stats_record(stats_table *t, int index, int code, uint64_t bytes_in, uint64_t bytes_out, double seconds)
{
    if (t == NULL || index < 0 || index >= STATS_MAX_ROUTINES) return;
    routine_stats *r = &t->items[index];
    atomic_fetch_add_explicit(&r->calls, 1, memory_order_relaxed);
    if (code != NUMRPC_OK) {
        atomic_fetch_add_explicit(&r->errors, 1, memory_order_relaxed);
        int slot = code < 0 && -code < STATS_CODES ? -code : STATS_CODES - 1;
        atomic_fetch_add_explicit(&r->by_code[slot], 1, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&r->bytes_in, bytes_in, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->bytes_out, bytes_out, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->nanos, (uint64_t)(seconds > 0 ? seconds * 1e9 : 0), memory_order_relaxed);
    atomic_fetch_add_explicit(&r->buckets[bucket_of(seconds)], 1, memory_order_release);
}

void stats_record_mpi(stats_table *t, int index, const double phases[3], uint32_t kept, uint64_t kept_bytes,
                      uint64_t sent_bytes)
{
    if (t == NULL || index < 0 || index >= STATS_MAX_ROUTINES) return;
    routine_stats *r = &t->items[index];
    for (int k = 0; k < 3; k++)
        atomic_fetch_add_explicit(&r->mpi_nanos[k], (uint64_t)(phases[k] > 0 ? phases[k] * 1e9 : 0),
                                  memory_order_relaxed);
    atomic_fetch_add_explicit(&r->mpi_kept, kept, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->mpi_kept_bytes, kept_bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->mpi_sent_bytes, sent_bytes, memory_order_relaxed);
}

uint64_t stats_cumulative(const routine_stats *r, uint64_t *at_most, int n)
{
    uint64_t total = 0;
    for (int b = 0; b < STATS_BUCKETS; b++) {
        total += atomic_load(&r->buckets[b]);
        if (b % 4 == 0 && b / 4 < n) at_most[b / 4] = total; /* bucket 4k ends at 2^k us */
    }
    for (int k = (STATS_BUCKETS - 1) / 4 + 1; k < n; k++) at_most[k] = total;
    return total;
}

double stats_p99(const routine_stats *r)
{
    uint64_t counts[STATS_BUCKETS], total = 0;
    for (int b = 0; b < STATS_BUCKETS; b++) total += counts[b] = atomic_load(&r->buckets[b]);
    if (total == 0) return 0;
    uint64_t rank = (total * 99 + 99) / 100, seen = 0; /* ceil(0.99 n) */
    for (int b = 0; b < STATS_BUCKETS; b++) {
        seen += counts[b];
        if (seen >= rank) return pow(2.0, b / 4.0) * 1e-6;
    }
    return pow(2.0, (STATS_BUCKETS - 1) / 4.0) * 1e-6;
}
