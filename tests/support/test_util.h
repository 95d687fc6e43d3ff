// test_util.h -- the small helpers every client-side test uses: point the
// library at one server, read the last error's detail, look inside text.
#ifndef NUMRPC_TESTS_TEST_UTIL_H
#define NUMRPC_TESTS_TEST_UTIL_H

#include <gtest/gtest.h>

#include <string>

#include "numrpc.h"

// Calls go to addr ("host:port") from now on (the library restarted).
inline void UseServer(const std::string &addr)
{
    numrpc_finalize();
    numrpc_config cfg{addr.c_str(), 0, nullptr};
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

#endif
