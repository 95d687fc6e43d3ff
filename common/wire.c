/* wire.c -- packet framing: the batch writer and the in-place reader of
 * numrpc messages over a stream socket. */
#include "wire.h"

#include <errno.h>
#include <poll.h>
#include <rpc/xdr.h>
#include <stdlib.h>
#include <string.h>

#include "sock.h"

#define WRITER_BATCH_BYTES (256u * 1024u)
#define READER_BUFFER_BYTES (512u * 1024u)

/* ---- Packet header: four XDR unsigned ints ---- */

static void encode_header(uint8_t out[PROTO_HEADER_SIZE], uint32_t type,
                          uint32_t call_id, uint32_t flags, uint32_t len)
{
    XDR x;
    u_int word0 = (PROTO_MAGIC << 16) | (PROTO_VERSION << 8) | (type & 0xffu);
    xdrmem_create(&x, (char *)out, PROTO_HEADER_SIZE, XDR_ENCODE);
    xdr_u_int(&x, &word0);
    xdr_u_int(&x, &call_id);
    xdr_u_int(&x, &flags);
    xdr_u_int(&x, &len);
    xdr_destroy(&x);
}

int wire_parse_header(const uint8_t in[PROTO_HEADER_SIZE], uint32_t *type, uint32_t *call_id,
                      uint32_t *flags, uint32_t *len, err_t *err)
{
    XDR x;
    u_int word0;
    xdrmem_create(&x, (char *)(uintptr_t)in, PROTO_HEADER_SIZE, XDR_DECODE);
    xdr_u_int(&x, &word0);
    xdr_u_int(&x, call_id);
    xdr_u_int(&x, flags);
    xdr_u_int(&x, len);
    xdr_destroy(&x);
    if ((word0 >> 16) != PROTO_MAGIC)
        return err_set(err, NUMRPC_EPROTO, "not a numrpc peer (bad packet magic 0x%08x)", word0);
    if (((word0 >> 8) & 0xffu) != PROTO_VERSION)
        return err_set(err, NUMRPC_EVERSION, "peer speaks protocol version %u, this side %u",
                       (word0 >> 8) & 0xffu, PROTO_VERSION);
    *type = word0 & 0xffu;
    return 0;
}

static int io_error(err_t *err, const char *what)
{
    if (errno == EAGAIN || errno == EWOULDBLOCK)
        return err_set(err, NUMRPC_ETIMEDOUT, "%s timed out", what);
    return err_set(err, NUMRPC_EIO, "%s: %s", what, strerror(errno));
}

/* Waits until fd is ready for events (POLLIN or POLLOUT), or deadline
 * (monotonic seconds; 0 = no wait here: the socket's own time limit holds)
 * passes; what_timed_out names the wait in the error. */
static int await_fd(int fd, short events, double deadline, const char *what_timed_out, err_t *err)
{
    while (deadline > 0) {
        double left = deadline - sock_now();
        struct pollfd p = {fd, events, 0};
        int n = left > 0 ? poll(&p, 1, (int)(left * 1000) + 1) : 0;
        if (n > 0) return 0;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return err_set(err, NUMRPC_EIO, "poll: %s", strerror(errno));
        return err_set(err, NUMRPC_ETIMEDOUT, "deadline passed %s", what_timed_out);
    }
    return 0;
}

static int send_all(const transport *t, const uint8_t *p, size_t n, uint64_t *counter,
                    double deadline, err_t *err)
{
    while (n > 0) {
        int rc = await_fd(t->fd, POLLOUT, deadline, "while the peer took no more bytes", err);
        if (rc != 0) return rc;
        ssize_t k = t->ops->send((transport *)t, p, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return io_error(err, "send");
        }
        p += k;
        n -= (size_t)k;
        *counter += (uint64_t)k;
    }
    return 0;
}

/* ---- Writer ---- */

static size_t clamp_packet(size_t packet_size)
{
    if (packet_size == 0) packet_size = PROTO_DEFAULT_PACKET;
    if (packet_size < PROTO_MIN_PACKET) packet_size = PROTO_MIN_PACKET;
    if (packet_size > PROTO_MAX_PACKET) packet_size = PROTO_MAX_PACKET;
    return packet_size & ~(size_t)7;
}

static int flush_batch(wire_writer *w, err_t *err)
{
    uint64_t sent = 0;
    int rc = send_all(&w->tp, w->buf, w->pkt, &sent, w->deadline, err);
    if (rc != 0) w->broken = 1; /* part of a packet may have gone */
    w->pkt = 0;
    w->pos = PROTO_HEADER_SIZE;
    return rc;
}

int wire_set_packet_size(wire_writer *w, size_t packet_size, err_t *err)
{
    packet_size = clamp_packet(packet_size);
    if (packet_size == w->packet_size && w->buf != NULL) return 0;
    if (w->pkt > 0) { /* held messages go out in the old packet size */
        int rc = flush_batch(w, err);
        if (rc != 0) return rc;
    }
    size_t npackets = WRITER_BATCH_BYTES / packet_size;
    if (npackets == 0) npackets = 1;
    uint8_t *buf = malloc(npackets * packet_size);
    if (buf == NULL)
        return err_set(err, NUMRPC_ENOMEM, "packet buffer of %zu bytes", npackets * packet_size);
    free(w->buf);
    w->buf = buf;
    w->cap = npackets * packet_size;
    w->packet_size = packet_size;
    w->pkt = w->pos = 0;
    return 0;
}

int wire_writer_init(wire_writer *w, int fd, size_t packet_size, err_t *err)
{
    memset(w, 0, sizeof *w);
    w->tp = transport_tcp(fd);
    return wire_set_packet_size(w, packet_size, err);
}

void wire_writer_attach(wire_writer *w, transport tp)
{
    w->tp = tp;
    w->deadline = 0;
    w->broken = 0;
    w->in_message = 0;
    w->pkt = 0;
    w->pos = PROTO_HEADER_SIZE;
}

void wire_writer_set_deadline(wire_writer *w, double deadline)
{
    w->deadline = deadline;
}

size_t wire_writer_packet_size(const wire_writer *w)
{
    return w->packet_size;
}

uint64_t wire_writer_bytes(const wire_writer *w)
{
    return w->bytes_out;
}

int wire_writer_idle(const wire_writer *w)
{
    return !w->in_message && !w->broken;
}

void wire_writer_free(wire_writer *w)
{
    free(w->buf);
    w->buf = NULL;
}

int wire_begin(wire_writer *w, uint32_t type, uint32_t call_id)
{
    NR_ASSERT(!w->in_message);
    w->type = type;
    w->call_id = call_id;
    w->in_message = 1;
    w->msg_bytes = 0;
    w->pos = w->pkt + PROTO_HEADER_SIZE; /* after the messages held, if any */
    return 0;
}

/* Writes the current packet's header; starts the next packet, sending the
 * batch when it is full. */
static int finish_packet(wire_writer *w, uint32_t flags, err_t *err)
{
    uint32_t len = (uint32_t)(w->pos - w->pkt - PROTO_HEADER_SIZE);
    encode_header(w->buf + w->pkt, w->type, w->call_id, flags, len);
    w->bytes_out += PROTO_HEADER_SIZE + (uint64_t)len;
    w->pkt = w->pos;
    w->pos = w->pkt + PROTO_HEADER_SIZE;
    if (w->pkt + w->packet_size > w->cap) return flush_batch(w, err);
    return 0;
}

int wire_reserve(wire_writer *w, uint8_t **p, size_t *avail, err_t *err)
{
    if (w->pos == w->pkt + w->packet_size) {
        int rc = finish_packet(w, 0, err);
        if (rc != 0) return rc;
    }
    *p = w->buf + w->pos;
    *avail = w->pkt + w->packet_size - w->pos;
    return 0;
}

void wire_commit(wire_writer *w, size_t n)
{
    w->pos += n;
    w->msg_bytes += n;
}

/* Copies n bytes from src into the message, or n zeros when src is NULL. */
static int put_bytes(wire_writer *w, const uint8_t *src, uint64_t n, err_t *err)
{
    while (n > 0) {
        uint8_t *dst;
        size_t avail;
        int rc = wire_reserve(w, &dst, &avail, err);
        if (rc != 0) return rc;
        size_t k = avail < n ? avail : (size_t)n;
        if (src != NULL) {
            memcpy(dst, src, k);
            src += k;
        } else {
            memset(dst, 0, k);
        }
        wire_commit(w, k);
        n -= k;
    }
    return 0;
}

int wire_put(wire_writer *w, const void *p, size_t n, err_t *err)
{
    return put_bytes(w, p, n, err);
}

int wire_pad8(wire_writer *w, err_t *err)
{
    static const uint8_t zeros[8];
    size_t pad = (8 - (w->msg_bytes & 7)) & 7;
    return wire_put(w, zeros, pad, err);
}

int wire_put_zeros(wire_writer *w, uint64_t n, err_t *err)
{
    return put_bytes(w, NULL, n, err);
}

static int end_message(wire_writer *w, uint32_t flags, err_t *err)
{
    NR_ASSERT(w->in_message);
    w->in_message = 0;
    int rc = finish_packet(w, flags, err);
    if (rc == 0 && w->pkt > 0) rc = flush_batch(w, err);
    w->pkt = 0;
    w->pos = PROTO_HEADER_SIZE;
    return rc;
}

int wire_end(wire_writer *w, err_t *err)
{
    return end_message(w, PROTO_FLAG_END, err);
}

int wire_end_held(wire_writer *w, err_t *err)
{
    NR_ASSERT(w->in_message);
    w->in_message = 0;
    return finish_packet(w, PROTO_FLAG_END, err); /* sends only a full batch */
}

int wire_flush(wire_writer *w, err_t *err)
{
    NR_ASSERT(!w->in_message);
    return w->pkt > 0 ? flush_batch(w, err) : 0;
}

int wire_writer_holding(const wire_writer *w)
{
    return !w->in_message && w->pkt > 0;
}

int wire_abort(wire_writer *w, err_t *err)
{
    /* The partial packet is dropped by the receiver; send it empty. */
    w->pos = w->pkt + PROTO_HEADER_SIZE;
    return end_message(w, PROTO_FLAG_END | PROTO_FLAG_ABORT, err);
}

int wire_send_empty(const transport *t, uint32_t type, uint32_t call_id, err_t *err)
{
    uint8_t header[PROTO_HEADER_SIZE];
    uint64_t sent = 0;
    encode_header(header, type, call_id, PROTO_FLAG_END, 0);
    return send_all(t, header, sizeof header, &sent, 0, err);
}

/* ---- Reader ---- */

int wire_reader_init(wire_reader *r, int fd, size_t max_packet, err_t *err)
{
    memset(r, 0, sizeof *r);
    r->tp = transport_tcp(fd);
    r->max_packet = max_packet ? max_packet : PROTO_MAX_PACKET;
    r->cap = READER_BUFFER_BYTES;
    r->buf = malloc(r->cap);
    if (r->buf == NULL) return err_set(err, NUMRPC_ENOMEM, "read buffer");
    return 0;
}

void wire_reader_free(wire_reader *r)
{
    free(r->buf);
    r->buf = NULL;
}

void wire_reader_wipe(wire_reader *r)
{
    if (r->buf) explicit_bzero(r->buf, r->cap);
    r->head = r->tail = 0;
}

void wire_writer_wipe(wire_writer *w)
{
    if (w->buf) explicit_bzero(w->buf, w->cap);
}

void wire_reader_attach(wire_reader *r, transport tp)
{
    r->tp = tp;
    r->head = r->tail = 0;
    r->payload_left = 0;
    r->in_message = 0;
    r->deadline = 0;
    r->pace_started = r->pace_from = 0;
    r->broken = 0;
}

void wire_reader_set_deadline(wire_reader *r, double deadline)
{
    r->deadline = deadline;
}

void wire_reader_set_pace(wire_reader *r, double grace_s, double rate)
{
    r->pace_grace = grace_s;
    r->pace_rate = rate;
}

void wire_reader_pace_from(wire_reader *r, double first_byte)
{
    r->pace_from = first_byte;
}

int wire_reader_broken(const wire_reader *r)
{
    return r->broken;
}

size_t wire_reader_buffered(const wire_reader *r)
{
    return r->tail - r->head;
}

uint32_t wire_reader_type(const wire_reader *r)
{
    return r->type;
}

uint32_t wire_reader_call_id(const wire_reader *r)
{
    return r->call_id;
}

uint64_t wire_reader_offset(const wire_reader *r)
{
    return r->msg_offset;
}

int wire_reader_in_message(const wire_reader *r)
{
    return r->in_message;
}

uint64_t wire_reader_bytes(const wire_reader *r)
{
    return r->bytes_in;
}

uint64_t wire_reader_keepalives(const wire_reader *r)
{
    return r->keepalives;
}

int wire_reader_idle(const wire_reader *r)
{
    return r->head == r->tail && !r->in_message && !r->broken;
}

int wire_reader_has_message(const wire_reader *r)
{
    if (r->in_message || r->tail - r->head < PROTO_HEADER_SIZE) return 0;
    uint32_t type, call_id, flags, len;
    err_t ignored;
    if (wire_parse_header(r->buf + r->head, &type, &call_id, &flags, &len, &ignored) != 0) return 0;
    return (flags & PROTO_FLAG_END) && r->tail - r->head >= PROTO_HEADER_SIZE + (size_t)len;
}

int wire_reader_next_is(const wire_reader *r, uint32_t type, uint32_t call_id)
{
    uint32_t t, id, flags, len;
    err_t ignored;
    return wire_reader_has_message(r) &&
           wire_parse_header(r->buf + r->head, &t, &id, &flags, &len, &ignored) == 0 && t == type &&
           id == call_id;
}

/* The pace: the message so far took longer than its grace plus one second
 * per pace_rate bytes.  Checked as bytes come, and on the clock while none
 * do (await_deadline): a sender that stops, or sends records that carry
 * no byte, is held to it all the same. */
static int check_pace(const wire_reader *r, err_t *err)
{
    if (r->pace_rate <= 0 || r->pace_started <= 0) return 0;
    double took = sock_now() - r->pace_started;
    uint64_t got = r->bytes_in - r->pace_base;
    if (took <= r->pace_grace + (double)got / r->pace_rate) return 0;
    return err_set(err, NUMRPC_ETIMEDOUT,
                   "request too slow: %llu bytes in %.1f s, under this server's minimum of %.0f bytes/s after %.1f s",
                   (unsigned long long)got, took, r->pace_rate, r->pace_grace);
}

/* Waits until the stream has bytes, r's deadline passes, or the pace fails
 * (the moment by which one more byte must have come). */
static int await_deadline(wire_reader *r, err_t *err)
{
    if (r->tp.ops->pending(&r->tp) > 0) return 0;
    double pace = 0;
    if (r->pace_rate > 0 && r->pace_started > 0)
        pace = r->pace_started + r->pace_grace + (double)(r->bytes_in - r->pace_base + 1) / r->pace_rate;
    if (pace <= 0 || (r->deadline > 0 && r->deadline <= pace))
        return await_fd(r->tp.fd, POLLIN, r->deadline, "while waiting for the peer", err);
    int rc = await_fd(r->tp.fd, POLLIN, pace, "while waiting for the peer", err);
    if (rc != NUMRPC_ETIMEDOUT) return rc;
    /* Bytes already here are taken even past the pace: a request's header
     * tells whom its refusal goes to. */
    struct pollfd here = {r->tp.fd, POLLIN, 0};
    if (poll(&here, 1, 0) > 0) return 0;
    return check_pace(r, err) != 0 ? err->code : rc;
}

/* Makes at least `need` bytes (<= cap) available at buf + head. */
static int fill(wire_reader *r, size_t need, err_t *err)
{
    if (r->tail - r->head >= need) return 0;
    if (r->head == r->tail) r->head = r->tail = 0; /* empty: start over */
    if (r->head + need > r->cap) {
        memmove(r->buf, r->buf + r->head, r->tail - r->head);
        r->tail -= r->head;
        r->head = 0;
    }
    while (r->tail - r->head < need) {
        int rc = await_deadline(r, err);
        if (rc != 0) {
            r->broken = 1;
            return rc;
        }
        ssize_t k = r->tp.ops->recv(&r->tp, r->buf + r->tail, r->cap - r->tail);
        if (k == 0) {
            int between = !r->in_message && r->tail == r->head;
            r->broken = 1;
            return err_set(err, NUMRPC_EIO, between ? "closed" : "connection closed mid-message");
        }
        if (k < 0) {
            if (errno == EINTR) continue;
            r->broken = 1;
            return io_error(err, "receive");
        }
        r->tail += (size_t)k;
        r->bytes_in += (uint64_t)k;
        if (r->tail - r->head < need && check_pace(r, err) != 0) {
            r->broken = 1;
            return err->code;
        }
    }
    return 0;
}

static int read_header(wire_reader *r, uint32_t *type, uint32_t *call_id,
                       uint32_t *flags, uint32_t *len, err_t *err)
{
    int rc = fill(r, PROTO_HEADER_SIZE, err);
    if (rc != 0) return rc;
    rc = wire_parse_header(r->buf + r->head, type, call_id, flags, len, err);
    if (rc == 0 && *len > r->max_packet - PROTO_HEADER_SIZE)
        rc = err_set(err, NUMRPC_EPROTO, "packet payload of %u bytes exceeds the limit of %zu", *len,
                     r->max_packet - PROTO_HEADER_SIZE);
    if (rc != 0) {
        r->broken = 1; /* out of step with the stream */
        return rc;
    }
    r->head += PROTO_HEADER_SIZE;
    return 0;
}

int wire_next_message(wire_reader *r, uint32_t *type, uint32_t *call_id,
                      err_t *err)
{
    NR_ASSERT(!r->in_message);
    if (r->pace_rate > 0) {
        double now = sock_now();
        r->pace_started = r->pace_from > 0 && r->pace_from < now ? r->pace_from : now;
        r->pace_base = r->bytes_in - (r->tail - r->head);
    }
    r->pace_from = 0;
    for (;;) {
        uint32_t t, id, flags, len;
        int rc = read_header(r, &t, &id, &flags, &len, err);
        if (rc != 0) return rc;
        if (t == PROTO_KEEPALIVE && len == 0) {
            r->keepalives++;
            continue;
        }
        if (flags & PROTO_FLAG_ABORT) { /* an aborted one-packet message */
            r->in_message = 1;
            r->payload_left = len;
            r->flags = flags;
            rc = wire_skip_message(r, err);
            if (rc != 0) return rc;
            continue;
        }
        r->type = *type = t;
        r->call_id = *call_id = id;
        r->flags = flags;
        r->payload_left = len;
        r->msg_offset = 0;
        r->in_message = 1;
        if (r->side_fn == NULL || t != r->side_type) return 0;
        /* A side message: its reader takes it whole, then the next one
         * (whose pace goes on). */
        double pace_started = r->pace_started;
        rc = flags & PROTO_FLAG_END ? r->side_fn(r, id, r->side_arg, err)
                                    : err_set(err, NUMRPC_EPROTO, "message of type %u longer than one packet", t);
        if (rc == 0 && r->in_message) rc = wire_skip_message(r, err); /* left unread */
        if (rc != 0) return rc;
        r->pace_started = pace_started;
    }
}

/* Reads the header of the current message's next packet (keepalives
 * skipped); a packet with ABORT ends the message: it is dropped whole. */
static int continue_message(wire_reader *r, err_t *err)
{
    uint32_t t, id, flags, len;
    int rc;
    do {
        rc = read_header(r, &t, &id, &flags, &len, err);
        if (rc != 0) return rc;
    } while (t == PROTO_KEEPALIVE && len == 0);
    if (t != r->type || id != r->call_id)
        return err_set(err, NUMRPC_EPROTO, "packet of message %u/%u inside message %u/%u", t, id,
                       r->type, r->call_id);
    r->flags = flags;
    r->payload_left = len;
    if (flags & PROTO_FLAG_ABORT) {
        int skip = wire_skip_message(r, err);
        if (skip != 0) return skip;
        return err_set(err, NUMRPC_ECANCELLED, "the sender aborted the message");
    }
    return 0;
}

/* Moves to the message's next packet once the current payload is used. */
static int next_packet(wire_reader *r, err_t *err)
{
    while (r->payload_left == 0) {
        if (r->flags & PROTO_FLAG_END)
            return err_set(err, NUMRPC_EPROTO, "message ends early (after %llu bytes)",
                           (unsigned long long)r->msg_offset);
        int rc = continue_message(r, err);
        if (rc != 0) return rc;
    }
    return 0;
}

int wire_peek(wire_reader *r, const uint8_t **p, size_t *avail, err_t *err)
{
    int rc = next_packet(r, err);
    if (rc != 0) return rc;
    if (r->head == r->tail) {
        rc = fill(r, 1, err);
        if (rc != 0) return rc;
    }
    size_t n = r->tail - r->head;
    *p = r->buf + r->head;
    *avail = n < r->payload_left ? n : (size_t)r->payload_left;
    return 0;
}

void wire_consume(wire_reader *r, size_t n)
{
    r->head += n;
    r->payload_left -= n;
    r->msg_offset += n;
}

/* Copies n payload bytes of the message to dst, or drops them when dst is
 * NULL (across packets). */
static int get_bytes(wire_reader *r, uint8_t *dst, uint64_t n, err_t *err)
{
    while (n > 0) {
        const uint8_t *src;
        size_t avail;
        int rc = wire_peek(r, &src, &avail, err);
        if (rc != 0) return rc;
        size_t k = avail < n ? avail : (size_t)n;
        if (dst != NULL) {
            memcpy(dst, src, k);
            dst += k;
        }
        wire_consume(r, k);
        n -= k;
    }
    return 0;
}

int wire_get(wire_reader *r, void *p, size_t n, err_t *err)
{
    return get_bytes(r, p, n, err);
}

int wire_skip_pad8(wire_reader *r, err_t *err)
{
    uint8_t pad[8];
    return wire_get(r, pad, (8 - (r->msg_offset & 7)) & 7, err);
}

int wire_skip(wire_reader *r, uint64_t n, err_t *err)
{
    return get_bytes(r, NULL, n, err);
}

int wire_at_end(wire_reader *r, int *at_end, err_t *err)
{
    while (r->payload_left == 0 && !(r->flags & PROTO_FLAG_END)) {
        int rc = continue_message(r, err);
        if (rc != 0) return rc;
    }
    *at_end = r->payload_left == 0;
    return 0;
}

int wire_expect_end(wire_reader *r, err_t *err)
{
    while (r->payload_left == 0 && !(r->flags & PROTO_FLAG_END)) {
        int rc = continue_message(r, err);
        if (rc != 0) return rc;
    }
    if (r->payload_left != 0) {
        uint64_t extra = r->payload_left;
        int rc = wire_skip_message(r, err);
        if (rc != 0) return rc;
        return err_set(err, NUMRPC_EPROTO, "message has %llu unexpected trailing bytes",
                       (unsigned long long)extra);
    }
    r->in_message = 0;
    r->pace_started = 0;
    return 0;
}

int wire_skip_message(wire_reader *r, err_t *err)
{
    for (;;) {
        while (r->payload_left > 0) {
            int rc = fill(r, 1, err);
            if (rc != 0) return rc;
            size_t n = r->tail - r->head;
            if (n > r->payload_left) n = (size_t)r->payload_left;
            wire_consume(r, n);
        }
        if (r->flags & PROTO_FLAG_END) break;
        uint32_t t, id, flags, len;
        int rc = read_header(r, &t, &id, &flags, &len, err);
        if (rc != 0) return rc;
        if (t == PROTO_KEEPALIVE && len == 0) continue;
        r->flags = flags;
        r->payload_left = len;
    }
    r->in_message = 0;
    r->pace_started = 0;
    return 0;
}
