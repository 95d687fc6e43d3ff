// test_util.h -- the small helpers every client-side test uses: point the
// library at one server, read the last error's detail, look inside text, run a command, a temporary directory.
#ifndef NUMRPC_TESTS_TEST_UTIL_H
#define NUMRPC_TESTS_TEST_UTIL_H

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "numrpc.h"

// Calls go to addr ("host:port") from now on (the library restarted).
inline void UseServer(const std::string &addr)
{
    numrpc_finalize();
    numrpc_config cfg{addr.c_str(), 0, nullptr, nullptr};
    ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK);
}

inline std::string Detail()
{
    return numrpc_last_error_detail();
}

inline bool Contains(const std::string &s, const std::string &part)
{
    return s.find(part) != std::string::npos;
}

// A shell command's exit status, stdout, and stderr (kept in err_file).
struct CommandRun {
    int status = -1;
    std::string out, err;
};
inline CommandRun RunCommand(const std::string &cmd, const std::string &err_file)
{
    CommandRun r;
    FILE *p = popen((cmd + " 2>" + err_file).c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, k);
    int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    std::ifstream in(err_file);
    std::stringstream ss;
    ss << in.rdbuf();
    r.err = ss.str();
    return r;
}

// A fresh directory /tmp/PREFIX-XXXXXX, removed with its contents at the end.
struct TempDir {
    std::string path;
    explicit TempDir(const std::string &prefix = "numrpc-test")
    {
        std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
        path = mkdtemp(&tmpl[0]) ? tmpl : "";
    }
    ~TempDir()
    {
        std::string cmd = "rm -rf '" + path + "'";
        if (!path.empty() && system(cmd.c_str()) != 0) perror("rm");
    }
};

#endif
