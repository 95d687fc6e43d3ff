/* keep.c -- the job's kept arrays (keep.h): found by handle key and layout,
 * added in place of older versions, evicted least recently used first. */
#include "keep.h"

#include <string.h>

void keep_init(keep_store *k, uint64_t budget)
{
    memset(k, 0, sizeof *k);
    k->budget = budget;
}

static void drop(keep_store *k, int i)
{
    keep_entry *e = &k->items[i];
    dist_matrix_free(&e->matrix);
    dist_pivots_free(&e->pivots);
    k->bytes -= e->bytes;
    memset(e, 0, sizeof *e);
}

void keep_clear(keep_store *k)
{
    for (int i = 0; i < KEEP_MAX_ENTRIES; i++)
        if (k->items[i].used)
            drop(k, i);
}

static int same_key(const engine_key *a, const engine_key *b)
{
    return a->version == b->version && memcmp(a->id, b->id, sizeof a->id) == 0;
}

static int find(keep_store *k, const engine_key *key, int is_pivots, int m, int n, int ld)
{
    for (int i = 0; i < KEEP_MAX_ENTRIES; i++) {
        keep_entry *e = &k->items[i];
        if (e->used && e->is_pivots == is_pivots && e->m == m && e->n == n && e->ld == ld &&
            same_key(&e->key, key))
            return i;
    }
    return -1;
}

int keep_find_matrix(keep_store *k, const engine_key *key, int m, int n, int ld)
{
    return find(k, key, 0, m, n, ld);
}

int keep_find_pivots(keep_store *k, const engine_key *key, int m)
{
    return find(k, key, 1, m, 0, 0);
}

void keep_touch(keep_store *k, int i)
{
    k->items[i].last_use = ++k->clock;
}

void keep_take(keep_store *k, int i)
{
    k->bytes -= k->items[i].bytes;
    memset(&k->items[i], 0, sizeof k->items[i]);
}

/* A free entry for bytes more, after the same handle's entries and then
 * the least recently used went; -1 when bytes pass the whole budget. */
static int make_room(keep_store *k, const engine_key *key, uint64_t bytes)
{
    for (int i = 0; i < KEEP_MAX_ENTRIES; i++)
        if (k->items[i].used && memcmp(k->items[i].key.id, key->id, sizeof key->id) == 0)
            drop(k, i);
    if (bytes > k->budget)
        return -1;
    for (;;) {
        int free_at = -1, oldest = -1;
        for (int i = 0; i < KEEP_MAX_ENTRIES; i++) {
            const keep_entry *e = &k->items[i];
            if (!e->used && free_at < 0)
                free_at = i;
            if (e->used && (oldest < 0 || e->last_use < k->items[oldest].last_use))
                oldest = i;
        }
        if (free_at >= 0 && k->bytes + bytes <= k->budget)
            return free_at;
        drop(k, oldest); /* something is kept, or both tests passed */
    }
}

static keep_entry *add(keep_store *k, const engine_key *key, uint64_t bytes)
{
    int i = make_room(k, key, bytes);
    if (i < 0)
        return NULL;
    keep_entry *e = &k->items[i];
    e->used = 1;
    e->key = *key;
    e->bytes = bytes;
    e->last_use = ++k->clock;
    k->bytes += bytes;
    return e;
}

void keep_add_matrix(keep_store *k, const engine_key *key, int ld, dist_matrix *d)
{
    keep_entry *e = add(k, key, (uint64_t)d->m * (uint64_t)d->n * sizeof(double));
    if (e == NULL) {
        dist_matrix_free(d);
        return;
    }
    e->m = d->m;
    e->n = d->n;
    e->ld = ld;
    e->matrix = *d;
    memset(d, 0, sizeof *d);
}

void keep_add_pivots(keep_store *k, const engine_key *key, dist_pivots *p)
{
    keep_entry *e = add(k, key, (uint64_t)p->m * sizeof(int32_t));
    if (e == NULL) {
        dist_pivots_free(p);
        return;
    }
    e->is_pivots = 1;
    e->m = p->m;
    e->pivots = *p;
    memset(p, 0, sizeof *p);
}
