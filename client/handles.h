/* handles.h -- the data handles this process holds: the numrpc_data the
 * library made, kept in a hash set under client_lock (handles.c). */
#ifndef NUMRPC_CLIENT_HANDLES_H
#define NUMRPC_CLIENT_HANDLES_H

#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "msg_data.h"

/* One handle: allocated by data.c when the server has made it, freed by
 * data.c after it left the set (numrpc_data_free, numrpc_finalize).  The
 * caller never holds its address: the numrpc_data * it gets is the handle's
 * name, a number never given twice in the process (handles_insert), which
 * no pointer can equal -- a freed handle's name matches nothing, ever. */
struct numrpc_data {
    uint64_t name;            /* the caller's numrpc_data *, as a number   */
    msg_data_id id;
    msg_data_shape shape;     /* as the server keeps it                    */
    endpoint server;          /* where it lives                            */
    uint32_t lease_ms;        /* the lease the server gave last            */
    int gone;                 /* a renewal was told the server lost it     */
    pid_t owner;              /* the process that made it (a forked child
                                 neither renews nor frees its parent's)   */
    struct numrpc_data *next; /* hash chain                                */
};

/* What a call needs of a handle: a copy, valid after the handle is freed. */
typedef struct handle_facts {
    msg_data_id id;
    msg_data_shape shape;
    endpoint server;
} handle_facts;

/* Adds h to the set under a new name (never fails: a table that cannot
 * grow gets longer chains); the name, what the caller is given. */
numrpc_data *handles_insert(numrpc_data *h);
/* Takes the handle named p out of the set: its record (the caller frees
 * it), or NULL when p names no live handle (freed, or never one). */
numrpc_data *handles_remove(const void *p);
/* 1 when p has the form of a handle's name (live or freed), else 0. */
int handles_is_name(const void *p);
/* 1 with *out filled when p is a live handle of this process, else 0. */
int handles_lookup(const void *p, handle_facts *out);
/* Live handles (no lock: a hint for fast paths, exact under client_lock). */
uint32_t handles_count(void);
/* The shortest lease among handles still renewed, in ms (0 when none). */
uint32_t handles_min_lease(void);
/* The distinct servers of live handles, up to max; the count. */
int handles_servers(endpoint *out, int max);
/* The ids of the renewed handles this process made on server label, malloc'd into *ids (the
 * caller frees); the count (0: none, *ids NULL; -1: out of memory). */
int handles_ids_on(const char *label, msg_data_id **ids);
/* After a DATA_RENEW to label: per id its status and the lease granted;
 * a handle the server no longer has is marked gone and not renewed again. */
void handles_renewed(const char *label, const msg_data_id *ids, const int32_t *statuses, uint32_t n,
                     uint32_t lease_ms);
/* Empties the set; the former members as a list through ->next (the
 * caller frees each). */
numrpc_data *handles_take_all(void);

#endif
