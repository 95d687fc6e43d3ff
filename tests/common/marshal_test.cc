// marshal_test.cc -- the interface walker without a server: a decoded descriptor
// drives a request and a reply over a socketpair, and hostile input is refused.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

extern "C" {
#include "iface.h"
#include "marshal.h"
#include "wire.h"
}

namespace {

// probe(IN char c, IN int i, IN long l, IN float fl, IN double d,
//       IN scomplex sc, IN dcomplex dc, IN int lda, IN int n,
//       INOUT double a[lda:n][n], IN int incx,
//       OUT double y[1+(n-1)*incx : n : incx], IN string<8> tag,
//       OUT string<5> note, WORK double w[n], OUT int info)   CalcOrder n^3
enum { C, I, L, FL, D, SC, DC, LDA, N, A, INCX, Y, TAG, NOTE, W, INFO, NPARAMS };

const struct {
    const char *name;
    uint32_t type, mode;
} kSpec[NPARAMS] = {
    {"c", NUMRPC_T_CHAR, IFACE_IN},         {"i", NUMRPC_T_INT, IFACE_IN},
    {"l", NUMRPC_T_LONG, IFACE_IN},         {"fl", NUMRPC_T_FLOAT, IFACE_IN},
    {"d", NUMRPC_T_DOUBLE, IFACE_IN},       {"sc", NUMRPC_T_SCOMPLEX, IFACE_IN},
    {"dc", NUMRPC_T_DCOMPLEX, IFACE_IN},    {"lda", NUMRPC_T_INT, IFACE_IN},
    {"n", NUMRPC_T_INT, IFACE_IN},          {"a", NUMRPC_T_DOUBLE, IFACE_INOUT},
    {"incx", NUMRPC_T_INT, IFACE_IN},       {"y", NUMRPC_T_DOUBLE, IFACE_OUT},
    {"tag", NUMRPC_T_STRING, IFACE_IN},     {"note", NUMRPC_T_STRING, IFACE_OUT},
    {"w", NUMRPC_T_DOUBLE, IFACE_WORK},     {"info", NUMRPC_T_INT, IFACE_OUT},
};

void Words(expr_t *e, std::initializer_list<int64_t> words)
{
    for (int64_t word : words) ASSERT_EQ(expr_append(e, word), 0);
}

// The descriptor as a server would send it: built here, encoded, then decoded
// into `f` as a client does with the blob it gets.
class Probe
{
  public:
    iface_t f{};

    Probe()
    {
        iface_param p[NPARAMS]{};
        for (int k = 0; k < NPARAMS; k++) {
            p[k].name = const_cast<char *>(kSpec[k].name);
            p[k].type = kSpec[k].type;
            p[k].mode = kSpec[k].mode;
        }
        p[A].rank = 2;
        Words(&p[A].dims[0].size, {EXPR_ARG, LDA});
        Words(&p[A].dims[0].count, {EXPR_ARG, N});
        Words(&p[A].dims[1].size, {EXPR_ARG, N});
        p[Y].rank = 1;
        Words(&p[Y].dims[0].size, {EXPR_CONST, 1, EXPR_ARG, N, EXPR_CONST, 1, EXPR_SUB,
                                   EXPR_ARG, INCX, EXPR_MUL, EXPR_ADD});
        Words(&p[Y].dims[0].count, {EXPR_ARG, N});
        Words(&p[Y].dims[0].stride, {EXPR_ARG, INCX});
        Words(&p[TAG].bound, {EXPR_CONST, 8});
        Words(&p[NOTE].bound, {EXPR_CONST, 5});
        p[W].rank = 1;
        Words(&p[W].dims[0].size, {EXPR_ARG, N});
        iface_t built{};
        built.name = const_cast<char *>("probe");
        built.module = const_cast<char *>("test");
        built.symbol = const_cast<char *>("probe_");
        built.nparams = NPARAMS;
        built.params = p;
        Words(&built.complexity, {EXPR_ARG, N, EXPR_CONST, 3, EXPR_POW});
        err_t err;
        uint8_t *blob = nullptr;
        size_t len = 0;
        rc_ = iface_compute_hash(&built, &err);
        if (rc_ == 0) rc_ = iface_encode(&built, &blob, &len, &err);
        if (rc_ == 0) rc_ = iface_decode(blob, len, &f, &err);
        if (rc_ != 0) detail_ = err.detail;
        free(blob);
        for (auto &q : p) {
            expr_free(&q.bound);
            for (auto &dim : q.dims) {
                expr_free(&dim.size);
                expr_free(&dim.count);
                expr_free(&dim.stride);
            }
        }
        expr_free(&built.complexity);
    }
    ~Probe() { iface_free(&f); }
    Probe(const Probe &) = delete;
    Probe &operator=(const Probe &) = delete;

    ::testing::AssertionResult Ready() const
    {
        if (rc_ == 0) return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << "descriptor: " << detail_;
    }

  private:
    int rc_ = -1;
    std::string detail_;
};

// The client's arguments of one call, with sentinels where nothing may land.
struct ClientArgs {
    signed char c = -7;
    int32_t i = -123456;
    int64_t l = -(INT64_C(1) << 40) - 3;
    float fl = 1.5f;
    double d = -2.718281828459045;
    float sc[2] = {0.25f, -4.0f};
    double dc[2] = {1e-300, -3.5};
    int32_t lda = 7, n = 4, incx = 3;
    std::vector<double> a, y;
    char tag_text[16] = "node-7";
    char *tag = tag_text;
    char note_buf[6] = "-----"; // bound 5 + 1: the reply string lands here
    char *note = note_buf;
    int32_t info = -1;
    void *argv[NPARAMS];

    ClientArgs()
        : a(static_cast<size_t>(lda) * static_cast<size_t>(n)),
          y(1 + static_cast<size_t>(n - 1) * static_cast<size_t>(incx), -9.0)
    {
        for (size_t k = 0; k < a.size(); k++) a[k] = 100.0 + static_cast<double>(k);
        void *v[NPARAMS] = {&c,   &i,      &l,   &fl,       &d,    sc,    dc,      &lda,
                            &n,   a.data(), &incx, y.data(), &tag, &note, nullptr, &info};
        std::memcpy(argv, v, sizeof v);
    }
};

// The server's storage for the same call: scalars filled by the walker,
// arrays allocated once their shapes are known.
struct ServerArgs {
    signed char c = 0;
    int32_t i = 0;
    int64_t l = 0;
    float fl = 0;
    double d = 0;
    float sc[2] = {0, 0};
    double dc[2] = {0, 0};
    int32_t lda = 0, n = 0, incx = 0;
    std::vector<double> a, y, w;
    char *tag = nullptr; // malloc'd by the walker
    const char *note = "ok";
    int32_t info = 0;
    void *argv[NPARAMS];

    ServerArgs()
    {
        void *v[NPARAMS] = {&c, &i,      &l,    &fl,     &d,   sc,    dc,      &lda,
                            &n, nullptr, &incx, nullptr, &tag, &note, nullptr, &info};
        std::memcpy(argv, v, sizeof v);
    }
    ~ServerArgs() { free(tag); }
    // Blocks for the shapes the scalars give; a's rows beyond n hold fill.
    void Allocate(const iface_shape *shapes, double fill)
    {
        a.assign(shapes[A].mem_elems, fill);
        y.assign(shapes[Y].mem_elems, 0.0);
        w.assign(shapes[W].mem_elems, 0.0);
        argv[A] = a.data();
        argv[Y] = y.data();
        argv[W] = w.data();
    }
};

// A writer on one end of a socketpair and a reader on the other.
class Channel
{
  public:
    explicit Channel(size_t packet)
    {
        err_t err;
        ok_ = socketpair(AF_UNIX, SOCK_STREAM, 0, fd_) == 0;
        if (ok_) ok_ = wire_writer_init(&w_, fd_[0], packet, &err) == 0;
        if (ok_) ok_ = wire_reader_init(&r_, fd_[1], 0, &err) == 0;
    }
    ~Channel()
    {
        wire_writer_free(&w_);
        wire_reader_free(&r_);
        close(fd_[0]);
        close(fd_[1]);
    }
    Channel(const Channel &) = delete;
    Channel &operator=(const Channel &) = delete;

    bool ok() const { return ok_; }
    wire_reader *reader() { return &r_; }
    // One whole message of direction dir; returns marshal_write's code.
    int Send(const iface_t *f, void *const *argv, const iface_shape *shapes, marshal_dir dir,
             err_t *err)
    {
        wire_begin(&w_, dir == MARSHAL_REQUEST ? PROTO_CALL : PROTO_REPLY, 1);
        int rc = marshal_write(&w_, f, argv, shapes, dir, err);
        if (rc == 0) rc = wire_end(&w_, err);
        return rc;
    }
    // Waits for the next message; returns its type.
    uint32_t Next(err_t *err)
    {
        uint32_t type = 0, id = 0;
        EXPECT_EQ(wire_next_message(&r_, &type, &id, err), 0) << err->detail;
        EXPECT_EQ(id, 1u);
        return type;
    }

  private:
    int fd_[2] = {-1, -1};
    wire_writer w_;
    wire_reader r_;
    bool ok_ = false;
};

class Marshal : public ::testing::TestWithParam<size_t>
{
  protected:
    void SetUp() override
    {
        ASSERT_TRUE(probe.Ready());
        ASSERT_TRUE(channel.ok());
        ASSERT_EQ(marshal_eval_shapes(&probe.f, client.argv, cshapes, &err), 0) << err.detail;
    }
    // The server's half of a request: scalars, shapes, blocks, arrays, end.
    void ReceiveRequest(double fill)
    {
        ASSERT_EQ(channel.Next(&err), static_cast<uint32_t>(PROTO_CALL));
        wire_reader *r = channel.reader();
        ASSERT_EQ(marshal_read_scalars(r, &probe.f, server.argv, nullptr, MARSHAL_REQUEST, &err),
                  0)
            << err.detail;
        ASSERT_EQ(marshal_eval_shapes(&probe.f, server.argv, sshapes, &err), 0) << err.detail;
        server.Allocate(sshapes, fill);
        ASSERT_EQ(marshal_read_arrays(r, &probe.f, server.argv, sshapes, MARSHAL_REQUEST, &err), 0)
            << err.detail;
        ASSERT_EQ(wire_expect_end(r, &err), 0) << err.detail;
    }
    // The client's half of a reply.
    void ReceiveReply()
    {
        ASSERT_EQ(channel.Next(&err), static_cast<uint32_t>(PROTO_REPLY));
        wire_reader *r = channel.reader();
        ASSERT_EQ(marshal_read_scalars(r, &probe.f, client.argv, cshapes, MARSHAL_REPLY, &err), 0)
            << err.detail;
        ASSERT_EQ(marshal_read_arrays(r, &probe.f, client.argv, cshapes, MARSHAL_REPLY, &err), 0)
            << err.detail;
        ASSERT_EQ(wire_expect_end(r, &err), 0) << err.detail;
    }

    Probe probe;
    Channel channel{GetParam()};
    ClientArgs client;
    ServerArgs server;
    iface_shape cshapes[NPARAMS], sshapes[NPARAMS];
    err_t err;
};

TEST(MarshalTravels, ByMode)
{
    Probe probe;
    ASSERT_TRUE(probe.Ready());
    const iface_param *p = probe.f.params;
    EXPECT_TRUE(marshal_travels(&p[I], MARSHAL_REQUEST));
    EXPECT_FALSE(marshal_travels(&p[I], MARSHAL_REPLY));
    EXPECT_TRUE(marshal_travels(&p[A], MARSHAL_REQUEST));
    EXPECT_TRUE(marshal_travels(&p[A], MARSHAL_REPLY));
    EXPECT_FALSE(marshal_travels(&p[Y], MARSHAL_REQUEST));
    EXPECT_TRUE(marshal_travels(&p[Y], MARSHAL_REPLY));
    EXPECT_FALSE(marshal_travels(&p[W], MARSHAL_REQUEST));
    EXPECT_FALSE(marshal_travels(&p[W], MARSHAL_REPLY));
}

TEST_P(Marshal, ShapesAndComplexityFromTheScalars)
{
    EXPECT_EQ(cshapes[A].mem_elems, 28u); // lda 7 x n 4
    EXPECT_EQ(cshapes[A].wire_elems, 16u);
    EXPECT_EQ(cshapes[Y].mem_elems, 10u); // 1 + 3 * 3
    EXPECT_EQ(cshapes[Y].wire_elems, 4u);
    EXPECT_EQ(cshapes[Y].stride[0], 3);
    EXPECT_EQ(cshapes[TAG].bound, 8);
    EXPECT_EQ(cshapes[NOTE].bound, 5);
    EXPECT_EQ(cshapes[W].mem_elems, 4u);
    EXPECT_DOUBLE_EQ(marshal_complexity(&probe.f, client.argv), 64.0);
}

TEST_P(Marshal, RequestCarriesEveryScalarType)
{
    ASSERT_EQ(marshal_check_strings(&probe.f, client.argv, cshapes, MARSHAL_REQUEST, &err), 0)
        << err.detail;
    ASSERT_EQ(channel.Send(&probe.f, client.argv, cshapes, MARSHAL_REQUEST, &err), 0)
        << err.detail;
    ASSERT_NO_FATAL_FAILURE(ReceiveRequest(0.0));
    EXPECT_EQ(server.c, -7);
    EXPECT_EQ(server.i, -123456);
    EXPECT_EQ(server.l, -(INT64_C(1) << 40) - 3);
    EXPECT_EQ(server.fl, 1.5f);
    EXPECT_EQ(server.d, -2.718281828459045);
    EXPECT_EQ(server.sc[0], 0.25f);
    EXPECT_EQ(server.sc[1], -4.0f);
    EXPECT_EQ(server.dc[0], 1e-300);
    EXPECT_EQ(server.dc[1], -3.5);
    EXPECT_EQ(server.lda, 7);
    EXPECT_EQ(server.n, 4);
    EXPECT_EQ(server.incx, 3);
    ASSERT_NE(server.tag, nullptr);
    EXPECT_STREQ(server.tag, "node-7");
    EXPECT_EQ(marshal_check_strings(&probe.f, server.argv, sshapes, MARSHAL_REQUEST, &err), 0);
    // OUT scalars stay the server's own.
    EXPECT_STREQ(server.note, "ok");
    EXPECT_EQ(server.info, 0);
}

TEST_P(Marshal, LeadingDimensionRowsBeyondNStayOnBothSides)
{
    ASSERT_EQ(channel.Send(&probe.f, client.argv, cshapes, MARSHAL_REQUEST, &err), 0)
        << err.detail;
    const double fill = 7777.25;
    ASSERT_NO_FATAL_FAILURE(ReceiveRequest(fill));
    ASSERT_EQ(server.a.size(), 28u);
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 7; i++) {
            size_t k = static_cast<size_t>(j * 7 + i);
            EXPECT_EQ(server.a[k], i < 4 ? 100.0 + static_cast<double>(k) : fill) << i << "," << j;
        }
    // The reply: a comes back negated; the client's rows beyond n keep theirs.
    for (double &v : server.a) v = -v;
    server.info = 42;
    ASSERT_EQ(channel.Send(&probe.f, server.argv, sshapes, MARSHAL_REPLY, &err), 0) << err.detail;
    ASSERT_NO_FATAL_FAILURE(ReceiveReply());
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 7; i++) {
            size_t k = static_cast<size_t>(j * 7 + i);
            double sent = 100.0 + static_cast<double>(k);
            EXPECT_EQ(client.a[k], i < 4 ? -sent : sent) << i << "," << j;
        }
    EXPECT_EQ(client.info, 42);
    EXPECT_STREQ(client.note_buf, "ok");
    EXPECT_EQ(client.note, client.note_buf); // copied into the caller's buffer
}

TEST_P(Marshal, StridedArrayFillsOnlyItsStride)
{
    ASSERT_EQ(channel.Send(&probe.f, client.argv, cshapes, MARSHAL_REQUEST, &err), 0)
        << err.detail;
    ASSERT_NO_FATAL_FAILURE(ReceiveRequest(0.0));
    ASSERT_EQ(server.y.size(), 10u);
    for (size_t k = 0; k < server.y.size(); k++) server.y[k] = 0.5 * static_cast<double>(k) + 1;
    ASSERT_EQ(channel.Send(&probe.f, server.argv, sshapes, MARSHAL_REPLY, &err), 0) << err.detail;
    ASSERT_NO_FATAL_FAILURE(ReceiveReply());
    for (size_t k = 0; k < client.y.size(); k++)
        EXPECT_EQ(client.y[k], k % 3 == 0 ? 0.5 * static_cast<double>(k) + 1 : -9.0) << k;
}

TEST_P(Marshal, ElementCountUnlikeTheScalarsIsAProtocolError)
{
    // The array section says n = 5 while the scalars say n = 4.
    std::vector<double> bigger(7 * 5, 1.0);
    client.n = 5;
    client.argv[A] = bigger.data();
    iface_shape lying[NPARAMS];
    ASSERT_EQ(marshal_eval_shapes(&probe.f, client.argv, lying, &err), 0) << err.detail;
    client.n = 4;
    ASSERT_EQ(channel.Send(&probe.f, client.argv, lying, MARSHAL_REQUEST, &err), 0) << err.detail;
    ASSERT_EQ(channel.Next(&err), static_cast<uint32_t>(PROTO_CALL));
    wire_reader *r = channel.reader();
    ASSERT_EQ(marshal_read_scalars(r, &probe.f, server.argv, nullptr, MARSHAL_REQUEST, &err), 0)
        << err.detail;
    ASSERT_EQ(marshal_eval_shapes(&probe.f, server.argv, sshapes, &err), 0) << err.detail;
    EXPECT_EQ(sshapes[A].wire_elems, 16u);
    server.Allocate(sshapes, 0.0);
    EXPECT_EQ(marshal_read_arrays(r, &probe.f, server.argv, sshapes, MARSHAL_REQUEST, &err),
              NUMRPC_EPROTO);
    EXPECT_NE(std::string(err.detail).find("25 elements on the wire, 16 expected"),
              std::string::npos)
        << err.detail;
}

TEST_P(Marshal, StringOverItsBoundIsRefused)
{
    // The sender's check, and the server's again after reading the request.
    std::strcpy(client.tag_text, "far-too-long");
    EXPECT_EQ(marshal_check_strings(&probe.f, client.argv, cshapes, MARSHAL_REQUEST, &err),
              NUMRPC_EINVAL);
    EXPECT_NE(std::string(err.detail).find("tag has 12 characters"), std::string::npos)
        << err.detail;
    ASSERT_EQ(channel.Send(&probe.f, client.argv, cshapes, MARSHAL_REQUEST, &err), 0)
        << err.detail;
    ASSERT_NO_FATAL_FAILURE(ReceiveRequest(0.0));
    EXPECT_STREQ(server.tag, "far-too-long");
    EXPECT_EQ(marshal_check_strings(&probe.f, server.argv, sshapes, MARSHAL_REQUEST, &err),
              NUMRPC_EINVAL);

    // A reply string over its bound: the server's check fails, and a client
    // that gets one anyway refuses it without touching its buffer.
    server.note = "overflow";
    EXPECT_EQ(marshal_check_strings(&probe.f, server.argv, sshapes, MARSHAL_REPLY, &err),
              NUMRPC_EINVAL);
    ASSERT_EQ(channel.Send(&probe.f, server.argv, sshapes, MARSHAL_REPLY, &err), 0) << err.detail;
    ASSERT_EQ(channel.Next(&err), static_cast<uint32_t>(PROTO_REPLY));
    EXPECT_EQ(marshal_read_scalars(channel.reader(), &probe.f, client.argv, cshapes,
                                   MARSHAL_REPLY, &err),
              NUMRPC_EPROTO);
    EXPECT_NE(std::string(err.detail).find("note has 8 characters"), std::string::npos)
        << err.detail;
    EXPECT_STREQ(client.note_buf, "-----");
}

// 64: the smallest packet, so values and runs cross packet boundaries.
INSTANTIATE_TEST_SUITE_P(PacketSizes, Marshal, ::testing::Values(64, 4096));

} // namespace
