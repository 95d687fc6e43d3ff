/* fuzz_wire.c -- libFuzzer target: the framing (wire.c, wire_fields.c) on a
 * hostile stream, and the writer's packets read back by the reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "fuzz_support.h"
#include "transport.h"
#include "wire.h"

/* Input: byte mode, byte nops (mod 32), nops pairs (op, arg), then in mode
 * "read" (even) the peer's bytes.  Odd modes write messages with the ops and
 * read them back; an even mode's bit 1 picks the dispatcher's control
 * reader (one packet of CONTROL_MAX_PAYLOAD at most) over a worker's. */

#define MAX_OPS 32
#define MSG_MAX_BYTES (128u << 10) /* payload remembered per written message */
#define MAX_MSGS 64
#define SINK_MAX (64u << 20) /* the writer's bytes of one input, at most */

typedef struct op {
    uint8_t kind, arg;
} op;

__attribute__((noreturn)) static void fail(const char *what)
{
    fprintf(stderr, "fuzz_wire: %s\n", what);
    abort();
}

/* ---- Reading hostile bytes ---- */

/* One read step as a real caller takes it: a message's header first, then
 * its fields.  0 to go on; nonzero once a call failed (the real processes
 * close the connection then). */
static int read_step(wire_reader *r, op o, err_t *err)
{
    uint32_t type, id;
    if (!wire_reader_in_message(r)) {
        if (o.kind % 10 == 9) {
            wire_reader_has_message(r);
            wire_reader_idle(r);
            return 0;
        }
        return wire_next_message(r, &type, &id, err);
    }
    uint64_t before = wire_reader_offset(r);
    uint8_t buf[255 * 37];
    size_t n = (size_t)o.arg * 37;
    int rc = 0;
    switch (o.kind % 10) {
    case 0: return wire_expect_end(r, err);
    case 1:
        rc = wire_get(r, buf, n, err);
        if (rc == 0 && wire_reader_offset(r) != before + n) fail("wire_get moved the offset wrongly");
        return rc;
    case 2: return wire_skip(r, (uint64_t)o.arg * 4096, err);
    case 3:
        rc = wire_skip_pad8(r, err);
        if (rc == 0 && wire_reader_offset(r) % 8 != 0) fail("wire_skip_pad8 left the offset unaligned");
        return rc;
    case 4: {
        const uint8_t *p;
        size_t avail;
        rc = wire_peek(r, &p, &avail, err);
        if (rc == 0 && avail == 0) fail("wire_peek gave no byte");
        if (rc == 0) {
            size_t k = avail < o.arg ? avail : o.arg;
            memcpy(buf, p, k); /* ASan checks the bytes are really there */
            wire_consume(r, k);
        }
        return rc;
    }
    case 5: return wire_skip_message(r, err);
    case 6: {
        uint32_t u32;
        uint64_t u64;
        double d;
        rc = wire_get_u32(r, &u32, err);
        if (rc == 0) rc = wire_get_u64(r, &u64, err);
        if (rc == 0) rc = wire_get_double(r, &d, err);
        return rc;
    }
    case 7: {
        char *s = NULL;
        uint32_t max = (uint32_t)o.arg * 8;
        rc = wire_get_string(r, &s, max, err);
        if (rc == 0 && strlen(s) > max) fail("a string longer than its limit");
        free(s);
        return rc;
    }
    case 8: {
        char into[IFACE_MAX_NAME + 1];
        return wire_get_string_into(r, into, sizeof into, o.arg, err);
    }
    default: wire_reader_has_message(r); return 0;
    }
}

static void read_hostile(int control, const op *ops, uint32_t nops, const uint8_t *data,
                         size_t size)
{
    static wire_reader control_reader;
    static int control_ready;
    err_t err;
    if (!control_ready) {
        if (wire_reader_init(&control_reader, -1, PROTO_HEADER_SIZE + CONTROL_MAX_PAYLOAD, &err) != 0)
            fail(err.detail);
        control_ready = 1;
    }
    wire_reader *r = control ? &control_reader : fuzz_reader(PROTO_MAX_PACKET);
    fuzz_reader_feed(r, data, size);
    /* The ops again and again until the stream fails or ends. */
    for (uint32_t i = 0; nops > 0 && i < 4096; i++)
        if (read_step(r, ops[i % nops], &err) != 0) break;
    fuzz_reader_close();
}

/* ---- Writing, then reading back ---- */

/* What the writer was given for one message. */
typedef struct written {
    uint32_t type, id;
    size_t packet; /* the packet size it was cut into */
    int aborted;
    size_t len;
    uint8_t bytes[MSG_MAX_BYTES];
} written;

static written msgs[MAX_MSGS];

static void remember(written *m, const uint8_t *p, size_t n)
{
    if (m->len + n > MSG_MAX_BYTES) fail("a message over the remembered bytes");
    if (p) memcpy(m->bytes + m->len, p, n);
    else memset(m->bytes + m->len, 0, n);
    m->len += n;
}

/* Runs the ops on a writer into s; returns the messages begun. */
static uint32_t write_ops(wire_writer *w, const op *ops, uint32_t nops, err_t *err)
{
    static const size_t sizes[] = {PROTO_MIN_PACKET, 72, 128, 4096, 4104, 65536};
    uint8_t pattern[255];
    uint32_t n = 0;
    written *m = NULL;
    for (uint32_t i = 0; i < nops; i++) {
        op o = ops[i];
        /* A message stays within what is remembered of it. */
        int idle = wire_writer_idle(w), room = !idle && m->len + 255 * 97 <= MSG_MAX_BYTES;
        int rc = 0;
        for (int k = 0; k < o.arg; k++) pattern[k] = (uint8_t)(i * 31 + k);
        switch (o.kind % 11) {
        case 0:
            if (!idle || n == MAX_MSGS) break;
            m = &msgs[n];
            /* type 6 with no payload would be a keepalive, which readers skip */
            m->type = o.arg % 40 == PROTO_KEEPALIVE ? PROTO_REPLY : o.arg % 40;
            m->id = ++n;
            m->packet = wire_writer_packet_size(w);
            m->aborted = 0;
            m->len = 0;
            wire_begin(w, m->type, m->id);
            break;
        case 1: if (room) { rc = wire_put(w, pattern, o.arg, err); remember(m, pattern, o.arg); } break;
        case 2:
            if (room) {
                remember(m, NULL, (8 - m->len % 8) % 8);
                rc = wire_pad8(w, err);
            }
            break;
        case 3: if (room) { rc = wire_put_zeros(w, (uint64_t)o.arg * 97, err); remember(m, NULL, (size_t)o.arg * 97); } break;
        case 4:
            if (room) {
                uint8_t *p;
                size_t avail;
                rc = wire_reserve(w, &p, &avail, err);
                if (rc == 0 && avail == 0) fail("wire_reserve gave no room");
                size_t k = avail < o.arg ? avail : o.arg;
                if (rc == 0) {
                    memcpy(p, pattern, k);
                    wire_commit(w, k);
                    remember(m, pattern, k);
                }
            }
            break;
        case 5: if (!idle) rc = wire_end(w, err); break;
        case 6: if (!idle) rc = wire_end_held(w, err); break;
        case 7: if (!idle) { m->aborted = 1; rc = wire_abort(w, err); } break;
        case 8:
            if (idle) rc = wire_set_packet_size(w, o.arg < 6 * 40 ? sizes[o.arg % 6] : (size_t)o.arg * 8, err);
            break;
        case 9: if (idle) rc = wire_flush(w, err); break;
        default:
            if (idle && !wire_writer_holding(w)) rc = wire_send_empty(&w->tp, PROTO_KEEPALIVE, 0, err);
        }
        if (rc != 0) fail(err->detail); /* the sink holds SINK_MAX: never full here */
    }
    if (!wire_writer_idle(w) && wire_end(w, err) != 0) fail(err->detail);
    if (wire_flush(w, err) != 0) fail(err->detail);
    return n;
}

/* Every packet but a message's last is full (as the message's packet size
 * says); nothing else sits between the headers. */
static void check_packets(const transport_bytes *s, uint32_t n)
{
    size_t at = 0;
    while (at < s->len) {
        uint32_t type, id, flags, len;
        err_t err;
        if (s->len - at < PROTO_HEADER_SIZE) fail("the writer's bytes end inside a header");
        if (wire_parse_header(s->p + at, &type, &id, &flags, &len, &err) != 0) fail(err.detail);
        if (id > n || (id == 0 && type != PROTO_KEEPALIVE)) fail("a packet of no message");
        if (id > 0 && !(flags & PROTO_FLAG_END) && len + PROTO_HEADER_SIZE != msgs[id - 1].packet)
            fail("a packet before a message's last is not full");
        at += PROTO_HEADER_SIZE + len;
    }
    if (at != s->len) fail("the writer's bytes end inside a packet");
}

static void round_trip(const op *ops, uint32_t nops)
{
    static wire_writer w;
    static transport_bytes s = {.max = SINK_MAX}; /* its buffer kept from input to input */
    static int ready;
    err_t err;
    if (!ready && wire_writer_init(&w, -1, PROTO_DEFAULT_PACKET, &err) != 0) fail(err.detail);
    ready = 1;
    s.len = 0;
    wire_writer_attach(&w, transport_memory_sink(&s));
    wire_set_packet_size(&w, PROTO_DEFAULT_PACKET, &err);
    uint32_t n = write_ops(&w, ops, nops, &err);
    check_packets(&s, n);

    wire_reader *r = fuzz_reader(PROTO_MAX_PACKET);
    fuzz_reader_feed(r, s.p, s.len);
    static uint8_t got[MSG_MAX_BYTES];
    uint32_t type, id;
    for (uint32_t i = 0; i < n; i++) {
        const written *m = &msgs[i];
        if (m->aborted) continue; /* read when its packets come, below */
        int rc = wire_next_message(r, &type, &id, &err);
        /* An aborted message whose first packets went out arrives, and
         * reading it ends in NUMRPC_ECANCELLED. */
        while (rc == 0 && id != m->id) {
            if (id == 0 || id > n || !msgs[id - 1].aborted) fail("a message out of order");
            rc = wire_get(r, got, msgs[id - 1].len, &err);
            if (rc == 0) rc = wire_expect_end(r, &err);
            if (rc != NUMRPC_ECANCELLED) fail("an aborted message was read as whole");
            rc = wire_next_message(r, &type, &id, &err);
        }
        if (rc != 0) fail(err.detail);
        if (type != m->type) fail("a message's type changed");
        if (wire_get(r, got, m->len, &err) != 0) fail(err.detail);
        if (memcmp(got, m->bytes, m->len) != 0) fail("a message's bytes changed");
        if (wire_expect_end(r, &err) != 0) fail(err.detail);
    }
    fuzz_reader_close();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cursor c = {data, size};
    uint8_t mode = fuzz_take_byte(&c);
    uint32_t nops = fuzz_take_byte(&c) % (MAX_OPS + 1);
    op ops[MAX_OPS];
    for (uint32_t i = 0; i < nops; i++) {
        ops[i].kind = fuzz_take_byte(&c);
        ops[i].arg = fuzz_take_byte(&c);
    }
    if (mode & 1) round_trip(ops, nops);
    else read_hostile(mode & 2, ops, nops, c.p, c.left);
    return 0;
}
