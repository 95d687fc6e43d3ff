/* slots.c -- the workers' shared slots as every process sees them: the
 * calls in flight that replies and STATUS report, the memory they hold. */
#define _GNU_SOURCE
#include "slots.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The table slots_create made: its slots' memory files and where they are
 * mapped side by side (the dispatcher's; the spawner and workers inherit
 * it).  Each CALL reply counts the calls in flight in it beside its own:
 * the load it carries to the client (docs/protocol.md). */
static worker_slot *table = MAP_FAILED;
static int *table_fds;
static int table_count;

void slots_destroy(void)
{
    if (table != MAP_FAILED) munmap(table, (size_t)table_count * SLOT_BYTES);
    table = MAP_FAILED;
    for (int i = 0; table_fds && i < table_count; i++)
        if (table_fds[i] >= 0) close(table_fds[i]);
    free(table_fds);
    table_fds = NULL;
    table_count = 0;
}

int slots_create(int n, worker_slot **out, err_t *err)
{
    if (sysconf(_SC_PAGESIZE) != SLOT_BYTES)
        return err_set(err, NUMRPC_ESERVER, "worker slots: pages of %ld bytes, not %d", sysconf(_SC_PAGESIZE),
                       SLOT_BYTES);
    /* The address range first, then each slot's file mapped into its page. */
    table = mmap(NULL, (size_t)n * SLOT_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    table_fds = calloc((size_t)n, sizeof *table_fds);
    if (table == MAP_FAILED || table_fds == NULL) {
        free(table_fds);
        table_fds = NULL;
        return err_set(err, NUMRPC_ENOMEM, "worker slots: %s", strerror(errno));
    }
    table_count = n;
    for (int i = 0; i < n; i++) table_fds[i] = -1;
    for (int i = 0; i < n; i++) {
        int fd = memfd_create("numrpc-slot", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        table_fds[i] = fd;
        if (fd < 0 || ftruncate(fd, SLOT_BYTES) != 0 ||
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
            mmap(&table[i], SLOT_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
            err_set(err, NUMRPC_ESERVER, "worker slot %d: %s", i, strerror(errno));
            slots_destroy();
            return -1;
        }
    }
    *out = table;
    return 0;
}

const int *slots_fds(int *n)
{
    *n = table_count;
    return table_fds;
}

int slots_confine(int index)
{
    for (int i = 0; i < table_count; i++) {
        if (i == index) continue;
        /* A descriptor opened read-only: its mapping can never be made
         * writable (mprotect refuses), whatever the routine does. */
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", table_fds[i]);
        int ro = open(path, O_RDONLY | O_CLOEXEC);
        void *p = ro < 0 ? MAP_FAILED : mmap(&table[i], SLOT_BYTES, PROT_READ, MAP_SHARED | MAP_FIXED, ro, 0);
        if (ro >= 0) close(ro);
        if (p == MAP_FAILED) return -1;
    }
    return 0;
}

uint32_t slots_in_flight(const worker_slot *except)
{
    uint32_t n = 0;
    for (int i = 0; i < table_count; i++) n += &table[i] != except && atomic_load(&table[i].state) != SLOT_IDLE;
    return n;
}

uint64_t slots_memory_held(const worker_slot *self)
{
    uint64_t sum = 0;
    for (int i = 0; i < table_count; i++)
        if (&table[i] != self)
            sum += atomic_load(&table[i].call_bytes) + atomic_load(&table[i].kept_bytes);
    return sum;
}

/* Announce, then count: of two workers reserving at once, each sees at
 * least the other's announcement (sequentially consistent atomics), so the
 * sum a worker admits itself under includes every reservation before it. */
int slots_reserve_memory(worker_slot *self, uint64_t bytes, uint64_t cap, uint64_t *others)
{
    atomic_store(&self->call_bytes, bytes);
    uint64_t sum = 0;
    for (int i = 0; i < table_count; i++)
        if (&table[i] != self) sum += atomic_load(&table[i].call_bytes);
    *others = sum;
    if (bytes <= cap && sum <= cap - bytes) return 0;
    atomic_store(&self->call_bytes, 0);
    return -1;
}

void slots_keep_memory(worker_slot *self, uint64_t kept)
{
    atomic_store(&self->call_bytes, 0);
    atomic_store(&self->kept_bytes, kept);
}
