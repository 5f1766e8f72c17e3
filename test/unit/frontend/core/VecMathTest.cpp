#include "frontend/core/kernels/VecMath.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kiln/core/Ops.h"
#include "kiln/core/Tensor.h"

namespace kiln::kernels {
namespace {

// Distance in units in the last place of the float nearest to `exact`.
double ulps(float got, double exact) {
  float nearest = float(exact);
  double ulp = std::nextafter(std::fabs(nearest), INFINITY) - std::fabs(nearest);
  return std::fabs(double(got) - exact) / ulp;
}

// Every 4099th float bit pattern: about a million values spread over all exponents.
template <class Check>
void forSampledFloats(Check check) {
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 4099) {
    float x = std::bit_cast<float>(uint32_t(bits));
    if (std::isfinite(x)) check(x);
  }
}

TEST(VecMathTest, ExpIsWithinTwoUlps) {
  double worst = 0;
  forSampledFloats([&](float x) {
    double exact = std::exp(double(x));
    if (exact < std::numeric_limits<float>::min()) {  // flushed to zero below normals
      EXPECT_LT(vexp(x), std::numeric_limits<float>::min()) << x;
      return;
    }
    if (exact > std::numeric_limits<float>::max()) {
      EXPECT_EQ(vexp(x), INFINITY) << x;
      return;
    }
    worst = std::max(worst, ulps(vexp(x), exact));
  });
  EXPECT_LE(worst, 2.0);
}

// exp and tanh use fused multiply-adds (std::fma): whether a vector clone of a dense run,
// the clone of a strided run or plain code here computes them, the bits are the same.
TEST(VecMathTest, EveryKernelComputesTheSameBits) {
  std::vector<float> v;
  for (int i = 0; i < 64 * 64; ++i) v.push_back(float(i % 389) * 0.37f - 70.0f + float(i) * 1e-4f);
  Tensor x = tensor(v, Shape{64, 64});
  Tensor dense[] = {exp(x), tanh(x)};
  Tensor strided[] = {exp(x.t()).t().contiguous(), tanh(x.t()).t().contiguous()};
  for (int op = 0; op < 2; ++op) {
    const float* d = dense[op].data_ptr<float>();
    const float* s = strided[op].data_ptr<float>();
    for (size_t i = 0; i < v.size(); ++i) {
      const float here = op == 0 ? vexp(v[i]) : vtanh(v[i]);
      ASSERT_EQ(std::bit_cast<uint32_t>(d[i]), std::bit_cast<uint32_t>(here)) << op << " " << v[i];
      ASSERT_EQ(std::bit_cast<uint32_t>(s[i]), std::bit_cast<uint32_t>(here)) << op << " " << v[i];
    }
  }
}

TEST(VecMathTest, LogIsWithinTwoUlpsAwayFromOne) {
  double worst = 0, worstNearOne = 0;
  forSampledFloats([&](float x) {
    if (x <= 0) return;
    double exact = std::log(double(x));
    if (std::fabs(x - 1.0f) < 0.1f) worstNearOne = std::max(worstNearOne, std::fabs(vlog(x) - exact));
    else worst = std::max(worst, ulps(vlog(x), exact));
  });
  EXPECT_LE(worst, 2.0);
  EXPECT_LE(worstNearOne, 1e-8);
}

TEST(VecMathTest, TanhIsWithinThreeUlps) {
  double worst = 0;
  forSampledFloats([&](float x) {
    double exact = std::tanh(double(x));
    if (std::fabs(exact) < std::numeric_limits<float>::min()) return;
    worst = std::max(worst, ulps(vtanh(x), exact));
  });
  EXPECT_LE(worst, 3.0);
}

TEST(VecMathTest, SpecialValuesFollowTheCLibrary) {
  EXPECT_TRUE(std::isnan(vexp(NAN)));
  EXPECT_EQ(vexp(INFINITY), INFINITY);
  EXPECT_EQ(vexp(-INFINITY), 0.0f);
  EXPECT_EQ(vexp(0.0f), 1.0f);
  EXPECT_EQ(vlog(0.0f), -INFINITY);
  EXPECT_EQ(vlog(-0.0f), -INFINITY);
  EXPECT_TRUE(std::isnan(vlog(-1.0f)));
  EXPECT_TRUE(std::isnan(vlog(NAN)));
  EXPECT_EQ(vlog(INFINITY), INFINITY);
  EXPECT_EQ(vlog(1.0f), 0.0f);
  EXPECT_NEAR(vlog(1e-45f), std::log(double(1e-45f)), 1e-5);  // the smallest denormal
  EXPECT_EQ(vtanh(INFINITY), 1.0f);
  EXPECT_EQ(vtanh(-INFINITY), -1.0f);
  EXPECT_TRUE(std::isnan(vtanh(NAN)));
  EXPECT_TRUE(std::signbit(vtanh(-0.0f)));
}

TEST(VecMathTest, DoublesUseTheCLibrary) {
  EXPECT_EQ(kernels::exp(0.5), std::exp(0.5));
  EXPECT_EQ(kernels::log(0.5), std::log(0.5));
  EXPECT_EQ(kernels::tanh(0.5), std::tanh(0.5));
}

}  // namespace
}  // namespace kiln::kernels
