// strings_test.cc -- strings of every mode through a real server: OUT and
// INOUT strings land in the caller's buffers within their bounds, string
// arrays travel element by element, and bad strings get clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "../support/server_proc.h"
#include "numrpc.h"

namespace {

class Strings : public ::testing::Test {
  protected:
    static void SetUpTestSuite()
    {
        server_ = new ServerProc({"--stubs", TOP_BUILDDIR "/tests/client/.libs"});
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
    static ServerProc *server_;
};
ServerProc *Strings::server_ = nullptr;

TEST_F(Strings, OutStringIsCutToItsBound)
{
    for (int cap : {0, 1, 5, 7, 40}) {
        std::string expect = std::string("hello, numrpc").substr(0, static_cast<size_t>(cap));
        std::vector<char> msg(static_cast<size_t>(cap) + 2, '#');
        ASSERT_EQ(numrpc_call("greet", "numrpc", cap, msg.data()), NUMRPC_OK)
            << numrpc_last_error_detail();
        EXPECT_EQ(std::string(msg.data()), expect) << "cap " << cap;
        // Nothing beyond the bound + 1 bytes is touched.
        EXPECT_EQ(msg[static_cast<size_t>(cap) + 1], '#') << "cap " << cap;
    }
}

TEST_F(Strings, InoutStringComesBackChanged)
{
    char word[33] = "Remote strings";
    ASSERT_EQ(numrpc_call("shout", word), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_STREQ(word, "REMOTE STRINGS");
}

TEST_F(Strings, InoutStringOverItsBoundIsRefused)
{
    std::string longer(33, 'x');
    EXPECT_EQ(numrpc_call("shout", &longer[0]), NUMRPC_EINVAL);
    EXPECT_NE(std::string(numrpc_last_error_detail())
                  .find("shout: string word has 33 characters, more than its bound of 32"),
              std::string::npos)
        << numrpc_last_error_detail();
}

TEST_F(Strings, OutStringNeedsABuffer)
{
    EXPECT_EQ(numrpc_call("greet", "x", 4, static_cast<char *>(nullptr)), NUMRPC_EINVAL);
    EXPECT_NE(std::string(numrpc_last_error_detail())
                  .find("greet: output string msg needs a buffer of 5 bytes, got NULL"),
              std::string::npos)
        << numrpc_last_error_detail();
}

TEST_F(Strings, InStringArrayTravels)
{
    const char *words[] = {"alpha", "", "gamma delta", "e"};
    long total = -1;
    for (int k = 0; k <= 4; k++) {
        long expect = 0;
        for (int i = 0; i < k; i++) expect += static_cast<long>(std::string(words[i]).size());
        ASSERT_EQ(numrpc_call("total_length", k, words, &total), NUMRPC_OK)
            << numrpc_last_error_detail();
        EXPECT_EQ(total, expect) << "k " << k;
    }
}

TEST_F(Strings, OutStringArrayFillsEveryBuffer)
{
    const int k = 12;
    std::vector<std::vector<char>> store(k, std::vector<char>(17, '\0'));
    std::vector<char *> names;
    for (auto &s : store) names.push_back(s.data());
    ASSERT_EQ(numrpc_call("number_words", k, "item-", names.data()), NUMRPC_OK)
        << numrpc_last_error_detail();
    for (int i = 0; i < k; i++) EXPECT_EQ(std::string(names[i]), "item-" + std::to_string(i));
}

TEST_F(Strings, StridedInoutStringArrayTouchesOnlyItsElements)
{
    const int k = 4, step = 3, total = 1 + (k - 1) * step;
    std::vector<std::string> text(total);
    std::vector<std::vector<char>> store(total, std::vector<char>(25, '\0'));
    std::vector<char *> words;
    for (int i = 0; i < total; i++) {
        text[i] = "word" + std::to_string(i * 7);
        std::copy(text[i].begin(), text[i].end(), store[i].begin());
        words.push_back(store[i].data());
    }
    ASSERT_EQ(numrpc_call("reverse_every", k, step, words.data()), NUMRPC_OK)
        << numrpc_last_error_detail();
    for (int i = 0; i < total; i++) {
        std::string expect = text[i];
        if (i % step == 0) std::reverse(expect.begin(), expect.end());
        EXPECT_EQ(std::string(words[i]), expect) << i;
    }
}

TEST_F(Strings, FortranCharacterResultIsTrimmed)
{
    char msg[21];
    ASSERT_EQ(numrpc_call("fgreet", "there", msg), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_STREQ(msg, "hi there");
    // A result as long as the bound fills it exactly.
    ASSERT_EQ(numrpc_call("fgreet", "0123456789abcdefgh", msg), NUMRPC_OK);
    EXPECT_STREQ(msg, "hi 0123456789abcdefg");
}

TEST_F(Strings, DescribeShowsBounds)
{
    char *idl = nullptr;
    ASSERT_EQ(numrpc_describe("greet", &idl), NUMRPC_OK) << numrpc_last_error_detail();
    std::string text(idl);
    free(idl);
    EXPECT_NE(text.find("IN string name"), std::string::npos) << text;
    EXPECT_NE(text.find("OUT string<cap> msg"), std::string::npos) << text;
    ASSERT_EQ(numrpc_describe("reverse_every", &idl), NUMRPC_OK);
    text = idl;
    free(idl);
    EXPECT_NE(text.find("INOUT string<24> words[1+((k-1)*step):k:step]"), std::string::npos) << text;
}

// Found by tests/fuzz/fuzz_msg_server: a string array's table of char*
// (one per element of its extent, however few travel) was outside the
// server's --max-call-bytes, so a request of a few bytes made a worker
// allocate and walk up to 8 GiB of table.
TEST(StringLimits, StringTablesCountAgainstTheCallBytes)
{
    ServerProc server({"--stubs", TOP_BUILDDIR "/tests/client/.libs", "--max-call-bytes", "64K"});
    std::string addr = server.address();
    numrpc_config cfg{addr.c_str(), 0, nullptr, nullptr};
    ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK);
    const int k = 2, step = 100000; // a table of 100001 pointers: 800 KB
    std::vector<char> first(25, '\0'), last(25, '\0');
    std::vector<char *> words(1 + (k - 1) * step, nullptr);
    words.front() = first.data();
    words.back() = last.data();
    EXPECT_EQ(numrpc_call("reverse_every", k, step, words.data()), NUMRPC_ELIMIT);
    EXPECT_NE(std::string(numrpc_last_error_detail()).find("limit of 65536 bytes"), std::string::npos)
        << numrpc_last_error_detail();
    // A table within the limit is served.
    std::copy_n("ab", 2, first.data());
    std::vector<char *> few = {first.data(), nullptr, nullptr, last.data()};
    EXPECT_EQ(numrpc_call("reverse_every", k, 3, few.data()), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_STREQ(first.data(), "ba");
    numrpc_finalize();
}

}  // namespace
