// gridrpc_data_test.cc -- GFD.186 data management on numrpc handles against a
// real server: a matrix put once then dgefa/dgesl and dgemm with grpc_data_t
// arguments, results equal to local LAPACK/BLAS; the errors' GRPC codes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../async/async_support.h"
#include "numrpc_gridrpc.h"

extern "C" {
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda,
             const int *ipiv, double *b, const int *ldb, int *info, size_t trans_len);
void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc, size_t transa_len, size_t transb_len);
}

namespace {

AsyncDir *dir_ = nullptr;
ServerProc *server_ = nullptr;

class Env : public ::testing::Environment {
  public:
    void SetUp() override
    {
        dir_ = new AsyncDir();
        server_ = new ServerProc(dir_->server_args(2));
    }
    void TearDown() override
    {
        numrpc_finalize();
        delete server_;
        delete dir_;
    }
};
::testing::Environment *const env = ::testing::AddGlobalTestEnvironment(new Env);

const int kN = 48;

std::vector<double> Matrix(int n, int seed)
{
    std::vector<double> a((size_t)n * n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) a[(size_t)j * n + i] = std::sin(seed + 3.0 * i + 7.0 * j) + (i == j ? n : 0);
    return a;
}

double MaxDiff(const std::vector<double> &x, const std::vector<double> &y)
{
    double d = 0;
    for (size_t i = 0; i < x.size(); i++) d = std::max(d, std::fabs(x[i] - y[i]));
    return d;
}

// Every test runs inside initialize..finalize, with dgefa, dgesl and dgemm bound.
class GrpcData : public ::testing::Test {
  protected:
    void SetUp() override
    {
        ASSERT_EQ(GRPC_NO_ERROR, grpc_initialize(nullptr));
        server_uri_ = "numrpc://" + server_->address();
        ASSERT_EQ(GRPC_NO_ERROR, grpc_function_handle_init(&dgefa_, server_->address().c_str(), "dgefa"));
        ASSERT_EQ(GRPC_NO_ERROR, grpc_function_handle_init(&dgesl_, server_->address().c_str(), "dgesl"));
        ASSERT_EQ(GRPC_NO_ERROR, grpc_function_handle_init(&dgemm_h_, server_->address().c_str(), "dgemm"));
    }
    void TearDown() override { EXPECT_EQ(GRPC_NO_ERROR, grpc_finalize()); }

    // grpc_data_init of an n x n double matrix from memory key (or none) to outs.
    grpc_error_t Init(grpc_data_t *d, const char *key, std::vector<std::string> outs,
                      std::vector<grpc_data_mode_t> modes)
    {
        std::string in = key ? std::string("memory://localhost/") + key : "";
        const char *ins[] = {key ? in.c_str() : nullptr, nullptr};
        std::vector<const char *> out;
        for (auto &o : outs) out.push_back(o.c_str());
        out.push_back(nullptr);
        modes.push_back(GRPC_END_LIST);
        size_t dims[] = {(size_t)kN, (size_t)kN, 0};
        return grpc_data_init(d, ins, out.data(), GRPC_DOUBLE, dims, modes.data());
    }

    std::string server_uri_;
    grpc_function_handle_t dgefa_, dgesl_, dgemm_h_;
};

TEST_F(GrpcData, DgefaDgeslOnServerDataEqualLapack)
{
    int n = kN, info = -1, one = 1;
    std::vector<double> a = Matrix(n, 1), lu = a, b(n), x, factors((size_t)n * n, 0);
    for (int i = 0; i < n; i++) b[i] = 1.0 + i % 5;
    std::vector<int> ipvt(n), ipiv(n);
    x = b;
    dgetrf_(&n, &n, lu.data(), &n, ipiv.data(), &info);
    dgetrs_("N", &n, &one, lu.data(), &n, ipiv.data(), x.data(), &n, &info, 1);

    ASSERT_EQ(GRPC_NO_ERROR, grpc_data_memory_mapping_set("A", a.data()));
    ASSERT_EQ(GRPC_NO_ERROR, grpc_data_memory_mapping_set("F", factors.data()));
    grpc_data_t da;
    ASSERT_EQ(GRPC_NO_ERROR, Init(&da, "A", {server_uri_}, {GRPC_STICKY})) << grpc_last_error_detail_np();

    info = -1;
    ASSERT_EQ(GRPC_NO_ERROR, grpc_call(&dgefa_, &da, n, n, ipvt.data(), &info)) << grpc_last_error_detail_np();
    EXPECT_EQ(0, info);
    numrpc_call_info ci;
    numrpc_last_call_info(&ci);
    EXPECT_LT(ci.bytes_sent + ci.bytes_received, (uint64_t)n * n * sizeof(double) / 4)
        << "the matrix stayed on the server";
    std::vector<double> got = b;
    ASSERT_EQ(GRPC_NO_ERROR, grpc_call(&dgesl_, &da, n, n, ipvt.data(), got.data(), 0))
        << grpc_last_error_detail_np();
    EXPECT_LT(MaxDiff(got, x), 1e-12 * n);
    EXPECT_EQ(ipiv, ipvt);
    EXPECT_DOUBLE_EQ(std::sin(1.0) + n, a[0]) << "the caller's matrix is not written";

    // the factors come back on request: U as LAPACK's, L up to LINPACK's sign
    const char *to_f[] = {"memory://localhost/F", nullptr};
    grpc_data_mode_t volatile_end[] = {GRPC_VOLATILE, GRPC_END_LIST};
    ASSERT_EQ(GRPC_NO_ERROR, grpc_data_transfer(&da, nullptr, to_f, volatile_end)) << grpc_last_error_detail_np();
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double f = factors[(size_t)j * n + i], l = lu[(size_t)j * n + i];
            ASSERT_NEAR(i <= j ? l : std::fabs(l), i <= j ? f : std::fabs(f), 1e-12 * n) << i << "," << j;
        }

    char *info_text = nullptr;
    ASSERT_EQ(GRPC_NO_ERROR, grpc_data_getinfo(&da, GRPC_DIMENSION, nullptr, &info_text));
    EXPECT_EQ(std::to_string(n) + " " + std::to_string(n), info_text);
    free(info_text);
    ASSERT_EQ(GRPC_NO_ERROR, grpc_data_getinfo(&da, GRPC_LOCATIONS_LIST, nullptr, &info_text));
    EXPECT_EQ(server_uri_ + "\nmemory://localhost", info_text);
    free(info_text);
    ASSERT_EQ(GRPC_NO_ERROR, grpc_data_getinfo(&da, GRPC_MANAGEMENT_MODE, nullptr, &info_text));
    EXPECT_STREQ("GRPC_STICKY", info_text);
    free(info_text);
    EXPECT_EQ(GRPC_NO_ERROR, grpc_data_free(&da, nullptr));
}

TEST_F(GrpcData, DgemmIntoEmptyDataWithMemoryOutputEqualsBlas)
{
    int n = kN;
    double alpha = 1.0, beta = 0.0;
    std::vector<double> a = Matrix(n, 2), b = Matrix(n, 3), c((size_t)n * n, -1), want((size_t)n * n);
    dgemm_("N", "N", &n, &n, &n, &alpha, a.data(), &n, b.data(), &n, &beta, want.data(), &n, 1, 1);
    grpc_data_memory_mapping_set("A", a.data());
    grpc_data_memory_mapping_set("B", b.data());
    grpc_data_memory_mapping_set("C", c.data());
    grpc_data_t da, db, dc;
    ASSERT_EQ(GRPC_NO_ERROR, Init(&da, "A", {server_uri_}, {GRPC_PERSISTENT}));
    // B travels with the call (volatile: no server copy); C is made empty on
    // the server and copied to memory after the call
    ASSERT_EQ(GRPC_NO_ERROR, Init(&db, "B", {}, {}));
    ASSERT_EQ(GRPC_NO_ERROR, Init(&dc, nullptr, {server_uri_, "memory://localhost/C"}, {GRPC_STICKY, GRPC_VOLATILE}))
        << grpc_last_error_detail_np();
    ASSERT_EQ(GRPC_NO_ERROR, grpc_call(&dgemm_h_, 'N', 'N', n, n, n, alpha, &da, n, &db, n, beta, &dc, n))
        << grpc_last_error_detail_np();
    EXPECT_LT(MaxDiff(c, want), 1e-12 * n);

    // asynchronously: the result stays on the server until transferred
    std::vector<double> c2((size_t)n * n, 0);
    grpc_data_memory_mapping_set("C2", c2.data());
    grpc_sessionid_t id;
    ASSERT_EQ(GRPC_NO_ERROR, grpc_call_async(&dgemm_h_, &id, 'N', 'N', n, n, n, alpha, &da, n, &db, n, beta, &dc, n));
    ASSERT_EQ(GRPC_NO_ERROR, grpc_wait(id)) << grpc_last_error_detail_np();
    const char *to_c2[] = {"memory://localhost/C2", nullptr};
    grpc_data_mode_t volatile_end[] = {GRPC_VOLATILE, GRPC_END_LIST};
    ASSERT_EQ(GRPC_NO_ERROR, grpc_data_transfer(&dc, nullptr, to_c2, volatile_end));
    EXPECT_LT(MaxDiff(c2, want), 1e-12 * n);

    // a put through grpc_data_transfer replaces A's server copy
    std::vector<double> twice(a);
    for (double &v : twice) v *= 2;
    grpc_data_memory_mapping_set("A2", twice.data());
    const char *from_a2[] = {"memory://localhost/A2", nullptr};
    std::string s = server_uri_;
    const char *to_server[] = {s.c_str(), nullptr};
    grpc_data_mode_t sticky_end[] = {GRPC_STICKY, GRPC_END_LIST};
    ASSERT_EQ(GRPC_NO_ERROR, grpc_data_transfer(&da, from_a2, to_server, sticky_end)) << grpc_last_error_detail_np();
    ASSERT_EQ(GRPC_NO_ERROR, grpc_call(&dgemm_h_, 'N', 'N', n, n, n, alpha, &da, n, &db, n, beta, &dc, n));
    for (double &v : want) v *= 2;
    EXPECT_LT(MaxDiff(c, want), 2e-12 * n);

    EXPECT_EQ(GRPC_NO_ERROR, grpc_data_unbind(&da));
    EXPECT_EQ(GRPC_NO_ERROR, grpc_data_free(&db, nullptr));
    EXPECT_EQ(GRPC_NO_ERROR, grpc_data_free(&dc, nullptr));
}

TEST_F(GrpcData, ErrorsMapToGridRpcCodes)
{
    int n = kN, info = 0;
    std::vector<double> a = Matrix(n, 4);
    std::vector<int> ipvt(n);
    grpc_data_memory_mapping_set("A", a.data());
    grpc_data_t d, never;
    memset(&never, 0, sizeof never);

    // a bad mode, a missing GRPC_END_LIST, URIs that are not covered
    EXPECT_EQ(GRPC_OTHER_ERROR_CODE, Init(&d, "A", {server_uri_}, {(grpc_data_mode_t)42}));
    EXPECT_NE(nullptr, strstr(grpc_last_error_detail_np(), "no grpc_data_mode_t")) << grpc_last_error_detail_np();
    const char *ins[] = {"memory://localhost/A", nullptr}, *outs[] = {server_uri_.c_str(), nullptr};
    grpc_data_mode_t no_end[] = {GRPC_STICKY, GRPC_STICKY};
    size_t dims[] = {(size_t)n, (size_t)n, 0};
    EXPECT_EQ(GRPC_OTHER_ERROR_CODE, grpc_data_init(&d, ins, outs, GRPC_DOUBLE, dims, no_end));
    EXPECT_NE(nullptr, strstr(grpc_last_error_detail_np(), "GRPC_END_LIST"));
    EXPECT_EQ(GRPC_OTHER_ERROR_CODE, Init(&d, "NoSuchKey", {server_uri_}, {GRPC_STICKY}));
    EXPECT_NE(nullptr, strstr(grpc_last_error_detail_np(), "no memory is mapped"));
    EXPECT_EQ(GRPC_OTHER_ERROR_CODE, Init(&d, "A", {"file:///tmp/a"}, {GRPC_STICKY}));
    EXPECT_NE(nullptr, strstr(grpc_last_error_detail_np(), "not covered"));
    EXPECT_EQ(GRPC_OTHER_ERROR_CODE, Init(&d, "A", {server_uri_, server_uri_}, {GRPC_STICKY, GRPC_STICKY}));
    EXPECT_NE(nullptr, strstr(grpc_last_error_detail_np(), "multiple destinations"));
    EXPECT_EQ(GRPC_OTHER_ERROR_CODE, grpc_data_init(&d, ins, outs, GRPC_FILE, dims, no_end));

    // a server that cannot be reached
    const char *dead[] = {"numrpc://127.0.0.1:1", nullptr};
    grpc_data_mode_t sticky_end[] = {GRPC_STICKY, GRPC_END_LIST};
    EXPECT_EQ(GRPC_COMMUNICATION_FAILED, grpc_data_init(&d, ins, dead, GRPC_DOUBLE, dims, sticky_end));

    // never initialised, a copy, freed: GRPC_INVALID_DATA_NP everywhere
    char *text = nullptr;
    EXPECT_EQ(GRPC_INVALID_DATA_NP, grpc_data_getinfo(&never, GRPC_TYPE, nullptr, &text));
    ASSERT_EQ(GRPC_NO_ERROR, Init(&d, "A", {server_uri_}, {GRPC_STICKY}));
    grpc_data_t copy = d;
    EXPECT_EQ(GRPC_INVALID_DATA_NP, grpc_data_getinfo(&copy, GRPC_TYPE, nullptr, &text));
    ASSERT_EQ(GRPC_NO_ERROR, grpc_data_getinfo(&d, GRPC_TYPE, nullptr, &text));
    EXPECT_STREQ("GRPC_DOUBLE", text);
    free(text);
    EXPECT_EQ(GRPC_NO_ERROR, grpc_data_free(&d, nullptr));
    EXPECT_EQ(GRPC_INVALID_DATA_NP, grpc_data_free(&d, nullptr));
    EXPECT_EQ(GRPC_INVALID_DATA_NP, grpc_data_transfer(&d, nullptr, nullptr, nullptr));
    EXPECT_EQ(GRPC_INVALID_DATA_NP, grpc_call(&dgefa_, &d, n, n, ipvt.data(), &info));
    EXPECT_NE(nullptr, strstr(grpc_last_error_detail_np(), "argument 1 is a grpc_data_t that was unbound or freed"))
        << grpc_last_error_detail_np();
    EXPECT_STREQ(grpc_error_string(GRPC_INVALID_DATA_NP),
                 "GridRPC data is invalid (not initialised, freed, or gone from its server)");

    // the server copy's id, then unbind (twice: the second is refused)
    ASSERT_EQ(GRPC_NO_ERROR, Init(&d, "A", {server_uri_}, {GRPC_STICKY}));
    char *id = nullptr;
    ASSERT_EQ(GRPC_NO_ERROR, grpc_data_getinfo(&d, GRPC_DATA_HANDLE, nullptr, &id));
    EXPECT_EQ(32u, strlen(id));
    free(id);
    EXPECT_EQ(GRPC_NO_ERROR, grpc_data_unbind(&d));
    EXPECT_EQ(GRPC_INVALID_DATA_NP, grpc_data_unbind(&d));
}

} // namespace
