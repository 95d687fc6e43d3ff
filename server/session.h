/* session.h -- what a worker does with one message on the connection it
 * borrowed: HELLO, LIST, GET_IFACE, PROBE, CALL (session.c). */
#ifndef NUMRPC_SERVER_SESSION_H
#define NUMRPC_SERVER_SESSION_H

#include <stdint.h>

#include "arena.h"
#include "config.h"
#include "error.h"
#include "msg.h"
#include "registry.h"
#include "slots.h"
#include "tokens.h"

/* The CALL being served: what its counters and log line need. */
typedef struct call_record {
    const routine *r;   /* NULL until the routine is found              */
    int done;           /* recorded already                             */
    double t0;          /* monotonic seconds when its header arrived    */
    uint64_t in0, out0; /* reader bytes consumed / writer bytes framed  */
    int has_phases;     /* an MPI routine: its job's phases below       */
    double phases[3];   /* scatter, compute, gather seconds (rank 0's)  */
    uint32_t mpi_kept;  /* arguments the job held already (not sent)    */
    uint64_t mpi_kept_bytes, mpi_sent_bytes; /* theirs; the worker's to rank 0 */
} call_record;

/* A worker's one session, reused across its loans (worker.c owns it). */
typedef struct session {
    const server_config *cfg;
    const registry *reg;
    const token_table *tokens; /* the server's (empty: no tokens)           */
    char identity[TOKEN_NAME_MAX + 1]; /* the token the connection proved */
    char account[TOKEN_NAME_MAX + 1];  /* whom its handles' budgets charge: the
                                          token, or the peer's address without
                                          tokens (worker.c, at each loan) */
    worker_slot *slot;
    msg_conn conn;      /* the borrowed connection (msg_conn_attach per loan) */
    call_arena arena;
    uint64_t heap_bytes; /* string memory of the call in progress (callmem.h) */
    int trim_pending;    /* calls left memory that an idle worker gives back */
    int conn_id;
    uint32_t last_type; /* type of the last message served */
    /* Monotonic seconds the first bytes of the next message were seen (the
     * dispatcher's, with the loan; else when the worker's poll woke): a
     * CALL's deadline counts from there.  0: not known (a message read
     * ahead with the one before): from when its header is read. */
    double next_began;
    /* Wakes the dispatcher's loop (NULL: nobody to tell): a routine starts
     * under a near deadline (the dispatcher stops it at it), or a request
     * the dispatcher asked about (slot wake_when_read) is read. */
    void (*wake_dispatcher)(const struct session *s);
    call_record rec;    /* of the CALL being served */
} session;

/* A routine whose deadline is nearer than this many seconds when it starts
 * wakes the dispatcher (session.wake_dispatcher); its ticks see later ones. */
#define SESSION_DEADLINE_NEAR 1.0

/* A call whose strings took this much heap gives the heap's free pages
 * back when it ends (malloc_trim costs ~0.2 ms: not after every call). */
#define SESSION_HEAP_TRIM_BYTES ((uint64_t)1 << 20)

/* Reads one message from the connection and answers it.  0 when the
 * connection may go on, or an error when it must be closed. */
int session_serve_one(session *s, err_t *err);
/* True when calls left memory (arena, heap) that an idle worker gives back. */
int session_trim_pending(const session *s);
/* Gives that memory back: the whole arena and the heap's free pages. */
void session_trim(session *s);
/* The connection went back: nothing of its caller stays in this worker's
 * packet buffers or call arena (where the arguments and results are). */
void session_forget_caller(session *s);

#endif
