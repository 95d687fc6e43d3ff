// fit_test.cc -- the benchmark's linear model against known data: exact
// lines, a noisy set with reference values, and the jitter statistic.
#include <gtest/gtest.h>

#include <vector>

extern "C" {
#include "fit.h"
}

namespace {

TEST(Fit, ExactLineGivesItsCoefficientsAndZeroIntervals)
{
    std::vector<double> x = {8, 65536, 8388608, 67108864}, y;
    for (double m : x) y.push_back(20e-6 + m / 1e9);  // 20 us + 1 GB/s
    fit_result f;
    ASSERT_EQ(fit_linear(x.data(), y.data(), x.size(), 0.90, &f), 0);
    EXPECT_NEAR(f.b0, 20e-6, 1e-12);
    EXPECT_NEAR(f.b1, 1e-9, 1e-18);
    EXPECT_NEAR(f.b0_half, 0, 1e-9);
    EXPECT_NEAR(f.r_max, 1e9, 1.0);
    EXPECT_NEAR(f.n_half, 20e3, 1e-3);  // 20 us at 1 GB/s
    EXPECT_DOUBLE_EQ(f.t0, f.b0);
}

TEST(Fit, NoisyDataMatchesReferenceValues)
{
    // Reference: Python 3.11 statistics.linear_regression for the slope and
    // intercept; the half-widths t(0.95, 4) * standard errors, t = 2.132.
    std::vector<double> x = {1, 2, 3, 4, 5, 6}, y = {2.1, 3.9, 6.2, 7.8, 10.1, 11.9};
    fit_result f;
    ASSERT_EQ(fit_linear(x.data(), y.data(), x.size(), 0.90, &f), 0);
    EXPECT_NEAR(f.b1, 1.9771428571428573, 1e-12);
    EXPECT_NEAR(f.b0, 0.07999999999999918, 1e-12);
    EXPECT_NEAR(f.b1_half, 0.08484378230559023, 1e-9);
    EXPECT_NEAR(f.b0_half, 0.3304190604441005, 1e-9);
}

TEST(Fit, DegenerateInputsAreRefused)
{
    double x[] = {5, 5, 5}, y[] = {1, 2, 3};
    fit_result f;
    EXPECT_EQ(fit_linear(x, y, 3, 0.90, &f), -1);
    EXPECT_EQ(fit_linear(x, y, 2, 0.90, &f), -1);
}

TEST(Fit, JitterWithAndWithoutTheFirstCall)
{
    double v[] = {5, 1, 2, 3, 4};  // a slow first call, then steady ones
    EXPECT_NEAR(fit_stddev(v, 5, 0), 1.5811388300841898, 1e-12);
    EXPECT_NEAR(fit_stddev(v, 5, 1), 1.2909944487358056, 1e-12);
    EXPECT_EQ(fit_stddev(v, 1, 0), 0.0);
}

TEST(Fit, StudentQuantiles)
{
    EXPECT_DOUBLE_EQ(fit_t_quantile(0.90, 4), 2.132);
    EXPECT_DOUBLE_EQ(fit_t_quantile(0.95, 10), 2.228);
    EXPECT_DOUBLE_EQ(fit_t_quantile(0.90, 1000), 1.645);
}

}  // namespace
