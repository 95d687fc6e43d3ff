/* handle_spares.h -- files of freed and replaced handles, kept with their pages
 * for the next put or writing call (handle_spares.c); inside the store's table. */
#ifndef NUMRPC_SERVER_HANDLE_SPARES_H
#define NUMRPC_SERVER_HANDLE_SPARES_H

#include <stddef.h>
#include <stdint.h>

/* Spares kept at most (each waits unused at most one handle lease). */
#define SPARES_MAX 16

typedef struct spare_file {
    uint32_t number; /* its file is <dir>/spare-<number>; 0: the slot is empty */
    uint64_t bytes;
    double since; /* monotonic seconds: when it became a spare */
} spare_file;

/* Lives in the store's shared table; every call below but spares_remove
 * is made with the store's lock held. */
typedef struct spare_pool {
    uint32_t last_number;
    uint64_t bytes; /* of the files kept */
    spare_file files[SPARES_MAX];
} spare_pool;

void spares_path(const char *dir, uint32_t number, char *out, size_t len);
/* The file at path (bytes long, no call using it) is renamed a spare when
 * a slot is free and the pool then holds at most room bytes: 1, else 0
 * (the file untouched). */
int spares_keep(spare_pool *p, const char *dir, const char *path, uint64_t bytes, uint64_t room, double now);
/* The smallest spare of bytes to 1/8 more leaves the pool (a bigger one
 * would lose pages that a call of its own size will want): its
 * number (the caller renames its file and sizes it), or 0 when none fits. */
uint32_t spares_take(spare_pool *p, uint64_t bytes);
/* Spares leave the pool, oldest first, while it holds more than keep_bytes
 * or they have waited since before idle_before; their numbers go to out
 * (SPARES_MAX room).  The caller removes their files after unlocking. */
int spares_shed(spare_pool *p, uint64_t keep_bytes, double idle_before, uint32_t *out);
/* Frees a spare's pages at once (a worker may still map it) and its name. */
void spares_remove(const char *dir, uint32_t number);

#endif
