/* progress.c -- a call's progress: the worker's prediction and the
 * routine's words in its slot, and the dispatcher's frames made from them. */
#include "progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "msg_progress.h"
#include "numrpc.h"
#include "sock.h"

/* ---- In the worker ---- */

static worker_slot *current; /* the slot of the call running in this worker (and its children) */

/* A speed measured on so small a call is noise. */
#define PROGRESS_LEARN_FLOPS 1e8
#define PROGRESS_LEARN_SECONDS 0.02
#define PROGRESS_PROBE_N 320
#define PROGRESS_PROBE_SECONDS 0.03

/* The slot's period: clamped to the protocol's range (0: none asked). */
static int period_of(uint32_t flags)
{
    if (!(flags & PROTO_CALL_WANT_PROGRESS)) return 0;
    unsigned ms = flags >> PROTO_CALL_PERIOD_SHIFT;
    return ms < PROTO_PROGRESS_MIN_MS ? (int)PROTO_PROGRESS_MIN_MS : (int)ms;
}

/* dmmul(n, A, B, C) of the blas module, if this server offers it as the
 * IDL of stubs/blas.idl says: the flop/s of a small product, best of a few;
 * 0 when it cannot be measured. */
static double probe_speed(const iface_t *f, stub_thunk_fn thunk)
{
    if (f == NULL || thunk == NULL || f->nparams != 4) return 0;
    const iface_param *p = f->params;
    if (p[0].rank != 0 || p[0].type != NUMRPC_T_INT || p[0].mode != IFACE_IN) return 0;
    for (int i = 1; i < 4; i++)
        if (p[i].rank != 2 || p[i].type != NUMRPC_T_DOUBLE) return 0;
    int n = PROGRESS_PROBE_N;
    size_t nn = (size_t)n * n;
    double *m = malloc(3 * nn * sizeof *m); /* freed here */
    if (m == NULL) return 0;
    for (size_t i = 0; i < 2 * nn; i++) m[i] = (double)(i % 7) - 3.0;
    void *argv[4] = {&n, m, m + nn, m + 2 * nn};
    /* The best of a few (at least 3, until 30 ms have passed, at most 10):
     * a product of 2 ms preempted once on a busy machine says nothing. */
    double best = 0, start = sock_now();
    for (int rep = 0; rep < 10 && (rep < 3 || sock_now() - start < PROGRESS_PROBE_SECONDS); rep++) {
        double t0 = sock_now();
        thunk(argv);
        double t = sock_now() - t0;
        if (t > 0 && (best == 0 || t < best)) best = t;
    }
    free(m);
    return best > 0 ? 2.0 * n * n * (double)n / best : 0;
}

void progress_call_begin(worker_slot *slot, uint32_t call_flags, double began, double flops,
                         const iface_t *probe, stub_thunk_fn probe_thunk)
{
    current = slot;
    slot->predicted = -1;
    slot->began = began;
    slot->progress_fraction = -1;
    slot->progress_message[0] = '\0';
    atomic_store(&slot->progress_seq, 0);
    slot->progress_ms = period_of(call_flags);
    if (slot->progress_ms == 0 || !(flops > 0)) return;
    if (slot->flops_rate <= 0) slot->flops_rate = probe_speed(probe, probe_thunk); /* once per worker */
    if (slot->flops_rate > 0) {
        double before = sock_now() - began; /* the request's arrival and any wait */
        slot->predicted = (before > 0 ? before : 0) + flops / slot->flops_rate;
    }
}

void progress_call_end(worker_slot *slot, double flops, double compute_s)
{
    slot->progress_ms = 0;
    current = NULL;
    if (!(flops >= PROGRESS_LEARN_FLOPS) || !(compute_s >= PROGRESS_LEARN_SECONDS)) return;
    double rate = flops / compute_s;
    slot->flops_rate = slot->flops_rate > 0 ? 0.5 * slot->flops_rate + 0.5 * rate : rate;
}

void progress_service(double fraction, const char *message)
{
    worker_slot *s = current;
    if (s == NULL || s->progress_ms == 0) return;
    /* One writer at a time: a report that meets another under way is
     * dropped (the next one carries the news). */
    uint32_t seq = atomic_load(&s->progress_seq);
    if ((seq & 1) || !atomic_compare_exchange_strong(&s->progress_seq, &seq, seq + 1)) return;
    s->progress_fraction = fraction >= 0 && fraction <= 1 ? fraction : -1;
    size_t n = message ? strnlen(message, PROTO_PROGRESS_MESSAGE_MAX) : 0;
    if (n) memcpy(s->progress_message, message, n);
    s->progress_message[n] = '\0';
    atomic_store(&s->progress_seq, seq + 2);
}

/* ---- In the dispatcher ---- */

typedef struct schedule {
    double started; /* the slot's routine start seen: a new one resets it */
    double seen;    /* when this process first saw that call computing    */
    double next;    /* the next frame's time                             */
} schedule;

static schedule *sched; /* one per worker index, the dispatcher's own */
static int nsched;

int progress_init(int nworkers)
{
    free(sched);
    sched = calloc((size_t)(nworkers > 0 ? nworkers : 1), sizeof *sched);
    nsched = sched ? nworkers : 0;
    return sched ? 0 : -1;
}

/* The period the slot's call asked, within the protocol's range: a routine
 * may write anything there, and gets no more than the minimum's frames. */
static double period_s(const worker_slot *slot)
{
    int ms = slot->progress_ms;
    if (ms <= 0) return 0;
    if (ms < (int)PROTO_PROGRESS_MIN_MS) ms = PROTO_PROGRESS_MIN_MS;
    if (ms > 0xFFFF) ms = 0xFFFF;
    return ms / 1000.0;
}

double progress_next_due(const worker_slot *slot, int index, double now)
{
    double period = period_s(slot);
    if (index < 0 || index >= nsched || period == 0 || atomic_load(&slot->state) != SLOT_COMPUTING) return 0;
    schedule *s = &sched[index];
    double started = slot->started;
    if (s->started != started || s->next <= 0) { /* a new call: its first frame after one period */
        s->started = started;
        s->seen = now;
        s->next = now + period;
    }
    return s->next;
}

int progress_frame(const worker_slot *slot, int index, double now, wire_writer *w, transport_bytes *out,
                   err_t *err)
{
    double seen = now;
    if (index >= 0 && index < nsched) {
        sched[index].next = now + (period_s(slot) ? period_s(slot) : 1);
        seen = sched[index].seen;
    }
    msg_progress p;
    /* Every field is the routine's to spoil: checked as read.  Elapsed is
     * at least what this process saw of the call, so it grows. */
    double began = slot->began, predicted = slot->predicted;
    p.elapsed = isfinite(began) && began <= now && now - began < 1e9 ? now - began : 0;
    if (p.elapsed < now - seen) p.elapsed = now - seen;
    p.predicted = isfinite(predicted) && predicted >= 0 && predicted < 1e9 ? predicted : -1;
    char raw[PROTO_PROGRESS_MESSAGE_MAX + 1];
    double fraction = -1;
    raw[0] = '\0';
    /* The routine's words, unless a write is under way (or left so). */
    for (int tries = 0; tries < 2; tries++) {
        uint32_t seq = atomic_load(&slot->progress_seq);
        if (seq & 1) continue;
        memcpy(raw, slot->progress_message, sizeof raw);
        fraction = slot->progress_fraction;
        if (atomic_load(&slot->progress_seq) == seq) break;
        raw[0] = '\0';
        fraction = -1;
    }
    msg_progress_clean(&p, raw, sizeof raw, fraction);
    wire_writer_attach(w, transport_memory_sink(out));
    int rc = msg_write_progress(w, slot->call_id, &p, err);
    wire_writer_attach(w, transport_none()); /* out is the caller's, not w's */
    return rc;
}
