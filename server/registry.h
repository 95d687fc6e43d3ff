/* registry.h -- the routines a worker can run: the built-in ping and the
 * stub modules of the stub directory and of live registration (registry.c). */
#ifndef NUMRPC_SERVER_REGISTRY_H
#define NUMRPC_SERVER_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "error.h"
#include "iface.h"
#include "stubmod.h"

typedef struct routine {
    iface_t iface;             /* decoded descriptor (owned)                 */
    uint8_t *blob;             /* its encoding, sent to clients (owned)      */
    size_t blob_len;
    stub_thunk_fn thunk;       /* NULL for Backend "MPI": mpi_call.c runs it */
    int stat_index;            /* its counters in the shared table, or -1   */
} routine;

typedef struct registry {
    routine *items;            /* malloc'd array                             */
    size_t count;
    void (*set_blas_threads)(int); /* OpenBLAS's, if a module links it      */
    const server_config *cfg;  /* its log lines' (registry_load's caller's) */
} registry;

/* Modules changed by `admin register|unregister` while the server runs.
 * The dispatcher owns the list; workers inherit it when they fork. */
typedef struct module_entry {
    char name[IFACE_MAX_NAME + 1]; /* the module's name (Module in its IDL)  */
    char path[CONFIG_PATH_MAX];    /* private content-addressed copy; "" =
                                      unregistered (hide it from stubs dir) */
    uint64_t hash;                 /* of the file's bytes                    */
    int64_t when;                  /* the change's time (Unix seconds)       */
    char by[40];                   /* who asked: "uid-1000", "remote-admin"  */
    uint8_t persisted;             /* 1: in the journal (persist.c)          */
} module_entry;

typedef struct module_list {
    module_entry *items;
    size_t count;
} module_list;

/* Loads the built-in routines (ping), every *.so module in cfg's stub
 * directory whose name the list does not override, then the list's
 * modules.  A module that fails to load is logged and skipped. */
int registry_load(registry *reg, const server_config *cfg, const module_list *mods, err_t *err);
/* Checks that path is a stub module of this server's ABI; its module name
 * goes to name (size IFACE_MAX_NAME + 1).  Loads it: call only in a process
 * that exits afterwards. */
int registry_probe(const char *path, char *name, err_t *err);
const routine *registry_find(const registry *reg, const char *name);
void registry_free(registry *reg);

#endif
