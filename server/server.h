/* server.h -- internals of numrpc-server shared by its files: configuration,
 * the routine registry, the worker slots, and the session handlers. */
#ifndef NUMRPC_SERVER_H
#define NUMRPC_SERVER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

#include "error.h"
#include "iface.h"
#include "stubmod.h"
#include "msg.h"
#include "wire.h"

/* ---- Configuration (command line and configuration file, config.c) ---- */
#define CONFIG_PATH_MAX 1024
typedef struct server_config {
    char bind_addr[256];       /* default "0.0.0.0"                          */
    int port;                  /* 0 = pick a free port                       */
    char stubs_dir[CONFIG_PATH_MAX]; /* directory of stub modules (*.so)     */
    char port_file[CONFIG_PATH_MAX]; /* if set, the chosen port is written  */
    char config_file[CONFIG_PATH_MAX]; /* --config: reread on SIGHUP        */
    char admin_socket[CONFIG_PATH_MAX]; /* local admin socket ("" = none)  */
    char module_dir[CONFIG_PATH_MAX]; /* private copies of registered modules */
    size_t packet_size;        /* default reply packet size                  */
    int min_workers;           /* pre-forked workers                         */
    int max_workers;           /* workers at most (concurrent calls)         */
    int max_connections;       /* open connections at most                   */
    int max_queue;             /* connections waiting for a worker (0 = any) */
    uint64_t max_call_bytes;   /* array memory of one call at most           */
    uint64_t max_array_elems;  /* elements of one array at most              */
    int max_call_seconds;      /* wall time of one routine (0 = no limit)    */
    uint64_t max_worker_memory; /* address space of a worker (0 = no limit) */
    int idle_timeout_ms;       /* an idle connection is closed (0 = never)   */
    int drain_timeout_ms;      /* SIGTERM: calls in flight get this long     */
    int io_timeout_ms;         /* a stalled read or write inside a call      */
    int blas_threads;          /* BLAS threads per call (0 = cores)          */
    int keepalive_ms;          /* keepalive period while a routine computes  */
    int quiet;
    int log_level;             /* enum log_level (default notice)           */
    char admin_secret_file[CONFIG_PATH_MAX]; /* remote admin secret ("" = off) */
} server_config;

/* Log levels: a line is written when its level <= the configured one. */
enum log_level { LOG_LEVEL_ERROR = 0, LOG_LEVEL_WARN, LOG_LEVEL_NOTICE, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

/* The defaults of every option. */
void config_defaults(server_config *cfg);
/* Sets option key (a long option name without "--") from its text. */
int config_set(server_config *cfg, const char *key, const char *value, err_t *err);
/* Reads "key = value" lines ('#' starts a comment). */
int config_load_file(server_config *cfg, const char *path, err_t *err);
/* Defaults, then the file named by --config (if any), then the command line
 * (which wins).  *help is set when --help was given. */
int config_build(server_config *cfg, int argc, char **argv, int *help, err_t *err);
/* Clamps values to their sane ranges (after any change). */
void config_normalise(server_config *cfg);
void config_usage(FILE *out);

/* ---- Registry: the routines a worker can run ---- */
typedef struct routine {
    iface_t iface;             /* decoded descriptor (owned)                 */
    uint8_t *blob;             /* its encoding, sent to clients (owned)      */
    size_t blob_len;
    stub_thunk_fn thunk;
    int stat_index;            /* its counters in the shared table, or -1   */
} routine;

typedef struct registry {
    routine *items;            /* malloc'd array                             */
    size_t count;
    void (*set_blas_threads)(int); /* OpenBLAS's, if a module links it      */
    const server_config *cfg;  /* its log lines' (registry_load's caller's) */
} registry;

/* Modules changed by `admin register|unregister` while the server runs.
 * The dispatcher owns the list; workers inherit it when they fork. */
typedef struct module_entry {
    char name[IFACE_MAX_NAME + 1]; /* the module's name (Module in its IDL)  */
    char path[CONFIG_PATH_MAX];    /* private content-addressed copy; "" =
                                      unregistered (hide it from stubs dir) */
    uint64_t hash;                 /* of the file's bytes                    */
} module_entry;

typedef struct module_list {
    module_entry *items;
    size_t count;
} module_list;

/* Loads the built-in routines (ping), every *.so module in cfg's stub
 * directory whose name the list does not override, then the list's
 * modules.  A module that fails to load is logged and skipped. */
int registry_load(registry *reg, const server_config *cfg, const module_list *mods, err_t *err);
/* Checks that path is a stub module of this server's ABI; its module name
 * goes to name (size IFACE_MAX_NAME + 1).  Loads it: call only in a process
 * that exits afterwards. */
int registry_probe(const char *path, char *name, err_t *err);
const routine *registry_find(const registry *reg, const char *name);
void registry_free(registry *reg);

/* ---- Worker slots: one per worker, in memory shared with the dispatcher,
 * so that a crash or a deadline can be reported without any message. ---- */
enum slot_state {
    SLOT_IDLE = 0,      /* waiting for a message                          */
    SLOT_READING = 1,   /* reading a request                              */
    SLOT_COMPUTING = 2, /* the routine runs; the dispatcher may keepalive */
    SLOT_KEEPALIVE = 3, /* the dispatcher is writing a keepalive packet   */
    SLOT_REPLYING = 4,  /* writing the reply                              */
    SLOT_FILEIO = 5     /* the routine reads a client file: connection busy */
};

typedef struct worker_slot {
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

/* ---- Per-routine counters, shared by every worker (stats.c) ----
 * One entry per routine version (name + hash), claimed by the first worker
 * that loads it, updated with atomic adds by every call, read by the
 * dispatcher for STATUS.  Times go into log-spaced buckets (4 per octave
 * from 1 us): p99 is the upper edge of its bucket, at most 19% high. */
#define STATS_MAX_ROUTINES 512
#define STATS_BUCKETS 128
typedef struct routine_stats {
    _Atomic int state;                 /* 0 free, 1 being filled, 2 ready */
    char name[IFACE_MAX_NAME + 1];
    char module[IFACE_MAX_NAME + 1];
    uint64_t hash;
    _Atomic unsigned generation;       /* newest worker generation offering it */
    _Atomic uint64_t calls, errors, bytes_in, bytes_out, nanos;
    _Atomic uint64_t buckets[STATS_BUCKETS];
} routine_stats;

typedef struct stats_table {
    _Atomic unsigned newest; /* newest generation whose workers registered */
    _Atomic int lock;        /* held while an entry is claimed            */
    /* Connections waiting for a worker, as the dispatcher last saw them
     * (every pass of its loop); CALL replies carry it (session_set_peers). */
    _Atomic int load_queued;
    routine_stats items[STATS_MAX_ROUTINES];
} stats_table;

/* The dispatcher maps it before the first fork; workers inherit it. */
extern stats_table *server_stats;
/* Maps the table (shared, zeroed); NULL on failure. */
stats_table *stats_create(void);
void stats_destroy(stats_table *t);
/* A worker of this generation offers f: its entry's index, or -1. */
int stats_register(stats_table *t, const iface_t *f, unsigned generation);
/* One call of entry index (ignored when index < 0). */
void stats_record(stats_table *t, int index, int failed, uint64_t bytes_in, uint64_t bytes_out,
                  double seconds);
/* The 99th percentile of an entry's times in seconds (0 when no call). */
double stats_p99(const routine_stats *r);

/* Writes one log line "numrpc-server[pid]: text" in one write(2) when
 * level is enabled by cfg (--log-level; --quiet keeps errors only). */
void server_log(const server_config *cfg, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int server_log_enabled(const server_config *cfg, int level);
/* A command-line tool's message (`numrpc-server admin`): "tool: text",
 * unfiltered (text brings its newline). */
void server_log_tool(const char *tool, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The structured line of one call (level info): routine, bytes, seconds,
 * outcome and, for an error, its code and cause. */
void server_log_call(const server_config *cfg, const char *name, uint64_t bytes_in, uint64_t bytes_out,
                     double seconds, int code, const char *cause);

/* ---- Sessions: what a worker does with one message ---- */
/* The CALL being served: what its counters and log line need. */
typedef struct call_record {
    const routine *r;   /* NULL until the routine is found              */
    int done;           /* recorded already                             */
    double t0;          /* monotonic seconds when its header arrived    */
    uint64_t in0, out0; /* reader bytes consumed / writer bytes framed  */
} call_record;

typedef struct session {
    const server_config *cfg;
    const registry *reg;
    worker_slot *slot;
    msg_conn conn;      /* the borrowed connection (msg_conn_attach per loan) */
    call_arena arena;
    int conn_id;
    uint32_t last_type; /* type of the last message served */
    call_record rec;    /* of the CALL being served */
} session;

/* A CALL's header arrived (in0: reader bytes consumed before it). */
void session_call_begin(session *s, uint64_t in0);
/* The CALL ends with code (detail for an error): counters and log line,
 * before its reply goes out (so a STATUS after the reply sees it). */
void session_call_done(session *s, int code, const char *detail);
/* Bytes consumed from the connection so far (read-ahead excluded). */
uint64_t session_bytes_consumed(const session *s);

/* Every worker's slot (shared memory, n of them), from which each CALL
 * reply counts the calls in flight beside its own: the load it carries to
 * the client (docs/protocol.md).  Set by the dispatcher before it forks. */
void session_set_peers(const worker_slot *slots, int n);
/* Calls in flight now: the worker slots that are not idle, leaving out
 * `except` (NULL: count every slot). */
uint32_t session_calls_in_flight(const worker_slot *except);

/* Reads one message from s->fd and answers it.  Returns 0 when the
 * connection may go on, or an error when it must be closed. */
int session_serve_one(session *s, err_t *err);
/* Writes a REPLY carrying only an error (used by the dispatcher too). */
int session_reply_error(wire_writer *w, uint32_t call_id, int code,
                        const char *detail, err_t *err);

/* ---- A call's files (files.c): staged files in a private directory
 * (mkdtemp, removed after the call), remote files read through the
 * connection in cached blocks, and the routine services of stubmod.h. ---- */
typedef struct files_call {
    session *s;
    uint32_t call_id;
    const iface_t *f;
    void **argv;
    char dir[512];                    /* "" when the call stages nothing */
    void *rfiles[IFACE_MAX_PARAMS];   /* rfile handles, owned            */
} files_call;

extern const stub_services server_stub_services;
/* Clears, and reports, a routine's stub_services.fail for the next call. */
void files_routine_begin(void);
int files_routine_failed(err_t *call_err);
/* Fills the file slots of argv (paths in a new private directory). */
int files_call_begin(files_call *fc, session *s, uint32_t call_id, const iface_t *f,
                     void **argv, err_t *call_err);
/* Reads the request's file section (limit: max_call_bytes per file). */
int files_call_read(files_call *fc, err_t *call_err, err_t *err);
/* True when a remote-file exchange broke the connection. */
int files_call_broken(const files_call *fc);
/* Remote-file bytes fetched by the call. */
uint64_t files_call_fetched(const files_call *fc);
/* Frees paths and handles and removes the directory; safe to repeat. */
void files_call_end(files_call *fc);

/* ---- Cancel (cancel.c) ---- */
/* While slot's worker computes, takes a CANCEL for its call from the head
 * of fd and returns 1 with the slot held (the worker cannot reply): the
 * caller kills the worker.  0 when there is none. */
int cancel_poll(int fd, worker_slot *slot);

/* ---- Processes ---- */
/* In a child just forked from parent: it is killed when parent dies, even
 * in the middle of a routine (and leaves at once if parent is already gone). */
static inline void server_child_dies_with(pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
}
/* The worker's main loop; never returns. */
void worker_main(const server_config *cfg, const module_list *mods, int ctl_fd,
                 worker_slot *slot) __attribute__((noreturn));
/* Accepts connections and lends them to workers until SIGTERM has drained
 * them; argv is kept to rebuild the configuration on SIGHUP. */
int dispatcher_run(server_config *cfg, int argc, char **argv, int listen_fd, err_t *err);

/* ---- Local administration (admin.c) ---- */
/* `numrpc-server admin ...`: the client side. */
int admin_client_main(int argc, char **argv);
/* The default admin socket path for a port (into buf). */
void admin_default_socket(int port, char *buf, size_t len);
/* The listening Unix socket (mode 0600), or -1 with err set. */
int admin_listen(const char *path, err_t *err);
/* Reads one request line from an accepted admin connection into line,
 * checking the peer's credentials (same user or root).  0 or an error. */
int admin_read_request(int fd, char *line, size_t len, err_t *err);
/* Copies the module at src into dir as <hash>.so (content-addressed). */
int admin_store_module(const char *src, const char *dir, module_entry *out, err_t *err);

/* ---- Messages the dispatcher answers itself (control.c) ----
 * STATUS and ADMIN, on a connection the dispatcher holds (a new one, or
 * one that came back idle): read without blocking, answered at once, so
 * that status works while every worker is busy. */
#define CONTROL_MAX_PAYLOAD 4096u
#define ADMIN_NONCE_BYTES 32u
typedef struct control_state {
    uint8_t *buf;       /* malloc'd while a control message is read   */
    size_t got;         /* bytes of it in buf                         */
    uint8_t nonce[ADMIN_NONCE_BYTES]; /* remote admin challenge       */
    int has_nonce;      /* one use: cleared by the answer             */
} control_state;

/* What STATUS reports beside the shared counters (the dispatcher's view). */
typedef struct status_view {
    double uptime;
    int workers, max_workers, in_flight, queued, connections, draining;
    uint64_t restarts;
    unsigned generation;
} status_view;

typedef struct control_ctx {
    const server_config *cfg;
    status_view view;
    wire_writer *writer; /* the dispatcher's reply writer */
    wire_reader *reader; /* the dispatcher's, for a packet read whole */
    /* Runs a checked admin command line ("register /abs/path.so",
     * "unregister NAME", "list"); the reply "ok ..." or "error ...". */
    int (*admin_exec)(void *owner, const char *line, char *reply, size_t len);
    void *owner;
} control_ctx;

enum control_next { CONTROL_NONE = 0, CONTROL_PARTIAL, CONTROL_READY, CONTROL_BROKEN, CONTROL_BAD };
/* Looks at what fd has to read: not a control message (CONTROL_NONE: a
 * worker reads it), part of one (PARTIAL: wait), one whole (READY), a
 * peer that closed (BROKEN) or a control message too large or cut (BAD). */
int control_next(int fd, control_state *cs);
/* Answers the message read by control_next (READY).  0, or -1 when the
 * connection must be closed. */
int control_serve(control_ctx *ctx, int fd, control_state *cs);
/* Frees what cs holds (the connection closes or is reused). */
void control_forget(control_state *cs);
/* Loads --admin-secret-file (checked: a regular file not readable by group
 * or others, at least 16 bytes).  0, or an error. */
int control_load_secret(const char *path, uint8_t *secret, size_t cap, size_t *len, err_t *err);

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
