/* gridrpc.c -- the GridRPC API (numrpc_gridrpc.h) as an adapter: handles
 * bound to interfaces; sessions are the call table's asynchronous calls. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async.h"
#include "call.h"
#include "calltab.h"
#include "gridrpc_config.h"
#include "gridrpc_data.h"
#include "gridrpc_err.h"
#include "gridrpc_stack.h"
#include "iface_cache.h"
#include "init.h"
#include "numrpc_gridrpc.h"

/* The plain functions are defined below under their own names. */
#undef grpc_call
#undef grpc_call_async

#define HANDLE_MAGIC 0x67525043u /* "gRPC" */
#define FAILED_MAX 65536         /* failed ids waiting for get_failed      */

/* ---- State (grpc_lock; taken after farm_lock, never before it) ---- */

/* What a handle is bound to; owned by the slot table, freed by destruct
 * or grpc_finalize. */
typedef struct binding {
    char routine[IFACE_MAX_NAME + 1];
    char target[CLIENT_HOST_MAX + IFACE_MAX_NAME + 32]; /* name or numrpc://hp/name */
    int nparams;
    unsigned char type[IFACE_MAX_PARAMS];     /* numrpc_type                */
    unsigned char by_value[IFACE_MAX_PARAMS]; /* a stack holds a pointer to it */
    unsigned char writes[IFACE_MAX_PARAMS];   /* out or inout               */
} binding;

typedef struct hslot {
    binding *b;            /* NULL when free */
    unsigned long serial;
} hslot;

static pthread_mutex_t grpc_lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static hslot *slots;
static int nslots;
static unsigned long next_serial = 1;
static grpc_sessionid_t *failed_ids; /* a ring of FAILED_MAX */
static int failed_first, failed_count;

static int is_initialized(void)
{
    pthread_mutex_lock(&grpc_lock);
    int r = initialized;
    pthread_mutex_unlock(&grpc_lock);
    return r;
}

#define REQUIRE_INIT(fn)                                                       \
    do {                                                                       \
        if (!is_initialized())                                                 \
            return gridrpc_failf(GRPC_NOT_INITIALIZED, "%s: call grpc_initialize first", fn); \
    } while (0)

/* ---- Sessions: asynchronous calls tagged with their handle ---- */

/* Told of every session a wait returns (farm_lock held): failures queue
 * for grpc_get_failed_sessionid, the oldest dropped when full. */
static void note_returned(int id, int rc)
{
    if (rc == 0) return;
    pthread_mutex_lock(&grpc_lock);
    if (failed_ids && failed_count == FAILED_MAX) {
        failed_first = (failed_first + 1) % FAILED_MAX;
        failed_count--;
    }
    if (failed_ids) failed_ids[(failed_first + failed_count++) % FAILED_MAX] = id;
    pthread_mutex_unlock(&grpc_lock);
}

/* What the call table knows of session id; 0 when it is no session. */
static int session_facts(grpc_sessionid_t id, calltab_facts *f)
{
    return calltab_facts_of(id, f) != CALLTAB_UNKNOWN && f->tag != NULL;
}

/* A session in progress (started, not yet returned by a wait). */
static int session_live(grpc_sessionid_t id, calltab_facts *f)
{
    return session_facts(id, f) && (f->state == CALLTAB_RUNNING || f->state == CALLTAB_DONE);
}

/* Waits for sessions (calltab_wait, every id checked) and reports as the
 * GridRPC wait functions do; *count: how many it returned. */
static grpc_error_t wait_sessions(const grpc_sessionid_t *ids, size_t n, calltab_mode mode,
                                  grpc_sessionid_t *id_ptr, int *count, const char *fn)
{
    err_t err;
    int got = 0;
    *count = n > (size_t)1 << 30 ? -1 : calltab_wait(ids, (int)n, 1, ids != NULL, mode, note_returned, &got, &err);
    if (*count < 0 && ids == NULL) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s: out of memory", fn);
    if (*count < 0)
        return gridrpc_failf(GRPC_INVALID_SESSION_ID, "%s: entry %d (%d) is no session in progress", fn,
                             got, (size_t)got < n ? ids[got] : 0);
    if (mode == CALLTAB_AND && got)
        return gridrpc_failf(GRPC_SESSION_FAILED, "session %d: %s", got, err.detail);
    if (mode == CALLTAB_AND) return gridrpc_finish(GRPC_NO_ERROR, NULL);
    if (*count == 0 && mode == CALLTAB_PROBE_OR) return gridrpc_finish(GRPC_NONE_COMPLETED, NULL);
    if (*count == 0)
        return gridrpc_failf(GRPC_INVALID_SESSION_ID, "%s: %s", fn,
                             ids ? "every session was returned to another waiter" : "no session in progress");
    if (id_ptr) *id_ptr = got;
    if (mode == CALLTAB_OR && err.code)
        return gridrpc_failf(GRPC_SESSION_FAILED, "session %d: %s", got, err.detail);
    return gridrpc_finish(GRPC_NO_ERROR, NULL);
}

/* ---- Handles ---- */

/* A copy of the binding of a valid handle. */
static grpc_error_t lookup_handle(const grpc_function_handle_t *h, binding *out, const char *fn)
{
    grpc_error_t code = GRPC_INVALID_FUNCTION_HANDLE;
    pthread_mutex_lock(&grpc_lock);
    if (!initialized) code = GRPC_NOT_INITIALIZED;
    else if (h && h->magic_np == HANDLE_MAGIC && h->slot_np >= 0 && h->slot_np < nslots &&
             slots[h->slot_np].b && slots[h->slot_np].serial == h->serial_np) {
        *out = *slots[h->slot_np].b;
        code = GRPC_NO_ERROR;
    }
    pthread_mutex_unlock(&grpc_lock);
    if (code == GRPC_NOT_INITIALIZED) return gridrpc_failf(code, "%s: call grpc_initialize first", fn);
    if (code != GRPC_NO_ERROR)
        return gridrpc_failf(code, "%s: the handle is NULL, was never initialised, or was destructed", fn);
    return code;
}

/* Fetches the interface of routine from server (or the configured ones)
 * into b. */
static int bind_routine(binding *b, const char *server, const char *routine, err_t *err)
{
    endpoint eps[CLIENT_MAX_SERVERS];
    iface_ref *ref = NULL;
    int n = 1, rc = client_ensure_init(err);
    if (rc != 0) return rc;
    if (routine == NULL || routine[0] == '\0' || strlen(routine) > IFACE_MAX_NAME ||
        strchr(routine, '/'))
        return err_set(err, NUMRPC_ENOENT, "\"%s\" is no routine name", routine ? routine : "(null)");
    snprintf(b->routine, sizeof b->routine, "%s", routine);
    if (server) {
        rc = endpoint_set(&eps[0], server, err);
        if (rc != 0) {
            err_prefix(err, "server name (want host:port)");
            return NUMRPC_ENOSERVER;
        }
        snprintf(b->target, sizeof b->target, "numrpc://%s/%s", eps[0].label, routine);
    } else {
        n = client_servers(eps, err);
        if (n < 0) return n;
        snprintf(b->target, sizeof b->target, "%s", routine);
    }
    rc = iface_lookup(eps, n, routine, 0, &ref, NULL, err);
    if (rc != 0) return rc;
    const iface_t *f = &ref->iface;
    b->nparams = (int)f->nparams;
    for (uint32_t j = 0; j < f->nparams; j++) {
        const iface_param *p = &f->params[j];
        b->type[j] = (unsigned char)p->type;
        b->by_value[j] = p->rank == 0 && (p->mode == IFACE_IN || p->type == NUMRPC_T_STRING);
        b->writes[j] = p->mode == IFACE_OUT || p->mode == IFACE_INOUT;
    }
    iface_cache_put(ref);
    return 0;
}

static grpc_error_t handle_bind(grpc_function_handle_t *h, const char *server, const char *routine,
                                const char *fn)
{
    REQUIRE_INIT(fn);
    if (h == NULL) return gridrpc_failf(GRPC_INVALID_FUNCTION_HANDLE, "%s: handle is NULL", fn);
    binding *b = calloc(1, sizeof *b);
    if (b == NULL) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s: out of memory", fn);
    err_t err;
    err_clear(&err);
    int rc = bind_routine(b, server, routine, &err);
    if (rc != 0) {
        free(b);
        err.code = rc;
        return gridrpc_finish(gridrpc_map_error(rc, 1), err.detail);
    }
    grpc_error_t code = GRPC_NO_ERROR;
    pthread_mutex_lock(&grpc_lock);
    int slot = -1;
    for (int i = 0; i < nslots && slot < 0; i++)
        if (slots[i].b == NULL) slot = i;
    if (slot < 0) {
        int grown = nslots ? 2 * nslots : 64;
        hslot *more = realloc(slots, (size_t)grown * sizeof *more);
        if (more == NULL) {
            code = GRPC_OTHER_ERROR_CODE;
        } else {
            memset(more + nslots, 0, (size_t)(grown - nslots) * sizeof *more);
            slots = more;
            slot = nslots;
            nslots = grown;
        }
    }
    if (code == GRPC_NO_ERROR) {
        slots[slot].b = b;
        slots[slot].serial = next_serial++;
        h->magic_np = HANDLE_MAGIC;
        h->slot_np = slot;
        h->serial_np = slots[slot].serial;
    }
    pthread_mutex_unlock(&grpc_lock);
    if (code != GRPC_NO_ERROR) {
        free(b);
        return gridrpc_failf(code, "%s: out of memory", fn);
    }
    return gridrpc_finish(GRPC_NO_ERROR, NULL);
}

grpc_error_t grpc_function_handle_default(grpc_function_handle_t *handle, const char *func_name)
{
    return handle_bind(handle, NULL, func_name, "grpc_function_handle_default");
}

grpc_error_t grpc_function_handle_init(grpc_function_handle_t *handle, const char *server_name,
                                       const char *func_name)
{
    if (server_name == NULL && is_initialized())
        return gridrpc_failf(GRPC_SERVER_NOT_FOUND, "grpc_function_handle_init: server_name is NULL");
    return handle_bind(handle, server_name, func_name, "grpc_function_handle_init");
}

grpc_error_t grpc_function_handle_destruct(grpc_function_handle_t *h)
{
    binding b;
    grpc_error_t code = lookup_handle(h, &b, "grpc_function_handle_destruct");
    if (code != GRPC_NO_ERROR) return code;
    binding *gone = NULL;
    pthread_mutex_lock(&grpc_lock);
    if (h->slot_np < nslots && slots[h->slot_np].serial == h->serial_np) {
        gone = slots[h->slot_np].b;
        slots[h->slot_np].b = NULL;
    }
    h->magic_np = 0;
    pthread_mutex_unlock(&grpc_lock);
    free(gone);
    return gridrpc_finish(GRPC_NO_ERROR, NULL);
}

grpc_error_t grpc_get_handle(grpc_function_handle_t **handle, grpc_sessionid_t id)
{
    REQUIRE_INIT("grpc_get_handle");
    calltab_facts f;
    if (handle == NULL) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "grpc_get_handle: handle is NULL");
    if (!session_facts(id, &f)) return gridrpc_failf(GRPC_INVALID_SESSION_ID, "grpc_get_handle: no session %d", id);
    *handle = f.tag;
    return gridrpc_finish(GRPC_NO_ERROR, NULL);
}

/* ---- Calls ---- */

/* Reads them from an argument stack: a pointer to each (a string itself). */
static grpc_error_t args_from_stack(const binding *b, void *const *items, int n, numrpc_arg *args)
{
    if (n != b->nparams)
        return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s takes %d arguments, the stack holds %d", b->routine,
                     b->nparams, n);
    for (int i = 0; i < n; i++) {
        numrpc_arg *a = &args[i];
        const void *p = items[i];
        a->type = (numrpc_type)b->type[i];
        a->v.p = items[i];
        if (!b->by_value[i] || b->type[i] == NUMRPC_T_STRING || b->type[i] == NUMRPC_T_SCOMPLEX ||
            b->type[i] == NUMRPC_T_DCOMPLEX)
            continue;
        if (p == NULL)
            return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s: argument %d is a scalar and needs a pointer to its value, got NULL",
                         b->routine, i + 1);
        switch (b->type[i]) {
        case NUMRPC_T_CHAR: a->v.c = *(const char *)p; break;
        case NUMRPC_T_INT: a->v.i = *(const int *)p; break;
        case NUMRPC_T_LONG: a->v.l = *(const long *)p; break;
        case NUMRPC_T_FLOAT: a->v.f = *(const float *)p; break;
        case NUMRPC_T_DOUBLE: a->v.d = *(const double *)p; break;
        default: break;
        }
    }
    return GRPC_NO_ERROR;
}

static grpc_error_t check_count(const binding *b, int nargs)
{
    if (nargs >= 0 && nargs != b->nparams)
        return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s takes %d arguments, %d given", b->routine, b->nparams,
                     nargs);
    return GRPC_NO_ERROR;
}

/* Reads them from the variadic list as numrpc_call takes them. */
static void args_from_va(const binding *b, va_list *ap, numrpc_arg *args)
{
    for (int i = 0; i < b->nparams; i++) {
        numrpc_arg *a = &args[i];
        a->type = (numrpc_type)b->type[i];
        switch (b->by_value[i] ? b->type[i] : NUMRPC_T_VOID) {
        case NUMRPC_T_CHAR: a->v.c = (char)va_arg(*ap, int); break;
        case NUMRPC_T_INT: a->v.i = va_arg(*ap, int); break;
        case NUMRPC_T_LONG: a->v.l = va_arg(*ap, long); break;
        case NUMRPC_T_FLOAT: a->v.f = (float)va_arg(*ap, double); break;
        case NUMRPC_T_DOUBLE: a->v.d = va_arg(*ap, double); break;
        default: a->v.p = va_arg(*ap, void *); /* arrays, strings, complex scalars */
        }
    }
}

/* Runs b's routine with src's arguments: blocking (sid NULL), or as a
 * session of handle h whose id goes to *sid.  A grpc_data_t among tagged
 * arguments stands for its data; after a blocking call succeeds, written
 * data goes on to its memory outputs. */
static grpc_error_t run(const binding *b, grpc_function_handle_t *h, grpc_sessionid_t *sid,
                        arg_source *src)
{
    gridrpc_data_use uses[IFACE_MAX_PARAMS];
    int id = 0, with_data = src->tagged && gridrpc_data_count() > 0;
    if (with_data) {
        grpc_error_t refused = gridrpc_data_bind_args(b->nparams, b->by_value, (numrpc_arg *)src->tagged, uses);
        if (refused != GRPC_NO_ERROR) return refused;
    }
    int rc = sid ? async_start(&id, b->target, src, h) : call_run(b->target, src, NULL);
    if (rc != 0) return gridrpc_fail_numrpc(rc);
    if (sid) *sid = id;
    grpc_error_t code = with_data && !sid ? gridrpc_data_finish(b->nparams, b->writes, uses) : GRPC_NO_ERROR;
    return code != GRPC_NO_ERROR ? code : gridrpc_finish(GRPC_NO_ERROR, NULL);
}

/* grpc_call and grpc_call_async: nargs -1 when the caller did not count.
 * While grpc_data_t records live, the list is read into a tagged array so
 * that they can be told from arrays. */
static grpc_error_t call_va(int nargs, grpc_function_handle_t *h, grpc_sessionid_t *sid, int async,
                            va_list ap)
{
    binding b;
    numrpc_arg args[IFACE_MAX_PARAMS];
    const char *fn = async ? "grpc_call_async" : "grpc_call";
    if (sid) *sid = GRPC_SESSIONID_VOID;
    grpc_error_t code = lookup_handle(h, &b, fn);
    if (code == GRPC_NO_ERROR && async && sid == NULL)
        code = gridrpc_failf(GRPC_OTHER_ERROR_CODE, "grpc_call_async: session_id is NULL");
    if (code == GRPC_NO_ERROR) code = check_count(&b, nargs);
    if (code != GRPC_NO_ERROR) return code;
    va_list copy;
    va_copy(copy, ap);
    arg_source src = {b.nparams, NULL, &copy, NULL};
    if (gridrpc_data_count() > 0) {
        args_from_va(&b, &copy, args);
        src = (arg_source){b.nparams, args, NULL, NULL};
    }
    code = run(&b, h, async ? sid : NULL, &src);
    va_end(copy);
    return code;
}

grpc_error_t grpc_call(grpc_function_handle_t *handle, ...)
{
    va_list ap;
    va_start(ap, handle);
    grpc_error_t code = call_va(-1, handle, NULL, 0, ap);
    va_end(ap);
    return code;
}

grpc_error_t grpc_call_counted_np_(int nargs, grpc_function_handle_t *handle, ...)
{
    va_list ap;
    va_start(ap, handle);
    grpc_error_t code = call_va(nargs, handle, NULL, 0, ap);
    va_end(ap);
    return code;
}

grpc_error_t grpc_call_async(grpc_function_handle_t *handle, grpc_sessionid_t *session_id, ...)
{
    va_list ap;
    va_start(ap, session_id);
    grpc_error_t code = call_va(-1, handle, session_id, 1, ap);
    va_end(ap);
    return code;
}

grpc_error_t grpc_call_async_counted_np_(int nargs, grpc_function_handle_t *handle,
                                         grpc_sessionid_t *session_id, ...)
{
    va_list ap;
    va_start(ap, session_id);
    grpc_error_t code = call_va(nargs, handle, session_id, 1, ap);
    va_end(ap);
    return code;
}

/* grpc_call_arg_stack_np and its asynchronous twin (sid not NULL). */
static grpc_error_t call_stack(grpc_function_handle_t *h, grpc_sessionid_t *sid, int async,
                               grpc_arg_stack_t *stack, const char *fn)
{
    binding b;
    numrpc_arg args[IFACE_MAX_PARAMS];
    if (sid) *sid = GRPC_SESSIONID_VOID;
    grpc_error_t code = lookup_handle(h, &b, fn);
    if (code == GRPC_NO_ERROR && (stack == NULL || (async && sid == NULL)))
        code = gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s: %s is NULL", fn, stack ? "session_id" : "stack");
    if (code == GRPC_NO_ERROR) code = args_from_stack(&b, stack->items, stack->n, args);
    if (code != GRPC_NO_ERROR) return code;
    arg_source src = {b.nparams, args, NULL, NULL};
    return run(&b, h, async ? sid : NULL, &src);
}

grpc_error_t grpc_call_arg_stack_np(grpc_function_handle_t *handle, grpc_arg_stack_t *stack)
{
    return call_stack(handle, NULL, 0, stack, "grpc_call_arg_stack_np");
}

grpc_error_t grpc_call_arg_stack_async_np(grpc_function_handle_t *handle, grpc_sessionid_t *sid,
                                          grpc_arg_stack_t *stack)
{
    return call_stack(handle, sid, 1, stack, "grpc_call_arg_stack_async_np");
}

/* ---- Probing and cancelling ---- */

grpc_error_t grpc_probe(grpc_sessionid_t id)
{
    REQUIRE_INIT("grpc_probe");
    calltab_facts f;
    if (!session_live(id, &f)) return gridrpc_failf(GRPC_INVALID_SESSION_ID, "grpc_probe: %d is no session in progress", id);
    return gridrpc_finish(f.state == CALLTAB_DONE ? GRPC_NO_ERROR : GRPC_NOT_COMPLETED, NULL);
}

grpc_error_t grpc_probe_or(grpc_sessionid_t *ids, size_t n, grpc_sessionid_t *id_ptr)
{
    REQUIRE_INIT("grpc_probe_or");
    int count;
    if (id_ptr == NULL || (ids == NULL && n > 0))
        return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "grpc_probe_or: %s is NULL", id_ptr ? "id_array" : "id_ptr");
    *id_ptr = GRPC_SESSIONID_VOID;
    if (n == 0) return gridrpc_finish(GRPC_NONE_COMPLETED, NULL);
    return wait_sessions(ids, n, CALLTAB_PROBE_OR, id_ptr, &count, "grpc_probe_or");
}

grpc_error_t grpc_cancel(grpc_sessionid_t id)
{
    REQUIRE_INIT("grpc_cancel");
    calltab_facts f;
    if (!session_live(id, &f)) return gridrpc_failf(GRPC_INVALID_SESSION_ID, "grpc_cancel: %d is no session in progress", id);
    numrpc_cancel(id); /* EINVAL: being returned right now, nothing to stop */
    return gridrpc_finish(GRPC_NO_ERROR, NULL);
}

grpc_error_t grpc_cancel_all(void)
{
    REQUIRE_INIT("grpc_cancel_all");
    int *ids = NULL;
    int n = calltab_live_ids(1, &ids);
    if (n < 0) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "grpc_cancel_all: out of memory");
    for (int i = 0; i < n; i++) numrpc_cancel(ids[i]);
    free(ids);
    return gridrpc_finish(GRPC_NO_ERROR, NULL);
}

/* ---- Waiting ---- */

grpc_error_t grpc_wait(grpc_sessionid_t id)
{
    REQUIRE_INIT("grpc_wait");
    int count;
    grpc_error_t code = wait_sessions(&id, 1, CALLTAB_AND, NULL, &count, "grpc_wait");
    if (count == 0)
        return gridrpc_failf(GRPC_INVALID_SESSION_ID, "grpc_wait: session %d was returned to another waiter", id);
    return code;
}

grpc_error_t grpc_wait_and(grpc_sessionid_t *ids, size_t n)
{
    REQUIRE_INIT("grpc_wait_and");
    int count;
    if (ids == NULL && n > 0) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "grpc_wait_and: id_array is NULL");
    return n ? wait_sessions(ids, n, CALLTAB_AND, NULL, &count, "grpc_wait_and") : gridrpc_finish(GRPC_NO_ERROR, NULL);
}

grpc_error_t grpc_wait_or(grpc_sessionid_t *ids, size_t n, grpc_sessionid_t *id_ptr)
{
    REQUIRE_INIT("grpc_wait_or");
    int count;
    if (id_ptr == NULL || ids == NULL || n == 0)
        return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "grpc_wait_or: %s",
                             id_ptr == NULL ? "id_ptr is NULL" : "an empty list of sessions");
    *id_ptr = GRPC_SESSIONID_VOID;
    return wait_sessions(ids, n, CALLTAB_OR, id_ptr, &count, "grpc_wait_or");
}

grpc_error_t grpc_wait_all(void)
{
    REQUIRE_INIT("grpc_wait_all");
    int count;
    return wait_sessions(NULL, 0, CALLTAB_AND, NULL, &count, "grpc_wait_all");
}

grpc_error_t grpc_wait_any(grpc_sessionid_t *id_ptr)
{
    REQUIRE_INIT("grpc_wait_any");
    int count;
    if (id_ptr == NULL) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "grpc_wait_any: id_ptr is NULL");
    *id_ptr = GRPC_SESSIONID_VOID;
    return wait_sessions(NULL, 0, CALLTAB_OR, id_ptr, &count, "grpc_wait_any");
}

/* ---- Error reporting ---- */

grpc_error_t grpc_get_error(grpc_sessionid_t id)
{
    calltab_facts f;
    if (!is_initialized()) return GRPC_NOT_INITIALIZED;
    if (!session_facts(id, &f)) return GRPC_INVALID_SESSION_ID;
    return f.state == CALLTAB_RUNNING ? GRPC_NO_ERROR : gridrpc_map_error(f.rc, 0);
}

grpc_error_t grpc_get_failed_sessionid(grpc_sessionid_t *id_ptr)
{
    REQUIRE_INIT("grpc_get_failed_sessionid");
    if (id_ptr == NULL) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "grpc_get_failed_sessionid: id_ptr is NULL");
    pthread_mutex_lock(&grpc_lock);
    *id_ptr = GRPC_SESSIONID_VOID;
    if (failed_count > 0) {
        *id_ptr = failed_ids[failed_first];
        failed_first = (failed_first + 1) % FAILED_MAX;
        failed_count--;
    }
    pthread_mutex_unlock(&grpc_lock);
    return gridrpc_finish(GRPC_NO_ERROR, NULL);
}

grpc_error_t grpc_session_info_get_np(grpc_sessionid_t id, grpc_session_info_np *info)
{
    REQUIRE_INIT("grpc_session_info_get_np");
    calltab_facts f;
    if (info == NULL) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "grpc_session_info_get_np: info is NULL");
    if (!session_facts(id, &f)) return gridrpc_failf(GRPC_INVALID_SESSION_ID, "grpc_session_info_get_np: no session %d", id);
    int running = f.state == CALLTAB_RUNNING;
    info->complete = !running;
    info->numrpc_error = running ? 0 : f.rc;
    info->error = running ? GRPC_NO_ERROR : gridrpc_map_error(f.rc, 0);
    info->bytes_sent = f.info.bytes_sent;
    info->bytes_received = f.info.bytes_received;
    info->send_seconds = f.info.send_seconds;
    info->compute_seconds = f.info.compute_seconds;
    info->receive_seconds = f.info.receive_seconds;
    info->total_seconds = f.info.total_seconds;
    snprintf(info->server, sizeof info->server, "%s", f.info.server);
    return gridrpc_finish(GRPC_NO_ERROR, NULL);
}

grpc_error_t grpc_set_timeout_np(double seconds)
{
    REQUIRE_INIT("grpc_set_timeout_np");
    int rc = numrpc_set_timeout(seconds);
    return rc ? gridrpc_fail_numrpc(rc) : gridrpc_finish(GRPC_NO_ERROR, NULL);
}

/* ---- Initializing and finalizing ---- */

grpc_error_t grpc_initialize(const char *config_file_name)
{
    if (is_initialized())
        return gridrpc_failf(GRPC_ALREADY_INITIALIZED, "grpc_initialize: call grpc_finalize first");
    numrpc_config cfg = {.servers = NULL};
    char servers[1024];
    double timeout = -1;
    int have_file = config_file_name && *config_file_name;
    if (have_file) {
        grpc_error_t code = gridrpc_read_config(config_file_name, &cfg, servers, sizeof servers, &timeout);
        if (code != GRPC_NO_ERROR) return code;
        if (cfg.servers || cfg.packet_size) {
            int rc = numrpc_init(&cfg);
            if (rc != 0) return gridrpc_finish(GRPC_CONFIGFILE_ERROR, numrpc_last_error_detail());
        }
        if (timeout >= 0 && numrpc_set_timeout(timeout) != 0)
            return gridrpc_finish(GRPC_CONFIGFILE_ERROR, numrpc_last_error_detail());
    }
    grpc_sessionid_t *ring = malloc(FAILED_MAX * sizeof *ring);
    if (ring == NULL) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "grpc_initialize: out of memory");
    pthread_mutex_lock(&grpc_lock);
    int already = initialized;
    if (!already) {
        initialized = 1;
        failed_ids = ring;
        failed_first = failed_count = 0;
    }
    pthread_mutex_unlock(&grpc_lock);
    if (already) {
        free(ring);
        return gridrpc_failf(GRPC_ALREADY_INITIALIZED, "grpc_initialize: call grpc_finalize first");
    }
    return gridrpc_finish(GRPC_NO_ERROR, NULL);
}

grpc_error_t grpc_finalize(void)
{
    REQUIRE_INIT("grpc_finalize");
    /* Stop every session and reap it, so no call writes into the caller's
     * memory after this returns. */
    grpc_cancel_all();
    grpc_wait_all();
    gridrpc_data_finalize();
    pthread_mutex_lock(&grpc_lock);
    for (int i = 0; i < nslots; i++) free(slots[i].b);
    free(slots);
    slots = NULL;
    nslots = 0;
    free(failed_ids);
    failed_ids = NULL;
    failed_first = failed_count = 0;
    initialized = 0;
    pthread_mutex_unlock(&grpc_lock);
    return gridrpc_finish(GRPC_NO_ERROR, NULL);
}
