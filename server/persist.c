/* persist.c -- the live registrations' journal: written whole and atomically
 * (temp, fsync, rename, fsync of the directory), read back with every field checked. */
#define _GNU_SOURCE
#include "persist.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JOURNAL_MAGIC "numrpc-live-journal 1"

static const module_list *published; /* the dispatcher's list (not owned) */

int persist_journal_path(const char *module_dir, char *buf, size_t len)
{
    size_t n = strlen(module_dir);
    while (n > 1 && module_dir[n - 1] == '/') n--;
    int k = snprintf(buf, len, "%.*s.journal", (int)n, module_dir);
    return module_dir[0] != '\0' && k > 0 && (size_t)k < len - 8 ? 0 : -1; /* room for ".corrupt" */
}

void persist_clean(const char *module_dir)
{
    char path[CONFIG_PATH_MAX + 16];
    if (persist_journal_path(module_dir, path, sizeof path - 4) == 0) {
        strcat(path, ".tmp");
        unlink(path);
    }
    DIR *d = opendir(module_dir);
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.' && n > 5 && strcmp(e->d_name + n - 4, ".tmp") == 0) unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

/* fsync of the directory holding path, so that a rename in it is durable. */
static int sync_parent(const char *path)
{
    char dir[CONFIG_PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

int persist_save(const char *module_dir, const module_list *mods, err_t *err)
{
    char path[CONFIG_PATH_MAX + 16], tmp[CONFIG_PATH_MAX + 24];
    if (persist_journal_path(module_dir, path, sizeof path) != 0)
        return err_set(err, NUMRPC_EINVAL, "no journal path for module directory \"%s\"", module_dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (mods->count > PERSIST_MAX_ENTRIES)
        return err_set(err, NUMRPC_EINVAL, "%zu live changes, the journal keeps %u", mods->count, PERSIST_MAX_ENTRIES);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return err_set(err, NUMRPC_ESERVER, "journal %s: %s", tmp, strerror(errno));
    FILE *f = fdopen(fd, "w");
    if (f == NULL) {
        close(fd);
        unlink(tmp);
        return err_set(err, NUMRPC_ENOMEM, "journal %s", tmp);
    }
    fprintf(f, "%s\n", JOURNAL_MAGIC);
    for (size_t i = 0; i < mods->count; i++) {
        const module_entry *e = &mods->items[i];
        if (e->path[0])
            fprintf(f, "registered %s %016" PRIx64 " %016" PRIx64 ".so %" PRId64 " %s\n", e->name, e->hash, e->hash,
                    e->when, e->by[0] ? e->by : "-");
        else
            fprintf(f, "unregistered %s %" PRId64 " %s\n", e->name, e->when, e->by[0] ? e->by : "-");
    }
    fprintf(f, "end %zu\n", mods->count);
    int rc = fflush(f) == 0 && fsync(fd) == 0 ? 0 : -1;
    int e = errno;
    if (fclose(f) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = -1;
        e = errno;
    }
    if (rc != 0) {
        unlink(tmp);
        return err_set(err, NUMRPC_ESERVER, "journal %s: %s", path, strerror(e));
    }
    if (sync_parent(path) != 0)
        return err_set(err, NUMRPC_ESERVER, "journal %s: fsync of its directory: %s", path, strerror(errno));
    return 0;
}

/* A module name as the IDL allows it: letters, digits, '_', 1..IFACE_MAX_NAME. */
static int good_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > IFACE_MAX_NAME) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '_'))
            return 0;
    return 1;
}

/* Who asked: printable, no spaces, under the field's size. */
static int good_who(const char *s, size_t cap)
{
    size_t n = strlen(s);
    if (n == 0 || n >= cap) return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] <= ' ' || s[i] > '~') return 0;
    return 1;
}

/* A decimal or hex number spanning the whole token. */
static int parse_u64(const char *s, int base, size_t want_len, uint64_t *out)
{
    if (s[0] == '\0' || s[0] == '-' || s[0] == '+' || (want_len && strlen(s) != want_len)) return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (errno != 0 || *end != '\0') return 0;
    *out = v;
    return 1;
}

/* One line (NUL-terminated, no '\n') into e; 0 or -1 with why. */
static int parse_line(char *line, const char *module_dir, module_entry *e, const char **why)
{
    char *tok[8];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (n == 8) return *why = "too many fields", -1;
        tok[n++] = t;
    }
    memset(e, 0, sizeof *e);
    uint64_t when;
    int reg = n == 6 && strcmp(tok[0], "registered") == 0;
    int unreg = n == 4 && strcmp(tok[0], "unregistered") == 0;
    if (!reg && !unreg) return *why = "not an entry", -1;
    if (!good_name(tok[1])) return *why = "a bad module name", -1;
    snprintf(e->name, sizeof e->name, "%s", tok[1]);
    const char *when_s = reg ? tok[4] : tok[2], *who = reg ? tok[5] : tok[3];
    if (!parse_u64(when_s, 10, 0, &when) || when > (uint64_t)INT64_MAX) return *why = "a bad time", -1;
    if (!good_who(who, sizeof e->by)) return *why = "a bad requester", -1;
    e->when = (int64_t)when;
    snprintf(e->by, sizeof e->by, "%s", who);
    e->persisted = 1;
    if (unreg) return 0;
    char want[32];
    if (!parse_u64(tok[2], 16, 16, &e->hash)) return *why = "a bad hash", -1;
    snprintf(want, sizeof want, "%016" PRIx64 ".so", e->hash);
    if (strcmp(tok[3], want) != 0) return *why = "a copy's file name that is not its hash", -1;
    int k = snprintf(e->path, sizeof e->path, "%s/%s", module_dir, want);
    if (k < 0 || (size_t)k >= sizeof e->path) return *why = "a copy's path too long", -1;
    return 0;
}

/* The journal's bytes (at most PERSIST_MAX_BYTES, NUL-terminated, malloc'd),
 * or NULL with *missing set when there is none. */
static char *read_journal(const char *path, size_t *len, int *missing, err_t *err)
{
    *missing = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ENOENT) *missing = 1;
        else err_set(err, NUMRPC_ESERVER, "journal %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 || st.st_size > PERSIST_MAX_BYTES) {
        err_set(err, NUMRPC_EINVAL, "journal %s: not a regular file of at most %u bytes", path, PERSIST_MAX_BYTES);
    } else if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
        err_set(err, NUMRPC_ENOMEM, "journal %s", path);
    } else {
        size_t got = 0;
        ssize_t k;
        while (got < (size_t)st.st_size && (k = read(fd, buf + got, (size_t)st.st_size - got)) > 0) got += (size_t)k;
        buf[got] = '\0';
        *len = got;
    }
    close(fd);
    return buf;
}

static int parse_journal(char *buf, size_t len, const char *module_dir, module_list *out, err_t *err)
{
    if (memchr(buf, '\0', len) != NULL) return err_set(err, NUMRPC_EINVAL, "a NUL byte");
    if (len == 0 || buf[len - 1] != '\n') return err_set(err, NUMRPC_EINVAL, "truncated (no final newline)");
    char *save = NULL, *line = strtok_r(buf, "\n", &save);
    if (line == NULL || strcmp(line, JOURNAL_MAGIC) != 0)
        return err_set(err, NUMRPC_EINVAL, "not a journal of this version (first line)");
    size_t lineno = 1;
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        lineno++;
        uint64_t count;
        if (strncmp(line, "end ", 4) == 0) {
            if (!parse_u64(line + 4, 10, 0, &count) || count != out->count)
                return err_set(err, NUMRPC_EINVAL, "line %zu: the count does not match the entries", lineno);
            if (strtok_r(NULL, "\n", &save) != NULL)
                return err_set(err, NUMRPC_EINVAL, "line %zu: something after the end", lineno + 1);
            return 0;
        }
        if (out->count >= PERSIST_MAX_ENTRIES)
            return err_set(err, NUMRPC_EINVAL, "more than %u entries", PERSIST_MAX_ENTRIES);
        module_entry e;
        const char *why = "";
        if (parse_line(line, module_dir, &e, &why) != 0) return err_set(err, NUMRPC_EINVAL, "line %zu: %s", lineno, why);
        for (size_t i = 0; i < out->count; i++)
            if (strcmp(out->items[i].name, e.name) == 0)
                return err_set(err, NUMRPC_EINVAL, "line %zu: module %s twice", lineno, e.name);
        module_entry *grown = realloc(out->items, (out->count + 1) * sizeof *grown);
        if (grown == NULL) return err_set(err, NUMRPC_ENOMEM, "journal entries");
        out->items = grown;
        out->items[out->count++] = e;
    }
    return err_set(err, NUMRPC_EINVAL, "truncated (no end line)");
}

int persist_load(const char *module_dir, module_list *out, err_t *err)
{
    out->items = NULL;
    out->count = 0;
    char path[CONFIG_PATH_MAX + 16];
    if (persist_journal_path(module_dir, path, sizeof path) != 0) return 0; /* nothing to read */
    size_t len = 0;
    int missing;
    char *buf = read_journal(path, &len, &missing, err);
    if (buf == NULL && missing) return 0;
    int rc = buf == NULL ? err->code : parse_journal(buf, len, module_dir, out, err);
    free(buf);
    if (rc == 0) return 0;
    err_prefix(err, path);
    free(out->items);
    out->items = NULL;
    out->count = 0;
    char aside[sizeof path + 8];
    snprintf(aside, sizeof aside, "%s.corrupt", path);
    if (rename(path, aside) == 0) {
        char why[ERR_DETAIL_MAX];
        snprintf(why, sizeof why, "%s", err->detail);
        err_set(err, rc, "%s; set aside as %s", why, aside);
    }
    return rc;
}

int persist_file_hash(const char *path, uint64_t *hash, err_t *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return err_set(err, NUMRPC_ENOENT, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (1LL << 30)) {
        close(fd);
        return err_set(err, NUMRPC_EINVAL, "%s is not a regular file of a module's size", path);
    }
    uint64_t h = 0xcbf29ce484222325ULL;
    uint8_t chunk[65536];
    ssize_t k;
    while ((k = read(fd, chunk, sizeof chunk)) > 0)
        for (ssize_t i = 0; i < k; i++) h = (h ^ chunk[i]) * 0x100000001b3ULL;
    close(fd);
    if (k < 0) return err_set(err, NUMRPC_ESERVER, "reading %s: %s", path, strerror(errno));
    *hash = h;
    return 0;
}

void persist_describe(const module_entry *e, char *buf, size_t len)
{
    char when[32] = "?";
    time_t t = (time_t)e->when;
    struct tm tm;
    if (gmtime_r(&t, &tm) != NULL) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(buf, len, "%s live at %s by %s (%s)", e->path[0] ? "registered" : "unregistered", when,
             e->by[0] ? e->by : "-", e->persisted ? "persisted" : "not persisted: lost at a restart");
}

void persist_publish(const module_list *mods)
{
    published = mods;
}

void persist_origin(const char *module, char *buf, size_t len)
{
    for (size_t i = 0; published && i < published->count; i++)
        if (strcmp(published->items[i].name, module) == 0) {
            persist_describe(&published->items[i], buf, len);
            return;
        }
    snprintf(buf, len, "%s", strcmp(module, "builtin") == 0 ? "built in" : "stub dir");
}
