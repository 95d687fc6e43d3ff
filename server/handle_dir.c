/* handle_dir.c -- the handle store's setting up and taking down: its private
 * directory (and those dead servers left), its shared table, its budgets. */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "handle_store.h"
#include "log.h"

#define DIR_PREFIX "numrpc-"

/* Removes dir's files (handles only: no subdirectories) and dir. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[CONFIG_PATH_MAX + 320];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* The directories numrpc-<pid>-XXXXXX in parent that a server no longer
 * running left (ours only: same user). */
static void remove_stale_dirs(const server_config *cfg, const char *parent)
{
    DIR *d = opendir(parent);
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        if (strncmp(e->d_name, DIR_PREFIX, strlen(DIR_PREFIX)) != 0) continue;
        long pid = strtol(e->d_name + strlen(DIR_PREFIX), &end, 10);
        if (pid <= 0 || *end != '-' || strlen(end) != 7) continue;
        char path[CONFIG_PATH_MAX + 320];
        snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        server_log(cfg, LOG_LEVEL_NOTICE, "removing %s, the handles of server process %ld that is gone", path, pid);
        remove_dir(path);
    }
    closedir(d);
}

/* --handle-bytes at most what the directory's file system has room for:
 * a handle's file must never outgrow it (a write to a mapped file past the
 * room raises SIGBUS). */
static void fit_to_room(server_config *cfg, const char *dir)
{
    struct statvfs v;
    if (statvfs(dir, &v) != 0) return;
    uint64_t room = (uint64_t)v.f_bavail * v.f_frsize;
    if (cfg->handle_bytes <= room) return;
    server_log(cfg, LOG_LEVEL_WARN, "--handle-bytes %llu lowered to %llu: the room %s has",
               (unsigned long long)cfg->handle_bytes, (unsigned long long)room, dir);
    cfg->handle_bytes = room;
    if (cfg->handle_bytes_per_identity > room) cfg->handle_bytes_per_identity = room;
}

int handles_open(server_config *cfg, handle_store **out, err_t *err)
{
    *out = NULL;
    remove_stale_dirs(cfg, cfg->handle_dir);
    char dir[sizeof ((handle_store *)0)->dir];
    int n = snprintf(dir, sizeof dir, "%s/" DIR_PREFIX "%ld-XXXXXX", cfg->handle_dir, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof dir) return err_set(err, NUMRPC_EINVAL, "--handle-dir %s: too long", cfg->handle_dir);
    if (mkdtemp(dir) == NULL) /* mode 0700 */
        return err_set(err, NUMRPC_ESERVER, "cannot make the handle directory in %s (--handle-dir): %s",
                       cfg->handle_dir, strerror(errno));
    size_t len = sizeof(handle_store) + (size_t)cfg->max_handles * sizeof(handle_entry);
    handle_store *s = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED) {
        rmdir(dir);
        return err_set(err, NUMRPC_ENOMEM, "the table of %u handles (--max-handles)", cfg->max_handles);
    }
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&s->lock, &a);
    pthread_mutexattr_destroy(&a);
    s->capacity = cfg->max_handles;
    s->map_len = len;
    /* Versions start at random (62 bits: they never wrap), so that no
     * other run of the server hands out the same (id, version). */
    if (getrandom(&s->last_version, sizeof s->last_version, 0) != (ssize_t)sizeof s->last_version)
        s->last_version = (uint64_t)getpid() << 32;
    s->last_version = (s->last_version >> 2) | 1;
    memcpy(s->dir, dir, sizeof dir);
    handles_configure(s, cfg);
    *out = s;
    return 0;
}

void handles_configure(handle_store *s, server_config *cfg)
{
    fit_to_room(cfg, s->dir);
    lock(s);
    s->lease_ms = cfg->handle_lease_ms;
    s->ticket_ms = (uint32_t)cfg->handle_ticket_ms;
    s->max_bytes = cfg->handle_bytes;
    s->max_identity_bytes = cfg->handle_bytes_per_identity;
    /* A quarter of the table by default: one identity cannot fill it. */
    uint32_t share = s->capacity / 4 > 0 ? s->capacity / 4 : 1;
    if (cfg->max_handles_per_identity > 0) share = (uint32_t)cfg->max_handles_per_identity;
    s->max_identity_handles = share < s->capacity ? share : s->capacity;
    unlock(s);
}

void handles_close(handle_store *s)
{
    if (s == NULL) return;
    remove_dir(s->dir);
    pthread_mutex_destroy(&s->lock);
    munmap(s, s->map_len);
}

