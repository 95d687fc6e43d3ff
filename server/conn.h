/* conn.h -- the dispatcher's state (its tables of connections and workers)
 * and what happens to a connection in its hands (conn.c). */
#ifndef NUMRPC_SERVER_CONN_H
#define NUMRPC_SERVER_CONN_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "config.h"
#include "control.h"
#include "last_words.h"
#include "tokens.h"
#include "registry.h"
#include "slots.h"
#include "tls.h"
#include "wire.h"

/* HANDSHAKE: in epoll (for input or output), its TLS handshake under way
 * (handshake.c); IDLE: in epoll, waiting for (the rest of) a request; QUEUED: whole,
 * waiting for a worker (or in the dispatcher's hands, not in epoll); HELD:
 * lent to a worker; WRITING: a reply of the dispatcher's waits for the
 * socket to take it (in epoll for output; nothing more is read meanwhile). */
enum conn_state { CONN_FREE = 0, CONN_IDLE, CONN_QUEUED, CONN_HELD, CONN_WRITING, CONN_HANDSHAKE };
enum worker_state { WORKER_DEAD = 0, WORKER_FREE, WORKER_HOLDING };
enum event_kind { EV_LISTEN = 1, EV_SIGNAL, EV_CONN, EV_WORKER, EV_ADMIN, EV_LINGER, EV_WORDS };

/* Refused connections stay open until the peer has read the refusal and
 * closed (or a few seconds pass): closing at once would reset the
 * connection under the client's first request and lose the reply. */
#define LINGER_MAX 64
#define LINGER_SECONDS 3.0

/* A reply the dispatcher writes (STATUS, ADMIN, a crash notice) is framed
 * whole in memory, at most this large, then sent without blocking. */
#define CONN_OUT_MAX (4u << 20)
/* A peer that leaves more than this unread in the kernel gets no further
 * reply from the dispatcher until it reads (its requests wait unread). */
#define CONN_UNREAD_MAX (64u << 10)

/* Connections from one peer are counted by this key: an IPv4 address, or
 * the /64 prefix of an IPv6 one (one host's usual share). */
typedef struct peer_key {
    unsigned char bytes[9]; /* family tag, then 4 or 8 address bytes */
} peer_key;

typedef struct conn {
    int fd;
    int state;
    int worker;   /* index when HELD */
    double since; /* monotonic seconds: idle since (when IDLE) */
    uint64_t calls;      /* calls completed on it (as of its last loan), and
                            control messages the dispatcher answered on it */
    uint64_t calls_base; /* its worker's slot->calls when lent            */
    double request_since; /* its next request is due whole: since then
                            (accepted, or its first bytes seen); 0 = none */
    double request_began; /* monotonic seconds its next request's first
                            bytes were seen (0: none yet); a CALL's
                            deadline counts from there (ctl_msg.arrived) */
    int edge;            /* IDLE with part of a request unread: watched
                            edge-triggered, woken by each new segment */
    peer_key peer;
    control_state ctl;   /* a HELLO, STATUS or ADMIN being read; admin challenge */
    transport_bytes out; /* a reply not yet taken by the socket (WRITING) */
    size_t out_sent;     /* bytes of out already sent                     */
    int out_watched;     /* WRITING, in epoll for room (bytes unsent); else
                            all sent and waiting for the peer to read    */
    double out_since;    /* monotonic seconds WRITING began               */
    int out_sealed;      /* out holds TLS records already (else plaintext) */
    tls_acceptor *acceptor; /* HANDSHAKE: its engine, the dispatcher's (freed when it ends) */
    transport tp;        /* its stream (connio.h): tcp from the accept, tls-record
                            from the handshake's end; its fd is fd, closed
                            by the dispatcher itself, not through tp    */
    tls_stream_state *tls; /* TLS: its stream state, from the handshake's end
                            (NULL before, and on a plain server)         */
    int tls_fd;          /* the state's memory file, lent with the socket (-1: none) */
    int tls_look;        /* IDLE with TLS bytes buffered in its state: the
                            loop looks at it without an epoll event        */
} conn;

/* A worker process as the dispatcher sees it (pool.c). */
typedef struct worker {
    pid_t pid;
    int ctl;
    int state;
    int conn;          /* index when HOLDING */
    int release_sent;
    int kill_reason;   /* 0, or NUMRPC_ETIMEDOUT / ECANCELLED when the dispatcher killed it */
    int stream_cut;    /* a keepalive went out in part: the connection is out of step */
    unsigned generation; /* of the configuration and modules it loaded */
    double fresh_since; /* lent a request it has not been seen to start: monotonic
                           seconds it was lent (0: none; pool.c receiving) */
    double fresh_mark;  /* its slot's last_active when lent                */
    last_words words;   /* its stdout and stderr (last_words.h; fd -1: none) */
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
    token_table tokens;  /* --token-file's; workers inherit them (none: off) */
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
    wire_writer notice;  /* frames the dispatcher's replies into memory */
    wire_reader control_in; /* parses a HELLO, STATUS or ADMIN read whole (control.c) */
    tls_context *tls;       /* --tls-cert's (NULL: plain TCP), freed by main */
    int tls_looks;          /* connections with tls_look set */
} dispatcher;

/* ---- The event loop's descriptors ---- */
/* Watches fd for input; its events carry kind and index. */
void conn_watch(dispatcher *d, int fd, int kind, int index);
/* Watches fd for the given epoll events. */
void conn_watch_events(dispatcher *d, int fd, uint32_t events, int kind, int index);
void conn_unwatch(dispatcher *d, int fd);

/* ---- A connection's states ---- */
/* Waits in epoll (IDLE) since the given monotonic seconds. */
void conn_make_idle(dispatcher *d, int c, double since);
/* Waits in epoll for the rest of a request that began arriving (IDLE, and
 * --request-timeout runs). */
void conn_wait_arrival(dispatcher *d, int c);
/* Waits for a worker (QUEUED). */
void conn_enqueue(dispatcher *d, int c);
/* Came back from a worker (or its call was answered here): waits in
 * epoll, or is turned away while draining. */
void conn_back(dispatcher *d, int c, double since);
/* While draining, an idle connection that has made no call yet (a HELLO
 * at most) is owed one: it must come within --request-timeout, or the
 * connection is closed (request_overdue) instead of holding the drain. */
void conn_call_due(dispatcher *d, int c);
/* Closes connection c (not in epoll unless IDLE). */
void conn_close(dispatcher *d, int c);
/* The dispatcher's writer, framing into c's outgoing bytes (before a reply
 * is written for conn_send). */
wire_writer *conn_writer(dispatcher *d, int c);
/* Sends what conn_writer framed (or more of it, when a WRITING socket has
 * room), without blocking: when the socket has taken all of it the
 * connection comes back (conn_back); else it waits WRITING for the socket
 * (--io-timeout); a failed socket is closed. */
void conn_send(dispatcher *d, int c);
/* Writes bytes to fd if the socket takes them now: the count sent (maybe
 * part), 0 when it takes none, -1 when the socket failed. */
ssize_t conn_send_now(int fd, const void *bytes, size_t len);
/* Sends what conn_writer framed for c if the socket takes it now, then
 * lets c linger until the peer closes (a refused token). */
void conn_send_last(dispatcher *d, int c);
/* Answers c with an error, then lets it linger until the peer closes. */
void conn_refuse(dispatcher *d, int c, int code, const char *detail);
/* The same for a socket that is no connection yet (accepted and turned
 * away at once): answered plain, before any TLS. */
void conn_refuse_fd(dispatcher *d, int fd, int code, const char *detail);
/* A lingering refused peer sent more or closed (force: time is up). */
void conn_linger(dispatcher *d, int i, int force);
/* Lingering and idle connections whose time is up are closed. */
void conn_tick(dispatcher *d, double now);

/* ---- Looking ---- */
/* Connection c's TLS stream state, or NULL on a plain server. */
tls_stream_state *conn_tls(const dispatcher *d, int c);
/* True when connection c has bytes to read (on TLS: opened plaintext). */
int conn_readable(const dispatcher *d, int c);
/* The peer key of a socket address. */
peer_key conn_peer_key(const struct sockaddr_storage *sa);
/* Open connections from the peer with this key. */
int conn_count_peer(const dispatcher *d, const peer_key *k);
/* The effective --max-connections-per-peer. */
int conn_peer_limit(const server_config *cfg);

#endif
