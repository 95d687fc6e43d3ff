/* arrival.c -- whether a connection's next request is here: its first
 * packet whole, or enough of a large one, looked at without consuming it. */
#include "arrival.h"

#include "wire.h"

int arrival_check(transport *t)
{
    uint8_t hdr[PROTO_HEADER_SIZE];
    long k = t->ops->look(t, hdr, sizeof hdr, 0);
    if (k < 0) return ARRIVAL_CLOSED;
    if (k == 0) return ARRIVAL_NOTHING;
    if (k < (long)sizeof hdr) return ARRIVAL_PARTIAL;
    uint32_t type, call_id, flags, len;
    err_t ignored;
    /* Bytes that are no packet at all: a worker answers them (EPROTO). */
    if (wire_parse_header(hdr, &type, &call_id, &flags, &len, &ignored) != 0) return ARRIVAL_READY;
    long queued = t->ops->ready(t);
    if (queued < 0) return ARRIVAL_CLOSED;
    unsigned long want = (unsigned long)PROTO_HEADER_SIZE + len;
    if (want > ARRIVAL_ENOUGH_BYTES) want = ARRIVAL_ENOUGH_BYTES;
    if (want > t->ops->window(t)) want = t->ops->window(t);
    return (unsigned long)queued >= want ? ARRIVAL_READY : ARRIVAL_PARTIAL;
}
