/* client.h -- internals of libnumrpc shared by its files: configuration,
 * pooled connections, the interface cache and per-thread call state. */
#ifndef NUMRPC_CLIENT_H
#define NUMRPC_CLIENT_H

#include <pthread.h>

#include "error.h"
#include "iface.h"
#include "numrpc.h"
#include "wire.h"

#define CLIENT_MAX_SERVERS 16
#define CLIENT_HOST_MAX 256

/* One server endpoint. */
typedef struct endpoint {
    char host[CLIENT_HOST_MAX];
    int port;
    char label[CLIENT_HOST_MAX + 8]; /* "host:port" */
} endpoint;

/* A connection to one server, owned by whoever took it from the pool. */
typedef struct client_conn {
    int fd;
    wire_reader reader;
    wire_writer writer;
    int hello_pending;   /* our HELLO's reply has not been read yet */
    int reused;          /* it came from the pool (may have gone stale) */
    char label[CLIENT_HOST_MAX + 8];
    struct client_conn *next;
} client_conn;

/* A cached interface: shared, reference counted; replaced when stale. */
typedef struct iface_ref {
    iface_t iface;
    char label[CLIENT_HOST_MAX + 8];
    int refs;
    int stale;
    struct iface_ref *next;
} iface_ref;

/* ---- Configuration (config.c) ---- */
/* Loads the configuration once (numrpc_init or the environment). */
int client_ensure_init(err_t *err);
/* The configured servers; fills up to CLIENT_MAX_SERVERS, returns count. */
int client_servers(endpoint *out, err_t *err);
size_t client_packet_size(void);
/* Splits "numrpc://host:port/routine" into its endpoint and routine name;
 * returns 1 if name was such a URL, 0 if a plain name, or an error. */
int client_parse_url(const char *name, endpoint *ep, char *routine,
                     size_t routine_len, err_t *err);
int endpoint_set(endpoint *ep, const char *hostport, err_t *err);

/* ---- Connections (conn.c) ---- */
/* A connection to ep: an idle pooled one or a new one (HELLO sent). */
int conn_acquire(const endpoint *ep, client_conn **out, err_t *err);
/* Gives a healthy connection back to the pool. */
void conn_release(client_conn *c);
/* Closes and frees a connection that failed. */
void conn_discard(client_conn *c);
/* Reads the HELLO reply if still pending. */
int conn_finish_hello(client_conn *c, err_t *err);
/* Reads a REPLY for call_id: status and detail.  A non-OK status is
 * returned with the server's detail in err; the message is then ended. */
int conn_read_reply_status(client_conn *c, uint32_t call_id, err_t *err);
/* Closes every pooled connection. */
void conn_pool_clear(void);
uint32_t client_next_call_id(void);

/* ---- Interface cache (iface_cache.c) ---- */
/* The interface of name on c's server, fetched once and cached. */
int iface_cache_get(client_conn *c, const char *name, iface_ref **out, err_t *err);
void iface_cache_put(iface_ref *ref);
/* Forgets ref (the server said its version changed). */
void iface_cache_invalidate(iface_ref *ref);
void iface_cache_clear(void);

/* ---- Per-thread results (call.c) ---- */
/* Records err as the calling thread's last error; returns its code. */
int client_fail(const err_t *err);
void client_succeed(void);

extern pthread_mutex_t client_lock;

#endif
