/* msg_event.c -- writer and reader of the metaserver's SUBSCRIBE and EVENT
 * messages, and the names of the event types; every field is checked. */
#include "msg_event.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "msg.h"
#include "protocol.h"

static const char *const type_names[MSG_EVENT_TYPES] = {"join",     "leave",      "drain",   "undrain",
                                                        "register", "unregister", "overload"};

const char *msg_event_type_name(uint32_t type)
{
    return type < MSG_EVENT_TYPES ? type_names[type] : "?";
}

int msg_event_mask_of(const char *list, uint32_t *mask, err_t *err)
{
    *mask = 0;
    if (list == NULL || *list == '\0') {
        *mask = MSG_EVENT_ALL;
        return 0;
    }
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        uint32_t t = 0;
        while (t < MSG_EVENT_TYPES && !(strlen(type_names[t]) == n && strncmp(p, type_names[t], n) == 0)) t++;
        if (n > 0 && t == MSG_EVENT_TYPES)
            return err_set(err, NUMRPC_EINVAL,
                           "unknown event type \"%.*s\" (join, leave, drain, undrain, register, unregister, overload)",
                           (int)(n > 32 ? 32 : n), p);
        if (n > 0) *mask |= 1u << t;
        p += n + (p[n] == ',');
    }
    if (*mask == 0) return err_set(err, NUMRPC_EINVAL, "no event type in \"%.32s\"", list);
    return 0;
}

void msg_event_clean(char *out, size_t size, const char *text)
{
    size_t i = 0;
    for (; size > 0 && i + 1 < size && text[i]; i++)
        out[i] = (unsigned char)text[i] < 0x20 || text[i] == 0x7f ? '?' : text[i];
    if (size > 0) out[i] = '\0';
}

/* No control character (a terminal would obey it). */
static int text_ok(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) return 0;
    return 1;
}

int msg_write_meta_subscribe(wire_writer *w, uint32_t call_id, uint32_t mask, err_t *err)
{
    wire_begin(w, PROTO_META_SUBSCRIBE, call_id);
    int rc = wire_put_u32(w, mask, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_meta_subscribe(wire_reader *r, uint32_t *mask, err_t *err)
{
    int rc = wire_get_u32(r, mask, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc == 0 && *mask == 0) rc = err_set(err, NUMRPC_EINVAL, "SUBSCRIBE: no event type asked for (mask 0)");
    if (rc == 0 && (*mask & ~MSG_EVENT_ALL))
        rc = err_set(err, NUMRPC_EPROTO, "SUBSCRIBE: unknown event types in mask 0x%x (known: 0x%x)", *mask,
                     MSG_EVENT_ALL);
    return rc;
}

int msg_write_meta_event(wire_writer *w, uint32_t call_id, const msg_event *e, err_t *err)
{
    wire_begin(w, PROTO_META_EVENT, call_id);
    int rc = wire_put_u32(w, e->type, err);
    if (rc == 0) rc = wire_put_double(w, e->time, err);
    if (rc == 0) rc = wire_put_u32(w, e->server_id, err);
    if (rc == 0) rc = wire_put_string(w, e->server, err);
    if (rc == 0) rc = wire_put_string(w, e->name, err);
    if (rc == 0) rc = wire_put_string(w, e->routine, err);
    if (rc == 0) rc = wire_put_string(w, e->detail, err);
    if (rc == 0) rc = wire_end_held(w, err);
    return rc;
}

int msg_read_meta_event(wire_reader *r, msg_event *e, err_t *err)
{
    memset(e, 0, sizeof *e);
    int rc = wire_get_u32(r, &e->type, err);
    if (rc == 0) rc = wire_get_double(r, &e->time, err);
    if (rc == 0) rc = wire_get_u32(r, &e->server_id, err);
    if (rc == 0) rc = wire_get_string_into(r, e->server, sizeof e->server, (uint32_t)sizeof e->server - 1, err);
    if (rc == 0) rc = wire_get_string_into(r, e->name, sizeof e->name, (uint32_t)sizeof e->name - 1, err);
    if (rc == 0) rc = wire_get_string_into(r, e->routine, sizeof e->routine, (uint32_t)sizeof e->routine - 1, err);
    if (rc == 0) rc = wire_get_string_into(r, e->detail, sizeof e->detail, (uint32_t)sizeof e->detail - 1, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc == 0 && e->type >= MSG_EVENT_TYPES) rc = err_set(err, NUMRPC_EPROTO, "EVENT: unknown type %u", e->type);
    if (rc == 0 && !(isfinite(e->time) && e->time >= 0 && e->time < 1e11))
        rc = err_set(err, NUMRPC_EPROTO, "EVENT: time %g", e->time);
    if (rc == 0 && e->server[0] && !msg_meta_label_ok(e->server))
        rc = err_set(err, NUMRPC_EPROTO, "EVENT: the server is not host:port");
    if (rc == 0 && !(text_ok(e->name) && text_ok(e->routine) && text_ok(e->detail)))
        rc = err_set(err, NUMRPC_EPROTO, "EVENT: control characters in its text");
    if (rc != 0) memset(e, 0, sizeof *e);
    return rc;
}
