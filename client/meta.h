/* meta.h -- libnumrpc's use of a metaserver (NUMRPC_METASERVER): ranked
 * servers for a call, leases, and reports of finished calls (meta.c). */
#ifndef NUMRPC_CLIENT_META_H
#define NUMRPC_CLIENT_META_H

#include "bind.h"
#include "callobj.h"
#include "config.h"
#include "msg_meta.h"

/* Sets the metaserver from "host:port" (NULL or "" = none) and forgets
 * leases; called by the configuration (config.c) with client_lock held. */
int meta_configure(const char *hostport, err_t *err);
/* True when a metaserver is configured. */
int meta_enabled(void);
/* The servers for call k (its routine set) with src's arguments, best
 * first (up to CLIENT_MAX_SERVERS): the metaserver's ranking (k->meta = 1,
 * k->meta_pred / meta_slots / meta_xfer in eps order, k->flops; k bound
 * against the interface the metaserver holds: the call's one bind), else
 * NUMRPC_SERVER or the servers it named lately (k->meta = 0); when none,
 * the metaserver's reason.  idle: predictions leave out queueing (an
 * asynchronous call's farm adds its own).  The count or an error. */
int meta_servers_for(call_obj *k, arg_source *src, endpoint *eps, int idle, err_t *err);
/* The server the metaserver ranks first for a data handle of bytes (a
 * query without a routine: any server, by transfer and load). */
int meta_place_data(uint64_t bytes, endpoint *ep, err_t *err);
/* The servers the metaserver ranks, best first, for a call bound in k
 * against f (shapes evaluated, handle arguments marked held) whose
 * handles put held[i].bytes on held[i].server: those bytes count as
 * already there.  One query, not kept as a lease.  Fills eps (room for
 * CLIENT_MAX_SERVERS); the count or an error. */
int meta_rank_held(const iface_t *f, const call_obj *k, const msg_meta_held *held, uint32_t nheld, endpoint *eps,
                   err_t *err);
/* Records a finished call (server, bytes, times from info) to report to
 * the metaserver with the next query; queued: its times include a wait in
 * the farm's queues (only its compute time teaches anything).  server_busy
 * is the load its reply carried: until their leases end, every lease
 * ranks that server with it.  Never does I/O; any lock may be held except
 * client_lock. */
void meta_note_call(const char *routine, double flops, double predicted, const numrpc_call_info *info,
                    uint32_t server_busy, int queued);
/* The servers the metaserver named lately (no I/O); the count. */
int meta_last_servers(endpoint *out, int max);
/* Sends the reports buffered. */
void meta_flush(void);
/* numrpc_finalize: stops the reporter thread, then sends what is left. */
void meta_finish(void);

#endif
