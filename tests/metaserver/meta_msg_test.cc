// meta_msg_test.cc -- the metaserver's messages (msg_meta.c): the same bytes
// as the writers they replaced, read back by their readers, hostile input
// refused; and the prediction model (rank.c) both sides rank with.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "msg.h"
#include "msg_meta.h"
#include "rank.h"
}

namespace {

// A message connection writing into a socketpair whose other end is read
// either raw (Bytes) or by a second connection (in).
struct Pipe {
    msg_conn out{}, in{};
    int raw = -1;
    Pipe()
    {
        int fd[2];
        err_t err;
        EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
        EXPECT_EQ(msg_conn_init(&out, 4096, &err), 0) << err.detail;
        EXPECT_EQ(msg_conn_init(&in, 4096, &err), 0) << err.detail;
        msg_conn_attach(&out, transport_tcp(fd[0]), "out");
        msg_conn_attach(&in, transport_tcp(dup(fd[1])), "in");
        raw = fd[1];
    }
    ~Pipe()
    {
        msg_conn_free(&out);
        msg_conn_free(&in);
        close(raw);
    }
    // Everything written so far, read raw (the in side must not read then).
    std::vector<uint8_t> Bytes()
    {
        std::vector<uint8_t> all;
        uint8_t buf[65536];
        ssize_t n;
        while ((n = recv(raw, buf, sizeof buf, MSG_DONTWAIT)) > 0) all.insert(all.end(), buf, buf + n);
        return all;
    }
    uint32_t Next()
    {
        uint32_t type = 0, id = 0;
        err_t err;
        EXPECT_EQ(wire_next_message(&in.reader, &type, &id, &err), 0) << err.detail;
        return type;
    }
};

// A valid descriptor of a routine without parameters.
struct Tiny {
    iface_t f{};
    uint8_t *blob = nullptr;
    size_t len = 0;
    explicit Tiny(const char *name)
    {
        err_t err;
        f.name = const_cast<char *>(name);
        f.module = const_cast<char *>("tiny");
        f.symbol = const_cast<char *>(name);
        f.lang = IFACE_LANG_C;
        EXPECT_EQ(iface_compute_hash(&f, &err), 0) << err.detail;
        EXPECT_EQ(iface_encode(&f, &blob, &len, &err), 0) << err.detail;
    }
    ~Tiny() { free(blob); }
    msg_meta_routine Entry() const
    {
        msg_meta_routine m{};
        snprintf(m.name, sizeof m.name, "%s", f.name);
        m.hash = f.hash;
        m.blob = blob;
        m.len = static_cast<uint32_t>(len);
        return m;
    }
};

msg_meta_join SampleJoin(msg_meta_routine *routines, uint32_t n)
{
    msg_meta_join j{};
    snprintf(j.host, sizeof j.host, "10.0.0.7");
    j.port = 7800;
    snprintf(j.name, sizeof j.name, "numrpc-server pid 42");
    j.slots = 2;
    j.curve.npoints = 2;
    j.curve.n[0] = 64;
    j.curve.rate[0] = 1e9;
    j.curve.n[1] = 512;
    j.curve.rate[1] = 8e9;
    j.routines = routines;
    j.nroutines = n;
    return j;
}

TEST(MetaMessages, JoinIsTheSameBytesAsBeforeAndReadsBack)
{
    Tiny a("alpha"), b("beta");
    msg_meta_routine list[2] = {a.Entry(), b.Entry()};
    msg_meta_join j = SampleJoin(list, 2);
    err_t err;
    // As server/metajoin.c wrote it field by field before msg_meta.c.
    Pipe p;
    wire_writer *w = &p.out.writer;
    wire_begin(w, PROTO_META_JOIN, 3);
    wire_put_string(w, j.host, &err);
    wire_put_u32(w, j.port, &err);
    wire_put_string(w, j.name, &err);
    wire_put_u32(w, j.slots, &err);
    wire_put_u32(w, 2, &err);
    for (int i = 0; i < 2; i++) {
        wire_put_double(w, j.curve.n[i], &err);
        wire_put_double(w, j.curve.rate[i], &err);
    }
    wire_put_u32(w, 2, &err);
    for (auto &r : list) {
        wire_put_string(w, r.name, &err);
        wire_put_u64(w, r.hash, &err);
        wire_put_opaque(w, r.blob, r.len, &err);
    }
    ASSERT_EQ(wire_end(w, &err), 0);
    std::vector<uint8_t> before = p.Bytes();
    ASSERT_GT(before.size(), 16u);
    ASSERT_EQ(msg_write_meta_join(&p.out.writer, 3, &j, &err), 0) << err.detail;
    EXPECT_EQ(p.Bytes(), before);

    ASSERT_EQ(msg_write_meta_join(&p.out.writer, 4, &j, &err), 0) << err.detail;
    EXPECT_EQ(p.Next(), static_cast<uint32_t>(PROTO_META_JOIN));
    msg_meta_join got;
    ASSERT_EQ(msg_read_meta_join(&p.in.reader, &got, &err), 0) << err.detail;
    EXPECT_STREQ(got.host, "10.0.0.7");
    EXPECT_EQ(got.port, 7800u);
    EXPECT_STREQ(got.name, "numrpc-server pid 42");
    EXPECT_EQ(got.curve.npoints, 2);
    EXPECT_EQ(got.curve.rate[1], 8e9);
    ASSERT_EQ(got.nroutines, 2u);
    EXPECT_STREQ(got.routines[1].iface.name, "beta");
    EXPECT_EQ(got.routines[1].iface.hash, b.f.hash);
    msg_meta_routines_free(got.routines, got.nroutines);

    msg_meta_joined ok = {9, 1000}, back{};
    ASSERT_EQ(msg_write_meta_join_reply(&p.in.writer, 4, &ok, &err), 0);
    ASSERT_EQ(msg_read_reply(&p.out.reader, 4, "meta", &err), 0) << err.detail;
    ASSERT_EQ(msg_read_meta_join_reply(&p.out.reader, &back, &err), 0) << err.detail;
    EXPECT_EQ(back.server_id, 9u);
    EXPECT_EQ(back.heartbeat_ms, 1000u);
}

TEST(MetaMessages, HostileJoinsAreRefused)
{
    Tiny a("alpha");
    err_t err;
    // A descriptor announced under another name.
    {
        msg_meta_routine r = a.Entry();
        snprintf(r.name, sizeof r.name, "gamma");
        msg_meta_join j = SampleJoin(&r, 1);
        Pipe p;
        ASSERT_EQ(msg_write_meta_join(&p.out.writer, 1, &j, &err), 0);
        p.Next();
        msg_meta_join got;
        EXPECT_EQ(msg_read_meta_join(&p.in.reader, &got, &err), NUMRPC_EPROTO);
        EXPECT_NE(std::string(err.detail).find("does not match"), std::string::npos) << err.detail;
        EXPECT_EQ(got.routines, nullptr);
    }
    // A certificate fingerprint that is not 64 hex digits (the trailing
    // field a client will hold a server to): refused; a good one travels.
    for (const char *fp : {"zz", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg",
                           "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}) {
        msg_meta_routine r = a.Entry();
        msg_meta_join j = SampleJoin(&r, 1);
        snprintf(j.fingerprint, sizeof j.fingerprint, "%s", fp);
        Pipe p;
        ASSERT_EQ(msg_write_meta_join(&p.out.writer, 1, &j, &err), 0);
        p.Next();
        msg_meta_join got;
        int rc = msg_read_meta_join(&p.in.reader, &got, &err);
        if (strlen(fp) == 64 && fp[63] == 'f') {
            ASSERT_EQ(rc, 0) << err.detail;
            EXPECT_STREQ(got.fingerprint, fp);
            msg_meta_routines_free(got.routines, got.nroutines);
        } else {
            EXPECT_EQ(rc, NUMRPC_EPROTO) << fp;
            EXPECT_NE(std::string(err.detail).find("not 64 hex digits"), std::string::npos) << err.detail;
        }
    }
    // Port 0, a curve that goes down.
    for (int bad = 0; bad < 2; bad++) {
        msg_meta_routine r = a.Entry();
        msg_meta_join j = SampleJoin(&r, 1);
        if (bad == 0) j.port = 0;
        else j.curve.n[1] = 32;
        Pipe p;
        ASSERT_EQ(msg_write_meta_join(&p.out.writer, 1, &j, &err), 0);
        p.Next();
        msg_meta_join got;
        EXPECT_EQ(msg_read_meta_join(&p.in.reader, &got, &err), NUMRPC_EPROTO) << bad;
    }
    // Too many routines: refused on the count, before any allocation.
    {
        Pipe p;
        wire_begin(&p.out.writer, PROTO_META_ROUTINES, 1);
        wire_put_u32(&p.out.writer, MSG_META_MAX_ROUTINES + 1, &err);
        ASSERT_EQ(wire_end(&p.out.writer, &err), 0);
        p.Next();
        msg_meta_routine *list = nullptr;
        uint32_t n = 7;
        EXPECT_EQ(msg_read_meta_routines(&p.in.reader, &list, &n, &err), NUMRPC_ELIMIT);
        EXPECT_EQ(list, nullptr);
    }
}

// A QUERY's fixed fields written field by field (dgemm, hash 77, 2 GFlop,
// 1000 bytes in, 2000 out, 16 servers), the message left open.
void QueryByHand(wire_writer *w, uint32_t id)
{
    err_t err;
    wire_begin(w, PROTO_META_QUERY, id);
    wire_put_string(w, "dgemm", &err);
    wire_put_u64(w, 77, &err);
    wire_put_double(w, 2e9, &err);
    wire_put_u64(w, 1000, &err);
    wire_put_u64(w, 2000, &err);
    wire_put_u32(w, 16, &err);
}

TEST(MetaMessages, QueryAndItsAnswerAreTheSameBytesAndChecked)
{
    err_t err;
    Pipe p;
    wire_writer *w = &p.out.writer;
    QueryByHand(w, 8); // as client/meta.c wrote it before
    ASSERT_EQ(wire_end(w, &err), 0);
    std::vector<uint8_t> before = p.Bytes();
    ASSERT_GT(before.size(), 16u);
    msg_meta_query q = {"dgemm", 77, 2e9, 1000, 2000, 16};
    ASSERT_EQ(msg_write_meta_query(&p.out.writer, 8, &q, &err), 0);
    EXPECT_EQ(p.Bytes(), before);

    q.flops = NAN; // a nonsense size is ranked as no work
    ASSERT_EQ(msg_write_meta_query(&p.out.writer, 9, &q, &err), 0);
    EXPECT_EQ(p.Next(), static_cast<uint32_t>(PROTO_META_QUERY));
    msg_meta_query got;
    ASSERT_EQ(msg_read_meta_query(&p.in.reader, &got, &err), 0) << err.detail;
    EXPECT_STREQ(got.routine, "dgemm");
    EXPECT_EQ(got.flops, 0);
    EXPECT_EQ(got.bytes_out, 2000u);

    msg_meta_ranked s[2] = {{"10.0.0.1", 7800, 2, 1, 1e-4, 1e9, 5e9, 1, 0.01},
                            {"10.0.0.2", 7801, 1, 0, 2e-4, 1e8, 1e9, 0.5, 0.2}};
    ASSERT_EQ(msg_write_meta_query_reply(&p.in.writer, 9, 2000, s, 2, &err), 0);
    ASSERT_EQ(msg_read_reply(&p.out.reader, 9, "meta", &err), 0) << err.detail;
    msg_meta_ranked back[2];
    uint32_t lease = 0, n = 0;
    ASSERT_EQ(msg_read_meta_query_reply(&p.out.reader, &lease, back, 2, &n, &err), 0) << err.detail;
    EXPECT_EQ(lease, 2000u);
    ASSERT_EQ(n, 2u);
    EXPECT_STREQ(back[1].host, "10.0.0.2");
    EXPECT_EQ(back[1].share, 0.5);

    // More servers than asked for, or figures no model gives, are refused.
    ASSERT_EQ(msg_write_meta_query_reply(&p.in.writer, 10, 2000, s, 2, &err), 0);
    ASSERT_EQ(msg_read_reply(&p.out.reader, 10, "meta", &err), 0);
    EXPECT_EQ(msg_read_meta_query_reply(&p.out.reader, &lease, back, 1, &n, &err), NUMRPC_EPROTO);
    EXPECT_EQ(n, 0u);
    ASSERT_EQ(wire_skip_message(&p.out.reader, &err), 0);
    s[0].latency = NAN;
    ASSERT_EQ(msg_write_meta_query_reply(&p.in.writer, 11, 2000, s, 2, &err), 0);
    ASSERT_EQ(msg_read_reply(&p.out.reader, 11, "meta", &err), 0);
    EXPECT_EQ(msg_read_meta_query_reply(&p.out.reader, &lease, back, 2, &n, &err), NUMRPC_EPROTO);
}

// The held block (bytes of a call's handles per server) reads back, and
// hostile blocks are refused: too many servers, a name that is not
// host:port, a server named twice, bytes whose sum overflows.
TEST(MetaMessages, QueryHeldBlockReadsBackAndHostileBlocksAreRefused)
{
    err_t err;
    Pipe p;
    msg_meta_query q = {"dgemm", 0, 1e8, 32u << 20, 0, 16};
    q.nheld = 2;
    q.held[0] = {"10.0.0.1:7800", 32u << 20};
    q.held[1] = {"[::1]:7801", 4096};
    ASSERT_EQ(msg_write_meta_query(&p.out.writer, 1, &q, &err), 0) << err.detail;
    EXPECT_EQ(p.Next(), static_cast<uint32_t>(PROTO_META_QUERY));
    msg_meta_query got;
    ASSERT_EQ(msg_read_meta_query(&p.in.reader, &got, &err), 0) << err.detail;
    ASSERT_EQ(got.nheld, 2u);
    EXPECT_EQ(msg_meta_query_held_on(&got, "10.0.0.1:7800"), 32u << 20);
    EXPECT_EQ(msg_meta_query_held_on(&got, "[::1]:7801"), 4096u);
    EXPECT_EQ(msg_meta_query_held_on(&got, "10.0.0.1:7801"), 0u);

    // Written by hand: the writer refuses what a hostile peer may send.
    auto hostile = [&](uint32_t id, uint32_t count, const std::vector<std::pair<std::string, uint64_t>> &held) {
        wire_writer *w = &p.out.writer;
        QueryByHand(w, id);
        wire_put_u32(w, count, &err);
        for (const auto &h : held) {
            wire_put_string(w, h.first.c_str(), &err);
            wire_put_u64(w, h.second, &err);
        }
        EXPECT_EQ(wire_end(w, &err), 0);
        EXPECT_EQ(p.Next(), static_cast<uint32_t>(PROTO_META_QUERY));
        msg_meta_query back;
        int rc = msg_read_meta_query(&p.in.reader, &back, &err);
        if (rc != 0) {
            EXPECT_EQ(back.nheld, 0u);
            EXPECT_EQ(wire_skip_message(&p.in.reader, &err), 0);
        }
        return rc;
    };
    EXPECT_EQ(hostile(2, 1, {{"a.example:1", 7}}), 0) << err.detail;
    EXPECT_EQ(hostile(3, MSG_META_MAX_HELD + 1, {}), NUMRPC_EPROTO);
    EXPECT_NE(std::string(err.detail).find("at most"), std::string::npos) << err.detail;
    EXPECT_EQ(hostile(4, 0xffffffffu, {}), NUMRPC_EPROTO);
    for (const char *bad : {"", "host", ":7800", "host:", "host:0", "host:65536", "host:78x0", "ho st:1", "h%n:1"}) {
        EXPECT_EQ(hostile(5, 1, {{bad, 7}}), NUMRPC_EPROTO) << bad;
        EXPECT_NE(std::string(err.detail).find("host:port"), std::string::npos) << bad << ": " << err.detail;
    }
    EXPECT_EQ(hostile(6, 2, {{"a:1", 7}, {"a:1", 8}}), NUMRPC_EPROTO);
    EXPECT_NE(std::string(err.detail).find("named twice"), std::string::npos) << err.detail;
    EXPECT_EQ(hostile(7, 2, {{"a:1", UINT64_MAX}, {"b:1", 1}}), NUMRPC_EPROTO);
    EXPECT_NE(std::string(err.detail).find("overflow"), std::string::npos) << err.detail;
    EXPECT_EQ(hostile(8, 2, {{"a:1", 7}}), NUMRPC_EPROTO) << "fewer servers than announced";
    q.nheld = MSG_META_MAX_HELD + 1;
    EXPECT_EQ(msg_write_meta_query(&p.out.writer, 9, &q, &err), NUMRPC_EINVAL);
}

TEST(MetaMessages, ReportIsTheSameBytesAndNonsenseIsNotBelieved)
{
    err_t err;
    msg_meta_call calls[3] = {
        {"127.0.0.1:7800", "dgemm", 2e9, 100, 200, 0.1, 0.12, 0.1, 0},
        {"127.0.0.1:7801", "daxpy", 1e6, 5000, 9, 0.01, -1, 0, PROTO_REPORT_QUEUED}, // a negative time
        {"127.0.0.1:7801", "", 0, 65536, 65536, 0, 0.002, 0, PROTO_REPORT_PROBE},
    };
    Pipe p;
    wire_writer *w = &p.out.writer;
    wire_begin(w, PROTO_META_REPORT, 5); // as client/meta.c wrote it before
    wire_put_u32(w, 3, &err);
    for (auto &c : calls) {
        wire_put_string(w, c.server, &err);
        wire_put_string(w, c.routine, &err);
        wire_put_double(w, c.flops, &err);
        wire_put_u64(w, c.bytes_sent, &err);
        wire_put_u64(w, c.bytes_received, &err);
        wire_put_double(w, c.predicted, &err);
        wire_put_double(w, c.total_seconds, &err);
        wire_put_double(w, c.compute_seconds, &err);
        wire_put_u32(w, c.flags, &err);
    }
    ASSERT_EQ(wire_end_held(w, &err), 0);
    ASSERT_EQ(wire_flush(w, &err), 0);
    std::vector<uint8_t> before = p.Bytes();
    ASSERT_GT(before.size(), 16u);
    ASSERT_EQ(msg_write_meta_report(&p.out.writer, 5, calls, 3, &err), 0);
    EXPECT_TRUE(p.Bytes().empty()) << "a report waits for the query it goes with";
    ASSERT_EQ(wire_flush(&p.out.writer, &err), 0);
    EXPECT_EQ(p.Bytes(), before);

    ASSERT_EQ(msg_write_meta_report(&p.out.writer, 6, calls, 3, &err), 0);
    ASSERT_EQ(wire_flush(&p.out.writer, &err), 0);
    EXPECT_EQ(p.Next(), static_cast<uint32_t>(PROTO_META_REPORT));
    msg_meta_call *got = nullptr;
    uint32_t n = 0;
    ASSERT_EQ(msg_read_meta_report(&p.in.reader, &got, &n, &err), 0) << err.detail;
    ASSERT_EQ(n, 2u);
    EXPECT_STREQ(got[0].routine, "dgemm");
    EXPECT_EQ(got[1].flags, PROTO_REPORT_PROBE);
    free(got);

    wire_begin(&p.out.writer, PROTO_META_REPORT, 7);
    wire_put_u32(&p.out.writer, MSG_META_MAX_REPORTS + 1, &err);
    ASSERT_EQ(wire_end(&p.out.writer, &err), 0);
    p.Next();
    EXPECT_EQ(msg_read_meta_report(&p.in.reader, &got, &n, &err), NUMRPC_ELIMIT);
    EXPECT_EQ(got, nullptr);
}

TEST(MetaMessages, LoadHeartbeatAndStatus)
{
    err_t err;
    Pipe p;
    std::vector<uint8_t> empty;
    ASSERT_EQ(wire_send_empty(&p.out.tp, PROTO_META_HEARTBEAT, 12, &err), 0); // as metajoin.c sent it
    empty = p.Bytes();
    ASSERT_EQ(empty.size(), 16u);
    ASSERT_EQ(msg_write_meta_heartbeat(&p.out.writer, 12, &err), 0);
    EXPECT_EQ(p.Bytes(), empty);

    msg_meta_load l = {3, 1, 0, 0.75};
    ASSERT_EQ(msg_write_meta_load(&p.out.writer, 13, &l, &err), 0);
    ASSERT_EQ(msg_write_meta_heartbeat(&p.out.writer, 14, &err), 0);
    l.loadavg = -1;
    ASSERT_EQ(msg_write_meta_load(&p.out.writer, 15, &l, &err), 0);
    ASSERT_EQ(msg_write_meta_status(&p.out.writer, 16, MSG_META_STATUS_JSON, &err), 0);
    msg_meta_load got{};
    EXPECT_EQ(p.Next(), static_cast<uint32_t>(PROTO_META_LOAD));
    ASSERT_EQ(msg_read_meta_load(&p.in.reader, &got, &err), 0) << err.detail;
    EXPECT_EQ(got.in_flight, 3u);
    EXPECT_EQ(got.loadavg, 0.75);
    EXPECT_EQ(p.Next(), static_cast<uint32_t>(PROTO_META_HEARTBEAT));
    ASSERT_EQ(msg_read_meta_heartbeat(&p.in.reader, &err), 0) << err.detail;
    EXPECT_EQ(p.Next(), static_cast<uint32_t>(PROTO_META_LOAD));
    EXPECT_EQ(msg_read_meta_load(&p.in.reader, &got, &err), NUMRPC_EPROTO);
    ASSERT_EQ(wire_skip_message(&p.in.reader, &err), 0);
    EXPECT_EQ(p.Next(), static_cast<uint32_t>(PROTO_META_STATUS));
    uint32_t format = 0;
    ASSERT_EQ(msg_read_meta_status(&p.in.reader, &format, &err), 0);
    EXPECT_EQ(format, MSG_META_STATUS_JSON);
    ASSERT_EQ(msg_write_meta_status_reply(&p.in.writer, 16, "{\"servers\":[]}", &err), 0);
    char *text = nullptr;
    ASSERT_EQ(msg_read_reply(&p.out.reader, 16, "meta", &err), 0);
    ASSERT_EQ(msg_read_meta_status_reply(&p.out.reader, &text, &err), 0);
    EXPECT_STREQ(text, "{\"servers\":[]}");
    free(text);
}

TEST(RankModel, SpeedCurveShareAndPrediction)
{
    rank_curve c{};
    EXPECT_EQ(rank_speed_at(&c, 1e9), RANK_DEFAULT_RATE);
    c.npoints = 2;
    c.n[0] = 100;
    c.rate[0] = 1e9;
    c.n[1] = 1000;
    c.rate[1] = 3e9;
    EXPECT_EQ(rank_speed_at(&c, 2.0 * 50 * 50 * 50), 1e9);        // below: flat
    EXPECT_EQ(rank_speed_at(&c, 2.0 * 4000 * 4000 * 4000), 3e9);  // beyond: flat
    double mid = std::sqrt(100.0 * 1000.0);                         // halfway in log n
    EXPECT_NEAR(rank_speed_at(&c, 2 * mid * mid * mid), 2e9, 1e3);

    EXPECT_EQ(rank_share(2, 0), 1.0);
    EXPECT_EQ(rank_share(2, 1), 1.0);
    EXPECT_EQ(rank_share(2, 3), 0.5);
    EXPECT_EQ(rank_share(0, 1), 0.5); // no slot counts as one

    rank_terms t = {1e-4, 1e9, 2e9, 1, 1};
    EXPECT_DOUBLE_EQ(rank_predict(&t, 4e9, 1000000), 1e-4 + 1e-3 + 2);
    t.share = 0.5; // half the speed, and a wait for a worker
    EXPECT_DOUBLE_EQ(rank_predict(&t, 4e9, 1000000), 1e-4 + 1e-3 + 4 + RANK_QUEUE_LATENCY);
    t.correction = 0.5;
    EXPECT_DOUBLE_EQ(rank_predict(&t, 4e9, 1000000), 1e-4 + 1e-3 + 2 + RANK_QUEUE_LATENCY);
    rank_terms unknown = {1e-4, 0, 0, 0, 0}; // nothing measured: latency only
    EXPECT_EQ(rank_predict(&unknown, 4e9, 1000000), 1e-4);

    EXPECT_DOUBLE_EQ(rank_correction_sample(2, 4e9, 2e9, 1), 1.0);
    EXPECT_EQ(rank_correction_sample(2, 0, 2e9, 1), 0);
    EXPECT_DOUBLE_EQ(rank_ewma(0, 3, 0.3), 3);
    EXPECT_DOUBLE_EQ(rank_ewma(1, 2, 0.4), 1.4);
    EXPECT_DOUBLE_EQ(rank_finish_time(4, 2, 0.5, 1), 3.5);
    EXPECT_DOUBLE_EQ(rank_finish_time(4, 0, 0.5, 1), 5.5);
}

// The client re-ranks a lease with the figures the metaserver sent; at
// the query's own size it must find the metaserver's own prediction.
TEST(RankModel, TheClientFindsTheMetaserversPredictionAtTheQuerysSize)
{
    rank_curve c{};
    c.npoints = 4;
    double n[] = {64, 128, 256, 512}, r[] = {2e9, 5e9, 9e9, 11e9};
    for (int i = 0; i < 4; i++) {
        c.n[i] = n[i];
        c.rate[i] = r[i];
    }
    for (double flops : {0.0, 1e6, 3.5e9}) {
        for (uint32_t busy : {0u, 1u, 5u}) {
            double calib = 1.3;
            rank_terms meta = {2e-4, 4e8, rank_speed_at(&c, flops) / calib, rank_share(2, busy), 1};
            double predicted = rank_predict(&meta, flops, 46000000);
            // What the answer carries, and the client's terms made from it.
            rank_terms client = {meta.latency, meta.bytes_per_second, meta.flops_per_second, meta.share, 1};
            EXPECT_EQ(rank_predict(&client, flops, 46000000), predicted) << flops << " " << busy;
        }
    }
}

} // namespace
