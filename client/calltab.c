/* calltab.c -- the table of asynchronous calls by id: completion and its
 * wakeups, what is kept of returned calls, and the one wait family. */
#include "calltab.h"

#include <stdlib.h>

#include "bind.h"
#include "move.h"
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
/* The handles' copies of returned async calls, freed by calltab_wait (farm_lock). */
static handle_moves *moves_to_release;
static int next_id = 1;

/* What is kept of returned calls, for numrpc_get_error and info_of. */
#define RETIRED 4096
typedef struct retired_call {
    int id;
    int result;
    void *tag;
    numrpc_call_info info;
} retired_call;
static retired_call retired[RETIRED];

call_obj *calltab_find_locked(int id)
{
    if (id <= 0) return NULL;
    for (call_obj *k = table[id % TABLE_BUCKETS]; k; k = k->hnext)
        if (k->id == id) return k;
    return NULL;
}

void calltab_insert_locked(call_obj *k)
{
    do {
        k->id = next_id++;
        if (next_id <= 0) next_id = 1; /* after 2^31 calls, ids start again */
    } while (calltab_find_locked(k->id));
    call_obj **b = &table[k->id % TABLE_BUCKETS];
    k->hnext = *b;
    *b = k;
    live_calls++;
}

/* Takes a complete call out of the table, keeps its result and figures,
 * and frees it; its result and detail go to *err. */
static int retire_locked(call_obj *k, calltab_returned_fn *returned, err_t *err)
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
    r->tag = k->tag;
    r->info = k->info;
    *err = k->err;
    int rc = k->err.code;
    if (returned) returned(k->id, rc);
    call_release_args(k);
    if (k->own_moves != NULL) { /* released by calltab_wait, unlocked */
        k->own_moves->next = moves_to_release;
        moves_to_release = k->own_moves;
    }
    free(k);
    return rc;
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

int calltab_facts_of(int id, calltab_facts *out)
{
    pthread_mutex_lock(&farm_lock);
    const call_obj *k = calltab_find_locked(id);
    const retired_call *r = &retired[(id > 0 ? id : 0) % RETIRED];
    out->state = k ? (k->state == CALL_DONE ? CALLTAB_DONE : CALLTAB_RUNNING)
                   : id > 0 && r->id == id ? CALLTAB_RETURNED : CALLTAB_UNKNOWN;
    out->rc = k ? (k->state == CALL_DONE ? k->err.code : NUMRPC_EPENDING) : r->result;
    out->tag = k ? k->tag : r->tag;
    out->info = k ? k->info : r->info;
    pthread_mutex_unlock(&farm_lock);
    return out->state;
}

/* ---- Waiting ---- */

static int wanted(const call_obj *k, int tagged)
{
    return k != NULL && (!tagged || k->tag != NULL);
}

static int by_id(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int live_ids_locked(int tagged, int **ids)
{
    int n = 0;
    *ids = malloc((size_t)(live_calls > 0 ? live_calls : 1) * sizeof **ids);
    if (*ids == NULL) return -1;
    for (int b = 0; b < TABLE_BUCKETS && n < live_calls; b++)
        for (call_obj *k = table[b]; k && n < live_calls; k = k->hnext)
            if (wanted(k, tagged)) (*ids)[n++] = k->id;
    qsort(*ids, (size_t)n, sizeof **ids, by_id);
    return n;
}

int calltab_live_ids(int tagged, int **ids)
{
    pthread_mutex_lock(&farm_lock);
    int n = live_ids_locked(tagged, ids);
    pthread_mutex_unlock(&farm_lock);
    return n;
}

/* Every call of the list in turn (those returned elsewhere skipped). */
static int wait_every_locked(const int *ids, int n, calltab_returned_fn *returned, int *got,
                             err_t *err)
{
    int count = 0;
    for (int i = 0; i < n; i++) {
        call_obj *k = calltab_find_locked(ids[i]);
        while (k && k->state != CALL_DONE) {
            pthread_cond_wait(&done_cv, &farm_lock);
            k = calltab_find_locked(ids[i]);
        }
        if (k == NULL) continue;
        err_t e;
        count++;
        if (retire_locked(k, returned, &e) != 0 && *got == 0) {
            *got = ids[i];
            *err = e;
        }
    }
    return count;
}

/* The first complete call of the list (ids NULL: of the table), returned
 * (CALLTAB_OR) or only found (CALLTAB_PROBE_OR); 0 when none is left. */
static int wait_first_locked(const int *ids, int n, int tagged, calltab_mode mode,
                             calltab_returned_fn *returned, int *got, err_t *err)
{
    for (;;) {
        int present = 0;
        call_obj *done = NULL;
        for (int i = 0; ids && i < n && !done; i++) {
            call_obj *k = calltab_find_locked(ids[i]);
            if (!wanted(k, tagged)) continue;
            present = 1;
            if (k->state == CALL_DONE) done = k;
        }
        for (int b = 0; !ids && b < TABLE_BUCKETS && !done; b++) {
            for (call_obj *k = table[b]; k && !done; k = k->hnext) {
                if (!wanted(k, tagged)) continue;
                present = 1;
                if (k->state == CALL_DONE) done = k;
            }
        }
        if (done) {
            *got = done->id;
            if (mode == CALLTAB_OR) retire_locked(done, returned, err);
            else *err = done->err;
            return 1;
        }
        if (!present || mode == CALLTAB_PROBE_OR) return 0;
        pthread_cond_wait(&done_cv, &farm_lock);
    }
}

int calltab_wait(const int *ids, int n, int tagged, int check, calltab_mode mode,
                 calltab_returned_fn *returned, int *got, err_t *err)
{
    int *own = NULL, count = 0;
    *got = 0;
    err_clear(err);
    pthread_mutex_lock(&farm_lock);
    for (int i = 0; check && i < n; i++) {
        if (!wanted(calltab_find_locked(ids[i]), tagged)) {
            *got = i;
            count = err_set(err, NUMRPC_EINVAL, "no call with id %d in progress (entry %d of the list)",
                            ids[i], i);
            goto done;
        }
    }
    if (ids == NULL && mode == CALLTAB_AND) {
        n = live_ids_locked(tagged, &own);
        if (n < 0) {
            count = err_set(err, NUMRPC_ENOMEM, "a list of %d call ids", live_calls);
            goto done;
        }
        ids = own;
    }
    if (mode == CALLTAB_AND) count = wait_every_locked(ids, n, returned, got, err);
    else count = wait_first_locked(ids, n, tagged, mode, returned, got, err);
done:;
    handle_moves *release = moves_to_release;
    moves_to_release = NULL;
    pthread_mutex_unlock(&farm_lock);
    free(own);
    while (release != NULL) { /* the copies of the calls returned (network: not under the lock) */
        handle_moves *next = release->next;
        moves_release(release);
        free(release);
        release = next;
    }
    return count < 0 ? -1 : count;
}
