/* msg_event.h -- the metaserver's events (docs/protocol.md types 23-24):
 * SUBSCRIBE with a mask of event types, then a stream of EVENT messages. */
#ifndef NUMRPC_COMMON_MSG_EVENT_H
#define NUMRPC_COMMON_MSG_EVENT_H

#include <stdint.h>

#include "error.h"
#include "iface.h"
#include "msg_meta.h"
#include "wire.h"

/* Event types: a bit each in a SUBSCRIBE's mask (1u << type). */
enum msg_event_type {
    MSG_EVENT_JOIN = 0,       /* a server joined                              */
    MSG_EVENT_LEAVE = 1,      /* a server left (detail: why)                  */
    MSG_EVENT_DRAIN = 2,      /* a server began to drain (SIGTERM)            */
    MSG_EVENT_UNDRAIN = 3,    /* a server stopped draining                    */
    MSG_EVENT_REGISTER = 4,   /* a module's routines appeared on a server     */
    MSG_EVENT_UNREGISTER = 5, /* a module's routines went away from a server  */
    MSG_EVENT_OVERLOAD = 6,   /* a server's queue went past the threshold     */
    MSG_EVENT_TYPES = 7
};
#define MSG_EVENT_ALL ((1u << MSG_EVENT_TYPES) - 1u)
#define MSG_EVENT_DETAIL_MAX 255

/* One event.  Every string is free of control characters (a reader
 * refuses them; the metaserver writes '?' for a peer's). */
typedef struct msg_event {
    uint32_t type;    /* enum msg_event_type                              */
    double time;      /* Unix seconds, finite and >= 0                    */
    uint32_t server_id;
    char server[MSG_META_LABEL_MAX + 1]; /* "host:port" ("" = none)       */
    char name[MSG_META_NAME_MAX + 1];    /* the server's name from its JOIN */
    char routine[IFACE_MAX_NAME + 1];    /* register/unregister: the module */
    char detail[MSG_EVENT_DETAIL_MAX + 1];
} msg_event;

/* "join", "leave", ... ("?" beyond the list). */
const char *msg_event_type_name(uint32_t type);
/* The mask of a comma-separated list of type names (NULL or "" = all);
 * an unknown name is NUMRPC_EINVAL naming it. */
int msg_event_mask_of(const char *list, uint32_t *mask, err_t *err);
/* Copies text into out (size bytes), each control character made '?'. */
void msg_event_clean(char *out, size_t size, const char *text);

/* ---- META_SUBSCRIBE (anyone -> metaserver): u32 mask; REPLY status ---- */
int msg_write_meta_subscribe(wire_writer *w, uint32_t call_id, uint32_t mask, err_t *err);
/* A mask of 0 is NUMRPC_EINVAL, unknown bits NUMRPC_EPROTO. */
int msg_read_meta_subscribe(wire_reader *r, uint32_t *mask, err_t *err);

/* ---- META_EVENT (metaserver -> subscriber, with the SUBSCRIBE's id) ---- */
/* Ends the message held (wire_end_held): the caller flushes. */
int msg_write_meta_event(wire_writer *w, uint32_t call_id, const msg_event *e, err_t *err);
/* Checks every field: type, time, a host:port server, clean strings. */
int msg_read_meta_event(wire_reader *r, msg_event *e, err_t *err);

#endif
