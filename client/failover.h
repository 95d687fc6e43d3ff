/* failover.h -- the one retry rule of every call (blocking, asynchronous,
 * listed, ranked): again here, the next server, or reported (failover.c). */
#ifndef NUMRPC_CLIENT_FAILOVER_H
#define NUMRPC_CLIENT_FAILOVER_H

#include <stddef.h>

#include "config.h"
#include "error.h"

/* Times a call is tried again on one server (a changed interface, a
 * connection that was not the server's fault) before the rule reports. */
#define FAILOVER_AGAIN_MAX 2

/* What a call does after one server failed it. */
typedef enum failover_step {
    FAILOVER_REPORT = 0, /* the failure is the call's outcome            */
    FAILOVER_AGAIN,      /* the same server again                         */
    FAILOVER_NEXT        /* the next server not tried yet, if there is one */
} failover_step;

/* What is known of one failed try. */
typedef struct failover_facts {
    int rc;        /* the failure (a numrpc_error)                              */
    int touched;   /* a reply byte had reached the caller's memory              */
    int conn_only; /* the connection failed, not this call's server: a pooled
                      connection the server had closed while it was idle, or a
                      farm connection that failed before this call's request
                      left on it                                                */
    int again;     /* times the call was already tried again on this server    */
} failover_facts;

/* The rule, the same for every kind of call (docs/client.md, "Failover"):
 * once a reply byte reached the caller's memory, every failure is
 * reported (nothing is sent twice).  Before that, the call is tried again
 * on the same server, at most FAILOVER_AGAIN_MAX times, when the server's
 * interface changed (ESTALE: then reported) or the connection alone failed
 * (conn_only EIO: then the next server);
 * it moves on from a server it could not reach (ECONNECT), that refused it
 * (EBUSY, EVERSION, EAUTH), that does not offer the routine (ENOENT) or
 * that was lost or spoke garbage before any result arrived (EIO, EPROTO).
 * A crash, a limit, the deadline, a cancel and the routine's own errors
 * are the call's outcome. */
failover_step failover_decide(const failover_facts *f);

/* The failures of the servers one call tried, in order (in the call). */
typedef struct failover_log {
    int count;
    size_t last;               /* where the last one begins in text */
    char text[ERR_DETAIL_MAX]; /* "host:port: detail; ..." */
} failover_log;

/* Whether eps[i] names a server that comes earlier in eps (tried once). */
int failover_tried_before(const endpoint *eps, int i);
/* Notes server label's failure err (shortened). */
void failover_note(failover_log *log, const char *label, const err_t *err);
/* The error of a call of routine that failed on the servers it tried
 * (log: each one's failure; err: the last's, at server label, whose code
 * it keeps): it names that server, and the ones tried before; "every
 * server failed" with each one's failure when none was left to try
 * (exhausted).  not_resent: results had begun to arrive from the last,
 * which the call would otherwise have left. */
void failover_explain(const failover_log *log, const char *routine, const char *label, int exhausted,
                      int not_resent, err_t *err);

#endif
