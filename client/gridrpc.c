/* gridrpc.c -- the GridRPC API (numrpc_gridrpc.h) on the call object:
 * handles bound to interfaces, sessions over asynchronous calls, errors. */
#include "client.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numrpc_gridrpc.h"

/* The plain functions are defined below under their own names. */
#undef grpc_call
#undef grpc_call_async

#define HANDLE_MAGIC 0x67525043u /* "gRPC" */
#define KEEP_RETURNED 16384      /* returned sessions remembered           */
#define FAILED_MAX 65536         /* failed ids waiting for get_failed      */
#define SESSION_BUCKETS 4096

/* ---- State (grpc_lock) ---- */

/* What a handle is bound to; owned by the slot table, freed by destruct
 * or grpc_finalize. */
typedef struct binding {
    char routine[IFACE_MAX_NAME + 1];
    char target[CLIENT_HOST_MAX + IFACE_MAX_NAME + 32]; /* name or numrpc://hp/name */
    int nparams;
    unsigned char type[IFACE_MAX_PARAMS];     /* numrpc_type                */
    unsigned char by_value[IFACE_MAX_PARAMS]; /* passed by value in varargs */
} binding;

typedef struct hslot {
    binding *b;            /* NULL when free */
    unsigned long serial;
} hslot;

enum { S_LIVE = 0, S_RETURNED = 1 };

typedef struct session {
    int id;
    int state;
    int claimed;                    /* a waiter is in numrpc_wait* for it  */
    grpc_function_handle_t *handle; /* the caller's pointer                */
    int nrc;                        /* numrpc result once returned         */
    grpc_error_t code;
    numrpc_call_info info;
    char detail[ERR_DETAIL_MAX];
    struct session *hnext;          /* bucket chain                        */
    struct session *rnext;          /* returned FIFO                       */
} session;

static pthread_mutex_t grpc_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t grpc_cv = PTHREAD_COND_INITIALIZER;
static int initialized;
static hslot *slots;
static int nslots;
static unsigned long next_serial = 1;
static session *buckets[SESSION_BUCKETS];
static int live_sessions;
static session *returned_head, *returned_tail;
static int returned_count;
static grpc_sessionid_t *failed_ids; /* a ring of FAILED_MAX */
static int failed_first, failed_count;

/* ---- The calling thread's last error ---- */

static __thread grpc_error_t last_code;
static __thread char last_detail[ERR_DETAIL_MAX];

static grpc_error_t finish(grpc_error_t code, const char *detail)
{
    last_code = code;
    snprintf(last_detail, sizeof last_detail, "%s", code == GRPC_NO_ERROR || !detail ? "" : detail);
    return code;
}

static grpc_error_t failf(grpc_error_t code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static grpc_error_t failf(grpc_error_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_detail, sizeof last_detail, fmt, ap);
    va_end(ap);
    last_code = code;
    return code;
}

/* ---- Error codes ---- */

static const char *const descriptions[] = {
    [GRPC_NO_ERROR] = "GridRPC success",
    [GRPC_NOT_INITIALIZED] = "GridRPC is not initialized (call grpc_initialize first)",
    [GRPC_CONFIGFILE_NOT_FOUND] = "GridRPC configuration file not found",
    [GRPC_CONFIGFILE_ERROR] = "GridRPC configuration file has an error",
    [GRPC_SERVER_NOT_FOUND] = "GridRPC server not found",
    [GRPC_FUNCTION_NOT_FOUND] = "GridRPC function not found on the server",
    [GRPC_INVALID_FUNCTION_HANDLE] = "GridRPC function handle is invalid",
    [GRPC_INVALID_SESSION_ID] = "GridRPC session id is invalid",
    [GRPC_RPC_REFUSED] = "GridRPC call refused by the server",
    [GRPC_COMMUNICATION_FAILED] = "GridRPC communication with the server failed",
    [GRPC_SESSION_FAILED] = "GridRPC session failed (grpc_get_error tells why)",
    [GRPC_NOT_COMPLETED] = "GridRPC call has not completed",
    [GRPC_NONE_COMPLETED] = "GridRPC: none of the calls has completed",
    [GRPC_OTHER_ERROR_CODE] = "GridRPC error (see the detail)",
    [GRPC_UNKNOWN_ERROR_CODE] = "GridRPC unknown error code",
    [GRPC_ALREADY_INITIALIZED] = "GridRPC is already initialized",
    [GRPC_LAST_ERROR_CODE] = "GridRPC last error code (a bound, not an error)",
};

const char *grpc_error_string(grpc_error_t code)
{
    if (code == GRPC_CANCELED_NP) return "GridRPC session cancelled";
    if (code == GRPC_TIMEOUT_NP) return "GridRPC session timed out";
    if (code < 0 || code > GRPC_LAST_ERROR_CODE) return descriptions[GRPC_UNKNOWN_ERROR_CODE];
    return descriptions[code];
}

/* The GridRPC code of a numrpc result (a call's or a handle's). */
static grpc_error_t map_call_error(int rc)
{
    switch (rc) {
    case NUMRPC_OK: return GRPC_NO_ERROR;
    case NUMRPC_ENOENT: return GRPC_FUNCTION_NOT_FOUND;
    case NUMRPC_ENOSERVER: return GRPC_SERVER_NOT_FOUND;
    case NUMRPC_ECONNECT:
    case NUMRPC_EIO:
    case NUMRPC_EPROTO:
    case NUMRPC_EVERSION: return GRPC_COMMUNICATION_FAILED;
    case NUMRPC_EAUTH:
    case NUMRPC_EBUSY: return GRPC_RPC_REFUSED;
    case NUMRPC_ECANCELLED: return GRPC_CANCELED_NP;
    case NUMRPC_ETIMEDOUT: return GRPC_TIMEOUT_NP;
    default: return GRPC_OTHER_ERROR_CODE;
    }
}

static grpc_error_t map_bind_error(int rc)
{
    switch (rc) {
    case NUMRPC_ECONNECT:
    case NUMRPC_EIO:
    case NUMRPC_ENOSERVER: return GRPC_SERVER_NOT_FOUND;
    default: return map_call_error(rc);
    }
}

static grpc_error_t fail_numrpc(int rc, grpc_error_t (*map)(int))
{
    return finish(map(rc), numrpc_last_error_detail());
}

static grpc_error_t fail_err(const err_t *err, grpc_error_t (*map)(int))
{
    return finish(map(err->code), err->detail);
}

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
            return failf(GRPC_NOT_INITIALIZED, "%s: call grpc_initialize first", fn); \
    } while (0)

/* ---- Sessions (grpc_lock held) ---- */

static session *find_locked(int id)
{
    if (id <= 0) return NULL;
    for (session *s = buckets[id % SESSION_BUCKETS]; s; s = s->hnext)
        if (s->id == id) return s;
    return NULL;
}

static void unlink_locked(session *s)
{
    for (session **p = &buckets[s->id % SESSION_BUCKETS]; *p; p = &(*p)->hnext) {
        if (*p == s) {
            *p = s->hnext;
            return;
        }
    }
}

/* Forgets a returned session that left the FIFO (the oldest). */
static void forget_oldest_locked(void)
{
    session *s = returned_head;
    returned_head = s->rnext;
    if (returned_head == NULL) returned_tail = NULL;
    returned_count--;
    unlink_locked(s);
    free(s);
}

static void push_failed_locked(int id)
{
    if (failed_ids == NULL) return;
    if (failed_count == FAILED_MAX) { /* the oldest is dropped */
        failed_first = (failed_first + 1) % FAILED_MAX;
        failed_count--;
    }
    failed_ids[(failed_first + failed_count) % FAILED_MAX] = id;
    failed_count++;
}

/* Records the outcome of a session its claimer got from numrpc. */
static void returned_locked(session *s, int rc, const char *detail, const numrpc_call_info *info)
{
    s->state = S_RETURNED;
    s->claimed = 0;
    s->nrc = rc;
    s->code = map_call_error(rc);
    snprintf(s->detail, sizeof s->detail, "%s", rc ? detail : "");
    if (info) s->info = *info;
    live_sessions--;
    if (rc != 0) push_failed_locked(s->id);
    s->rnext = NULL;
    if (returned_tail) returned_tail->rnext = s;
    else returned_head = s;
    returned_tail = s;
    if (++returned_count > KEEP_RETURNED) forget_oldest_locked();
    pthread_cond_broadcast(&grpc_cv);
}

static grpc_error_t add_session(int id, grpc_function_handle_t *handle)
{
    session *s = calloc(1, sizeof *s);
    pthread_mutex_lock(&grpc_lock);
    session *old = find_locked(id); /* a returned one whose id came round again */
    if (old && old->state == S_RETURNED) {
        for (session **p = &returned_head; *p; p = &(*p)->rnext) {
            if (*p == old) {
                *p = old->rnext;
                break;
            }
        }
        returned_tail = NULL;
        for (session *r = returned_head; r; r = r->rnext) returned_tail = r;
        returned_count--;
        unlink_locked(old);
        free(old);
    }
    if (s) {
        s->id = id;
        s->handle = handle;
        s->hnext = buckets[id % SESSION_BUCKETS];
        buckets[id % SESSION_BUCKETS] = s;
        live_sessions++;
    }
    pthread_mutex_unlock(&grpc_lock);
    if (s == NULL) { /* the call runs on; nobody can name it: stop and reap it */
        numrpc_cancel(id);
        numrpc_wait(id);
        return failf(GRPC_OTHER_ERROR_CODE, "out of memory for a session record");
    }
    return GRPC_NO_ERROR;
}

/* Waits for and returns one claimed session (grpc_lock held on entry and
 * exit, released while waiting).  Returns the numrpc result. */
static int return_claimed_locked(session *s)
{
    int id = s->id;
    pthread_mutex_unlock(&grpc_lock);
    int rc = numrpc_wait(id);
    char detail[ERR_DETAIL_MAX];
    snprintf(detail, sizeof detail, "%s", numrpc_last_error_detail());
    numrpc_call_info info;
    int have = numrpc_call_info_of(id, &info) == NUMRPC_OK;
    pthread_mutex_lock(&grpc_lock);
    returned_locked(s, rc, detail, have ? &info : NULL);
    return rc;
}

/* Returns session id unless another waiter does first.  *rc gets the
 * numrpc result; 0 when the session was returned elsewhere (or unknown). */
static int wait_one_locked(int id, int *rc)
{
    session *s = find_locked(id);
    while (s && s->state == S_LIVE && s->claimed) {
        pthread_cond_wait(&grpc_cv, &grpc_lock);
        s = find_locked(id);
    }
    if (s == NULL || s->state != S_LIVE) return 0;
    s->claimed = 1;
    *rc = return_claimed_locked(s);
    return 1;
}

/* Every id of the list names a session in progress. */
static grpc_error_t check_live_locked(const grpc_sessionid_t *ids, size_t n, const char *fn)
{
    for (size_t i = 0; i < n; i++) {
        session *s = find_locked(ids[i]);
        if (s == NULL || s->state != S_LIVE)
            return failf(GRPC_INVALID_SESSION_ID, "%s: entry %zu (%d) is no session in progress", fn,
                         i, ids[i]);
    }
    return GRPC_NO_ERROR;
}

/* Waits for every session of ids in turn (skipping those another waiter
 * returns); GRPC_SESSION_FAILED if one it returned failed. */
static grpc_error_t wait_list_locked(const grpc_sessionid_t *ids, size_t n)
{
    grpc_error_t code = GRPC_NO_ERROR;
    char detail[ERR_DETAIL_MAX + 32] = "";
    for (size_t i = 0; i < n; i++) {
        int rc = 0;
        if (wait_one_locked(ids[i], &rc) && rc != 0 && code == GRPC_NO_ERROR) {
            code = GRPC_SESSION_FAILED;
            session *s = find_locked(ids[i]);
            snprintf(detail, sizeof detail, "session %d: %s", ids[i], s ? s->detail : "");
        }
    }
    return finish(code, detail);
}

/* Returns one complete session among ids (all live on entry). */
static grpc_error_t wait_first_locked(grpc_sessionid_t *ids, size_t n, grpc_sessionid_t *id_ptr,
                                      const char *fn)
{
    int *mine = malloc((n ? n : 1) * sizeof *mine);
    if (mine == NULL) return failf(GRPC_OTHER_ERROR_CODE, "%s: out of memory", fn);
    grpc_error_t code;
    for (;;) {
        int m = 0, live = 0;
        for (size_t i = 0; i < n; i++) {
            session *s = find_locked(ids[i]);
            if (s == NULL || s->state != S_LIVE) continue;
            live = 1;
            if (!s->claimed) {
                s->claimed = 1;
                mine[m++] = s->id;
            }
        }
        if (!live) {
            code = failf(GRPC_INVALID_SESSION_ID, "%s: every session was returned to another waiter", fn);
            break;
        }
        if (m == 0) { /* all claimed by other waiters: wait for a change */
            pthread_cond_wait(&grpc_cv, &grpc_lock);
            continue;
        }
        pthread_mutex_unlock(&grpc_lock);
        int got = 0;
        int rc = numrpc_wait_or(mine, m, &got);
        char detail[ERR_DETAIL_MAX];
        snprintf(detail, sizeof detail, "%s", numrpc_last_error_detail());
        numrpc_call_info info;
        int have = got > 0 && numrpc_call_info_of(got, &info) == NUMRPC_OK;
        pthread_mutex_lock(&grpc_lock);
        for (int j = 0; j < m; j++) {
            session *s = find_locked(mine[j]);
            if (s && s->id != got) s->claimed = 0;
        }
        pthread_cond_broadcast(&grpc_cv);
        session *s = got > 0 ? find_locked(got) : NULL;
        if (s == NULL) { /* cannot happen while every id is claimed */
            code = failf(GRPC_OTHER_ERROR_CODE, "%s: %s", fn, detail);
            break;
        }
        returned_locked(s, rc, detail, have ? &info : NULL);
        *id_ptr = got;
        code = rc ? failf(GRPC_SESSION_FAILED, "session %d: %s", got, detail) : finish(GRPC_NO_ERROR, NULL);
        break;
    }
    free(mine);
    return code;
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
    if (code == GRPC_NOT_INITIALIZED) return failf(code, "%s: call grpc_initialize first", fn);
    if (code != GRPC_NO_ERROR)
        return failf(code, "%s: the handle is NULL, was never initialised, or was destructed", fn);
    return code;
}

/* Fetches the interface of routine from server (or the configured ones)
 * into b. */
static int bind_routine(binding *b, const char *server, const char *routine, err_t *err)
{
    endpoint eps[CLIENT_MAX_SERVERS];
    int n = 1;
    int rc = client_ensure_init(err);
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
    rc = NUMRPC_ENOSERVER;
    for (int i = 0; i < n; i++) {
        client_conn *c = NULL;
        iface_ref *ref = NULL;
        rc = conn_acquire(&eps[i], &c, err);
        if (rc == 0) rc = iface_cache_get(c, routine, &ref, err);
        if (c) {
            if (call_conn_usable(rc) && !c->hello_pending) conn_release(c);
            else conn_discard(c);
        }
        if (rc == 0) {
            const iface_t *f = &ref->iface;
            b->nparams = (int)f->nparams;
            for (uint32_t j = 0; j < f->nparams; j++) {
                const iface_param *p = &f->params[j];
                b->type[j] = (unsigned char)p->type;
                b->by_value[j] = p->rank == 0 && (p->mode == IFACE_IN || p->type == NUMRPC_T_STRING);
            }
            iface_cache_put(ref);
            return 0;
        }
        if (rc != NUMRPC_ECONNECT && rc != NUMRPC_EIO) return rc;
    }
    return rc;
}

static grpc_error_t handle_bind(grpc_function_handle_t *h, const char *server, const char *routine,
                                const char *fn)
{
    REQUIRE_INIT(fn);
    if (h == NULL) return failf(GRPC_INVALID_FUNCTION_HANDLE, "%s: handle is NULL", fn);
    binding *b = calloc(1, sizeof *b);
    if (b == NULL) return failf(GRPC_OTHER_ERROR_CODE, "%s: out of memory", fn);
    err_t err;
    err_clear(&err);
    int rc = bind_routine(b, server, routine, &err);
    if (rc != 0) {
        free(b);
        err.code = rc;
        return fail_err(&err, map_bind_error);
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
        return failf(code, "%s: out of memory", fn);
    }
    return finish(GRPC_NO_ERROR, NULL);
}

grpc_error_t grpc_function_handle_default(grpc_function_handle_t *handle, const char *func_name)
{
    return handle_bind(handle, NULL, func_name, "grpc_function_handle_default");
}

grpc_error_t grpc_function_handle_init(grpc_function_handle_t *handle, const char *server_name,
                                       const char *func_name)
{
    if (server_name == NULL && is_initialized())
        return failf(GRPC_SERVER_NOT_FOUND, "grpc_function_handle_init: server_name is NULL");
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
    return finish(GRPC_NO_ERROR, NULL);
}

grpc_error_t grpc_get_handle(grpc_function_handle_t **handle, grpc_sessionid_t id)
{
    REQUIRE_INIT("grpc_get_handle");
    if (handle == NULL) return failf(GRPC_OTHER_ERROR_CODE, "grpc_get_handle: handle is NULL");
    pthread_mutex_lock(&grpc_lock);
    session *s = find_locked(id);
    if (s) *handle = s->handle;
    pthread_mutex_unlock(&grpc_lock);
    if (s == NULL) return failf(GRPC_INVALID_SESSION_ID, "grpc_get_handle: no session %d", id);
    return finish(GRPC_NO_ERROR, NULL);
}

/* ---- Calls ---- */

/* Reads the routine's arguments from ap as numrpc_call reads them. */
static void args_from_varargs(const binding *b, va_list ap, numrpc_arg *args)
{
    for (int i = 0; i < b->nparams; i++) {
        numrpc_arg *a = &args[i];
        a->type = (numrpc_type)b->type[i];
        if (!b->by_value[i]) {
            a->v.p = va_arg(ap, void *);
            continue;
        }
        switch (b->type[i]) {
        case NUMRPC_T_CHAR: a->v.c = (char)va_arg(ap, int); break;
        case NUMRPC_T_INT: a->v.i = va_arg(ap, int); break;
        case NUMRPC_T_LONG: a->v.l = va_arg(ap, long); break;
        case NUMRPC_T_FLOAT: a->v.f = (float)va_arg(ap, double); break;
        case NUMRPC_T_DOUBLE: a->v.d = va_arg(ap, double); break;
        case NUMRPC_T_STRING: a->v.s = va_arg(ap, const char *); break;
        default: a->v.p = va_arg(ap, void *); break; /* complex: by pointer */
        }
    }
}

/* Reads them from an argument stack: a pointer to each (a string itself). */
static grpc_error_t args_from_stack(const binding *b, void *const *items, int n, numrpc_arg *args)
{
    if (n != b->nparams)
        return failf(GRPC_OTHER_ERROR_CODE, "%s takes %d arguments, the stack holds %d", b->routine,
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
            return failf(GRPC_OTHER_ERROR_CODE, "%s: argument %d is a scalar and needs a pointer to its value, got NULL",
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
        return failf(GRPC_OTHER_ERROR_CODE, "%s takes %d arguments, %d given", b->routine, b->nparams,
                     nargs);
    return GRPC_NO_ERROR;
}

static grpc_error_t run_blocking(const binding *b, const numrpc_arg *args)
{
    int rc = numrpc_callv(b->target, args, b->nparams);
    return rc ? fail_numrpc(rc, map_call_error) : finish(GRPC_NO_ERROR, NULL);
}

static grpc_error_t start_async(const binding *b, grpc_function_handle_t *h, grpc_sessionid_t *sid,
                                const numrpc_arg *args)
{
    int id = 0;
    int rc = numrpc_callv_async(&id, b->target, args, b->nparams);
    if (rc != 0) return fail_numrpc(rc, map_call_error);
    grpc_error_t code = add_session(id, h);
    if (code != GRPC_NO_ERROR) return code;
    *sid = id;
    return finish(GRPC_NO_ERROR, NULL);
}

static grpc_error_t call_va(int nargs, grpc_function_handle_t *h, va_list ap)
{
    binding b;
    numrpc_arg args[IFACE_MAX_PARAMS];
    grpc_error_t code = lookup_handle(h, &b, "grpc_call");
    if (code == GRPC_NO_ERROR) code = check_count(&b, nargs);
    if (code != GRPC_NO_ERROR) return code;
    args_from_varargs(&b, ap, args);
    return run_blocking(&b, args);
}

static grpc_error_t call_async_va(int nargs, grpc_function_handle_t *h, grpc_sessionid_t *sid,
                                  va_list ap)
{
    binding b;
    numrpc_arg args[IFACE_MAX_PARAMS];
    if (sid) *sid = GRPC_SESSIONID_VOID;
    grpc_error_t code = lookup_handle(h, &b, "grpc_call_async");
    if (code == GRPC_NO_ERROR && sid == NULL)
        code = failf(GRPC_OTHER_ERROR_CODE, "grpc_call_async: session_id is NULL");
    if (code == GRPC_NO_ERROR) code = check_count(&b, nargs);
    if (code != GRPC_NO_ERROR) return code;
    args_from_varargs(&b, ap, args);
    return start_async(&b, h, sid, args);
}

grpc_error_t grpc_call(grpc_function_handle_t *handle, ...)
{
    va_list ap;
    va_start(ap, handle);
    grpc_error_t code = call_va(-1, handle, ap);
    va_end(ap);
    return code;
}

grpc_error_t grpc_call_counted_np_(int nargs, grpc_function_handle_t *handle, ...)
{
    va_list ap;
    va_start(ap, handle);
    grpc_error_t code = call_va(nargs, handle, ap);
    va_end(ap);
    return code;
}

grpc_error_t grpc_call_async(grpc_function_handle_t *handle, grpc_sessionid_t *session_id, ...)
{
    va_list ap;
    va_start(ap, session_id);
    grpc_error_t code = call_async_va(-1, handle, session_id, ap);
    va_end(ap);
    return code;
}

grpc_error_t grpc_call_async_counted_np_(int nargs, grpc_function_handle_t *handle,
                                         grpc_sessionid_t *session_id, ...)
{
    va_list ap;
    va_start(ap, session_id);
    grpc_error_t code = call_async_va(nargs, handle, session_id, ap);
    va_end(ap);
    return code;
}

/* ---- Argument stacks ---- */

struct grpc_arg_stack_np {
    int max, n;
    void **items; /* owned by the stack; the pointees are the caller's */
};

grpc_arg_stack_t *grpc_arg_stack_new_np(int maxsize)
{
    if (maxsize < 0 || maxsize > IFACE_MAX_PARAMS * 1024) return NULL;
    grpc_arg_stack_t *s = calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    s->max = maxsize;
    s->items = calloc((size_t)(maxsize ? maxsize : 1), sizeof *s->items);
    if (s->items == NULL) {
        free(s);
        return NULL;
    }
    return s;
}

grpc_error_t grpc_arg_stack_push_arg_np(grpc_arg_stack_t *s, void *arg)
{
    if (s == NULL) return failf(GRPC_OTHER_ERROR_CODE, "grpc_arg_stack_push_arg_np: stack is NULL");
    if (s->n == s->max)
        return failf(GRPC_OTHER_ERROR_CODE, "grpc_arg_stack_push_arg_np: the stack is full (%d)", s->max);
    s->items[s->n++] = arg;
    return finish(GRPC_NO_ERROR, NULL);
}

void *grpc_arg_stack_pop_arg_np(grpc_arg_stack_t *s)
{
    return s && s->n > 0 ? s->items[--s->n] : NULL;
}

grpc_error_t grpc_arg_stack_destruct_np(grpc_arg_stack_t *s)
{
    if (s == NULL) return failf(GRPC_OTHER_ERROR_CODE, "grpc_arg_stack_destruct_np: stack is NULL");
    free(s->items);
    free(s);
    return finish(GRPC_NO_ERROR, NULL);
}

grpc_error_t grpc_call_arg_stack_np(grpc_function_handle_t *handle, grpc_arg_stack_t *stack)
{
    binding b;
    numrpc_arg args[IFACE_MAX_PARAMS];
    grpc_error_t code = lookup_handle(handle, &b, "grpc_call_arg_stack_np");
    if (code == GRPC_NO_ERROR && stack == NULL)
        code = failf(GRPC_OTHER_ERROR_CODE, "grpc_call_arg_stack_np: stack is NULL");
    if (code == GRPC_NO_ERROR) code = args_from_stack(&b, stack->items, stack->n, args);
    return code != GRPC_NO_ERROR ? code : run_blocking(&b, args);
}

grpc_error_t grpc_call_arg_stack_async_np(grpc_function_handle_t *handle, grpc_sessionid_t *sid,
                                          grpc_arg_stack_t *stack)
{
    binding b;
    numrpc_arg args[IFACE_MAX_PARAMS];
    if (sid) *sid = GRPC_SESSIONID_VOID;
    grpc_error_t code = lookup_handle(handle, &b, "grpc_call_arg_stack_async_np");
    if (code == GRPC_NO_ERROR && (stack == NULL || sid == NULL))
        code = failf(GRPC_OTHER_ERROR_CODE, "grpc_call_arg_stack_async_np: %s is NULL",
                     stack ? "session_id" : "stack");
    if (code == GRPC_NO_ERROR) code = args_from_stack(&b, stack->items, stack->n, args);
    return code != GRPC_NO_ERROR ? code : start_async(&b, handle, sid, args);
}

/* ---- Probing and cancelling ---- */

/* 1 when live session id is complete, 0 while it runs. */
static int complete_now(int id)
{
    int r = numrpc_probe(id);
    return r != 0; /* 1, or NUMRPC_EINVAL: its waiter is retiring it now */
}

grpc_error_t grpc_probe(grpc_sessionid_t id)
{
    REQUIRE_INIT("grpc_probe");
    pthread_mutex_lock(&grpc_lock);
    grpc_error_t code = check_live_locked(&id, 1, "grpc_probe");
    pthread_mutex_unlock(&grpc_lock);
    if (code != GRPC_NO_ERROR) return code;
    return complete_now(id) ? finish(GRPC_NO_ERROR, NULL) : finish(GRPC_NOT_COMPLETED, NULL);
}

grpc_error_t grpc_probe_or(grpc_sessionid_t *ids, size_t n, grpc_sessionid_t *id_ptr)
{
    REQUIRE_INIT("grpc_probe_or");
    if (id_ptr == NULL || (ids == NULL && n > 0))
        return failf(GRPC_OTHER_ERROR_CODE, "grpc_probe_or: %s is NULL", id_ptr ? "id_array" : "id_ptr");
    *id_ptr = GRPC_SESSIONID_VOID;
    pthread_mutex_lock(&grpc_lock);
    grpc_error_t code = check_live_locked(ids, n, "grpc_probe_or");
    pthread_mutex_unlock(&grpc_lock);
    if (code != GRPC_NO_ERROR) return code;
    for (size_t i = 0; i < n; i++) {
        if (complete_now(ids[i])) {
            *id_ptr = ids[i];
            return finish(GRPC_NO_ERROR, NULL);
        }
    }
    return finish(GRPC_NONE_COMPLETED, NULL);
}

grpc_error_t grpc_cancel(grpc_sessionid_t id)
{
    REQUIRE_INIT("grpc_cancel");
    pthread_mutex_lock(&grpc_lock);
    grpc_error_t code = check_live_locked(&id, 1, "grpc_cancel");
    pthread_mutex_unlock(&grpc_lock);
    if (code != GRPC_NO_ERROR) return code;
    numrpc_cancel(id); /* EINVAL: being returned right now, nothing to stop */
    return finish(GRPC_NO_ERROR, NULL);
}

/* The ids of every session in progress (malloc'd into *out). */
static int live_ids_locked(int **out)
{
    int n = 0;
    *out = malloc((size_t)(live_sessions ? live_sessions : 1) * sizeof **out);
    if (*out == NULL) return -1;
    for (int b = 0; b < SESSION_BUCKETS; b++)
        for (session *s = buckets[b]; s; s = s->hnext)
            if (s->state == S_LIVE && n < live_sessions) (*out)[n++] = s->id;
    return n;
}

grpc_error_t grpc_cancel_all(void)
{
    REQUIRE_INIT("grpc_cancel_all");
    int *ids;
    pthread_mutex_lock(&grpc_lock);
    int n = live_ids_locked(&ids);
    pthread_mutex_unlock(&grpc_lock);
    if (n < 0) return failf(GRPC_OTHER_ERROR_CODE, "grpc_cancel_all: out of memory");
    for (int i = 0; i < n; i++) numrpc_cancel(ids[i]);
    free(ids);
    return finish(GRPC_NO_ERROR, NULL);
}

/* ---- Waiting ---- */

grpc_error_t grpc_wait(grpc_sessionid_t id)
{
    REQUIRE_INIT("grpc_wait");
    pthread_mutex_lock(&grpc_lock);
    grpc_error_t code = check_live_locked(&id, 1, "grpc_wait");
    int rc = 0;
    if (code == GRPC_NO_ERROR && !wait_one_locked(id, &rc))
        code = failf(GRPC_INVALID_SESSION_ID, "grpc_wait: session %d was returned to another waiter", id);
    else if (code == GRPC_NO_ERROR) {
        session *s = find_locked(id);
        code = rc ? failf(GRPC_SESSION_FAILED, "session %d: %s", id, s ? s->detail : "")
                  : finish(GRPC_NO_ERROR, NULL);
    }
    pthread_mutex_unlock(&grpc_lock);
    return code;
}

grpc_error_t grpc_wait_and(grpc_sessionid_t *ids, size_t n)
{
    REQUIRE_INIT("grpc_wait_and");
    if (ids == NULL && n > 0) return failf(GRPC_OTHER_ERROR_CODE, "grpc_wait_and: id_array is NULL");
    pthread_mutex_lock(&grpc_lock);
    grpc_error_t code = check_live_locked(ids, n, "grpc_wait_and");
    if (code == GRPC_NO_ERROR) code = wait_list_locked(ids, n);
    pthread_mutex_unlock(&grpc_lock);
    return code;
}

grpc_error_t grpc_wait_or(grpc_sessionid_t *ids, size_t n, grpc_sessionid_t *id_ptr)
{
    REQUIRE_INIT("grpc_wait_or");
    if (id_ptr == NULL || ids == NULL || n == 0)
        return failf(GRPC_OTHER_ERROR_CODE, "grpc_wait_or: %s", id_ptr == NULL ? "id_ptr is NULL"
                                                                : "an empty list of sessions");
    *id_ptr = GRPC_SESSIONID_VOID;
    pthread_mutex_lock(&grpc_lock);
    grpc_error_t code = check_live_locked(ids, n, "grpc_wait_or");
    if (code == GRPC_NO_ERROR) code = wait_first_locked(ids, n, id_ptr, "grpc_wait_or");
    pthread_mutex_unlock(&grpc_lock);
    return code;
}

grpc_error_t grpc_wait_all(void)
{
    REQUIRE_INIT("grpc_wait_all");
    int *ids;
    pthread_mutex_lock(&grpc_lock);
    int n = live_ids_locked(&ids);
    grpc_error_t code = n < 0 ? failf(GRPC_OTHER_ERROR_CODE, "grpc_wait_all: out of memory")
                              : wait_list_locked(ids, (size_t)n);
    pthread_mutex_unlock(&grpc_lock);
    if (n >= 0) free(ids);
    return code;
}

grpc_error_t grpc_wait_any(grpc_sessionid_t *id_ptr)
{
    REQUIRE_INIT("grpc_wait_any");
    if (id_ptr == NULL) return failf(GRPC_OTHER_ERROR_CODE, "grpc_wait_any: id_ptr is NULL");
    *id_ptr = GRPC_SESSIONID_VOID;
    int *ids;
    pthread_mutex_lock(&grpc_lock);
    int n = live_ids_locked(&ids);
    grpc_error_t code;
    if (n < 0) code = failf(GRPC_OTHER_ERROR_CODE, "grpc_wait_any: out of memory");
    else if (n == 0) code = failf(GRPC_INVALID_SESSION_ID, "grpc_wait_any: no session in progress");
    else code = wait_first_locked(ids, (size_t)n, id_ptr, "grpc_wait_any");
    pthread_mutex_unlock(&grpc_lock);
    if (n >= 0) free(ids);
    return code;
}

/* ---- Error reporting ---- */

grpc_error_t grpc_get_error(grpc_sessionid_t id)
{
    if (!is_initialized()) return GRPC_NOT_INITIALIZED;
    pthread_mutex_lock(&grpc_lock);
    session *s = find_locked(id);
    int state = s ? s->state : -1;
    grpc_error_t code = s ? s->code : GRPC_INVALID_SESSION_ID;
    pthread_mutex_unlock(&grpc_lock);
    if (state == S_LIVE) {
        int rc = numrpc_get_error(id);
        code = rc == NUMRPC_EPENDING ? GRPC_NO_ERROR : map_call_error(rc);
    }
    return code;
}

grpc_error_t grpc_get_last_error(void)
{
    return last_code;
}

const char *grpc_last_error_detail_np(void)
{
    return last_detail;
}

grpc_error_t grpc_get_failed_sessionid(grpc_sessionid_t *id_ptr)
{
    REQUIRE_INIT("grpc_get_failed_sessionid");
    if (id_ptr == NULL) return failf(GRPC_OTHER_ERROR_CODE, "grpc_get_failed_sessionid: id_ptr is NULL");
    pthread_mutex_lock(&grpc_lock);
    *id_ptr = GRPC_SESSIONID_VOID;
    if (failed_count > 0) {
        *id_ptr = failed_ids[failed_first];
        failed_first = (failed_first + 1) % FAILED_MAX;
        failed_count--;
    }
    pthread_mutex_unlock(&grpc_lock);
    return finish(GRPC_NO_ERROR, NULL);
}

void grpc_perror(const char *str)
{
    const char *what = grpc_error_string(last_code);
    if (str && *str) fprintf(stderr, "%s: ", str);
    if (last_detail[0]) fprintf(stderr, "%s (%s)\n", what, last_detail);
    else fprintf(stderr, "%s\n", what);
}

grpc_error_t grpc_session_info_get_np(grpc_sessionid_t id, grpc_session_info_np *info)
{
    REQUIRE_INIT("grpc_session_info_get_np");
    if (info == NULL) return failf(GRPC_OTHER_ERROR_CODE, "grpc_session_info_get_np: info is NULL");
    numrpc_call_info ci;
    memset(&ci, 0, sizeof ci);
    pthread_mutex_lock(&grpc_lock);
    session *s = find_locked(id);
    int state = s ? s->state : -1;
    if (s && state == S_RETURNED) {
        ci = s->info;
        info->error = s->code;
        info->numrpc_error = s->nrc;
    }
    pthread_mutex_unlock(&grpc_lock);
    if (s == NULL) return failf(GRPC_INVALID_SESSION_ID, "grpc_session_info_get_np: no session %d", id);
    if (state == S_LIVE) {
        numrpc_call_info_of(id, &ci);
        int rc = numrpc_get_error(id);
        info->numrpc_error = rc == NUMRPC_EPENDING ? 0 : rc;
        info->error = rc == NUMRPC_EPENDING ? GRPC_NO_ERROR : map_call_error(rc);
        info->complete = rc != NUMRPC_EPENDING;
    } else {
        info->complete = 1;
    }
    info->bytes_sent = ci.bytes_sent;
    info->bytes_received = ci.bytes_received;
    info->send_seconds = ci.send_seconds;
    info->compute_seconds = ci.compute_seconds;
    info->receive_seconds = ci.receive_seconds;
    info->total_seconds = ci.total_seconds;
    snprintf(info->server, sizeof info->server, "%s", ci.server);
    return finish(GRPC_NO_ERROR, NULL);
}

grpc_error_t grpc_set_timeout_np(double seconds)
{
    REQUIRE_INIT("grpc_set_timeout_np");
    int rc = numrpc_set_timeout(seconds);
    return rc ? fail_numrpc(rc, map_call_error) : finish(GRPC_NO_ERROR, NULL);
}

/* ---- Initializing and finalizing ---- */

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) *--e = '\0';
    return s;
}

/* Reads the configuration file into *cfg (servers in servers[]) and
 * *timeout (-1 = not given). */
static grpc_error_t read_config(const char *path, numrpc_config *cfg, char *servers, size_t len,
                                double *timeout)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return failf(GRPC_CONFIGFILE_NOT_FOUND, "%s: %s", path, strerror(errno));
    char line[2048];
    int lineno = 0;
    grpc_error_t code = GRPC_NO_ERROR;
    while (code == GRPC_NO_ERROR && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *text = trim(line);
        if (*text == '\0') continue;
        char *eq = strchr(text, '=');
        if (eq == NULL) {
            code = failf(GRPC_CONFIGFILE_ERROR, "%s:%d: want name = value", path, lineno);
            break;
        }
        *eq = '\0';
        char *name = trim(text), *value = trim(eq + 1), *end = NULL;
        if (strcmp(name, "servers") == 0) {
            char list[2048];
            snprintf(list, sizeof list, "%s", value);
            char *save = NULL;
            int n = 0;
            for (char *tok = strtok_r(list, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
                endpoint ep;
                err_t err;
                if (endpoint_set(&ep, tok, &err) != 0 || ++n > CLIENT_MAX_SERVERS) {
                    code = failf(GRPC_CONFIGFILE_ERROR, "%s:%d: servers: \"%s\" %s", path, lineno, tok,
                                 n > CLIENT_MAX_SERVERS ? "is one too many (at most 16)" : "is not host:port");
                    break;
                }
            }
            if (code == GRPC_NO_ERROR && n == 0)
                code = failf(GRPC_CONFIGFILE_ERROR, "%s:%d: servers: an empty list", path, lineno);
            if (code == GRPC_NO_ERROR && strlen(value) >= len)
                code = failf(GRPC_CONFIGFILE_ERROR, "%s:%d: servers: too long", path, lineno);
            if (code == GRPC_NO_ERROR) {
                snprintf(servers, len, "%s", value);
                cfg->servers = servers;
            }
        } else if (strcmp(name, "packet_size") == 0) {
            unsigned long long v = strtoull(value, &end, 10);
            if (*value == '\0' || *end != '\0' || v < 64 || v > (1ull << 30))
                code = failf(GRPC_CONFIGFILE_ERROR, "%s:%d: packet_size: \"%s\" is no byte count", path,
                             lineno, value);
            else cfg->packet_size = (size_t)v;
        } else if (strcmp(name, "timeout") == 0) {
            double v = strtod(value, &end);
            if (*value == '\0' || *end != '\0' || !(v >= 0) || v > 4e6)
                code = failf(GRPC_CONFIGFILE_ERROR, "%s:%d: timeout: \"%s\" is no number of seconds",
                             path, lineno, value);
            else *timeout = v;
        } else {
            code = failf(GRPC_CONFIGFILE_ERROR, "%s:%d: unknown setting \"%s\" (servers, packet_size, timeout)",
                         path, lineno, name);
        }
    }
    fclose(f);
    return code;
}

grpc_error_t grpc_initialize(const char *config_file_name)
{
    if (is_initialized())
        return failf(GRPC_ALREADY_INITIALIZED, "grpc_initialize: call grpc_finalize first");
    numrpc_config cfg = {NULL, 0};
    char servers[1024];
    double timeout = -1;
    int have_file = config_file_name && *config_file_name;
    if (have_file) {
        grpc_error_t code = read_config(config_file_name, &cfg, servers, sizeof servers, &timeout);
        if (code != GRPC_NO_ERROR) return code;
        if (cfg.servers || cfg.packet_size) {
            int rc = numrpc_init(&cfg);
            if (rc != 0) return finish(GRPC_CONFIGFILE_ERROR, numrpc_last_error_detail());
        }
        if (timeout >= 0 && numrpc_set_timeout(timeout) != 0)
            return finish(GRPC_CONFIGFILE_ERROR, numrpc_last_error_detail());
    }
    grpc_sessionid_t *ring = malloc(FAILED_MAX * sizeof *ring);
    if (ring == NULL) return failf(GRPC_OTHER_ERROR_CODE, "grpc_initialize: out of memory");
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
        return failf(GRPC_ALREADY_INITIALIZED, "grpc_initialize: call grpc_finalize first");
    }
    return finish(GRPC_NO_ERROR, NULL);
}

grpc_error_t grpc_finalize(void)
{
    REQUIRE_INIT("grpc_finalize");
    /* Stop every session and reap it, so no call writes into the caller's
     * memory after this returns. */
    grpc_cancel_all();
    grpc_wait_all();
    pthread_mutex_lock(&grpc_lock);
    for (int b = 0; b < SESSION_BUCKETS; b++) {
        for (session *s = buckets[b], *next; s; s = next) {
            next = s->hnext;
            free(s);
        }
        buckets[b] = NULL;
    }
    returned_head = returned_tail = NULL;
    returned_count = live_sessions = 0;
    for (int i = 0; i < nslots; i++) free(slots[i].b);
    free(slots);
    slots = NULL;
    nslots = 0;
    free(failed_ids);
    failed_ids = NULL;
    failed_first = failed_count = 0;
    initialized = 0;
    pthread_mutex_unlock(&grpc_lock);
    return finish(GRPC_NO_ERROR, NULL);
}
