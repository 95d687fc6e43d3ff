/* failover.h -- a blocking call's servers, tried in order: which failures
 * move it on to the next server, and its error naming each one's (failover.c). */
#ifndef NUMRPC_CLIENT_FAILOVER_H
#define NUMRPC_CLIENT_FAILOVER_H

#include <stddef.h>

#include "config.h"
#include "error.h"

/* The failures of the servers one call tried, in order (on its stack). */
typedef struct failover_log {
    int count;
    size_t last;               /* where the last one begins in text */
    char text[ERR_DETAIL_MAX]; /* "host:port: detail; ..." */
} failover_log;

/* Whether a call that failed with rc on a server moves on to the next:
 * never once a reply byte reached the caller's memory (touched); otherwise
 * for a server it could not reach (ECONNECT), that refused it (EBUSY) or
 * that was lost before its results came (EIO), and, for a call the
 * metaserver ranked, one that no longer offers the routine (ENOENT) or
 * failed verification (EAUTH).  Crashes, limits, deadlines, cancels and
 * the routine's own errors are the call's outcome. */
int failover_moves_on(int rc, int touched, int ranked);
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
