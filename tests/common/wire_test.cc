// wire_test.cc -- packet framing and the interface walker over a socketpair:
// messages of every size and packet size, keepalives, aborts, bad headers.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

extern "C" {
#include "marshal.h"
#include "wire.h"
}

namespace {

struct Pair {
    int fd[2];
    Pair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
    ~Pair()
    {
        close(fd[0]);
        close(fd[1]);
    }
};

class Framing : public ::testing::TestWithParam<size_t> {};

TEST_P(Framing, MessagesRoundTripAtEveryPacketSize)
{
    Pair p;
    const size_t packet = GetParam();
    std::vector<uint8_t> payload(300000);
    for (size_t i = 0; i < payload.size(); i++) payload[i] = static_cast<uint8_t>(i * 7 + 3);
    std::thread writer([&] {
        err_t err;
        wire_writer w;
        wire_writer_init(&w, p.fd[0], packet, &err);
        for (size_t len : {size_t(0), size_t(1), size_t(8), size_t(4080), size_t(4081), payload.size()}) {
            wire_begin(&w, PROTO_CALL, static_cast<uint32_t>(len));
            wire_put_u64(&w, len, &err);
            wire_put(&w, payload.data(), len, &err);
            EXPECT_EQ(wire_end(&w, &err), 0) << err.detail;
            // A keepalive between messages is invisible to the reader.
            transport keep = transport_tcp(p.fd[0]);
            wire_send_empty(&keep, PROTO_KEEPALIVE, 0, &err);
        }
        wire_writer_free(&w);
    });
    err_t err;
    wire_reader r;
    wire_reader_init(&r, p.fd[1], 0, &err);
    for (size_t want : {size_t(0), size_t(1), size_t(8), size_t(4080), size_t(4081), payload.size()}) {
        uint32_t type, id;
        ASSERT_EQ(wire_next_message(&r, &type, &id, &err), 0) << err.detail;
        EXPECT_EQ(type, static_cast<uint32_t>(PROTO_CALL));
        EXPECT_EQ(id, static_cast<uint32_t>(want));
        uint64_t len;
        ASSERT_EQ(wire_get_u64(&r, &len, &err), 0);
        ASSERT_EQ(len, want);
        std::vector<uint8_t> got(len);
        ASSERT_EQ(wire_get(&r, got.data(), len, &err), 0) << err.detail;
        EXPECT_TRUE(std::equal(got.begin(), got.end(), payload.begin()));
        ASSERT_EQ(wire_expect_end(&r, &err), 0) << err.detail;
    }
    EXPECT_EQ(r.keepalives, 5u);  // the last may still be unread
    writer.join();
    wire_reader_free(&r);
}

INSTANTIATE_TEST_SUITE_P(PacketSizes, Framing, ::testing::Values(64, 512, 4096, 65536, 1 << 20));

TEST(Framing, ShortMessageIsAnError)
{
    Pair p;
    err_t err;
    wire_writer w;
    wire_writer_init(&w, p.fd[0], 4096, &err);
    wire_begin(&w, PROTO_LIST, 1);
    wire_put_u32(&w, 5, &err);
    wire_end(&w, &err);
    wire_reader r;
    wire_reader_init(&r, p.fd[1], 0, &err);
    uint32_t type, id;
    ASSERT_EQ(wire_next_message(&r, &type, &id, &err), 0);
    uint64_t too_much;
    EXPECT_EQ(wire_get_u64(&r, &too_much, &err), NUMRPC_EPROTO);
    EXPECT_NE(std::string(err.detail).find("ends early"), std::string::npos) << err.detail;
    wire_writer_free(&w);
    wire_reader_free(&r);
}

// Messages ended with wire_end_held stay in the writer until a flush or the
// next wire_end, then leave in one write; the reader sees them whole, in order.
TEST(Framing, HeldMessagesLeaveTogether)
{
    Pair p;
    err_t err;
    wire_writer w;
    ASSERT_EQ(wire_writer_init(&w, p.fd[0], 256, &err), 0);
    for (uint32_t id = 1; id <= 3; id++) {
        wire_begin(&w, PROTO_CALL, id);
        ASSERT_EQ(wire_put_u32(&w, id * 10, &err), 0);
        ASSERT_EQ(wire_end_held(&w, &err), 0);
        EXPECT_TRUE(wire_writer_holding(&w));
    }
    char probe;
    EXPECT_EQ(recv(p.fd[1], &probe, 1, MSG_DONTWAIT), -1) << "a held message was sent";
    EXPECT_EQ(w.bytes_out, 3u * (PROTO_HEADER_SIZE + 4)) << "held bytes are counted";
    wire_begin(&w, PROTO_CALL, 4);
    ASSERT_EQ(wire_put_u32(&w, 40, &err), 0);
    ASSERT_EQ(wire_end(&w, &err), 0);
    EXPECT_FALSE(wire_writer_holding(&w));
    EXPECT_EQ(wire_flush(&w, &err), 0) << "nothing left to flush";

    wire_reader r;
    ASSERT_EQ(wire_reader_init(&r, p.fd[1], 0, &err), 0);
    for (uint32_t want = 1; want <= 4; want++) {
        uint32_t type, id, v = 0;
        ASSERT_EQ(wire_next_message(&r, &type, &id, &err), 0) << err.detail;
        EXPECT_EQ(id, want);
        ASSERT_EQ(wire_get_u32(&r, &v, &err), 0);
        EXPECT_EQ(v, want * 10);
        ASSERT_EQ(wire_expect_end(&r, &err), 0);
        // The next whole message is already buffered, except after the last.
        EXPECT_EQ(wire_reader_has_message(&r), want < 4) << want;
    }
    wire_writer_free(&w);
    wire_reader_free(&r);
}

TEST(Framing, AbortedMessageIsReported)
{
    Pair p;
    err_t err;
    wire_writer w;
    wire_writer_init(&w, p.fd[0], 64, &err);  // 48-byte payloads: many packets
    std::vector<uint8_t> data(200, 1);
    wire_begin(&w, PROTO_CALL, 9);
    wire_put(&w, data.data(), data.size(), &err);
    ASSERT_EQ(wire_abort(&w, &err), 0);
    wire_begin(&w, PROTO_LIST, 10);  // the next message is intact
    ASSERT_EQ(wire_end(&w, &err), 0);
    wire_reader r;
    wire_reader_init(&r, p.fd[1], 0, &err);
    uint32_t type, id;
    ASSERT_EQ(wire_next_message(&r, &type, &id, &err), 0);
    std::vector<uint8_t> got(1000);
    EXPECT_EQ(wire_get(&r, got.data(), got.size(), &err), NUMRPC_ECANCELLED);
    ASSERT_EQ(wire_next_message(&r, &type, &id, &err), 0) << err.detail;
    EXPECT_EQ(id, 10u);
    wire_writer_free(&w);
    wire_reader_free(&r);
}

// Found by tests/fuzz/fuzz_wire: a message aborted after its last byte went
// out in a full packet was taken whole by wire_expect_end.
TEST(Framing, MessageAbortedAfterItsLastFullPacketIsDropped)
{
    Pair p;
    err_t err;
    wire_writer w;
    wire_writer_init(&w, p.fd[0], 64, &err);  // 48-byte payloads
    std::vector<uint8_t> data(48, 7);
    uint8_t *room;
    size_t avail;
    wire_begin(&w, PROTO_REPLY, 3);
    wire_put(&w, data.data(), data.size(), &err);
    ASSERT_EQ(wire_reserve(&w, &room, &avail, &err), 0);  // the full packet is cut
    ASSERT_EQ(wire_abort(&w, &err), 0);
    wire_begin(&w, PROTO_LIST, 4);
    ASSERT_EQ(wire_end(&w, &err), 0);
    wire_reader r;
    wire_reader_init(&r, p.fd[1], 0, &err);
    uint32_t type, id;
    ASSERT_EQ(wire_next_message(&r, &type, &id, &err), 0);
    EXPECT_EQ(id, 3u);
    std::vector<uint8_t> got(48);
    ASSERT_EQ(wire_get(&r, got.data(), got.size(), &err), 0) << err.detail;
    EXPECT_EQ(wire_expect_end(&r, &err), NUMRPC_ECANCELLED);
    ASSERT_EQ(wire_next_message(&r, &type, &id, &err), 0) << err.detail;
    EXPECT_EQ(id, 4u);
    wire_writer_free(&w);
    wire_reader_free(&r);
}

TEST(Framing, BadHeadersAreRejected)
{
    Pair p;
    err_t err;
    wire_reader r;
    wire_reader_init(&r, p.fd[1], 4096, &err);
    uint8_t bad_magic[16] = {'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P', '/', '1', '.', '1', 0, 0};
    ASSERT_EQ(write(p.fd[0], bad_magic, 16), 16);
    uint32_t type, id;
    EXPECT_EQ(wire_next_message(&r, &type, &id, &err), NUMRPC_EPROTO);
    EXPECT_NE(std::string(err.detail).find("bad packet magic"), std::string::npos);
    wire_reader_free(&r);

    wire_reader_init(&r, p.fd[1], 4096, &err);
    uint8_t future[16] = {0x4E, 0x52, 0x09, PROTO_CALL, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0};
    ASSERT_EQ(write(p.fd[0], future, 16), 16);
    EXPECT_EQ(wire_next_message(&r, &type, &id, &err), NUMRPC_EVERSION);
    wire_reader_free(&r);

    wire_reader_init(&r, p.fd[1], 4096, &err);
    uint8_t huge[16] = {0x4E, 0x52, PROTO_VERSION, PROTO_CALL, 0, 0, 0, 1, 0, 0, 0, 1, 0x7f, 0, 0, 0};
    ASSERT_EQ(write(p.fd[0], huge, 16), 16);
    EXPECT_EQ(wire_next_message(&r, &type, &id, &err), NUMRPC_EPROTO);
    EXPECT_NE(std::string(err.detail).find("exceeds the limit"), std::string::npos);
    wire_reader_free(&r);
}

// The walker: the same code writes on one side and reads on the other.
TEST(Walker, MatrixWithLeadingDimensionAndStridedVector)
{
    // f(IN int lda, IN int n, INOUT double a[lda:n][n], IN int incx,
    //   OUT float x[1+(n-1)*incx : n : incx])
    iface_param p[5]{};
    const char *names[] = {"lda", "n", "a", "incx", "x"};
    uint32_t types[] = {NUMRPC_T_INT, NUMRPC_T_INT, NUMRPC_T_DOUBLE, NUMRPC_T_INT, NUMRPC_T_FLOAT};
    uint32_t modes[] = {IFACE_IN, IFACE_IN, IFACE_INOUT, IFACE_IN, IFACE_OUT};
    for (int i = 0; i < 5; i++) {
        p[i].name = const_cast<char *>(names[i]);
        p[i].type = types[i];
        p[i].mode = modes[i];
    }
    auto arg = [](expr_t *e, int64_t i) {
        expr_append(e, EXPR_ARG);
        expr_append(e, i);
    };
    p[2].rank = 2;
    arg(&p[2].dims[0].size, 0);
    arg(&p[2].dims[0].count, 1);
    arg(&p[2].dims[1].size, 1);
    p[4].rank = 1;
    // size 1 + (n-1)*incx
    for (int64_t w : std::vector<int64_t>{EXPR_CONST, 1, EXPR_ARG, 1, EXPR_CONST, 1, EXPR_SUB, EXPR_ARG, 3, EXPR_MUL, EXPR_ADD})
        expr_append(&p[4].dims[0].size, w);
    arg(&p[4].dims[0].count, 1);
    arg(&p[4].dims[0].stride, 3);
    iface_t f{};
    f.name = const_cast<char *>("walk");
    f.nparams = 5;
    f.params = p;
    err_t err;
    ASSERT_EQ(iface_validate(&f, &err), 0) << err.detail;

    int lda = 13, n = 9, incx = 4;
    std::vector<double> a(lda * n), a_server(lda * n, 0.0);
    for (size_t i = 0; i < a.size(); i++) a[i] = static_cast<double>(i) + 0.125;
    std::vector<float> x(1 + (n - 1) * incx, -1.0f), x_server(x.size(), 0.0f);
    for (size_t i = 0; i < x_server.size(); i++) x_server[i] = static_cast<float>(i) * 2.0f;

    Pair pr;
    void *cargv[5] = {&lda, &n, a.data(), &incx, x.data()};
    iface_shape shapes[5];
    ASSERT_EQ(marshal_eval_shapes(&f, cargv, shapes, &err), 0) << err.detail;
    wire_writer w;
    wire_reader r;
    wire_writer_init(&w, pr.fd[0], 128, &err);
    wire_reader_init(&r, pr.fd[1], 0, &err);
    wire_begin(&w, PROTO_CALL, 1);
    ASSERT_EQ(marshal_write(&w, &f, cargv, shapes, MARSHAL_REQUEST, &err), 0);
    ASSERT_EQ(wire_end(&w, &err), 0);

    int s_lda = 0, s_n = 0, s_incx = 0;
    void *sargv[5] = {&s_lda, &s_n, nullptr, &s_incx, nullptr};
    uint32_t type, id;
    ASSERT_EQ(wire_next_message(&r, &type, &id, &err), 0);
    ASSERT_EQ(marshal_read_scalars(&r, &f, sargv, nullptr, MARSHAL_REQUEST, &err), 0) << err.detail;
    EXPECT_EQ(s_lda, lda);
    EXPECT_EQ(s_n, n);
    EXPECT_EQ(s_incx, incx);
    iface_shape sshapes[5];
    ASSERT_EQ(marshal_eval_shapes(&f, sargv, sshapes, &err), 0);
    sargv[2] = a_server.data();
    sargv[4] = x_server.data();
    ASSERT_EQ(marshal_read_arrays(&r, &f, sargv, sshapes, MARSHAL_REQUEST, &err), 0) << err.detail;
    ASSERT_EQ(wire_expect_end(&r, &err), 0) << err.detail;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < lda; i++)
            EXPECT_EQ(a_server[j * lda + i], i < n ? a[j * lda + i] : 0.0) << i << "," << j;

    // Reply: a and x come back; x only at the strided positions.
    for (double &v : a_server) v *= -1;
    wire_begin(&w, PROTO_REPLY, 1);
    ASSERT_EQ(marshal_write(&w, &f, sargv, sshapes, MARSHAL_REPLY, &err), 0);
    ASSERT_EQ(wire_end(&w, &err), 0);
    ASSERT_EQ(wire_next_message(&r, &type, &id, &err), 0);
    ASSERT_EQ(marshal_read_scalars(&r, &f, cargv, shapes, MARSHAL_REPLY, &err), 0);
    ASSERT_EQ(marshal_read_arrays(&r, &f, cargv, shapes, MARSHAL_REPLY, &err), 0) << err.detail;
    ASSERT_EQ(wire_expect_end(&r, &err), 0);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < lda; i++)
            EXPECT_EQ(a[j * lda + i], i < n ? -(j * lda + i + 0.125) : j * lda + i + 0.125);
    for (size_t i = 0; i < x.size(); i++) EXPECT_EQ(x[i], i % incx == 0 ? x_server[i] : -1.0f) << i;

    wire_writer_free(&w);
    wire_reader_free(&r);
    for (auto &q : p)
        for (auto &d : q.dims) {
            expr_free(&d.size);
            expr_free(&d.count);
            expr_free(&d.stride);
        }
}

}  // namespace
