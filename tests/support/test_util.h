// test_util.h -- the small helpers every client-side test uses: point the
// library at one server, read the last error's detail, look inside text, a temporary directory.
#ifndef NUMRPC_TESTS_TEST_UTIL_H
#define NUMRPC_TESTS_TEST_UTIL_H

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
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
