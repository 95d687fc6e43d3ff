// linpack_lapack_test.cc -- checks that the LAPACK-based dgefa_/dgesl_/linpack_
// of stubs/linpack_lapack.c give LINPACK's exact results (against linpack_ref).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../../stubs/linpack_lapack.h"
#include "../support/linpack_ref.h"

namespace {

struct Dims {
    int n;
    int lda;
};

std::string DimsName(const testing::TestParamInfo<Dims> &info)
{
    return "n" + std::to_string(info.param.n) + "_lda" +
           std::to_string(info.param.lda);
}

double &At(std::vector<double> &a, int lda, int i, int j)
{
    return a[static_cast<size_t>(j) * lda + i];
}

// A random n x n matrix in an lda x n array (sentinels below row n).
std::vector<double> RandomMatrix(int n, int lda, unsigned seed)
{
    std::vector<double> a(static_cast<size_t>(lda) * std::max(n, 1));
    ref_fill_random(a.data(), lda, n, seed);
    return a;
}

std::vector<double> RandomVector(int n, unsigned seed)
{
    std::vector<double> b(std::max(n, 1));
    ref_fill_random(b.data(), std::max(n, 1), n > 0 ? 1 : 0, seed);
    b.resize(n);
    return b;
}

void ExpectSentinelsUntouched(std::vector<double> &a, int n, int lda)
{
    for (int j = 0; j < n; j++)
        for (int i = n; i < lda; i++)
            ASSERT_EQ(At(a, lda, i, j), ref_sentinel(i, j))
                << "row " << i << " col " << j << " beyond n was written";
}

// Factors equal to |d| <= tol * (1 + |ref|), element by element.
void ExpectFactorsNear(std::vector<double> &got, std::vector<double> &want,
                       int n, int lda, double tol)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double w = At(want, lda, i, j), g = At(got, lda, i, j);
            ASSERT_LE(std::fabs(g - w), tol * (1.0 + std::fabs(w)))
                << "factor (" << i << "," << j << "): got " << g
                << " want " << w;
        }
}

void ExpectVectorsNear(const std::vector<double> &got,
                       const std::vector<double> &want, double tol)
{
    ASSERT_EQ(got.size(), want.size());
    double scale = 1.0;
    for (double w : want)
        scale = std::max(scale, std::fabs(w));
    for (size_t i = 0; i < got.size(); i++)
        ASSERT_LE(std::fabs(got[i] - want[i]), tol * scale)
            << "element " << i << ": got " << got[i] << " want " << want[i];
}

// Factors a copy of a with both implementations and checks they agree.
void CompareDgefa(const std::vector<double> &original, int n, int lda,
                  std::vector<double> *ours_out = nullptr,
                  std::vector<int> *ipvt_out = nullptr, int *info_out = nullptr)
{
    std::vector<double> ours = original, ref = original;
    std::vector<int> ipvt(n, -7), ref_ipvt(n, -9);
    int info = -5, ref_info = -6;
    dgefa_(ours.data(), &lda, &n, ipvt.data(), &info);
    ref_dgefa(ref.data(), lda, n, ref_ipvt.data(), &ref_info);

    EXPECT_EQ(info, ref_info);
    ASSERT_EQ(ipvt, ref_ipvt);
    for (int k = 0; k < n; k++) {
        ASSERT_GE(ipvt[k], k + 1);
        ASSERT_LE(ipvt[k], n);
    }
    ExpectFactorsNear(ours, ref, n, lda, 1e-10);
    for (int j = 0; j < n; j++)
        for (int i = n; i < lda; i++)
            ASSERT_EQ(At(ours, lda, i, j), At(const_cast<std::vector<double> &>(
                                                  original), lda, i, j));
    if (ours_out)
        *ours_out = ours;
    if (ipvt_out)
        *ipvt_out = ipvt;
    if (info_out)
        *info_out = info;
}

class LinpackLapackTest : public testing::TestWithParam<Dims> {};

TEST_P(LinpackLapackTest, DgefaMatchesLinpackReference)
{
    const int n = GetParam().n, lda = GetParam().lda;
    std::vector<double> a = RandomMatrix(n, lda, 1000u + n);
    std::vector<double> factors;
    int info = -1;
    CompareDgefa(a, n, lda, &factors, nullptr, &info);
    EXPECT_EQ(info, 0);
    ExpectSentinelsUntouched(factors, n, lda);
}

TEST_P(LinpackLapackTest, DgeslSolvesBothSystemsLikeReference)
{
    const int n = GetParam().n, lda = GetParam().lda;
    const std::vector<double> a = RandomMatrix(n, lda, 2000u + n);
    const std::vector<double> b = RandomVector(n, 3000u + n);

    std::vector<double> ours = a, ref = a;
    std::vector<int> ipvt(n), ref_ipvt(n);
    int info = -1, ref_info = -1;
    int nn = n, ld = lda;
    dgefa_(ours.data(), &ld, &nn, ipvt.data(), &info);
    ref_dgefa(ref.data(), lda, n, ref_ipvt.data(), &ref_info);
    ASSERT_EQ(info, 0);
    ASSERT_EQ(ipvt, ref_ipvt);

    for (int job : {0, 1}) {
        SCOPED_TRACE("job " + std::to_string(job));
        std::vector<double> x = b, x_ref = b;
        int jb = job;
        dgesl_(ours.data(), &ld, &nn, ipvt.data(), x.data(), &jb);
        ref_dgesl(ref.data(), lda, n, ref_ipvt.data(), x_ref.data(), job);
        ExpectVectorsNear(x, x_ref, 1e-8);

        double resid = job == 0 ? ref_residual(a.data(), lda, n, x.data(),
                                               b.data())
                                : ref_residual_trans(a.data(), lda, n,
                                                     x.data(), b.data());
        EXPECT_LT(resid, 10.0);

        // On identical factors dgesl_ is the reference algorithm: the
        // results agree to the last bits.
        std::vector<double> x_same = b;
        dgesl_(ref.data(), &ld, &nn, ref_ipvt.data(), x_same.data(), &jb);
        ExpectVectorsNear(x_same, x_ref, 1e-13);
    }
    ExpectSentinelsUntouched(ours, n, lda);
}

TEST_P(LinpackLapackTest, LinpackOneCallSolves)
{
    const int n = GetParam().n, lda = GetParam().lda;
    const std::vector<double> a = RandomMatrix(n, lda, 4000u + n);
    const std::vector<double> b = RandomVector(n, 5000u + n);

    std::vector<double> work = a, x = b;
    std::vector<int> ipvt(n, 0);
    int info = -1, nn = n, ld = lda;
    linpack_(work.data(), &ld, &nn, ipvt.data(), x.data(), &info);
    ASSERT_EQ(info, 0);
    EXPECT_LT(ref_residual(a.data(), lda, n, x.data(), b.data()), 10.0);
    for (int k = 0; k < n; k++) {
        ASSERT_GE(ipvt[k], k + 1);
        ASSERT_LE(ipvt[k], n);
    }
    ExpectSentinelsUntouched(work, n, lda);

    // The same solution as LINPACK's dgefa + dgesl, to rounding.
    std::vector<double> ref = a, x_ref = b;
    std::vector<int> ref_ipvt(n);
    int ref_info = -1;
    ref_dgefa(ref.data(), lda, n, ref_ipvt.data(), &ref_info);
    ref_dgesl(ref.data(), lda, n, ref_ipvt.data(), x_ref.data(), 0);
    ExpectVectorsNear(x, x_ref, 1e-8);
}

TEST_P(LinpackLapackTest, ZeroColumnGivesLinpackInfo)
{
    const int n = GetParam().n, lda = GetParam().lda;
    std::vector<double> a = RandomMatrix(n, lda, 6000u + n);
    const int zero_col = n / 2;
    for (int i = 0; i < n; i++)
        At(a, lda, i, zero_col) = 0.0;
    std::vector<double> factors;
    int info = -1;
    CompareDgefa(a, n, lda, &factors, nullptr, &info);
    EXPECT_GE(info, zero_col + 1);
    ExpectSentinelsUntouched(factors, n, lda);
}

INSTANTIATE_TEST_SUITE_P(Sizes, LinpackLapackTest,
                         testing::Values(Dims{1, 1}, Dims{1, 8}, Dims{2, 2},
                                         Dims{2, 9}, Dims{17, 17},
                                         Dims{17, 24}, Dims{100, 100},
                                         Dims{100, 107}, Dims{500, 500},
                                         Dims{500, 507}),
                         DimsName);

// Two zero columns: LINPACK reports the LAST zero pivot, LAPACK the first.
TEST(LinpackLapackSingular, InfoIsLastZeroPivot)
{
    const int n = 40, lda = 45;
    std::vector<double> a = RandomMatrix(n, lda, 77u);
    for (int i = 0; i < n; i++) {
        At(a, lda, i, 3) = 0.0;
        At(a, lda, i, 20) = 0.0;
    }
    int info = -1;
    CompareDgefa(a, n, lda, nullptr, nullptr, &info);
    EXPECT_GE(info, 21);
}

TEST(LinpackLapackSingular, LastColumnZeroGivesInfoN)
{
    const int n = 30, lda = 30;
    std::vector<double> a = RandomMatrix(n, lda, 78u);
    for (int i = 0; i < n; i++)
        At(a, lda, i, n - 1) = 0.0;
    int info = -1;
    CompareDgefa(a, n, lda, nullptr, nullptr, &info);
    EXPECT_EQ(info, n);
}

TEST(LinpackLapackSingular, ZeroMatrix)
{
    for (int n : {1, 5, 64}) {
        SCOPED_TRACE("n " + std::to_string(n));
        const int lda = n + 3;
        std::vector<double> a = RandomMatrix(n, lda, 79u);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++)
                At(a, lda, i, j) = 0.0;
        std::vector<int> ipvt;
        int info = -1;
        CompareDgefa(a, n, lda, nullptr, &ipvt, &info);
        EXPECT_EQ(info, n);
        for (int k = 0; k < n; k++)
            EXPECT_EQ(ipvt[k], k + 1);
    }
}

TEST(LinpackLapackSingular, LinpackReportsZeroPivotAndLeavesB)
{
    const int n = 12, lda = 12;
    std::vector<double> a = RandomMatrix(n, lda, 80u);
    for (int i = 0; i < n; i++)
        At(a, lda, i, 4) = 0.0;
    std::vector<double> b = RandomVector(n, 81u), x = b;
    std::vector<int> ipvt(n);
    int info = -1, nn = n, ld = lda;
    linpack_(a.data(), &ld, &nn, ipvt.data(), x.data(), &info);
    EXPECT_EQ(info, 5);  // dgetrf: the first zero pivot
    EXPECT_EQ(x, b);
}

// Exact ties in the pivot column: both pick the first largest |value|.
TEST(LinpackLapackPivots, TiesPickTheFirstRow)
{
    const int n = 4, lda = 4;
    // Column-major; column 0 has |1| four times.
    std::vector<double> a = {1, -1, 1, -1,  2, 3, 5, 7,
                             4, 1, -2, 8,   3, 0, 6, 1};
    std::vector<int> ipvt;
    int info = -1;
    CompareDgefa(a, n, lda, nullptr, &ipvt, &info);
    EXPECT_EQ(info, 0);
    EXPECT_EQ(ipvt[0], 1);
}

TEST(LinpackLapackEdge, SizeZeroIsANoOp)
{
    std::vector<double> a = {11.0, 12.0}, b = {13.0};
    std::vector<int> ipvt = {-3};
    int n = 0, lda = 1, info = -99, job = 0;
    dgefa_(a.data(), &lda, &n, ipvt.data(), &info);
    EXPECT_EQ(info, 0);
    dgesl_(a.data(), &lda, &n, ipvt.data(), b.data(), &job);
    job = 1;
    dgesl_(a.data(), &lda, &n, ipvt.data(), b.data(), &job);
    info = -99;
    linpack_(a.data(), &lda, &n, ipvt.data(), b.data(), &info);
    EXPECT_EQ(info, 0);
    EXPECT_EQ(a, (std::vector<double>{11.0, 12.0}));
    EXPECT_EQ(b, (std::vector<double>{13.0}));
    EXPECT_EQ(ipvt, (std::vector<int>{-3}));
}

TEST(LinpackLapackEdge, BadDimensionsAreRejectedUntouched)
{
    std::vector<double> a(16, 5.0), b(4, 6.0);
    std::vector<int> ipvt(4, -3);
    struct {
        int n, lda;
    } bad[] = {{-1, 1}, {4, 3}, {1, 0}, {0, 0}};
    for (auto d : bad) {
        SCOPED_TRACE("n " + std::to_string(d.n) + " lda " +
                     std::to_string(d.lda));
        int n = d.n, lda = d.lda, info = 0, job = 0;
        dgefa_(a.data(), &lda, &n, ipvt.data(), &info);
        EXPECT_EQ(info, -1);
        info = 0;
        linpack_(a.data(), &lda, &n, ipvt.data(), b.data(), &info);
        EXPECT_EQ(info, -1);
        dgesl_(a.data(), &lda, &n, ipvt.data(), b.data(), &job);
        EXPECT_EQ(a, std::vector<double>(16, 5.0));
        EXPECT_EQ(b, std::vector<double>(4, 6.0));
        EXPECT_EQ(ipvt, std::vector<int>(4, -3));
    }
}

}  // namespace
