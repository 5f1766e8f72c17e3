// nn::init: gains, fans, and the distributions each initializer draws from.
#include "kiln/nn/Init.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kiln/core/Ops.h"
#include "test/unit/frontend/Golden.h"
#include "test/unit/frontend/nn/NnTestSupport.h"

namespace kiln::nn::init {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

using golden::valuesAsDouble;

using nn::testing::Stats;
using nn::testing::statsOf;

void expectUniform(const Tensor& t, double low, double high) {
  Stats s = statsOf(t);
  const double width = high - low;
  EXPECT_GE(s.min, low);
  EXPECT_LT(s.max, high);
  EXPECT_LT(s.min, low + 0.01 * width);
  EXPECT_GT(s.max, high - 0.01 * width);
  EXPECT_NEAR(s.mean, (low + high) / 2, 0.02 * width);
  EXPECT_NEAR(std::sqrt(s.var), width / std::sqrt(12.0), 0.03 * width / std::sqrt(12.0));
}

void expectNormal(const Tensor& t, double mean, double std) {
  Stats s = statsOf(t);
  EXPECT_NEAR(s.mean, mean, 0.03 * std);
  EXPECT_NEAR(std::sqrt(s.var), std, 0.03 * std);
}

TEST(InitTest, GainsAsPyTorch) {
  EXPECT_EQ(calculate_gain(kLinear), 1.0);
  EXPECT_EQ(calculate_gain(kConv2d), 1.0);
  EXPECT_EQ(calculate_gain(kSigmoid), 1.0);
  EXPECT_DOUBLE_EQ(calculate_gain(kTanh), 5.0 / 3);
  EXPECT_DOUBLE_EQ(calculate_gain(kReLU), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(calculate_gain(kLeakyReLU), std::sqrt(2.0 / (1 + 0.01 * 0.01)));
  EXPECT_DOUBLE_EQ(calculate_gain(kLeakyReLU, 0.2), std::sqrt(2.0 / 1.04));
  EXPECT_DOUBLE_EQ(calculate_gain(kLeakyReLU, std::sqrt(5.0)), std::sqrt(1.0 / 3));
  EXPECT_EQ(calculate_gain(kSELU), 0.75);
}

TEST(InitTest, Fans) {
  Fans conv = calculate_fan_in_and_fan_out(empty({32, 16, 3, 5}));
  EXPECT_EQ(conv.fan_in, 16 * 15);
  EXPECT_EQ(conv.fan_out, 32 * 15);
  Fans linear = calculate_fan_in_and_fan_out(empty({10, 784}));
  EXPECT_EQ(linear.fan_in, 784);
  EXPECT_EQ(linear.fan_out, 10);
  EXPECT_THAT([] { calculate_fan_in_and_fan_out(empty({5})); },
              ThrowsMessage<Error>(HasSubstr("fewer than 2 dims, got shape [5]")));
  EXPECT_THAT([] { kaiming_uniform_(empty({5})); },
              ThrowsMessage<Error>(HasSubstr("fewer than 2 dims")));
}

TEST(InitTest, UniformNormalConstant) {
  expectUniform(uniform_(empty({20000})), 0, 1);
  expectUniform(uniform_(empty({200, 100}), -3, 5), -3, 5);
  expectNormal(normal_(empty({20000})), 0, 1);
  expectNormal(normal_(empty({20000}, kFloat64), 2, 0.5), 2, 0.5);
  for (double v : valuesAsDouble(constant_(empty({3, 2}), 0.3))) EXPECT_FLOAT_EQ(float(v), 0.3f);
  for (double v : valuesAsDouble(zeros_(ones({4})))) EXPECT_EQ(v, 0);
  for (double v : valuesAsDouble(ones_(zeros({4}, kInt64)))) EXPECT_EQ(v, 1);
}

TEST(InitTest, Glorot) {
  // fan_in 300, fan_out 200: std = gain·√(2 / 500).
  const double std = std::sqrt(2.0 / 500);
  expectUniform(xavier_uniform_(empty({200, 300})), -std::sqrt(3.0) * std, std::sqrt(3.0) * std);
  expectNormal(xavier_normal_(empty({200, 300}), 2.0), 0, 2 * std);
}

TEST(InitTest, He) {
  // [64, 32, 3, 3]: fan_in 288, fan_out 576.
  const double reluGain = std::sqrt(2.0);
  double bound = std::sqrt(3.0) * reluGain / std::sqrt(288.0);
  expectUniform(kaiming_uniform_(empty({64, 32, 3, 3})), -bound, bound);  // a = 0: gain √2
  bound = std::sqrt(3.0) / std::sqrt(3.0) / std::sqrt(288.0);               // a = √5: gain √(1/3)
  expectUniform(kaiming_uniform_(empty({64, 32, 3, 3}), std::sqrt(5.0)), -bound, bound);
  expectNormal(kaiming_normal_(empty({64, 32, 3, 3}), 0, kFanOut), 0, reluGain / std::sqrt(576.0));
  expectNormal(kaiming_normal_(empty({64, 32, 3, 3}), 0, kFanIn, kTanh), 0, 5.0 / 3 / std::sqrt(288.0));
  Tensor none = empty({0, 4});
  EXPECT_TRUE(kaiming_uniform_(none).is_same(none));  // nothing to draw
}

TEST(InitTest, WritesInPlaceWithoutHistory) {
  Tensor w = empty({4, 4}).requires_grad_();
  Tensor out = kaiming_uniform_(w);
  EXPECT_TRUE(out.is_same(w));
  EXPECT_TRUE(w.is_leaf());
  EXPECT_TRUE(w.requires_grad());
  EXPECT_FALSE(w.grad_fn());
}

TEST(InitTest, DTypes) {
  Tensor h = uniform_(empty({1000}, kFloat16), -1, 1);
  EXPECT_EQ(h.dtype(), kFloat16);
  Stats s = statsOf(h);
  EXPECT_GE(s.min, -1);
  EXPECT_LE(s.max, 1);
  EXPECT_THAT([] { uniform_(zeros({3}, kInt64)); },
              ThrowsMessage<Error>(HasSubstr("uniform_: expects a floating-point tensor, got int64 of shape [3]")));
  EXPECT_THAT([] { normal_(zeros({3}, kInt32)); },
              ThrowsMessage<Error>(HasSubstr("floating-point")));
}

}  // namespace
}  // namespace kiln::nn::init
