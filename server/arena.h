/* arena.h -- a worker's memory for call arguments, reused across its calls
 * (arena.c). */
#ifndef NUMRPC_SERVER_ARENA_H
#define NUMRPC_SERVER_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Bytes an arena keeps mapped from one call to the next; what a call used
 * beyond them goes back to the system when it ends.  A 64 MiB round trip
 * uses 128 MiB: faulting half of it in again made each call 1.3-2.9x as long
 * (docs/benchmarks.md, "Memory of what does not travel"). */
#define ARENA_KEEP_BYTES ((size_t)256 << 20)

typedef struct call_arena {
    uint8_t *base;  /* mmap'd; owned by the worker's session            */
    size_t cap;     /* bytes mapped at base                             */
    size_t written; /* bytes from base that a call may have written since
                       they were mapped: beyond, the kernel's zero pages */
    size_t used;    /* bytes the call in progress was given              */
} call_arena;

/* Rounds a block up to the arena's alignment. */
size_t arena_round(size_t bytes);
/* Gives the call in progress bytes at a->base (old contents are kept
 * only where the mapping is kept: clear what must not show). */
int arena_reserve(call_arena *a, size_t bytes, err_t *err);
/* Zeroes [offset, offset + bytes) of the call's block where an earlier
 * call may have written; the rest is fresh from the kernel, zero already. */
void arena_clear(call_arena *a, size_t offset, size_t bytes);
/* The call has ended: what it used counts as written, and the mapping
 * beyond ARENA_KEEP_BYTES goes back to the system. */
void arena_after_call(call_arena *a);
/* Bytes the arena holds that a call wrote (resident, or soon to be). */
size_t arena_holding(const call_arena *a);
/* Nothing any call wrote stays readable: up to ARENA_FORGET_ZERO_BYTES are
 * zeroed, more are given back to the kernel (zero pages when touched
 * again); the mapping stays. */
#define ARENA_FORGET_ZERO_BYTES ((size_t)1 << 20)
void arena_forget(call_arena *a);
void arena_release(call_arena *a);

#endif
