/* handles.c -- the set of live data handles, by name: which numrpc_data *
 * are handles, where each lives, and what renewals need (under client_lock). */
#include "handles.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIRST_BUCKETS 64u

static numrpc_data *first_table[FIRST_BUCKETS];
static struct {
    numrpc_data **buckets; /* first_table, or malloc'd when it grew */
    uint32_t nbuckets;
    _Atomic uint32_t count;
} set = {first_table, FIRST_BUCKETS, 0};

/* Names are numbers above every user-space address (x86-64 and arm64 keep
 * those below 2^48), counted up from here: never a pointer, never reused. */
#define NAME_BASE 0xFFFE000000000000ull
static uint64_t next_serial = 1; /* under client_lock */

static uint32_t bucket_of(uint64_t name, uint32_t nbuckets)
{
    uint64_t x = name;
    x ^= x >> 29;
    x *= 0x9E3779B97F4A7C15ull; /* spreads the low bits allocators leave alike */
    return (uint32_t)(x >> 32) & (nbuckets - 1);
}

/* Doubles the table (client_lock held); on failure the chains just grow. */
static void grow_locked(void)
{
    uint32_t n = 2 * set.nbuckets;
    numrpc_data **b = calloc(n, sizeof *b);
    if (b == NULL) return;
    for (uint32_t i = 0; i < set.nbuckets; i++) {
        numrpc_data *h = set.buckets[i];
        while (h) {
            numrpc_data *next = h->next;
            uint32_t at = bucket_of(h->name, n);
            h->next = b[at];
            b[at] = h;
            h = next;
        }
    }
    if (set.buckets != first_table) free(set.buckets);
    set.buckets = b;
    set.nbuckets = n;
}

numrpc_data *handles_insert(numrpc_data *h)
{
    pthread_mutex_lock(&client_lock);
    if (atomic_load(&set.count) >= 2 * set.nbuckets) grow_locked();
    h->name = NAME_BASE | next_serial++;
    uint32_t at = bucket_of(h->name, set.nbuckets);
    h->next = set.buckets[at];
    set.buckets[at] = h;
    atomic_fetch_add(&set.count, 1);
    pthread_mutex_unlock(&client_lock);
    return (numrpc_data *)(uintptr_t)h->name;
}

int handles_is_name(const void *p)
{
    return ((uint64_t)(uintptr_t)p & NAME_BASE) == NAME_BASE;
}

/* The link to the handle named p, or NULL (client_lock held). */
static numrpc_data **find_locked(const void *p)
{
    uint64_t name = (uint64_t)(uintptr_t)p;
    if ((name & NAME_BASE) != NAME_BASE) return NULL; /* a pointer, not a name */
    for (numrpc_data **l = &set.buckets[bucket_of(name, set.nbuckets)]; *l; l = &(*l)->next)
        if ((*l)->name == name) return l;
    return NULL;
}

numrpc_data *handles_remove(const void *p)
{
    pthread_mutex_lock(&client_lock);
    numrpc_data **l = find_locked(p), *h = l ? *l : NULL;
    if (h) {
        *l = h->next;
        h->next = NULL;
        atomic_fetch_sub(&set.count, 1);
    }
    pthread_mutex_unlock(&client_lock);
    return h;
}

int handles_lookup(const void *p, handle_facts *out)
{
    if (p == NULL || atomic_load_explicit(&set.count, memory_order_relaxed) == 0) return 0;
    pthread_mutex_lock(&client_lock);
    numrpc_data **l = find_locked(p);
    if (l) {
        out->id = (*l)->id;
        out->shape = (*l)->shape;
        out->server = (*l)->server;
    }
    pthread_mutex_unlock(&client_lock);
    return l != NULL;
}

uint32_t handles_count(void)
{
    return atomic_load_explicit(&set.count, memory_order_relaxed);
}

/* Every handle h of the set (client_lock held). */
#define FOR_EACH_HANDLE(h)                                                                                   \
    for (uint32_t b_ = 0; b_ < set.nbuckets; b_++)                                                          \
        for (numrpc_data *h = set.buckets[b_]; h; h = h->next)

uint32_t handles_min_lease(void)
{
    uint32_t least = 0;
    pthread_mutex_lock(&client_lock);
    FOR_EACH_HANDLE(h) {
        if (!h->gone && h->lease_ms > 0 && (least == 0 || h->lease_ms < least)) least = h->lease_ms;
    }
    pthread_mutex_unlock(&client_lock);
    return least;
}

int handles_servers(endpoint *out, int max)
{
    int n = 0;
    pthread_mutex_lock(&client_lock);
    FOR_EACH_HANDLE(h) {
        int seen = 0;
        for (int i = 0; i < n && !seen; i++) seen = strcmp(out[i].label, h->server.label) == 0;
        if (!seen && n < max) out[n++] = h->server;
    }
    pthread_mutex_unlock(&client_lock);
    return n;
}

int handles_ids_on(const char *label, msg_data_id **ids)
{
    int n = 0, cap = 0;
    pid_t self = getpid();
    *ids = NULL;
    pthread_mutex_lock(&client_lock);
    FOR_EACH_HANDLE(h) {
        cap += !h->gone && h->owner == self && strcmp(h->server.label, label) == 0;
    }
    if (cap > 0 && (*ids = malloc((size_t)cap * sizeof **ids)) == NULL) n = -1;
    if (*ids) {
        FOR_EACH_HANDLE(h) {
            if (!h->gone && h->owner == self && strcmp(h->server.label, label) == 0) (*ids)[n++] = h->id;
        }
    }
    pthread_mutex_unlock(&client_lock);
    return n;
}

void handles_renewed(const char *label, const msg_data_id *ids, const int32_t *statuses, uint32_t n,
                     uint32_t lease_ms)
{
    pthread_mutex_lock(&client_lock);
    FOR_EACH_HANDLE(h) {
        if (strcmp(h->server.label, label) != 0) continue;
        for (uint32_t i = 0; i < n; i++) {
            if (memcmp(ids[i].b, h->id.b, sizeof h->id.b) != 0) continue;
            if (statuses[i] == NUMRPC_ENOHANDLE) h->gone = 1;
            else if (statuses[i] == NUMRPC_OK && lease_ms > 0) h->lease_ms = lease_ms;
            break;
        }
    }
    pthread_mutex_unlock(&client_lock);
}

numrpc_data *handles_take_all(void)
{
    numrpc_data *list = NULL;
    pthread_mutex_lock(&client_lock);
    for (uint32_t b = 0; b < set.nbuckets; b++) {
        while (set.buckets[b]) {
            numrpc_data *h = set.buckets[b];
            set.buckets[b] = h->next;
            h->next = list;
            list = h;
        }
    }
    atomic_store(&set.count, 0);
    pthread_mutex_unlock(&client_lock);
    return list;
}
