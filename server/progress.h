/* progress.h -- the progress of a call (docs/protocol.md "Progress"): the
 * worker's side (what the call asked, the prediction, the routine's own
 * words through stub_services.progress) and the dispatcher's (when a frame
 * is due, the frame made from a slot it does not trust). */
#ifndef NUMRPC_SERVER_PROGRESS_H
#define NUMRPC_SERVER_PROGRESS_H

#include <stdint.h>

#include "error.h"
#include "iface.h"
#include "slots.h"
#include "stubmod.h"
#include "transport.h"
#include "wire.h"

/* ---- In the worker ---- */
/* The routine of a call is about to start in slot: call_flags are the
 * CALL's (PROTO_CALL_WANT_PROGRESS and its period), began the monotonic
 * time its request's first byte came, flops its CalcOrder (<= 0: unknown).
 * When progress is asked, predicts the call's seconds from flops and this
 * worker's speed, measured once (a small product by probe, the server's
 * dmmul routine: its interface and thunk, NULL if none) or learned from
 * its earlier calls. */
void progress_call_begin(worker_slot *slot, uint32_t call_flags, double began, double flops,
                         const iface_t *probe, stub_thunk_fn probe_thunk);
/* The routine ended after compute_s seconds: no more frames; the speed
 * learns from a call of flops (when large enough to measure). */
void progress_call_end(worker_slot *slot, double flops, double compute_s);
/* stub_services.progress: the routine's fraction (0..1, or -1 unknown)
 * and words (NULL or at most PROTO_PROGRESS_MESSAGE_MAX bytes are kept),
 * for its next frame.  Never blocks; from any thread or child process of
 * the routine; nothing when the call asked for no progress. */
void progress_service(double fraction, const char *message);

/* ---- In the dispatcher ---- */
/* The schedule lives in the dispatcher's memory, never in the slot (a
 * routine can write its slot).  0, or -1 (no memory: no frames). */
int progress_init(int nworkers);
/* Monotonic seconds when worker index's next frame is due, 0 for none
 * (its slot is not computing a call that asked for progress). */
double progress_next_due(const worker_slot *slot, int index, double now);
/* The frame of worker index's call as of now, framed by w (the
 * dispatcher's writer of notices, attached to out for it) into *out (one
 * packet, owned by the caller), cleaned of whatever the routine wrote; the
 * frame counts as sent (a frame the socket cannot take now is missed, not
 * retried). */
int progress_frame(const worker_slot *slot, int index, double now, wire_writer *w, transport_bytes *out,
                   err_t *err);

#endif
