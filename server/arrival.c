/* arrival.c -- whether a connection's next request is here: its first
 * packet whole, or enough of a large one, seen with MSG_PEEK (nothing read). */
#include "arrival.h"

#include <errno.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "wire.h"

int arrival_check(int fd)
{
    uint8_t hdr[PROTO_HEADER_SIZE];
    ssize_t k = recv(fd, hdr, sizeof hdr, MSG_PEEK | MSG_DONTWAIT);
    if (k == 0) return ARRIVAL_CLOSED;
    if (k < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? ARRIVAL_NOTHING : ARRIVAL_CLOSED;
    if (k < (ssize_t)sizeof hdr) return ARRIVAL_PARTIAL;
    uint32_t type, call_id, flags, len;
    err_t ignored;
    /* Bytes that are no packet at all: a worker answers them (EPROTO). */
    if (wire_parse_header(hdr, &type, &call_id, &flags, &len, &ignored) != 0) return ARRIVAL_READY;
    int queued = 0;
    if (ioctl(fd, FIONREAD, &queued) != 0) return ARRIVAL_CLOSED;
    unsigned long want = (unsigned long)PROTO_HEADER_SIZE + len;
    if (want > ARRIVAL_ENOUGH_BYTES) want = ARRIVAL_ENOUGH_BYTES;
    return (unsigned long)queued >= want ? ARRIVAL_READY : ARRIVAL_PARTIAL;
}
