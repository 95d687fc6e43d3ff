/* call.c -- the call object: bind the caller's arguments to the routine's
 * interface, send the request, receive results; the blocking call on it. */
#include "call.h"

#include <stdatomic.h>
#include <string.h>

#include "bind.h"
#include "client_files.h"
#include "failover.h"
#include "files.h"
#include "iface_cache.h"
#include "init.h"
#include "lasterr.h"
#include "marshal.h"
#include "meta.h"
#include "place.h"
#include "progress.h"
#include "protocol.h"
#include "sock.h"
#include "start.h"
#include "trust.h"

/* ---- One exchange on one connection ---- */

static _Atomic uint64_t timeout_us; /* numrpc_set_timeout, in microseconds */

double call_timeout(void)
{
    return (double)atomic_load_explicit(&timeout_us, memory_order_relaxed) * 1e-6;
}

int numrpc_set_timeout(double seconds)
{
    if (!(seconds >= 0) || seconds > 4e6) {
        err_t err;
        err_set(&err, NUMRPC_EINVAL, "numrpc_set_timeout: %g s is not a time limit (0 = none, at most 4e6 s)",
                seconds);
        return client_fail(&err);
    }
    atomic_store(&timeout_us, (uint64_t)(seconds * 1e6));
    client_succeed();
    return 0;
}

int call_prepare(call_obj *k, const iface_t *f, const char *label, err_t *err)
{
    int rc = marshal_eval_shapes(f, k->argv, k->shapes, err);
    if (rc == 0) rc = place_bind_handles(k, f, label, err);
    if (rc == 0) rc = call_check_arrays(f, k->argv, k->shapes, err);
    if (rc == 0) rc = files_check(f, k->argv, MARSHAL_REQUEST, err);
    if (rc != 0) return rc;
    k->deadline_ms = 0;
    if (k->deadline > 0) {
        double left = k->deadline - sock_now();
        if (left <= 0)
            return err_set(err, NUMRPC_ETIMEDOUT, "%s: the call's time limit passed before it was sent", f->name);
        /* Rounded up: the server's deadline (counted from when the
         * request's first byte reaches it) is never before the client's. */
        k->deadline_ms = (uint32_t)(left * 1000);
        if (k->deadline_ms < left * 1000) k->deadline_ms++;
    }
    return 0;
}

/* A failure of the exchange on c that broke the connection at or past the
 * call's deadline is the deadline's: the client stopped waiting there
 * (`while` says in which phase).  A server's whole error reply, or any
 * failure before the deadline, stays as it is. */
static int past_deadline(const call_obj *k, const client_conn *c, int rc, const char *while_, err_t *err)
{
    if ((rc != NUMRPC_EIO && rc != NUMRPC_ETIMEDOUT) || k->deadline <= 0 || sock_now() < k->deadline) return rc;
    if (!wire_reader_broken(&c->m.reader) && wire_writer_idle(&c->m.writer)) return rc;
    return err_set(err, NUMRPC_ETIMEDOUT, "%s: %s %s by the call's deadline; the connection is closed", k->routine,
                   while_, c->m.label);
}

int call_write(call_obj *k, client_conn *c, const iface_t *f, int hold, err_t *err)
{
    wire_writer *w = &c->m.writer;
    msg_call_header h = {.hash = f->hash, .deadline_ms = k->deadline_ms,
                         .flags = (k->nhandles ? PROTO_CALL_HANDLES : 0) | progress_call_flags(),
                         .reply_packet = (uint32_t)wire_writer_packet_size(w), .nargs = f->nparams};
    size_t len = strnlen(f->name, IFACE_MAX_NAME); /* decoded names are no longer */
    memcpy(h.name, f->name, len);
    h.name[len] = '\0';
    k->out0 = wire_writer_bytes(w);
    /* The send ends at the deadline, whether the server stopped reading or
     * the request is too large to go out in time; the connection is then
     * closed. */
    wire_writer_set_deadline(w, k->deadline);
    double t0 = sock_now();
    if (k->t_start == 0) k->t_start = t0;
    int rc = msg_write_call_header(w, k->wire_id, &h, err);
    if (rc == 0 && k->nhandles) rc = msg_write_call_handles(w, k->handles, k->nhandles, err);
    if (rc == 0) rc = marshal_write(w, f, k->argv, k->shapes, MARSHAL_REQUEST, err);
    if (rc == 0) rc = files_write(w, f, k->argv, MARSHAL_REQUEST, err);
    if (rc == 0) client_files_attach(c, f, k->argv); /* rfile reads while waiting */
    if (rc == 0) rc = hold ? wire_end_held(w, err) : wire_end(w, err);
    k->t_sent = sock_now();
    k->info.bytes_sent = wire_writer_bytes(w) - k->out0;
    return past_deadline(k, c, rc, "could not send its whole request to", err);
}

int call_send(call_obj *k, client_conn *c, const iface_t *f, err_t *err)
{
    int rc = call_prepare(k, f, c->m.label, err);
    return rc != 0 ? rc : call_write(k, c, f, 0, err);
}

int call_receive_status(call_obj *k, client_conn *c, err_t *err)
{
    msg_call_result res = {0, 0, 0}; /* the server's load, piggybacked */
    k->in0 = wire_reader_keepalives(&c->m.reader);
    /* The server stops the routine at its deadline, which is never before
     * the client's: the client stops waiting at its own (a server that
     * hangs or sends keepalives forever too). */
    wire_reader_set_deadline(&c->m.reader, k->deadline);
    /* PROGRESS frames before the reply go to the handler (progress.c). */
    wire_reader_set_side(&c->m.reader, PROTO_PROGRESS, progress_on_frame, k);
    int rc = client_files_await_reply(c, k->wire_id, err);
    wire_reader_set_side(&c->m.reader, PROTO_PROGRESS, NULL, NULL);
    k->t_reply = sock_now(); /* the reply's first bytes are here */
    rc = past_deadline(k, c, rc, "no answer from", err);
    if (rc == 0) rc = msg_read_call_result(&c->m.reader, &res, err);
    k->info.compute_seconds = res.compute_seconds;
    k->server_busy = res.in_flight + res.queued;
    return rc;
}

void call_set_server(numrpc_call_info *info, const char *label)
{
    /* A bounded copy without printf's machinery: it runs on every call. */
    size_t n = strnlen(label, sizeof info->server - 1);
    memcpy(info->server, label, n);
    info->server[n] = '\0';
}

/* The call's time in three phases that add up to its total: the points
 * are its first request byte's write (t_start), its last's (t_sent), the
 * reply's first bytes read (t_reply) and its last (t_end); the server
 * computed info->compute_seconds (its clock) in between.  The compute
 * happened after the last request byte left, so it fits in the wait from
 * t_sent to t_reply, unless t_sent was noted late (the client's thread
 * waited for a core after its last write): the rest then comes out of
 * the send.  Receiving is what the wait leaves, then the reading. */
static void set_phases(numrpc_call_info *info, double t_start, double t_sent, double t_reply, double t_end)
{
    if (t_reply > t_end) t_reply = t_end; /* a monotonic clock: never, but cheap */
    if (t_sent > t_reply) t_sent = t_reply; /* an asynchronous call's writer thread noted it late */
    if (t_start > t_sent) t_start = t_sent;
    double send = t_sent - t_start, wait = t_reply - t_sent, compute = info->compute_seconds;
    /* Another host's clock may run a few parts per million apart. */
    if (!(compute >= 0)) compute = 0;
    if (compute > send + wait) compute = send + wait;
    double late = compute > wait ? compute - wait : 0;
    info->compute_seconds = compute;
    info->send_seconds = send - late;
    info->receive_seconds = (wait - compute + late) + (t_end - t_reply);
    info->total_seconds = t_end - t_start;
}

int call_receive_results(call_obj *k, client_conn *c, const iface_t *f, err_t *err)
{
    wire_reader *r = &c->m.reader;
    int rc = marshal_read_scalars(r, f, k->argv, k->shapes, MARSHAL_REPLY, err);
    if (rc == 0) rc = marshal_read_arrays(r, f, k->argv, k->shapes, MARSHAL_REPLY, err);
    if (rc == 0) rc = client_files_read_reply(c, f, k->argv, err); /* OUT files */
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc != 0) return past_deadline(k, c, rc, "could not receive all its results from", err);
    numrpc_call_info *info = &k->info;
    info->bytes_sent = wire_writer_bytes(&c->m.writer) - k->out0; /* with remote-file data sent meanwhile */
    info->bytes_received = conn_reply_bytes(c, k->in0);
    set_phases(info, k->t_start, k->t_sent, k->t_reply, sock_now());
    call_set_server(info, c->m.label);
    return 0;
}

/* conn_acquire for the call: a new connection is counted in its info. */
static int acquire_for(call_obj *k, const endpoint *ep, client_conn **c, err_t *err)
{
    int rc = conn_acquire(ep, k->deadline, c, err);
    if (rc == 0 && !(*c)->reused) {
        k->info.connections++;
        k->info.tls_resumed += (*c)->tls_resumed != 0;
    }
    return rc;
}

/* ---- The blocking call: started, then waited on in the caller's thread ----
 * The call object lives on the caller's stack; waiting for it runs its
 * exchanges on pooled connections right here, server after server as the
 * one retry rule (failover.h) says. */

/* Tries the call on one server until it succeeds or the rule says to
 * report or move on (*step).  Arguments not bound by the start are bound
 * at this server's interface (the call's one bind); every other interface
 * must agree with the bind. */
static int call_on(call_obj *k, const endpoint *ep, arg_source *src, failover_step *step, err_t *err)
{
    client_conn *c = NULL;
    k->touched = 0; /* read by the caller even when no connection opens */
    failover_facts facts = {0, 0, 0, 0};
    int rc = acquire_for(k, ep, &c, err);
    while (rc == 0) {
        iface_ref *ref = NULL;
        k->touched = 0;
        rc = iface_cache_get(c, k->routine, &ref, err);
        if (rc == 0 && k->expect_pin) rc = trust_expect(&ref->iface, k->expect_pin, c->m.label, err);
        if (rc == 0) rc = call_bind(k, &ref->iface, src, err);
        if (rc == 0) {
            k->wire_id = client_next_call_id();
            rc = call_send(k, c, &ref->iface, err);
            if (rc == 0) rc = call_receive_status(k, c, err);
            if (rc == 0) {
                k->touched = 1; /* from here on, results land in the caller's memory */
                rc = call_receive_results(k, c, &ref->iface, err);
            }
        }
        if (rc != 0) rc = conn_explain_failure(c, rc, err);
        if (rc == NUMRPC_ESTALE && ref) iface_cache_invalidate(ref);
        if (ref) iface_cache_put(ref);
        facts = (failover_facts){rc, k->touched, c->reused, facts.again};
        if (rc == 0 || failover_decide(&facts) != FAILOVER_AGAIN) break;
        facts.again++;
        err_clear(err);
        if (rc != NUMRPC_ESTALE) { /* a pooled connection the server had closed */
            conn_discard(c);
            c = NULL;
            rc = acquire_for(k, ep, &c, err);
        } else {
            rc = 0; /* the error reply was read whole: same connection, fresh interface */
        }
    }
    if (rc != 0) facts.rc = rc;
    *step = rc == 0 ? FAILOVER_REPORT : failover_decide(&facts);
    conn_done(c, rc);
    return rc;
}

/* The bytes and connections of the handles' moves count in the call's. */
static void add_moves_info(numrpc_call_info *info, const numrpc_call_info *moved)
{
    info->bytes_sent += moved->bytes_sent;
    info->bytes_received += moved->bytes_received;
    info->connections += moved->connections;
    info->tls_resumed += moved->tls_resumed;
}

/* Waits for started call k on its servers eps[0..n), each once, in the
 * caller's thread; on failure err names every server's failure. */
static int call_wait_here(call_obj *k, const endpoint *eps, int n, arg_source *src, int *at, err_t *err)
{
    failover_log tried = {0};
    failover_step step = FAILOVER_REPORT;
    int rc = 0, i;
    for (i = 0; i < n; i++) {
        if (failover_tried_before(eps, i)) continue;
        rc = call_on(k, &eps[i], src, &step, err);
        if (rc == 0) break;
        if (n > 1) failover_note(&tried, eps[i].label, err);
        if (step != FAILOVER_NEXT) break;
    }
    *at = i < n ? i : n - 1;
    if (rc != 0 && n > 1) {
        failover_facts untouched = {rc, 0, 0, 0}; /* what the rule says had nothing landed */
        failover_explain(&tried, k->routine, eps[*at].label, i >= n,
                         k->touched && failover_decide(&untouched) == FAILOVER_NEXT, err);
    }
    return rc;
}

int call_run(const char *name, arg_source *src, const char *expect_pin)
{
    call_obj k; /* only the fields the start and an exchange use are set */
    err_t *err = &k.err;
    err_clear(err);
    k.id = 0; /* a blocking call's (its progress frames carry it) */
    k.expect_pin = expect_pin;
    k.bound_once = 0;
    k.meta = 0;
    k.flops = 0;
    k.info = (numrpc_call_info){0};
    k.t_start = 0;
    handle_moves moves; /* IN handles copied to the call's server for it */
    moves.n = 0;
    moves.info = (numrpc_call_info){0};
    k.moves = &moves;
    double limit = call_timeout();
    k.deadline = limit > 0 ? sock_now() + limit : 0;
    endpoint eps[CLIENT_MAX_SERVERS];
    handle_facts named; /* with placed: the first handle the call names */
    int placed, at = 0;
    int rc = call_start(&k, name, src, 0, eps, &moves, &placed, &named, err);
    if (rc > 0) rc = call_wait_here(&k, eps, rc, src, &at, err);
    if (rc != 0 && placed && (rc == NUMRPC_ECONNECT || rc == NUMRPC_EIO)) place_name_handle(err, &named);
    moves_release(&moves);
    if (rc != 0) return client_fail(err);
    add_moves_info(&k.info, &moves.info);
    if (meta_enabled()) meta_note_call(k.routine, k.flops, k.meta ? k.meta_pred[at] : 0, &k.info, k.server_busy, 0);
    client_note_info(&k.info);
    client_succeed();
    return 0;
}

/* The call from tagged arguments, through a typed header's pin when
 * need_pin (api names the entry point in errors). */
static int callv(const char *api, const char *pin, int need_pin, const char *name, const numrpc_arg *args,
                 int nargs)
{
    if ((need_pin && pin == NULL) || (nargs > 0 && args == NULL)) {
        err_t err;
        err_set(&err, NUMRPC_EINVAL, "%s: %s is NULL", api, need_pin && pin == NULL ? "pin" : "args");
        return client_fail(&err);
    }
    arg_source src = {nargs, args, NULL, NULL};
    return call_run(name, &src, pin);
}

int numrpc_callv(const char *name, const numrpc_arg *args, int nargs)
{
    return callv("numrpc_callv", NULL, 0, name, args, nargs);
}

int numrpc_callv_pinned(const char *pin, const char *name, const numrpc_arg *args, int nargs)
{
    return callv("numrpc_callv_pinned", pin, 1, name, args, nargs);
}

static int call_va(const char *pin, int nargs, const char *name, va_list *ap)
{
    arg_source src = {nargs, NULL, ap, NULL};
    return call_run(name, &src, pin);
}

int numrpc_call_pinned_counted_(const char *pin, int nargs, const char *name, ...)
{
    if (pin == NULL) return callv("numrpc_call_pinned", NULL, 1, name, NULL, 0);
    va_list ap;
    va_start(ap, name);
    int rc = call_va(pin, nargs, name, &ap);
    va_end(ap);
    return rc;
}

/* numrpc_call's tagged arguments: read (each with its C type), then bound
 * and checked against the routine's interface like any others. */
static int call_typed(const char *pin, int nargs, const char *name, va_list *ap)
{
    typed_arg typed[TYPED_MAX];
    err_t err;
    if (typed_read(nargs, ap, typed, name ? name : "numrpc_call", &err) != 0) return client_fail(&err);
    arg_source src = {nargs, NULL, NULL, typed};
    return call_run(name, &src, pin);
}

int numrpc_call_tagged_(int nargs, const char *name, ...)
{
    va_list ap;
    va_start(ap, name);
    int rc = call_typed(NULL, nargs, name, &ap);
    va_end(ap);
    return rc;
}

int numrpc_call_pinned_tagged_(const char *pin, int nargs, const char *name, ...)
{
    if (pin == NULL) return callv("numrpc_call_pinned", NULL, 1, name, NULL, 0);
    va_list ap;
    va_start(ap, name);
    int rc = call_typed(pin, nargs, name, &ap);
    va_end(ap);
    return rc;
}

int numrpc_call_counted_(int nargs, const char *name, ...)
{
    va_list ap;
    va_start(ap, name);
    int rc = call_va(NULL, nargs, name, &ap);
    va_end(ap);
    return rc;
}
