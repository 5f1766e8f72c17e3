#include "kiln/core/BFloat16.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln {
namespace {

uint16_t bitsOf(float f) { return BFloat16(f).bits; }
float floatFromBits(uint32_t bits) { return std::bit_cast<float>(bits); }

TEST(BFloat16Test, RoundsToNearest) {
  EXPECT_EQ(bitsOf(1.0f), 0x3f80);
  EXPECT_EQ(bitsOf(-2.5f), 0xc020);
  EXPECT_EQ(bitsOf(0.1f), 0x3dcd);           // 0x3dcccccd: low half above the midpoint
  EXPECT_EQ(bitsOf(3.14159f), 0x4049);       // 0x40490fd0: below
  EXPECT_EQ(bitsOf(1.0f / 3.0f), 0x3eab);    // 0x3eaaaaab
  EXPECT_EQ(bitsOf(floatFromBits(0x3f808000)), 0x3f80);  // tie: stays even
  EXPECT_EQ(bitsOf(floatFromBits(0x3f818000)), 0x3f82);  // tie: up to even
  EXPECT_EQ(bitsOf(floatFromBits(0x3f808001)), 0x3f81);
}

TEST(BFloat16Test, SubnormalsZerosInfinityNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bitsOf(floatFromBits(0x00000001)), 0x0000);
  EXPECT_EQ(bitsOf(floatFromBits(0x00008001)), 0x0001);
  EXPECT_EQ(bitsOf(-0.0f), 0x8000);
  EXPECT_EQ(bitsOf(inf), 0x7f80);
  EXPECT_EQ(bitsOf(-inf), 0xff80);
  EXPECT_EQ(bitsOf(std::numeric_limits<float>::max()), 0x7f80);  // rounds past the max
  EXPECT_EQ(bitsOf(std::numeric_limits<float>::quiet_NaN()), 0x7fc0);
  EXPECT_EQ(bitsOf(floatFromBits(0xffc00000)), 0xffc0);
  EXPECT_EQ(bitsOf(floatFromBits(0x7f800001)), 0x7fc0);  // must not round to infinity
  EXPECT_EQ(bitsOf(floatFromBits(0x7fffffff)), 0x7fff);  // must not carry into the sign
  EXPECT_EQ(float(BFloat16::fromBits(0x7f80)), inf);
  EXPECT_TRUE(std::isnan(float(BFloat16::fromBits(0x7f81))));
}

TEST(BFloat16Test, ExhaustiveRoundTripAndMidpoints) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = BFloat16::fromBits(uint16_t(b));
    EXPECT_EQ(std::bit_cast<uint32_t>(f), b << 16);
    if (!std::isnan(f)) {
      EXPECT_EQ(bitsOf(f), b);
    }
  }
  for (uint32_t b = 0; b < 0x7f80; ++b) {
    uint32_t mid = (b << 16) | 0x8000;
    uint32_t even = (b & 1) ? b + 1 : b;
    EXPECT_EQ(bitsOf(floatFromBits(mid)), even) << b;
    EXPECT_EQ(bitsOf(floatFromBits(mid - 1)), b) << b;
    EXPECT_EQ(bitsOf(floatFromBits(mid + 1)), b + 1) << b;
  }
}

TEST(BFloat16Test, NumericLimits) {
  using L = std::numeric_limits<BFloat16>;
  static_assert(L::is_specialized && L::digits == 8);
  EXPECT_EQ(float(L::max()), floatFromBits(0x7f7f0000));
  EXPECT_EQ(float(L::lowest()), -floatFromBits(0x7f7f0000));
  EXPECT_EQ(float(L::min()), std::numeric_limits<float>::min());
  EXPECT_EQ(float(L::epsilon()), 0x1.0p-7f);
  EXPECT_TRUE(std::isinf(float(L::infinity())));
  EXPECT_TRUE(std::isnan(float(L::quiet_NaN())));
  EXPECT_EQ(float(L::denorm_min()), floatFromBits(0x00010000));
}

}  // namespace
}  // namespace kiln
