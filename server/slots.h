/* slots.h -- one slot per worker in memory shared with the dispatcher, so
 * that a crash, a deadline or the server's load is seen without a message. */
#ifndef NUMRPC_SERVER_SLOTS_H
#define NUMRPC_SERVER_SLOTS_H

#include <stdatomic.h>
#include <stdint.h>

#include "error.h"
#include "iface.h"
#include "protocol.h"

enum slot_state {
    SLOT_IDLE = 0,      /* waiting for a message                          */
    SLOT_READING = 1,   /* reading a request                              */
    SLOT_COMPUTING = 2, /* the routine runs; the dispatcher may keepalive */
    SLOT_KEEPALIVE = 3, /* the dispatcher is writing a keepalive packet   */
    SLOT_REPLYING = 4,  /* writing the reply                              */
    SLOT_FILEIO = 5     /* the routine reads a client file: connection busy */
};

/* A slot fills a page of its own: a worker maps its own slot writable and
 * every other read-only (slots_confine). */
#define SLOT_BYTES 4096

typedef struct __attribute__((aligned(SLOT_BYTES))) worker_slot {
    _Atomic int state;
    uint32_t call_id;
    int conn_id;
    int pipelined;       /* bytes of a next request were already buffered */
    double started;      /* monotonic seconds when the routine started    */
    double deadline;     /* monotonic seconds, 0 = none                    */
    double last_keepalive;
    double last_active;  /* monotonic seconds at the end of its last message */
    int limit_deadline;  /* the deadline is the server's --max-call-seconds */
    _Atomic int draining; /* SIGTERM: give the connection back after a call */
    char routine[IFACE_MAX_NAME + 1];
    _Atomic uint64_t calls;      /* calls completed by this worker       */
    int stat_index;      /* counters of the routine running (-1 = none)    */
    unsigned generation; /* of the configuration the worker loaded         */
    /* Memory for calls (callmem.c): the call's in progress, counted against
     * --max-server-memory, and the arena kept between calls; 0 once dead. */
    _Atomic uint64_t call_bytes;
    _Atomic uint64_t kept_bytes;
    /* Rank 0 of the MPI job has taken this worker's call (mpi_call.c): a
     * worker that dies so may leave the job computing for nobody. */
    _Atomic int mpi_serving;
    /* The dispatcher holds requests from this connection's address until
     * one of its requests is read (--max-receiving-per-peer): the worker
     * wakes it when this one is. */
    _Atomic int wake_when_read;
    /* Progress of the call (progress.c): set by the worker at the routine's
     * start, read by the dispatcher, which sends PROGRESS frames. */
    int progress_ms;      /* the period the call asked; 0 = no frames      */
    double progress_last; /* monotonic seconds of the last frame (or try)  */
    double began;         /* monotonic seconds the request's first byte came */
    double predicted;     /* seconds the call should take; -1 = unknown    */
    double flops_rate;    /* this worker's measured speed, flop/s; 0 = none */
    /* The routine's own words (stub_services.progress), written by the
     * routine in the worker or a child of it: the dispatcher trusts none
     * of it (bounded copy, NUL forced, fraction checked).  progress_seq is
     * odd while a write is under way. */
    _Atomic uint32_t progress_seq;
    double progress_fraction;
    char progress_message[PROTO_PROGRESS_MESSAGE_MAX + 1];
} worker_slot;

/* The table of n slots, made once in main before anything forks: each slot
 * a memory file of its own (its size sealed), mapped writable here, side
 * by side, at *table.  0, or -1 with err set.  slots_destroy unmaps it. */
int slots_create(int n, worker_slot **table, err_t *err);
void slots_destroy(void);
/* The slots' memory files (n of them, the creator's), for a process that
 * must keep them open across a close of everything else (the spawner). */
const int *slots_fds(int *n);
/* In a new worker of slot index, before it closes the descriptors it does
 * not keep: every other slot is mapped again read-only, so that a routine
 * can read the others' load and memory but write only its own slot.
 * 0, or -1 (the worker must not serve). */
int slots_confine(int index);

/* Calls in flight now: the worker slots that are not idle, leaving out
 * `except` (NULL: count every slot). */
uint32_t slots_in_flight(const worker_slot *except);
/* Memory the workers other than self hold for calls: in progress, and
 * kept between calls (read slot by slot, not at once). */
uint64_t slots_memory_held(const worker_slot *self);
/* Sets self's call bytes if the calls of every worker together stay within
 * cap: 0, or -1 (self then holds none) with the others' call bytes in
 * *others.  Two workers reserving at once may both be refused, never both
 * admitted over the cap. */
int slots_reserve_memory(worker_slot *self, uint64_t bytes, uint64_t cap, uint64_t *others);
/* Self's call has ended, keeping kept bytes of arena (the dispatcher gives
 * 0 for a worker that died). */
void slots_keep_memory(worker_slot *self, uint64_t kept);

#endif
