// mpi_errors_test.cc -- an MPI routine on a server without a job, and on
// one whose job cannot start: clear errors, and the server stays up.
#include "../support/server_proc.h"
#include "mpi_support.h"

namespace {

void CallPdgesv(int *rc, std::string *detail)
{
    std::vector<double> a{2.0}, b{4.0};
    std::vector<int> ipiv(1);
    int info = 0;
    *rc = numrpc_call("pdgesv", 1, 1, a.data(), 1, ipiv.data(), b.data(), 1, &info);
    *detail = Detail();
}

TEST(MpiErrors, NotConfigured)
{
    ServerProc server({"--admin-socket", "none"});
    UseServer(server.address());
    int rc;
    std::string detail;
    CallPdgesv(&rc, &detail);
    EXPECT_EQ(rc, NUMRPC_ESERVER);
    EXPECT_TRUE(Contains(detail, "pdgesv runs on an MPI job, and this server was started without --mpi-ranks"))
        << detail;
    ExpectPdgesvEqualsDgesv("dgesv", 4, 1, 4, 4, 1); /* the local twin still works */
    EXPECT_TRUE(server.alive());
}

// mpirun cannot read the host file: each call says so with mpirun's words,
// and the server goes on serving its other routines.
TEST(MpiErrors, JobThatCannotStart)
{
    TempDir dir("numrpc-mpi-errors");
    std::string hosts = dir.path + "/no-such-hostfile";
    std::vector<std::string> args = MpiArgs(2);
    args.insert(args.end(), {"--mpi-hostfile", hosts, "--admin-socket", "none"});
    ServerProc server(args);
    UseServer(server.address());
    for (int i = 0; i < 2; i++) {
        int rc;
        std::string detail;
        CallPdgesv(&rc, &detail);
        EXPECT_EQ(rc, NUMRPC_ESERVER);
        EXPECT_TRUE(Contains(detail, "pdgesv: the MPI job is not running: mpirun could not start the MPI job"))
            << detail;
        EXPECT_TRUE(Contains(detail, "no-such-hostfile")) << detail; /* mpirun's own words */
    }
    ExpectPdgesvEqualsDgesv("dgesv", 4, 1, 4, 4, 2);
    EXPECT_TRUE(server.alive());
}

// Options that cannot make a job stop the server at start.
TEST(MpiErrors, BadOptionsStopTheServer)
{
    std::string err;
    EXPECT_EQ(run_server_to_exit({"--mpi-ranks", "4", "--mpi-grid", "3x2"}, &err), 2);
    EXPECT_TRUE(Contains(err, "--mpi-grid 3x2 has 6 places for --mpi-ranks 4")) << err;
    EXPECT_EQ(run_server_to_exit({"--mpi-ranks", "0"}, &err), 2);
    EXPECT_TRUE(Contains(err, "--mpi-ranks 0: want a whole number from 1 to 4096")) << err;
    EXPECT_EQ(run_server_to_exit({"--mpi-hostfile", "h"}, &err), 2);
    EXPECT_TRUE(Contains(err, "the --mpi-* options need --mpi-ranks N")) << err;
}

}  // namespace
