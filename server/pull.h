/* pull.h -- a handle fetched from another server for a call here: the
 * worker connects to the source as a client and redeems a ticket (pull.c). */
#ifndef NUMRPC_SERVER_PULL_H
#define NUMRPC_SERVER_PULL_H

#include "config.h"
#include "error.h"
#include "handles.h"
#include "msg_data.h"

/* DATA_PULL's work, for owner: q->source must be one of cfg->pull_from
 * (else NUMRPC_EAUTH); a new handle of q->shape is reserved under the
 * budgets (NUMRPC_ELIMIT) before any connection; then the source is asked,
 * with cfg's peer TLS CA and token, for the ticket's handle (a DATA_GET),
 * which must come shaped as announced (type, rows, cols; else
 * NUMRPC_EPROTO), every byte checked before it is written, all within
 * q->deadline_ms (bounded by --io-timeout).  0 with the new handle
 * published in *ref, or the error with nothing left behind. */
int pull_fetch(const server_config *cfg, const char *owner, const msg_data_pull *q, handle_ref *ref, err_t *err);

#endif
