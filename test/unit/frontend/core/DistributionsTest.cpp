// The in-place distributions beyond uniform_/normal_/bernoulli_ (exponential_, geometric_,
// log_normal_, cauchy_, random_): moments or quantiles of 100,000 draws from a fixed seed,
// within 6 standard errors of the distribution's (a deviation of more than that has
// probability below 2e-9 for any seed, while a wrong rate, scale or shift moves the
// statistic by tens of standard errors), and each one's argument checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <set>
#include <vector>

#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/core/Tensor.h"
#include "test/unit/frontend/core/ExpectError.h"

namespace kiln {
namespace {

using kiln::testing::at;

constexpr int64_t kDraws = 100000;

std::vector<double> draws(const Tensor& t) {
  Tensor d = t.to(kFloat64).contiguous();
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}

struct Moments {
  double mean = 0, variance = 0;
};

Moments momentsOf(const std::vector<double>& v) {
  Moments m;
  for (double x : v) m.mean += x;
  m.mean /= double(v.size());
  for (double x : v) m.variance += (x - m.mean) * (x - m.mean);
  m.variance /= double(v.size() - 1);
  return m;
}

// The sample mean and variance against a distribution's mean, variance and fourth central
// moment: the standard error of a sample variance is sqrt((mu4 - var²) / n).
void expectMoments(const std::vector<double>& v, double mean, double variance, double mu4) {
  const Moments m = momentsOf(v);
  const double n = double(v.size());
  EXPECT_NEAR(m.mean, mean, 6 * std::sqrt(variance / n));
  EXPECT_NEAR(m.variance, variance, 6 * std::sqrt((mu4 - variance * variance) / n));
}

// The fraction of draws at or below x against the CDF's value there: a binomial proportion.
void expectFractionBelow(const std::vector<double>& v, double x, double cdf) {
  const double below = double(std::count_if(v.begin(), v.end(), [&](double d) { return d <= x; }));
  EXPECT_NEAR(below / double(v.size()), cdf, 6 * std::sqrt(cdf * (1 - cdf) / double(v.size())))
      << "at " << x;
}

TEST(DistributionsTest, Exponential) {
  manual_seed(1);
  const double lambda = 2.0;
  for (DType dtype : {kFloat32, kFloat64}) {
    std::vector<double> v = draws(empty({kDraws}, dtype).exponential_(lambda));
    EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.0);
    // mean 1/λ, variance 1/λ², fourth central moment 9/λ⁴
    expectMoments(v, 1 / lambda, 1 / (lambda * lambda), 9 / std::pow(lambda, 4));
    expectFractionBelow(v, 0.1, 1 - std::exp(-lambda * 0.1));  // the shape near 0, too
  }
}

TEST(DistributionsTest, Geometric) {
  manual_seed(2);
  const double p = 0.25, q = 1 - p;
  for (DType dtype : {kFloat32, kInt64, kInt32}) {
    std::vector<double> v = draws(empty({kDraws}, dtype).geometric_(p));
    EXPECT_GE(*std::min_element(v.begin(), v.end()), 1.0);  // trials, counting the success
    for (double x : v) ASSERT_EQ(x, std::floor(x));
    // mean 1/p, variance q/p², fourth central moment q(p² + 9q)/p⁴
    expectMoments(v, 1 / p, q / (p * p), q * (p * p + 9 * q) / std::pow(p, 4));
    expectFractionBelow(v, 1, p);  // P(X = 1) = p: no draw of 0 became a 1 too often
    expectFractionBelow(v, 3, 1 - std::pow(q, 3));
  }
}

TEST(DistributionsTest, LogNormal) {
  manual_seed(3);
  const double mu = 0.5, sigma = 0.4;
  for (DType dtype : {kFloat32, kFloat64}) {
    std::vector<double> v = draws(empty({kDraws}, dtype).log_normal_(mu, sigma));
    EXPECT_GT(*std::min_element(v.begin(), v.end()), 0.0);
    std::vector<double> logs;
    for (double x : v) logs.push_back(std::log(x));
    expectMoments(logs, mu, sigma * sigma, 3 * std::pow(sigma, 4));  // log x is N(mu, sigma²)
    const double s2 = sigma * sigma;
    EXPECT_NEAR(momentsOf(v).mean, std::exp(mu + s2 / 2),
                6 * std::sqrt((std::exp(s2) - 1) * std::exp(2 * mu + s2) / double(kDraws)));
  }
}

// Cauchy has no moments: its quartiles are median ± sigma.
TEST(DistributionsTest, Cauchy) {
  manual_seed(4);
  const double median = -1.0, sigma = 3.0;
  for (DType dtype : {kFloat32, kFloat64}) {
    std::vector<double> v = draws(empty({kDraws}, dtype).cauchy_(median, sigma));
    for (double x : v) ASSERT_FALSE(std::isnan(x));  // tan(-pi/2) may round to an infinity
    for (double k : {-10.0, -1.0, 0.0, 1.0, 10.0})
      expectFractionBelow(v, median + k * sigma, 0.5 + std::atan(k) / std::numbers::pi);
  }
}

TEST(DistributionsTest, RandomFromTo) {
  manual_seed(5);
  for (DType dtype : {kFloat32, kInt64, kInt32, kFloat64}) {
    std::vector<double> v = draws(empty({kDraws}, dtype).random_(-3, 4));
    std::set<double> seen(v.begin(), v.end());
    EXPECT_EQ(seen, (std::set<double>{-3, -2, -1, 0, 1, 2, 3})) << dtype;
    for (double k = -3; k <= 3; ++k) expectFractionBelow(v, k, (k + 4) / 7);
  }
  // random_(to) is [0, to); int64 tensors take ranges far from 0 exactly.
  std::vector<double> tenths = draws(empty({kDraws}, kInt64).random_(10));
  expectMoments(tenths, 4.5, 8.25, 99.0 * 293.0 / 240);  // n = 10: (n²-1)(3n²-7)/240
  Tensor far = empty({1000}, kInt64).random_(int64_t(1) << 62, (int64_t(1) << 62) + 2);
  const int64_t* p = far.data_ptr<int64_t>();
  for (int64_t i = 0; i < far.numel(); ++i)
    ASSERT_TRUE(p[i] == int64_t(1) << 62 || p[i] == (int64_t(1) << 62) + 1) << p[i];
}

// Without `to`: up to the dtype's largest exact integer, 2^24 for float32.
TEST(DistributionsTest, RandomToTheDTypesLimit) {
  manual_seed(6);
  std::vector<double> v = draws(empty({kDraws}).random_());
  const double n = 16777217.0;  // 0 .. 2^24
  EXPECT_LE(*std::max_element(v.begin(), v.end()), 16777216.0);
  for (double x : v) ASSERT_EQ(x, std::floor(x));
  expectMoments(v, (n - 1) / 2, (n * n - 1) / 12, (n * n - 1) * (3 * n * n - 7) / 240);
  std::vector<double> flags = draws(empty({kDraws}, kBool).random_());
  expectFractionBelow(flags, 0, 0.5);
}

// Each draw moves the generator on: two fills differ, and a reseed repeats them.
TEST(DistributionsTest, DrawsFollowTheDefaultGenerator) {
  manual_seed(7);
  std::vector<double> a = draws(empty({8}).exponential_()), b = draws(empty({8}).exponential_());
  manual_seed(7);
  EXPECT_EQ(draws(empty({8}).exponential_()), a);
  EXPECT_NE(a, b);
}

TEST(DistributionsTest, ArgumentsAreChecked) {
  Tensor x = zeros({2}), ints = zeros({2}, kInt64);
  EXPECT_KILN_ERROR(x.exponential_(0), Error,
                    "kiln::exponential_: expects lambda > 0, but found lambda=0 (tensor of shape [2])" + at());
  EXPECT_KILN_ERROR(ints.exponential_(), TypeError,
                    "kiln::exponential_: expects a floating-point tensor, got int64 of shape [2]" + at());
  EXPECT_KILN_ERROR(x.geometric_(1), Error,
                    "kiln::geometric_: expects p in (0, 1), but found p=1 (tensor of shape [2])" + at());
  EXPECT_KILN_ERROR(x.log_normal_(1, 0), Error,
                    "kiln::log_normal_: expects std > 0, but found std=0 (tensor of shape [2])" + at());
  EXPECT_KILN_ERROR(x.cauchy_(0, -1), Error,
                    "kiln::cauchy_: expects sigma > 0, but found sigma=-1 (tensor of shape [2])" + at());
  EXPECT_KILN_ERROR(x.random_(5, 5), Error,
                    "kiln::random_: expects 'from' to be less than 'to', but got from=5 >= to=5 "
                    "(tensor of shape [2])" + at());
  EXPECT_KILN_ERROR(x.random_(0, 16777218), Error,
                    "kiln::random_: the range [0, 16777217] does not fit a float32 tensor (shape [2]), "
                    "whose integers are [-16777216, 16777216]" + at());
  EXPECT_KILN_ERROR_HAS(ints.random_(), Error, "draws ranges of at most 2^53 integers");
  Tensor w = zeros({2}).requires_grad_();
  EXPECT_KILN_ERROR_HAS(w.cauchy_(), Error, "a leaf tensor that requires grad (shape [2]) cannot be "
                        "modified in place");
}

}  // namespace
}  // namespace kiln
