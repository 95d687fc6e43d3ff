// http_probe.h -- what the tests of the HTTP ports share: a page fetched and,
// for /metrics, parsed by prom_scrape.py (python3-prometheus-client), and
// the samples looked up by name and labels.
#ifndef NUMRPC_TESTS_HTTP_PROBE_H
#define NUMRPC_TESTS_HTTP_PROBE_H

#include <map>
#include <string>
#include <vector>

#include "../server/json_mini.h"

// Debian's interpreter: the one python3-prometheus-client installs into.
#define HTTP_PROBE_PYTHON "/usr/bin/python3"

// A token with the `status` right only: its line in a token file, and the
// NAME:SECRET pair a request carries.
#define HTTP_PROBE_STATUS_LINE "stat 445566778899aabbccddeeff00112233 status\n"
#define HTTP_PROBE_STATUS_PAIR "stat:445566778899aabbccddeeff00112233"

// True when the parser is installed (else the tests skip, saying so).
bool HavePrometheusParser();
// The port a process wrote to path (waits at most 5 s; 0 if none).
int ReadPortFile(const std::string &path);

// One answer: the HTTP status (0: no connection), the body when it was not
// parsed, and the parse (error empty when the parser and the layout checks
// passed).
struct Scrape {
    int status = 0;
    std::string type, body, error;
    Json samples;
    std::map<std::string, std::string> families; // name -> type
    // The value of the sample name whose labels include these (-1 if none,
    // or more than one matches).
    double Value(const std::string &name, const std::map<std::string, std::string> &labels = {}) const;
    // Every sample of name: its labels and value.
    std::vector<std::pair<std::map<std::string, std::string>, double>> All(const std::string &name) const;
};

// Fetches url through prom_scrape.py with its options (--bearer N:S, --basic
// N:S, --cafile F, --cert F --key F, --raw).
Scrape Fetch(const std::string &url, const std::vector<std::string> &options = {});

#endif
