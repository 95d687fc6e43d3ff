/* call.c -- the call object: bind the caller's arguments to the routine's
 * interface, send the request, receive results; the blocking call on it. */
#include "client.h"
#include "meta.h"

#include <complex.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "marshal.h"
#include "sock.h"

static __thread err_t last_err;
static __thread numrpc_call_info last_info;

int client_fail(const err_t *err)
{
    last_err = *err;
    return err->code;
}

void client_succeed(void)
{
    err_clear(&last_err);
}

const char *numrpc_last_error_detail(void)
{
    return last_err.detail;
}

int numrpc_last_call_info(numrpc_call_info *info)
{
    if (info == NULL) return NUMRPC_EINVAL;
    *info = last_info;
    return NUMRPC_OK;
}

/* ---- Binding arguments ---- */

/* Scalars of mode in come by value; a string scalar of any mode comes as
 * its char* (the caller's buffer of bound + 1 bytes for out and inout). */
static int by_value(const iface_param *p)
{
    return p->rank == 0 && (p->mode == IFACE_IN || p->type == NUMRPC_T_STRING ||
                            iface_type_is_file(p->type)); /* files: their path */
}

static void read_vararg(const iface_param *p, va_list *ap, value_slot *v, void **ptr)
{
    if (!by_value(p)) {
        *ptr = va_arg(*ap, void *);
        return;
    }
    switch (p->type) {
    case NUMRPC_T_CHAR: v->c = (char)va_arg(*ap, int); break;
    case NUMRPC_T_INT: v->i = va_arg(*ap, int); break;
    case NUMRPC_T_LONG: v->l = va_arg(*ap, long); break;
    case NUMRPC_T_FLOAT: v->f = (float)va_arg(*ap, double); break;
    case NUMRPC_T_DOUBLE: v->d = va_arg(*ap, double); break;
    case NUMRPC_T_SCOMPLEX: /* complex scalars come by pointer to their parts */
    case NUMRPC_T_DCOMPLEX: {
        const void *parts = va_arg(*ap, const void *);
        if (parts) memcpy(v, parts, iface_type_size(p->type));
        else memset(v, 0, sizeof *v);
        break;
    }
    default: v->s = va_arg(*ap, const char *); break;
    }
    *ptr = v;
}

static int read_tagged(const iface_t *f, uint32_t i, const numrpc_arg *a, value_slot *v,
                       void **ptr, err_t *err)
{
    const iface_param *p = &f->params[i];
    if (a->type != NUMRPC_T_VOID && a->type != (numrpc_type)p->type)
        return err_set(err, NUMRPC_EINVAL, "%s: argument %u (%s) is %s, a %s was given", f->name,
                       i + 1, p->name, iface_type_name(p->type), iface_type_name(a->type));
    if (!by_value(p)) {
        *ptr = a->v.p;
        return 0;
    }
    switch (p->type) {
    case NUMRPC_T_CHAR: v->c = a->v.c; break;
    case NUMRPC_T_INT: v->i = a->v.i; break;
    case NUMRPC_T_LONG: v->l = a->v.l; break;
    case NUMRPC_T_FLOAT: v->f = a->v.f; break;
    case NUMRPC_T_DOUBLE: v->d = a->v.d; break;
    case NUMRPC_T_STRING: v->s = a->v.s; break;
    case NUMRPC_T_FILE:
    case NUMRPC_T_RFILE: v->s = a->v.s; break; /* the file's path */
    default: /* complex scalars in a tagged array are passed by pointer */
        if (a->v.p == NULL) return err_set(err, NUMRPC_EINVAL, "%s: %s is NULL", f->name, p->name);
        memcpy(v, a->v.p, iface_type_size(p->type));
    }
    *ptr = v;
    return 0;
}

static void list_params(const iface_t *f, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < f->nparams && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", f->params[i].name);
}

static int bind_args(const iface_t *f, arg_source *src, value_slot *slots, void **argv,
                     err_t *err)
{
    if (src->nargs != (int)f->nparams) {
        char names[256];
        list_params(f, names, sizeof names);
        return err_set(err, NUMRPC_EINVAL, "%s takes %u arguments (%s), %d given", f->name,
                       f->nparams, names, src->nargs);
    }
    for (uint32_t i = 0; i < f->nparams; i++) {
        if (src->tagged) {
            int rc = read_tagged(f, i, &src->tagged[i], &slots[i], &argv[i], err);
            if (rc != 0) return rc;
        } else {
            read_vararg(&f->params[i], src->va, &slots[i], &argv[i]);
        }
        const iface_param *p = &f->params[i];
        if (p->rank == 0 && p->mode != IFACE_IN && p->mode != IFACE_WORK && argv[i] == NULL)
            return err_set(err, NUMRPC_EINVAL, "%s: %s is an output and needs a pointer, got NULL",
                           f->name, p->name);
    }
    return 0;
}


static int check_arrays(const iface_t *f, void *const *argv, const iface_shape *shapes,
                        err_t *err)
{
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->rank > 0 && p->mode != IFACE_WORK && shapes[i].wire_elems > 0 && argv[i] == NULL)
            return err_set(err, NUMRPC_EINVAL, "%s: array %s is NULL", f->name, p->name);
        if (p->type != NUMRPC_T_STRING || !iface_param_in_reply(p)) continue;
        /* Output strings land in the caller's buffers: they must exist.  For
         * a scalar argv[i] is the char* slot, for an array the table. */
        char *const *table = argv[i];
        for (uint64_t j = 0; j < (p->rank ? shapes[i].wire_elems : 1); j++) {
            uint64_t at = p->rank ? (uint64_t)shapes[i].start[0] + j * (uint64_t)shapes[i].stride[0] : 0;
            if (table[at] == NULL)
                return err_set(err, NUMRPC_EINVAL,
                               "%s: output string %s needs a buffer of %lld bytes, got NULL",
                               f->name, p->name, (long long)shapes[i].bound + 1);
        }
    }
    return marshal_check_strings(f, argv, shapes, MARSHAL_REQUEST, err);
}

int call_bind(call_obj *k, const iface_t *f, arg_source *src, err_t *err)
{
    return bind_args(f, src, k->slots, k->argv, err);
}

int call_capture(call_obj *k, const iface_t *f, arg_source *src, err_t *err)
{
    int rc = call_bind(k, f, src, err);
    if (rc == 0) rc = marshal_eval_shapes(f, k->argv, k->shapes, err);
    if (rc == 0) rc = check_arrays(f, k->argv, k->shapes, err);
    if (rc != 0) return rc;
    k->nargs = (int)f->nparams;
    k->flops = marshal_complexity(f, k->argv);
    k->cheap = f->complexity.nwords > 0 && k->flops < PROTO_CHEAP_FLOPS;
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        numrpc_arg *a = &k->args[i];
        a->type = (numrpc_type)p->type;
        if (!by_value(p)) {
            a->v.p = k->argv[i];
            continue;
        }
        const value_slot *v = &k->slots[i];
        switch (p->type) {
        case NUMRPC_T_CHAR: a->v.c = v->c; break;
        case NUMRPC_T_INT: a->v.i = v->i; break;
        case NUMRPC_T_LONG: a->v.l = (long)v->l; break;
        case NUMRPC_T_FLOAT: a->v.f = v->f; break;
        case NUMRPC_T_DOUBLE: a->v.d = v->d; break;
        case NUMRPC_T_FILE:
        case NUMRPC_T_RFILE:
        case NUMRPC_T_STRING: {
            if (p->mode != IFACE_IN && p->type == NUMRPC_T_STRING) { /* the caller's buffer, theirs until the call ends */
                k->vals[i].s = NULL;
                a->v.s = v->s;
                break;
            }
            char *copy = v->s ? strdup(v->s) : NULL;
            if (v->s && copy == NULL) {
                call_release_args(k);
                return err_set(err, NUMRPC_ENOMEM, "%s: copy of string %s", f->name, p->name);
            }
            k->vals[i].s = copy;
            a->v.s = copy;
            break;
        }
        default: /* complex: tagged arguments carry them by pointer */
            k->vals[i] = *v;
            a->v.p = &k->vals[i];
        }
    }
    return 0;
}

void call_release_args(call_obj *k)
{
    for (int i = 0; i < k->nargs; i++) {
        if ((k->args[i].type == NUMRPC_T_STRING || iface_type_is_file(k->args[i].type)) &&
            k->vals[i].s) {
            free((char *)k->vals[i].s);
            k->vals[i].s = NULL;
        }
    }
}

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

int call_prepare(call_obj *k, const iface_t *f, err_t *err)
{
    int rc = marshal_eval_shapes(f, k->argv, k->shapes, err);
    if (rc == 0) rc = check_arrays(f, k->argv, k->shapes, err);
    if (rc == 0) rc = files_check(f, k->argv, MARSHAL_REQUEST, err);
    if (rc != 0) return rc;
    k->deadline_ms = 0;
    if (k->deadline > 0) {
        double left = k->deadline - sock_now();
        if (left <= 0)
            return err_set(err, NUMRPC_ETIMEDOUT, "%s: the call's time limit passed before it was sent", f->name);
        k->deadline_ms = left * 1000 < 1 ? 1 : (uint32_t)(left * 1000);
    }
    return 0;
}

int call_write(call_obj *k, client_conn *c, const iface_t *f, int hold, err_t *err)
{
    k->out0 = c->writer.bytes_out;
    double t0 = sock_now();
    if (k->t_start == 0) k->t_start = t0;
    wire_begin(&c->writer, PROTO_CALL, k->wire_id);
    int rc = wire_put_string(&c->writer, f->name, err);
    if (rc == 0) rc = wire_put_u64(&c->writer, f->hash, err);
    if (rc == 0) rc = wire_put_u32(&c->writer, k->deadline_ms, err);
    if (rc == 0) rc = wire_put_u32(&c->writer, 0, err); /* flags */
    if (rc == 0) rc = wire_put_u32(&c->writer, (uint32_t)c->writer.packet_size, err);
    if (rc == 0) rc = wire_put_u32(&c->writer, f->nparams, err);
    if (rc == 0) rc = marshal_write(&c->writer, f, k->argv, k->shapes, MARSHAL_REQUEST, err);
    if (rc == 0) rc = files_write(&c->writer, f, k->argv, MARSHAL_REQUEST, err);
    if (rc == 0) client_files_attach(c, f, k->argv); /* rfile reads while waiting (files.c) */
    if (rc == 0) rc = hold ? wire_end_held(&c->writer, err) : wire_end(&c->writer, err);
    k->t_sent = sock_now();
    k->info.bytes_sent = c->writer.bytes_out - k->out0;
    return rc;
}

int call_send(call_obj *k, client_conn *c, const iface_t *f, err_t *err)
{
    int rc = call_prepare(k, f, err);
    return rc != 0 ? rc : call_write(k, c, f, 0, err);
}

int call_receive_status(call_obj *k, client_conn *c, err_t *err)
{
    k->in0 = c->reader.keepalives;
    int rc = conn_read_reply_status(c, k->wire_id, err);
    if (rc == 0) rc = wire_get_double(&c->reader, &k->info.compute_seconds, err);
    uint32_t in_flight = 0, queued = 0; /* the server's load, piggybacked */
    if (rc == 0) rc = wire_get_u32(&c->reader, &in_flight, err);
    if (rc == 0) rc = wire_get_u32(&c->reader, &queued, err);
    k->server_busy = in_flight + queued;
    return rc;
}

void call_set_server(numrpc_call_info *info, const char *label)
{
    /* A bounded copy without printf's machinery: it runs on every call. */
    size_t n = strnlen(label, sizeof info->server - 1);
    memcpy(info->server, label, n);
    info->server[n] = '\0';
}

int call_receive_results(call_obj *k, client_conn *c, const iface_t *f, err_t *err)
{
    int rc = marshal_read_scalars(&c->reader, f, k->argv, k->shapes, MARSHAL_REPLY, err);
    if (rc == 0) rc = marshal_read_arrays(&c->reader, f, k->argv, k->shapes, MARSHAL_REPLY, err);
    if (rc == 0) rc = client_files_read_reply(c, f, k->argv, err); /* OUT files */
    if (rc == 0) rc = wire_expect_end(&c->reader, err);
    if (rc != 0) return rc;
    double t_end = sock_now();
    numrpc_call_info *info = &k->info;
    info->bytes_sent = c->writer.bytes_out - k->out0; /* with remote-file data sent meanwhile */
    /* The reply's packets (the reader reads ahead, so its byte count may
     * hold the next replies of a pipelined connection too). */
    uint64_t payload = c->reader.msg_offset, per = c->writer.packet_size - PROTO_HEADER_SIZE;
    uint64_t packets = payload == 0 ? 1 : (payload + per - 1) / per;
    info->bytes_received = payload + (packets + c->reader.keepalives - k->in0) * PROTO_HEADER_SIZE;
    info->send_seconds = k->t_sent - k->t_start;
    info->receive_seconds = t_end - k->t_sent - info->compute_seconds;
    if (info->receive_seconds < 0) info->receive_seconds = 0;
    info->total_seconds = t_end - k->t_start;
    call_set_server(info, c->label);
    return 0;
}

/* A connection is still usable after an error only if the exchange ended
 * cleanly (the server's error reply was read whole). */
int call_conn_usable(int rc)
{
    return rc == NUMRPC_OK || rc == NUMRPC_ENOENT || rc == NUMRPC_EINVAL || rc == NUMRPC_ESTALE ||
           rc == NUMRPC_ELIMIT || rc == NUMRPC_ESERVER || rc == NUMRPC_ECRASHED ||
           rc == NUMRPC_ENOMEM || rc == NUMRPC_ECANCELLED || rc == NUMRPC_ETIMEDOUT;
}

/* ---- The blocking call: start and wait in the caller's thread ----
 * The call object lives on the caller's stack; "start" runs the exchange
 * on a pooled connection right here, so "wait" finds it complete. */

/* Runs the call on one server; retries on a stale interface and on a pooled
 * connection the server had closed, while no reply byte reached the caller. */
static int call_on(call_obj *k, const endpoint *ep, arg_source *src, err_t *err)
{
    client_conn *c = NULL;
    int rc = conn_acquire(ep, &c, err);
    for (int attempt = 0; rc == 0 && attempt < 3; attempt++) {
        iface_ref *ref = NULL;
        va_list ap;
        k->touched = 0;
        rc = iface_cache_get(c, k->routine, &ref, err);
        if (rc == 0) {
            if (src->va) va_copy(ap, *src->va);
            arg_source each = *src;
            each.va = src->va ? &ap : NULL;
            rc = call_bind(k, &ref->iface, &each, err);
            if (src->va) va_end(ap);
            k->wire_id = client_next_call_id();
            if (rc == 0) rc = call_send(k, c, &ref->iface, err);
            if (rc == 0) rc = call_receive_status(k, c, err);
            if (rc == 0) {
                k->touched = 1; /* from here on, results land in the caller's memory */
                rc = call_receive_results(k, c, &ref->iface, err);
            }
        }
        int reconnect = rc == NUMRPC_EIO && c->reused && !k->touched;
        if (rc == NUMRPC_ESTALE && ref) iface_cache_invalidate(ref);
        if (ref) iface_cache_put(ref);
        if (rc == NUMRPC_ESTALE && !k->touched && attempt < 2) {
            /* The error reply was read whole: same connection, fresh interface. */
            err_clear(err);
            rc = 0;
            continue;
        }
        if (reconnect) {
            conn_discard(c);
            c = NULL;
            rc = conn_acquire(ep, &c, err);
            continue;
        }
        break;
    }
    if (c) {
        if (call_conn_usable(rc) && !c->hello_pending) conn_release(c);
        else conn_discard(c);
    }
    return rc;
}

static int call_common(const char *name, arg_source *src)
{
    call_obj k; /* only the fields an exchange uses are set */
    err_t *err = &k.err;
    err_clear(err);
    endpoint eps[CLIENT_MAX_SERVERS];
    double pred[CLIENT_MAX_SERVERS], flops = 0;
    int n = 1, ranked = 0, i;
    k.info = (numrpc_call_info){0};
    k.t_start = 0;
    double limit = call_timeout();
    k.deadline = limit > 0 ? sock_now() + limit : 0;
    int rc = name ? client_ensure_init(err) : err_set(err, NUMRPC_EINVAL, "routine name is NULL");
    if (rc == 0) {
        int is_url = client_parse_url(name, &eps[0], k.routine, sizeof k.routine, err);
        if (is_url < 0) rc = is_url;
        else if (!is_url && (n = meta_enabled() ? meta_servers_for_call(k.routine, src, eps, pred, &flops, &ranked, err)
                                                : client_servers(eps, err)) < 0) /* ranked: meta.c */
            rc = n;
    }
    if (rc != 0) return client_fail(err);
    /* Servers are tried in order while they cannot be reached at all. */
    for (i = 0; i < n; i++) {
        rc = call_on(&k, &eps[i], src, err);
        /* A ranked call also moves on from a refusal or a server that died
         * before any reply byte reached the caller's memory. */
        if (rc != NUMRPC_ECONNECT && !(ranked && !k.touched && (rc == NUMRPC_EBUSY || rc == NUMRPC_EIO))) break;
    }
    if (rc != 0) return client_fail(err);
    if (meta_enabled()) meta_note_call(k.routine, flops, ranked ? pred[i] : 0, &k.info, k.server_busy, 0);
    last_info = k.info;
    client_succeed();
    return 0;
}

int numrpc_callv(const char *name, const numrpc_arg *args, int nargs)
{
    if (nargs > 0 && args == NULL) {
        err_t err;
        err_set(&err, NUMRPC_EINVAL, "numrpc_callv: args is NULL");
        return client_fail(&err);
    }
    arg_source src = {nargs, args, NULL};
    return call_common(name, &src);
}

int numrpc_call_counted_(int nargs, const char *name, ...)
{
    va_list ap;
    va_start(ap, name);
    arg_source src = {nargs, NULL, &ap};
    int rc = call_common(name, &src);
    va_end(ap);
    return rc;
}
