/* arena.c -- a worker's memory for call arguments, kept from one call to the
 * next: fresh pages cost a fault each, more than moving the data. */
#include "arena.h"

#include <string.h>
#include <sys/mman.h>

#define ARENA_ALIGN 64

/* Calls larger than this get their memory back to the system afterwards. */
#define ARENA_KEEP_BYTES (512ULL << 20)

size_t arena_round(size_t bytes)
{
    return (bytes + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
}

int arena_reserve(call_arena *a, size_t bytes, err_t *err)
{
    if (bytes <= a->cap) return 0;
    arena_release(a);
    size_t cap = bytes < (1u << 20) ? (1u << 20) : bytes;
    void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return err_set(err, NUMRPC_ENOMEM, "cannot map %zu bytes for the call's arrays", cap);
    a->base = p;
    a->cap = cap;
    return 0;
}

void arena_after_call(call_arena *a)
{
    if (a->cap > ARENA_KEEP_BYTES) arena_release(a);
}

void arena_release(call_arena *a)
{
    if (a->base) munmap(a->base, a->cap);
    a->base = NULL;
    a->cap = 0;
}
