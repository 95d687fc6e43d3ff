/* handle_maps.h -- a worker's mappings of handle files, kept from call to
 * call so that a handle's pages are mapped once (handle_maps.c). */
#ifndef NUMRPC_SERVER_HANDLE_MAPS_H
#define NUMRPC_SERVER_HANDLE_MAPS_H

#include <stdint.h>

#include "error.h"

/* The file open as fd (the caller keeps and closes fd) mapped whole, shared,
 * read-write or read-only, its pages populated: a mapping this process
 * already has of the same file, size and access, or a new one.  The file
 * must hold at least bytes (a shorter one would raise SIGBUS): else
 * NUMRPC_ESERVER naming what.  NULL with err on failure.  Each map is given
 * back with handle_maps_put. */
void *handle_maps_get(int fd, int writable, uint64_t bytes, const char *what, err_t *err);
/* The caller is done with map: it stays mapped for a later call unless its
 * file has no name left (then its pages go with it now). */
void handle_maps_put(void *map);

#endif
