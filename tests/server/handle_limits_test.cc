// handle_limits_test.cc -- one identity's share of a server's handle table and
// tickets (--max-handles-per-identity), by token and by address, beside the
// whole table's limit: the others' handles still come and go, bytes intact.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "../support/handle_peer.h"
#include "../support/server_proc.h"
#include "../support/test_util.h"
#include "../support/token_dir.h"
#include "numrpc.h"

namespace {

const char kAliceSecret[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
const char kBobSecret[] = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";

// A tiny handle's array: one double (8 bytes), value v.
Array Tiny(double v)
{
    Array a(NUMRPC_T_DOUBLE, 1, 1, 1);
    memcpy(a.bytes.data(), &v, sizeof v);
    return a;
}

// The value a tiny handle holds (NaN when the get failed).
double TinyValue(Raw *raw, const msg_data_id &id)
{
    Array out(NUMRPC_T_DOUBLE, 1, 1, 1);
    if (raw->Get(id, &out) != 0) return std::nan("");
    double v;
    memcpy(&v, out.bytes.data(), sizeof v);
    return v;
}

std::string PerIdentity(const std::string &who, int n)
{
    return who + " holds " + std::to_string(n) + " handles, the most one identity may keep on this server " +
           "(--max-handles-per-identity " + std::to_string(n) + "); free some first";
}

const char kWholeTable[] = "this server holds its most handles";

// Two tokens, alice and bob, on a server of 8 handles (a quarter each by default).
class HandleShares : public ::testing::Test {
  protected:
    void Start(std::vector<std::string> extra)
    {
        std::string file = tokens_.Write("tokens", std::string("alice ") + kAliceSecret + " call status\n" + "bob " +
                                                      kBobSecret + " call status\n");
        extra.insert(extra.end(), {"--token-file", file, "--handle-dir", dir_.path});
        server_ = std::make_unique<ServerProc>(extra);
    }
    TokenDir tokens_;
    TempDir dir_;
    std::unique_ptr<ServerProc> server_;
};

TEST_F(HandleShares, ATokenFillsItsQuarterAndAnotherGoesOn)
{
    Start({"--max-handles", "8"});
    Raw alice(server_->port(), "alice", kAliceSecret), bob(server_->port(), "bob", kBobSecret);
    msg_data_id a[2], extra;
    ASSERT_EQ(alice.Put(Tiny(1), &a[0]), 0) << alice.err.detail;
    ASSERT_EQ(alice.Put(Tiny(2), &a[1]), 0) << alice.err.detail;
    // The default share: a quarter of --max-handles 8.
    EXPECT_EQ(alice.Put(Tiny(3), &extra), NUMRPC_ELIMIT);
    EXPECT_EQ(alice.err.detail, PerIdentity("alice", 2));
    EXPECT_FALSE(Contains(alice.err.detail, kWholeTable));
    EXPECT_EQ(alice.Put(Tiny(0), &extra, true), NUMRPC_ELIMIT); // an empty handle counts the same
    EXPECT_EQ(alice.err.detail, PerIdentity("alice", 2));

    // Bob's puts go on, and give back what he put.
    msg_data_id b[2];
    ASSERT_EQ(bob.Put(Tiny(10.5), &b[0]), 0) << bob.err.detail;
    ASSERT_EQ(bob.Put(Tiny(-7.25), &b[1]), 0) << bob.err.detail;
    EXPECT_EQ(TinyValue(&bob, b[0]), 10.5);
    EXPECT_EQ(TinyValue(&bob, b[1]), -7.25);
    EXPECT_EQ(TinyValue(&alice, a[1]), 2.0);
    uint64_t n, bytes;
    bob.Handles(&n, &bytes);
    EXPECT_EQ(n, 4u);
    EXPECT_EQ(bytes, 32u);

    // A freed handle makes room for alice again, and only for one.
    ASSERT_EQ(alice.FreeOne(a[0]), 0);
    ASSERT_EQ(alice.Put(Tiny(4), &a[0]), 0) << alice.err.detail;
    EXPECT_EQ(TinyValue(&alice, a[0]), 4.0);
    EXPECT_EQ(alice.Put(Tiny(5), &extra), NUMRPC_ELIMIT);
    EXPECT_EQ(alice.err.detail, PerIdentity("alice", 2));
}

TEST_F(HandleShares, TheWholeTableStillHasItsLimit)
{
    Start({"--max-handles", "3", "--max-handles-per-identity", "2"});
    Raw alice(server_->port(), "alice", kAliceSecret), bob(server_->port(), "bob", kBobSecret);
    msg_data_id h[3];
    ASSERT_EQ(alice.Put(Tiny(1), &h[0]), 0) << alice.err.detail;
    ASSERT_EQ(alice.Put(Tiny(2), &h[1]), 0) << alice.err.detail;
    ASSERT_EQ(bob.Put(Tiny(3), &h[2]), 0) << bob.err.detail;
    // Bob holds one of his two, but the table is full.
    msg_data_id extra;
    EXPECT_EQ(bob.Put(Tiny(4), &extra), NUMRPC_ELIMIT);
    EXPECT_EQ(bob.err.detail, std::string(kWholeTable) + ", 3 (--max-handles)");
    ASSERT_EQ(alice.FreeOne(h[0]), 0);
    ASSERT_EQ(bob.Put(Tiny(4), &extra), 0) << bob.err.detail;
    EXPECT_EQ(TinyValue(&bob, extra), 4.0);
    EXPECT_EQ(TinyValue(&bob, h[2]), 3.0);
}

TEST_F(HandleShares, AShareOverTheTableIsTheTable)
{
    Start({"--max-handles", "2", "--max-handles-per-identity", "50"});
    Raw alice(server_->port(), "alice", kAliceSecret);
    msg_data_id h;
    ASSERT_EQ(alice.Put(Tiny(1), &h), 0) << alice.err.detail;
    ASSERT_EQ(alice.Put(Tiny(2), &h), 0) << alice.err.detail;
    EXPECT_EQ(alice.Put(Tiny(3), &h), NUMRPC_ELIMIT);
    EXPECT_EQ(alice.err.detail, std::string(kWholeTable) + ", 2 (--max-handles)");
}

TEST_F(HandleShares, TicketsOutstandingAreSharedToo)
{
    Start({});
    Raw alice(server_->port(), "alice", kAliceSecret), bob(server_->port(), "bob", kBobSecret);
    msg_data_id ha, hb, ticket;
    ASSERT_EQ(alice.Put(Tiny(1), &ha), 0) << alice.err.detail;
    ASSERT_EQ(bob.Put(Tiny(2), &hb), 0) << bob.err.detail;
    for (int i = 0; i < 64; i++) ASSERT_EQ(alice.Grant(ha, &ticket), 0) << i << ": " << alice.err.detail;
    EXPECT_EQ(alice.Grant(ha, &ticket), NUMRPC_ELIMIT);
    EXPECT_EQ(std::string(alice.err.detail), "alice holds 64 tickets, the most one identity may have outstanding on "
                                             "this server (a quarter of its 256); try again when they are used or "
                                             "expire");
    msg_data_id bobs;
    ASSERT_EQ(bob.Grant(hb, &bobs), 0) << bob.err.detail;
    // The last ticket alice got is still good: a get on it reads her handle.
    Raw anyone(server_->port(), "bob", kBobSecret);
    EXPECT_EQ(TinyValue(&anyone, ticket), 1.0);
}

// Without tokens, an identity is an address: 127.0.0.1 and 127.0.0.2.
class HandleAddresses : public ::testing::Test {
  protected:
    void Start(std::vector<std::string> extra)
    {
        extra.insert(extra.end(), {"--handle-dir", dir_.path});
        server_ = std::make_unique<ServerProc>(extra);
    }
    TempDir dir_;
    std::unique_ptr<ServerProc> server_;
};

TEST_F(HandleAddresses, OneAddressFillsItsShareAndAnotherGoesOn)
{
    Start({"--max-handles", "8", "--max-handles-per-identity", "3"});
    Raw one(server_->port(), nullptr, nullptr, "127.0.0.1"), two(server_->port(), nullptr, nullptr, "127.0.0.2");
    msg_data_id h[3], extra;
    for (int i = 0; i < 3; i++) ASSERT_EQ(one.Put(Tiny(i), &h[i]), 0) << one.err.detail;
    EXPECT_EQ(one.Put(Tiny(9), &extra), NUMRPC_ELIMIT);
    EXPECT_EQ(one.err.detail, PerIdentity("127.0.0.1", 3));
    // A second connection from the same address is the same identity.
    Raw again(server_->port(), nullptr, nullptr, "127.0.0.1");
    EXPECT_EQ(again.Put(Tiny(9), &extra), NUMRPC_ELIMIT);
    EXPECT_EQ(again.err.detail, PerIdentity("127.0.0.1", 3));

    msg_data_id mine[3];
    for (int i = 0; i < 3; i++) ASSERT_EQ(two.Put(Tiny(100 + i), &mine[i]), 0) << two.err.detail;
    EXPECT_EQ(two.Put(Tiny(9), &extra), NUMRPC_ELIMIT);
    EXPECT_EQ(two.err.detail, PerIdentity("127.0.0.2", 3));
    for (int i = 0; i < 3; i++) EXPECT_EQ(TinyValue(&two, mine[i]), 100.0 + i);
    // Without tokens anyone with the id may still read it: the share
    // counts, it does not own.
    EXPECT_EQ(TinyValue(&two, h[2]), 2.0);

    ASSERT_EQ(one.FreeOne(h[1]), 0);
    ASSERT_EQ(one.Put(Tiny(42), &h[1]), 0) << one.err.detail;
    EXPECT_EQ(TinyValue(&one, h[1]), 42.0);
}

TEST_F(HandleAddresses, EachAddressHasItsOwnByteBudget)
{
    Start({"--handle-bytes", "96K", "--handle-bytes-per-identity", "64K"});
    Raw one(server_->port(), nullptr, nullptr, "127.0.0.1"), two(server_->port(), nullptr, nullptr, "127.0.0.2");
    Array k48(NUMRPC_T_DOUBLE, 6144, 1, 6144), k40(NUMRPC_T_DOUBLE, 5120, 1, 5120);
    msg_data_id h;
    ASSERT_EQ(one.Put(k48, &h), 0) << one.err.detail;
    EXPECT_EQ(one.Put(k48, &h), NUMRPC_ELIMIT);
    EXPECT_TRUE(Contains(one.err.detail, "the handles of 127.0.0.1 hold 49152 of the 65536 bytes one identity may "
                                         "keep (--handle-bytes-per-identity)"))
        << one.err.detail;
    ASSERT_EQ(two.Put(k40, &h), 0) << two.err.detail;
}

TEST_F(HandleAddresses, TheShareComesFromTheConfigurationFile)
{
    TempDir conf_dir("numrpc-limits-conf");
    std::string conf = conf_dir.path + "/server.conf";
    {
        std::ofstream out(conf);
        out << "max-handles = 16\nmax-handles-per-identity = 1\n";
    }
    Start({"--config", conf});
    Raw one(server_->port(), nullptr, nullptr, "127.0.0.1"), two(server_->port(), nullptr, nullptr, "127.0.0.2");
    msg_data_id h;
    ASSERT_EQ(one.Put(Tiny(1), &h), 0) << one.err.detail;
    EXPECT_EQ(one.Put(Tiny(2), &h), NUMRPC_ELIMIT);
    EXPECT_EQ(one.err.detail, PerIdentity("127.0.0.1", 1));
    ASSERT_EQ(two.Put(Tiny(3), &h), 0) << two.err.detail;
}

} // namespace
