/* async.c -- asynchronous calls: starting one (bind now, send in the
 * background) and the public wait/probe/cancel family on the call table. */
#include "async.h"

#include <stdlib.h>

#include "calltab.h"
#include "call.h"
#include "farm.h"
#include "init.h"
#include "lasterr.h"
#include "start.h"
#include "sock.h"

static int unknown_id(int id)
{
    err_t err;
    err_set(&err, NUMRPC_EINVAL, "no call with id %d in progress (already returned by a wait, or never started)",
            id);
    return client_fail(&err);
}

/* Result of a returned call, as numrpc_wait reports it. */
static int report(int rc, const err_t *err)
{
    if (rc != 0) return client_fail(err);
    client_succeed();
    return 0;
}

/* ---- Starting a call ---- */

int async_start(int *id, const char *name, arg_source *src, void *tag)
{
    err_t err;
    err_clear(&err);
    if (id) *id = 0;
    if (id == NULL) {
        err_set(&err, NUMRPC_EINVAL, "numrpc_call_async: id is NULL");
        return client_fail(&err);
    }
    call_obj *k = calloc(1, sizeof *k);
    /* IN handles on other servers than the call's are copied there now
     * (the caller waits for the copy, not for the call); the copies go
     * when the call is returned (calltab.c). */
    handle_moves *moves = k ? calloc(1, sizeof *moves) : NULL;
    if (moves == NULL) {
        free(k);
        err_set(&err, NUMRPC_ENOMEM, "call object");
        return client_fail(&err);
    }
    endpoint eps[CLIENT_MAX_SERVERS];
    double limit = call_timeout();
    k->t_start = sock_now();
    k->deadline = limit > 0 ? k->t_start + limit : 0;
    k->moves = moves; /* place_bind_handles names the copies */
    int placed;
    handle_facts named;
    int n = call_start(k, name, src, 1, eps, moves, &placed, &named, &err);
    if (n < 0 || moves->n == 0) {
        moves_release(moves);
        free(moves);
        k->moves = NULL;
    } else {
        k->own_moves = moves;
    }
    if (n < 0) {
        call_release_args(k);
        free(k);
        return client_fail(&err);
    }
    k->tag = tag;
    pthread_mutex_lock(&farm_lock);
    calltab_insert_locked(k);
    *id = k->id;
    farm_submit_locked(k, eps, n);
    pthread_mutex_unlock(&farm_lock);
    client_succeed();
    return 0;
}

int numrpc_call_async_counted_(int *id, int nargs, const char *name, ...)
{
    va_list ap;
    va_start(ap, name);
    arg_source src = {nargs, NULL, &ap, NULL};
    int rc = async_start(id, name, &src, NULL);
    va_end(ap);
    return rc;
}

int numrpc_call_async_tagged_(int *id, int nargs, const char *name, ...)
{
    typed_arg typed[TYPED_MAX];
    err_t err;
    va_list ap;
    va_start(ap, name);
    int rc = typed_read(nargs, &ap, typed, name ? name : "numrpc_call_async", &err);
    va_end(ap);
    if (rc != 0) {
        if (id) *id = 0;
        return client_fail(&err);
    }
    arg_source src = {nargs, NULL, NULL, typed};
    return async_start(id, name, &src, NULL);
}

int numrpc_callv_async(int *id, const char *name, const numrpc_arg *args, int nargs)
{
    if (nargs > 0 && args == NULL) {
        err_t err;
        if (id) *id = 0;
        err_set(&err, NUMRPC_EINVAL, "numrpc_callv_async: args is NULL");
        return client_fail(&err);
    }
    arg_source src = {nargs, args, NULL, NULL};
    return async_start(id, name, &src, NULL);
}

/* ---- Waiting ---- */

int numrpc_wait(int id)
{
    err_t err;
    int got;
    if (calltab_wait(&id, 1, 0, 0, CALLTAB_AND, NULL, &got, &err) == 0) return unknown_id(id);
    return report(err.code, &err);
}

int numrpc_wait_all(void)
{
    err_t err;
    int got;
    if (calltab_wait(NULL, 0, 0, 0, CALLTAB_AND, NULL, &got, &err) < 0) err_prefix(&err, "numrpc_wait_all");
    return report(err.code, &err);
}

int numrpc_wait_any(int *id)
{
    err_t err;
    int got = 0;
    if (calltab_wait(NULL, 0, 0, 0, CALLTAB_OR, NULL, &got, &err) == 0)
        err_set(&err, NUMRPC_EINVAL, "numrpc_wait_any: no call in progress");
    if (id) *id = got;
    return report(err.code, &err);
}

/* A list of ids that must all name calls in progress: waits in mode. */
static int wait_list(const int *ids, int n, calltab_mode mode, int *id, const char *fn)
{
    err_t err;
    int got = 0, count = -1;
    if (n <= 0 || ids == NULL) err_set(&err, NUMRPC_EINVAL, "an empty list of call ids");
    else count = calltab_wait(ids, n, 0, 1, mode, NULL, &got, &err);
    if (count == 0 && mode == CALLTAB_OR)
        err_set(&err, NUMRPC_EINVAL, "%s: every call of the list was returned to another waiter", fn);
    if (id) *id = count > 0 ? got : 0;
    if (mode == CALLTAB_PROBE_OR && count >= 0) return count; /* found or not */
    return report(err.code, &err);
}

int numrpc_wait_and(const int *ids, int n)
{
    return wait_list(ids, n, CALLTAB_AND, NULL, "numrpc_wait_and");
}

int numrpc_wait_or(const int *ids, int n, int *id)
{
    return wait_list(ids, n, CALLTAB_OR, id, "numrpc_wait_or");
}

/* ---- Probing, cancelling, results ---- */

int numrpc_probe(int id)
{
    calltab_facts f;
    int state = calltab_facts_of(id, &f);
    if (state == CALLTAB_RUNNING || state == CALLTAB_DONE) return state == CALLTAB_DONE;
    return unknown_id(id);
}

int numrpc_probe_or(const int *ids, int n, int *id)
{
    return wait_list(ids, n, CALLTAB_PROBE_OR, id, "numrpc_probe_or");
}

int numrpc_cancel(int id)
{
    pthread_mutex_lock(&farm_lock);
    call_obj *k = calltab_find_locked(id);
    if (k && k->state != CALL_DONE) farm_cancel_locked(k);
    pthread_mutex_unlock(&farm_lock);
    if (k == NULL) return unknown_id(id);
    client_succeed();
    return 0;
}

int numrpc_get_error(int id)
{
    calltab_facts f;
    return calltab_facts_of(id, &f) == CALLTAB_UNKNOWN ? NUMRPC_EINVAL : f.rc;
}

int numrpc_call_info_of(int id, numrpc_call_info *info)
{
    calltab_facts f;
    if (info == NULL) return NUMRPC_EINVAL;
    if (calltab_facts_of(id, &f) == CALLTAB_UNKNOWN) return NUMRPC_EINVAL;
    *info = f.info;
    return NUMRPC_OK;
}
