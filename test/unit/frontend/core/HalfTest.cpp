#include "kiln/core/Half.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln {
namespace {

uint16_t bitsOf(float f) { return Half(f).bits; }
float fromBits(uint16_t bits) { return Half::fromBits(bits); }
float floatFromBits(uint32_t bits) { return std::bit_cast<float>(bits); }

// Expected patterns from Python's struct 'e' format, which rounds to nearest even.
TEST(HalfTest, NormalValues) {
  EXPECT_EQ(bitsOf(1.0f), 0x3c00);
  EXPECT_EQ(bitsOf(-2.5f), 0xc100);
  EXPECT_EQ(bitsOf(0.1f), 0x2e66);
  EXPECT_EQ(bitsOf(3.14159f), 0x4248);
  EXPECT_EQ(bitsOf(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(bitsOf(65504.0f), 0x7bff);
  EXPECT_EQ(bitsOf(65519.0f), 0x7bff);
  EXPECT_EQ(bitsOf(6.103515625e-05f), 0x0400);  // 2^-14, the smallest normal
}

TEST(HalfTest, TiesRoundToEven) {
  EXPECT_EQ(bitsOf(1.0f + 0x1.0p-11f), 0x3c00);      // halfway to 0x3c01: stays even
  EXPECT_EQ(bitsOf(1.0f + 3 * 0x1.0p-11f), 0x3c02);  // halfway 0x3c01..0x3c02: up to even
  EXPECT_EQ(bitsOf(std::nextafter(1.0f + 0x1.0p-11f, 2.0f)), 0x3c01);
  EXPECT_EQ(bitsOf(65520.0f), 0x7c00);  // halfway between max and 2^16: infinity
  EXPECT_EQ(bitsOf(std::nextafter(65520.0f, 0.0f)), 0x7bff);
}

TEST(HalfTest, SubnormalsAndZeros) {
  EXPECT_EQ(bitsOf(0x1.0p-24f), 0x0001);
  EXPECT_EQ(bitsOf(0x1.0p-25f), 0x0000);          // tie: to even zero
  EXPECT_EQ(bitsOf(1.5f * 0x1.0p-25f), 0x0001);
  EXPECT_EQ(bitsOf(3 * 0x1.0p-25f), 0x0002);      // tie between 1 and 2 units: to 2
  EXPECT_EQ(bitsOf(1023 * 0x1.0p-24f), 0x03ff);   // the largest subnormal
  EXPECT_EQ(bitsOf(0x1.0p-14f - 0x1.0p-26f), 0x0400);  // rounds up into the normals
  EXPECT_EQ(bitsOf(1e-5f), 0x00a8);
  EXPECT_EQ(bitsOf(1e-10f), 0x0000);
  EXPECT_EQ(bitsOf(-1e-10f), 0x8000);
  EXPECT_EQ(bitsOf(-0.0f), 0x8000);
  EXPECT_EQ(bitsOf(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(fromBits(0x0001), 0x1.0p-24f);
  EXPECT_EQ(fromBits(0x03ff), 1023 * 0x1.0p-24f);
  EXPECT_EQ(fromBits(0x8001), -0x1.0p-24f);
  EXPECT_TRUE(std::signbit(fromBits(0x8000)));
}

TEST(HalfTest, InfinityAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bitsOf(inf), 0x7c00);
  EXPECT_EQ(bitsOf(-inf), 0xfc00);
  EXPECT_EQ(bitsOf(1e10f), 0x7c00);
  EXPECT_EQ(bitsOf(std::numeric_limits<float>::quiet_NaN()), 0x7e00);
  EXPECT_EQ(bitsOf(floatFromBits(0xffc00000)), 0xfe00);  // sign kept
  // A NaN whose payload lies only in the dropped bits must not become infinity.
  EXPECT_EQ(bitsOf(floatFromBits(0x7f800001)), 0x7e00);
  EXPECT_EQ(fromBits(0x7c00), inf);
  EXPECT_EQ(fromBits(0xfc00), -inf);
  EXPECT_TRUE(std::isnan(fromBits(0x7e00)));
  EXPECT_TRUE(std::isnan(fromBits(0x7c01)));
}

// Every half survives half -> float -> half, and float -> half is the nearest, ties to
// even: checked at every midpoint between neighbours and one float ulp either side.
TEST(HalfTest, ExhaustiveRoundTripAndRounding) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    Half h = Half::fromBits(uint16_t(b));
    if (std::isnan(float(h))) {
      EXPECT_TRUE(std::isnan(float(Half(float(h))))) << b;
      continue;
    }
    EXPECT_EQ(Half(float(h)).bits, b);
  }
  for (uint16_t b = 0; b < 0x7bff; ++b) {  // 0x7bff..inf: TiesRoundToEven
    float lo = fromBits(b), hi = fromBits(uint16_t(b + 1));
    float mid = lo + (hi - lo) / 2;  // exact: 12 significant bits at most
    uint16_t even = (b & 1) ? uint16_t(b + 1) : b;
    EXPECT_EQ(bitsOf(mid), even) << b;
    EXPECT_EQ(bitsOf(std::nextafter(mid, 0.0f)), b) << b;
    EXPECT_EQ(bitsOf(std::nextafter(mid, 1e30f)), b + 1) << b;
    EXPECT_EQ(bitsOf(-mid), even | 0x8000) << b;
  }
}

TEST(HalfTest, ArithmeticGoesThroughFloat) {
  Half a = 1.5f, b = 2.25f;
  Half c = a * b;
  EXPECT_EQ(float(c), 3.375f);
  EXPECT_TRUE(a < b);
  EXPECT_EQ(Half(0.1) == Half(0.1f), true);
  constexpr Half k = 2.0f;
  static_assert(k.bits == 0x4000);
}

TEST(HalfTest, NumericLimits) {
  using L = std::numeric_limits<Half>;
  static_assert(L::is_specialized && !L::is_integer);
  EXPECT_EQ(float(L::max()), 65504.0f);
  EXPECT_EQ(float(L::lowest()), -65504.0f);
  EXPECT_EQ(float(L::min()), 0x1.0p-14f);
  EXPECT_EQ(float(L::epsilon()), 0x1.0p-10f);
  EXPECT_EQ(float(L::denorm_min()), 0x1.0p-24f);
  EXPECT_TRUE(std::isinf(float(L::infinity())));
  EXPECT_TRUE(std::isnan(float(L::quiet_NaN())));
}

}  // namespace
}  // namespace kiln
