/* server.h -- internals of numrpc-server shared by its files: configuration,
 * the routine registry, the worker slots, and the session handlers. */
#ifndef NUMRPC_SERVER_H
#define NUMRPC_SERVER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "iface.h"
#include "stubmod.h"
#include "wire.h"

/* ---- Configuration (command line) ---- */
typedef struct server_config {
    const char *bind_addr;     /* default "0.0.0.0"                          */
    int port;                  /* 0 = pick a free port                       */
    const char *stubs_dir;     /* directory of stub modules (*.so)           */
    const char *port_file;     /* if set, the chosen port is written there   */
    size_t packet_size;        /* default reply packet size                  */
    int min_workers;           /* pre-forked workers                         */
    int max_workers;           /* workers at most (concurrent calls)         */
    int max_connections;       /* open connections at most                   */
    uint64_t max_call_bytes;   /* array memory of one call at most           */
    uint64_t max_array_elems;  /* elements of one array at most              */
    int io_timeout_ms;         /* a stalled read or write inside a call      */
    int blas_threads;          /* BLAS threads per call (0 = cores)          */
    int keepalive_ms;          /* keepalive period while a routine computes  */
    int quiet;
} server_config;

/* ---- Registry: the routines a worker can run ---- */
typedef struct routine {
    iface_t iface;             /* decoded descriptor (owned)                 */
    uint8_t *blob;             /* its encoding, sent to clients (owned)      */
    size_t blob_len;
    stub_thunk_fn thunk;
} routine;

typedef struct registry {
    routine *items;            /* malloc'd array                             */
    size_t count;
    void (*set_blas_threads)(int); /* OpenBLAS's, if a module links it      */
} registry;

/* Loads the built-in routines (ping) and every *.so module in dir (dir may
 * be NULL).  A module that fails to load is reported on stderr and skipped. */
int registry_load(registry *reg, const char *dir, err_t *err);
const routine *registry_find(const registry *reg, const char *name);
void registry_free(registry *reg);

/* ---- Worker slots: one per worker, in memory shared with the dispatcher,
 * so that a crash or a deadline can be reported without any message. ---- */
enum slot_state {
    SLOT_IDLE = 0,      /* waiting for a message                          */
    SLOT_READING = 1,   /* reading a request                              */
    SLOT_COMPUTING = 2, /* the routine runs; the dispatcher may keepalive */
    SLOT_KEEPALIVE = 3, /* the dispatcher is writing a keepalive packet   */
    SLOT_REPLYING = 4   /* writing the reply                              */
};

typedef struct worker_slot {
    _Atomic int state;
    uint32_t call_id;
    int conn_id;
    int pipelined;       /* bytes of a next request were already buffered */
    double started;      /* monotonic seconds when the routine started    */
    double deadline;     /* monotonic seconds, 0 = none                    */
    double last_keepalive;
    char routine[IFACE_MAX_NAME + 1];
    _Atomic uint64_t calls;      /* calls completed by this worker       */
} worker_slot;

/* ---- Argument memory, reused across a worker's calls (arena.c) ---- */
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

/* ---- Sessions: what a worker does with one message ---- */
typedef struct session {
    const server_config *cfg;
    const registry *reg;
    worker_slot *slot;
    wire_reader reader;
    wire_writer writer;
    call_arena arena;
    int fd;
    int conn_id;
} session;

/* Reads one message from s->fd and answers it.  Returns 0 when the
 * connection may go on, or an error when it must be closed. */
int session_serve_one(session *s, err_t *err);
/* Writes a REPLY carrying only an error (used by the dispatcher too). */
int session_reply_error(wire_writer *w, uint32_t call_id, int code,
                        const char *detail, err_t *err);

/* ---- Processes ---- */
/* The worker's main loop; never returns. */
void worker_main(const server_config *cfg, int ctl_fd, worker_slot *slot)
    __attribute__((noreturn));
/* Accepts connections and lends them to workers until told to stop. */
int dispatcher_run(const server_config *cfg, int listen_fd, err_t *err);

/* Messages on the dispatcher <-> worker control socket. */
enum ctl_kind {
    CTL_ASSIGN = 1,   /* dispatcher -> worker: a connection (fd attached) */
    CTL_RELEASE = 2,  /* dispatcher -> worker: give it back when idle     */
    CTL_RETURNED = 3, /* worker -> dispatcher: connection given back      */
    CTL_CLOSED = 4    /* worker -> dispatcher: connection ended           */
};
typedef struct ctl_msg {
    int kind;
    int conn_id;
} ctl_msg;

#endif
