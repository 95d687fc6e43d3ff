// mpi_test.cc -- MPI routines through one real server and its resident job
// of 4 ranks: pdgesv against dgesv, the descriptor, live registration, the
// job's phases in /metrics, and a rank killed, a cancel and a deadline.
#include <sys/stat.h>

#include <algorithm>

#include "../support/admin_socket.h"
#include "../support/http_probe.h"
#include "../support/server_proc.h"
#include "mpi_support.h"

extern "C" {
#include "msg.h"
}

namespace {

// One server for the whole program: the job starts once (about 1 s).
struct Job : MpiServer {
    std::string admin;
    Job()
    {
        admin = dir.path + "/admin.sock";
        StartWithMetrics({"--admin-socket", admin});
    }
};

Job *job;

class Mpi : public ::testing::Test {
  protected:
    static void SetUpTestSuite()
    {
        if (job == nullptr) job = new Job();
    }
    void SetUp() override
    {
        UseServer(job->server->address());
        numrpc_set_timeout(0);
    }
};

TEST_F(Mpi, PdgesvEqualsDgesv)
{
    struct Size {
        int n, nrhs, lda, ldb;
    } sizes[] = {{1, 1, 1, 1}, {1, 2, 3, 2}, {2, 1, 5, 4}, {7, 3, 9, 8}, {63, 1, 64, 70},
                 {64, 2, 66, 65}, {65, 5, 65, 67}, {130, 1, 131, 133}, {257, 4, 260, 258}};
    unsigned seed = 1;
    for (const Size &s : sizes) ExpectPdgesvEqualsDgesv("pdgesv", s.n, s.nrhs, s.lda, s.ldb, seed++);
    EXPECT_TRUE(job->server->alive());
}

// A bad argument is the routine's error, from the engine, for this call only.
TEST_F(Mpi, BadArgumentsAreTheCallsError)
{
    std::vector<double> a(4), b(2);
    std::vector<int> ipiv(2);
    int info = 0;
    EXPECT_EQ(numrpc_call("pdgesv", 2, 1, a.data(), 2, ipiv.data(), b.data(), 2, &info), NUMRPC_OK) << Detail();
    // lda < n is caught by the shape check before the job sees it.
    EXPECT_EQ(numrpc_call("pdgesv", 2, 1, a.data(), 1, ipiv.data(), b.data(), 2, &info), NUMRPC_EINVAL);
    ExpectPdgesvEqualsDgesv("pdgesv", 5, 1, 5, 5, 99);
}

// The descriptor a client fetches says where the routine runs; a local
// routine's says nothing new.
TEST_F(Mpi, DescriptorCarriesTheBackend)
{
    msg_conn c;
    err_t err;
    ASSERT_EQ(msg_conn_open(&c, "127.0.0.1", job->server->port(), 2000, 5000, 4096, &err), 0) << err.detail;
    for (const char *name : {"pdgesv", "dgesv"}) {
        uint32_t id = msg_conn_next_id(&c), len = 0;
        uint8_t *blob = nullptr;
        ASSERT_EQ(msg_write_get_iface(&c.writer, id, name, &err), 0) << err.detail;
        ASSERT_EQ(msg_read_iface_reply(&c.reader, id, c.label, &blob, &len, &err), 0) << err.detail;
        iface_t f;
        ASSERT_EQ(iface_decode(blob, len, &f, &err), 0) << err.detail;
        free(blob);
        bool mpi = std::string(name) == "pdgesv";
        EXPECT_EQ(f.backend, static_cast<uint32_t>(mpi ? IFACE_BACKEND_MPI : IFACE_BACKEND_LOCAL)) << name;
        EXPECT_EQ(f.ranks, 0u);
        EXPECT_EQ(f.nparams, 8u);
        iface_free(&f);
    }
    msg_conn_free(&c);
}

// A module of MPI routines registered while the server runs is served by
// the same job; a routine asking for 2 ranks is refused by the 4-rank job.
TEST_F(Mpi, LiveRegisteredMpiRoutines)
{
    std::string reply = Admin(job->admin, "register " TOP_BUILDDIR "/tests/mpi/.libs/mpilive.so");
    ASSERT_EQ(reply.rfind("ok", 0), 0u) << reply;
    ExpectPdgesvEqualsDgesv("pdgesv_live", 40, 2, 41, 42, 7);
    std::vector<double> a(4), b(2);
    std::vector<int> ipiv(2);
    int info = 0;
    EXPECT_EQ(numrpc_call("pdgesv_two", 2, 1, a.data(), 2, ipiv.data(), b.data(), 2, &info), NUMRPC_EINVAL);
    EXPECT_TRUE(Contains(Detail(), "pdgesv_two runs on 2 ranks; this server's MPI job has 4")) << Detail();
}

// The engine's scatter, compute and gather seconds reach /metrics.
TEST_F(Mpi, PhasesReachMetrics)
{
    if (!HavePrometheusParser() || job->http_port == 0) GTEST_SKIP() << "no Prometheus parser or HTTP port";
    ExpectPdgesvEqualsDgesv("pdgesv", 200, 1, 200, 200, 3);
    Scrape s = Fetch(job->metrics());
    ASSERT_EQ(s.status, 200) << s.body;
    ASSERT_EQ(s.error, "") << s.body;
    for (const char *phase : {"scatter", "compute", "gather"})
        EXPECT_GT(s.Value("numrpc_mpi_phase_seconds_total", {{"routine", "pdgesv"}, {"phase", phase}}), 0.0)
            << phase;
    EXPECT_EQ(s.Value("numrpc_mpi_job_up"), 1.0);
    EXPECT_GE(s.Value("numrpc_mpi_job_starts_total"), 1.0);
    EXPECT_EQ(s.Value("numrpc_mpi_phase_seconds_total", {{"routine", "dgesv"}, {"phase", "compute"}}), -1.0);
}

// The job's starts as /metrics counts them (-1 without a parser), once
// the server is quiet: no worker busy, the job up and rank 0 serving no
// one.  A call abandoned just before (the test before this one ends as
// soon as its client gives up) may still be computing on the job, and its
// worker's end would stop the job a moment later; once rank 0 serves no
// one after every worker is idle, no stop is coming.
double Starts()
{
    if (!HavePrometheusParser() || job->http_port == 0) return -1;
    const std::string dir = job->job_dir();
    double starts = -1;
    for (int i = 0; i < 600; i++) {
        Scrape s = Fetch(job->metrics());
        if (s.Value("numrpc_server_workers", {{"state", "busy"}}) == 0 && s.Value("numrpc_mpi_job_up") == 1 &&
            ServingPid(dir) == 0)
            return s.Value("numrpc_mpi_job_starts_total");
        starts = s.Value("numrpc_mpi_job_starts_total");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "the server was never quiet (a worker busy, or the job down or serving)";
    return starts;
}

// An asynchronous pdgesv of order n, started; its system stays alive.
struct Started {
    System sys;
    std::vector<int> ipiv;
    int info = -1, id = -1;
    explicit Started(int n) : sys(n, 1, n, n, 11), ipiv(n)
    {
        EXPECT_EQ(numrpc_call_async(&id, "pdgesv", n, 1, sys.a.data(), n, ipiv.data(), sys.b.data(), n, &info),
                  NUMRPC_OK)
            << Detail();
    }
};

// A rank killed mid-call fails that call with a clear error naming the MPI
// job; the job is restarted and the next call succeeds.
TEST_F(Mpi, RankKilledMidCall)
{
    std::string dir = job->job_dir();
    ASSERT_NE(dir, "");
    ExpectPdgesvEqualsDgesv("pdgesv", 3, 1, 3, 3, 5); /* the job is up */
    std::vector<pid_t> ranks = EnginePids(dir);
    ASSERT_EQ(ranks.size(), 4u);
    Started call(1500);
    ASSERT_TRUE(WaitUntilServing(dir));
    ASSERT_EQ(kill(ranks[2], SIGKILL), 0);
    EXPECT_EQ(numrpc_wait(call.id), NUMRPC_ECRASHED);
    std::string detail = Detail();
    EXPECT_TRUE(Contains(detail, "pdgesv: the MPI job died during the call")) << detail;
    EXPECT_TRUE(Contains(detail, "mpirun")) << detail;
    ExpectPdgesvEqualsDgesv("pdgesv", 50, 2, 52, 51, 6);
    EXPECT_EQ(EnginePids(dir).size(), 4u);
    EXPECT_TRUE(job->server->alive());
}

// A call that waits behind one whose deadline passes while the job computes
// it: the supervisor stops the job for the abandoned call, and may do so
// just after rank 0 took the waiting one (rank 0 finished the abandoned
// call in that moment).  The waiting call then runs on the next job: it
// succeeds, equal to dgesv, whatever the timing (A's order sweeps its
// compute time across the deadline).
TEST_F(Mpi, ACallBehindAnAbandonedOneSucceeds)
{
    ExpectPdgesvEqualsDgesv("pdgesv", 3, 1, 3, 3, 5);
    int timed_out = 0;
    for (int i = 0; i < 8; i++) {
        numrpc_set_timeout(0.05);
        /* the last round's 18 Gflop outlast 50 ms on any machine: one is abandoned */
        Started abandoned(i < 7 ? 700 + 100 * i : 3000);
        numrpc_set_timeout(0);
        Started behind(40);
        int rc = numrpc_wait(abandoned.id);
        EXPECT_TRUE(rc == NUMRPC_ETIMEDOUT || rc == NUMRPC_OK) << rc << " " << Detail();
        timed_out += rc == NUMRPC_ETIMEDOUT;
        ASSERT_EQ(numrpc_wait(behind.id), NUMRPC_OK) << "round " << i << ": " << Detail();
        EXPECT_EQ(behind.info, 0);
        System local(40, 1, 40, 40, 11);
        std::vector<int> ipiv(40);
        int info = -1, n = 40, one = 1;
        dgesv_(&n, &one, local.a.data(), &n, ipiv.data(), local.b.data(), &n, &info);
        ExpectMatrixNear(behind.sys.b, local.b, 40, 1, 40, 1e-9, "the call behind, round " + std::to_string(i));
    }
    EXPECT_GT(timed_out, 0) << "no call was abandoned: the test did not test";
}

// A cancelled call ends as any call does; the job, computing for nobody, is
// restarted (so the next call does not wait for it) and the next call works.
TEST_F(Mpi, CancelRestartsTheJob)
{
    std::string dir = job->job_dir();
    ExpectPdgesvEqualsDgesv("pdgesv", 3, 1, 3, 3, 5);
    double before = Starts();
    Started call(3000); /* about a second of work on 4 ranks sharing 2 cores */
    ASSERT_TRUE(WaitUntilServing(dir));
    const std::vector<pid_t> computing = EnginePids(dir);
    ASSERT_EQ(numrpc_cancel(call.id), NUMRPC_OK);
    EXPECT_EQ(numrpc_wait(call.id), NUMRPC_ECANCELLED) << Detail();
    ExpectPdgesvEqualsDgesv("pdgesv", 30, 1, 30, 30, 8);
    if (before >= 0) EXPECT_EQ(Starts(), before + 1);
    for (pid_t rank : EnginePids(dir))
        EXPECT_EQ(std::count(computing.begin(), computing.end(), rank), 0) << "rank " << rank << " still computes";
}

// A deadline ends the call with NUMRPC_ETIMEDOUT (0.2 s for a call that
// takes seconds here: 72 MB each way and 18 Gflop); the next call works.
TEST_F(Mpi, DeadlineEndsTheCall)
{
    const int n = 3000;
    System sys(n, 1, n, n, 12);
    std::vector<int> ipiv(n);
    int info = 0;
    ExpectPdgesvEqualsDgesv("pdgesv", 3, 1, 3, 3, 5);
    numrpc_set_timeout(0.2);
    EXPECT_EQ(numrpc_call("pdgesv", n, 1, sys.a.data(), n, ipiv.data(), sys.b.data(), n, &info), NUMRPC_ETIMEDOUT);
    EXPECT_TRUE(Contains(Detail(), "deadline")) << Detail();
    numrpc_set_timeout(0);
    ExpectPdgesvEqualsDgesv("pdgesv", 20, 1, 20, 20, 9);
}

}  // namespace

int main(int argc, char **argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    int rc = RUN_ALL_TESTS();
    delete job; /* the server, and with it the job, stops */
    return rc;
}
