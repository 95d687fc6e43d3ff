// msg_test.cc -- the message layer over a socketpair: each writer's bytes
// read back by its reader, and what a hostile peer sends refused clearly.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "msg.h"
#include "msg_control.h"
#include "sock.h"
}

#include "msg_link.h"

namespace {

TEST(Messages, HelloBothWays)
{
    Link l;
    err_t err;
    msg_hello h = {PROTO_VERSION, 8192, "libnumrpc test", 0, "", {}, {}, 0};
    ASSERT_EQ(msg_write_hello(&l.a.writer, 5, &h, &err), 0) << err.detail;
    uint32_t type, id;
    l.Next(&type, &id);
    EXPECT_EQ(type, static_cast<uint32_t>(PROTO_HELLO));
    EXPECT_EQ(id, 5u);
    msg_hello got = {};
    ASSERT_EQ(msg_read_hello(&l.b.reader, &got, &err), 0) << err.detail;
    EXPECT_EQ(got.version, PROTO_VERSION);
    EXPECT_EQ(got.packet_size, 8192u);
    EXPECT_STREQ(got.peer, "libnumrpc test");
    EXPECT_TRUE(msg_conn_idle(&l.b));

    msg_hello server = {PROTO_VERSION, PROTO_MAX_PACKET, "numrpc-server test", 0, "", {}, {}, 0};
    ASSERT_EQ(msg_write_hello_reply(&l.b.writer, 5, &server, &err), 0) << err.detail;
    msg_hello back = {};
    ASSERT_EQ(msg_read_hello_reply(&l.a.reader, 5, l.a.label, &back, &err), 0) << err.detail;
    EXPECT_EQ(back.packet_size, PROTO_MAX_PACKET);
    EXPECT_STREQ(back.peer, "numrpc-server test");
}

TEST(Messages, HelloWithAPeerNameOverTheLimitIsRefused)
{
    Link l;
    err_t err;
    std::string longname(MSG_PEER_MAX + 1, 'x');
    wire_begin(&l.a.writer, PROTO_HELLO, 1);
    wire_put_u32(&l.a.writer, PROTO_VERSION, &err);
    wire_put_u32(&l.a.writer, 4096, &err);
    wire_put_string(&l.a.writer, longname.c_str(), &err);
    ASSERT_EQ(wire_end(&l.a.writer, &err), 0);
    uint32_t type, id;
    l.Next(&type, &id);
    msg_hello got = {};
    EXPECT_EQ(msg_read_hello(&l.b.reader, &got, &err), NUMRPC_ELIMIT);
}

TEST(Messages, ReplyStatusIsTheErrorWithThePeersDetail)
{
    Link l;
    err_t err;
    ASSERT_EQ(msg_reply_simple(&l.b.writer, 9, NUMRPC_ENOENT, "unknown routine \"zzz\"", &err), 0);
    EXPECT_EQ(msg_read_reply(&l.a.reader, 9, l.a.label, &err), NUMRPC_ENOENT);
    EXPECT_STREQ(err.detail, "unknown routine \"zzz\"");
    EXPECT_TRUE(msg_conn_idle(&l.a)) << "a failed reply is read to its end";
}

TEST(Messages, AStatusOutsideTheErrorListIsAProtocolErrorNeverPassedOn)
{
    Link l;
    err_t err;
    for (int bad : {7, 1, -19, -21, -1000, 0x7fffffff}) {
        ASSERT_EQ(msg_reply_simple(&l.b.writer, 3, bad, "made up", &err), 0);
        EXPECT_EQ(msg_read_reply(&l.a.reader, 3, l.a.label, &err), NUMRPC_EPROTO) << bad;
        EXPECT_NE(std::string(err.detail).find(std::to_string(bad)), std::string::npos) << err.detail;
        EXPECT_NE(std::string(err.detail).find("side-a"), std::string::npos) << err.detail;
    }
    // The same rule guards the handshake (a HELLO reply once gave +7).
    ASSERT_EQ(msg_reply_simple(&l.b.writer, 4, 7, "made up", &err), 0);
    msg_hello h = {};
    EXPECT_EQ(msg_read_hello_reply(&l.a.reader, 4, l.a.label, &h, &err), NUMRPC_EPROTO);
    EXPECT_EQ(numrpc_error_valid(NUMRPC_OK), 1);
    EXPECT_EQ(numrpc_error_valid(NUMRPC_EBUSY), 1);
    EXPECT_EQ(numrpc_error_valid(NUMRPC_EPENDING), 0);
    EXPECT_EQ(numrpc_error_valid(3), 0);
}

TEST(Messages, AReplyToAnotherCallIsAProtocolError)
{
    Link l;
    err_t err;
    ASSERT_EQ(msg_reply_simple(&l.b.writer, 10, NUMRPC_OK, "", &err), 0);
    EXPECT_EQ(msg_read_reply(&l.a.reader, 11, l.a.label, &err), NUMRPC_EPROTO);
    EXPECT_NE(std::string(err.detail).find("expected a reply to call 11"), std::string::npos) << err.detail;
}

TEST(Messages, APeerThatLeavesIsNamed)
{
    Link l;
    err_t err;
    msg_conn_close(&l.b);
    EXPECT_EQ(msg_read_reply(&l.a.reader, 1, l.a.label, &err), NUMRPC_EIO);
    EXPECT_STREQ(err.detail, "side-a closed the connection");
}

TEST(Messages, CallHeaderAndResult)
{
    Link l;
    err_t err;
    msg_call_header h = {"dgesv", 0x1122334455667788ull, 1500, PROTO_CALL_WANT_KEEPALIVE, 65536, 7};
    ASSERT_EQ(msg_write_call_header(&l.a.writer, 21, &h, &err), 0);
    ASSERT_EQ(wire_end(&l.a.writer, &err), 0);
    uint32_t type, id;
    l.Next(&type, &id);
    EXPECT_EQ(type, static_cast<uint32_t>(PROTO_CALL));
    msg_call_header got = {};
    ASSERT_EQ(msg_read_call_header(&l.b.reader, &got, &err), 0) << err.detail;
    ASSERT_EQ(wire_expect_end(&l.b.reader, &err), 0);
    EXPECT_STREQ(got.name, "dgesv");
    EXPECT_EQ(got.hash, h.hash);
    EXPECT_EQ(got.deadline_ms, 1500u);
    EXPECT_EQ(got.flags, static_cast<uint32_t>(PROTO_CALL_WANT_KEEPALIVE));
    EXPECT_EQ(got.reply_packet, 65536u);
    EXPECT_EQ(got.nargs, 7u);

    msg_call_result res = {0.25, 3, 2};
    ASSERT_EQ(msg_reply_begin(&l.b.writer, 21, NUMRPC_OK, "", &err), 0);
    ASSERT_EQ(msg_write_call_result(&l.b.writer, &res, &err), 0);
    ASSERT_EQ(wire_end(&l.b.writer, &err), 0);
    msg_call_result back = {};
    ASSERT_EQ(msg_read_reply(&l.a.reader, 21, l.a.label, &err), 0) << err.detail;
    ASSERT_EQ(msg_read_call_result(&l.a.reader, &back, &err), 0);
    EXPECT_EQ(back.compute_seconds, 0.25);
    EXPECT_EQ(back.in_flight, 3u);
    EXPECT_EQ(back.queued, 2u);
}

TEST(Messages, CallHeaderWithANameOverTheLimitIsRefused)
{
    Link l;
    err_t err;
    std::string name(IFACE_MAX_NAME + 1, 'n');
    wire_begin(&l.a.writer, PROTO_CALL, 2);
    wire_put_string(&l.a.writer, name.c_str(), &err);
    ASSERT_EQ(wire_end(&l.a.writer, &err), 0);
    uint32_t type, id;
    l.Next(&type, &id);
    msg_call_header got = {};
    EXPECT_EQ(msg_read_call_header(&l.b.reader, &got, &err), NUMRPC_ELIMIT);
}

TEST(Messages, ListRoundTripAndItsBound)
{
    Link l;
    err_t err;
    msg_routine_entry items[3] = {{"dgefa", 1}, {"dgesl", 2}, {"ping", 0xffffffffffffffffull}};
    ASSERT_EQ(msg_write_list(&l.a.writer, 30, &err), 0);
    uint32_t type, id;
    l.Next(&type, &id);
    EXPECT_EQ(type, static_cast<uint32_t>(PROTO_LIST));
    ASSERT_EQ(wire_expect_end(&l.b.reader, &err), 0);
    ASSERT_EQ(msg_write_list_reply(&l.b.writer, 30, items, 3, &err), 0);
    msg_routine_entry *got = nullptr;
    uint32_t n = 0;
    ASSERT_EQ(msg_read_list_reply(&l.a.reader, 30, l.a.label, 16, &got, &n, &err), 0) << err.detail;
    ASSERT_EQ(n, 3u);
    for (int i = 0; i < 3; i++) {
        EXPECT_STREQ(got[i].name, items[i].name);
        EXPECT_EQ(got[i].hash, items[i].hash);
    }
    free(got);
    // A peer announcing more entries than the reader takes: refused
    // before anything is allocated for them.
    ASSERT_EQ(msg_write_list_reply(&l.b.writer, 31, items, 3, &err), 0);
    got = nullptr;
    EXPECT_EQ(msg_read_list_reply(&l.a.reader, 31, l.a.label, 2, &got, &n, &err), NUMRPC_ELIMIT);
    EXPECT_EQ(got, nullptr);
}

TEST(Messages, GetIfaceRoundTripAndAnOversizedBlob)
{
    Link l;
    err_t err;
    ASSERT_EQ(msg_write_get_iface(&l.a.writer, 40, "dgemm", &err), 0);
    uint32_t type, id;
    l.Next(&type, &id);
    EXPECT_EQ(type, static_cast<uint32_t>(PROTO_GET_IFACE));
    char name[IFACE_MAX_NAME + 1];
    ASSERT_EQ(msg_read_get_iface(&l.b.reader, name, &err), 0);
    EXPECT_STREQ(name, "dgemm");
    std::vector<uint8_t> blob(1000);
    for (size_t i = 0; i < blob.size(); i++) blob[i] = static_cast<uint8_t>(i * 13);
    ASSERT_EQ(msg_write_iface_reply(&l.b.writer, 40, blob.data(), 1000, &err), 0);
    uint8_t *got = nullptr;
    uint32_t len = 0;
    ASSERT_EQ(msg_read_iface_reply(&l.a.reader, 40, l.a.label, &got, &len, &err), 0) << err.detail;
    ASSERT_EQ(len, 1000u);
    EXPECT_EQ(memcmp(got, blob.data(), 1000), 0);
    free(got);

    // A blob over IFACE_MAX_BLOB is refused by its length, unread.
    std::thread big([&] {
        err_t e;
        std::vector<uint8_t> huge(IFACE_MAX_BLOB + 8);
        msg_write_iface_reply(&l.b.writer, 41, huge.data(), static_cast<uint32_t>(huge.size()), &e);
    });
    got = nullptr;
    EXPECT_EQ(msg_read_iface_reply(&l.a.reader, 41, l.a.label, &got, &len, &err), NUMRPC_ELIMIT);
    EXPECT_EQ(got, nullptr);
    msg_conn_close(&l.a);  // the writer stops at once
    big.join();
}

TEST(Messages, ProbeBothWaysAndAnAbsurdAnswer)
{
    Link l;
    err_t err;
    ASSERT_EQ(msg_write_probe(&l.a.writer, 50, 300, 100, &err), 0);
    uint32_t type, id, reply_bytes;
    uint64_t n;
    l.Next(&type, &id);
    EXPECT_EQ(type, PROTO_PROBE);
    ASSERT_EQ(msg_read_probe(&l.b.reader, &reply_bytes, &n, &err), 0);
    EXPECT_EQ(reply_bytes, 300u);
    EXPECT_EQ(n, 100u);
    ASSERT_EQ(msg_read_probe_payload(&l.b.reader, n, &err), 0) << err.detail;
    ASSERT_EQ(msg_write_probe_reply(&l.b.writer, 50, 300, &err), 0);
    uint64_t back = 0;
    ASSERT_EQ(msg_read_probe_reply(&l.a.reader, 50, l.a.label, &back, &err), 0) << err.detail;
    EXPECT_EQ(back, 300u);
    EXPECT_TRUE(msg_conn_idle(&l.a));

    // A server announcing more than a probe may carry is refused unread.
    ASSERT_EQ(msg_reply_begin(&l.b.writer, 51, NUMRPC_OK, "", &err), 0);
    wire_put_u64(&l.b.writer, 1ull << 40, &err);
    ASSERT_EQ(wire_end(&l.b.writer, &err), 0);
    EXPECT_EQ(msg_read_probe_reply(&l.a.reader, 51, l.a.label, &back, &err), NUMRPC_EPROTO);
}

TEST(Messages, FileReadAndFileData)
{
    Link l;
    err_t err, call_err;
    msg_file_read q = {2, 1ull << 33, 4096};
    ASSERT_EQ(msg_write_file_read(&l.b.writer, 60, &q, &err), 0);
    uint32_t type, id;
    ASSERT_EQ(wire_next_message(&l.a.reader, &type, &id, &err), 0);
    EXPECT_EQ(type, static_cast<uint32_t>(PROTO_FILE_READ));
    msg_file_read got = {};
    ASSERT_EQ(msg_read_file_read(&l.a.reader, &got, &err), 0);
    EXPECT_EQ(got.param, 2u);
    EXPECT_EQ(got.offset, 1ull << 33);
    EXPECT_EQ(got.length, 4096u);

    const char data[] = "0123456789abc";
    ASSERT_EQ(msg_write_file_data(&l.a.writer, 60, NUMRPC_OK, "", data, 13, &err), 0);
    uint64_t n = 0;
    ASSERT_EQ(msg_read_file_data_head(&l.b.reader, 60, 13, &n, &call_err, &err), 0) << err.detail;
    EXPECT_EQ(call_err.code, NUMRPC_OK);
    ASSERT_EQ(n, 13u);
    char back[13];
    ASSERT_EQ(wire_get(&l.b.reader, back, 13, &err), 0);
    ASSERT_EQ(wire_skip_pad8(&l.b.reader, &err), 0);
    ASSERT_EQ(wire_expect_end(&l.b.reader, &err), 0);
    EXPECT_EQ(memcmp(back, data, 13), 0);

    // The client cannot read its file: the call's error, the link goes on.
    ASSERT_EQ(msg_write_file_data(&l.a.writer, 61, NUMRPC_EIO, "input.dat: permission denied", nullptr, 0, &err), 0);
    ASSERT_EQ(msg_read_file_data_head(&l.b.reader, 61, 13, &n, &call_err, &err), 0) << err.detail;
    EXPECT_EQ(call_err.code, NUMRPC_EIO);
    EXPECT_STREQ(call_err.detail, "input.dat: permission denied");
    EXPECT_TRUE(msg_conn_idle(&l.b));

    // More bytes than asked, or data for another call: the exchange is broken.
    ASSERT_EQ(msg_write_file_data(&l.a.writer, 62, NUMRPC_OK, "", data, 13, &err), 0);
    EXPECT_EQ(msg_read_file_data_head(&l.b.reader, 62, 12, &n, &call_err, &err), NUMRPC_EPROTO);
    Link m;
    ASSERT_EQ(msg_write_file_data(&m.a.writer, 63, NUMRPC_OK, "", data, 13, &err), 0);
    EXPECT_EQ(msg_read_file_data_head(&m.b.reader, 64, 13, &n, &call_err, &err), NUMRPC_EPROTO);
}

TEST(Messages, AttachForgetsAMessageCutShort)
{
    // A writer whose peer left mid-message is whole again on its next
    // stream (the worker bug this layer fixed).
    Link l;
    err_t err;
    wire_begin(&l.a.writer, PROTO_REPLY, 1);
    EXPECT_FALSE(msg_conn_idle(&l.a));
    int fd[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
    transport_close(&l.a.tp);
    msg_conn_attach(&l.a, transport_tcp(fd[0]), "again");
    EXPECT_TRUE(msg_conn_idle(&l.a));
    ASSERT_EQ(msg_reply_simple(&l.a.writer, 2, NUMRPC_OK, "", &err), 0) << err.detail;
    msg_conn other;
    ASSERT_EQ(msg_conn_init(&other, 4096, &err), 0);
    msg_conn_attach(&other, transport_tcp(fd[1]), "other");
    EXPECT_EQ(msg_read_reply(&other.reader, 2, other.label, &err), 0) << err.detail;
    msg_conn_free(&other);
    uint32_t first = msg_conn_next_id(&l.a), second = msg_conn_next_id(&l.a);
    EXPECT_NE(first, 0u);
    EXPECT_EQ(first + 1, second);
}

TEST(Messages, StatusRoundTripAndAServerClaimingTooManyRows)
{
    Link l;
    err_t err;
    ASSERT_EQ(msg_write_status(&l.a.writer, 70, &err), 0);
    uint32_t type, id, version = 0;
    l.Next(&type, &id);
    EXPECT_EQ(type, static_cast<uint32_t>(PROTO_STATUS));
    ASSERT_EQ(msg_read_status(&l.b.reader, &version, &err), 0);
    EXPECT_EQ(version, PROTO_VERSION);
    msg_status_routine rows[2] = {{"dgefa", "linpack", 11, 5, 1, 800, 900, 1, 0.5, 0.25},
                                  {"ping", "", 12, 7, 0, 64, 64, 0, 0.001, 0.0002}};
    msg_status st = {"numrpc-server test", 12.5, {0.5, 0.25, 0.125}, 4, 32, 1, 0, 3, 0, 2, 1, rows};
    st.security = MSG_STATUS_TLS | MSG_STATUS_TOKENS;
    ASSERT_EQ(msg_write_status_reply(&l.b.writer, 70, &st, &err), 0) << err.detail;
    msg_status got;
    ASSERT_EQ(msg_read_status_reply(&l.a.reader, 70, l.a.label, &got, &err), 0) << err.detail;
    EXPECT_EQ(got.has_security, 1u);
    EXPECT_EQ(got.security, MSG_STATUS_TLS | MSG_STATUS_TOKENS);
    EXPECT_STREQ(got.server, "numrpc-server test");
    EXPECT_EQ(got.load[2], 0.125);
    EXPECT_EQ(got.max_workers, 32u);
    ASSERT_EQ(got.nroutines, 2u);
    EXPECT_STREQ(got.rows[0].module, "linpack");
    EXPECT_EQ(got.rows[0].bytes_out, 900u);
    EXPECT_EQ(got.rows[1].p99_s, 0.0002);
    msg_status_free(&got);

    // An older server's reply ends after the rows; a newer one's may carry
    // fields after security: both are read.
    for (int extra = 0; extra < 2; extra++) {
        ASSERT_EQ(msg_reply_begin(&l.b.writer, 72, NUMRPC_OK, "", &err), 0);
        wire_put_string(&l.b.writer, "other", &err);
        for (int i = 0; i < 4; i++) wire_put_double(&l.b.writer, 0, &err);
        for (int i = 0; i < 2; i++) wire_put_u32(&l.b.writer, 1, &err);
        wire_put_u64(&l.b.writer, 0, &err);
        for (int i = 0; i < 5; i++) wire_put_u32(&l.b.writer, 0, &err); /* ... draining, no rows */
        if (extra) { /* security, handles, their bytes, bytes moved, then a field unknown yet */
            wire_put_u32(&l.b.writer, MSG_STATUS_TLS, &err);
            wire_put_u64(&l.b.writer, 3, &err);
            wire_put_u64(&l.b.writer, 4096, &err);
            wire_put_u64(&l.b.writer, 800, &err);
            wire_put_u64(&l.b.writer, 1600, &err);
            wire_put_u64(&l.b.writer, 99, &err);
        }
        ASSERT_EQ(wire_end(&l.b.writer, &err), 0);
        ASSERT_EQ(msg_read_status_reply(&l.a.reader, 72, l.a.label, &got, &err), 0) << err.detail;
        EXPECT_EQ(got.has_security, static_cast<uint32_t>(extra));
        EXPECT_EQ(got.security, extra ? MSG_STATUS_TLS : 0u);
        EXPECT_EQ(got.has_handles, static_cast<uint32_t>(extra));
        EXPECT_EQ(got.handles, extra ? 3u : 0u);
        EXPECT_EQ(got.handle_bytes, extra ? 4096u : 0u);
        EXPECT_EQ(got.has_moves, static_cast<uint32_t>(extra));
        EXPECT_EQ(got.pulled_bytes, extra ? 800u : 0u);
        EXPECT_EQ(got.lent_bytes, extra ? 1600u : 0u);
        msg_status_free(&got);
    }

    // A hostile server announcing more rows than any server has: refused
    // by the count, before anything is allocated for them.
    ASSERT_EQ(msg_reply_begin(&l.b.writer, 71, NUMRPC_OK, "", &err), 0);
    wire_put_string(&l.b.writer, "liar", &err);
    for (int i = 0; i < 4; i++) wire_put_double(&l.b.writer, 0, &err);
    for (int i = 0; i < 2; i++) wire_put_u32(&l.b.writer, 1, &err);
    wire_put_u64(&l.b.writer, 0, &err);
    for (int i = 0; i < 4; i++) wire_put_u32(&l.b.writer, 0, &err);
    wire_put_u32(&l.b.writer, MSG_STATUS_MAX_ROUTINES + 1, &err);
    ASSERT_EQ(wire_end(&l.b.writer, &err), 0);
    EXPECT_EQ(msg_read_status_reply(&l.a.reader, 71, l.a.label, &got, &err), NUMRPC_EPROTO);
    EXPECT_EQ(got.rows, nullptr);
}

TEST(Messages, ADeadlineEndsAWaitThatKeepalivesWouldStretch)
{
    Link l;
    err_t err;
    std::thread keep([&] {
        err_t e;
        for (int i = 0; i < 20; i++) {
            if (wire_send_empty(&l.b.tp, PROTO_KEEPALIVE, 0, &e) != 0) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    });
    wire_reader_set_deadline(&l.a.reader, sock_now() + 0.1);
    EXPECT_EQ(msg_read_reply(&l.a.reader, 1, l.a.label, &err), NUMRPC_ETIMEDOUT) << err.detail;
    EXPECT_GT(wire_reader_keepalives(&l.a.reader), 0u) << "keepalives came, and did not extend the wait";
    EXPECT_TRUE(wire_reader_broken(&l.a.reader));
    EXPECT_FALSE(msg_conn_idle(&l.a)) << "a connection whose wait expired is never pooled";
    keep.join();
    // A fresh stream is whole again, without the old deadline.
    int fd[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
    transport_close(&l.a.tp);
    msg_conn_attach(&l.a, transport_tcp(fd[0]), "again");
    EXPECT_FALSE(wire_reader_broken(&l.a.reader));
    EXPECT_TRUE(msg_conn_idle(&l.a));
    close(fd[1]);
}

}  // namespace
