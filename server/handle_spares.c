/* handle_spares.c -- the pool of spare handle files: a put or a writing call
 * takes pages already there (in this VM a fresh page costs 1 ms per MB). */
#include "handle_spares.h"

#include <stdio.h>
#include <unistd.h>

void spares_path(const char *dir, uint32_t number, char *out, size_t len)
{
    snprintf(out, len, "%s/spare-%08x", dir, number);
}

int spares_keep(spare_pool *p, const char *dir, const char *path, uint64_t bytes, uint64_t room, double now)
{
    if (bytes == 0 || bytes > room || p->bytes > room - bytes) return 0;
    spare_file *slot = NULL;
    for (int i = 0; i < SPARES_MAX && slot == NULL; i++)
        if (p->files[i].number == 0) slot = &p->files[i];
    if (slot == NULL) return 0;
    uint32_t number = p->last_number + 1 ? p->last_number + 1 : 1; /* 0 marks an empty slot */
    char spare[4096];
    spares_path(dir, number, spare, sizeof spare);
    if (rename(path, spare) != 0) return 0;
    p->last_number = number;
    *slot = (spare_file){number, bytes, now};
    p->bytes += bytes;
    return 1;
}

uint32_t spares_take(spare_pool *p, uint64_t bytes)
{
    spare_file *best = NULL;
    for (int i = 0; i < SPARES_MAX; i++) {
        spare_file *f = &p->files[i];
        if (f->number != 0 && f->bytes >= bytes && f->bytes - bytes <= bytes / 8 &&
            (best == NULL || f->bytes < best->bytes))
            best = f;
    }
    if (best == NULL) return 0;
    uint32_t number = best->number;
    p->bytes -= best->bytes;
    *best = (spare_file){0, 0, 0};
    return number;
}

int spares_shed(spare_pool *p, uint64_t keep_bytes, double idle_before, uint32_t *out)
{
    int n = 0;
    for (;;) {
        spare_file *oldest = NULL;
        for (int i = 0; i < SPARES_MAX; i++)
            if (p->files[i].number != 0 && (oldest == NULL || p->files[i].since < oldest->since))
                oldest = &p->files[i];
        if (oldest == NULL || (p->bytes <= keep_bytes && oldest->since >= idle_before)) return n;
        out[n++] = oldest->number;
        p->bytes -= oldest->bytes;
        *oldest = (spare_file){0, 0, 0};
    }
}

void spares_remove(const char *dir, uint32_t number)
{
    char path[4096];
    spares_path(dir, number, path, sizeof path);
    truncate(path, 0);
    unlink(path);
}
