// web_test.cc -- numrpc-metaserver's HTTP port with real processes: two
// servers joined and calls placed through the metaserver, then /metrics
// (python3-prometheus-client's parser) against the calls and /status.json,
// the status page in headless Chromium (its DOM: both servers, the
// placements), hostile names escaped everywhere, and tokens.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../support/checked_dgemm.h"
#include "../support/http_probe.h"
#include "../support/meta_peer.h"
#include "../support/meta_proc.h"
#include "../support/test_util.h"
#include "../support/token_dir.h"
#include "numrpc.h"

namespace {

const std::string kMeta = TOP_BUILDDIR "/metaserver/numrpc-metaserver";
const std::string kServer = TOP_BUILDDIR "/server/numrpc-server";
const char kChromium[] = "/usr/bin/chromium";
const int kCalls = 6;

// A metaserver with its HTTP port, and servers joined to it.
struct Scene {
    TempDir dir{"numrpc-web"};
    std::unique_ptr<Proc> meta;
    std::vector<std::unique_ptr<Proc>> servers;
    int http = 0;

    explicit Scene(const std::vector<std::string> &extra = {})
    {
        std::string file = dir.path + "/http.port";
        std::vector<std::string> args = {kMeta,         "--port",      "0",  "--quiet", "--drop-after", "30",
                                         "--lease-ms",  "0",           "--http-port", "0", "--http-port-file",
                                         file};
        args.insert(args.end(), extra.begin(), extra.end());
        meta = std::make_unique<Proc>(args);
        http = ReadPortFile(file);
    }
    void AddServer()
    {
        servers.push_back(std::make_unique<Proc>(std::vector<std::string>{
            kServer, "--port", "0", "--stubs", TOP_BUILDDIR "/stubs/.libs", "--quiet", "--workers", "1",
            "--blas-threads", "1", "--admin-socket", "none", "--metaserver",
            "127.0.0.1:" + std::to_string(meta->port())}));
    }
    std::string label(size_t i) const { return "127.0.0.1:" + std::to_string(servers[i]->port()); }
    std::string url(const std::string &path) const { return "http://127.0.0.1:" + std::to_string(http) + path; }
    // /status.json parsed (Null on any failure).
    Json Status(const std::vector<std::string> &options = {}) const
    {
        std::vector<std::string> o = options;
        o.push_back("--raw");
        Scrape s = Fetch(url("/status.json"), o);
        try {
            return s.status == 200 ? Json::Parse(s.body) : Json();
        } catch (const std::exception &) {
            return Json();
        }
    }
    // Waits (at most 10 s) until n servers are listed.
    bool WaitServers(size_t n) const
    {
        for (int i = 0; i < 100; i++) {
            Json st = Status();
            if (st.kind == Json::Object && st["servers"].items.size() == n) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return false;
    }
};

// Sum of a per-server sample over every server.
double Sum(const Scrape &m, const std::string &name)
{
    double sum = 0;
    for (const auto &s : m.All(name)) sum += s.second;
    return sum;
}

// The page's DOM after its scripts ran (Chromium, virtual time), or "".
std::string PageDom(const std::string &url, const std::string &screenshot = "")
{
    TempDir profile("numrpc-chromium");
    std::string common = std::string(kChromium) +
                         " --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" + profile.path +
                         " --virtual-time-budget=6000 --window-size=1366,900 ";
    if (!screenshot.empty()) {
        CommandRun shot = RunCommand(common + "--screenshot=" + screenshot + " " + url, profile.path + "/shot.err");
        EXPECT_EQ(shot.status, 0) << shot.err;
    }
    CommandRun run = RunCommand(common + "--dump-dom " + url, profile.path + "/dom.err");
    EXPECT_EQ(run.status, 0) << run.err;
    return run.out;
}

// The markup of the element with this id, up to its closing tag.
std::string Element(const std::string &dom, const std::string &id, const std::string &tag)
{
    size_t at = dom.find("id=\"" + id + "\"");
    if (at == std::string::npos) return "";
    size_t end = dom.find("</" + tag + ">", at);
    return dom.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

class MetaWeb : public ::testing::Test {
  protected:
    void SetUp() override
    {
        if (!HavePrometheusParser()) GTEST_SKIP() << "python3-prometheus-client is not installed (scripts/deps.sh)";
    }
    void TearDown() override
    {
        numrpc_finalize();
        unsetenv("NUMRPC_METASERVER");
    }
    // Two servers joined, kCalls dgemm placed by the metaserver and reported.
    void Run(Scene &s)
    {
        ASSERT_GT(s.http, 0);
        s.AddServer();
        s.AddServer();
        ASSERT_TRUE(s.WaitServers(2));
        setenv("NUMRPC_METASERVER", ("127.0.0.1:" + std::to_string(s.meta->port())).c_str(), 1);
        for (int k = 0; k < kCalls; k++) used.insert(CheckedDgemm(64, (unsigned)k));
        numrpc_finalize(); // the reports go out
        for (int i = 0; i < 100; i++) {
            Json st = s.Status();
            double compared = 0;
            for (const Json &x : st.kind == Json::Object ? st["servers"].items : std::vector<Json>{})
                compared += x["compared"].num;
            if (compared >= kCalls) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    std::set<std::string> used;
};

TEST_F(MetaWeb, MetricsCountTheQueriesReportsAndLinks)
{
    Scene s;
    Run(s);
    Scrape m = Fetch(s.url("/metrics"));
    ASSERT_EQ(m.status, 200) << m.body;
    ASSERT_EQ(m.error, "");
    Json st = s.Status();
    ASSERT_EQ(st.kind, Json::Object);

    EXPECT_EQ(m.Value("numrpc_meta_servers"), 2);
    // One query and one report with a prediction per call (--lease-ms 0).
    EXPECT_EQ(m.Value("numrpc_meta_queries_total"), kCalls);
    EXPECT_EQ(Sum(m, "numrpc_meta_server_placements_total"), kCalls);
    EXPECT_EQ(Sum(m, "numrpc_meta_server_reports_total"), kCalls);
    EXPECT_EQ(Sum(m, "numrpc_meta_server_compared_calls_total"), kCalls);
    EXPECT_GT(Sum(m, "numrpc_meta_server_predicted_seconds_total"), 0);
    EXPECT_GT(Sum(m, "numrpc_meta_server_measured_seconds_total"), 0);
    EXPECT_EQ(m.Value("numrpc_meta_queries_total"), st["queries"].num);
    EXPECT_EQ(m.Value("numrpc_meta_reports_total"), st["reports"].num);
    EXPECT_EQ(m.Value("numrpc_meta_reports_dropped_total"), 0);
    EXPECT_EQ(m.Value("numrpc_meta_lease_seconds"), 0);
    for (const Json &x : st["servers"].items) {
        std::map<std::string, std::string> l = {{"server", x["server"].str}};
        EXPECT_EQ(m.Value("numrpc_meta_server_placements_total", l), x["placed"].num);
        EXPECT_EQ(m.Value("numrpc_meta_server_reports_total", l), x["reports"].num);
        EXPECT_EQ(m.Value("numrpc_meta_server_slots", l), x["slots"].num);
        EXPECT_EQ(m.Value("numrpc_meta_server_routines", l), (double)x["routines"].items.size());
        EXPECT_EQ(m.All("numrpc_meta_server_speed_flops_per_second").size() % 2, 0u);
        EXPECT_GT(m.Value("numrpc_meta_server_speed_flops_per_second", {{"server", x["server"].str},
                                                                       {"n", std::to_string((int)x["speed"].items[0]["n"].num)}}),
                  0);
    }
    // Every server the calls ran on is a link this client measured.
    for (const std::string &server : used)
        EXPECT_GE(m.Value("numrpc_meta_link_reports_total", {{"client", "127.0.0.1"}, {"server", server}}), 1)
            << server;
    EXPECT_EQ(Sum(m, "numrpc_meta_link_reports_total"), st["reports"].num);
    EXPECT_EQ(m.families["numrpc_meta_server_placements"], "counter");
    EXPECT_EQ(m.families["numrpc_meta_server_active_placements"], "gauge");
}

// A name for each place a peer's text reaches the page: HTML that would
// mark the body if it ever became markup, with the characters JSON and the
// Prometheus format must escape.
const char kHostileHost[] = "evil\"\\<script>document.body.dataset.pwned=1</script>\n<img src=x "
                            "onerror=document.body.dataset.pwned=2>";
const char kHostileName[] = "<b id=pwnedname>bold</b>";
const char kHostileRoutine[] = "<script>document.body.dataset.pwned=3</script>";

TEST_F(MetaWeb, PageShowsServersAndPlacementsAndEscapesHostileNames)
{
    if (access(kChromium, X_OK) != 0) GTEST_SKIP() << "chromium is not installed (scripts/deps.sh)";
    Scene s;
    Run(s);
    const char *shot = getenv("NUMRPC_SCREENSHOT"); // docs/status_page.png is made this way
    std::string dom = PageDom(s.url("/"), shot ? shot : "");
    ASSERT_NE(dom.find("data-loaded=\"1\""), std::string::npos) << dom.substr(0, 2000);
    std::string servers = Element(dom, "servers", "table");
    EXPECT_NE(servers.find(s.label(0)), std::string::npos) << servers;
    EXPECT_NE(servers.find(s.label(1)), std::string::npos) << servers;
    std::string placements = Element(dom, "placements", "table");
    EXPECT_NE(placements.find("dgemm"), std::string::npos) << placements;
    EXPECT_NE(placements.find(*used.begin()), std::string::npos) << placements;
    EXPECT_NE(Element(dom, "throughput", "table").find(*used.begin()), std::string::npos);

    // A hostile joiner: its host, name and routine name are HTML.
    Peer real(s.servers[0]->port());
    ASSERT_EQ(real.hello(), NUMRPC_OK) << real.detail();
    Routine routine;
    ASSERT_EQ(real.descriptor("ddot", &routine), NUMRPC_OK) << real.detail();
    iface_t f;
    err_t err;
    ASSERT_EQ(iface_decode(routine.r.blob, routine.r.len, &f, &err), NUMRPC_OK) << err.detail;
    free(f.name);
    f.name = strdup(kHostileRoutine);
    ASSERT_EQ(iface_compute_hash(&f, &err), NUMRPC_OK) << err.detail;
    uint8_t *blob = nullptr;
    size_t len = 0;
    ASSERT_EQ(iface_encode(&f, &blob, &len, &err), NUMRPC_OK) << err.detail;
    Routine hostile;
    snprintf(hostile.r.name, sizeof hostile.r.name, "%s", kHostileRoutine);
    hostile.r.hash = f.hash;
    hostile.r.blob = blob;
    hostile.r.len = (uint32_t)len;
    iface_free(&f);
    Peer evil(s.meta->port());
    ASSERT_EQ(evil.hello(), NUMRPC_OK) << evil.detail();
    ASSERT_EQ(evil.join(kHostileHost, 4242, {&hostile}, 1, 1e9, kHostileName), NUMRPC_OK) << evil.detail();
    const std::string evil_label = std::string(kHostileHost) + ":4242";

    // JSON: valid, and the strings come back exactly.
    Json st = s.Status();
    ASSERT_EQ(st.kind, Json::Object) << "status.json no longer parses";
    bool found = false;
    for (const Json &x : st["servers"].items)
        if (x["server"].str == evil_label) {
            found = true;
            EXPECT_EQ(x["name"].str, kHostileName);
            EXPECT_EQ(x["routines"].items.at(0).str, kHostileRoutine);
        }
    EXPECT_TRUE(found);
    // Prometheus: the label value, escaped, parses back to the same text.
    Scrape m = Fetch(s.url("/metrics"));
    ASSERT_EQ(m.error, "");
    EXPECT_EQ(m.Value("numrpc_meta_server_slots", {{"server", evil_label}}), 1);
    EXPECT_EQ(m.Value("numrpc_meta_servers"), 3);

    // The page: the text is shown, never run or parsed as markup.
    dom = PageDom(s.url("/"));
    ASSERT_NE(dom.find("data-loaded=\"1\""), std::string::npos);
    EXPECT_EQ(dom.find("data-pwned"), std::string::npos) << "a peer's string ran as script";
    EXPECT_EQ(dom.find("id=\"pwnedname\""), std::string::npos) << "a peer's string became markup";
    servers = Element(dom, "servers", "table");
    EXPECT_NE(servers.find("evil\"\\&lt;script&gt;document.body.dataset.pwned=1&lt;/script&gt;"), std::string::npos)
        << servers;
    EXPECT_NE(servers.find("&lt;b id=pwnedname&gt;bold&lt;/b&gt;"), std::string::npos) << servers;
    EXPECT_NE(Element(dom, "routines", "table").find("&lt;script&gt;document.body.dataset.pwned=3&lt;/script&gt;"),
              std::string::npos);
    EXPECT_NE(dom.find("<title>numrpc metaserver</title>"), std::string::npos);
}

TEST_F(MetaWeb, EveryPageNeedsAStatusToken)
{
    TokenDir tokens;
    std::string file = tokens.Write("meta.tokens", HTTP_PROBE_STATUS_LINE "srv 00112233445566778899aabbccddeeff join\n");
    Scene s({"--token-file", file});
    ASSERT_GT(s.http, 0);
    const std::string stat = HTTP_PROBE_STATUS_PAIR;
    for (const char *page : {"/", "/status.json", "/metrics"}) {
        Scrape none = Fetch(s.url(page), {"--raw"});
        EXPECT_EQ(none.status, 401) << page;
        Scrape joiner = Fetch(s.url(page), {"--raw", "--bearer", "srv:00112233445566778899aabbccddeeff"});
        EXPECT_EQ(joiner.status, 403) << page;
        EXPECT_TRUE(Contains(joiner.body, "token srv may not read")) << joiner.body;
        EXPECT_EQ(Fetch(s.url(page), {"--raw", "--bearer", stat}).status, 200) << page;
        EXPECT_EQ(Fetch(s.url(page), {"--raw", "--basic", stat}).status, 200) << page; // a browser's login
    }
    Scrape m = Fetch(s.url("/metrics"), {"--bearer", stat});
    EXPECT_EQ(m.error, "");
    EXPECT_EQ(m.Value("numrpc_meta_servers"), 0);
    // HTTP refusals go to the log, not to the recent errors (the main port's).
    Json st = s.Status({"--bearer", stat});
    ASSERT_EQ(st.kind, Json::Object);
    EXPECT_EQ(st["errors"].items.size(), 0u);
}

} // namespace
