/* handle_maps.c -- a worker's cache of handle mappings.  Mapping 8 MB of pages
 * already in memory costs 0.7 ms here, faulting them in 4 ms: done once. */
#define _GNU_SOURCE
#include "handle_maps.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iface.h"

/* Mappings kept while no call uses them, at most; and room for every
 * handle one call may name on top. */
#define KEEP_IDLE 16
#define MAPS_MAX (KEEP_IDLE + IFACE_MAX_PARAMS)

typedef struct kept_map {
    void *base; /* NULL: the slot is empty */
    uint64_t len;
    int fd; /* our own descriptor of the file: its name count and size */
    dev_t dev;
    ino_t ino;
    int writable;
    int in_use;
    uint64_t last_use;
} kept_map;

static kept_map maps[MAPS_MAX];
static uint64_t use_clock;

static void drop(kept_map *m)
{
    munmap(m->base, (size_t)m->len);
    close(m->fd);
    memset(m, 0, sizeof *m);
}

static kept_map *find_kept(const struct stat *st, int writable)
{
    for (int i = 0; i < MAPS_MAX; i++) {
        kept_map *m = &maps[i];
        if (m->base != NULL && m->dev == st->st_dev && m->ino == st->st_ino && m->writable == writable &&
            m->len == (uint64_t)st->st_size)
            return m;
    }
    return NULL;
}

/* An empty slot (there is one: at most KEEP_IDLE idle, and a call uses
 * at most IFACE_MAX_PARAMS). */
static kept_map *free_slot(void)
{
    for (int i = 0; i < MAPS_MAX; i++)
        if (maps[i].base == NULL) return &maps[i];
    return NULL;
}

/* Idle mappings beyond KEEP_IDLE go, those unused longest first. */
static void trim_idle(void)
{
    for (;;) {
        kept_map *lru = NULL;
        int idle = 0;
        for (int i = 0; i < MAPS_MAX; i++) {
            kept_map *m = &maps[i];
            if (m->base == NULL || m->in_use) continue;
            idle++;
            if (lru == NULL || m->last_use < lru->last_use) lru = m;
        }
        if (idle <= KEEP_IDLE) return;
        drop(lru);
    }
}

void *handle_maps_get(int fd, int writable, uint64_t bytes, const char *what, err_t *err)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < bytes || st.st_size == 0) {
        err_set(err, NUMRPC_ESERVER, "handle file %s is shorter than its %llu bytes", what, (unsigned long long)bytes);
        return NULL;
    }
    kept_map *m = find_kept(&st, writable);
    if (m != NULL) {
        m->in_use++;
        m->last_use = ++use_clock;
        return m->base;
    }
    int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
    void *base = mmap(NULL, (size_t)st.st_size, prot, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (base == MAP_FAILED) {
        err_set(err, NUMRPC_ESERVER, "cannot map handle file %s: %s", what, strerror(errno));
        return NULL;
    }
    m = free_slot();
    int own = m != NULL ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
    if (own < 0) {
        munmap(base, (size_t)st.st_size);
        err_set(err, NUMRPC_ESERVER, "cannot keep the mapping of handle file %s: %s", what,
                m == NULL ? "too many mapped" : strerror(errno));
        return NULL;
    }
    *m = (kept_map){base, (uint64_t)st.st_size, own, st.st_dev, st.st_ino, writable, 1, ++use_clock};
    return base;
}

void handle_maps_put(void *map)
{
    if (map == NULL) return;
    for (int i = 0; i < MAPS_MAX; i++) {
        kept_map *m = &maps[i];
        if (m->base != map || m->in_use == 0) continue;
        struct stat st;
        if (--m->in_use == 0 && (fstat(m->fd, &st) != 0 || st.st_nlink == 0)) drop(m);
        break;
    }
    trim_idle();
}
