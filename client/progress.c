/* progress.c -- numrpc_set_progress: the process-wide handler, the flags
 * that ask a server for PROGRESS frames, and each frame's delivery. */
#include "progress.h"

#include <pthread.h>
#include <stdatomic.h>

#include "msg_progress.h"
#include "protocol.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* fn and arg together */
static numrpc_progress_fn handler;
static void *handler_arg;
static _Atomic uint32_t period_ms; /* 0: no handler */

void numrpc_set_progress(numrpc_progress_fn fn, void *arg, double period)
{
    uint32_t ms = 0;
    if (fn != NULL && period > 0) { /* NaN fails the test: off */
        double want = period * 1000;
        ms = want < PROTO_PROGRESS_MIN_MS ? PROTO_PROGRESS_MIN_MS : want > 0xFFFF ? 0xFFFF : (uint32_t)want;
    }
    pthread_mutex_lock(&lock);
    handler = ms ? fn : NULL;
    handler_arg = ms ? arg : NULL;
    atomic_store(&period_ms, ms);
    pthread_mutex_unlock(&lock);
}

uint32_t progress_call_flags(void)
{
    uint32_t ms = atomic_load_explicit(&period_ms, memory_order_relaxed);
    return ms ? PROTO_CALL_WANT_PROGRESS | ms << PROTO_CALL_PERIOD_SHIFT : 0;
}

int progress_on_frame(wire_reader *r, uint32_t call_id, void *arg, err_t *err)
{
    const call_obj *k = arg;
    msg_progress m;
    int rc = msg_read_progress(r, &m, err);
    if (rc != 0 || call_id != k->wire_id) return rc;
    pthread_mutex_lock(&lock);
    numrpc_progress_fn fn = handler;
    void *fn_arg = handler_arg;
    pthread_mutex_unlock(&lock);
    if (fn == NULL) return 0; /* cleared since the call asked */
    numrpc_progress p = {k->id, k->routine, m.elapsed, m.predicted, m.fraction, m.message};
    fn(&p, fn_arg);
    return 0;
}
