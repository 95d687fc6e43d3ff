/* live.c -- live registration: the dispatcher's list of modules changed
 * while it runs (register, unregister, list), from the local admin socket
 * (admin.c) or a checked remote ADMIN (control.c). */
#define _GNU_SOURCE
#include "live.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "admin.h"
#include "exposure.h"
#include "log.h"
#include "metrics.h"
#include "persist.h"
#include "pool.h"

/* Who sent the request being served: the local socket's peer, else a
 * remote administrator (control.c checked its MAC). */
static char requester[40] = "remote-admin";
/* Tests only (NUMRPC_TEST_PERSIST_PAUSE_MS): a pause between writing a
 * module's copy and the journal naming it, to kill the server there. */
static unsigned test_pause_ms;
/* Changes are journaled only in a module directory given with
 * --module-dir: the default one is named after the port, which a server
 * on --port 0 gets anew at each start (and another server may get next). */
static int journaled;

/* The list's entry for module name: the one there, or a new empty one
 * (NULL when the list cannot grow). */
static module_entry *find_module(dispatcher *d, const char *name, int *found)
{
    for (size_t i = 0; i < d->mods.count; i++) {
        if (strcmp(d->mods.items[i].name, name) != 0) continue;
        *found = 1;
        return &d->mods.items[i];
    }
    *found = 0;
    module_entry *grown = realloc(d->mods.items, (d->mods.count + 1) * sizeof *grown);
    if (grown == NULL) return NULL;
    d->mods.items = grown;
    module_entry *e = &d->mods.items[d->mods.count++];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", name);
    return e;
}

/* Loads the module in a short-lived child (never in the dispatcher, which
 * must not start a library's threads) to check it and learn its name. */
static int probe_module(const char *path, char *name, err_t *err)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return err_set(err, NUMRPC_ESERVER, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return err_set(err, NUMRPC_ESERVER, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(p[0]);
        err_t e;
        char buf[IFACE_MAX_NAME + 1 + ERR_DETAIL_MAX + 8];
        int rc = registry_probe(path, name, &e);
        int n = rc == 0 ? snprintf(buf, sizeof buf, "ok %s", name) : snprintf(buf, sizeof buf, "error %s", e.detail);
        if (write(p[1], buf, (size_t)n) < 0) _exit(1);
        _exit(rc == 0 ? 0 : 1);
    }
    close(p[1]);
    char buf[IFACE_MAX_NAME + 1 + ERR_DETAIL_MAX + 8] = {0};
    size_t got = 0;
    ssize_t k;
    while (got < sizeof buf - 1 && (k = read(p[0], buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)k;
    close(p[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (strncmp(buf, "ok ", 3) == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        snprintf(name, IFACE_MAX_NAME + 1, "%.*s", (int)IFACE_MAX_NAME, buf + 3);
        return 0;
    }
    if (strncmp(buf, "error ", 6) == 0) return err_set(err, NUMRPC_EINVAL, "%s", buf + 6);
    char how[64];
    server_describe_exit(status, how, sizeof how);
    return err_set(err, NUMRPC_EINVAL, "loading %s killed the checking process (%s)", path, how);
}

/* Writes the list to the journal after a change to entry e: its outcome
 * goes to e->persisted and, when it failed, to note (else ""). */
static void save_list(dispatcher *d, module_entry *e, char *note, size_t len)
{
    err_t err;
    note[0] = '\0';
    if (!journaled) {
        e->persisted = 0;
        snprintf(note, len, "; it will not survive a restart (no --module-dir: nothing is journaled)");
        return;
    }
    if (test_pause_ms) usleep(test_pause_ms * 1000u);
    if (persist_save(d->cfg->module_dir, &d->mods, &err) == 0) {
        for (size_t i = 0; i < d->mods.count; i++) d->mods.items[i].persisted = 1;
        return;
    }
    e->persisted = 0;
    snprintf(note, len, "; it will not survive a restart (%s)", err.detail);
    server_log(d->cfg, LOG_LEVEL_ERROR, "module %s changed for this run only: %s", e->name, err.detail);
}

static int register_module(dispatcher *d, const char *src, char *reply, size_t len)
{
    err_t err;
    module_entry e = {0};
    if (src[0] != '/') {
        snprintf(reply, len, "error %s: give an absolute path", src);
        return -1;
    }
    /* The copy is written whole (temp, fsync, rename) before the journal
     * names it: a kill in between leaves an unnamed copy, never a
     * journal naming a missing one. */
    if (admin_store_module(src, d->cfg->module_dir, &e, &err) != 0 || probe_module(e.path, e.name, &err) != 0) {
        snprintf(reply, len, "error %s", err.detail);
        return -1;
    }
    e.when = (int64_t)time(NULL);
    snprintf(e.by, sizeof e.by, "%s", requester);
    int replaced;
    module_entry *slot = find_module(d, e.name, &replaced);
    if (slot == NULL) {
        snprintf(reply, len, "error out of memory");
        return -1;
    }
    *slot = e;
    char note[ERR_DETAIL_MAX + 64];
    save_list(d, slot, note, sizeof note);
    pool_roll(d);
    snprintf(reply, len, "ok %s module %s (%016llx) from %s%s", replaced ? "replaced" : "registered", e.name,
             (unsigned long long)e.hash, src, note);
    return 0;
}

static int unregister_module(dispatcher *d, const char *name, char *reply, size_t len)
{
    if (name[0] == '\0' || strlen(name) > IFACE_MAX_NAME || strpbrk(name, " \t/") != NULL) {
        snprintf(reply, len, "error unregister wants a module name");
        return -1;
    }
    int found;
    module_entry *e = find_module(d, name, &found);
    if (e == NULL) {
        snprintf(reply, len, "error out of memory");
        return -1;
    }
    e->path[0] = '\0';
    e->hash = 0;
    e->when = (int64_t)time(NULL);
    snprintf(e->by, sizeof e->by, "%s", requester);
    char note[ERR_DETAIL_MAX + 64];
    save_list(d, e, note, sizeof note);
    pool_roll(d);
    snprintf(reply, len, "ok unregistered module %s%s", name, note);
    return 0;
}

static void list_modules(dispatcher *d, char *reply, size_t len)
{
    size_t used = (size_t)snprintf(reply, len, "ok stub directory %s; %zu live change%s", d->cfg->stubs_dir,
                                   d->mods.count, d->mods.count == 1 ? "" : "s");
    for (size_t i = 0; i < d->mods.count && used < len; i++) {
        const module_entry *e = &d->mods.items[i];
        char origin[160];
        persist_describe(e, origin, sizeof origin);
        if (e->path[0])
            used += (size_t)snprintf(reply + used, len - used, "\nregistered %s %016llx %s: %s", e->name,
                                     (unsigned long long)e->hash, e->path, origin);
        else
            used += (size_t)snprintf(reply + used, len - used, "\nunregistered %s: %s", e->name, origin);
    }
}

/* A journal entry's copy: there, of the bytes it names, and still the
 * module it names that this server can load. */
static int check_copy(const module_entry *e, err_t *err)
{
    uint64_t h = 0;
    char name[IFACE_MAX_NAME + 1] = "";
    if (persist_file_hash(e->path, &h, err) != 0) return err->code;
    if (h != e->hash)
        return err_set(err, NUMRPC_EINVAL, "%s holds other bytes (%016llx)", e->path, (unsigned long long)h);
    if (probe_module(e->path, name, err) != 0) return err->code;
    if (strcmp(name, e->name) != 0) return err_set(err, NUMRPC_EINVAL, "%s is module %s, not %s", e->path, name, e->name);
    return 0;
}

/* The journal's changes again, at start (before any worker): an entry
 * whose copy is missing, differs from its hash or no longer loads is
 * skipped and said; the others are served as before the restart. */
static void replay_journal(dispatcher *d)
{
    const server_config *cfg = d->cfg;
    module_list got;
    err_t err;
    persist_clean(cfg->module_dir);
    if (persist_load(cfg->module_dir, &got, &err) != 0) {
        server_log(cfg, LOG_LEVEL_ERROR, "live registrations not replayed, serving the stub directory: %s",
                   err.detail);
        return;
    }
    size_t kept = 0;
    for (size_t i = 0; i < got.count; i++) {
        module_entry *e = &got.items[i];
        if (e->path[0] && check_copy(e, &err) != 0) {
            server_log(cfg, LOG_LEVEL_ERROR, "journal: skipping module %s registered live: %s", e->name, err.detail);
            continue;
        }
        got.items[kept++] = *e;
    }
    free(d->mods.items);
    d->mods.items = got.items;
    d->mods.count = kept;
    if (got.count)
        server_log(cfg, LOG_LEVEL_NOTICE, "journal: %zu live change%s replayed, %zu skipped", kept,
                   kept == 1 ? "" : "s", got.count - kept);
}

int live_reload_tokens(dispatcher *d, char *reply, size_t len)
{
    token_table fresh;
    err_t err;
    char summary[ERR_DETAIL_MAX + 64];
    exposure_guard guard = {.tls_on = d->tls != NULL, .allow_insecure = d->cfg->allow_insecure};
    if (tokens_reload(d->cfg->token_file, d->listen_fd, d->cfg->bind_addr, guard, &fresh, summary, sizeof summary,
                      &err) != 0) {
        snprintf(reply, len, "error %s", summary);
        server_log(d->cfg, LOG_LEVEL_ERROR, "%s", summary);
        return -1;
    }
    tokens_free(&d->tokens);
    d->tokens = fresh;
    metrics_set_tokens(&d->tokens); /* the HTTP port's copy */
    snprintf(reply, len, "ok %s", summary);
    server_log(d->cfg, LOG_LEVEL_NOTICE, "tokens reloaded: %s", summary);
    return 0;
}

/* One admin command line (from the local socket, or checked by control.c
 * for a remote administrator): 0 with "ok ..." in reply, or -1. */
int live_exec(void *owner, const char *line, char *reply, size_t len)
{
    dispatcher *d = owner;
    if (strcmp(line, "reload") == 0) { /* the token file again; workers follow */
        int rc = live_reload_tokens(d, reply, len);
        if (rc == 0) pool_roll(d);
        return rc;
    }
    if (strncmp(line, "register ", 9) == 0) return register_module(d, line + 9, reply, len);
    if (strncmp(line, "unregister ", 11) == 0) return unregister_module(d, line + 11, reply, len);
    if (strcmp(line, "list") == 0) {
        list_modules(d, reply, len);
        return 0;
    }
    snprintf(reply, len, "error unknown admin request \"%.64s\"", line);
    return -1;
}

void live_request(dispatcher *d)
{
    int fd = accept4(d->admin_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) return;
    char line[CONFIG_PATH_MAX + 64], reply[8192];
    err_t err;
    if (admin_read_request(fd, line, sizeof line, &err) != 0) {
        server_log(d->cfg, LOG_LEVEL_NOTICE, "admin: refused: %s", err.detail);
        snprintf(reply, sizeof reply, "error %s", err.detail);
    } else {
        struct ucred cred;
        socklen_t cl = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0)
            snprintf(requester, sizeof requester, "uid-%u", (unsigned)cred.uid);
        live_exec(d, line, reply, sizeof reply);
        snprintf(requester, sizeof requester, "remote-admin");
    }
    if (strncmp(line, "list", 4) != 0) server_log(d->cfg, LOG_LEVEL_NOTICE, "admin: %s", reply);
    size_t n = strlen(reply);
    reply[n++] = '\n';
    ssize_t k = write(fd, reply, n);
    (void)k;
    close(fd);
}

void live_setup(dispatcher *d)
{
    d->admin_fd = -1;
    server_config *cfg = d->cfg;
    int local = strcmp(cfg->admin_socket, "none") != 0;
    char where[CONFIG_PATH_MAX];
    if (local && cfg->admin_socket[0] == '\0') admin_default_socket(cfg->port, cfg->admin_socket, sizeof cfg->admin_socket);
    if (local) snprintf(where, sizeof where, "%s", cfg->admin_socket);
    else admin_default_socket(cfg->port, where, sizeof where); /* remote admin copies modules too */
    journaled = cfg->module_dir[0] != '\0';
    if (cfg->module_dir[0] == '\0') {
        int n = snprintf(cfg->module_dir, sizeof cfg->module_dir, "%s.modules", where);
        if (n < 0 || (size_t)n >= sizeof cfg->module_dir) cfg->module_dir[0] = '\0';
    }
    const char *pause = getenv("NUMRPC_TEST_PERSIST_PAUSE_MS");
    if (pause != NULL) test_pause_ms = (unsigned)strtoul(pause, NULL, 10) > 10000 ? 10000 : (unsigned)strtoul(pause, NULL, 10);
    if (journaled) replay_journal(d);
    persist_publish(&d->mods);
    if (cfg->admin_secret_file[0]) { /* a bad secret file is said at start, not at the first request */
        uint8_t secret[4096];
        size_t len;
        err_t e;
        if (control_load_secret(cfg->admin_secret_file, secret, sizeof secret, &len, &e) != 0)
            server_log(cfg, LOG_LEVEL_ERROR, "remote admin will refuse every request: %s", e.detail);
        memset(secret, 0, sizeof secret);
    }
    if (!local) return;
    err_t err;
    d->admin_fd = admin_listen(cfg->admin_socket, &err);
    if (d->admin_fd < 0) {
        server_log(cfg, LOG_LEVEL_ERROR, "no admin socket: %s", err.detail);
        return;
    }
    conn_watch(d, d->admin_fd, EV_ADMIN, 0);
}
