// typed_call_test.cc -- numrpc_call checks what it is given (issue 29): each
// argument's C type, tagged at compile time from C (typed_calls_c.c) and
// C++ (here), against the routine; right answers against local BLAS, clear
// errors for the rest, never a crash (a real server on 127.0.0.1).
#include <gtest/gtest.h>

#include <cblas.h>

#include <complex>
#include <string>
#include <vector>

#include "../support/server_proc.h"
#include "../support/test_util.h"
#include "numrpc.h"
#include "typed_calls_c.h"

namespace {

typedef std::complex<double> dz;

class TypedCall : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { server_ = new ServerProc(); }
    static void TearDownTestSuite()
    {
        numrpc_finalize();
        delete server_;
        server_ = nullptr;
    }
    void SetUp() override { UseServer(server_->address()); }
    static ServerProc *server_;
};
ServerProc *TypedCall::server_ = nullptr;

std::vector<dz> Matrix(int n, double seed)
{
    std::vector<dz> m(static_cast<size_t>(n) * n);
    for (size_t i = 0; i < m.size(); i++) m[i] = dz(std::sin(seed + i), std::cos(seed * 2 + i));
    return m;
}

// c := alpha a b + beta c, locally.
std::vector<dz> LocalZgemm(int n, const std::vector<dz> &a, const std::vector<dz> &b, std::vector<dz> c, dz alpha,
                           dz beta)
{
    cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, &alpha, a.data(), n, b.data(), n, &beta,
                c.data(), n);
    return c;
}

void ExpectNear(const std::vector<dz> &got, const std::vector<dz> &want)
{
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) ASSERT_LE(std::abs(got[i] - want[i]), 1e-12 * (1 + std::abs(want[i]))) << i;
}

// ---- Complex scalars: by value (the rule), by pointer (earlier programs) ----

TEST_F(TypedCall, ComplexScalarsByValueFromC)
{
    const int n = 7;
    std::vector<dz> a = Matrix(n, 1), b = Matrix(n, 2), c = Matrix(n, 3);
    const dz alpha(0.5, -1.25), beta(2, 0.75);
    std::vector<dz> want = LocalZgemm(n, a, b, c, alpha, beta);
    ASSERT_EQ(c_zgemm_by_value(n, a.data(), b.data(), c.data(), alpha, beta), NUMRPC_OK) << Detail();
    ExpectNear(c, want);
}

TEST_F(TypedCall, ComplexScalarsByPointerStillWork)
{
    const int n = 5;
    std::vector<dz> a = Matrix(n, 4), b = Matrix(n, 5), c = Matrix(n, 6);
    const dz alpha(-1, 3), beta(0.25, 0.5);
    std::vector<dz> want = LocalZgemm(n, a, b, c, alpha, beta);
    ASSERT_EQ(c_zgemm_by_pointer(n, a.data(), b.data(), c.data(), alpha, beta), NUMRPC_OK) << Detail();
    ExpectNear(c, want);
}

TEST_F(TypedCall, ComplexScalarsByValueFromCxx)
{
    const int n = 6;
    std::vector<dz> a = Matrix(n, 7), b = Matrix(n, 8), c = Matrix(n, 9);
    const dz alpha(1.5, 0.5), beta(-0.5, 2);
    std::vector<dz> want = LocalZgemm(n, a, b, c, alpha, beta);
    ASSERT_EQ(numrpc_call("zgemm", 'N', 'N', n, n, n, alpha, a.data(), n, b.data(), n, beta, c.data(), n),
              NUMRPC_OK)
        << Detail();
    ExpectNear(c, want);
}

TEST_F(TypedCall, ZscalCscalAndARealWhereAComplexGoes)
{
    const int n = 9;
    std::vector<dz> x = Matrix(3, 10), want = x, y = x, want_y = x;
    const dz alpha(0.75, -2);
    cblas_zscal(n, &alpha, want.data(), 1);
    ASSERT_EQ(c_zscal_by_value(n, alpha, x.data()), NUMRPC_OK) << Detail();
    ExpectNear(x, want);
    const dz three(3, 0);
    cblas_zscal(n, &three, want_y.data(), 1);
    ASSERT_EQ(c_zscal_real_alpha(n, 3.0, y.data()), NUMRPC_OK) << Detail();
    ExpectNear(y, want_y);
    std::vector<std::complex<float>> s(n, std::complex<float>(1, 2)), want_s = s;
    const std::complex<float> salpha(2, -1);
    cblas_cscal(n, &salpha, want_s.data(), 1);
    ASSERT_EQ(c_cscal_float_complex(n, salpha, s.data()), NUMRPC_OK) << Detail();
    for (int i = 0; i < n; i++) EXPECT_EQ(s[i], want_s[i]) << i;
}

// ---- The conversions a prototype makes ----

TEST_F(TypedCall, AnIntOrFloatWhereADoubleGoesIsConverted)
{
    std::vector<double> x = {1, -2, 3.5, 4}, want = x;
    cblas_dscal(4, 2.0, want.data(), 1);
    ASSERT_EQ(c_dscal_int_literal(4, x.data()), NUMRPC_OK) << Detail();
    EXPECT_EQ(x, want);
    cblas_dscal(4, 0.5, want.data(), 1);
    ASSERT_EQ(c_dscal_long_n(4L, x.data()), NUMRPC_OK) << Detail(); // a long n, a float alpha
    EXPECT_EQ(x, want);
    cblas_dscal(4, 2.0, want.data(), 1);
    ASSERT_EQ(numrpc_call("dscal", 4, 2, x.data(), 1), NUMRPC_OK) << Detail(); // from C++
    EXPECT_EQ(x, want);
}

// ---- Misuse: a clear error, nothing sent, nothing written ----

TEST_F(TypedCall, AFloatArrayWhereADoubleArrayGoesIsRefused)
{
    std::vector<float> x = {1, 2, 3};
    ASSERT_EQ(c_dscal_float_array(3, x.data()), NUMRPC_EINVAL);
    EXPECT_EQ(Detail(), "dscal: argument 3 (x) is double array, float * was given: nothing was sent");
    EXPECT_EQ(x, (std::vector<float>{1, 2, 3}));
    ASSERT_EQ(numrpc_call("dscal", 3, 2.0, x.data(), 1), NUMRPC_EINVAL); // from C++
    EXPECT_EQ(Detail(), "dscal: argument 3 (x) is double array, float * was given: nothing was sent");
}

TEST_F(TypedCall, AnIntArrayWhereADoubleArrayGoesIsRefused)
{
    std::vector<int> x = {1, 2, 3};
    ASSERT_EQ(c_dscal_int_array(3, x.data()), NUMRPC_EINVAL);
    EXPECT_EQ(Detail(), "dscal: argument 3 (x) is double array, int * was given: nothing was sent");
    EXPECT_EQ(x, (std::vector<int>{1, 2, 3}));
}

TEST_F(TypedCall, ADoubleWhereAnIntGoesAndAnIntTooLargeAreRefused)
{
    std::vector<double> x = {1, 2};
    ASSERT_EQ(c_dscal_double_n(2.0, x.data()), NUMRPC_EINVAL);
    EXPECT_EQ(Detail(), "dscal: argument 1 (n) is int, double was given: nothing was sent");
    ASSERT_EQ(c_dscal_huge_n(x.data()), NUMRPC_EINVAL);
    EXPECT_EQ(Detail(), "dscal: argument 1 (n) is int, and 1099511627776 does not fit it");
    EXPECT_EQ(x, (std::vector<double>{1, 2}));
}

TEST_F(TypedCall, MissingExtraAndStructArgumentsAreRefused)
{
    std::vector<double> x = {1, 2};
    ASSERT_EQ(c_dscal_extra(2, x.data()), NUMRPC_EINVAL);
    EXPECT_TRUE(Contains(Detail(), "dscal takes 4 arguments (n, alpha, x, incx), 5 given")) << Detail();
    ASSERT_EQ(c_dscal_missing(2, x.data()), NUMRPC_EINVAL);
    EXPECT_TRUE(Contains(Detail(), "dscal takes 4 arguments (n, alpha, x, incx), 3 given")) << Detail();
    std::vector<dz> z = {dz(1, 1)};
    ASSERT_EQ(c_zscal_struct(1, z.data()), NUMRPC_EINVAL);
    EXPECT_EQ(Detail(), "zscal: argument 2 has a C type numrpc cannot pass (a struct, a long double, ...)");
    EXPECT_EQ(z[0], dz(1, 1));
}

// ---- Handles ----

TEST_F(TypedCall, AHandleIsUsedAndAFreedOneIsAClearError)
{
    std::vector<double> x = {1, 2, 3, 4}, back(4), want = x;
    numrpc_data *h = nullptr;
    ASSERT_EQ(numrpc_data_put(&h, nullptr, NUMRPC_T_DOUBLE, x.data(), 4, 1, 4), NUMRPC_OK) << Detail();
    ASSERT_EQ(c_dscal_handle(4, h), NUMRPC_OK) << Detail();
    ASSERT_EQ(numrpc_data_get(h, back.data(), 4), NUMRPC_OK) << Detail();
    cblas_dscal(4, 3.0, want.data(), 1);
    EXPECT_EQ(back, want);
    ASSERT_EQ(numrpc_data_free(h), NUMRPC_OK) << Detail();
    ASSERT_EQ(c_dscal_handle(4, h), NUMRPC_EINVAL);
    EXPECT_TRUE(Contains(Detail(), "dscal: argument 3 (x): handle")) << Detail();
    EXPECT_TRUE(Contains(Detail(), "was freed")) << Detail();
}

// The same through the tagged array (numrpc_callv: Python, Fortran): a
// handle's name is never taken for memory.
TEST_F(TypedCall, AFreedHandleThroughTheTaggedArrayIsRefusedToo)
{
    std::vector<double> x = {5, 6};
    numrpc_data *h = nullptr;
    ASSERT_EQ(numrpc_data_put(&h, nullptr, NUMRPC_T_DOUBLE, x.data(), 2, 1, 2), NUMRPC_OK) << Detail();
    ASSERT_EQ(numrpc_data_free(h), NUMRPC_OK) << Detail();
    numrpc_arg args[4];
    args[0].type = NUMRPC_T_INT;
    args[0].v.i = 2;
    args[1].type = NUMRPC_T_DOUBLE;
    args[1].v.d = 3;
    args[2].type = NUMRPC_T_DOUBLE;
    args[2].v.p = h;
    args[3].type = NUMRPC_T_INT;
    args[3].v.i = 1;
    ASSERT_EQ(numrpc_callv("dscal", args, 4), NUMRPC_EINVAL);
    EXPECT_TRUE(Contains(Detail(), "dscal: x: handle")) << Detail();
    EXPECT_TRUE(Contains(Detail(), "was freed")) << Detail();
    EXPECT_EQ(numrpc_data_free(h), NUMRPC_EINVAL); // twice
    std::vector<double> back(2);
    EXPECT_EQ(numrpc_data_get(h, back.data(), 2), NUMRPC_EINVAL);
}

// ---- Asynchronous calls check the same way ----

TEST_F(TypedCall, AsyncCallsTakeComplexByValueAndRefuseMisuse)
{
    std::vector<dz> x = Matrix(2, 11), want = x;
    const dz alpha(-0.5, 0.25);
    cblas_zscal(4, &alpha, want.data(), 1);
    ASSERT_EQ(c_zscal_async(4, alpha, x.data()), NUMRPC_OK) << Detail();
    ExpectNear(x, want);
    std::vector<float> f = {1, 2};
    int id = -1;
    ASSERT_EQ(c_dscal_async_float_array(2, f.data(), &id), NUMRPC_EINVAL);
    EXPECT_EQ(Detail(), "dscal: argument 3 (x) is double array, float * was given: nothing was sent");
    EXPECT_EQ(id, 0);
}

} // namespace
