/* conn.h -- the dispatcher's state (its tables of connections and workers)
 * and what happens to a connection in its hands (conn.c). */
#ifndef NUMRPC_SERVER_CONN_H
#define NUMRPC_SERVER_CONN_H

#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "control.h"
#include "registry.h"
#include "slots.h"
#include "wire.h"

enum conn_state { CONN_FREE = 0, CONN_IDLE, CONN_QUEUED, CONN_HELD };
enum worker_state { WORKER_DEAD = 0, WORKER_FREE, WORKER_HOLDING };
enum event_kind { EV_LISTEN = 1, EV_SIGNAL, EV_CONN, EV_WORKER, EV_ADMIN, EV_LINGER };

/* Refused connections stay open until the peer has read the refusal and
 * closed (or a few seconds pass): closing at once would reset the
 * connection under the client's first request and lose the reply. */
#define LINGER_MAX 64
#define LINGER_SECONDS 3.0

typedef struct conn {
    int fd;
    int state;
    int worker;   /* index when HELD */
    double since; /* monotonic seconds: idle since (when IDLE) */
    uint64_t calls;      /* calls completed on it (as of its last loan), and
                            control messages the dispatcher answered on it */
    uint64_t calls_base; /* its worker's slot->calls when lent            */
    int fresh;           /* new, waiting for its first bytes: counts as queued */
    control_state ctl;   /* a STATUS or ADMIN being read; admin challenge */
} conn;

/* A worker process as the dispatcher sees it (pool.c). */
typedef struct worker {
    pid_t pid;
    int ctl;
    int state;
    int conn;          /* index when HOLDING */
    int release_sent;
    int kill_reason;   /* 0, or NUMRPC_ETIMEDOUT / ECANCELLED when the dispatcher killed it */
    unsigned generation; /* of the configuration and modules it loaded */
} worker;

/* The dispatcher: one, on dispatcher_run's stack; its tables are malloc'd
 * there and freed when it returns. */
typedef struct dispatcher {
    server_config *cfg;
    int argc;
    char **argv;
    int epfd, listen_fd, sig_fd, admin_fd;
    int spare_fd;       /* /dev/null, given up to accept-and-refuse on EMFILE */
    module_list mods;    /* live registrations; workers inherit them     */
    unsigned generation; /* bumped by every change workers must reload   */
    double drain_until;  /* SIGTERM: monotonic seconds to give up at     */
    conn *conns;
    int nconns_cap, nconns_open;
    worker *workers;
    worker_slot *slots; /* shared memory, one per worker index */
    int nworkers_cap;
    int *queue; /* conn indices waiting for a worker */
    int qhead, qlen;
    int stopping;        /* SIGTERM received: draining                   */
    int linger_fd[LINGER_MAX];
    double linger_since[LINGER_MAX];
    uint64_t restarts;   /* workers that died and were replaced          */
    double started;      /* monotonic seconds at start (uptime)          */
    wire_writer notice;  /* writes error replies for crashed calls */
    wire_reader control_in; /* parses a STATUS or ADMIN read whole (control.c) */
} dispatcher;

/* ---- The event loop's descriptors ---- */
/* Watches fd for input; its events carry kind and index. */
void conn_watch(dispatcher *d, int fd, int kind, int index);
void conn_unwatch(dispatcher *d, int fd);

/* ---- A connection's states ---- */
/* Waits in epoll (IDLE) since the given monotonic seconds. */
void conn_make_idle(dispatcher *d, int c, double since);
/* Waits for a worker (QUEUED). */
void conn_enqueue(dispatcher *d, int c);
/* Came back from a worker (or its call was answered here): waits in
 * epoll, or is turned away while draining. */
void conn_back(dispatcher *d, int c, double since);
/* Closes connection c (not in epoll unless IDLE). */
void conn_close(dispatcher *d, int c);
/* Answers c with an error, then lets it linger until the peer closes. */
void conn_refuse(dispatcher *d, int c, int code, const char *detail);
/* The same for a socket that never became a connection. */
void conn_refuse_fd(dispatcher *d, int fd, int code, const char *detail);
/* A lingering refused peer sent more or closed (force: time is up). */
void conn_linger(dispatcher *d, int i, int force);
/* Lingering and idle connections whose time is up are closed. */
void conn_tick(dispatcher *d, double now);

/* ---- Looking ---- */
/* True when fd has bytes to read. */
int conn_readable(int fd);
/* New connections still waiting for their first bytes (they count as
 * queued). */
int conn_count_fresh(const dispatcher *d);

#endif
