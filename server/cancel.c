/* cancel.c -- CANCEL of a running call: the dispatcher finds the client's
 * CANCEL packet on the connection whose worker computes, and stops it. */
#include "cancel.h"

#include "wire.h"

/* True when the bytes ready on t begin with the CANCEL of slot's call. */
static int cancel_ahead(transport *t, const worker_slot *slot)
{
    uint8_t hdr[PROTO_HEADER_SIZE];
    uint32_t type, call_id, flags, len;
    err_t ignored;
    if (t->ops->look(t, hdr, sizeof hdr, 0) != (long)sizeof hdr ||
        wire_parse_header(hdr, &type, &call_id, &flags, &len, &ignored) != 0)
        return 0;
    return type == PROTO_CANCEL && call_id == slot->call_id && (flags & PROTO_FLAG_END) && len == 0;
}

int cancel_poll(transport *t, worker_slot *slot)
{
    /* Bytes the worker already buffered would be lost with it: then the
     * CANCEL may be among them, and the call runs to its end. */
    if (slot->pipelined || atomic_load(&slot->state) != SLOT_COMPUTING) return 0;
    /* Looking may open TLS records, which changes a state that is the
     * worker's while it may reply: the stream is held first (as a
     * keepalive does), so the worker cannot start its reply, and then the
     * CANCEL packet alone is taken: what follows stays for the next call. */
    int expected = SLOT_COMPUTING;
    if (!atomic_compare_exchange_strong(&slot->state, &expected, SLOT_KEEPALIVE)) return 0;
    uint8_t hdr[PROTO_HEADER_SIZE];
    if (!cancel_ahead(t, slot) || t->ops->look(t, hdr, sizeof hdr, 1) != (long)sizeof hdr) {
        atomic_store(&slot->state, SLOT_COMPUTING);
        return 0;
    }
    return 1;
}
