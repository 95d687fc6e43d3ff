// msg_mpi_test.cc -- the worker <-> MPI job messages: each writer's bytes
// read back by its reader, and cut, absurd or lying messages refused cleanly.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "marshal.h"
#include "msg_mpi.h"
#include "protocol.h"
}

namespace {

// pdsolve(IN int n, INOUT double a[lda:n][n], IN int lda, OUT int ipiv[n],
//         OUT int *info), Backend "MPI" 4.
struct Routine {
    iface_t f{};
    std::vector<uint8_t> blob;
    iface_param params[5]{};
    int64_t arg_n[2] = {EXPR_ARG, 0}, arg_lda[2] = {EXPR_ARG, 2};

    explicit Routine(uint32_t backend = IFACE_BACKEND_MPI)
    {
        const char *names[] = {"n", "a", "lda", "ipiv", "info"};
        uint32_t types[] = {NUMRPC_T_INT, NUMRPC_T_DOUBLE, NUMRPC_T_INT, NUMRPC_T_INT, NUMRPC_T_INT};
        uint32_t modes[] = {IFACE_IN, IFACE_INOUT, IFACE_IN, IFACE_OUT, IFACE_OUT};
        for (int i = 0; i < 5; i++) {
            params[i].name = const_cast<char *>(names[i]);
            params[i].type = types[i];
            params[i].mode = modes[i];
        }
        params[1].rank = 2;
        params[1].dims[0].size = {2, arg_lda};
        params[1].dims[0].count = {2, arg_n};
        params[1].dims[1].size = {2, arg_n};
        params[3].rank = 1;
        params[3].dims[0].size = {2, arg_n};
        f.name = const_cast<char *>("pdsolve");
        f.symbol = const_cast<char *>("pdsolve");
        f.nparams = 5;
        f.params = params;
        f.backend = backend;
        f.ranks = backend == IFACE_BACKEND_MPI ? 4 : 0;
        err_t err;
        uint8_t *b;
        size_t len;
        EXPECT_EQ(iface_compute_hash(&f, &err), 0) << err.detail;
        EXPECT_EQ(iface_encode(&f, &b, &len, &err), 0) << err.detail;
        blob.assign(b, b + len);
        free(b);
    }
};

// A call's storage on the worker's side: n = 3, lda = 5.
struct Args {
    int32_t n = 3, lda = 5, info = -7;
    std::vector<double> a = std::vector<double>(5 * 3);
    std::vector<int32_t> ipiv = std::vector<int32_t>(3);
    void *argv[5];
    iface_shape shapes[5];
    Args(const iface_t *f)
    {
        for (size_t i = 0; i < a.size(); i++) a[i] = i % 5 < 3 ? 1.0 + static_cast<double>(i) : -99.0;
        argv[0] = &n;
        argv[1] = a.data();
        argv[2] = &lda;
        argv[3] = ipiv.data();
        argv[4] = &info;
        err_t err;
        EXPECT_EQ(marshal_eval_shapes(f, argv, shapes, &err), 0) << err.detail;
    }
};

// The bytes of one whole message a writer frames.
template <typename Fn> std::vector<uint8_t> Framed(Fn write)
{
    transport_bytes out = {};
    out.max = 1 << 24;
    wire_writer w;
    err_t err;
    EXPECT_EQ(wire_writer_init(&w, -1, MSG_MPI_PACKET, &err), 0);
    wire_writer_attach(&w, transport_memory_sink(&out));
    EXPECT_EQ(write(&w, &err), 0) << err.detail;
    std::vector<uint8_t> bytes(out.p, out.p + out.len);
    wire_writer_free(&w);
    transport_bytes_free(&out);
    return bytes;
}

struct Reader {
    wire_reader r;
    std::vector<uint8_t> keep;
    explicit Reader(const std::vector<uint8_t> &bytes) : keep(bytes)
    {
        err_t err;
        EXPECT_EQ(wire_reader_init(&r, -1, MSG_MPI_PACKET, &err), 0);
        wire_reader_attach(&r, transport_memory(keep.data(), keep.size()));
    }
    ~Reader()
    {
        r.tp.ops->close(&r.tp); /* the memory stream transport_memory allocated */
        wire_reader_free(&r);
    }
    // Reads bytes as an MPI_CALL and its MPI_ARRAYS (held: the parameters
    // rank 0 holds): the reader's code, and its detail.
    int Call(uint64_t max_bytes, msg_mpi_call *c, err_t *err, const std::vector<uint32_t> &held = {})
    {
        uint32_t type, id;
        int rc = wire_next_message(&r, &type, &id, err);
        if (rc == 0 && type != PROTO_MPI_CALL) return err_set(err, NUMRPC_EPROTO, "type %u", type);
        if (rc == 0) rc = msg_mpi_read_call(&r, max_bytes, c, err);
        if (rc != 0) return rc;
        for (uint32_t k : held) c->shapes[k].held = 1;
        rc = wire_next_message(&r, &type, &id, err);
        if (rc == 0 && type != PROTO_MPI_ARRAYS) rc = err_set(err, NUMRPC_EPROTO, "type %u", type);
        if (rc == 0) rc = msg_mpi_read_arrays(&r, c, err);
        if (rc != 0) msg_mpi_call_free(c);
        return rc;
    }
};

// MPI_CALL (with handles, if any) then MPI_ARRAYS, as a worker sends them
// when rank 0 holds nothing.
std::vector<uint8_t> CallBytes(const Routine &rt, Args &a, const msg_mpi_handles *handles = nullptr)
{
    return Framed([&](wire_writer *w, err_t *err) {
        int rc = msg_mpi_write_call(w, 12, rt.blob.data(), static_cast<uint32_t>(rt.blob.size()), &rt.f, a.argv,
                                    handles, err);
        iface_shape sent[5];
        for (int i = 0; i < 5; i++) sent[i] = a.shapes[i], sent[i].held = 0;
        return rc ? rc : msg_mpi_write_arrays(w, 12, &rt.f, a.argv, sent, err);
    });
}

// The handle of a (INOUT): its bytes at version 7, its result at 8.
msg_mpi_handles HandleOfA(uint32_t flags = MSG_MPI_KEY_NOW | MSG_MPI_KEY_NEXT, uint64_t now = 7, uint64_t next = 8)
{
    msg_mpi_handles hs{};
    hs.n = 1;
    hs.h[0].param = 1;
    hs.h[0].flags = flags;
    for (int i = 0; i < 16; i++) hs.h[0].key.id[i] = static_cast<uint8_t>(0xa0 + i);
    hs.h[0].key.version = now;
    hs.h[0].next_version = next;
    return hs;
}

TEST(MpiMessages, CallRoundTripsWithEveryArrayAsAThunkGetsIt)
{
    Routine rt;
    Args a(&rt.f);
    a.shapes[1].held = 1;  // a data handle's array still travels to the job unless rank 0 holds it
    Reader rd(CallBytes(rt, a));
    msg_mpi_call c;
    err_t err;
    ASSERT_EQ(rd.Call(1 << 20, &c, &err), 0) << err.detail;
    EXPECT_STREQ(c.f.name, "pdsolve");
    EXPECT_EQ(c.f.ranks, 4u);
    EXPECT_EQ(*static_cast<int32_t *>(c.argv[0]), 3);
    EXPECT_EQ(*static_cast<int32_t *>(c.argv[2]), 5);
    const double *got = static_cast<const double *>(c.argv[1]);
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 5; i++)  // rows beyond n arrive zeroed, as a thunk gets them
            EXPECT_EQ(got[j * 5 + i], i < 3 ? a.a[j * 5 + i] : 0.0) << i << "," << j;
    EXPECT_EQ(static_cast<const int32_t *>(c.argv[3])[2], 0);
    EXPECT_EQ(c.array_bytes, 15u * 8 + 3u * 4);
    msg_mpi_call_free(&c);
}

// Every prefix of a valid message is refused, and nothing stays allocated
// (the sanitizer build checks the leaks).
TEST(MpiMessages, ACallCutAnywhereIsRefused)
{
    Routine rt;
    Args a(&rt.f);
    std::vector<uint8_t> whole = CallBytes(rt, a);
    for (size_t k = 0; k < whole.size(); k++) {
        Reader rd(std::vector<uint8_t>(whole.begin(), whole.begin() + static_cast<long>(k)));
        msg_mpi_call c;
        err_t err;
        EXPECT_NE(rd.Call(1 << 20, &c, &err), 0) << "cut at " << k;
    }
}

// Offset of scalar `which` (0: n, 1: lda) in a framed MPI_CALL.
size_t ScalarAt(const Routine &rt, int which)
{
    size_t blob = (rt.blob.size() + 3) & ~size_t{3};
    return (PROTO_HEADER_SIZE + ((4 + blob + 7) & ~size_t{7})) + 4 * static_cast<size_t>(which);
}

void Poke32(std::vector<uint8_t> &b, size_t at, uint32_t v)
{
    v = htonl(v);
    memcpy(&b[at], &v, 4);
}

TEST(MpiMessages, AbsurdOrLyingCallsAreRefusedBeforeAllocating)
{
    Routine rt;
    Args a(&rt.f);
    std::vector<uint8_t> whole = CallBytes(rt, a);
    msg_mpi_call c;
    err_t err;
    {  // n = 2^30 with lda = 2^30: 8 EiB of matrix, refused by the limit
        std::vector<uint8_t> b = whole;
        Poke32(b, ScalarAt(rt, 0), 1u << 30);
        Poke32(b, ScalarAt(rt, 1), 1u << 30);
        Reader rd(b);
        EXPECT_EQ(rd.Call(1 << 20, &c, &err), NUMRPC_ELIMIT);
        EXPECT_NE(std::string(err.detail).find("more than the MPI job's 1048576 bytes"), std::string::npos)
            << err.detail;
    }
    {  // lda = 1 < n: the shape does not fit
        std::vector<uint8_t> b = whole;
        Poke32(b, ScalarAt(rt, 1), 1);
        Reader rd(b);
        EXPECT_EQ(rd.Call(1 << 20, &c, &err), NUMRPC_EINVAL) << err.detail;
    }
    {  // n = -1
        std::vector<uint8_t> b = whole;
        Poke32(b, ScalarAt(rt, 0), 0xffffffffu);
        Reader rd(b);
        EXPECT_EQ(rd.Call(1 << 20, &c, &err), NUMRPC_EINVAL) << err.detail;
    }
    {  // within the limit by a byte less: refused, and at the size: taken
        Reader small(whole);
        EXPECT_EQ(small.Call(15 * 8 + 3 * 4 - 1, &c, &err), NUMRPC_ELIMIT);
        Reader exact(whole);
        ASSERT_EQ(exact.Call(15 * 8 + 3 * 4, &c, &err), 0) << err.detail;
        msg_mpi_call_free(&c);
    }
    {  // a routine that is not MPI's is not run on the job
        Routine local(IFACE_BACKEND_LOCAL);
        Args la(&local.f);
        Reader rd(CallBytes(local, la));
        EXPECT_EQ(rd.Call(1 << 20, &c, &err), NUMRPC_EPROTO);
        EXPECT_NE(std::string(err.detail).find("not an MPI routine"), std::string::npos) << err.detail;
    }
    {  // a descriptor of garbage
        std::vector<uint8_t> b = whole;
        for (size_t i = PROTO_HEADER_SIZE + 4; i < PROTO_HEADER_SIZE + 40; i++) b[i] = 0xff;
        Reader rd(b);
        EXPECT_EQ(rd.Call(1 << 20, &c, &err), NUMRPC_EPROTO) << err.detail;
    }
}

std::vector<uint8_t> ReplyBytes(const Routine &rt, Args &a, int code, const char *detail, msg_mpi_phases ph,
                                uint32_t id = 12)
{
    return Framed([&](wire_writer *w, err_t *err) {
        return msg_mpi_write_reply(w, id, code, detail, &ph, &rt.f, a.argv, a.shapes, err);
    });
}

TEST(MpiMessages, ReplyCarriesPhasesAndResultsOrTheRoutinesError)
{
    Routine rt;
    Args job(&rt.f), worker(&rt.f);
    for (size_t i = 0; i < job.a.size(); i++) job.a[i] = 100.0 + static_cast<double>(i);
    job.ipiv = {3, 2, 3};
    job.info = 0;
    std::fill(worker.a.begin(), worker.a.end(), -1.0);
    {
        Reader rd(ReplyBytes(rt, job, 0, "", {0.25, 1.5, 0.125}));
        msg_mpi_phases ph;
        err_t call_err, err;
        ASSERT_EQ(msg_mpi_read_reply(&rd.r, 12, &rt.f, worker.argv, worker.shapes, &ph, &call_err, &err), 0)
            << err.detail;
        EXPECT_EQ(call_err.code, 0);
        EXPECT_EQ(ph.scatter_s, 0.25);
        EXPECT_EQ(ph.compute_s, 1.5);
        EXPECT_EQ(ph.gather_s, 0.125);
        EXPECT_EQ(worker.info, 0);
        EXPECT_EQ(worker.ipiv, (std::vector<int32_t>{3, 2, 3}));
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 5; i++)  // only the n x n block travels back
                EXPECT_EQ(worker.a[j * 5 + i], i < 3 ? job.a[j * 5 + i] : -1.0);
    }
    {
        Reader rd(ReplyBytes(rt, job, NUMRPC_EINVAL, "pdsolve: n is -1", {0, 0, 0}));
        msg_mpi_phases ph;
        err_t call_err, err;
        ASSERT_EQ(msg_mpi_read_reply(&rd.r, 12, &rt.f, worker.argv, worker.shapes, &ph, &call_err, &err), 0);
        EXPECT_EQ(call_err.code, NUMRPC_EINVAL);
        EXPECT_STREQ(call_err.detail, "pdsolve: n is -1");
    }
}

TEST(MpiMessages, LyingRepliesAreRefused)
{
    Routine rt;
    Args job(&rt.f), worker(&rt.f);
    struct Case {
        std::vector<uint8_t> bytes;
        const char *phrase;
    } cases[] = {
        {ReplyBytes(rt, job, 0, "", {0, 0, 0}, 13), "not MPI_REPLY for 12"},
        {ReplyBytes(rt, job, 0, "", {NAN, 0, 0}), "a phase of nan seconds"},
        {ReplyBytes(rt, job, 0, "", {0, -1, 0}), "a phase of -1 seconds"},
        {ReplyBytes(rt, job, 5, "x", {0, 0, 0}), "status 5"},
        {ReplyBytes(rt, job, -4000, "x", {0, 0, 0}), "status -4000"},
    };
    for (Case &c : cases) {
        Reader rd(c.bytes);
        msg_mpi_phases ph;
        err_t call_err, err;
        EXPECT_EQ(msg_mpi_read_reply(&rd.r, 12, &rt.f, worker.argv, worker.shapes, &ph, &call_err, &err),
                  NUMRPC_EPROTO);
        EXPECT_NE(std::string(err.detail).find(c.phrase), std::string::npos) << err.detail;
    }
    // Results shaped for n = 3 read where the worker expects n = 2.
    worker.n = 2;
    err_t err;
    ASSERT_EQ(marshal_eval_shapes(&rt.f, worker.argv, worker.shapes, &err), 0);
    Reader rd(ReplyBytes(rt, job, 0, "", {0, 0, 0}));
    msg_mpi_phases ph;
    err_t call_err;
    EXPECT_EQ(msg_mpi_read_reply(&rd.r, 12, &rt.f, worker.argv, worker.shapes, &ph, &call_err, &err),
              NUMRPC_EPROTO);
    EXPECT_NE(std::string(err.detail).find("elements on the wire"), std::string::npos) << err.detail;
    // And a reply cut anywhere.
    std::vector<uint8_t> whole = ReplyBytes(rt, job, 0, "", {0, 0, 0});
    worker.n = 3;
    ASSERT_EQ(marshal_eval_shapes(&rt.f, worker.argv, worker.shapes, &err), 0);
    for (size_t k = 0; k < whole.size(); k++) {
        Reader cut(std::vector<uint8_t>(whole.begin(), whole.begin() + static_cast<long>(k)));
        EXPECT_NE(msg_mpi_read_reply(&cut.r, 12, &rt.f, worker.argv, worker.shapes, &ph, &call_err, &err), 0)
            << "cut at " << k;
    }
}

// The keys of a call's handles reach rank 0 as the worker sent them; rank 0
// says it holds a, and the worker's MPI_ARRAYS then carries the rest only.
TEST(MpiMessages, HandlesKeysAndHeldArraysRoundTrip)
{
    Routine rt;
    Args a(&rt.f);
    msg_mpi_handles hs = HandleOfA();
    std::vector<uint8_t> call = Framed([&](wire_writer *w, err_t *err) {
        return msg_mpi_write_call(w, 12, rt.blob.data(), static_cast<uint32_t>(rt.blob.size()), &rt.f, a.argv, &hs,
                                  err);
    });
    Reader rd(call);
    msg_mpi_call c;
    err_t err;
    uint32_t type, id;
    ASSERT_EQ(wire_next_message(&rd.r, &type, &id, &err), 0);
    ASSERT_EQ(msg_mpi_read_call(&rd.r, 1 << 20, &c, &err), 0) << err.detail;
    ASSERT_EQ(c.handles.n, 1u);
    EXPECT_EQ(c.handles.h[0].param, 1u);
    EXPECT_EQ(c.handles.h[0].flags, unsigned{MSG_MPI_KEY_NOW | MSG_MPI_KEY_NEXT});
    EXPECT_EQ(memcmp(c.handles.h[0].key.id, hs.h[0].key.id, 16), 0);
    EXPECT_EQ(c.handles.h[0].key.version, 7u);
    EXPECT_EQ(c.handles.h[0].next_version, 8u);
    c.shapes[1].held = 1;
    Reader held(Framed([&](wire_writer *w, err_t *e) { return msg_mpi_write_held(w, 12, &c, e); }));
    iface_shape sent[5];
    for (int i = 0; i < 5; i++) sent[i] = a.shapes[i], sent[i].held = 0;
    ASSERT_EQ(msg_mpi_read_held(&held.r, 12, &hs, sent, &err), 0) << err.detail;
    EXPECT_EQ(sent[1].held, 1);
    EXPECT_EQ(sent[3].held, 0);
    std::vector<uint8_t> arrays =
        Framed([&](wire_writer *w, err_t *e) { return msg_mpi_write_arrays(w, 12, &rt.f, a.argv, sent, e); });
    iface_shape every[5];
    for (int i = 0; i < 5; i++) every[i] = a.shapes[i], every[i].held = 0;
    std::vector<uint8_t> all =
        Framed([&](wire_writer *w, err_t *e) { return msg_mpi_write_arrays(w, 12, &rt.f, a.argv, every, e); });
    EXPECT_EQ(arrays.size() + 8 + 9 * 8, all.size());  // a's count and 9 doubles did not travel
    Reader ra(arrays);
    ASSERT_EQ(wire_next_message(&ra.r, &type, &id, &err), 0);
    ASSERT_EQ(type, PROTO_MPI_ARRAYS);
    ASSERT_EQ(msg_mpi_read_arrays(&ra.r, &c, &err), 0) << err.detail;
    EXPECT_EQ(static_cast<const double *>(c.argv[1])[0], 0.0);  // held: rank 0's block stays zero
    msg_mpi_call_free(&c);
}

// Keys that do not fit the routine, and an MPI_HELD naming an argument the
// call did not offer, are refused.
TEST(MpiMessages, LyingHandlesAndHeldListsAreRefused)
{
    Routine rt;
    Args a(&rt.f);
    msg_mpi_handles bad[6];
    bad[0] = HandleOfA(), bad[0].h[0].param = 0;                          // a scalar
    bad[1] = HandleOfA(), bad[1].h[0].param = 9;                          // beyond the routine
    bad[2] = HandleOfA(MSG_MPI_KEY_NOW, 0);                               // version 0
    bad[3] = HandleOfA(0x10);                                             // an unknown flag
    bad[4] = HandleOfA(MSG_MPI_KEY_NOW | MSG_MPI_KEY_NEXT, 7, 7);         // next is now
    bad[5] = HandleOfA(), bad[5].h[0].param = 3;                          // ipiv is OUT: nothing to read
    bad[5].h[0].flags = MSG_MPI_KEY_NOW;
    for (msg_mpi_handles &hs : bad) {
        Reader rd(CallBytes(rt, a, &hs));
        msg_mpi_call c;
        err_t err;
        EXPECT_EQ(rd.Call(1 << 20, &c, &err), NUMRPC_EPROTO) << hs.h[0].param << " " << hs.h[0].flags;
    }
    msg_mpi_handles two = HandleOfA();
    two.n = 2;
    two.h[1] = two.h[0];  // the same parameter twice
    Reader rd(CallBytes(rt, a, &two));
    msg_mpi_call c;
    err_t err;
    EXPECT_EQ(rd.Call(1 << 20, &c, &err), NUMRPC_EPROTO);
    // Rank 0 says it holds ipiv, which no handle offered.
    msg_mpi_handles hs = HandleOfA();
    Reader good(CallBytes(rt, a, &hs));
    ASSERT_EQ(good.Call(1 << 20, &c, &err), 0) << err.detail;
    c.shapes[3].held = 1;
    Reader held(Framed([&](wire_writer *w, err_t *e) { return msg_mpi_write_held(w, 12, &c, e); }));
    iface_shape sent[5] = {};
    EXPECT_EQ(msg_mpi_read_held(&held.r, 12, &hs, sent, &err), NUMRPC_EPROTO);
    EXPECT_NE(std::string(err.detail).find("did not offer"), std::string::npos) << err.detail;
    msg_mpi_call_free(&c);
}

TEST(MpiMessages, StartIsAnEmptyMessage)
{
    Reader rd(Framed([](wire_writer *w, err_t *err) { return msg_mpi_write_start(w, err); }));
    err_t err;
    EXPECT_EQ(msg_mpi_read_start(&rd.r, &err), 0) << err.detail;
    Reader other(Framed([](wire_writer *w, err_t *e) {
        int rc = wire_begin(w, PROTO_MPI_REPLY, 0);
        return rc ? rc : wire_end(w, e);
    }));
    EXPECT_EQ(msg_mpi_read_start(&other.r, &err), NUMRPC_EPROTO);
}

}  // namespace
