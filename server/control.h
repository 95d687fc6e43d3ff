/* control.h -- the messages the dispatcher answers itself (control.c):
 * HELLO, AUTH, STATUS and ADMIN, on a connection it holds (a new one, or one that
 * came back idle), read without blocking and answered at once, so that
 * status works while every worker is busy and a handshake takes none. */
#ifndef NUMRPC_SERVER_CONTROL_H
#define NUMRPC_SERVER_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "access.h"
#include "config.h"
#include "error.h"
#include "tls.h"
#include "wire.h"

#define CONTROL_MAX_PAYLOAD 4096u
#define ADMIN_NONCE_BYTES 32u
typedef struct control_state {
    uint8_t *buf;       /* malloc'd while a control message is read   */
    size_t got;         /* bytes of it in buf                         */
    uint8_t nonce[ADMIN_NONCE_BYTES]; /* remote admin challenge       */
    int has_nonce;      /* one use: cleared by the answer             */
    uint32_t type;      /* PROTO_HELLO, AUTH, STATUS or ADMIN (buf != NULL) */
    conn_access access; /* the connection's token, once HELLO named one */
} control_state;

/* What STATUS reports beside the shared counters (the dispatcher's view). */
typedef struct status_view {
    double uptime;
    int workers, max_workers, in_flight, queued, connections, draining;
    int tls, tokens; /* every connection is TLS; tokens are required */
    uint64_t restarts;
    unsigned generation;
    uint64_t handles, handle_bytes; /* data handles kept (handles.c) */
    uint64_t pulled_bytes, lent_bytes; /* handle bytes moved between servers */
} status_view;

typedef struct control_ctx {
    const server_config *cfg;
    const token_table *tokens; /* --token-file's (none: anyone may ask)  */
    status_view view;
    wire_writer *writer; /* the dispatcher's, framing into memory: the
                            dispatcher sends it without blocking */
    wire_reader *reader; /* the dispatcher's, for a packet read whole */
    /* Runs a checked admin command line ("register /abs/path.so",
     * "unregister NAME", "list"); the reply "ok ..." or "error ...". */
    int (*admin_exec)(void *owner, const char *line, char *reply, size_t len);
    void *owner;
    const tls_stream_state *tls; /* the connection's TLS stream (NULL: plain) */
} control_ctx;

enum control_next { CONTROL_NONE = 0, CONTROL_PARTIAL, CONTROL_READY, CONTROL_BROKEN, CONTROL_BAD };
/* Looks at what the stream t has to read: not a control message (CONTROL_NONE: a
 * worker reads it), part of one (PARTIAL: wait), one whole (READY), a
 * peer that closed (BROKEN) or a control message too large or cut (BAD). */
int control_next(transport *t, control_state *cs);
/* Answers the message read by control_next (READY).  0, CONTROL_CLOSE_AFTER
 * when the connection must close once the reply has gone out (a refused
 * token), or -1 when it must be closed now. */
#define CONTROL_CLOSE_AFTER 1
int control_serve(control_ctx *ctx, int fd, control_state *cs);
/* Frees what cs holds (the connection closes or is reused). */
void control_forget(control_state *cs);
/* Loads --admin-secret-file (checked: a regular file not readable by group
 * or others, at least 16 bytes).  0, or an error. */
int control_load_secret(const char *path, uint8_t *secret, size_t cap, size_t *len, err_t *err);

#endif
