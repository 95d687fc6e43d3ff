/* call.c -- the blocking call: bind the caller's arguments to the routine's
 * interface, send the request, receive results into the caller's memory. */
#include "client.h"

#include <complex.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

/* Storage for values passed by value; argv points into it. */
typedef union value_slot {
    int32_t i;
    int64_t l;
    float f;
    double d;
    char c;
    const char *s;
    float complex fz;
    double complex dz;
} value_slot;

/* Where a call's arguments come from: a va_list or a tagged array. */
typedef struct arg_source {
    int nargs;
    const numrpc_arg *tagged; /* NULL for varargs */
    va_list *va;
} arg_source;

static int by_value(const iface_param *p)
{
    return p->rank == 0 && p->mode == IFACE_IN;
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
    }
    return 0;
}

/* ---- One exchange on one connection ---- */

static int perform(client_conn *c, const iface_t *f, void **argv, int *touched, err_t *err)
{
    iface_shape shapes[IFACE_MAX_PARAMS];
    int rc = marshal_eval_shapes(f, argv, shapes, err);
    if (rc == 0) rc = check_arrays(f, argv, shapes, err);
    if (rc != 0) return rc;

    numrpc_call_info info = {0};
    uint64_t out0 = c->writer.bytes_out, in0 = c->reader.bytes_in;
    uint32_t call_id = client_next_call_id();
    double t0 = sock_now();
    wire_begin(&c->writer, PROTO_CALL, call_id);
    rc = marshal_put_string(&c->writer, f->name, err);
    if (rc == 0) rc = marshal_put_u64(&c->writer, f->hash, err);
    if (rc == 0) rc = marshal_put_u32(&c->writer, 0, err); /* deadline: none */
    if (rc == 0) rc = marshal_put_u32(&c->writer, 0, err); /* flags */
    if (rc == 0) rc = marshal_put_u32(&c->writer, (uint32_t)c->writer.packet_size, err);
    if (rc == 0) rc = marshal_put_u32(&c->writer, f->nparams, err);
    if (rc == 0) rc = marshal_write(&c->writer, f, argv, shapes, MARSHAL_REQUEST, err);
    if (rc == 0) rc = wire_end(&c->writer, err);
    if (rc != 0) return rc;
    double t_sent = sock_now();

    rc = conn_read_reply_status(c, call_id, err);
    if (rc == 0) rc = marshal_get_double(&c->reader, &info.compute_seconds, err);
    if (rc != 0) return rc;
    *touched = 1; /* from here on, results land in the caller's memory */
    rc = marshal_read_scalars(&c->reader, f, argv, MARSHAL_REPLY, err);
    if (rc == 0) rc = marshal_read_arrays(&c->reader, f, argv, shapes, MARSHAL_REPLY, err);
    if (rc == 0) rc = wire_expect_end(&c->reader, err);
    if (rc != 0) return rc;
    double t_end = sock_now();

    info.bytes_sent = c->writer.bytes_out - out0;
    info.bytes_received = c->reader.bytes_in - in0;
    info.send_seconds = t_sent - t0;
    info.receive_seconds = t_end - t_sent - info.compute_seconds;
    if (info.receive_seconds < 0) info.receive_seconds = 0;
    info.total_seconds = t_end - t0;
    snprintf(info.server, sizeof info.server, "%.63s", c->label);
    last_info = info;
    return 0;
}

/* A connection is still usable after an error only if the exchange ended
 * cleanly (the server's error reply was read whole). */
static int conn_still_usable(int rc)
{
    return rc == NUMRPC_OK || rc == NUMRPC_ENOENT || rc == NUMRPC_EINVAL || rc == NUMRPC_ESTALE ||
           rc == NUMRPC_ELIMIT || rc == NUMRPC_ESERVER || rc == NUMRPC_ECRASHED ||
           rc == NUMRPC_ENOMEM;
}

/* Runs the call on one server; retries on a stale interface and on a pooled
 * connection the server had closed, while no reply byte reached the caller. */
static int call_on(const endpoint *ep, const char *routine, arg_source *src, err_t *err)
{
    client_conn *c = NULL;
    int rc = conn_acquire(ep, &c, err);
    for (int attempt = 0; rc == 0 && attempt < 3; attempt++) {
        iface_ref *ref = NULL;
        value_slot slots[IFACE_MAX_PARAMS];
        void *argv[IFACE_MAX_PARAMS];
        int touched = 0;
        va_list ap;
        rc = iface_cache_get(c, routine, &ref, err);
        if (rc == 0) {
            if (src->va) va_copy(ap, *src->va);
            arg_source each = *src;
            each.va = src->va ? &ap : NULL;
            rc = bind_args(&ref->iface, &each, slots, argv, err);
            if (src->va) va_end(ap);
            if (rc == 0) rc = perform(c, &ref->iface, argv, &touched, err);
        }
        int reconnect = rc == NUMRPC_EIO && c->reused && !touched;
        if (rc == NUMRPC_ESTALE && ref) iface_cache_invalidate(ref);
        if (ref) iface_cache_put(ref);
        if (rc == NUMRPC_ESTALE) continue;
        if (reconnect) {
            conn_discard(c);
            c = NULL;
            rc = conn_acquire(ep, &c, err);
            continue;
        }
        break;
    }
    if (c) {
        if (conn_still_usable(rc) && !c->hello_pending) conn_release(c);
        else conn_discard(c);
    }
    return rc;
}

static int call_common(const char *name, arg_source *src)
{
    err_t err;
    err_clear(&err);
    char routine[IFACE_MAX_NAME + 1];
    endpoint eps[CLIENT_MAX_SERVERS];
    int n = 1;
    int rc = name ? client_ensure_init(&err) : err_set(&err, NUMRPC_EINVAL, "routine name is NULL");
    if (rc == 0) {
        int is_url = client_parse_url(name, &eps[0], routine, sizeof routine, &err);
        if (is_url < 0) rc = is_url;
        else if (!is_url && (n = client_servers(eps, &err)) < 0) rc = n;
    }
    if (rc != 0) return client_fail(&err);
    /* Servers are tried in order while they cannot be reached at all. */
    for (int i = 0; i < n; i++) {
        rc = call_on(&eps[i], routine, src, &err);
        if (rc != NUMRPC_ECONNECT) break;
    }
    if (rc != 0) return client_fail(&err);
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
