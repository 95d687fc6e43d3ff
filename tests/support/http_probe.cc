// http_probe.cc -- runs prom_scrape.py for the HTTP-port tests and reads
// its JSON answer.
#include "http_probe.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "test_util.h"

bool HavePrometheusParser()
{
    return system(HTTP_PROBE_PYTHON " -c 'import prometheus_client.parser' 2>/dev/null") == 0;
}

int ReadPortFile(const std::string &path)
{
    for (int i = 0; i < 500; i++) {
        std::ifstream in(path);
        int p = 0;
        if (in >> p && p > 0) return p;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return 0;
}

static std::string quoted(const std::string &s)
{
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

Scrape Fetch(const std::string &url, const std::vector<std::string> &options)
{
    std::string cmd = std::string(HTTP_PROBE_PYTHON " ") + TOP_SRCDIR "/tests/support/prom_scrape.py " + quoted(url);
    for (const std::string &o : options) cmd += " " + quoted(o);
    TempDir dir("numrpc-scrape");
    CommandRun run = RunCommand(cmd, dir.path + "/err");
    Scrape s;
    if (run.status != 0) {
        s.error = "prom_scrape.py failed: " + run.err;
        return s;
    }
    try {
        Json j = Json::Parse(run.out);
        s.status = (int)j["status"].num;
        if (j.has("type")) s.type = j["type"].str;
        if (j.has("body")) s.body = j["body"].str;
        if (j.has("error") && j["error"].kind == Json::String) s.error = j["error"].str;
        if (j.has("samples")) s.samples = j["samples"];
        if (j.has("families"))
            for (const auto &f : j["families"].fields) s.families[f.first] = f.second.str;
    } catch (const std::exception &e) {
        s.error = std::string("unreadable answer: ") + e.what() + ": " + run.out;
    }
    return s;
}

std::vector<std::pair<std::map<std::string, std::string>, double>> Scrape::All(const std::string &name) const
{
    std::vector<std::pair<std::map<std::string, std::string>, double>> out;
    for (const Json &x : samples.items) {
        if (x["name"].str != name) continue;
        std::map<std::string, std::string> labels;
        for (const auto &l : x["labels"].fields) labels[l.first] = l.second.str;
        out.emplace_back(labels, x["value"].num);
    }
    return out;
}

double Scrape::Value(const std::string &name, const std::map<std::string, std::string> &labels) const
{
    double found = -1;
    int matches = 0;
    for (const auto &sample : All(name)) {
        bool all = true;
        for (const auto &l : labels) {
            auto it = sample.first.find(l.first);
            all = all && it != sample.first.end() && it->second == l.second;
        }
        if (all) {
            found = sample.second;
            matches++;
        }
    }
    return matches == 1 ? found : -1;
}
