/* handles.h -- the server's store of data handles (handles.c): one file per
 * handle in a private directory, and a table in shared memory (dispatcher and
 * workers) with each handle's id, owner, shape, lease and writer. */
#ifndef NUMRPC_SERVER_HANDLES_H
#define NUMRPC_SERVER_HANDLES_H

#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "msg_data.h"
#include "tokens.h"

/* The store: mapped by the dispatcher before its first fork; every worker
 * inherits the mapping (NULL until handles_open). */
typedef struct handle_store handle_store;
extern handle_store *server_handles;

/* The identity the budgets charge (its "account"): the token's name, or
 * without tokens the peer's address (IPv4, or an IPv6 /64 as "P::/64"),
 * which may differ from the owner ("" without tokens: anyone may use). */
#define HANDLE_ACCOUNT_MAX (TOKEN_NAME_MAX + 1)

/* The limits that turn a request away, as /metrics names them. */
enum handle_limit {
    HANDLE_LIMIT_TABLE = 0,    /* --max-handles                 */
    HANDLE_LIMIT_IDENTITY,     /* --max-handles-per-identity    */
    HANDLE_LIMIT_BYTES,        /* --handle-bytes                */
    HANDLE_LIMIT_IDENTITY_BYTES, /* --handle-bytes-per-identity */
    HANDLE_LIMIT_TICKETS,      /* tickets outstanding            */
    HANDLE_LIMIT_IDENTITY_TICKETS, /* tickets of one identity    */
    HANDLE_LIMITS
};
extern const char *const handle_limit_names[HANDLE_LIMITS];

/* What a worker learnt of one handle: copied out of the table, valid while
 * the handle lives (its shape never changes). */
typedef struct handle_ref {
    uint32_t index; /* its entry in the table */
    msg_data_id id;
    msg_data_shape shape;
    uint64_t bytes; /* ld x cols x element size: the file's size */
    int reading;    /* handles_map counted this call as reading it */
    /* Names the bytes: a number the store hands out once, given to the
     * handle when it is published and again each time a commit changes it,
     * so (id, version) never names two contents.  0: not known (a commit
     * came between handles_find and handles_map). */
    uint64_t version;
    uint64_t next_version; /* a claim's: what a commit of its result gives */
} handle_ref;

/* ---- The dispatcher ---- */
/* Makes the private directory (--handle-dir, or /dev/shm/numrpc-<pid>-XXXXXX;
 * 0700), removes the directories that dead servers left, maps the table
 * (--max-handles entries) with its robust process-shared mutex. */
int handles_open(server_config *cfg, handle_store **out, err_t *err);
/* Takes the budgets and lease of the configuration (at open, and reread),
 * --handle-bytes lowered to the room the directory's file system has. */
void handles_configure(handle_store *s, server_config *cfg);
/* At exit: every file, the directory and the table go. */
void handles_close(handle_store *s);
/* The periodic pass (now: monotonic seconds): frees handles whose lease
 * ran out, clears the marks of workers that died (writing a handle, or
 * filling a new one), and removes stray <id>.new files. */
void handles_sweep(handle_store *s, double now);
/* A worker process ended: its writer marks go, its half-made handles too. */
void handles_worker_gone(handle_store *s, pid_t pid);
/* Handles and their bytes, for STATUS. */
void handles_totals(handle_store *s, uint64_t *count, uint64_t *bytes);
/* Bytes of handles this server pulled from others (DATA_PULL) and sent
 * to others on tickets, since it started, for STATUS. */
void handles_moved(handle_store *s, uint64_t *pulled, uint64_t *lent);
/* Requests each limit turned away since the server started (/metrics). */
void handles_refusals(handle_store *s, uint64_t out[HANDLE_LIMITS]);

/* ---- Workers ---- */
/* The lease a handle gets (ms). */
uint32_t handles_lease_ms(handle_store *s);
/* A new handle of shape for owner ("" without tokens), charged to account,
 * being filled by this process: budgets (--max-handles,
 * --max-handles-per-identity, --handle-bytes, --handle-bytes-per-identity)
 * are checked first (NUMRPC_ELIMIT saying which), then a fresh random id.
 * The file is not made yet: handles_path names it. */
int handles_reserve(handle_store *s, const char *owner, const char *account, const msg_data_shape *shape,
                    handle_ref *ref, err_t *err);
/* The new handle is filled: others may see it now. */
void handles_publish(handle_store *s, const handle_ref *ref);
/* The new handle failed: its file (if made) and entry go. */
void handles_discard(handle_store *s, const handle_ref *ref);
/* The live handle id of owner (its lease renewed): 0, or NUMRPC_ENOHANDLE,
 * the same for another owner's id as for one that does not exist. */
int handles_find(handle_store *s, const char *owner, const msg_data_id *id, handle_ref *ref, err_t *err);
/* Frees (or renews) the handle id of owner: 0 or NUMRPC_ENOHANDLE. */
int handles_free(handle_store *s, const char *owner, const msg_data_id *id);
int handles_renew(handle_store *s, const char *owner, const msg_data_id *id);
/* handles_find, and the handle is marked as written by this process:
 * NUMRPC_EBUSY while another call writes it.  ref->next_version is the
 * fresh version handles_commit will give the handle. */
int handles_claim(handle_store *s, const char *owner, const msg_data_id *id, handle_ref *ref, err_t *err);
/* The call that claimed ref succeeded: its result, written in place in
 * <id>.new (HANDLE_MAP_NEXT), replaces the handle's file at once (rename)
 * if the handle still lives and is still claimed by this process; else
 * <id>.new is removed.  0 or an error (the handle then unchanged). */
int handles_commit(handle_store *s, const handle_ref *ref, err_t *err);
/* The call that claimed ref failed: its <id>.new goes, the handle as it was. */
void handles_abandon(handle_store *s, const handle_ref *ref);
/* The claim of ref ends (after its commit, or without one). */
void handles_unclaim(handle_store *s, const handle_ref *ref);
/* A one-time ticket for handle id of owner (DATA_GRANT), charged to
 * account: random, good for one DATA_GET by anyone within *ttl_ms.  0,
 * NUMRPC_ENOHANDLE (as handles_find) or NUMRPC_ELIMIT (too many
 * outstanding: on this server, or of account). */
int handles_grant(handle_store *s, const char *owner, const char *account, const msg_data_id *id,
                  msg_data_id *ticket, uint32_t *ttl_ms, err_t *err);
/* 1 with *ref when ticket is a fresh ticket of a live handle; the ticket
 * is used up either way.  0 when no fresh ticket matches. */
int handles_redeem(handle_store *s, const msg_data_id *ticket, handle_ref *ref);
/* Adds to the bytes moved in (pulled) and out on tickets (lent). */
void handles_count_moved(handle_store *s, uint64_t pulled, uint64_t lent);
/* Makes ref's file (mode 0600, ref->bytes long): a spare's pages when
 * recycle and one fits -- only for a caller that then writes every byte
 * (a spare holds old data of anyone's) -- else zeros (sparse). */
int handles_create_file(handle_store *s, const handle_ref *ref, int recycle, err_t *err);
/* ref's file mapped whole, its pages populated (the mapping may be one this
 * worker kept from an earlier call); ref->version is then the version of
 * the bytes mapped (read, or copied into <id>.new), or 0 if unsure: HANDLE_MAP_READ (shared, read-only: an
 * IN argument, a GET), HANDLE_MAP_FILL (shared, writable: a PUT) or
 * HANDLE_MAP_NEXT (the handle's next contents: a copy in <id>.new, shared
 * and writable; the handle's file never changes until handles_commit, and
 * a claim is needed).  While a call reads a handle, none of its files is
 * recycled.  NULL with the error (NUMRPC_ENOHANDLE: the handle went
 * meanwhile); the caller gives the map back with handles_unmap. */
enum handle_map_how { HANDLE_MAP_READ = 0, HANDLE_MAP_FILL = 1, HANDLE_MAP_NEXT = 2 };
void *handles_map(handle_store *s, handle_ref *ref, int how, err_t *err);
void handles_unmap(handle_store *s, handle_ref *ref, void *map);
/* The path of a handle's file, with suffix ("" or ".new"). */
void handles_path(const handle_store *s, const msg_data_id *id, const char *suffix, char *out, size_t len);

#endif
