/* bind.c -- binds a caller's arguments (varargs or a tagged array) to a
 * routine's interface: arity, types, NULL checks, copies for later sends. */
#include "bind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "marshal.h"
#include "protocol.h"

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

void bind_list_params(const iface_t *f, char *buf, size_t len)
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
        bind_list_params(f, names, sizeof names);
        return err_set(err, NUMRPC_EINVAL, "%s takes %u arguments (%s), %d given", f->name,
                       f->nparams, names, src->nargs);
    }
    for (uint32_t i = 0; i < f->nparams; i++) {
        if (src->typed) {
            int rc = typed_bind_one(f, i, &src->typed[i], by_value(&f->params[i]), &slots[i], &argv[i], err);
            if (rc != 0) return rc;
        } else if (src->tagged) {
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


int call_check_arrays(const iface_t *f, void *const *argv, const iface_shape *shapes, err_t *err)
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

/* A second line behind the client's gate (trust.h): whether an argument
 * is a value or a pointer the results are written through is fixed by the
 * call's one bind; an interface that disagrees later is refused. */
static int same_as_the_bind(const call_obj *k, const iface_t *f, err_t *err)
{
    if (f->nparams != k->nbound)
        return err_set(err, NUMRPC_EAUTH,
                       "%s takes %u parameters now, it took %u when the call's arguments were bound: refused",
                       f->name, f->nparams, k->nbound);
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->mode != k->bound_sig[i][0] || p->type != k->bound_sig[i][1] || p->rank != k->bound_sig[i][2])
            return err_set(err, NUMRPC_EAUTH,
                           "%s: parameter %s is %s %s of rank %u now, it was %s %s of rank %u when "
                           "the call's arguments were bound: refused",
                           f->name, p->name, iface_mode_name(p->mode), iface_type_name(p->type), p->rank,
                           iface_mode_name(k->bound_sig[i][0]), iface_type_name(k->bound_sig[i][1]),
                           k->bound_sig[i][2]);
    }
    return 0;
}

int call_bind(call_obj *k, const iface_t *f, arg_source *src, err_t *err)
{
    if (k->bound_once) return same_as_the_bind(k, f, err);
    int rc = bind_args(f, src, k->slots, k->argv, err); /* checks the arity */
    if (rc != 0) return rc;
    for (uint32_t i = 0; i < f->nparams; i++) {
        k->bound_sig[i][0] = (uint8_t)f->params[i].mode;
        k->bound_sig[i][1] = (uint8_t)f->params[i].type;
        k->bound_sig[i][2] = (uint8_t)f->params[i].rank;
    }
    k->nbound = f->nparams;
    k->bound_once = 1;
    return 0;
}

/* An in string or a file path: its value is the caller's char *. */
static int is_copied_text(const iface_param *p)
{
    return by_value(p) && (iface_type_is_file(p->type) || (p->type == NUMRPC_T_STRING && p->mode == IFACE_IN));
}

int call_capture(call_obj *k, const iface_t *f, arg_source *src, err_t *err)
{
    int rc = call_bind(k, f, src, err);
    if (rc == 0) rc = marshal_eval_shapes(f, k->argv, k->shapes, err);
    if (rc == 0) rc = call_check_arrays(f, k->argv, k->shapes, err);
    if (rc != 0) return rc;
    k->flops = marshal_complexity(f, k->argv);
    k->cheap = f->complexity.nwords > 0 && k->flops < PROTO_CHEAP_FLOPS;
    /* In strings and file paths are copied; out strings are the caller's
     * buffers, theirs until the call ends.  The slot then holds the copy. */
    for (uint32_t i = 0; i < f->nparams; i++) {
        if (!is_copied_text(&f->params[i]) || k->slots[i].s == NULL || k->slots[i].s == k->copies[i]) continue;
        k->copies[i] = strdup(k->slots[i].s);
        if (k->copies[i] == NULL) {
            call_release_args(k);
            return err_set(err, NUMRPC_ENOMEM, "%s: copy of string %s", f->name, f->params[i].name);
        }
        k->slots[i].s = k->copies[i];
    }
    return 0;
}

void call_release_args(call_obj *k)
{
    for (uint32_t i = 0; i < k->nbound; i++) {
        free(k->copies[i]);
        k->copies[i] = NULL;
    }
}
