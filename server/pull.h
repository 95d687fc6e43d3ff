/* pull.h -- a handle fetched from another server for a call here: the worker
 * asks the pull broker (pull.c), which alone connects to the source (pull_broker.c). */
#ifndef NUMRPC_SERVER_PULL_H
#define NUMRPC_SERVER_PULL_H

#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "handles.h"
#include "msg_data.h"

/* ---- The worker's side (pull.c) ---- */
/* This worker's channel to the broker (pull_broker_channel's fd), or -1:
 * without one, DATA_PULL fails with NUMRPC_ESERVER. */
void pull_set_channel(int fd);
/* DATA_PULL's work, for owner: q->source must be one of cfg->pull_from
 * (else NUMRPC_EAUTH); a new handle of q->shape is reserved under the
 * budgets (NUMRPC_ELIMIT) and its file made; then the broker is sent q and
 * the file's descriptor on the channel, and fills the file from the source
 * (a DATA_GET of the ticket, shaped as announced, else NUMRPC_EPROTO).  Its
 * answer is awaited within q->deadline_ms (bounded by --io-timeout) and a
 * grace.  0 with the new handle published in *ref, or the error with
 * nothing left behind.  Never opens a network connection. */
int pull_fetch(const server_config *cfg, const char *owner, const char *account, const msg_data_pull *q,
               handle_ref *ref, err_t *err);

/* ---- The broker (pull_broker.c): a process holding the credentials ---- */
/* Forks the broker, which keeps a copy of cfg and dies with this process;
 * called once by the dispatcher before any worker forks.  No broker when
 * cfg->pull_from is empty.  0, or NUMRPC_ESERVER. */
int pull_broker_start(const server_config *cfg, err_t *err);
/* A fresh channel for one worker: a SEQPACKET socketpair whose one end
 * goes to the broker; the other end is returned (close-on-exec; the
 * caller hands it to the worker, then closes its own copy).  -1 with err
 * NUMRPC_OK when there is no broker, with an error when it is gone. */
int pull_broker_channel(err_t *err);
/* SIGHUP: the broker takes the reread --pull-from, --peer-token-file,
 * --peer-tls-ca, --io-timeout and --handle-bytes (a broker that was not
 * started is not started by a reload). */
void pull_broker_reload(const server_config *cfg);
/* Whether pid is the broker (for the dispatcher's reaper). */
int pull_broker_is(pid_t pid);
/* Ends the broker (its fetches in flight too) and waits for it. */
void pull_broker_stop(void);

/* ---- Shared by both sides ---- */
/* Whether source ("host:port") is an entry of list ("a:1,b:2", spaces allowed). */
int pull_listed(const char *list, const char *source);
/* The time a whole fetch may take, in ms: the client's limit (asked, 0:
 * none), at most --io-timeout (which also bounds a server with no limit). */
int pull_limit_ms(const server_config *cfg, uint32_t asked);
/* The refusal of a source not in list (NUMRPC_EAUTH). */
int pull_refuse_source(const char *list, const char *source, err_t *err);
/* Time the broker gives a fetch beyond its limit before it kills it, and
 * the worker's wait for the answer beyond that (ms). */
#define PULL_KILL_GRACE_MS 1000
#define PULL_ANSWER_GRACE_MS 1000
/* A request or an answer on a channel at most (one datagram), and an
 * answer's detail at most (bytes). */
#define PULL_MSG_MAX 4096
#define PULL_DETAIL_MAX 400

#endif
