/* failover.c -- the one retry rule of every call, and the error of a call
 * that failed on the servers it tried, naming each one's failure. */
#include "failover.h"

#include <stdio.h>
#include <string.h>

/* A server's failure among several is told in at most this many characters. */
#define FAILOVER_NOTE_MAX 120

failover_step failover_decide(const failover_facts *f)
{
    if (f->rc == NUMRPC_OK || f->touched) return FAILOVER_REPORT;
    if (f->rc == NUMRPC_ESTALE) return f->again < FAILOVER_AGAIN_MAX ? FAILOVER_AGAIN : FAILOVER_REPORT;
    if (f->conn_only && f->rc == NUMRPC_EIO && f->again < FAILOVER_AGAIN_MAX) return FAILOVER_AGAIN;
    switch (f->rc) {
    case NUMRPC_ECONNECT: /* nothing was sent */
    case NUMRPC_EBUSY:    /* refused before it ran */
    case NUMRPC_EVERSION:
    case NUMRPC_EAUTH:
    case NUMRPC_ENOENT:   /* another server may offer it */
    case NUMRPC_EIO:      /* lost before any result arrived */
    case NUMRPC_EPROTO:
        return FAILOVER_NEXT;
    default: /* a crash, a limit, the deadline, a cancel, the routine's error */
        return FAILOVER_REPORT;
    }
}

int failover_tried_before(const endpoint *eps, int i)
{
    for (int j = 0; j < i; j++)
        if (strcmp(eps[j].label, eps[i].label) == 0) return 1;
    return 0;
}

/* "label: detail" into out (at most room characters of it); a detail that
 * names the server already is not prefixed again. */
static void labelled(char *out, size_t size, int room, const char *label, const char *detail)
{
    if (strstr(detail, label)) {
        snprintf(out, size, "%.*s", room, detail);
        return;
    }
    int lab = (int)strnlen(label, (size_t)room / 2);
    snprintf(out, size, "%.*s: %.*s", lab, label, room - lab - 2, detail);
}

void failover_note(failover_log *log, const char *label, const err_t *err)
{
    size_t len = strlen(log->text);
    if (log->count > 0 && len + 2 < sizeof log->text) {
        memcpy(log->text + len, "; ", 3);
        len += 2;
    }
    log->last = len;
    labelled(log->text + len, sizeof log->text - len, FAILOVER_NOTE_MAX, label, err->detail);
    log->count++;
}

void failover_explain(const failover_log *log, const char *routine, const char *label, int exhausted,
                      int not_resent, err_t *err)
{
    if (log->count == 0) return;
    const char *resent = not_resent ? " (results had begun to arrive in the caller's memory: not resent)" : "";
    if (exhausted && log->count > 1) {
        err_set(err, err->code, "%s: every server failed: %s%s", routine, log->text, resent);
        return;
    }
    char last[ERR_DETAIL_MAX]; /* whole: it is the call's outcome */
    labelled(last, sizeof last, ERR_DETAIL_MAX - 1, label, err->detail);
    if (log->count > 1 && log->last >= 2)
        err_set(err, err->code, "%s%s (after %.*s)", last, resent, (int)(log->last - 2), log->text);
    else
        err_set(err, err->code, "%s%s", last, resent);
}
