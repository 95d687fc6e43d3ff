/* cancel.c -- CANCEL of a running call: the dispatcher finds the client's
 * CANCEL packet on the connection whose worker computes, and stops it. */
#include "server.h"

#include <sys/socket.h>

#include "protocol.h"

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int cancel_poll(int fd, worker_slot *slot)
{
    /* Bytes the worker already buffered would be lost with it: then the
     * CANCEL may be among them, and the call runs to its end. */
    if (slot->pipelined || atomic_load(&slot->state) != SLOT_COMPUTING) return 0;
    uint8_t hdr[PROTO_HEADER_SIZE];
    if (recv(fd, hdr, sizeof hdr, MSG_PEEK | MSG_DONTWAIT) != (ssize_t)sizeof hdr) return 0;
    if ((uint32_t)(hdr[0] << 8 | hdr[1]) != PROTO_MAGIC || hdr[2] != PROTO_VERSION || hdr[3] != PROTO_CANCEL ||
        be32(hdr + 4) != slot->call_id || !(be32(hdr + 8) & PROTO_FLAG_END) || be32(hdr + 12) != 0)
        return 0;
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
