// async_support.h -- helpers of the asynchronous-call tests: a stub
// directory (blas, linpack, asyncmod), servers on it, files that release holds.
#ifndef NUMRPC_TESTS_ASYNC_SUPPORT_H
#define NUMRPC_TESTS_ASYNC_SUPPORT_H

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/server_proc.h"

// A private directory: the stub modules the servers load (links) and the
// files that hold and release the test's blocking routines.
class AsyncDir {
  public:
    AsyncDir()
    {
        char tmpl[] = "/tmp/numrpc-async-XXXXXX";
        const char *d = mkdtemp(tmpl);
        if (d == nullptr) abort();
        dir_ = d;
        stubs_ = dir_ + "/stubs";
        if (mkdir_(stubs_) != 0) abort();
        link_(TOP_BUILDDIR "/stubs/.libs/blas.so", "blas.so");
        link_(TOP_BUILDDIR "/stubs/.libs/linpack.so", "linpack.so");
        link_(TOP_BUILDDIR "/tests/async/.libs/asyncmod.so", "asyncmod.so");
    }
    ~AsyncDir()
    {
        std::string cmd = "rm -rf '" + dir_ + "'";
        if (system(cmd.c_str()) != 0) {
        }
    }
    const std::string &stubs() const { return stubs_; }
    // A gate for hold(): path to pass, released by release(path).
    std::string gate(const std::string &name) const { return dir_ + "/" + name; }
    static void release(const std::string &gate)
    {
        int fd = open(gate.c_str(), O_WRONLY | O_CREAT, 0600);
        if (fd >= 0) close(fd);
    }
    // Waits (bounded) until hold(gate) runs; the worker's pid, or -1.
    static int started_pid(const std::string &gate)
    {
        for (int i = 0; i < 3000; i++) {
            std::ifstream in(gate + ".started");
            int pid = 0;
            if (in >> pid && pid > 0) return pid;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return -1;
    }
    std::vector<std::string> server_args(int workers = 4) const
    {
        // Routines may use the gates beside the stubs (--worker-dir): a
        // confined worker reaches no other directory of /tmp.
        return {"--stubs", stubs_, "--workers", std::to_string(workers), "--admin-socket", "none", "--worker-dir",
                dir_};
    }

  private:
    static int mkdir_(const std::string &p) { return system(("mkdir -p '" + p + "'").c_str()); }
    void link_(const char *target, const char *name)
    {
        if (symlink(target, (stubs_ + "/" + name).c_str()) != 0) abort();
    }
    std::string dir_, stubs_;
};

#endif
