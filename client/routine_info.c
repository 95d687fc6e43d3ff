/* routine_info.c -- a routine's interface read through the public API
 * (numrpc_routine_*): parameters, shapes for given scalars, IDL; for bindings. */
#include <stdlib.h>
#include <string.h>

#include "bind.h"
#include "iface_cache.h"
#include "init.h"
#include "lasterr.h"
#include "marshal.h"

/* The caller's: a reference to a cached interface, given back on free. */
struct numrpc_routine {
    iface_ref *ref;
};

int client_iface_of(const char *name, iface_ref **ref, err_t *err)
{
    endpoint eps[CLIENT_MAX_SERVERS];
    char routine[IFACE_MAX_NAME + 1];
    int pinned, n = client_locate(name, eps, routine, sizeof routine, &pinned, err);
    return n < 0 ? n : iface_lookup(eps, 1, routine, 0, ref, NULL, err);
}

int numrpc_routine_get(const char *name, numrpc_routine **r)
{
    err_t err;
    iface_ref *ref = NULL;
    int rc = name && r ? client_ensure_init(&err) : err_set(&err, NUMRPC_EINVAL, "name or r is NULL");
    if (rc == 0) rc = client_iface_of(name, &ref, &err);
    if (rc == 0 && (*r = malloc(sizeof **r)) == NULL) rc = err_set(&err, NUMRPC_ENOMEM, "routine %s", name);
    if (rc != 0) {
        if (ref) iface_cache_put(ref);
        return client_fail(&err);
    }
    (*r)->ref = ref;
    client_succeed();
    return 0;
}

void numrpc_routine_free(numrpc_routine *r)
{
    if (r == NULL) return;
    iface_cache_put(r->ref);
    free(r);
}

const char *numrpc_routine_name(const numrpc_routine *r)
{
    return r ? r->ref->iface.name : NULL;
}

const char *numrpc_routine_module(const numrpc_routine *r)
{
    return r && r->ref->iface.module ? r->ref->iface.module : "";
}

const char *numrpc_routine_description(const numrpc_routine *r)
{
    return r && r->ref->iface.description ? r->ref->iface.description : "";
}

uint64_t numrpc_routine_hash(const numrpc_routine *r)
{
    return r ? r->ref->iface.hash : 0;
}

int numrpc_routine_nparams(const numrpc_routine *r)
{
    return r ? (int)r->ref->iface.nparams : NUMRPC_EINVAL;
}

int numrpc_routine_param(const numrpc_routine *r, int i, numrpc_param_info *info)
{
    err_t err;
    if (r == NULL || info == NULL || i < 0 || (uint32_t)i >= r->ref->iface.nparams) {
        err_set(&err, NUMRPC_EINVAL, "parameter %d of %s does not exist", i, r ? r->ref->iface.name : "(no routine)");
        return client_fail(&err);
    }
    const iface_param *p = &r->ref->iface.params[i];
    *info = (numrpc_param_info){p->name, (int)p->type, (int)p->mode, (int)p->rank};
    client_succeed();
    return 0;
}

int numrpc_routine_shapes(const numrpc_routine *r, const numrpc_arg *args, int nargs, numrpc_param_shape *shapes)
{
    err_t err;
    if (r == NULL || args == NULL || shapes == NULL) {
        err_set(&err, NUMRPC_EINVAL, "numrpc_routine_shapes: a NULL argument");
        return client_fail(&err);
    }
    const iface_t *f = &r->ref->iface;
    if (nargs < 0 || nargs > IFACE_MAX_PARAMS) {
        err_set(&err, NUMRPC_EINVAL, "%s takes %u arguments, got %d", f->name, f->nparams, nargs);
        return client_fail(&err);
    }
    /* Only the in scalars are read: every other argument points at scratch
     * (the binding wants pointers where results would go). */
    numrpc_arg scalars[IFACE_MAX_PARAMS];
    value_slot scratch;
    for (int i = 0; i < nargs; i++) {
        scalars[i] = args[i];
        int in_scalar = (uint32_t)i < f->nparams && f->params[i].rank == 0 && f->params[i].mode == IFACE_IN;
        if (!in_scalar) scalars[i].v.p = &scratch;
    }
    call_obj *k = calloc(1, sizeof *k); /* the binding's storage of the scalars */
    iface_shape *sh = calloc(IFACE_MAX_PARAMS, sizeof *sh);
    arg_source src = {nargs, scalars, NULL, NULL};
    int rc = k && sh ? call_bind(k, f, &src, &err) : err_set(&err, NUMRPC_ENOMEM, "shapes of %s", f->name);
    if (rc == 0) rc = marshal_eval_shapes(f, k->argv, sh, &err);
    for (uint32_t i = 0; rc == 0 && i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        numrpc_param_shape *out = &shapes[i];
        memset(out, 0, sizeof *out);
        out->rank = (int)p->rank;
        for (uint32_t d = 0; d < p->rank; d++) out->dims[d] = sh[i].size[d];
        out->elems = p->rank ? sh[i].mem_elems : 1;
        out->travel = p->rank ? sh[i].wire_elems : 1;
        out->bound = sh[i].bound;
    }
    free(k);
    free(sh);
    if (rc != 0) return client_fail(&err);
    client_succeed();
    return 0;
}

int numrpc_routine_idl(const numrpc_routine *r, char **idl_out)
{
    err_t err;
    int rc = r && idl_out ? 0 : err_set(&err, NUMRPC_EINVAL, "numrpc_routine_idl: a NULL argument");
    if (rc == 0 && iface_render_idl(&r->ref->iface, idl_out) != 0)
        rc = err_set(&err, NUMRPC_ENOMEM, "rendering %s", r->ref->iface.name);
    if (rc != 0) return client_fail(&err);
    client_succeed();
    return 0;
}
