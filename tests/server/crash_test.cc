// crash_test.cc -- a routine that crashes or aborts kills only its worker:
// the caller gets ECRASHED naming the routine, the server's pid is unchanged,
// and the next call on the same server succeeds.
#include <gtest/gtest.h>

#include <string>

#include "../support/server_proc.h"
#include "numrpc.h"

namespace {

class Crash : public ::testing::Test {
  protected:
    static void SetUpTestSuite()
    {
        server_ = new ServerProc({"--stubs", TOP_BUILDDIR "/tests/server/.libs"});
    }
    static void TearDownTestSuite()
    {
        numrpc_finalize();
        delete server_;
    }
    void SetUp() override
    {
        std::string addr = server_->address();
        numrpc_config cfg{addr.c_str(), 0, nullptr, nullptr};
        ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK);
    }
    static void ExpectGoodCall()
    {
        int r = 0;
        ASSERT_EQ(numrpc_call("add_one", 41, &r), NUMRPC_OK) << numrpc_last_error_detail();
        EXPECT_EQ(r, 42);
    }
    static ServerProc *server_;
};
ServerProc *Crash::server_ = nullptr;

TEST_F(Crash, SegfaultIsReportedAndContained)
{
    const pid_t pid = server_->pid();
    ExpectGoodCall();
    EXPECT_EQ(numrpc_call("crash_segv", 1), NUMRPC_ECRASHED);
    // A plain build names the signal; a sanitizer build's handler exits instead.
    EXPECT_NE(std::string(numrpc_last_error_detail()).find("crash_segv crashed: "), std::string::npos)
        << numrpc_last_error_detail();
    EXPECT_TRUE(server_->alive());
    EXPECT_EQ(server_->pid(), pid);
    ExpectGoodCall();
}

TEST_F(Crash, AbortIsReportedAndContained)
{
    EXPECT_EQ(numrpc_call("crash_abort", 1), NUMRPC_ECRASHED);
    EXPECT_NE(std::string(numrpc_last_error_detail()).find("crash_abort crashed: "), std::string::npos)
        << numrpc_last_error_detail();
    ExpectGoodCall();
}

TEST_F(Crash, ManyCrashesInARowLeaveTheServerServing)
{
    for (int i = 0; i < 10; i++) {
        EXPECT_EQ(numrpc_call("crash_segv", 1), NUMRPC_ECRASHED) << i;
        ExpectGoodCall();
    }
    EXPECT_EQ(numrpc_call("crash_segv", 0), NUMRPC_OK);  // harmless when asked
    EXPECT_TRUE(server_->alive());
}

}  // namespace
