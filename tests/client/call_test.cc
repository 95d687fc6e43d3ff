// call_test.cc -- remote LINPACK and BLAS calls through a real server,
// checked against the plain LINPACK reference and local computation.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "../support/linpack_ref.h"
#include "../support/server_proc.h"
#include "numrpc.h"

namespace {

class RemoteCall : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { server_ = new ServerProc(); }
    static void TearDownTestSuite()
    {
        numrpc_finalize();
        delete server_;
        server_ = nullptr;
    }
    void SetUp() override { configure(0); }
    void configure(size_t packet_size)
    {
        std::string addr = server_->address();
        numrpc_config cfg{addr.c_str(), packet_size, nullptr, nullptr};
        ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK);
    }
    static ServerProc *server_;
};
ServerProc *RemoteCall::server_ = nullptr;

struct Case {
    int n, lda;
};

class Linpack : public RemoteCall, public ::testing::WithParamInterface<Case> {};

TEST_P(Linpack, DgefaDgeslMatchReference)
{
    const int n = GetParam().n, lda = GetParam().lda;
    std::vector<double> a(static_cast<size_t>(lda) * n), ref(a.size()), orig;
    ref_fill_random(a.data(), lda, n, 1234u + static_cast<unsigned>(n));
    ref = a;
    orig = a;
    std::vector<int> ipvt(n, -7), ref_ipvt(n, -7);
    int info = -99, ref_info = -99;

    ASSERT_EQ(numrpc_call("dgefa", a.data(), lda, n, ipvt.data(), &info), NUMRPC_OK)
        << numrpc_last_error_detail();
    ref_dgefa(ref.data(), lda, n, ref_ipvt.data(), &ref_info);
    EXPECT_EQ(info, ref_info);
    EXPECT_EQ(ipvt, ref_ipvt);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < lda; i++) {
            size_t k = static_cast<size_t>(j) * lda + i;
            if (i < n)
                ASSERT_LE(std::fabs(a[k] - ref[k]), 1e-10 * (1 + std::fabs(ref[k]))) << i << "," << j;
            else
                ASSERT_EQ(a[k], ref_sentinel(i, j)) << "row beyond n touched at " << i << "," << j;
        }

    for (int job = 0; job <= 1; job++) {
        std::vector<double> b(n), x, ref_x;
        for (int i = 0; i < n; i++) b[i] = std::sin(1.0 + i);
        x = b;
        ref_x = b;
        ASSERT_EQ(numrpc_call("dgesl", a.data(), lda, n, ipvt.data(), x.data(), job), NUMRPC_OK)
            << numrpc_last_error_detail();
        ref_dgesl(ref.data(), lda, n, ref_ipvt.data(), ref_x.data(), job);
        for (int i = 0; i < n; i++) EXPECT_NEAR(x[i], ref_x[i], 1e-8 * (1 + std::fabs(ref_x[i])));
        double resid = job == 0 ? ref_residual(orig.data(), lda, n, x.data(), b.data())
                                : ref_residual_trans(orig.data(), lda, n, x.data(), b.data());
        EXPECT_LT(resid, 10.0) << "job " << job;
    }
}

TEST_P(Linpack, OneCallLinpackSolves)
{
    const int n = GetParam().n, lda = GetParam().lda;
    std::vector<double> a(static_cast<size_t>(lda) * n);
    ref_fill_random(a.data(), lda, n, 99u + static_cast<unsigned>(n));
    const std::vector<double> orig = a;
    std::vector<double> b(n), x;
    for (int i = 0; i < n; i++) b[i] = std::cos(0.5 * i);
    x = b;
    std::vector<int> ipvt(n);
    int info = -1;
    ASSERT_EQ(numrpc_call("linpack", a.data(), lda, n, ipvt.data(), x.data(), &info), NUMRPC_OK)
        << numrpc_last_error_detail();
    EXPECT_EQ(info, 0);
    EXPECT_EQ(a, orig) << "a is IN only: the caller's copy must not change";
    EXPECT_LT(ref_residual(orig.data(), lda, n, x.data(), b.data()), 10.0);
}

INSTANTIATE_TEST_SUITE_P(Sizes, Linpack,
                         ::testing::Values(Case{1, 1}, Case{1, 8}, Case{2, 2}, Case{2, 9},
                                           Case{17, 17}, Case{17, 24}, Case{100, 100},
                                           Case{100, 107}, Case{500, 500}, Case{500, 507}),
                         [](const ::testing::TestParamInfo<Case> &i) {
                             return "n" + std::to_string(i.param.n) + "_lda" + std::to_string(i.param.lda);
                         });

TEST_F(RemoteCall, SingularMatrixGivesInfoK)
{
    const int n = 6, lda = 6, zero_col = 3;  // 1-based column 4 is zero
    std::vector<double> a(lda * n), ref;
    ref_fill_random(a.data(), lda, n, 7u);
    for (int i = 0; i < n; i++) a[zero_col * lda + i] = 0.0;
    ref = a;
    std::vector<int> ipvt(n), ref_ipvt(n);
    int info = 0, ref_info = 0;
    ASSERT_EQ(numrpc_call("dgefa", a.data(), lda, n, ipvt.data(), &info), NUMRPC_OK);
    ref_dgefa(ref.data(), lda, n, ref_ipvt.data(), &ref_info);
    EXPECT_EQ(ref_info, zero_col + 1);
    EXPECT_EQ(info, ref_info);
    EXPECT_EQ(ipvt, ref_ipvt);
}

TEST_F(RemoteCall, PacketSizesGiveIdenticalResults)
{
    const int n = 300, lda = 311;
    std::vector<double> a0(static_cast<size_t>(lda) * n);
    ref_fill_random(a0.data(), lda, n, 4242u);
    std::vector<double> first_a;
    std::vector<int> first_ipvt;
    for (size_t packet : {512u, 4096u, 65536u, 1u << 20}) {
        configure(packet);
        std::vector<double> a = a0;
        std::vector<int> ipvt(n);
        int info = -1;
        ASSERT_EQ(numrpc_call("dgefa", a.data(), lda, n, ipvt.data(), &info), NUMRPC_OK)
            << "packet " << packet << ": " << numrpc_last_error_detail();
        numrpc_call_info ci;
        numrpc_last_call_info(&ci);
        // The matrix crosses in packets of this size: at least one header each.
        EXPECT_GE(ci.bytes_sent, static_cast<uint64_t>(n) * n * 8 + 16 * (n * n * 8 / packet));
        if (first_a.empty()) {
            first_a = a;
            first_ipvt = ipvt;
        } else {
            EXPECT_EQ(a, first_a) << "packet " << packet;
            EXPECT_EQ(ipvt, first_ipvt) << "packet " << packet;
        }
    }
}

TEST_F(RemoteCall, StridedDcopyTouchesOnlyStridedElements)
{
    const int n = 1000, incx = 2, incy = 3;
    std::vector<double> x(1 + (n - 1) * incx), y(1 + (n - 1) * incy, -1.0);
    for (size_t i = 0; i < x.size(); i++) x[i] = 0.25 * static_cast<double>(i);
    ASSERT_EQ(numrpc_call("dcopy", n, x.data(), incx, y.data(), incy), NUMRPC_OK)
        << numrpc_last_error_detail();
    for (size_t i = 0; i < y.size(); i++) {
        if (i % incy == 0) EXPECT_EQ(y[i], x[(i / incy) * incx]) << i;
        else EXPECT_EQ(y[i], -1.0) << "gap element " << i << " touched";
    }
    numrpc_call_info ci;
    numrpc_last_call_info(&ci);
    EXPECT_LT(ci.bytes_sent, static_cast<uint64_t>(n) * 8 + 1024) << "only n elements travel";
}

TEST_F(RemoteCall, LeadingDimensionMovesOnlyTheUsedPart)
{
    const int n = 200, lda = 2 * n;
    std::vector<double> a(static_cast<size_t>(lda) * n);
    ref_fill_random(a.data(), lda, n, 5u);
    std::vector<int> ipvt(n);
    int info;
    ASSERT_EQ(numrpc_call("dgefa", a.data(), lda, n, ipvt.data(), &info), NUMRPC_OK);
    numrpc_call_info ci;
    numrpc_last_call_info(&ci);
    const uint64_t used = static_cast<uint64_t>(n) * n * 8;
    EXPECT_GE(ci.bytes_sent, used);
    EXPECT_LT(ci.bytes_sent, used + used / 100 + 1024);
    EXPECT_LT(ci.bytes_received, used + used / 100 + 1024 + static_cast<uint64_t>(n) * 4);
    EXPECT_GE(ci.compute_seconds, 0.0);
    EXPECT_GT(ci.total_seconds, 0.0);
}

TEST_F(RemoteCall, UrlNamesOneServer)
{
    numrpc_config none{"127.0.0.1:1", 0, nullptr, nullptr};  // the configured server is wrong...
    ASSERT_EQ(numrpc_init(&none), NUMRPC_OK);
    std::string url = "numrpc://" + server_->address() + "/ping";
    EXPECT_EQ(numrpc_call(url.c_str()), NUMRPC_OK) << numrpc_last_error_detail();  // ...the URL wins
    numrpc_call_info ci;
    numrpc_last_call_info(&ci);
    EXPECT_EQ(std::string(ci.server), server_->address());
}

TEST_F(RemoteCall, CallvWithTaggedArguments)
{
    const int n = 64;
    std::vector<double> x(n), y(n, 0.0);
    for (int i = 0; i < n; i++) x[i] = i * 1.5;
    numrpc_arg args[5];
    args[0].type = NUMRPC_T_INT;
    args[0].v.i = n;
    args[1].type = NUMRPC_T_DOUBLE;
    args[1].v.p = x.data();
    args[2].type = NUMRPC_T_VOID;  // type taken from the interface
    args[2].v.i = 1;
    args[3].type = NUMRPC_T_DOUBLE;
    args[3].v.p = y.data();
    args[4].type = NUMRPC_T_INT;
    args[4].v.i = 1;
    ASSERT_EQ(numrpc_callv("dcopy", args, 5), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_EQ(x, y);
    args[0].type = NUMRPC_T_DOUBLE;  // n is an int: a wrong tag is refused
    EXPECT_EQ(numrpc_callv("dcopy", args, 5), NUMRPC_EINVAL);
    EXPECT_NE(std::string(numrpc_last_error_detail()).find("argument 1 (n) is int"), std::string::npos)
        << numrpc_last_error_detail();
}

TEST_F(RemoteCall, ListAndDescribe)
{
    char *names = nullptr;
    std::string addr = server_->address();
    ASSERT_EQ(numrpc_list(addr.c_str(), &names), NUMRPC_OK);
    std::string list(names);
    free(names);
    for (const char *want : {"ping\n", "dgefa\n", "dgesl\n", "linpack\n", "dcopy\n"})
        EXPECT_NE(list.find(want), std::string::npos) << want;
    char *idl = nullptr;
    ASSERT_EQ(numrpc_describe("dgefa", &idl), NUMRPC_OK);
    std::string text(idl);
    free(idl);
    EXPECT_NE(text.find("INOUT double a[lda:n][n]"), std::string::npos) << text;
    EXPECT_NE(text.find("OUT int *info"), std::string::npos) << text;
    EXPECT_NE(text.find("Calls \"Fortran\" dgefa_"), std::string::npos) << text;
}

// What a binding (Python) reads: parameters, then the shapes the interface
// gives for the scalars at hand, used to allocate an OUT array it was not
// given; the call made with that array matches the LINPACK reference.
TEST_F(RemoteCall, RoutineInterfaceForBindings)
{
    numrpc_routine *r = nullptr;
    ASSERT_EQ(numrpc_routine_get("dgefa", &r), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_STREQ(numrpc_routine_name(r), "dgefa");
    EXPECT_STREQ(numrpc_routine_module(r), "linpack");
    EXPECT_NE(numrpc_routine_hash(r), 0u);
    ASSERT_EQ(numrpc_routine_nparams(r), 5);
    struct Want {
        const char *name;
        int type, mode, rank;
    } want[] = {{"a", NUMRPC_T_DOUBLE, NUMRPC_MODE_INOUT, 2},
                {"lda", NUMRPC_T_INT, NUMRPC_MODE_IN, 0},
                {"n", NUMRPC_T_INT, NUMRPC_MODE_IN, 0},
                {"ipvt", NUMRPC_T_INT, NUMRPC_MODE_OUT, 1},
                {"info", NUMRPC_T_INT, NUMRPC_MODE_OUT, 0}};
    for (int i = 0; i < 5; i++) {
        numrpc_param_info p;
        ASSERT_EQ(numrpc_routine_param(r, i, &p), NUMRPC_OK);
        EXPECT_STREQ(p.name, want[i].name);
        EXPECT_EQ(p.type, want[i].type) << p.name;
        EXPECT_EQ(p.mode, want[i].mode) << p.name;
        EXPECT_EQ(p.rank, want[i].rank) << p.name;
    }
    numrpc_param_info none;
    EXPECT_EQ(numrpc_routine_param(r, 5, &none), NUMRPC_EINVAL);
    EXPECT_STREQ(numrpc_last_error_detail(), "parameter 5 of dgefa does not exist");

    const int n = 6, lda = 9;
    numrpc_arg args[5] = {};
    args[0].type = NUMRPC_T_DOUBLE;
    args[1].type = NUMRPC_T_INT;
    args[1].v.i = lda;
    args[2].type = NUMRPC_T_INT;
    args[2].v.i = n;
    args[3].type = NUMRPC_T_INT;
    args[4].type = NUMRPC_T_INT;
    numrpc_param_shape sh[5];
    ASSERT_EQ(numrpc_routine_shapes(r, args, 5, sh), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_EQ(sh[0].rank, 2);
    EXPECT_EQ(sh[0].dims[0], lda);
    EXPECT_EQ(sh[0].dims[1], n);
    EXPECT_EQ(sh[0].elems, static_cast<uint64_t>(lda * n));
    EXPECT_EQ(sh[0].travel, static_cast<uint64_t>(n * n));
    EXPECT_EQ(sh[3].rank, 1);
    EXPECT_EQ(sh[3].dims[0], n);
    EXPECT_EQ(sh[1].rank, 0);

    std::vector<double> a(sh[0].elems), ref;
    ref_fill_random(a.data(), lda, n, 77u);
    ref = a;
    std::vector<int> ipvt(sh[3].elems, -1), ref_ipvt(n);
    int info = -1, ref_info = -1;
    args[0].v.p = a.data();
    args[3].v.p = ipvt.data();
    args[4].v.p = &info;
    ASSERT_EQ(numrpc_callv("dgefa", args, 5), NUMRPC_OK) << numrpc_last_error_detail();
    ref_dgefa(ref.data(), lda, n, ref_ipvt.data(), &ref_info);
    EXPECT_EQ(info, ref_info);
    EXPECT_EQ(ipvt, ref_ipvt);

    args[2].v.i = -3; // a negative extent is the caller's mistake, named
    EXPECT_EQ(numrpc_routine_shapes(r, args, 5, sh), NUMRPC_EINVAL);
    EXPECT_NE(std::string(numrpc_last_error_detail()).find("dgefa"), std::string::npos) << numrpc_last_error_detail();
    char *idl = nullptr;
    ASSERT_EQ(numrpc_routine_idl(r, &idl), NUMRPC_OK);
    EXPECT_NE(std::string(idl).find("OUT int ipvt[n]"), std::string::npos) << idl;
    free(idl);
    numrpc_routine_free(r);
    EXPECT_EQ(numrpc_routine_get("no_such_routine", &r), NUMRPC_ENOENT);
}

}  // namespace
