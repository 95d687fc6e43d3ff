/* iface_cache.h -- interfaces fetched from servers, cached by server and
 * routine name, shared by reference count (iface_cache.c). */
#ifndef NUMRPC_CLIENT_IFACE_CACHE_H
#define NUMRPC_CLIENT_IFACE_CACHE_H

#include "config.h"
#include "conn.h"
#include "iface.h"

/* A cached interface: shared, reference counted; replaced when stale. */
typedef struct iface_ref {
    iface_t iface;
    char label[MSG_LABEL_MAX]; /* the server's */
    int refs;
    int stale;
    struct iface_ref *next;
} iface_ref;

/* The interface of name on c's server, fetched once and cached. */
int iface_cache_get(client_conn *c, const char *name, iface_ref **out, err_t *err);
void iface_cache_put(iface_ref *ref);
/* The cached interface of name on server label (a reference), or NULL;
 * never does I/O. */
iface_ref *iface_cache_peek(const char *label, const char *name);
/* Forgets ref (the server said its version changed). */
void iface_cache_invalidate(iface_ref *ref);
void iface_cache_clear(void);

/* The interface of routine from the first of the n servers eps that
 * answers (a pooled connection each, given back with conn_done); a server
 * the calls' retry rule moves on from (failover_decide: unreachable,
 * refused, lost, not offering the routine) passes the turn to the next,
 * any other error is the answer.  *at: the index of the server
 * that answered (may be NULL).  *out is a reference: iface_cache_put.
 * No wait outlasts deadline (conn_acquire; 0 = none). */
/* The interface of routine cached for any of the n servers eps (no I/O),
 * else iface_lookup's (without *at). */
int iface_find(const endpoint *eps, int n, const char *routine, double deadline, iface_ref **out, err_t *err);
int iface_lookup(const endpoint *eps, int n, const char *routine, double deadline, iface_ref **out, int *at,
                 err_t *err);
/* The interface of name (a routine or numrpc:// URL) from the first server
 * a call of it goes to: a reference (iface_cache_put) (routine_info.c). */
int client_iface_of(const char *name, iface_ref **ref, err_t *err);

#endif
