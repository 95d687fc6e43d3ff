// rfile_test.cc -- remote files read by a routine in the worker and by a child it forks
// (tests/sdpa/rfilemod.idl): good, failed and malformed exchanges, and a child killed mid-exchange.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "numrpc.h"
#include "raw_rfile.h"
#include "support/server_proc.h"

namespace {

// Two blocks of the server's cache (FILES_BLOCK is 1 MiB): two exchanges.
const size_t kFileBytes = (1u << 20) + 4000;

// One server and one file for the tests of a suite.
class RfileServer : public ::testing::Test {
  protected:
    static void SetUpTestSuite()
    {
        server_ = new ServerProc({"--stubs", TOP_BUILDDIR "/tests/sdpa/.libs"});
        char tmpl[] = "/tmp/numrpc-rfile-test-XXXXXX";
        int fd = mkstemp(tmpl);
        ASSERT_GE(fd, 0);
        close(fd);
        path_ = tmpl;
        std::vector<unsigned char> bytes(kFileBytes);
        uint32_t x = 12345;
        sum_ = 0;
        for (auto &b : bytes) {
            x = x * 1103515245u + 12345u;
            b = static_cast<unsigned char>(x >> 23);
            sum_ += b;
        }
        std::ofstream(path_, std::ios::binary).write(reinterpret_cast<const char *>(bytes.data()),
                                                     static_cast<std::streamsize>(bytes.size()));
    }
    static void TearDownTestSuite()
    {
        delete server_;
        server_ = nullptr;
        unlink(path_.c_str());
    }
    void TearDown() override { EXPECT_TRUE(server_->alive()); }

    // A summing routine called by the client library on a fresh connection.
    void ExpectRealCallSums(const char *routine)
    {
        std::string url = "numrpc://" + server_->address() + "/" + routine;
        long bytes = -1, sum = -1;
        ASSERT_EQ(numrpc_call(url.c_str(), path_.c_str(), &bytes, &sum), NUMRPC_OK)
            << numrpc_last_error_detail();
        EXPECT_EQ(bytes, static_cast<long>(kFileBytes));
        EXPECT_EQ(sum, sum_);
    }

    static ServerProc *server_;
    static std::string path_;
    static long sum_;
};

ServerProc *RfileServer::server_;
std::string RfileServer::path_;
long RfileServer::sum_;

// The tests of each summing routine.
class RfileTest : public RfileServer, public ::testing::WithParamInterface<const char *> {
  protected:
    // A raw call of the routine under test; *bytes and *sum get its results.
    RawOutcome Raw(FileAnswer answer, Probe probe, long *bytes, long *sum)
    {
        char *path = const_cast<char *>(path_.c_str());
        *bytes = *sum = -1;
        void *argv[] = {&path, bytes, sum};
        return RawRfileCall(server_->port(), GetParam(), argv, answer, probe);
    }
};

TEST_P(RfileTest, GoodExchangeSumsTheFileAndTheConnectionGoesOn)
{
    long bytes, sum;
    RawOutcome o = Raw(FileAnswer::kGood, Probe::kAfterReply, &bytes, &sum);
    ASSERT_EQ(o.status, NUMRPC_OK) << o.detail << o.end;
    EXPECT_EQ(o.file_reads, 2);
    EXPECT_EQ(bytes, static_cast<long>(kFileBytes));
    EXPECT_EQ(sum, sum_);
    EXPECT_TRUE(o.probe_answered) << o.end;
    ExpectRealCallSums(GetParam());
}

// The client's own failure (status EIO in FILE_DATA) is the call's error,
// in the client's words, and the connection goes on: docs/protocol.md.
TEST_P(RfileTest, ClientThatCannotReadItsFileFailsTheCallOnly)
{
    long bytes, sum;
    RawOutcome o = Raw(FileAnswer::kClientError, Probe::kAfterReply, &bytes, &sum);
    EXPECT_EQ(o.status, NUMRPC_EIO) << o.detail << o.end;
    EXPECT_EQ(o.detail, "data.bin: the disk went away");
    EXPECT_TRUE(o.probe_answered) << o.end;
    EXPECT_FALSE(o.closed);
}

// A malformed FILE_DATA breaks the exchange: the server closes the
// connection (no reply, no answer to the ping pipelined behind it), and
// serves the next client.
TEST_P(RfileTest, MalformedFileDataClosesTheConnection)
{
    for (FileAnswer a : {FileAnswer::kWrongCallId, FileAnswer::kShort, FileAnswer::kOversized,
                         FileAnswer::kTruncated}) {
        long bytes, sum;
        RawOutcome o = Raw(a, Probe::kWithAnswer, &bytes, &sum);
        EXPECT_TRUE(o.closed) << FileAnswerName(a) << ": " << o.end;
        EXPECT_FALSE(o.timed_out) << FileAnswerName(a);
        EXPECT_EQ(o.status, -1) << FileAnswerName(a) << ": a reply on a connection out of step: "
                                << o.detail;
        EXPECT_FALSE(o.probe_answered) << FileAnswerName(a);
        ExpectRealCallSums(GetParam());
    }
}

// A ping pipelined behind a good FILE_DATA is answered after the call's
// reply, or (when the child that read the answer also read the ping ahead)
// the connection is closed; never dropped while the connection lives.
TEST_P(RfileTest, PingPipelinedBehindTheDataIsAnsweredOrTheConnectionCloses)
{
    long bytes, sum;
    RawOutcome o = Raw(FileAnswer::kGood, Probe::kWithAnswer, &bytes, &sum);
    EXPECT_FALSE(o.timed_out) << "the ping was dropped";
    if (o.closed) {
        EXPECT_EQ(o.status, -1) << o.detail;
    } else {
        EXPECT_EQ(o.status, NUMRPC_OK) << o.detail;
        EXPECT_EQ(sum, sum_);
        EXPECT_TRUE(o.probe_answered);
    }
    ExpectRealCallSums(GetParam());
}

// The bytes of the exchanges are the call's in the server's counters, made
// by the worker or by a child of the routine: the file's data came in (in
// packets of 4096 bytes), two FILE_READs went out.
TEST_P(RfileTest, StatusCountsTheExchangesAsTheCallsBytes)
{
    uint64_t in0 = 0, out0 = 0, in1 = 0, out1 = 0;
    ASSERT_TRUE(RoutineBytes(server_->port(), GetParam(), &in0, &out0));
    ExpectRealCallSums(GetParam());
    ASSERT_TRUE(RoutineBytes(server_->port(), GetParam(), &in1, &out1));
    EXPECT_GE(in1 - in0, kFileBytes);
    EXPECT_LE(static_cast<double>(in1 - in0), 1.01 * kFileBytes);
    const uint64_t file_read = 16 + 16;  // header; u32 param, u64 offset, u32 length
    EXPECT_GE(out1 - out0, 2 * file_read + 16 + 16);  // and the reply: header, results
}

INSTANTIATE_TEST_SUITE_P(InWorkerAndInChild, RfileTest,
                         ::testing::Values("rfile_sum", "rfile_sum_forked"),
                         [](const ::testing::TestParamInfo<const char *> &p) {
                             return std::string(p.param);
                         });

using RfileChildDies = RfileServer;

// A child of the routine killed after its FILE_READ went out, before any
// FILE_DATA came, cuts the exchange short: the worker closes the connection
// (no reply) instead of waiting for ever for the slot, and serves on.
TEST_F(RfileChildDies, WorkerClosesTheConnectionAndServesTheNextCall)
{
    char *path = const_cast<char *>(path_.c_str());
    RawOutcome o;
    // A child killed before it asked (a busy machine) makes a plain failure
    // of the routine: then it is given longer.
    for (int wait_ms = 200; wait_ms <= 5000 && o.file_reads == 0; wait_ms *= 5) {
        void *argv[] = {&path, &wait_ms};
        o = RawRfileCall(server_->port(), "rfile_child_dies", argv, FileAnswer::kNever, Probe::kNone);
    }
    ASSERT_EQ(o.file_reads, 1) << o.end;
    EXPECT_FALSE(o.timed_out) << "the worker still holds the connection: " << o.end;
    EXPECT_TRUE(o.closed) << o.end;
    EXPECT_EQ(o.status, -1) << "a reply on a connection out of step: " << o.detail;
    ExpectRealCallSums("rfile_sum_forked");
    ExpectRealCallSums("rfile_sum");
}

}  // namespace
