/* arena.h -- a worker's memory for call arguments, reused across its calls
 * (arena.c). */
#ifndef NUMRPC_SERVER_ARENA_H
#define NUMRPC_SERVER_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct call_arena {
    uint8_t *base; /* mmap'd; owned by the worker's session */
    size_t cap;
} call_arena;

/* Rounds a block up to the arena's alignment. */
size_t arena_round(size_t bytes);
/* Makes at least bytes available at a->base (old contents are lost). */
int arena_reserve(call_arena *a, size_t bytes, err_t *err);
/* Gives very large arenas back to the system after their call. */
void arena_after_call(call_arena *a);
void arena_release(call_arena *a);

#endif
