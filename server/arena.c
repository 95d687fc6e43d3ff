/* arena.c -- a worker's memory for call arguments, kept from one call to the
 * next: fresh pages cost a fault each, more than moving the data. */
#include "arena.h"

#include <string.h>
#include <sys/mman.h>

#define ARENA_ALIGN 64

size_t arena_round(size_t bytes)
{
    return (bytes + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
}

int arena_reserve(call_arena *a, size_t bytes, err_t *err)
{
    if (bytes > a->cap) {
        arena_release(a);
        size_t cap = bytes < (1u << 20) ? (1u << 20) : bytes;
        void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return err_set(err, NUMRPC_ENOMEM, "cannot map %zu bytes for the call's arrays", cap);
        a->base = p;
        a->cap = cap;
    }
    a->used = bytes;
    return 0;
}

void arena_clear(call_arena *a, size_t offset, size_t bytes)
{
    if (offset >= a->written) return;
    size_t end = offset + bytes < a->written ? offset + bytes : a->written;
    memset(a->base + offset, 0, end - offset);
}

void arena_after_call(call_arena *a)
{
    if (a->used > a->written) a->written = a->used;
    a->used = 0;
    if (a->cap <= ARENA_KEEP_BYTES) return;
    /* The tail goes back whole: its pages, and its addresses (which count
     * against a worker's --max-worker-memory). */
    munmap(a->base + ARENA_KEEP_BYTES, a->cap - ARENA_KEEP_BYTES);
    a->cap = ARENA_KEEP_BYTES;
    if (a->written > a->cap) a->written = a->cap;
}

void arena_forget(call_arena *a)
{
    if (a->base == NULL || a->written == 0) return;
    /* A few pages are cheaper to zero than to fault in again; beyond, the
     * kernel drops them and the next touch finds zero pages. */
    if (a->written <= ARENA_FORGET_ZERO_BYTES) memset(a->base, 0, a->written);
    else madvise(a->base, a->written, MADV_DONTNEED);
    a->written = 0;
}

size_t arena_holding(const call_arena *a)
{
    return a->written;
}

void arena_release(call_arena *a)
{
    if (a->base) munmap(a->base, a->cap);
    a->base = NULL;
    a->cap = 0;
    a->written = 0;
    a->used = 0;
}
