/* slots.c -- the workers' shared slots as every process sees them: the
 * calls in flight that replies and STATUS report. */
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
