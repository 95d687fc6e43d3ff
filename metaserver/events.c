/* events.c -- the metaserver's subscribers: typed events published from the
 * table into each subscriber's bounded queue, a subscriber dropped when full. */
#include "metaserver.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* One subscriber: its queue (a ring of EV_QUEUE events) and how its
 * connection thread is woken. */
typedef struct ev_sub {
    int used;
    uint32_t mask;
    char who[META_OWNER_MAX]; /* its identity (token name, or address)    */
    int fd;                   /* its socket: shut down when it is dropped */
    int wake;                 /* eventfd: events queued, or dropped       */
    msg_event *ring;          /* EV_QUEUE of them (owned)                 */
    int head, count;
    int signalled; /* its eventfd was written since it last emptied the queue */
    int dropped;   /* its queue overflowed: the connection is ending     */
} ev_sub;

/* Taken inside meta.lock (the table publishes), never the other way. */
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static ev_sub subs[EV_MAX_SUBSCRIBERS];
static int nsubs;
static uint64_t published, dropped_total;
/* The types some subscriber wants (the union of the masks), read without
 * the lock: an event nobody wants is not even built. */
static _Atomic uint32_t wanted;

/* Sets `wanted` from the subscribers (ev_lock held). */
static void update_wanted_locked(void)
{
    uint32_t m = 0;
    for (int i = 0; i < EV_MAX_SUBSCRIBERS; i++)
        if (subs[i].used) m |= subs[i].mask;
    atomic_store(&wanted, m);
}

int events_subscribe(uint32_t mask, const char *who, int fd, int *slot, int *wake, err_t *err)
{
    msg_event *ring = malloc(EV_QUEUE * sizeof *ring);
    int efd = ring ? eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC) : -1;
    if (efd < 0) {
        free(ring);
        return err_set(err, NUMRPC_ENOMEM, "a subscriber's queue");
    }
    pthread_mutex_lock(&ev_lock);
    int same = 0, free_slot = -1;
    for (int i = 0; i < EV_MAX_SUBSCRIBERS; i++) {
        if (!subs[i].used && free_slot < 0) free_slot = i;
        same += subs[i].used && strcmp(subs[i].who, who) == 0;
    }
    int rc = 0;
    if (same >= EV_PER_IDENTITY)
        rc = err_set(err, NUMRPC_EBUSY, "%s has %d event subscriptions on this metaserver already, the most one "
                     "identity may", who, same);
    else if (free_slot < 0)
        rc = err_set(err, NUMRPC_EBUSY, "this metaserver has %d event subscribers already, the most it takes",
                     EV_MAX_SUBSCRIBERS);
    if (rc == 0) {
        ev_sub *s = &subs[free_slot];
        memset(s, 0, sizeof *s);
        s->used = 1;
        s->mask = mask;
        snprintf(s->who, sizeof s->who, "%s", who);
        s->fd = fd;
        s->wake = efd;
        s->ring = ring;
        nsubs++;
        update_wanted_locked();
        *slot = free_slot;
        *wake = efd;
    }
    pthread_mutex_unlock(&ev_lock);
    if (rc != 0) {
        free(ring);
        close(efd);
    }
    return rc;
}

int events_take(int slot, msg_event *out, int max, int *dropped)
{
    pthread_mutex_lock(&ev_lock);
    ev_sub *s = &subs[slot];
    int n = 0;
    for (; n < max && s->count > 0; n++) {
        out[n] = s->ring[s->head];
        s->head = (s->head + 1) % EV_QUEUE;
        s->count--;
    }
    if (s->count == 0) s->signalled = 0; /* the next event wakes it again */
    *dropped = s->dropped;
    pthread_mutex_unlock(&ev_lock);
    return n;
}

void events_unsubscribe(int slot)
{
    pthread_mutex_lock(&ev_lock);
    ev_sub *s = &subs[slot];
    msg_event *ring = s->ring;
    int efd = s->wake;
    memset(s, 0, sizeof *s);
    nsubs--;
    update_wanted_locked();
    pthread_mutex_unlock(&ev_lock);
    free(ring);
    close(efd);
}

/* Wakes a subscriber's thread (never blocks: the eventfd is non-blocking
 * and a full counter wakes it already). */
static void wake(const ev_sub *s)
{
    uint64_t one = 1;
    if (write(s->wake, &one, sizeof one) < 0) { /* already woken */
    }
}

void events_publish(const msg_event *e)
{
    pthread_mutex_lock(&ev_lock);
    published++;
    for (int i = 0; nsubs > 0 && i < EV_MAX_SUBSCRIBERS; i++) {
        ev_sub *s = &subs[i];
        if (!s->used || s->dropped || !(s->mask & (1u << e->type))) continue;
        if (s->count == EV_QUEUE) {
            /* It does not keep up: dropped, its connection shut at once
             * (a send it is stuck in returns). */
            s->dropped = 1;
            dropped_total++;
            shutdown(s->fd, SHUT_RDWR);
        } else {
            s->ring[(s->head + s->count) % EV_QUEUE] = *e;
            s->count++;
        }
        if (!s->signalled || s->dropped) wake(s); /* once until it empties its queue */
        s->signalled = 1;
    }
    pthread_mutex_unlock(&ev_lock);
}

/* The event into *e (type, now, s's identity, the module, the detail). */
static void make(msg_event *e, uint32_t type, const meta_server *s, const char *routine, const char *fmt, va_list ap)
{
    memset(e, 0, sizeof *e);
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    e->type = type;
    e->time = (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
    e->server_id = s->id;
    if (msg_meta_label_ok(s->label)) snprintf(e->server, sizeof e->server, "%s", s->label);
    msg_event_clean(e->name, sizeof e->name, s->name);
    msg_event_clean(e->routine, sizeof e->routine, routine ? routine : "");
    char detail[sizeof e->detail];
    vsnprintf(detail, sizeof detail, fmt, ap);
    msg_event_clean(e->detail, sizeof e->detail, detail);
}

void events_server(uint32_t type, const meta_server *s, const char *routine, const char *fmt, ...)
{
    if (!events_wanted(type)) return;
    msg_event e;
    va_list ap;
    va_start(ap, fmt);
    make(&e, type, s, routine, fmt, ap);
    va_end(ap);
    events_publish(&e);
}

int events_make(msg_event *e, uint32_t type, const meta_server *s, const char *fmt, ...)
{
    if (!events_wanted(type)) return 0;
    va_list ap;
    va_start(ap, fmt);
    make(e, type, s, NULL, fmt, ap);
    va_end(ap);
    return 1;
}

int events_wanted(uint32_t type)
{
    return (atomic_load(&wanted) >> type) & 1u;
}

void events_counts(int *subscribers, uint64_t *events, uint64_t *dropped)
{
    pthread_mutex_lock(&ev_lock);
    *subscribers = nsubs;
    *events = published;
    *dropped = dropped_total;
    pthread_mutex_unlock(&ev_lock);
}
