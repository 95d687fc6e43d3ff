/* handles.c -- the store of data handles at work: the shared table's entries,
 * tickets and budgets, the files named by id, and the dispatcher's pass. */
#define _GNU_SOURCE
#include "handles.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "handle_maps.h"
#include "handle_spares.h"
#include "handle_store.h"
#include "iface.h"
#include "log.h"
#include "sock.h"
#include "tokens.h"

#define NEW_SUFFIX ".new"
/* Files one pass of the sweep unlinks at most (the rest: next pass). */
#define SWEEP_BATCH 64

handle_store *server_handles;

const char *const handle_limit_names[HANDLE_LIMITS] = {
    "max-handles", "max-handles-per-identity", "handle-bytes", "handle-bytes-per-identity",
    "tickets", "tickets-per-identity",
};

void handles_path(const handle_store *s, const msg_data_id *id, const char *suffix, char *out, size_t len)
{
    char hex[2 * MSG_DATA_ID_SIZE + 1];
    msg_data_id_hex(id, hex);
    snprintf(out, len, "%s/%s%s", s->dir, hex, suffix);
}

/* A file no call uses leaves: its pages at once (a worker may keep a
 * mapping of it, handle_maps.c), then its name. */
static void remove_file(const char *path)
{
    truncate(path, 0);
    unlink(path);
}

static void unlink_file(const handle_store *s, const msg_data_id *id, const char *suffix)
{
    char path[sizeof s->dir + 2 * MSG_DATA_ID_SIZE + 8];
    handles_path(s, id, suffix, path, sizeof path);
    remove_file(path);
}

/* The file at path (bytes long, no call using it) becomes a spare if the
 * budget has room; called with the lock held.  1 when kept. */
static int keep_spare(handle_store *s, const char *path, uint64_t bytes)
{
    return spares_keep(&s->spares, s->dir, path, bytes, s->max_bytes - s->bytes, sock_now());
}

/* Spares shed (their numbers in gone) go, after the lock is let go. */
static void remove_spares(const handle_store *s, const uint32_t *gone, int n)
{
    for (int i = 0; i < n; i++) spares_remove(s->dir, gone[i]);
}

/* ---- The table ---- */

static double lease_end(const handle_store *s)
{
    return sock_now() + s->lease_ms / 1000.0;
}

/* Entry i leaves the table (the caller unlinks its file, outside the lock). */
static void release(handle_store *s, uint32_t i)
{
    s->bytes -= s->items[i].bytes;
    s->count--;
    memset(&s->items[i], 0, sizeof s->items[i]);
}

/* The LIVE entry of owner named id, or -1 (another owner's is not found). */
static long find_live(const handle_store *s, const char *owner, const msg_data_id *id)
{
    for (uint32_t i = 0; i < s->capacity; i++) {
        const handle_entry *e = &s->items[i];
        if (e->state == ENTRY_LIVE && memcmp(e->id.b, id->b, MSG_DATA_ID_SIZE) == 0)
            return strcmp(e->owner, owner) == 0 ? (long)i : -1;
    }
    return -1;
}

static void copy_ref(const handle_store *s, uint32_t i, handle_ref *ref)
{
    ref->index = i;
    ref->id = s->items[i].id;
    ref->shape = s->items[i].shape;
    ref->bytes = s->items[i].bytes;
    ref->version = s->items[i].version;
    ref->next_version = 0;
}

/* A version never handed out before (with the lock held). */
static uint64_t fresh_version(handle_store *s)
{
    return ++s->last_version;
}

static int no_handle(const msg_data_id *id, err_t *err)
{
    char hex[2 * MSG_DATA_ID_SIZE + 1];
    msg_data_id_hex(id, hex);
    return err_set(err, NUMRPC_ENOHANDLE, "handle %s is not on this server: freed, expired, or the server restarted",
                   hex);
}

uint32_t handles_lease_ms(handle_store *s)
{
    return s->lease_ms;
}

/* The handles charged to account (being filled too): how many, their bytes. */
static void account_usage(const handle_store *s, const char *account, uint32_t *count, uint64_t *bytes)
{
    *count = 0;
    *bytes = 0;
    for (uint32_t i = 0; i < s->capacity; i++)
        if (s->items[i].state != ENTRY_FREE && strcmp(s->items[i].account, account) == 0) {
            (*count)++;
            *bytes += s->items[i].bytes;
        }
}

/* The limit `which` turns a request away: counted (/metrics), then err. */
static int refused(handle_store *s, int which)
{
    s->refused[which]++;
    return NUMRPC_ELIMIT;
}

/* The budgets: 0, or NUMRPC_ELIMIT saying which one is full (counted). */
static int check_budgets(handle_store *s, const char *account, uint64_t bytes, err_t *err)
{
    if (s->count >= s->capacity)
        return err_set(err, refused(s, HANDLE_LIMIT_TABLE), "this server holds its most handles, %u (--max-handles)",
                       s->capacity);
    uint32_t mine;
    uint64_t mine_bytes;
    account_usage(s, account, &mine, &mine_bytes);
    if (mine >= s->max_identity_handles)
        return err_set(err, refused(s, HANDLE_LIMIT_IDENTITY),
                       "%s holds %u handles, the most one identity may keep on this server "
                       "(--max-handles-per-identity %u); free some first",
                       account, mine, s->max_identity_handles);
    if (bytes > s->max_bytes || s->bytes > s->max_bytes - bytes)
        return err_set(err, refused(s, HANDLE_LIMIT_BYTES),
                       "a handle of %llu bytes does not fit: this server's handles hold %llu of the %llu bytes "
                       "it keeps (--handle-bytes)",
                       (unsigned long long)bytes, (unsigned long long)s->bytes, (unsigned long long)s->max_bytes);
    if (bytes > s->max_identity_bytes || mine_bytes > s->max_identity_bytes - bytes)
        return err_set(err, refused(s, HANDLE_LIMIT_IDENTITY_BYTES),
                       "a handle of %llu bytes does not fit: the handles of %s hold %llu of the %llu bytes one "
                       "identity may keep (--handle-bytes-per-identity)",
                       (unsigned long long)bytes, account, (unsigned long long)mine_bytes,
                       (unsigned long long)s->max_identity_bytes);
    return 0;
}

int handles_reserve(handle_store *s, const char *owner, const char *account, const msg_data_shape *shape,
                    handle_ref *ref, err_t *err)
{
    uint64_t bytes = msg_data_mem_elems(shape) * iface_type_size(shape->type); /* checked by the reader */
    msg_data_id id;
    if (getrandom(id.b, sizeof id.b, 0) != (ssize_t)sizeof id.b)
        return err_set(err, NUMRPC_ESERVER, "no random bytes for a handle id: %s", strerror(errno));
    lock(s);
    int rc = check_budgets(s, account, bytes, err);
    uint32_t i = 0;
    while (rc == 0 && s->items[i].state != ENTRY_FREE) i++; /* count < capacity: there is one */
    if (rc == 0) {
        handle_entry *e = &s->items[i];
        e->state = ENTRY_FILLING;
        e->writer = getpid();
        e->id = id;
        snprintf(e->owner, sizeof e->owner, "%s", owner);
        snprintf(e->account, sizeof e->account, "%s", account);
        e->shape = *shape;
        e->bytes = bytes;
        e->lease_end = lease_end(s);
        s->bytes += bytes;
        s->count++;
        copy_ref(s, i, ref);
    }
    uint32_t gone[SPARES_MAX];
    int n_gone = rc == 0 ? spares_shed(&s->spares, s->max_bytes - s->bytes, 0, gone) : 0;
    unlock(s);
    remove_spares(s, gone, n_gone);
    return rc;
}

/* True when entry ref->index is still ref's handle in state. */
static int still(const handle_store *s, const handle_ref *ref, int state)
{
    const handle_entry *e = &s->items[ref->index];
    return e->state == state && memcmp(e->id.b, ref->id.b, MSG_DATA_ID_SIZE) == 0;
}

void handles_publish(handle_store *s, const handle_ref *ref)
{
    lock(s);
    if (still(s, ref, ENTRY_FILLING)) {
        s->items[ref->index].state = ENTRY_LIVE;
        s->items[ref->index].writer = 0;
        s->items[ref->index].version = fresh_version(s);
        s->items[ref->index].lease_end = lease_end(s);
    }
    unlock(s);
}

void handles_discard(handle_store *s, const handle_ref *ref)
{
    unlink_file(s, &ref->id, ""); /* first: when the count drops, the file is gone */
    lock(s);
    if (still(s, ref, ENTRY_FILLING)) release(s, ref->index);
    unlock(s);
}

int handles_find(handle_store *s, const char *owner, const msg_data_id *id, handle_ref *ref, err_t *err)
{
    lock(s);
    long i = find_live(s, owner, id);
    if (i >= 0) {
        s->items[i].lease_end = lease_end(s);
        copy_ref(s, (uint32_t)i, ref);
    }
    unlock(s);
    return i >= 0 ? 0 : no_handle(id, err);
}

int handles_free(handle_store *s, const char *owner, const msg_data_id *id)
{
    char path[sizeof s->dir + 2 * MSG_DATA_ID_SIZE + 8];
    handles_path(s, id, "", path, sizeof path);
    lock(s);
    long i = find_live(s, owner, id);
    int read = 0, kept = 0;
    if (i >= 0) {
        uint64_t bytes = s->items[i].bytes;
        read = s->items[i].readers != 0;
        release(s, (uint32_t)i);
        kept = !read && keep_spare(s, path, bytes);
    }
    unlock(s);
    if (i >= 0 && !kept) read ? unlink(path) : remove_file(path); /* a call reading it keeps its pages */
    return i >= 0 ? 0 : NUMRPC_ENOHANDLE;
}

int handles_renew(handle_store *s, const char *owner, const msg_data_id *id)
{
    lock(s);
    long i = find_live(s, owner, id);
    if (i >= 0) s->items[i].lease_end = lease_end(s);
    unlock(s);
    return i >= 0 ? 0 : NUMRPC_ENOHANDLE;
}

int handles_claim(handle_store *s, const char *owner, const msg_data_id *id, handle_ref *ref, err_t *err)
{
    lock(s);
    long i = find_live(s, owner, id);
    int busy = i >= 0 && s->items[i].writer != 0;
    if (i >= 0 && !busy) {
        s->items[i].writer = getpid();
        s->items[i].lease_end = lease_end(s);
        copy_ref(s, (uint32_t)i, ref);
        ref->next_version = fresh_version(s);
    }
    unlock(s);
    if (i < 0) return no_handle(id, err);
    if (busy) {
        char hex[2 * MSG_DATA_ID_SIZE + 1];
        msg_data_id_hex(id, hex);
        return err_set(err, NUMRPC_EBUSY, "handle %s is being written by another call; try again when it ends", hex);
    }
    return 0;
}

/* ---- Tickets: one DATA_GET of a handle by whoever holds one ---- */

/* A free (or expired) ticket slot, -1 when none; *mine: account's fresh ones. */
static long ticket_slot(const handle_store *s, const char *account, double now, int *mine)
{
    long slot = -1;
    *mine = 0;
    for (uint32_t k = 0; k < TICKETS; k++) {
        const handle_ticket *t = &s->tickets[k];
        if (t->expires < now) {
            if (slot < 0) slot = k; /* free (0) or expired */
        } else if (strcmp(t->account, account) == 0) {
            (*mine)++;
        }
    }
    return slot;
}

int handles_grant(handle_store *s, const char *owner, const char *account, const msg_data_id *id,
                  msg_data_id *ticket, uint32_t *ttl_ms, err_t *err)
{
    if (getrandom(ticket->b, sizeof ticket->b, 0) != (ssize_t)sizeof ticket->b)
        return err_set(err, NUMRPC_ESERVER, "no random bytes for a ticket: %s", strerror(errno));
    double now = sock_now();
    lock(s);
    long i = find_live(s, owner, id);
    int mine = 0;
    long slot = i >= 0 ? ticket_slot(s, account, now, &mine) : -1;
    int full = i >= 0 && slot < 0, over = i >= 0 && !full && mine >= TICKETS_PER_IDENTITY;
    if (full) refused(s, HANDLE_LIMIT_TICKETS);
    if (over) refused(s, HANDLE_LIMIT_IDENTITY_TICKETS);
    if (slot >= 0 && !over) {
        s->items[i].lease_end = lease_end(s);
        handle_ticket *t = &s->tickets[slot];
        *t = (handle_ticket){*ticket, *id, now + s->ticket_ms / 1000.0, ""};
        snprintf(t->account, sizeof t->account, "%s", account);
        *ttl_ms = s->ticket_ms;
    }
    unlock(s);
    if (i < 0) return no_handle(id, err);
    if (full) return err_set(err, NUMRPC_ELIMIT, "%d tickets are outstanding on this server; try again", TICKETS);
    if (over)
        return err_set(err, NUMRPC_ELIMIT,
                       "%s holds %d tickets, the most one identity may have outstanding on this server (a quarter "
                       "of its %d); try again when they are used or expire",
                       account, mine, TICKETS);
    return 0;
}

int handles_redeem(handle_store *s, const msg_data_id *ticket, handle_ref *ref)
{
    double now = sock_now();
    long i = -1;
    lock(s);
    for (uint32_t k = 0; k < TICKETS; k++) {
        handle_ticket *t = &s->tickets[k];
        if (t->expires == 0 || memcmp(t->ticket.b, ticket->b, MSG_DATA_ID_SIZE) != 0) continue;
        int fresh = t->expires >= now;
        msg_data_id id = t->id;
        memset(t, 0, sizeof *t); /* used once, or expired: gone either way */
        for (uint32_t j = 0; fresh && j < s->capacity && i < 0; j++)
            if (s->items[j].state == ENTRY_LIVE && memcmp(s->items[j].id.b, id.b, MSG_DATA_ID_SIZE) == 0) i = j;
        break;
    }
    if (i >= 0) copy_ref(s, (uint32_t)i, ref);
    unlock(s);
    return i >= 0;
}

void handles_count_moved(handle_store *s, uint64_t pulled, uint64_t lent)
{
    lock(s);
    s->pulled_bytes += pulled;
    s->lent_bytes += lent;
    unlock(s);
}

void handles_refusals(handle_store *s, uint64_t out[HANDLE_LIMITS])
{
    memset(out, 0, HANDLE_LIMITS * sizeof out[0]);
    if (s == NULL) return;
    lock(s);
    memcpy(out, s->refused, HANDLE_LIMITS * sizeof out[0]);
    unlock(s);
}

void handles_moved(handle_store *s, uint64_t *pulled, uint64_t *lent)
{
    *pulled = *lent = 0;
    if (s == NULL) return;
    lock(s);
    *pulled = s->pulled_bytes;
    *lent = s->lent_bytes;
    unlock(s);
}

int handles_commit(handle_store *s, const handle_ref *ref, err_t *err)
{
    char from[sizeof s->dir + 2 * MSG_DATA_ID_SIZE + 8], to[sizeof from];
    handles_path(s, &ref->id, NEW_SUFFIX, from, sizeof from);
    handles_path(s, &ref->id, "", to, sizeof to);
    lock(s);
    int mine = still(s, ref, ENTRY_LIVE) && s->items[ref->index].writer == getpid();
    int read = mine && s->items[ref->index].readers != 0;
    /* Under the lock, so that a free cannot come between: the handle's name
     * now holds the result, and <id>.new its old file, kept as a spare. */
    int rc = mine ? renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE) : 0;
    int saved = errno;
    if (mine && rc == 0) s->items[ref->index].version = ref->next_version; /* new bytes, new name */
    int kept = mine && rc == 0 && !read && keep_spare(s, from, ref->bytes);
    unlock(s);
    if (!kept) read && rc == 0 ? unlink(from) : remove_file(from); /* a call reading the old file keeps it */
    if (rc != 0) return err_set(err, NUMRPC_ESERVER, "cannot store the result in its handle: %s", strerror(saved));
    return 0; /* a handle freed meanwhile takes nothing: its caller let it go */
}

void handles_abandon(handle_store *s, const handle_ref *ref)
{
    char path[sizeof s->dir + 2 * MSG_DATA_ID_SIZE + 8];
    handles_path(s, &ref->id, NEW_SUFFIX, path, sizeof path);
    lock(s);
    int mine = still(s, ref, ENTRY_LIVE) && s->items[ref->index].writer == getpid();
    if (mine && !keep_spare(s, path, ref->bytes)) remove_file(path); /* else another call may own <id>.new now */
    unlock(s);
}

void handles_unclaim(handle_store *s, const handle_ref *ref)
{
    lock(s);
    if (still(s, ref, ENTRY_LIVE) && s->items[ref->index].writer == getpid()) s->items[ref->index].writer = 0;
    unlock(s);
}

/* ---- Files ---- */

/* Opens path as the file of new contents (read-write, ref->bytes long):
 * a spare's pages when one fits and recycle (the caller then writes every
 * byte: a spare holds someone's old data), else a new file of zeros.  The
 * descriptor, or -1 with err. */
static int open_new_file(handle_store *s, const char *path, uint64_t bytes, int recycle, err_t *err)
{
    uint32_t number = 0;
    if (recycle) {
        lock(s);
        number = spares_take(&s->spares, bytes);
        unlock(s);
    }
    if (number != 0) {
        char spare[sizeof s->dir + 32];
        spares_path(s->dir, number, spare, sizeof spare);
        if (rename(spare, path) != 0) {
            spares_remove(s->dir, number);
            number = 0;
        }
    }
    int fd = open(path, O_RDWR | O_CREAT | (number ? 0 : O_TRUNC) | O_CLOEXEC, 0600);
    if (fd < 0) return err_set(err, NUMRPC_ESERVER, "cannot make handle file %s: %s", path, strerror(errno)), -1;
    if (ftruncate(fd, (off_t)bytes) == 0) return fd;
    err_set(err, NUMRPC_ESERVER, "cannot size handle file %s: %s", path, strerror(errno));
    close(fd);
    remove_file(path);
    return -1;
}

int handles_create_file(handle_store *s, const handle_ref *ref, int recycle, err_t *err)
{
    char path[sizeof s->dir + 2 * MSG_DATA_ID_SIZE + 8];
    handles_path(s, &ref->id, "", path, sizeof path);
    int fd = open_new_file(s, path, ref->bytes, recycle, err);
    if (fd < 0) return err->code;
    close(fd);
    return 0;
}

/* A call starts (or stops) reading ref's live handle: counted, so that no
 * file of it becomes a spare meanwhile.  0, or NUMRPC_ENOHANDLE. */
static int start_reading(handle_store *s, handle_ref *ref, err_t *err)
{
    lock(s);
    int live = still(s, ref, ENTRY_LIVE);
    if (live) s->items[ref->index].readers++;
    if (live) ref->version = s->items[ref->index].version;
    unlock(s);
    ref->reading = live;
    return live ? 0 : no_handle(&ref->id, err);
}

/* The file opened after start_reading holds ref->version's bytes if no
 * commit came between (a commit renames and changes the version under the
 * lock); else the version is not known (0). */
static void confirm_version(handle_store *s, handle_ref *ref)
{
    lock(s);
    if (!still(s, ref, ENTRY_LIVE) || s->items[ref->index].version != ref->version) ref->version = 0;
    unlock(s);
}

static void stop_reading(handle_store *s, handle_ref *ref)
{
    if (!ref->reading) return;
    lock(s);
    if (still(s, ref, ENTRY_LIVE) && s->items[ref->index].readers > 0) s->items[ref->index].readers--;
    unlock(s);
    ref->reading = 0;
}

/* The file at path mapped (handle_maps.c): NULL with err. */
static void *map_path(const handle_ref *ref, const char *path, int writable, err_t *err)
{
    int fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return no_handle(&ref->id, err), NULL;
        err_set(err, NUMRPC_ESERVER, "handle file %s: %s", path, strerror(errno));
        return NULL;
    }
    void *map = handle_maps_get(fd, writable, ref->bytes, path, err);
    close(fd);
    return map;
}

/* <id>.new made as a copy of the handle's current contents, mapped
 * writable: NULL with err. */
static void *map_next(handle_store *s, const handle_ref *ref, const void *current, err_t *err)
{
    char path[sizeof s->dir + 2 * MSG_DATA_ID_SIZE + 8];
    handles_path(s, &ref->id, NEW_SUFFIX, path, sizeof path);
    int fd = open_new_file(s, path, ref->bytes, 1, err);
    if (fd < 0) return NULL;
    void *map = handle_maps_get(fd, 1, ref->bytes, path, err);
    close(fd);
    if (map == NULL) {
        remove_file(path);
        return NULL;
    }
    memcpy(map, current, (size_t)ref->bytes); /* every byte: the spare's old ones go */
    return map;
}

void *handles_map(handle_store *s, handle_ref *ref, int how, err_t *err)
{
    char path[sizeof s->dir + 2 * MSG_DATA_ID_SIZE + 8];
    handles_path(s, &ref->id, "", path, sizeof path);
    ref->reading = 0;
    if (how == HANDLE_MAP_FILL) return map_path(ref, path, 1, err);
    if (start_reading(s, ref, err) != 0) return NULL;
    void *map = map_path(ref, path, 0, err);
    if (map != NULL) confirm_version(s, ref);
    if (map != NULL && how == HANDLE_MAP_NEXT) {
        void *next = map_next(s, ref, map, err);
        handle_maps_put(map);
        stop_reading(s, ref); /* the copy is made: the old file is the handle's */
        return next;
    }
    if (map == NULL) stop_reading(s, ref);
    return map;
}

void handles_unmap(handle_store *s, handle_ref *ref, void *map)
{
    handle_maps_put(map);
    stop_reading(s, ref);
}

/* ---- The dispatcher's pass ---- */

/* A writer mark of a process that is gone (or never was). */
static int writer_gone(pid_t pid)
{
    return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

/* Entries whose lease ran out (and no call writes) or whose filler is
 * gone are released; writer marks of the dead are cleared.  File names to
 * unlink go into gone (at most SWEEP_BATCH). */
static int sweep_table(handle_store *s, double now, pid_t dead, msg_data_id *gone, int *n_new, msg_data_id *stray)
{
    int n = 0;
    *n_new = 0;
    lock(s);
    for (uint32_t i = 0; i < s->capacity && n < SWEEP_BATCH && *n_new < SWEEP_BATCH; i++) {
        handle_entry *e = &s->items[i];
        if (e->state == ENTRY_FREE) continue;
        int dead_writer = e->writer != 0 && (e->writer == dead || (dead == 0 && writer_gone(e->writer)));
        if (e->state == ENTRY_FILLING && dead_writer) {
            gone[n++] = e->id;
            release(s, i);
        } else if (dead_writer) {
            e->writer = 0;
            stray[(*n_new)++] = e->id;
        } else if (e->state == ENTRY_LIVE && e->writer == 0 && e->readers == 0 && now > e->lease_end && dead == 0) {
            gone[n++] = e->id;
            release(s, i);
        }
    }
    unlock(s);
    return n;
}

static void sweep_once(handle_store *s, double now, pid_t dead)
{
    msg_data_id gone[SWEEP_BATCH], stray[SWEEP_BATCH];
    int n_new;
    int n = sweep_table(s, now, dead, gone, &n_new, stray);
    for (int i = 0; i < n; i++) unlink_file(s, &gone[i], "");
    for (int i = 0; i < n_new; i++) unlink_file(s, &stray[i], NEW_SUFFIX);
    if (dead != 0) return;
    uint32_t spares[SPARES_MAX];
    lock(s);
    int n_spares = spares_shed(&s->spares, s->max_bytes - s->bytes, now - s->lease_ms / 1000.0, spares);
    unlock(s);
    remove_spares(s, spares, n_spares);
}

/* <id>.new files whose handle no call writes (a worker died writing it, or
 * the handle went) are removed. */
static void remove_stray_new(handle_store *s)
{
    DIR *d = opendir(s->dir);
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len != 2 * MSG_DATA_ID_SIZE + strlen(NEW_SUFFIX) || strcmp(e->d_name + 2 * MSG_DATA_ID_SIZE, NEW_SUFFIX) != 0)
            continue;
        msg_data_id id;
        int ok = 1;
        for (int i = 0; i < MSG_DATA_ID_SIZE && ok; i++) ok = sscanf(e->d_name + 2 * i, "%2hhx", &id.b[i]) == 1;
        if (!ok) continue;
        lock(s);
        int writing = 0;
        for (uint32_t i = 0; i < s->capacity && !writing; i++)
            writing = s->items[i].writer != 0 && memcmp(s->items[i].id.b, id.b, MSG_DATA_ID_SIZE) == 0;
        unlock(s);
        if (!writing) unlink_file(s, &id, NEW_SUFFIX);
    }
    closedir(d);
}

void handles_sweep(handle_store *s, double now)
{
    if (s == NULL) return;
    sweep_once(s, now, 0);
    if (now < s->next_scan) return;
    s->next_scan = now + 1;
    remove_stray_new(s);
}

void handles_worker_gone(handle_store *s, pid_t pid)
{
    if (s != NULL && pid > 0) sweep_once(s, 0, pid);
}

void handles_totals(handle_store *s, uint64_t *count, uint64_t *bytes)
{
    *count = *bytes = 0;
    if (s == NULL) return;
    lock(s);
    *count = s->count;
    *bytes = s->bytes;
    unlock(s);
}
