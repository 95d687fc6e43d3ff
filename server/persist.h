/* persist.h -- the journal that lets live registrations survive a restart:
 * one small state file beside the module directory, rewritten whole. */
#ifndef NUMRPC_SERVER_PERSIST_H
#define NUMRPC_SERVER_PERSIST_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "registry.h"

#define PERSIST_MAX_BYTES (1u << 20) /* a journal's size at most              */
#define PERSIST_MAX_ENTRIES 4096u    /* its entries at most                   */

/* The journal's path for a module directory: "<dir>.journal" (beside it,
 * never in it: workers may read the module directory, not the journal). */
int persist_journal_path(const char *module_dir, char *buf, size_t len);
/* Removes what a killed server left: temp copies (".*.tmp") in the module
 * directory and the journal's temp file. */
void persist_clean(const char *module_dir);
/* Writes the list whole: temp file, fsync, rename over, fsync of the
 * directory.  0, or an error (the old journal stays as it was). */
int persist_save(const char *module_dir, const module_list *mods, err_t *err);
/* Reads the journal into *out (malloc'd items; the caller frees): 0 with
 * out->count == 0 when there is none; an error when it is damaged (every
 * field is checked: the file is input like a peer's bytes) -- then it is
 * set aside as "<journal>.corrupt" and *out stays empty.  The entries'
 * paths are filled in from their hashes; their copies are not checked. */
int persist_load(const char *module_dir, module_list *out, err_t *err);
/* FNV-1a 64 of a file's bytes (at most 1 GiB, a regular file). */
int persist_file_hash(const char *path, uint64_t *hash, err_t *err);
/* Where module came from, for STATUS and the admin list ("stub dir",
 * "registered live at <time> (persisted)", ...), from the list given to
 * persist_publish (the dispatcher's, which it keeps owning). */
void persist_origin(const char *module, char *buf, size_t len);
void persist_publish(const module_list *mods);
/* One entry's origin text. */
void persist_describe(const module_entry *e, char *buf, size_t len);

#endif
