/* lease.c -- keeps this process's handles alive: one DATA_RENEW per server
 * every third of the shortest lease, from a thread that runs while they exist. */
#include "lease.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "dataio.h"
#include "handles.h"
#include "protocol.h"
#include "sock.h"

#define IDLE_SECONDS 1.0 /* look again this often when no lease is known */

static pthread_mutex_t lease_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lease_cv;
static pthread_once_t lease_once = PTHREAD_ONCE_INIT;
static int running, stopping;

/* A forked child has no renewal thread, whatever its parent had. */
static void forget_thread_in_child(void)
{
    running = stopping = 0;
    pthread_mutex_init(&lease_lock, NULL);
}

static void init_once(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC); /* the clock of sock_now */
    pthread_cond_init(&lease_cv, &a);
    pthread_condattr_destroy(&a);
    pthread_atfork(NULL, NULL, forget_thread_in_child);
}

/* One DATA_RENEW to each server of this process's handles; a server that
 * cannot be reached is tried again next round (its handles expire if it
 * stays away past their lease). */
static void renew_all(double deadline)
{
    uint32_t most = handles_count();
    endpoint *eps = most ? malloc(most * sizeof *eps) : NULL;
    int n = eps ? handles_servers(eps, (int)most) : 0;
    for (int i = 0; i < n; i++) {
        msg_data_id *ids = NULL;
        int count = handles_ids_on(eps[i].label, &ids);
        int32_t *statuses = count > 0 ? malloc((size_t)count * sizeof *statuses) : NULL;
        uint32_t lease_ms = 0;
        numrpc_call_info info = {0};
        err_t err;
        if (statuses && dataio_ids(&eps[i], PROTO_DATA_RENEW, ids, (uint32_t)count, statuses, &lease_ms, deadline,
                                   &info, &err) == 0)
            handles_renewed(eps[i].label, ids, statuses, (uint32_t)count, lease_ms);
        free(statuses);
        free(ids);
    }
    free(eps);
}

static void *renewer(void *unused)
{
    (void)unused;
    double last = sock_now();
    pthread_mutex_lock(&lease_lock);
    while (!stopping && handles_count() > 0) {
        uint32_t lease_ms = handles_min_lease();
        double period = lease_ms ? lease_ms / 3000.0 : IDLE_SECONDS, due = last + period;
        if (lease_ms == 0 || sock_now() < due) {
            double until = lease_ms ? due : sock_now() + IDLE_SECONDS;
            struct timespec ts = {(time_t)until, (long)((until - (double)(time_t)until) * 1e9)};
            pthread_cond_timedwait(&lease_cv, &lease_lock, &ts);
            continue;
        }
        last = sock_now();
        pthread_mutex_unlock(&lease_lock);
        renew_all(last + period);
        pthread_mutex_lock(&lease_lock);
    }
    running = 0;
    pthread_cond_broadcast(&lease_cv);
    pthread_mutex_unlock(&lease_lock);
    return NULL;
}

void lease_start(void)
{
    pthread_once(&lease_once, init_once);
    pthread_mutex_lock(&lease_lock);
    if (!running && !stopping) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        running = pthread_create(&t, &a, renewer, NULL) == 0;
        pthread_attr_destroy(&a);
    }
    pthread_cond_broadcast(&lease_cv); /* a shorter lease may have come */
    pthread_mutex_unlock(&lease_lock);
}

void lease_stop(void)
{
    pthread_once(&lease_once, init_once);
    pthread_mutex_lock(&lease_lock);
    stopping = 1;
    pthread_cond_broadcast(&lease_cv);
    while (running) pthread_cond_wait(&lease_cv, &lease_lock);
    stopping = 0;
    pthread_mutex_unlock(&lease_lock);
}
