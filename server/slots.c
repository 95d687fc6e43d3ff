/* slots.c -- the workers' shared slots as every process sees them: the
 * calls in flight that replies and STATUS report, the memory they hold. */
#include "slots.h"

#include <stddef.h>

static const worker_slot *peer_slots; /* the dispatcher's; workers inherit them */
static int peer_count;

void slots_share(const worker_slot *slots, int n)
{
    peer_slots = slots;
    peer_count = n;
}

uint32_t slots_in_flight(const worker_slot *except)
{
    uint32_t n = 0;
    for (int i = 0; i < peer_count; i++) n += &peer_slots[i] != except && atomic_load(&peer_slots[i].state) != SLOT_IDLE;
    return n;
}

uint64_t slots_memory_held(const worker_slot *self)
{
    uint64_t sum = 0;
    for (int i = 0; i < peer_count; i++)
        if (&peer_slots[i] != self)
            sum += atomic_load(&peer_slots[i].call_bytes) + atomic_load(&peer_slots[i].kept_bytes);
    return sum;
}

/* Announce, then count: of two workers reserving at once, each sees at
 * least the other's announcement (sequentially consistent atomics), so the
 * sum a worker admits itself under includes every reservation before it. */
int slots_reserve_memory(worker_slot *self, uint64_t bytes, uint64_t cap, uint64_t *others)
{
    atomic_store(&self->call_bytes, bytes);
    uint64_t sum = 0;
    for (int i = 0; i < peer_count; i++)
        if (&peer_slots[i] != self) sum += atomic_load(&peer_slots[i].call_bytes);
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
