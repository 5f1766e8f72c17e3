#include "kiln/core/Random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

namespace kiln {
namespace {

// Random123's kat_vectors, "philox4x32 10" lines: counter, key -> output.
TEST(RandomTest, PhiloxKnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                          {0xffffffff, 0xffffffff}),
            (PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                          {0xa4093822, 0x299f31d0}),
            (PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

// The documented key/counter mapping, spelled out word by word.
TEST(RandomTest, StreamBlocksUseSeedAsKeyAndOffsetAsCounter) {
  Generator g{0x0123456789abcdefull, 0x00000001fffffffeull};
  EXPECT_EQ(g.block(0), philox4x32_10({0xfffffffe, 0x1, 0, 0}, {0x89abcdef, 0x01234567}));
  EXPECT_EQ(g.block(3), philox4x32_10({0x00000001, 0x2, 0, 0}, {0x89abcdef, 0x01234567}));
  Generator end{5, ~0ull};
  EXPECT_EQ(end.block(1), philox4x32_10({0, 0, 0, 0}, {5, 0}));  // the counter wraps
}

TEST(RandomTest, BitsAreLanesOfConsecutiveBlocks) {
  Generator g{0, 0};
  std::vector<uint32_t> bits(10);
  fillRandomBits(g, bits);
  for (size_t i = 0; i < bits.size(); ++i) EXPECT_EQ(bits[i], g.block(i / 4)[i % 4]) << i;
  EXPECT_EQ(bits[0], 0x6627e8d5u);  // block 0 of key 0 is the first known answer
  EXPECT_EQ(bits[3], 0x9b00dbd8u);
}

TEST(RandomTest, UniformFloatAndDoubleFromKnownBits) {
  Generator g{0, 0};
  std::vector<float> f(4);
  fillUniform(g, std::span<float>(f));
  EXPECT_EQ(f[0], float(0x6627e8d5u >> 8) / 16777216.0f);
  EXPECT_EQ(f[3], float(0x9b00dbd8u >> 8) / 16777216.0f);
  std::vector<double> d(2);
  fillUniform(g, std::span<double>(d));
  EXPECT_EQ(d[0], double(((uint64_t(0xe169c58du) << 32) | 0x6627e8d5u) >> 11) / 0x1.0p53);
  EXPECT_EQ(d[1], double(((uint64_t(0x9b00dbd8u) << 32) | 0xbc57ac4cu) >> 11) / 0x1.0p53);
}

// Box-Muller written out independently from the mapping in Random.h.
TEST(RandomTest, NormalsFollowTheDocumentedFormula) {
  Generator g{42, 7};
  std::vector<float> f(8);
  fillNormal(g, std::span<float>(f));
  for (int i = 0; i < 8; ++i) {
    PhiloxCounter r = g.block(i / 4);
    int p = (i % 4) / 2;
    float u1 = float((r[2 * p] >> 8) + 1) * 0x1.0p-24f;
    float u2 = float(r[2 * p + 1] >> 8) * 0x1.0p-24f;
    float radius = std::sqrt(-2.0f * std::log(u1)), t = 6.2831855f * u2;
    EXPECT_EQ(f[i], i % 2 ? radius * std::sin(t) : radius * std::cos(t)) << i;
  }
  std::vector<double> d(4);
  fillNormal(g, std::span<double>(d));
  for (int i = 0; i < 4; ++i) {
    PhiloxCounter r = g.block(i / 2);
    uint64_t a = (uint64_t(r[0]) | uint64_t(r[1]) << 32) >> 11;
    uint64_t b = (uint64_t(r[2]) | uint64_t(r[3]) << 32) >> 11;
    double u1 = double(a + 1) * 0x1.0p-53, u2 = double(b) * 0x1.0p-53;
    double radius = std::sqrt(-2.0 * std::log(u1)), t = 6.283185307179586 * u2;
    EXPECT_EQ(d[i], i % 2 ? radius * std::sin(t) : radius * std::cos(t)) << i;
  }
}

// Chunks drawn with `first` (as parallelFor splits a range) equal the whole draw.
TEST(RandomTest, SplitDrawsMatchTheWholeDraw) {
  Generator g{2024, 11};
  std::vector<float> whole(103), pieces(103);
  fillNormal(g, std::span<float>(whole));
  for (size_t begin = 0; begin < pieces.size(); begin += 7) {
    size_t n = std::min<size_t>(7, pieces.size() - begin);
    fillNormal(g, std::span<float>(pieces).subspan(begin, n), begin);
  }
  EXPECT_EQ(whole, pieces);
  std::vector<double> wd(33), pd(33);
  fillUniform(g, std::span<double>(wd));
  fillUniform(g, std::span<double>(pd).first(5));
  fillUniform(g, std::span<double>(pd).subspan(5), 5);
  EXPECT_EQ(wd, pd);
}

TEST(RandomTest, BlockCounts) {
  static_assert(philoxBlocks<float>(0) == 0 && philoxBlocks<float>(1) == 1);
  static_assert(philoxBlocks<float>(4) == 1 && philoxBlocks<float>(5) == 2);
  static_assert(philoxBlocks<double>(2) == 1 && philoxBlocks<double>(3) == 2);
  static_assert(philoxBlocks<uint32_t>(9) == 3);
}

TEST(RandomTest, ManualSeedMakesDrawsReproducibleAndDrawsDisjoint) {
  auto draw = [] {
    std::vector<float> v(10);
    fillUniform(reserveDefault(philoxBlocks<float>(v.size())), std::span<float>(v));
    return v;
  };
  manual_seed(123);
  auto a = draw(), b = draw();
  EXPECT_EQ(defaultGenerator(), (Generator{123, 6}));
  manual_seed(123);
  EXPECT_EQ(draw(), a);
  EXPECT_EQ(draw(), b);
  EXPECT_NE(a, b);
  manual_seed(124);
  EXPECT_NE(draw(), a);
}

TEST(RandomTest, DefaultGeneratorStateCanBeSavedAndRestored) {
  setDefaultGenerator({kDefaultSeed, 0});
  EXPECT_EQ(defaultGenerator(), Generator());
  setDefaultGenerator({9, 40});
  Generator at = reserveDefault(3);
  EXPECT_EQ(at, (Generator{9, 40}));
  EXPECT_EQ(defaultGenerator(), (Generator{9, 43}));
}

TEST(RandomTest, UniformRangeAndMoments) {
  std::vector<float> f(1 << 16);
  fillUniform(Generator{1, 0}, std::span<float>(f));
  for (float x : f) ASSERT_TRUE(x >= 0.0f && x < 1.0f);
  double mean = std::accumulate(f.begin(), f.end(), 0.0) / f.size();
  EXPECT_NEAR(mean, 0.5, 0.005);
}

TEST(RandomTest, NormalMoments) {
  std::vector<double> d(1 << 16);
  fillNormal(Generator{3, 0}, std::span<double>(d));
  double mean = std::accumulate(d.begin(), d.end(), 0.0) / d.size();
  double var = 0;
  for (double x : d) var += (x - mean) * (x - mean);
  var /= d.size();
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(var, 1.0, 0.02);
  for (double x : d) ASSERT_TRUE(std::isfinite(x));
}

}  // namespace
}  // namespace kiln
