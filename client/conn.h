/* conn.h -- libnumrpc's connections to servers: a pool of idle ones per
 * server, the HELLO handshake (pipelined with the first request), the
 * status of a reply, and the one rule for giving a connection back. */
#ifndef NUMRPC_CLIENT_CONN_H
#define NUMRPC_CLIENT_CONN_H

#include <stdint.h>

#include "config.h"
#include "iface.h"
#include "msg.h"

/* A connection to one server, owned by whoever took it from the pool. */
typedef struct client_conn {
    msg_conn m;          /* the stream, its reader and writer, its label */
    int hello_pending;   /* our HELLO's (or AUTH's) reply has not been read yet */
    uint32_t auth_id;    /* the AUTH's call id (0: no token)            */
    int reused;          /* it came from the pool (may have gone stale) */
    int tls_resumed;     /* its TLS handshake resumed a session (0 for TCP) */
    char fingerprint[CLIENT_FINGERPRINT_MAX]; /* the server's certificate, under TLS ("" for TCP) */
    struct client_conn *next;
    /* The call whose rfile arguments this connection serves while its reply
     * is awaited (client_files.c); NULL when none. */
    const iface_t *rfile_iface;
    void *const *rfile_argv;
    int rfile_fd;          /* the open file of rfile_index, or -1 */
    uint32_t rfile_index;
    uint64_t rfile_bytes;  /* file bytes sent for the last call */
} client_conn;

/* A connection to ep: an idle pooled one or a new one (HELLO sent), over
 * TLS when a CA is configured (ep->fingerprint, if set, is the certificate
 * the server must present; a token's proof then covers the channel).  Until
 * it is given back, no wait on it (connecting, the handshake, an interface
 * fetch, the call) outlasts deadline (monotonic seconds; 0 = only the
 * sockets' own limits and a 10 s limit to connect). */
int conn_acquire(const endpoint *ep, double deadline, client_conn **out, err_t *err);
/* Gives a healthy connection back to the pool. */
void conn_release(client_conn *c);
/* Closes and frees a connection that failed (NULL: nothing). */
void conn_discard(client_conn *c);
/* After an exchange that ended with rc: back to the pool if the exchange
 * ended cleanly and the handshake is done, else closed (NULL: nothing). */
void conn_done(client_conn *c, int rc);
/* A connection is still usable after an exchange that ended with rc (the
 * server's error reply was read whole). */
int call_conn_usable(int rc);
/* The error of a new connection whose first exchange failed with rc: a TLS
 * server that ended the session with an alert about this client's
 * certificate (mutual TLS) is NUMRPC_EAUTH naming it; else rc, err as is. */
int conn_explain_failure(const client_conn *c, int rc, err_t *err);
/* Reads the HELLO reply if still pending. */
int conn_finish_hello(client_conn *c, err_t *err);
/* Reads a REPLY for call_id: status and detail.  A non-OK status is
 * returned with the server's detail in err; the message is then ended. */
int conn_read_reply_status(client_conn *c, uint32_t call_id, err_t *err);
/* Closes every pooled connection. */
void conn_pool_clear(void);
/* A fresh call id (unique in the process). */
uint32_t client_next_call_id(void);
/* Bytes of the reply just read on c, framing and keepalives since
 * keepalives0 (wire_reader_keepalives before it) included. */
uint64_t conn_reply_bytes(const client_conn *c, uint64_t keepalives0);

#endif
