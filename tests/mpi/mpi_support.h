// mpi_support.h -- what the MPI tests share: a server with a resident job
// whose files sit in a directory of the test's, random matrices, pdgesv against dgesv.
#ifndef NUMRPC_TESTS_MPI_SUPPORT_H
#define NUMRPC_TESTS_MPI_SUPPORT_H

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../stubs/local_lapack.h"
#include "../support/http_probe.h"
#include "../support/server_proc.h"
#include "../support/test_util.h"
#include "numrpc.h"

const std::string kEngine = TOP_BUILDDIR "/mpi/numrpc-mpi-engine";

// The --mpi-* arguments of a 4-rank job on this 2-core machine.
inline std::vector<std::string> MpiArgs(int ranks = 4)
{
    return {"--mpi-ranks", std::to_string(ranks), "--mpi-args", "--oversubscribe", "--mpi-engine", kEngine};
}

// The MPI job's private directory under dir (the server's TMPDIR), or "".
inline std::string JobDir(const std::string &dir)
{
    std::string found;
    DIR *d = opendir(dir.c_str());
    for (struct dirent *e; d && (e = readdir(d));)
        if (std::string(e->d_name).rfind("numrpc-mpi-", 0) == 0) found = dir + "/" + e->d_name;
    if (d) closedir(d);
    return found;
}

// A server whose MPI job (the --mpi-* arguments among args) keeps its
// files in dir: the server starts with TMPDIR set to it.
struct MpiServer {
    TempDir dir{"numrpc-mpi-test"};
    std::unique_ptr<ServerProc> server;
    void Start(const std::vector<std::string> &args)
    {
        setenv("TMPDIR", dir.path.c_str(), 1);
        server = std::make_unique<ServerProc>(args);
        unsetenv("TMPDIR");
    }
    std::string job_dir() const { return JobDir(dir.path); }
    // Starts the server with a 4-rank job, 3 workers, /metrics on a free
    // port, and extra arguments.
    void StartWithMetrics(const std::vector<std::string> &extra)
    {
        std::vector<std::string> args = MpiArgs();
        args.insert(args.end(), {"--http-port", "0", "--http-port-file", dir.path + "/http.port", "--workers", "3"});
        args.insert(args.end(), extra.begin(), extra.end());
        Start(args);
        http_port = ReadPortFile(dir.path + "/http.port");
    }
    std::string metrics() const { return "http://127.0.0.1:" + std::to_string(http_port) + "/metrics"; }
    int http_port = 0;
};

// A rows x cols column-major matrix of leading dimension ld, uniform in
// [-1, 1) from gen, with -7 in the rows beyond rows that must never change.
inline std::vector<double> RandomMatrix(int rows, int cols, int ld, std::mt19937 &gen)
{
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> m(static_cast<size_t>(ld) * cols, -7.0);
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++) m[static_cast<size_t>(j) * ld + i] = u(gen);
    return m;
}

// A system A X = B of order n (leading dimensions lda, ldb), random, with
// -7 in the rows beyond n.
struct System {
    int n, nrhs, lda, ldb;
    std::vector<double> a, b;
    System(int n_, int nrhs_, int lda_, int ldb_, unsigned seed) : n(n_), nrhs(nrhs_), lda(lda_), ldb(ldb_)
    {
        std::mt19937 gen(seed);
        a = RandomMatrix(n, n, lda, gen);
        b = RandomMatrix(n, nrhs, ldb, gen);
    }
};

// remote equals local (rows x cols of leading dimension ld) within tol
// relative to local's largest element (or 1), and the rows beyond rows
// are exactly local's (the caller's, untouched).
inline void ExpectMatrixNear(const std::vector<double> &remote, const std::vector<double> &local, int rows,
                             int cols, int ld, double tol, const std::string &what)
{
    ASSERT_EQ(remote.size(), local.size()) << what;
    double scale = 1.0, err = 0.0;
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < ld; i++) {
            size_t at = static_cast<size_t>(j) * ld + i;
            if (i >= rows) {
                EXPECT_EQ(remote[at], local[at]) << what << ": row " << i << " beyond " << rows;
                continue;
            }
            double diff = std::fabs(remote[at] - local[at]);
            scale = std::max(scale, std::fabs(local[at]));
            if (!(diff <= err)) err = diff; /* a NaN stays, and fails */
        }
    EXPECT_LE(err, tol * scale) << what << " (" << rows << " x " << cols << ", ld " << ld << ")";
}

// pdgesv through the server equals dgesv here on the same system: the
// solution within 1e-9 relative (well within a random system's
// conditioning at these sizes), the pivots and info exactly, the LU
// factors within 1e-9, and no element beyond n touched.
inline void ExpectPdgesvEqualsDgesv(const std::string &routine, int n, int nrhs, int lda, int ldb, unsigned seed)
{
    System remote(n, nrhs, lda, ldb, seed), local(n, nrhs, lda, ldb, seed);
    std::vector<int> ipiv_r(n, -1), ipiv_l(n, -2);
    int info_r = -5, info_l = -6;
    ASSERT_EQ(numrpc_call(routine.c_str(), n, nrhs, remote.a.data(), lda, ipiv_r.data(), remote.b.data(), ldb,
                          &info_r),
              NUMRPC_OK)
        << Detail();
    dgesv_(&n, &nrhs, local.a.data(), &lda, ipiv_l.data(), local.b.data(), &ldb, &info_l);
    EXPECT_EQ(info_r, info_l);
    EXPECT_EQ(ipiv_r, ipiv_l) << "n " << n;
    ExpectMatrixNear(remote.b, local.b, n, nrhs, ldb, 1e-9, "X of " + routine);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < lda; i++) {
            double r = remote.a[j * lda + i], l = local.a[j * lda + i];
            if (i >= n) EXPECT_EQ(r, -7.0) << "a row " << i << " beyond n";
            else EXPECT_NEAR(r, l, 1e-9 * std::max(1.0, std::fabs(l))) << i << "," << j;
        }
}

// The worker rank 0 serves now, from its record (0: none).
inline int ServingPid(const std::string &job_dir)
{
    std::ifstream in(job_dir + "/serving");
    int pid = 0;
    in >> pid;
    return pid;
}

// The pids of the engine's ranks whose socket is in job_dir.
inline std::vector<pid_t> EnginePids(const std::string &job_dir)
{
    std::vector<pid_t> pids;
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d));) {
        pid_t pid = static_cast<pid_t>(atoi(e->d_name));
        if (pid <= 0) continue;
        std::ifstream in(std::string("/proc/") + e->d_name + "/cmdline");
        std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (cmd.rfind(kEngine, 0) == 0 && cmd.find(job_dir) != std::string::npos) pids.push_back(pid);
    }
    if (d) closedir(d);
    return pids;
}

// Waits (at most 20 s) until the job runs some worker's call (rank 0 has
// read it whole): true then.
inline bool WaitUntilServing(const std::string &job_dir)
{
    for (int i = 0; i < 2000; i++) {
        if (ServingPid(job_dir) > 0) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

#endif
