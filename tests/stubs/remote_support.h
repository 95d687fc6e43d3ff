// remote_support.h -- what the stub tests share: the one server a test program
// calls, deterministic random numbers, and the check of a call's return code.
#ifndef NUMRPC_TESTS_REMOTE_SUPPORT_H
#define NUMRPC_TESTS_REMOTE_SUPPORT_H

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "numrpc.h"
#include "../support/server_proc.h"

extern "C" void openblas_set_num_threads(int n);

// A numrpc-server with this tree's stub modules for the whole program;
// numrpc_init points the client library at it.
class StubServer : public testing::Environment {
  public:
    void SetUp() override
    {
        openblas_set_num_threads(1);  // the server's workers run one thread too
        server_ = std::make_unique<ServerProc>();
        address_ = server_->address();
        numrpc_config cfg{};
        cfg.servers = address_.c_str();
        ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK) << numrpc_last_error_detail();
    }
    void TearDown() override
    {
        numrpc_finalize();
        server_.reset();
    }
    ServerProc &proc() { return *server_; }

  private:
    std::unique_ptr<ServerProc> server_;
    std::string address_;
};

// Uniform numbers in [-1, 1) from a seed (splitmix64).
class Rng {
  public:
    explicit Rng(uint64_t seed) : state_(seed * 0x2545F4914F6CDD1DULL + 1) {}
    double Next()
    {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        return 2.0 * (static_cast<double>(z >> 11) * 0x1.0p-53) - 1.0;
    }

  private:
    uint64_t state_;
};

// rc, after a test failure naming the error when it is not NUMRPC_OK.
inline int Call(int rc)
{
    EXPECT_EQ(rc, NUMRPC_OK) << numrpc_strerror(rc) << ": " << numrpc_last_error_detail();
    return rc;
}

#endif
