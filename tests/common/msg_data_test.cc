// msg_data_test.cc -- the handle messages over a socketpair: each writer's
// bytes read back by its reader, and what a hostile peer sends refused clearly.
#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "marshal.h"
#include "msg_data.h"
#include "protocol.h"
}

#include "msg_link.h"

namespace {

msg_data_id Id(uint8_t seed)
{
    msg_data_id id;
    for (int i = 0; i < MSG_DATA_ID_SIZE; i++) id.b[i] = static_cast<uint8_t>(seed * 31 + i);
    return id;
}

// A put of a 5 x 3 block of a 7 x 3 column-major array (ld 7) travels as its
// 15 elements; read into a handle of ld 7, the rows beyond 5 stay as they were.
TEST(DataMessages, PutHeaderElementsAndReply)
{
    Link l;
    err_t err;
    msg_data_shape s = {NUMRPC_T_DOUBLE, 5, 3, 7};
    std::vector<double> a(7 * 3);
    for (size_t i = 0; i < a.size(); i++) a[i] = 0.5 * static_cast<double>(i) - 3.0;
    iface_param p;
    iface_shape sh;
    msg_data_as_param(&s, &p, &sh);
    EXPECT_EQ(sh.mem_elems, 21u);
    EXPECT_EQ(sh.wire_elems, 15u);
    ASSERT_EQ(msg_write_data_put_header(&l.a.writer, 9, &s, 0, &err), 0) << err.detail;
    ASSERT_EQ(marshal_write_block(&l.a.writer, &p, &sh, a.data(), &err), 0) << err.detail;
    ASSERT_EQ(wire_end(&l.a.writer, &err), 0) << err.detail;

    uint32_t type, id, flags;
    l.Next(&type, &id);
    EXPECT_EQ(type, PROTO_DATA_PUT);
    EXPECT_EQ(id, 9u);
    msg_data_shape got;
    ASSERT_EQ(msg_read_data_put_header(&l.b.reader, &got, &flags, &err), 0) << err.detail;
    EXPECT_EQ(got.type, s.type);
    EXPECT_EQ(got.rows, 5u);
    EXPECT_EQ(got.cols, 3u);
    EXPECT_EQ(got.ld, 7u);
    EXPECT_EQ(flags, 0u);
    std::vector<double> stored(msg_data_mem_elems(&got), -1.0);
    msg_data_as_param(&got, &p, &sh);
    ASSERT_EQ(marshal_read_block(&l.b.reader, &p, &sh, stored.data(), &err), 0) << err.detail;
    ASSERT_EQ(wire_expect_end(&l.b.reader, &err), 0) << err.detail;
    for (size_t j = 0; j < 3; j++)
        for (size_t i = 0; i < 7; i++)
            EXPECT_EQ(stored[j * 7 + i], i < 5 ? a[j * 7 + i] : -1.0) << i << "," << j;

    msg_data_id made = Id(3), back;
    uint32_t lease;
    ASSERT_EQ(msg_write_data_put_reply(&l.b.writer, 9, &made, 30000, &err), 0) << err.detail;
    ASSERT_EQ(msg_read_reply(&l.a.reader, 9, l.a.label, &err), 0) << err.detail;
    ASSERT_EQ(msg_read_data_put_reply(&l.a.reader, &back, &lease, &err), 0) << err.detail;
    EXPECT_EQ(memcmp(back.b, made.b, MSG_DATA_ID_SIZE), 0);
    EXPECT_EQ(lease, 30000u);
}

TEST(DataMessages, GetAndItsReplyCarryTheShapeThenTheElements)
{
    Link l;
    err_t err;
    msg_data_id want = Id(7), got_id;
    ASSERT_EQ(msg_write_data_get(&l.a.writer, 4, &want, &err), 0) << err.detail;
    uint32_t type, id;
    l.Next(&type, &id);
    EXPECT_EQ(type, PROTO_DATA_GET);
    ASSERT_EQ(msg_read_data_get(&l.b.reader, &got_id, &err), 0) << err.detail;
    EXPECT_EQ(memcmp(got_id.b, want.b, MSG_DATA_ID_SIZE), 0);

    msg_data_shape s = {NUMRPC_T_DCOMPLEX, 4, 1, 4};
    std::vector<std::complex<double>> z = {{1, -1}, {2.5, 0}, {0, 3}, {-4, 4}}, back(4);
    iface_param p;
    iface_shape sh;
    msg_data_as_param(&s, &p, &sh);
    ASSERT_EQ(msg_write_data_get_reply_header(&l.b.writer, 4, &s, &err), 0) << err.detail;
    ASSERT_EQ(marshal_write_block(&l.b.writer, &p, &sh, z.data(), &err), 0) << err.detail;
    ASSERT_EQ(wire_end(&l.b.writer, &err), 0) << err.detail;
    ASSERT_EQ(msg_read_reply(&l.a.reader, 4, l.a.label, &err), 0) << err.detail;
    msg_data_shape rs;
    ASSERT_EQ(msg_read_data_get_reply_header(&l.a.reader, &rs, &err), 0) << err.detail;
    EXPECT_EQ(rs.type, static_cast<uint32_t>(NUMRPC_T_DCOMPLEX));
    ASSERT_EQ(marshal_read_block(&l.a.reader, &p, &sh, back.data(), &err), 0) << err.detail;
    ASSERT_EQ(wire_expect_end(&l.a.reader, &err), 0) << err.detail;
    EXPECT_EQ(back, z);
}

// DATA_GRANT: an id out, a ticket and its time to live back.
TEST(DataMessages, GrantAndItsTicket)
{
    Link l;
    err_t err;
    msg_data_id want = Id(3), got, ticket = Id(9), got_ticket;
    ASSERT_EQ(msg_write_data_grant(&l.a.writer, 5, &want, &err), 0) << err.detail;
    uint32_t type, id, ttl = 0;
    l.Next(&type, &id);
    EXPECT_EQ(type, PROTO_DATA_GRANT);
    ASSERT_EQ(msg_read_data_grant(&l.b.reader, &got, &err), 0) << err.detail;
    EXPECT_EQ(memcmp(got.b, want.b, MSG_DATA_ID_SIZE), 0);
    ASSERT_EQ(msg_write_data_grant_reply(&l.b.writer, 5, &ticket, 2500, &err), 0) << err.detail;
    ASSERT_EQ(msg_read_reply(&l.a.reader, 5, l.a.label, &err), 0) << err.detail;
    ASSERT_EQ(msg_read_data_grant_reply(&l.a.reader, &got_ticket, &ttl, &err), 0) << err.detail;
    EXPECT_EQ(memcmp(got_ticket.b, ticket.b, MSG_DATA_ID_SIZE), 0);
    EXPECT_EQ(ttl, 2500u);
}

// DATA_PULL round trip; sources that are no host:port and absurd shapes
// are refused by the reader.
TEST(DataMessages, PullAndItsRefusals)
{
    msg_data_pull q = {};
    snprintf(q.source, sizeof q.source, "127.0.0.1:7801");
    q.ticket = Id(4);
    q.shape = {NUMRPC_T_DOUBLE, 10, 3, 12};
    q.deadline_ms = 1500;
    {
        Link l;
        err_t err;
        ASSERT_EQ(msg_write_data_pull(&l.a.writer, 6, &q, &err), 0) << err.detail;
        uint32_t type, id;
        l.Next(&type, &id);
        EXPECT_EQ(type, PROTO_DATA_PULL);
        msg_data_pull got;
        ASSERT_EQ(msg_read_data_pull(&l.b.reader, &got, &err), 0) << err.detail;
        EXPECT_STREQ(got.source, "127.0.0.1:7801");
        EXPECT_EQ(memcmp(got.ticket.b, q.ticket.b, MSG_DATA_ID_SIZE), 0);
        EXPECT_EQ(got.shape.rows, 10u);
        EXPECT_EQ(got.shape.ld, 12u);
        EXPECT_EQ(got.deadline_ms, 1500u);
    }
    for (const char *bad : {"127.0.0.1", "host:0", "host:70000", ":80", "a b:80", "host:80x", "[::1:80"}) {
        msg_data_pull h = q;
        snprintf(h.source, sizeof h.source, "%s", bad);
        Link l;
        err_t err;
        ASSERT_EQ(msg_write_data_pull(&l.a.writer, 6, &h, &err), 0) << err.detail;
        uint32_t type, id;
        l.Next(&type, &id);
        msg_data_pull got;
        EXPECT_EQ(msg_read_data_pull(&l.b.reader, &got, &err), NUMRPC_EPROTO) << bad;
        EXPECT_NE(std::string(err.detail).find("not host:port"), std::string::npos) << err.detail;
    }
    char host[64];
    int port = 0;
    err_t err;
    ASSERT_EQ(msg_data_split_source("[::1]:7800", host, sizeof host, &port, &err), 0) << err.detail;
    EXPECT_STREQ(host, "::1");
    EXPECT_EQ(port, 7800);
    msg_data_pull huge = q;
    huge.shape = {NUMRPC_T_DOUBLE, 1, 1ull << 40, 1ull << 40};
    Link l;
    ASSERT_EQ(msg_write_data_pull(&l.a.writer, 6, &huge, &err), 0) << err.detail;
    uint32_t type, id;
    l.Next(&type, &id);
    msg_data_pull got;
    EXPECT_EQ(msg_read_data_pull(&l.b.reader, &got, &err), NUMRPC_EPROTO);
    EXPECT_NE(std::string(err.detail).find("too big"), std::string::npos) << err.detail;
}

// A hostile peer's shapes: each refused by the reader before any size is used.
TEST(DataMessages, ImpossibleShapesAreRefused)
{
    struct Case {
        msg_data_shape s;
        const char *why;
    } cases[] = {
        {{NUMRPC_T_STRING, 2, 2, 2}, "a handle of element type 8"},
        {{99, 2, 2, 2}, "a handle of element type 99"},
        {{NUMRPC_T_DOUBLE, 0, 2, 2}, "a handle shaped 0 x 2 with leading dimension 2"},
        {{NUMRPC_T_DOUBLE, 5, 2, 4}, "a handle shaped 5 x 2 with leading dimension 4"},
        {{NUMRPC_T_DOUBLE, 2, 0, 2}, "a handle shaped 2 x 0 with leading dimension 2"},
        {{NUMRPC_T_DOUBLE, 1, 1ull << 40, 1ull << 40}, "a handle of 1099511627776 x 1099511627776 elements is too big"},
        {{NUMRPC_T_DCOMPLEX, 1, 1ull << 30, 1ull << 29}, "a handle of 536870912 x 1073741824 elements is too big"},
    };
    for (const Case &c : cases) {
        Link l;
        err_t err;
        ASSERT_EQ(msg_write_data_put_header(&l.a.writer, 1, &c.s, 0, &err), 0) << err.detail;
        ASSERT_EQ(wire_end(&l.a.writer, &err), 0) << err.detail;
        uint32_t type, id, flags;
        l.Next(&type, &id);
        msg_data_shape got;
        EXPECT_EQ(msg_read_data_put_header(&l.b.reader, &got, &flags, &err), NUMRPC_EPROTO);
        EXPECT_STREQ(err.detail, c.why);
    }
    Link l;
    err_t err;
    msg_data_shape fine = {NUMRPC_T_INT, 2, 2, 2};
    ASSERT_EQ(msg_write_data_put_header(&l.a.writer, 1, &fine, 0x4, &err), 0) << err.detail;
    ASSERT_EQ(wire_end(&l.a.writer, &err), 0) << err.detail;
    uint32_t type, id, flags;
    l.Next(&type, &id);
    msg_data_shape got;
    EXPECT_EQ(msg_read_data_put_header(&l.b.reader, &got, &flags, &err), NUMRPC_EPROTO);
    EXPECT_STREQ(err.detail, "DATA_PUT with unknown flags 0x4");
}

// Elements on the wire must be exactly the shape's: more or fewer is refused.
TEST(DataMessages, AnElementCountThatIsNotTheShapesIsRefused)
{
    Link l;
    err_t err;
    msg_data_shape announced = {NUMRPC_T_DOUBLE, 4, 1, 4}, sent = {NUMRPC_T_DOUBLE, 6, 1, 6};
    std::vector<double> a(6, 1.0);
    iface_param p;
    iface_shape sh;
    msg_data_as_param(&sent, &p, &sh);
    ASSERT_EQ(msg_write_data_put_header(&l.a.writer, 2, &announced, 0, &err), 0) << err.detail;
    ASSERT_EQ(marshal_write_block(&l.a.writer, &p, &sh, a.data(), &err), 0) << err.detail;
    ASSERT_EQ(wire_end(&l.a.writer, &err), 0) << err.detail;
    uint32_t type, id, flags;
    l.Next(&type, &id);
    msg_data_shape got;
    ASSERT_EQ(msg_read_data_put_header(&l.b.reader, &got, &flags, &err), 0) << err.detail;
    std::vector<double> stored(msg_data_mem_elems(&got));
    msg_data_as_param(&got, &p, &sh);
    EXPECT_EQ(marshal_read_block(&l.b.reader, &p, &sh, stored.data(), &err), NUMRPC_EPROTO);
    EXPECT_STREQ(err.detail, "data: array data has 6 elements on the wire, 4 expected");
}

TEST(DataMessages, FreeAndRenewListsAndTheirStatuses)
{
    Link l;
    err_t err;
    std::vector<msg_data_id> ids = {Id(1), Id(2), Id(3)};
    msg_data_ids list = {3, ids.data()};
    ASSERT_EQ(msg_write_data_ids(&l.a.writer, PROTO_DATA_RENEW, 6, &list, &err), 0) << err.detail;
    uint32_t type, id;
    l.Next(&type, &id);
    EXPECT_EQ(type, PROTO_DATA_RENEW);
    msg_data_ids got;
    ASSERT_EQ(msg_read_data_ids(&l.b.reader, &got, &err), 0) << err.detail;
    ASSERT_EQ(got.count, 3u);
    for (int i = 0; i < 3; i++) EXPECT_EQ(memcmp(got.ids[i].b, ids[i].b, MSG_DATA_ID_SIZE), 0);
    free(got.ids);

    int32_t statuses[3] = {0, NUMRPC_ENOHANDLE, 0}, back[3];
    uint32_t lease;
    ASSERT_EQ(msg_write_data_ids_reply(&l.b.writer, 6, 5000, statuses, 3, &err), 0) << err.detail;
    ASSERT_EQ(msg_read_reply(&l.a.reader, 6, l.a.label, &err), 0) << err.detail;
    ASSERT_EQ(msg_read_data_ids_reply(&l.a.reader, &lease, back, 3, &err), 0) << err.detail;
    EXPECT_EQ(lease, 5000u);
    EXPECT_EQ(back[1], NUMRPC_ENOHANDLE);
    EXPECT_EQ(back[0], 0);

    // A reply for another number of handles, or a status that is no code.
    int32_t wrong[2] = {0, 0};
    ASSERT_EQ(msg_write_data_ids_reply(&l.b.writer, 7, 5000, wrong, 2, &err), 0) << err.detail;
    ASSERT_EQ(msg_read_reply(&l.a.reader, 7, l.a.label, &err), 0) << err.detail;
    EXPECT_EQ(msg_read_data_ids_reply(&l.a.reader, &lease, back, 3, &err), NUMRPC_EPROTO);
    EXPECT_STREQ(err.detail, "the server answered for 2 handles, 3 were named");
}

TEST(DataMessages, IdListsOfAbsurdLengthAreRefused)
{
    for (uint32_t count : {0u, static_cast<uint32_t>(MSG_DATA_MAX_IDS + 1), 0xffffffffu}) {
        Link l;
        err_t err;
        wire_begin(&l.a.writer, PROTO_DATA_FREE, 1);
        ASSERT_EQ(wire_put_u32(&l.a.writer, count, &err), 0);
        ASSERT_EQ(wire_end(&l.a.writer, &err), 0) << err.detail;
        uint32_t type, id;
        l.Next(&type, &id);
        msg_data_ids got;
        EXPECT_EQ(msg_read_data_ids(&l.b.reader, &got, &err), NUMRPC_EPROTO);
        EXPECT_EQ(got.ids, nullptr);
        EXPECT_EQ(std::string(err.detail), std::to_string(count) + " handles in one message (1 to 1024)");
    }
}

TEST(DataMessages, TheCallsHandleBlockAndItsChecks)
{
    Link l;
    err_t err;
    msg_call_handle h[2] = {{0, Id(1)}, {4, Id(2)}}, got[8];
    uint32_t n;
    wire_begin(&l.a.writer, PROTO_CALL, 1);
    ASSERT_EQ(msg_write_call_handles(&l.a.writer, h, 2, &err), 0) << err.detail;
    ASSERT_EQ(wire_end(&l.a.writer, &err), 0) << err.detail;
    uint32_t type, id;
    l.Next(&type, &id);
    ASSERT_EQ(msg_read_call_handles(&l.b.reader, 5, got, 8, &n, &err), 0) << err.detail;
    ASSERT_EQ(n, 2u);
    EXPECT_EQ(got[1].param, 4u);
    EXPECT_EQ(memcmp(got[1].id.b, h[1].id.b, MSG_DATA_ID_SIZE), 0);
    ASSERT_EQ(wire_expect_end(&l.b.reader, &err), 0) << err.detail;

    struct Case {
        std::vector<msg_call_handle> block;
        uint32_t nargs;
        const char *why;
    } cases[] = {
        {{{0, Id(1)}, {4, Id(2)}}, 4, "a handle for argument 4 (of 4, in increasing order)"},
        {{{2, Id(1)}, {2, Id(2)}}, 5, "a handle for argument 2 (of 5, in increasing order)"},
        {{{3, Id(1)}, {1, Id(2)}}, 5, "a handle for argument 1 (of 5, in increasing order)"},
        {{{0, Id(1)}, {1, Id(2)}, {2, Id(3)}}, 2, "a call naming 3 handles (1 to 2)"},
    };
    for (const Case &c : cases) {
        Link k;
        wire_begin(&k.a.writer, PROTO_CALL, 1);
        ASSERT_EQ(msg_write_call_handles(&k.a.writer, c.block.data(), static_cast<uint32_t>(c.block.size()), &err), 0);
        ASSERT_EQ(wire_end(&k.a.writer, &err), 0) << err.detail;
        k.Next(&type, &id);
        EXPECT_EQ(msg_read_call_handles(&k.b.reader, c.nargs, got, 8, &n, &err), NUMRPC_EPROTO);
        EXPECT_STREQ(err.detail, c.why);
    }
}

TEST(DataMessages, IdsPrintAsHex)
{
    msg_data_id id = {};
    id.b[0] = 0xab;
    id.b[15] = 0x01;
    char hex[2 * MSG_DATA_ID_SIZE + 1];
    msg_data_id_hex(&id, hex);
    EXPECT_STREQ(hex, "ab000000000000000000000000000001");
}

} // namespace
