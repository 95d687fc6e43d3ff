// progress_msg_test.cc -- the PROGRESS message's writer and reader, the
// wire reader's side-message hook, and the cleaning of a routine's words:
// what a hostile server or routine sends, refused or made harmless.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "msg_progress.h"
#include "transport.h"
#include "wire.h"
}

namespace {

// Frames messages into memory, then reads them back.
struct Stream {
    transport_bytes bytes{};
    wire_writer w;
    wire_reader r;
    err_t err;
    Stream()
    {
        bytes.max = 1 << 20;
        wire_writer_init(&w, -1, 4096, &err);
        wire_writer_attach(&w, transport_memory_sink(&bytes));
        wire_reader_init(&r, -1, 0, &err);
    }
    ~Stream()
    {
        if (read) transport_close(&r.tp); // the memory stream's state
        wire_writer_free(&w);
        wire_reader_free(&r);
        transport_bytes_free(&bytes);
    }
    bool read = false;
    void Read()
    {
        wire_reader_attach(&r, transport_memory(bytes.p, bytes.len));
        read = true;
    }
};

msg_progress Frame(double elapsed, double predicted, double fraction, const char *message)
{
    msg_progress p{};
    p.elapsed = elapsed;
    p.predicted = predicted;
    p.fraction = fraction;
    std::snprintf(p.message, sizeof p.message, "%s", message);
    return p;
}

TEST(ProgressMsg, RoundTrip)
{
    Stream s;
    msg_progress p = Frame(1.5, 2.25, 0.5, "iteration 3: primal +1.0e+00");
    ASSERT_EQ(msg_write_progress(&s.w, 9, &p, &s.err), 0);
    EXPECT_EQ(s.bytes.len, 16u + 24u + 4u + 28u) << "one packet: header, three doubles, the string";
    s.Read();
    uint32_t type, id;
    ASSERT_EQ(wire_next_message(&s.r, &type, &id, &s.err), 0);
    EXPECT_EQ(type, PROTO_PROGRESS);
    EXPECT_EQ(id, 9u);
    msg_progress q;
    ASSERT_EQ(msg_read_progress(&s.r, &q, &s.err), 0) << s.err.detail;
    EXPECT_EQ(q.elapsed, 1.5);
    EXPECT_EQ(q.predicted, 2.25);
    EXPECT_EQ(q.fraction, 0.5);
    EXPECT_STREQ(q.message, "iteration 3: primal +1.0e+00");
}

// What no honest server sends is refused, by code and with the field named.
TEST(ProgressMsg, HostileFieldsAreRefused)
{
    struct Case {
        msg_progress p;
        const char *word;
    } cases[] = {
        {Frame(NAN, -1, -1, ""), "elapsed"},        {Frame(-1, -1, -1, ""), "elapsed"},
        {Frame(1, -3, -1, ""), "predicted"},        {Frame(1, INFINITY, -1, ""), "predicted"},
        {Frame(1, -1, 1.5, ""), "fraction"},        {Frame(1, -1, NAN, ""), "fraction"},
        {Frame(1, -1, -0.5, ""), "fraction"},
    };
    for (const Case &c : cases) {
        Stream s;
        ASSERT_EQ(msg_write_progress(&s.w, 1, &c.p, &s.err), 0);
        s.Read();
        uint32_t type, id;
        ASSERT_EQ(wire_next_message(&s.r, &type, &id, &s.err), 0);
        msg_progress q;
        EXPECT_EQ(msg_read_progress(&s.r, &q, &s.err), NUMRPC_EPROTO) << c.word;
        EXPECT_NE(std::strstr(s.err.detail, c.word), nullptr) << s.err.detail;
    }
    // A message over 256 bytes (written by hand: the writer's struct
    // cannot hold one) is over the limit.
    Stream s;
    wire_begin(&s.w, PROTO_PROGRESS, 1);
    wire_put_double(&s.w, 1, &s.err);
    wire_put_double(&s.w, -1, &s.err);
    wire_put_double(&s.w, -1, &s.err);
    wire_put_string(&s.w, std::string(300, 'x').c_str(), &s.err);
    ASSERT_EQ(wire_end(&s.w, &s.err), 0);
    s.Read();
    uint32_t type, id;
    ASSERT_EQ(wire_next_message(&s.r, &type, &id, &s.err), 0);
    msg_progress q;
    EXPECT_EQ(msg_read_progress(&s.r, &q, &s.err), NUMRPC_ELIMIT);
}

struct Hooked {
    int calls = 0;
    std::vector<uint32_t> ids;
    std::vector<std::string> words;
};

int OnSide(wire_reader *r, uint32_t call_id, void *arg, err_t *err)
{
    Hooked *h = static_cast<Hooked *>(arg);
    msg_progress p;
    int rc = msg_read_progress(r, &p, err);
    if (rc != 0) return rc;
    h->calls++;
    h->ids.push_back(call_id);
    h->words.push_back(p.message);
    return 0;
}

// Keepalives and side messages before a message are taken out of the way;
// the caller sees the message only.
TEST(ProgressMsg, SideMessagesGoToTheHookBeforeTheNextMessage)
{
    Stream s;
    msg_progress a = Frame(0.1, -1, -1, "first"), b = Frame(0.2, -1, 0.5, "second");
    ASSERT_EQ(wire_send_empty(&s.w.tp, PROTO_KEEPALIVE, 4, &s.err), 0);
    ASSERT_EQ(msg_write_progress(&s.w, 4, &a, &s.err), 0);
    ASSERT_EQ(wire_send_empty(&s.w.tp, PROTO_KEEPALIVE, 4, &s.err), 0);
    ASSERT_EQ(msg_write_progress(&s.w, 4, &b, &s.err), 0);
    wire_begin(&s.w, PROTO_REPLY, 4);
    wire_put_u32(&s.w, 0, &s.err);
    ASSERT_EQ(wire_end(&s.w, &s.err), 0);
    s.Read();
    Hooked h;
    wire_reader_set_side(&s.r, PROTO_PROGRESS, OnSide, &h);
    uint32_t type, id, status = 1;
    ASSERT_EQ(wire_next_message(&s.r, &type, &id, &s.err), 0) << s.err.detail;
    EXPECT_EQ(type, PROTO_REPLY);
    ASSERT_EQ(wire_get_u32(&s.r, &status, &s.err), 0);
    EXPECT_EQ(status, 0u);
    EXPECT_EQ(h.calls, 2);
    EXPECT_EQ(h.words, (std::vector<std::string>{"first", "second"}));
    EXPECT_EQ(wire_reader_keepalives(&s.r), 2u);
    // Without the hook the frame is a message like any other.
    Stream t;
    ASSERT_EQ(msg_write_progress(&t.w, 5, &a, &t.err), 0);
    t.Read();
    ASSERT_EQ(wire_next_message(&t.r, &type, &id, &t.err), 0);
    EXPECT_EQ(type, PROTO_PROGRESS);
}

// A side message longer than one packet, or one the hook refuses, ends
// the read with the error.
TEST(ProgressMsg, ABadSideMessageIsAnErrorOfTheStream)
{
    Stream s;
    s.bytes.max = 1 << 20;
    wire_set_packet_size(&s.w, 64, &s.err); // 48 payload bytes: the frame needs two packets
    msg_progress a = Frame(0.1, -1, -1, "a message that does not fit in one small packet");
    ASSERT_EQ(msg_write_progress(&s.w, 4, &a, &s.err), 0);
    s.Read();
    Hooked h;
    wire_reader_set_side(&s.r, PROTO_PROGRESS, OnSide, &h);
    uint32_t type, id;
    EXPECT_EQ(wire_next_message(&s.r, &type, &id, &s.err), NUMRPC_EPROTO);
    EXPECT_NE(std::strstr(s.err.detail, "one packet"), nullptr) << s.err.detail;

    Stream t;
    msg_progress bad = Frame(1, -1, 7, "");
    ASSERT_EQ(msg_write_progress(&t.w, 4, &bad, &t.err), 0);
    t.Read();
    wire_reader_set_side(&t.r, PROTO_PROGRESS, OnSide, &h);
    EXPECT_EQ(wire_next_message(&t.r, &type, &id, &t.err), NUMRPC_EPROTO);
    EXPECT_EQ(h.calls, 0);
}

// A routine's words: bounded without a NUL, control bytes blanked, a
// fraction that is not one becomes unknown.
TEST(ProgressMsg, CleaningARoutinesWords)
{
    char raw[1000];
    std::memset(raw, 'z', sizeof raw);
    raw[0] = '\n';
    raw[1] = '\x7f';
    msg_progress p{};
    msg_progress_clean(&p, raw, sizeof raw, NAN);
    EXPECT_EQ(std::strlen(p.message), 256u);
    EXPECT_EQ(p.message[0], ' ');
    EXPECT_EQ(p.message[1], ' ');
    EXPECT_EQ(p.fraction, -1);
    for (double f : std::vector<double>{1e300, -5.0, INFINITY, -INFINITY, 1.0000001}) {
        msg_progress_clean(&p, "x", 2, f);
        EXPECT_EQ(p.fraction, -1) << f;
    }
    msg_progress_clean(&p, "half", 5, 0.5);
    EXPECT_EQ(p.fraction, 0.5);
    EXPECT_STREQ(p.message, "half");
    msg_progress_clean(&p, nullptr, 0, 0);
    EXPECT_STREQ(p.message, "");
}

} // namespace
