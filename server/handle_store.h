/* handle_store.h -- the layout of the handle store's shared table, for the
 * files that make up the store (handles.c, handle_dir.c); private to them. */
#ifndef NUMRPC_SERVER_HANDLE_STORE_H
#define NUMRPC_SERVER_HANDLE_STORE_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "handle_spares.h"
#include "handles.h"
#include "msg_data.h"
#include "tokens.h"

/* DATA_GRANT's tickets: outstanding at most, and of one identity. */
#define TICKETS 256
#define TICKETS_PER_IDENTITY (TICKETS / 4)

enum entry_state { ENTRY_FREE = 0, ENTRY_FILLING = 1, ENTRY_LIVE = 2 };

typedef struct handle_entry {
    int state;     /* enum entry_state */
    pid_t writer;  /* FILLING: the worker filling it; LIVE: the call
                      writing it (0: none) */
    msg_data_id id;
    char owner[TOKEN_NAME_MAX + 1];
    char account[HANDLE_ACCOUNT_MAX]; /* whom its budgets charge */
    msg_data_shape shape;
    uint64_t bytes;
    double lease_end; /* monotonic seconds (CLOCK_MONOTONIC is system-wide) */
    uint32_t readers; /* LIVE: calls reading one of its files (handles_map);
                         while any does, no file of it becomes a spare */
    uint64_t version; /* LIVE: names its current bytes; a commit gives it the
                         version its claim reserved (handles_version_next) */
} handle_entry;

/* A one-time ticket for a DATA_GET of handle id (free when expires == 0). */
typedef struct handle_ticket {
    msg_data_id ticket, id;
    double expires; /* monotonic seconds */
    char account[HANDLE_ACCOUNT_MAX]; /* the identity that asked for it */
} handle_ticket;

struct handle_store {
    pthread_mutex_t lock; /* process-shared, robust: guards all below */
    uint32_t capacity;    /* --max-handles */
    uint32_t max_identity_handles; /* --max-handles-per-identity, resolved */
    uint32_t lease_ms, ticket_ms;
    uint64_t max_bytes, max_identity_bytes;
    uint64_t bytes, count; /* of FILLING and LIVE entries */
    size_t map_len;
    double next_scan; /* the dispatcher's: when it next looks for stray files */
    char dir[CONFIG_PATH_MAX + 64];
    handle_ticket tickets[TICKETS];
    uint64_t pulled_bytes, lent_bytes; /* moved in by DATA_PULL, out on tickets */
    uint64_t refused[HANDLE_LIMITS];   /* requests each limit turned away */
    spare_pool spares; /* with the handles' bytes, within max_bytes */
    uint64_t last_version; /* versions are handed out once each, upwards from
                              a random start (handles_open) */
    handle_entry items[];
};

/* The mutex of a process that died holding it is taken over: every change
 * under it leaves the table consistent field by field. */
static inline void lock(handle_store *s)
{
    if (pthread_mutex_lock(&s->lock) == EOWNERDEAD) pthread_mutex_consistent(&s->lock);
}

static inline void unlock(handle_store *s)
{
    pthread_mutex_unlock(&s->lock);
}

#endif
