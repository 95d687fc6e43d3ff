/* registry.c -- the routines a worker serves: the built-in ping plus every
 * stub module (*.so) found in the stub directory. */
#include "registry.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files_call.h"
#include "log.h"

static void ping_thunk(void **argv)
{
    (void)argv;
}

static int add_routine(registry *reg, const uint8_t *blob, size_t len,
                       stub_thunk_fn thunk, err_t *err)
{
    routine r = {0};
    int rc = iface_decode(blob, len, &r.iface, err);
    if (rc != 0) return rc;
    if (thunk == NULL && r.iface.backend == IFACE_BACKEND_LOCAL) {
        err_set(err, NUMRPC_ESERVER, "%s has no thunk to call", r.iface.name);
        iface_free(&r.iface);
        return err->code;
    }
    r.blob = malloc(len);
    if (r.blob == NULL) {
        iface_free(&r.iface);
        return err_set(err, NUMRPC_ENOMEM, "interface blob");
    }
    memcpy(r.blob, blob, len);
    r.blob_len = len;
    r.thunk = thunk;
    for (size_t i = 0; i < reg->count; i++) {
        if (strcmp(reg->items[i].iface.name, r.iface.name) == 0) {
            if (strcmp(reg->items[i].iface.module, r.iface.module) != 0)
                server_log(reg->cfg, LOG_LEVEL_WARN, "%s from module %s replaces the one from %s", r.iface.name,
                           r.iface.module, reg->items[i].iface.module);
            iface_free(&reg->items[i].iface);
            free(reg->items[i].blob);
            reg->items[i] = r;
            return 0;
        }
    }
    routine *grown = realloc(reg->items, (reg->count + 1) * sizeof *grown);
    if (grown == NULL) {
        iface_free(&r.iface);
        free(r.blob);
        return err_set(err, NUMRPC_ENOMEM, "registry");
    }
    reg->items = grown;
    reg->items[reg->count++] = r;
    return 0;
}

static int add_ping(registry *reg, err_t *err)
{
    iface_t f = {0};
    f.name = "ping";
    f.module = "builtin";
    f.description = "no-op: measures the cost of one call through a worker";
    f.symbol = "ping";
    /* CalcOrder 1: a cheap call, whose reply may wait for the next ones. */
    int64_t one[] = {EXPR_CONST, 1};
    f.complexity.words = one;
    f.complexity.nwords = 2;
    uint8_t *blob;
    size_t len;
    int rc = iface_compute_hash(&f, err);
    if (rc == 0) rc = iface_encode(&f, &blob, &len, err);
    if (rc != 0) return rc;
    rc = add_routine(reg, blob, len, ping_thunk, err);
    free(blob);
    return rc;
}

/* Opens path and finds its stub table (the module stays loaded). */
static const stub_module *open_module(const char *path, void **handle_out, err_t *err)
{
    /* Modules stay loaded for the life of the worker (never dlclose: the
     * BLAS they pull in starts threads), each in its own namespace so that
     * their exported numrpc_stub_module symbols never meet. */
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        err_set(err, NUMRPC_ESERVER, "cannot load %s: %s", path, dlerror());
        return NULL;
    }
    const stub_module *m = dlsym(handle, NUMRPC_STUB_SYMBOL);
    if (m == NULL) {
        err_set(err, NUMRPC_ESERVER, "%s is not a numrpc stub module", path);
        return NULL;
    }
    if (m->abi != NUMRPC_STUB_ABI) {
        err_set(err, NUMRPC_ESERVER, "%s has stub ABI %u, this server %u", path, m->abi, NUMRPC_STUB_ABI);
        return NULL;
    }
    if (m->module == NULL || strlen(m->module) > IFACE_MAX_NAME) {
        err_set(err, NUMRPC_ESERVER, "%s has no usable module name", path);
        return NULL;
    }
    *handle_out = handle;
    return m;
}

int registry_probe(const char *path, char *name, err_t *err)
{
    void *handle;
    const stub_module *m = open_module(path, &handle, err);
    if (m == NULL) return err->code;
    snprintf(name, IFACE_MAX_NAME + 1, "%s", m->module);
    for (size_t i = 0; i < m->count; i++) {
        iface_t f;
        if (iface_decode(m->entries[i].iface_blob, m->entries[i].iface_len, &f, err) != 0) {
            err_prefix(err, path);
            return err->code;
        }
        iface_free(&f);
    }
    return 0;
}

/* True when the list names module (it replaces or hides the stub dir's). */
static int overridden(const module_list *mods, const char *module)
{
    for (size_t i = 0; mods && i < mods->count; i++)
        if (strcmp(mods->items[i].name, module) == 0) return 1;
    return 0;
}

static int load_module(registry *reg, const char *path, const module_list *skip, err_t *err)
{
    void *handle;
    const stub_module *m = open_module(path, &handle, err);
    if (m == NULL) return err->code;
    if (overridden(skip, m->module)) return 0; /* registered or removed live */
    if (reg->set_blas_threads == NULL)
        *(void **)&reg->set_blas_threads = dlsym(handle, "openblas_set_num_threads");
    /* A module that wants the routine services (stubmod.h) gets them. */
    const stub_services **services = dlsym(handle, NUMRPC_STUB_SERVICES_SYMBOL);
    if (services != NULL) *services = &server_stub_services;
    for (size_t i = 0; i < m->count; i++) {
        int rc = add_routine(reg, m->entries[i].iface_blob, m->entries[i].iface_len,
                             m->entries[i].thunk, err);
        if (rc != 0) {
            err_prefix(err, path);
            return rc;
        }
    }
    return 0;
}

static void load_dir(registry *reg, const char *dir, const module_list *mods);

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int registry_load(registry *reg, const server_config *cfg, const module_list *mods, err_t *err)
{
    const char *dir = cfg->stubs_dir;
    memset(reg, 0, sizeof *reg);
    reg->cfg = cfg;
    int rc = add_ping(reg, err);
    if (rc != 0) return rc;
    if (dir != NULL && dir[0] != '\0') load_dir(reg, dir, mods);
    /* Registered modules last: their routines replace any of the same name. */
    for (size_t i = 0; mods && i < mods->count; i++) {
        err_t merr;
        if (mods->items[i].path[0] && load_module(reg, mods->items[i].path, NULL, &merr) != 0)
            server_log(reg->cfg, LOG_LEVEL_ERROR, "skipping module: %s", merr.detail);
    }
    return 0;
}

static void load_dir(registry *reg, const char *dir, const module_list *mods)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        server_log(reg->cfg, LOG_LEVEL_ERROR, "cannot open stub directory %s", dir);
        return;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".so") != 0) continue;
        char **grown = realloc(names, (n + 1) * sizeof *grown);
        if (grown == NULL) break;
        names = grown;
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name); /* a stable order across workers */
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        err_t merr;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (names[i] && load_module(reg, path, mods, &merr) != 0)
            server_log(reg->cfg, LOG_LEVEL_ERROR, "skipping module: %s", merr.detail);
        free(names[i]);
    }
    free(names);
}

const routine *registry_find(const registry *reg, const char *name)
{
    for (size_t i = 0; i < reg->count; i++)
        if (strcmp(reg->items[i].iface.name, name) == 0) return &reg->items[i];
    return NULL;
}

void registry_free(registry *reg)
{
    for (size_t i = 0; i < reg->count; i++) {
        iface_free(&reg->items[i].iface);
        free(reg->items[i].blob);
    }
    free(reg->items);
    memset(reg, 0, sizeof *reg);
}
