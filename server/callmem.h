/* callmem.h -- the memory one CALL asks the server for, judged before any
 * of it is allocated: per-call limits, the untravelled budget, the
 * server-wide cap (callmem.c; docs/admin.md, "Memory"). */
#ifndef NUMRPC_SERVER_CALLMEM_H
#define NUMRPC_SERVER_CALLMEM_H

#include <stdint.h>

#include "config.h"
#include "error.h"
#include "iface.h"
#include "slots.h"

/* The bytes behind one call's arguments, from its shapes. */
typedef struct call_memory {
    uint64_t array_bytes;  /* the arena block: every numeric array, aligned    */
    uint64_t string_bytes; /* heap: string tables and output string buffers    */
    uint64_t sent_bytes;   /* array bytes the request carries                  */
    uint64_t untravelled;  /* bytes beyond those the request fills: out and
                              work arrays, gaps of strided arrays, string
                              tables and output strings                        */
} call_memory;

/* The untravelled memory a call may ask for: --max-untravelled-bytes plus
 * this many times the array bytes it sends. */
#define CALLMEM_SENT_FACTOR 4

/* Measures the call's memory and checks it against the per-call limits:
 * elements per array, bytes per call, the untravelled budget
 * (NUMRPC_ELIMIT naming the routine, the bytes and the option). */
int callmem_measure(const server_config *cfg, const iface_t *f, const iface_shape *shapes,
                    call_memory *m, err_t *err);
/* Reserves the call's bytes in slot against --max-server-memory: 0, or
 * NUMRPC_EBUSY while the calls of other workers hold too much
 * (NUMRPC_ELIMIT when the call alone is over the cap). */
int callmem_reserve(const server_config *cfg, worker_slot *slot, const iface_t *f,
                    const call_memory *m, err_t *err);
/* After a call: whether the worker may keep kept bytes of arena until its
 * next call (the workers' calls and kept arenas together then stay within
 * half of --max-server-memory). */
int callmem_may_keep(const server_config *cfg, const worker_slot *slot, uint64_t kept);

#endif
