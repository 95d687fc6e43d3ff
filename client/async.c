/* async.c -- asynchronous calls: the table of call ids, starting a call
 * (bind now, send in the background), and the wait/probe/cancel family. */
#include "client.h"
#include "meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sock.h"

pthread_mutex_t farm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
/* A thread that completes a run of calls wakes the waiters once, at its end
 * (async_defer_wakeups_locked): one wakeup per burst, not one per call. */
static __thread int defer_wakeups;
static int wakeup_due;

/* Live calls (started, not yet returned by a wait), by id. */
#define TABLE_BUCKETS 1024
static call_obj *table[TABLE_BUCKETS];
static int live_calls;
static int next_id = 1;

/* What is kept of returned calls, for numrpc_get_error and info_of. */
#define RETIRED 4096
typedef struct retired_call {
    int id;
    int result;
    numrpc_call_info info;
} retired_call;
static retired_call retired[RETIRED];

static call_obj *find_locked(int id)
{
    if (id <= 0) return NULL;
    for (call_obj *k = table[id % TABLE_BUCKETS]; k; k = k->hnext)
        if (k->id == id) return k;
    return NULL;
}

static void insert_locked(call_obj *k)
{
    do {
        k->id = next_id++;
        if (next_id <= 0) next_id = 1; /* after 2^31 calls, ids start again */
    } while (find_locked(k->id));
    call_obj **b = &table[k->id % TABLE_BUCKETS];
    k->hnext = *b;
    *b = k;
    live_calls++;
}

/* Takes a complete call out of the table, keeps its result and figures,
 * and frees it; its result and detail go to *err. */
static int retire_locked(call_obj *k, err_t *err)
{
    for (call_obj **p = &table[k->id % TABLE_BUCKETS]; *p; p = &(*p)->hnext) {
        if (*p == k) {
            *p = k->hnext;
            break;
        }
    }
    live_calls--;
    retired_call *r = &retired[k->id % RETIRED];
    r->id = k->id;
    r->result = k->err.code;
    r->info = k->info;
    *err = k->err;
    int rc = k->err.code;
    call_release_args(k);
    free(k);
    return rc;
}

static const retired_call *find_retired_locked(int id)
{
    const retired_call *r = &retired[(id > 0 ? id : 0) % RETIRED];
    return id > 0 && r->id == id ? r : NULL;
}

void async_complete_locked(call_obj *k, int rc, const err_t *err)
{
    if (k->state == CALL_DONE) return;
    if (rc == 0) err_clear(&k->err);
    else if (err) k->err = *err;
    else err_set(&k->err, rc, "%s", numrpc_strerror(rc));
    k->err.code = rc;
    if (k->info.total_seconds == 0 && k->t_start > 0) k->info.total_seconds = sock_now() - k->t_start;
    k->state = CALL_DONE;
    k->srv = NULL;
    k->conn = NULL;
    if (defer_wakeups) wakeup_due = 1;
    else pthread_cond_broadcast(&done_cv);
}

void async_defer_wakeups_locked(int defer)
{
    defer_wakeups = defer;
    if (!defer && wakeup_due) {
        wakeup_due = 0;
        pthread_cond_broadcast(&done_cv);
    }
}

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

/* The interface to bind against: the cached one of the first server that
 * answers (fetched now if none is cached: a cold call's extra round trip). */
static int bind_interface(call_obj *k, const endpoint *eps, int n, arg_source *src, err_t *err)
{
    int rc = NUMRPC_ENOSERVER;
    for (int i = 0; i < n; i++) {
        client_conn *c = NULL;
        iface_ref *ref = NULL;
        rc = conn_acquire(&eps[i], &c, err);
        if (rc == 0) rc = iface_cache_get(c, k->routine, &ref, err);
        if (c) {
            if (call_conn_usable(rc) && !c->hello_pending) conn_release(c);
            else conn_discard(c);
        }
        if (rc == 0) {
            rc = call_capture(k, &ref->iface, src, err);
            iface_cache_put(ref);
            return rc;
        }
        if (rc != NUMRPC_ECONNECT && rc != NUMRPC_EIO) return rc;
    }
    return rc;
}

/* A cached interface for the call's routine on any of eps, without I/O. */
static int bind_cached(call_obj *k, const endpoint *eps, int n, arg_source *src, err_t *err)
{
    for (int i = 0; i < n; i++) {
        iface_ref *ref = iface_cache_peek(eps[i].label, k->routine);
        if (ref == NULL) continue;
        int rc = call_capture(k, &ref->iface, src, err);
        iface_cache_put(ref);
        return rc;
    }
    return 1; /* nothing cached */
}

static int start_call(int *id, const char *name, arg_source *src)
{
    err_t err;
    err_clear(&err);
    if (id) *id = 0;
    if (id == NULL) {
        err_set(&err, NUMRPC_EINVAL, "numrpc_call_async: id is NULL");
        return client_fail(&err);
    }
    call_obj *k = calloc(1, sizeof *k);
    if (k == NULL) {
        err_set(&err, NUMRPC_ENOMEM, "call object");
        return client_fail(&err);
    }
    endpoint eps[CLIENT_MAX_SERVERS];
    int n = 1, bound = 0;
    double limit = call_timeout();
    k->t_start = sock_now();
    k->deadline = limit > 0 ? k->t_start + limit : 0;
    int rc = name ? client_ensure_init(&err) : err_set(&err, NUMRPC_EINVAL, "routine name is NULL");
    if (rc == 0) {
        int is_url = client_parse_url(name, &eps[0], k->routine, sizeof k->routine, &err);
        if (is_url < 0) rc = is_url;
        else if (is_url) {
            k->pinned = 1;
            k->pin = eps[0];
        } else if ((n = meta_enabled() ? meta_servers_for_async(k, src, eps, &bound, &err) /* ranked: meta.c */
                                       : client_servers(eps, &err)) < 0) {
            rc = n;
        }
    }
    if (rc == 0 && !bound) {
        rc = bind_cached(k, eps, n, src, &err);
        if (rc == 1) rc = bind_interface(k, eps, n, src, &err);
    }
    if (rc != 0) {
        free(k);
        return client_fail(&err);
    }
    pthread_mutex_lock(&farm_lock);
    insert_locked(k);
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
    arg_source src = {nargs, NULL, &ap};
    int rc = start_call(id, name, &src);
    va_end(ap);
    return rc;
}

int numrpc_callv_async(int *id, const char *name, const numrpc_arg *args, int nargs)
{
    if (nargs > 0 && args == NULL) {
        err_t err;
        if (id) *id = 0;
        err_set(&err, NUMRPC_EINVAL, "numrpc_callv_async: args is NULL");
        return client_fail(&err);
    }
    arg_source src = {nargs, args, NULL};
    return start_call(id, name, &src);
}

/* ---- Waiting ---- */

int numrpc_wait(int id)
{
    err_t err;
    pthread_mutex_lock(&farm_lock);
    call_obj *k = find_locked(id);
    while (k && k->state != CALL_DONE) {
        pthread_cond_wait(&done_cv, &farm_lock);
        k = find_locked(id); /* another waiter may have returned it */
    }
    if (k == NULL) {
        pthread_mutex_unlock(&farm_lock);
        return unknown_id(id);
    }
    int rc = retire_locked(k, &err);
    pthread_mutex_unlock(&farm_lock);
    return report(rc, &err);
}

int numrpc_wait_all(void)
{
    /* The calls in progress now: their ids, lowest first. */
    pthread_mutex_lock(&farm_lock);
    int n = 0, cap = live_calls;
    int *ids = cap > 0 ? malloc((size_t)cap * sizeof *ids) : NULL;
    if (cap > 0 && ids == NULL) {
        pthread_mutex_unlock(&farm_lock);
        err_t err;
        err_set(&err, NUMRPC_ENOMEM, "numrpc_wait_all: id list");
        return client_fail(&err);
    }
    for (int b = 0; b < TABLE_BUCKETS && n < cap; b++)
        for (call_obj *k = table[b]; k && n < cap; k = k->hnext) ids[n++] = k->id;
    int first_rc = 0, first_id = 0;
    err_t first_err, err;
    err_clear(&first_err);
    for (int i = 0; i < n; i++) {
        call_obj *k = find_locked(ids[i]);
        while (k && k->state != CALL_DONE) {
            pthread_cond_wait(&done_cv, &farm_lock);
            k = find_locked(ids[i]);
        }
        if (k == NULL) continue; /* another thread returned it */
        int rc = retire_locked(k, &err);
        if (rc != 0 && (first_rc == 0 || ids[i] < first_id)) {
            first_rc = rc;
            first_id = ids[i];
            first_err = err;
        }
    }
    pthread_mutex_unlock(&farm_lock);
    free(ids);
    return report(first_rc, &first_err);
}

int numrpc_wait_any(int *id)
{
    err_t err;
    if (id) *id = 0;
    pthread_mutex_lock(&farm_lock);
    for (;;) {
        if (live_calls == 0) {
            pthread_mutex_unlock(&farm_lock);
            err_set(&err, NUMRPC_EINVAL, "numrpc_wait_any: no call in progress");
            return client_fail(&err);
        }
        call_obj *done = NULL;
        for (int b = 0; b < TABLE_BUCKETS && !done; b++)
            for (call_obj *k = table[b]; k && !done; k = k->hnext)
                if (k->state == CALL_DONE) done = k;
        if (done) {
            if (id) *id = done->id;
            int rc = retire_locked(done, &err);
            pthread_mutex_unlock(&farm_lock);
            return report(rc, &err);
        }
        pthread_cond_wait(&done_cv, &farm_lock);
    }
}

static int check_ids_locked(const int *ids, int n, err_t *err)
{
    if (n <= 0 || ids == NULL) return err_set(err, NUMRPC_EINVAL, "an empty list of call ids");
    for (int i = 0; i < n; i++)
        if (find_locked(ids[i]) == NULL)
            return err_set(err, NUMRPC_EINVAL, "no call with id %d in progress (entry %d of the list)", ids[i], i);
    return 0;
}

int numrpc_wait_and(const int *ids, int n)
{
    err_t err, first_err;
    err_clear(&first_err);
    pthread_mutex_lock(&farm_lock);
    if (check_ids_locked(ids, n, &err) != 0) {
        pthread_mutex_unlock(&farm_lock);
        return client_fail(&err);
    }
    int first_rc = 0;
    for (int i = 0; i < n; i++) {
        call_obj *k = find_locked(ids[i]);
        while (k && k->state != CALL_DONE) {
            pthread_cond_wait(&done_cv, &farm_lock);
            k = find_locked(ids[i]);
        }
        if (k == NULL) continue; /* returned to another waiter meanwhile */
        int rc = retire_locked(k, &err);
        if (rc != 0 && first_rc == 0) {
            first_rc = rc;
            first_err = err;
        }
    }
    pthread_mutex_unlock(&farm_lock);
    return report(first_rc, &first_err);
}

int numrpc_wait_or(const int *ids, int n, int *id)
{
    err_t err;
    if (id) *id = 0;
    pthread_mutex_lock(&farm_lock);
    if (check_ids_locked(ids, n, &err) != 0) {
        pthread_mutex_unlock(&farm_lock);
        return client_fail(&err);
    }
    for (;;) {
        int present = 0;
        for (int i = 0; i < n; i++) {
            call_obj *k = find_locked(ids[i]);
            if (k == NULL) continue;
            present = 1;
            if (k->state != CALL_DONE) continue;
            if (id) *id = k->id;
            int rc = retire_locked(k, &err);
            pthread_mutex_unlock(&farm_lock);
            return report(rc, &err);
        }
        if (!present) { /* every one was returned to other waiters */
            pthread_mutex_unlock(&farm_lock);
            err_set(&err, NUMRPC_EINVAL, "numrpc_wait_or: every call of the list was returned to another waiter");
            return client_fail(&err);
        }
        pthread_cond_wait(&done_cv, &farm_lock);
    }
}

/* ---- Probing, cancelling, results ---- */

int numrpc_probe(int id)
{
    pthread_mutex_lock(&farm_lock);
    call_obj *k = find_locked(id);
    int rc = k == NULL ? NUMRPC_EINVAL : k->state == CALL_DONE;
    pthread_mutex_unlock(&farm_lock);
    return rc == NUMRPC_EINVAL ? unknown_id(id) : rc;
}

int numrpc_probe_or(const int *ids, int n, int *id)
{
    err_t err;
    if (id) *id = 0;
    pthread_mutex_lock(&farm_lock);
    if (check_ids_locked(ids, n, &err) != 0) {
        pthread_mutex_unlock(&farm_lock);
        return client_fail(&err);
    }
    int found = 0;
    for (int i = 0; i < n && !found; i++) {
        call_obj *k = find_locked(ids[i]);
        if (k && k->state == CALL_DONE) {
            found = 1;
            if (id) *id = k->id;
        }
    }
    pthread_mutex_unlock(&farm_lock);
    return found;
}

int numrpc_cancel(int id)
{
    pthread_mutex_lock(&farm_lock);
    call_obj *k = find_locked(id);
    if (k && k->state != CALL_DONE) farm_cancel_locked(k);
    pthread_mutex_unlock(&farm_lock);
    if (k == NULL) return unknown_id(id);
    client_succeed();
    return 0;
}

int numrpc_get_error(int id)
{
    pthread_mutex_lock(&farm_lock);
    call_obj *k = find_locked(id);
    const retired_call *r = k ? NULL : find_retired_locked(id);
    int rc = k ? (k->state == CALL_DONE ? k->err.code : NUMRPC_EPENDING) : r ? r->result : NUMRPC_EINVAL;
    pthread_mutex_unlock(&farm_lock);
    return rc;
}

int numrpc_call_info_of(int id, numrpc_call_info *info)
{
    if (info == NULL) return NUMRPC_EINVAL;
    pthread_mutex_lock(&farm_lock);
    call_obj *k = find_locked(id);
    const retired_call *r = k ? NULL : find_retired_locked(id);
    if (k) *info = k->info;
    else if (r) *info = r->info;
    pthread_mutex_unlock(&farm_lock);
    return k || r ? NUMRPC_OK : NUMRPC_EINVAL;
}
