// last_words_test.cc -- a crashed routine's last lines on stdout and stderr
// come back in the caller's error detail, bounded and escaped; the server
// log tags every line with its call; no caller sees another caller's words.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/server_proc.h"
#include "numrpc.h"

namespace {

// One server with a single worker (so calls meet the same worker's pipe),
// logging at notice level to a file the test reads.
class LastWords : public ::testing::Test {
  protected:
    static void SetUpTestSuite()
    {
        char log_tmpl[] = "/tmp/numrpc-words-log-XXXXXX", port_tmpl[] = "/tmp/numrpc-words-port-XXXXXX";
        int lfd = mkstemp(log_tmpl), pfd = mkstemp(port_tmpl);
        ASSERT_GE(lfd, 0);
        ASSERT_GE(pfd, 0);
        close(pfd);
        unlink(port_tmpl);
        log_path_ = log_tmpl;
        std::vector<std::string> args = {TOP_BUILDDIR "/server/numrpc-server", "--port", "0", "--bind", "127.0.0.1",
                                         "--stubs", TOP_BUILDDIR "/tests/server/.libs", "--port-file", port_tmpl,
                                         "--workers", "1", "--max-workers", "1", "--blas-threads", "1",
                                         "--admin-socket", "none", "--log-level", "notice"};
        pid_ = fork();
        if (pid_ == 0) {
            std::vector<char *> argv;
            for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
            argv.push_back(nullptr);
            dup2(lfd, 2);
            if (freopen("/dev/null", "w", stdout) == nullptr) _exit(127);
            execv(argv[0], argv.data());
            _exit(127);
        }
        close(lfd);
        int port = 0;
        for (int i = 0; i < 500 && port == 0; i++) {  // a bound on the wait, not a timing check
            std::ifstream in(port_tmpl);
            if (!(in >> port)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        unlink(port_tmpl);
        ASSERT_GT(port, 0) << "the server did not start";
        address_ = "127.0.0.1:" + std::to_string(port);
    }
    static void TearDownTestSuite()
    {
        numrpc_finalize();
        if (pid_ > 0) stop_process(pid_, SIGTERM, 300);
        unlink(log_path_.c_str());
    }
    void SetUp() override
    {
        numrpc_config cfg{address_.c_str(), 0, nullptr, nullptr};
        ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK);
    }
    static std::string Log()
    {
        std::ifstream in(log_path_);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }
    // The log once it holds text (the dispatcher writes a line after the
    // reply may have gone out): bounded wait.
    static bool LogHas(const std::regex &re)
    {
        for (int i = 0; i < 500; i++) {
            if (std::regex_search(Log(), re)) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    }
    static void ExpectGoodCall()
    {
        int r = 0;
        ASSERT_EQ(numrpc_call("add_one", 41, &r), NUMRPC_OK) << numrpc_last_error_detail();
        EXPECT_EQ(r, 42);
    }
    static pid_t pid_;
    static std::string address_, log_path_;
};
pid_t LastWords::pid_ = -1;
std::string LastWords::address_, LastWords::log_path_;

const char kOne[] = "words one: the routine is about to fail";
const char kTwo[] = "words two: \\x1b[31mgoodbye";  // the escape byte escaped

bool Has(const std::string &s, const std::string &part)
{
    return s.find(part) != std::string::npos;
}

TEST_F(LastWords, CrashDetailHoldsTheLinesOfStdoutAndStderr)
{
    ASSERT_EQ(numrpc_call("speak", 0, 1, 1), NUMRPC_ECRASHED);
    std::string detail = numrpc_last_error_detail();
    EXPECT_TRUE(Has(detail, "speak crashed: SIGSEGV; its last words: \"")) << detail;
    EXPECT_TRUE(Has(detail, std::string(kOne) + "\\n" + kTwo + "\"")) << detail;
    EXPECT_EQ(detail.find('\x1b'), std::string::npos) << "a raw control byte reached the caller";
    // Both lines in the log, each tagged with its call and routine.
    EXPECT_TRUE(LogHas(std::regex("call [0-9]+ speak \\(worker [0-9]+\\): words one: the routine is about to fail")));
    EXPECT_TRUE(LogHas(std::regex("call [0-9]+ speak \\(worker [0-9]+\\): words two: \\\\x1b\\[31mgoodbye")));
    ExpectGoodCall();
}

TEST_F(LastWords, AFloodGivesABoundedDetailWithTheLastLines)
{
    // 1 MiB of lines, then the two lines, then the crash.
    ASSERT_EQ(numrpc_call("speak", 1024, 1, 1), NUMRPC_ECRASHED);
    std::string detail = numrpc_last_error_detail();
    size_t at = detail.find("its last words: \"...");
    ASSERT_NE(at, std::string::npos) << detail;
    EXPECT_LE(detail.size() - at, 4096u);
    EXPECT_TRUE(Has(detail, std::string(kOne) + "\\n" + kTwo + "\"")) << detail;
    EXPECT_TRUE(Has(detail, "filler line 00016383")) << detail;  // the last filler line
    ExpectGoodCall();
    // The log took at most its share of the flood, and says so.
    EXPECT_TRUE(LogHas(std::regex("speak \\(worker [0-9]+\\): further lines of this call are counted, not logged")));
    EXPECT_TRUE(LogHas(std::regex("speak \\(worker [0-9]+\\): [0-9]+ more lines not logged")));
}

TEST_F(LastWords, ALaterCallNeverSeesAnEarlierCallsWords)
{
    // The same worker speaks in one call and returns; the next call dies silently.
    ASSERT_EQ(numrpc_call("speak", 0, 1, 0), NUMRPC_OK) << numrpc_last_error_detail();
    ASSERT_EQ(numrpc_call("speak", 0, 0, 1), NUMRPC_ECRASHED);
    std::string detail = numrpc_last_error_detail();
    EXPECT_TRUE(Has(detail, "speak crashed: SIGSEGV")) << detail;
    EXPECT_FALSE(Has(detail, "words")) << detail;
    // Nor the words of a crashed call before it (a new worker, a new pipe).
    ASSERT_EQ(numrpc_call("speak", 0, 1, 1), NUMRPC_ECRASHED);
    ASSERT_EQ(numrpc_call("speak", 0, 0, 1), NUMRPC_ECRASHED);
    detail = numrpc_last_error_detail();
    EXPECT_FALSE(Has(detail, "words")) << detail;
    ExpectGoodCall();
}

}  // namespace
