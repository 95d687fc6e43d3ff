/* each.c -- group calls: the same call on every server of a group at once
 * (one asynchronous call per server), each server's outputs in its own copy. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async.h"
#include "bind.h"
#include "init.h"
#include "lasterr.h"
#include "meta.h"
#include "sock.h"
#include "typed.h"

/* Bytes of one element of an array of type t (0: not copied here). */
static size_t elem_size(int t)
{
    switch (t) {
    case NUMRPC_T_CHAR: return 1;
    case NUMRPC_T_INT: case NUMRPC_T_FLOAT: return 4;
    case NUMRPC_T_LONG: case NUMRPC_T_DOUBLE: case NUMRPC_T_SCOMPLEX: return 8;
    case NUMRPC_T_DCOMPLEX: return 16;
    default: return 0;
    }
}

/* The group: servers' "h:p,h:p" split (each checked as host:port), or the
 * servers a call of routine could go to (the metaserver's ranking, else
 * NUMRPC_SERVER).  Fills labels (room for max); the count or an error. */
static int group_servers(const char *servers, const char *routine, arg_source *src, char (*labels)[256], int max,
                         err_t *err)
{
    int n = 0;
    if (servers != NULL) {
        const char *p = servers;
        while (*p && n < max) {
            p += strspn(p, " ");
            size_t len = strcspn(p, ", ");
            char host[256];
            int port;
            if (len == 0 || len >= 256) return err_set(err, NUMRPC_EINVAL, "numrpc_call_each: bad server list \"%s\"", servers);
            memcpy(labels[n], p, len);
            labels[n][len] = '\0';
            if (sock_parse_hostport(labels[n], host, sizeof host, &port, err) != 0)
                return err_set(err, NUMRPC_EINVAL, "numrpc_call_each: \"%s\" is not host:port", labels[n]);
            n++;
            p += len;
            p += strspn(p, " ");
            if (*p == ',') p++;
        }
        if (n == 0) return err_set(err, NUMRPC_EINVAL, "numrpc_call_each: no server in \"%s\"", servers);
        return n;
    }
    int rc = client_ensure_init(err);
    if (rc != 0) return rc;
    /* A call object only for the ranking's one bind (meta.c), then dropped. */
    call_obj *k = calloc(1, sizeof *k);
    endpoint eps[CLIENT_MAX_SERVERS];
    if (k == NULL) return err_set(err, NUMRPC_ENOMEM, "numrpc_call_each: a call object");
    snprintf(k->routine, sizeof k->routine, "%s", routine);
    int got = meta_enabled() ? meta_servers_for(k, src, eps, 1, err) : client_servers(eps, err);
    call_release_args(k);
    free(k);
    if (got < 0) return got;
    if (got == 0) return err_set(err, NUMRPC_ENOENT, "numrpc_call_each: no server for %s", routine);
    for (int i = 0; i < got && n < max; i++) snprintf(labels[n++], 256, "%s", eps[i].label);
    return n;
}

/* The scalar argument a as numrpc_routine_shapes reads it, for parameter
 * type t (arrays and out scalars: the pointer). */
static numrpc_arg as_arg(const typed_arg *a, int t, int rank, int mode)
{
    numrpc_arg r;
    memset(&r, 0, sizeof r);
    r.type = (numrpc_type)t;
    int integral = a->tag >= NUMRPC_TAG_INT_ && a->tag <= NUMRPC_TAG_ULLONG_;
    long long ll = a->tag == NUMRPC_TAG_UINT_ || a->tag == NUMRPC_TAG_ULONG_ || a->tag == NUMRPC_TAG_ULLONG_
                       ? (long long)a->v.ull : a->v.ll;
    if (rank > 0 || mode != NUMRPC_MODE_IN || a->tag >= NUMRPC_TAG_P_VOID_) {
        r.v.p = a->v.p;
        if (rank == 0 && mode == NUMRPC_MODE_IN && (t == NUMRPC_T_STRING || t == NUMRPC_T_FILE || t == NUMRPC_T_RFILE))
            r.v.s = (const char *)a->v.p;
        return r;
    }
    switch (t) {
    case NUMRPC_T_CHAR: r.v.c = (char)ll; break;
    case NUMRPC_T_INT: r.v.i = integral ? (int)ll : (int)a->v.d; break;
    case NUMRPC_T_LONG: r.v.l = integral ? (long)ll : (long)a->v.d; break;
    case NUMRPC_T_FLOAT: r.v.f = integral ? (float)ll : (float)a->v.d; break;
    case NUMRPC_T_DOUBLE: r.v.d = integral ? (double)ll : a->v.d; break;
    default: r.type = NUMRPC_T_VOID; break; /* complex: no shape reads it */
    }
    return r;
}

/* The caller's arguments: numrpc_call_each's tagged varargs, read
 * (typed), or numrpc_callv_each's array (tagged). */
typedef struct each_args {
    int nargs;
    const typed_arg *typed;
    const numrpc_arg *tagged;
} each_args;

/* Argument i's pointer (arrays, out scalars), or NULL. */
static void *ptr_of(const each_args *a, int i)
{
    if (a->tagged) return a->tagged[i].v.p;
    return a->typed[i].tag >= NUMRPC_TAG_P_VOID_ ? a->typed[i].v.p : NULL;
}

/* What one group call knows of the routine: each parameter's bytes to copy
 * per server (0: none). */
typedef struct each_plan {
    int nparams;
    size_t bytes[TYPED_MAX];
} each_plan;

/* The routine's interface from the first server of the group that gives
 * it, and the bytes each out or inout argument spans. */
static int plan_copies(char (*labels)[256], int n, const char *routine, const each_args *a, each_plan *plan,
                       err_t *err)
{
    numrpc_routine *r = NULL;
    int rc = NUMRPC_ECONNECT;
    for (int i = 0; i < n && r == NULL; i++) {
        char url[512];
        snprintf(url, sizeof url, "numrpc://%s/%s", labels[i], routine);
        rc = numrpc_routine_get(url, &r);
        if (rc != 0) err_set(err, rc, "%s", numrpc_last_error_detail());
    }
    if (r == NULL) return rc;
    int np = numrpc_routine_nparams(r);
    numrpc_arg args[TYPED_MAX];
    numrpc_param_info info[TYPED_MAX];
    numrpc_param_shape shapes[TYPED_MAX];
    rc = 0;
    if (np != a->nargs || np > TYPED_MAX)
        rc = err_set(err, NUMRPC_EINVAL, "numrpc_call_each: %s takes %d arguments, %d given", routine, np, a->nargs);
    for (int i = 0; rc == 0 && i < np; i++) {
        numrpc_routine_param(r, i, &info[i]);
        args[i] = a->tagged ? a->tagged[i] : as_arg(&a->typed[i], info[i].type, info[i].rank, info[i].mode);
        if (a->typed && a->typed[i].tag == NUMRPC_TAG_P_DATA_)
            rc = err_set(err, NUMRPC_EINVAL, "numrpc_call_each: %s: argument %s is a data handle, which lives on one server",
                         routine, info[i].name);
    }
    if (rc == 0 && numrpc_routine_shapes(r, args, np, shapes) != 0)
        rc = err_set(err, NUMRPC_EINVAL, "%s", numrpc_last_error_detail());
    plan->nparams = np;
    for (int i = 0; rc == 0 && i < np; i++) {
        plan->bytes[i] = 0;
        int out = info[i].mode == NUMRPC_MODE_OUT || info[i].mode == NUMRPC_MODE_INOUT;
        if (!out || ptr_of(a, i) == NULL) continue;
        /* An argument of another type is refused when its call starts
         * (naming both types): its memory is never read here. */
        if (a->typed && !typed_pointer_fits(a->typed[i].tag, (uint32_t)info[i].type, info[i].rank > 0)) continue;
        if (a->tagged && a->tagged[i].type != NUMRPC_T_VOID && (int)a->tagged[i].type != info[i].type) continue;
        size_t size = elem_size(info[i].type);
        if (size == 0)
            rc = err_set(err, NUMRPC_EINVAL, "numrpc_call_each: %s: output %s is a string, which group calls do not copy",
                         routine, info[i].name);
        uint64_t elems = info[i].rank == 0 ? 1 : shapes[i].elems;
        if (rc == 0 && elems > SIZE_MAX / size)
            rc = err_set(err, NUMRPC_EINVAL, "numrpc_call_each: %s: %s is too large", routine, info[i].name);
        if (rc == 0) plan->bytes[i] = (size_t)elems * size;
    }
    numrpc_routine_free(r);
    return rc;
}

/* Starts the call on server e->server with copies of the out and inout
 * arguments (e->out): its id, or 0 with e->status set. */
static int start_one(numrpc_each *e, const each_plan *plan, const each_args *a, const char *routine)
{
    typed_arg mine[TYPED_MAX];
    numrpc_arg mine_tagged[TYPED_MAX];
    if (a->typed) memcpy(mine, a->typed, sizeof(typed_arg) * (size_t)plan->nparams);
    else memcpy(mine_tagged, a->tagged, sizeof(numrpc_arg) * (size_t)plan->nparams);
    e->out = calloc((size_t)plan->nparams + 1, sizeof *e->out);
    e->out_bytes = calloc((size_t)plan->nparams + 1, sizeof *e->out_bytes);
    if (e->out == NULL || e->out_bytes == NULL) goto no_memory;
    e->nout = plan->nparams;
    for (int p = 0; p < plan->nparams; p++) {
        if (plan->bytes[p] == 0) continue;
        /* The caller's block first: elements the call does not write stay
         * as the caller had them, as in a plain call. */
        if ((e->out[p] = malloc(plan->bytes[p])) == NULL) goto no_memory;
        memcpy(e->out[p], ptr_of(a, p), plan->bytes[p]);
        e->out_bytes[p] = plan->bytes[p];
        if (a->typed) mine[p].v.p = e->out[p];
        else mine_tagged[p].v.p = e->out[p];
    }
    char url[512];
    snprintf(url, sizeof url, "numrpc://%s/%s", e->server, routine);
    arg_source src = {plan->nparams, a->tagged ? mine_tagged : NULL, NULL, a->typed ? mine : NULL};
    int id = 0;
    int rc = async_start(&id, url, &src, NULL);
    if (rc != 0) {
        e->status = rc;
        snprintf(e->detail, sizeof e->detail, "%s", numrpc_last_error_detail());
        return 0;
    }
    return id;
no_memory:
    e->status = NUMRPC_ENOMEM;
    snprintf(e->detail, sizeof e->detail, "%s: copies of the outputs", e->server);
    return 0;
}

/* The group call with a's arguments (the public entries below). */
static int call_each(const char *servers, numrpc_each *each, int max, int *count, const char *name,
                     const each_args *a)
{
    err_t err;
    err_clear(&err);
    char(*labels)[256] = calloc((size_t)max, 256);
    if (labels == NULL) {
        err_set(&err, NUMRPC_ENOMEM, "numrpc_call_each: the server list");
        return client_fail(&err);
    }
    arg_source src = {a->nargs, a->tagged, NULL, a->typed};
    int n = group_servers(servers, name, &src, labels, max, &err), rc;
    each_plan plan;
    if (n > 0 && (rc = plan_copies(labels, n, name, a, &plan, &err)) != 0) n = rc;
    if (n < 0) {
        free(labels);
        return client_fail(&err);
    }
    int *ids = calloc((size_t)n, sizeof *ids);
    if (ids == NULL) {
        free(labels);
        err_set(&err, NUMRPC_ENOMEM, "numrpc_call_each: call ids");
        return client_fail(&err);
    }
    memset(each, 0, sizeof *each * (size_t)n);
    for (int i = 0; i < n; i++) {
        snprintf(each[i].server, sizeof each[i].server, "%s", labels[i]);
        ids[i] = start_one(&each[i], &plan, a, name);
    }
    free(labels);
    *count = n;
    /* Every call is waited for (each once), whatever the others did. */
    int first_ok = -1, first_bad = -1;
    for (int i = 0; i < n; i++) {
        if (ids[i] != 0) {
            each[i].status = numrpc_wait(ids[i]);
            if (each[i].status != NUMRPC_OK)
                snprintf(each[i].detail, sizeof each[i].detail, "%s", numrpc_last_error_detail());
            numrpc_call_info info;
            if (numrpc_call_info_of(ids[i], &info) == 0) each[i].seconds = info.total_seconds;
        }
        if (each[i].status == NUMRPC_OK && first_ok < 0) first_ok = i;
        if (each[i].status != NUMRPC_OK && first_bad < 0) first_bad = i;
    }
    free(ids);
    if (first_ok >= 0)
        for (int p = 0; p < plan.nparams; p++)
            if (plan.bytes[p]) memcpy(ptr_of(a, p), each[first_ok].out[p], plan.bytes[p]);
    if (first_bad < 0) {
        client_succeed();
        return NUMRPC_OK;
    }
    err_set(&err, each[first_bad].status, "%s", each[first_bad].detail);
    return client_fail(&err);
}

int numrpc_call_each_tagged_(const char *servers, numrpc_each *each, int max, int *count, int nargs,
                             const char *name, ...)
{
    err_t err;
    typed_arg typed[TYPED_MAX];
    if (count) *count = 0;
    if (each == NULL || count == NULL || max <= 0 || name == NULL) {
        err_set(&err, NUMRPC_EINVAL, "numrpc_call_each: each, count, max > 0 and the routine's name are needed");
        return client_fail(&err);
    }
    va_list ap;
    va_start(ap, name);
    int rc = typed_read(nargs, &ap, typed, name, &err);
    va_end(ap);
    if (rc != 0) return client_fail(&err);
    each_args a = {nargs, typed, NULL};
    return call_each(servers, each, max, count, name, &a);
}

int numrpc_callv_each(const char *servers, numrpc_each *each, int max, int *count, const char *name,
                      const numrpc_arg *args, int nargs)
{
    err_t err;
    if (count) *count = 0;
    if (each == NULL || count == NULL || max <= 0 || name == NULL || nargs < 0 || nargs > TYPED_MAX ||
        (nargs > 0 && args == NULL)) {
        err_set(&err, NUMRPC_EINVAL, "numrpc_callv_each: each, count, max > 0, the routine's name and its args are needed");
        return client_fail(&err);
    }
    each_args a = {nargs, NULL, args};
    return call_each(servers, each, max, count, name, &a);
}

void numrpc_each_free(numrpc_each *each, int count)
{
    for (int i = 0; each && i < count; i++) {
        for (int p = 0; each[i].out && p < each[i].nout; p++) free(each[i].out[p]);
        free(each[i].out);
        free(each[i].out_bytes);
        each[i].out = NULL;
        each[i].out_bytes = NULL;
        each[i].nout = 0;
    }
}
