// http_auth_test.cc -- the HTTP port's pieces without a port: the token
// check of a request (http_auth.c), strings of peers escaped for JSON and
// for Prometheus labels (strbuf.c), the text format's writer (prom.c).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

extern "C" {
#include "http_auth.h"
#include "prom.h"
#include "strbuf.h"
#include "tokens.h"
}

namespace {

token Token(const char *name, unsigned rights)
{
    token t = {};
    snprintf(t.name, sizeof t.name, "%s", name);
    for (size_t i = 0; i < 16; i++) t.secret[i] = (uint8_t)(0x10 * (i % 16) + i % 16); // 00112233...ff
    t.secret_len = 16;
    t.rights = rights;
    return t;
}

const char kSecret[] = "00112233445566778899aabbccddeeff";

class HttpAuth : public ::testing::Test {
  protected:
    token items[2] = {Token("stat", TOKEN_STATUS), Token("cli", TOKEN_CALL_ALL)};
    token_table table = {items, 2};
    char why[512];
    int Check(const char *header, int private_channel = 1)
    {
        return http_auth_check(&table, header, private_channel, why, sizeof why);
    }
};

TEST_F(HttpAuth, WithoutTokensAnyoneReads)
{
    token_table empty = {nullptr, 0};
    EXPECT_EQ(http_auth_check(&empty, nullptr, 0, why, sizeof why), HTTP_ALLOWED);
}

TEST_F(HttpAuth, BearerAndBasicWithTheStatusRight)
{
    EXPECT_EQ(Check((std::string("Bearer stat:") + kSecret).c_str()), HTTP_ALLOWED) << why;
    EXPECT_EQ(Check((std::string("bearer  stat:") + kSecret).c_str()), HTTP_ALLOWED) << why;
    // base64("stat:00112233445566778899aabbccddeeff")
    EXPECT_EQ(Check("Basic c3RhdDowMDExMjIzMzQ0NTU2Njc3ODg5OWFhYmJjY2RkZWVmZg=="), HTTP_ALLOWED) << why;
    EXPECT_EQ(Check("Basic c3RhdDowMDExMjIzMzQ0NTU2Njc3ODg5OWFhYmJjY2RkZWVmZg"), HTTP_ALLOWED) << why;
}

TEST_F(HttpAuth, RefusalsSayWhy)
{
    EXPECT_EQ(Check(nullptr), HTTP_NEED_TOKEN);
    EXPECT_NE(std::string(why).find("Bearer NAME:SECRET"), std::string::npos) << why;
    EXPECT_EQ(Check("Bearer stat:00112233445566778899aabbccddeef0"), HTTP_NEED_TOKEN);
    EXPECT_STREQ(why, "token stat was refused");
    EXPECT_EQ(Check("Bearer stat:00112233445566778899aabbccddee"), HTTP_NEED_TOKEN); // short
    EXPECT_EQ(Check("Bearer stat:00112233445566778899aabbccddeefg"), HTTP_NEED_TOKEN); // not hex
    EXPECT_EQ(Check((std::string("Bearer cli:") + kSecret).c_str()), HTTP_FORBIDDEN);
    EXPECT_STREQ(why, "token cli may not read this server's status");
    EXPECT_EQ(Check("Bearer stat"), HTTP_NEED_TOKEN);
    EXPECT_EQ(Check("Digest stat:x"), HTTP_NEED_TOKEN);
    EXPECT_EQ(Check("Basic !!!!"), HTTP_NEED_TOKEN);
    EXPECT_EQ(Check(("Bearer " + std::string(4000, 'a') + ":" + kSecret).c_str()), HTTP_NEED_TOKEN);
    // A name no token file could hold is not echoed (the log and the body).
    EXPECT_EQ(Check("Bearer <b>\n:00"), HTTP_NEED_TOKEN);
    EXPECT_EQ(std::string(why).find('<'), std::string::npos) << why;
}

TEST_F(HttpAuth, NoSecretOnAnOpenChannel)
{
    EXPECT_EQ(Check((std::string("Bearer stat:") + kSecret).c_str(), 0), HTTP_FORBIDDEN);
    EXPECT_NE(std::string(why).find("only over HTTPS"), std::string::npos) << why;
    EXPECT_EQ(Check(nullptr, 0), HTTP_FORBIDDEN);
}

std::string Escaped(const char *s, enum strbuf_escape style)
{
    strbuf b = {};
    strbuf_escaped(&b, s, style);
    std::string out = b.p ? b.p : "";
    free(b.p);
    return out;
}

TEST(Escape, JsonIsInertInHtmlAndValidUtf8)
{
    EXPECT_EQ(Escaped("a\"b\\c\nd", STRBUF_JSON), "\"a\\\"b\\\\c\\nd\"");
    EXPECT_EQ(Escaped("<script>&</script>", STRBUF_JSON), "\"\\u003cscript\\u003e\\u0026\\u003c/script\\u003e\"");
    EXPECT_EQ(Escaped("\x01\x7f", STRBUF_JSON), "\"\\u0001\\u007f\"");
    EXPECT_EQ(Escaped("caf\xc3\xa9", STRBUF_JSON), "\"caf\xc3\xa9\"");
    EXPECT_EQ(Escaped("bad\xff\xc3(", STRBUF_JSON), "\"bad\\ufffd\\ufffd(\"");
    EXPECT_EQ(Escaped("\xed\xa0\x80", STRBUF_JSON), "\"\\ufffd\\ufffd\\ufffd\""); // a surrogate
    EXPECT_EQ(Escaped("\xc0\xaf", STRBUF_JSON), "\"\\ufffd\\ufffd\"");             // overlong '/'
}

TEST(Escape, PrometheusLabelValues)
{
    EXPECT_EQ(Escaped("a\"b\\c\nd<e>", STRBUF_PROM_LABEL), "a\\\"b\\\\c\\nd<e>");
    EXPECT_EQ(Escaped("x\xff", STRBUF_PROM_LABEL), "x\xef\xbf\xbd");
}

TEST(Prom, FamiliesSamplesAndHistograms)
{
    strbuf b = {};
    prom_family(&b, "numrpc_x_total", "counter", "Things.");
    prom_label l[2] = {{"a", "q\"\\"}, {"b", "2"}};
    prom_sample_u64(&b, "numrpc_x_total", l, 2, 18446744073709551615ull);
    prom_sample(&b, "numrpc_x_total", nullptr, 0, 0.1);
    double upper[2] = {1e-6, 0.5};
    uint64_t at_most[2] = {1, 3};
    prom_family(&b, "numrpc_t_seconds", "histogram", "Times.");
    prom_histogram(&b, "numrpc_t_seconds", l + 1, 1, upper, at_most, 2, 4, 2.25);
    EXPECT_EQ(std::string(b.p),
              "# HELP numrpc_x_total Things.\n# TYPE numrpc_x_total counter\n"
              "numrpc_x_total{a=\"q\\\"\\\\\",b=\"2\"} 18446744073709551615\n"
              "numrpc_x_total 0.1\n"
              "# HELP numrpc_t_seconds Times.\n# TYPE numrpc_t_seconds histogram\n"
              "numrpc_t_seconds_bucket{b=\"2\",le=\"1e-06\"} 1\n"
              "numrpc_t_seconds_bucket{b=\"2\",le=\"0.5\"} 3\n"
              "numrpc_t_seconds_bucket{b=\"2\",le=\"+Inf\"} 4\n"
              "numrpc_t_seconds_sum{b=\"2\"} 2.25\n"
              "numrpc_t_seconds_count{b=\"2\"} 4\n");
    free(b.p);
}

} // namespace
