/* cancel.c -- CANCEL of a running call: the dispatcher finds the client's
 * CANCEL packet on the connection whose worker computes, and stops it. */
#include "cancel.h"

#include <sys/socket.h>

#include "wire.h"

int cancel_poll(int fd, worker_slot *slot)
{
    /* Bytes the worker already buffered would be lost with it: then the
     * CANCEL may be among them, and the call runs to its end. */
    if (slot->pipelined || atomic_load(&slot->state) != SLOT_COMPUTING) return 0;
    uint8_t hdr[PROTO_HEADER_SIZE];
    uint32_t type, call_id, flags, len;
    err_t ignored;
    if (recv(fd, hdr, sizeof hdr, MSG_PEEK | MSG_DONTWAIT) != (ssize_t)sizeof hdr ||
        wire_parse_header(hdr, &type, &call_id, &flags, &len, &ignored) != 0)
        return 0;
    if (type != PROTO_CANCEL || call_id != slot->call_id || !(flags & PROTO_FLAG_END) || len != 0) return 0;
    /* Keep the worker from starting its reply (as a keepalive does), then
     * take exactly the CANCEL packet: what follows stays for the next call. */
    int expected = SLOT_COMPUTING;
    if (!atomic_compare_exchange_strong(&slot->state, &expected, SLOT_KEEPALIVE)) return 0;
    if (recv(fd, hdr, sizeof hdr, MSG_DONTWAIT) != (ssize_t)sizeof hdr) {
        atomic_store(&slot->state, SLOT_COMPUTING);
        return 0;
    }
    return 1;
}
