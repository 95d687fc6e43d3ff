// metrics_test.cc -- numrpc-server's HTTP port (--http-port) with real
// processes: /metrics after real calls, parsed by python3-prometheus-client
// and checked against the calls made and against STATUS; errors by code and
// worker restarts after a crash; tokens, methods, sizes; HTTPS.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../common/tls_support.h"
#include "../stubs/local_lapack.h"
#include "../support/checked_dgemm.h"
#include "../support/http_probe.h"
#include "../support/server_proc.h"
#include "../support/test_util.h"
#include "../support/token_dir.h"
#include "json_mini.h"
#include "numrpc.h"

namespace {

const std::string kCli = TOP_BUILDDIR "/cli/numrpc";
const char kStat[] = HTTP_PROBE_STATUS_PAIR;

// A server with its HTTP port on a free port of 127.0.0.1.
struct HttpServer {
    TempDir dir{"numrpc-metrics"};
    std::unique_ptr<ServerProc> proc;
    int http_port = 0;
    explicit HttpServer(std::vector<std::string> extra)
    {
        std::string file = dir.path + "/http.port";
        extra.insert(extra.end(), {"--http-port", "0", "--http-port-file", file, "--admin-socket", "none"});
        proc = std::make_unique<ServerProc>(extra);
        http_port = ReadPortFile(file);
    }
    std::string url(const std::string &path, const char *scheme = "http") const
    {
        return std::string(scheme) + "://127.0.0.1:" + std::to_string(http_port) + path;
    }
};

// Scrapes until ready(s) holds (at most 5 s): the last scrape.
Scrape ScrapeUntil(const std::string &url, const std::function<bool(const Scrape &)> &ready,
                   const std::vector<std::string> &options = {})
{
    Scrape s;
    for (int i = 0; i < 50; i++) {
        s = Fetch(url, options);
        if (s.status == 200 && s.error.empty() && ready(s)) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return s;
}

Json StatusJson(const std::string &addr)
{
    TempDir dir("numrpc-metrics-status");
    CommandRun run = RunCommand(kCli + " status --json " + addr, dir.path + "/err");
    EXPECT_EQ(run.status, 0) << run.err;
    return Json::Parse(run.out);
}

const Json *StatusRoutine(const Json &status, const std::string &name)
{
    for (const Json &r : status["routines"].items)
        if (r["name"].str == name && r["offered"].b) return &r;
    return nullptr;
}

void RemoteDdot(int n)
{
    std::vector<double> x(n), y(n);
    for (int i = 0; i < n; i++) {
        x[i] = 0.5 * i;
        y[i] = 1.0 / (1 + i);
    }
    int one = 1;
    double got = 0, want = ddot_(&n, x.data(), &one, y.data(), &one);
    ASSERT_EQ(numrpc_call("ddot", n, x.data(), 1, y.data(), 1, &got), NUMRPC_OK) << Detail();
    EXPECT_NEAR(got, want, 1e-9 * std::fabs(want));
}

class Metrics : public ::testing::Test {
  protected:
    void SetUp() override
    {
        if (!HavePrometheusParser()) GTEST_SKIP() << "python3-prometheus-client is not installed (scripts/deps.sh)";
    }
    void TearDown() override { numrpc_finalize(); }
};

TEST_F(Metrics, CountsMatchTheCallsMadeAndStatus)
{
    HttpServer s({"--max-array-elems", "1000"});
    ASSERT_GT(s.http_port, 0);
    UseServer(s.proc->address());
    const int n = 24;
    for (unsigned k = 0; k < 3; k++) EXPECT_EQ(CheckedDgemm(n, k), s.proc->address());
    for (int k = 0; k < 2; k++) RemoteDdot(100 + k);
    std::vector<double> x(2000, 1.0), y(2000);
    ASSERT_EQ(numrpc_call("dcopy", 2000, x.data(), 1, y.data(), 1), NUMRPC_ELIMIT); // over --max-array-elems

    Scrape m = Fetch(s.url("/metrics"));
    ASSERT_EQ(m.status, 200) << m.body << m.error;
    ASSERT_EQ(m.error, "");
    EXPECT_EQ(m.type.rfind("text/plain; version=0.0.4", 0), 0u) << m.type;
    EXPECT_EQ(m.families["numrpc_server_calls"], "counter");
    EXPECT_EQ(m.families["numrpc_server_call_duration_seconds"], "histogram");
    EXPECT_EQ(m.families["numrpc_server_workers"], "gauge");

    EXPECT_EQ(m.Value("numrpc_server_calls_total", {{"routine", "dgemm"}, {"module", "blas"}}), 3);
    EXPECT_EQ(m.Value("numrpc_server_calls_total", {{"routine", "ddot"}}), 2);
    EXPECT_EQ(m.Value("numrpc_server_calls_total", {{"routine", "dcopy"}}), 1);
    EXPECT_EQ(m.Value("numrpc_server_calls_total", {{"routine", "dgesv"}}), 0);
    EXPECT_EQ(m.Value("numrpc_server_call_errors_total", {{"routine", "dcopy"}, {"code", "ELIMIT"}}), 1);
    EXPECT_EQ(m.All("numrpc_server_call_errors_total").size(), 1u); // no other routine, no other code
    EXPECT_EQ(m.Value("numrpc_server_call_duration_seconds_count", {{"routine", "dgemm"}}), 3);
    EXPECT_EQ(m.Value("numrpc_server_call_duration_seconds_bucket", {{"routine", "dgemm"}, {"le", "+Inf"}}), 3);
    EXPECT_GT(m.Value("numrpc_server_call_duration_seconds_sum", {{"routine", "dgemm"}}), 0);
    EXPECT_EQ(m.Value("numrpc_server_call_duration_seconds_bucket", {{"routine", "dgemm"}, {"le", "1e-06"}}), 0);
    // The arrays a and b of each dgemm crossed; a routine never called has no histogram.
    EXPECT_GE(m.Value("numrpc_server_received_bytes_total", {{"routine", "dgemm"}}), 3.0 * 2 * n * n * 8);
    EXPECT_TRUE(m.All("numrpc_server_call_duration_seconds_count").size() == 3u);

    // The same counters as STATUS, to the byte.
    Json st = StatusJson(s.proc->address());
    for (const char *name : {"dgemm", "ddot", "dcopy"}) {
        const Json *r = StatusRoutine(st, name);
        ASSERT_NE(r, nullptr) << name;
        EXPECT_EQ(m.Value("numrpc_server_calls_total", {{"routine", name}}), (*r)["calls"].num) << name;
        EXPECT_EQ(m.Value("numrpc_server_received_bytes_total", {{"routine", name}}), (*r)["bytes_in"].num) << name;
        EXPECT_EQ(m.Value("numrpc_server_sent_bytes_total", {{"routine", name}}), (*r)["bytes_out"].num) << name;
        EXPECT_EQ(m.Value("numrpc_server_calls_total", {{"routine", name}, {"version", (*r)["version"].str}}),
                  (*r)["calls"].num);
    }
    double busy = m.Value("numrpc_server_workers", {{"state", "busy"}}),
           idle = m.Value("numrpc_server_workers", {{"state", "idle"}});
    EXPECT_EQ(busy + idle, st["workers"].num);
    EXPECT_EQ(m.Value("numrpc_server_workers_max"), st["max_workers"].num);
    EXPECT_EQ(m.Value("numrpc_server_worker_restarts_total"), 0);
    EXPECT_EQ(m.Value("numrpc_server_queued_requests"), 0);
    EXPECT_EQ(m.Value("numrpc_server_handles"), 0);
}

TEST_F(Metrics, ACrashIsAnErrorByCodeAndARestart)
{
    HttpServer s({"--stubs", TOP_BUILDDIR "/tests/server/.libs"});
    ASSERT_GT(s.http_port, 0);
    UseServer(s.proc->address());
    EXPECT_EQ(numrpc_call("crash_segv", 1), NUMRPC_ECRASHED);
    int r = 0;
    ASSERT_EQ(numrpc_call("add_one", 41, &r), NUMRPC_OK) << Detail();
    EXPECT_EQ(r, 42);
    // The dispatcher publishes its figures at the end of the loop's pass.
    Scrape m = ScrapeUntil(s.url("/metrics"),
                           [](const Scrape &x) { return x.Value("numrpc_server_worker_restarts_total") == 1; });
    ASSERT_EQ(m.error, "");
    EXPECT_EQ(m.Value("numrpc_server_worker_restarts_total"), 1);
    EXPECT_EQ(m.Value("numrpc_server_call_errors_total", {{"routine", "crash_segv"}, {"code", "ECRASHED"}}), 1);
    EXPECT_EQ(m.Value("numrpc_server_calls_total", {{"routine", "crash_segv"}}), 1);
    EXPECT_EQ(m.Value("numrpc_server_calls_total", {{"routine", "add_one"}}), 1);
    EXPECT_EQ(m.Value("numrpc_server_call_errors_total", {{"routine", "add_one"}}), -1); // none
}

TEST_F(Metrics, HandleRefusalsAreCountedByTheLimit)
{
    HttpServer s({"--max-handles", "8", "--max-handles-per-identity", "2"});
    ASSERT_GT(s.http_port, 0);
    UseServer(s.proc->address());
    double v[3] = {1.5, 2.5, 3.5}, back = 0;
    numrpc_data *h[3] = {};
    ASSERT_EQ(numrpc_data_put(&h[0], nullptr, NUMRPC_T_DOUBLE, &v[0], 1, 1, 1), NUMRPC_OK) << Detail();
    ASSERT_EQ(numrpc_data_put(&h[1], nullptr, NUMRPC_T_DOUBLE, &v[1], 1, 1, 1), NUMRPC_OK) << Detail();
    EXPECT_EQ(numrpc_data_put(&h[2], nullptr, NUMRPC_T_DOUBLE, &v[2], 1, 1, 1), NUMRPC_ELIMIT);
    EXPECT_TRUE(Contains(Detail(), "127.0.0.1 holds 2 handles, the most one identity may keep on this server "
                                   "(--max-handles-per-identity 2)"))
        << Detail();
    EXPECT_EQ(numrpc_data_new(&h[2], nullptr, NUMRPC_T_DOUBLE, 4, 1, 4), NUMRPC_ELIMIT);
    ASSERT_EQ(numrpc_data_get(h[1], &back, 1), NUMRPC_OK) << Detail();
    EXPECT_EQ(back, 2.5);
    Scrape m = ScrapeUntil(s.url("/metrics"), [](const Scrape &x) {
        return x.Value("numrpc_server_handle_refusals_total", {{"limit", "max-handles-per-identity"}}) == 2;
    });
    ASSERT_EQ(m.error, "");
    EXPECT_EQ(m.families["numrpc_server_handle_refusals"], "counter");
    EXPECT_EQ(m.Value("numrpc_server_handle_refusals_total", {{"limit", "max-handles-per-identity"}}), 2);
    for (const char *other : {"max-handles", "handle-bytes", "handle-bytes-per-identity", "tickets",
                              "tickets-per-identity"})
        EXPECT_EQ(m.Value("numrpc_server_handle_refusals_total", {{"limit", other}}), 0) << other;
    EXPECT_EQ(m.Value("numrpc_server_handles"), 2);
    for (numrpc_data *d : {h[0], h[1]}) EXPECT_EQ(numrpc_data_free(d), NUMRPC_OK);
}

// The first line of the answer to raw request bytes ("" if none).
std::string RawStatusLine(int port, const std::string &request)
{
    int fd = connect_loopback(port);
    if (fd < 0) return "";
    size_t sent = 0;
    while (sent < request.size()) {
        ssize_t k = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
        if (k <= 0) break;
        sent += (size_t)k;
    }
    std::string got;
    char buf[512];
    timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ssize_t k;
    while (got.find("\r\n") == std::string::npos && (k = recv(fd, buf, sizeof buf, 0)) > 0) got.append(buf, k);
    close(fd);
    return got.substr(0, got.find("\r\n"));
}

TEST_F(Metrics, TokensMethodsAndSizes)
{
    TokenDir tokens;
    std::string file = tokens.Write("server.tokens", HTTP_PROBE_STATUS_LINE "cli 33445566778899aabbccddeeff001122 call\n");
    HttpServer s({"--token-file", file});
    ASSERT_GT(s.http_port, 0);
    Scrape none = Fetch(s.url("/metrics"));
    EXPECT_EQ(none.status, 401);
    EXPECT_TRUE(Contains(none.body, "Authorization: Bearer NAME:SECRET")) << none.body;
    Scrape wrong = Fetch(s.url("/metrics"), {"--bearer", "stat:445566778899aabbccddeeff00112234"});
    EXPECT_EQ(wrong.status, 401);
    EXPECT_TRUE(Contains(wrong.body, "token stat was refused")) << wrong.body;
    Scrape unknown = Fetch(s.url("/metrics"), {"--bearer", "nobody:445566778899aabbccddeeff00112233"});
    EXPECT_EQ(unknown.status, 401);
    Scrape caller = Fetch(s.url("/metrics"), {"--bearer", "cli:33445566778899aabbccddeeff001122"});
    EXPECT_EQ(caller.status, 403);
    EXPECT_TRUE(Contains(caller.body, "token cli may not read this server's status")) << caller.body;
    Scrape bearer = Fetch(s.url("/metrics"), {"--bearer", kStat});
    EXPECT_EQ(bearer.status, 200) << bearer.body;
    EXPECT_EQ(bearer.error, "");
    EXPECT_GE(bearer.Value("numrpc_server_calls_total", {{"routine", "ping"}}), 0);
    Scrape basic = Fetch(s.url("/metrics"), {"--basic", kStat});
    EXPECT_EQ(basic.status, 200) << basic.body;

    // Only GET, only known pages, bounded requests (loopback: no token needed
    // to be told so, the method and size are refused first).
    EXPECT_EQ(RawStatusLine(s.http_port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd"),
              "HTTP/1.1 405 Method Not Allowed");
    Scrape missing = Fetch(s.url("/nope"), {"--bearer", kStat});
    EXPECT_EQ(missing.status, 404);
    std::string huge = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(64 << 10, 'a') + "\r\n\r\n";
    std::string line = RawStatusLine(s.http_port, huge);
    EXPECT_TRUE(line.empty() || Contains(line, " 431 ") || Contains(line, " 413 ") || Contains(line, " 400 ")) << line;
    EXPECT_TRUE(s.proc->alive());
}

TEST_F(Metrics, HttpsWithTheServersCertificateAndClientCertificates)
{
    using tls_support::Pki;
    HttpServer s({"--tls-cert", Pki("server.pem"), "--tls-key", Pki("server.key")});
    ASSERT_GT(s.http_port, 0);
    Scrape m = Fetch(s.url("/metrics", "https"), {"--cafile", Pki("ca.pem")});
    EXPECT_EQ(m.status, 200) << m.body;
    EXPECT_EQ(m.error, "");
    EXPECT_EQ(m.families["numrpc_server_calls"], "counter");
    EXPECT_EQ(Fetch(s.url("/metrics"), {"--raw"}).status == 200, false); // plain HTTP on an HTTPS port
    Scrape stranger = Fetch(s.url("/metrics", "https"), {"--cafile", Pki("other-ca.pem")});
    EXPECT_EQ(stranger.status, 0) << "a client that trusts another CA must not accept the certificate";

    HttpServer mutual({"--tls-cert", Pki("server.pem"), "--tls-key", Pki("server.key"), "--tls-client-ca",
                       Pki("ca.pem")});
    ASSERT_GT(mutual.http_port, 0);
    Scrape anonymous = Fetch(mutual.url("/metrics", "https"), {"--cafile", Pki("ca.pem")});
    EXPECT_NE(anonymous.status, 200);
    Scrape known = Fetch(mutual.url("/metrics", "https"),
                         {"--cafile", Pki("ca.pem"), "--cert", Pki("client.pem"), "--key", Pki("client.key")});
    EXPECT_EQ(known.status, 200) << known.body;
}

} // namespace
