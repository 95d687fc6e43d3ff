/* calltab.h -- the table of asynchronous calls by id: completion, what is
 * kept of returned calls, and the one wait family that numrpc_wait* and
 * grpc_wait* are built on (calltab.c). */
#ifndef NUMRPC_CLIENT_CALLTAB_H
#define NUMRPC_CLIENT_CALLTAB_H

#include <pthread.h>

#include "callobj.h"

/* Guards the table, every call object's farming fields and the farm. */
extern pthread_mutex_t farm_lock;

/* ---- The table (farm_lock held) ---- */
/* Gives k a fresh id and adds it; the table owns k from now on. */
void calltab_insert_locked(call_obj *k);
/* The live call with this id (started, not yet returned by a wait). */
call_obj *calltab_find_locked(int id);
/* Completes k: records rc/err, wakes waiters. */
void async_complete_locked(call_obj *k, int rc, const err_t *err);
/* While this thread defers, its completions wake the waiters only when it
 * stops deferring: a reader with more replies buffered. */
void async_defer_wakeups_locked(int defer);

/* ---- What is known of a call (takes farm_lock) ---- */
enum calltab_state { CALLTAB_UNKNOWN = 0, CALLTAB_RUNNING, CALLTAB_DONE, CALLTAB_RETURNED };
typedef struct calltab_facts {
    int state;             /* enum calltab_state                              */
    int rc;                /* its result once done (NUMRPC_EPENDING before)   */
    void *tag;             /* the tag it was started with                     */
    numrpc_call_info info; /* its figures so far                              */
} calltab_facts;
/* Facts of call id (live or among the last returned); its state. */
int calltab_facts_of(int id, calltab_facts *out);

/* ---- Waiting (takes farm_lock) ----
 * The calls are ids[0..n), or with ids NULL every live call (with tagged,
 * only those started with a tag).  A call is returned once: its waiter
 * gets its result and it leaves the table. */
typedef enum calltab_mode {
    CALLTAB_AND, /* every call of the list; ids returned elsewhere are skipped */
    CALLTAB_OR,  /* the first of them to complete                           */
    CALLTAB_PROBE_OR /* the first complete one, without waiting or returning it */
} calltab_mode;
/* Told of each call a wait returns (farm_lock held: it must not take it). */
typedef void calltab_returned_fn(int id, int rc);
/* With check set, every id must be live (and tagged, with tagged) or
 * nothing is waited for: -1 with err set (NUMRPC_EINVAL, *got the entry's
 * index).  Else the count of calls returned (AND, OR) or found (PROBE_OR);
 * *got: the id of the call an OR returned or found (0 when none), for AND
 * the first failed one in list order (with ids NULL: the lowest id);
 * *err: that call's outcome.  -1 with NUMRPC_ENOMEM on no memory.
 * returned (may be NULL) hears of every call returned. */
int calltab_wait(const int *ids, int n, int tagged, int check, calltab_mode mode,
                 calltab_returned_fn *returned, int *got, err_t *err);
/* The ids of every live call (with tagged, only tagged ones), lowest
 * first, into a malloc'd *ids (the caller frees): the count, or -1. */
int calltab_live_ids(int tagged, int **ids);

#endif
