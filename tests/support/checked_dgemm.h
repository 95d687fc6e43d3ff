// checked_dgemm.h -- one dgemm through the library (wherever it is sent:
// NUMRPC_SERVER or the metaserver) checked against local BLAS on the same
// inputs; the tests of servers, metaservers and their HTTP ports use it.
#ifndef NUMRPC_TESTS_CHECKED_DGEMM_H
#define NUMRPC_TESTS_CHECKED_DGEMM_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../stubs/local_lapack.h"
#include "numrpc.h"

// C = A B of order n, inputs varying with seed: the server that ran it,
// or "" (the failure reported as a test failure).
inline std::string CheckedDgemm(int n, unsigned seed = 0)
{
    std::vector<double> a((size_t)n * n), b((size_t)n * n), c((size_t)n * n, 0), want((size_t)n * n, 0);
    for (size_t i = 0; i < a.size(); i++) {
        a[i] = std::sin(seed + 1.0 + (double)i);
        b[i] = std::cos(seed + 2.0 + (double)i);
    }
    double one = 1, zero = 0;
    dgemm_("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, want.data(), &n, 1, 1);
    int rc = numrpc_call("dgemm", 'N', 'N', n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
    EXPECT_EQ(rc, NUMRPC_OK) << numrpc_last_error_detail();
    double e = 0;
    for (size_t i = 0; i < c.size(); i++) e = std::max(e, std::fabs(c[i] - want[i]));
    EXPECT_LT(e, 1e-9);
    numrpc_call_info info;
    numrpc_last_call_info(&info);
    return rc == NUMRPC_OK ? info.server : "";
}

#endif
