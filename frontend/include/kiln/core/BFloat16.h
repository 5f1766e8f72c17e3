// BFloat16: the upper half of a float, rounded to nearest even from float.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "kiln/core/Float16.h"

namespace kiln {

namespace detail {

// Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even, and carries into
// the exponent (up to infinity) exactly when it should. NaN is kept quiet with its sign.
constexpr uint16_t floatToBFloat16Bits(float value) noexcept {
  uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x0040u);
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

constexpr float bfloat16BitsToFloat(uint16_t bits) noexcept {
  return std::bit_cast<float>(uint32_t(bits) << 16);
}

struct BFloat16Format {
  static constexpr uint16_t toBits(float value) noexcept { return floatToBFloat16Bits(value); }
  static constexpr float toFloat(uint16_t bits) noexcept { return bfloat16BitsToFloat(bits); }
  static constexpr int kDigits = 8;
  static constexpr int kMaxExponent = 128;
  static constexpr int kMinExponent = -125;
  static constexpr uint16_t kMinBits = 0x0080;
  static constexpr uint16_t kMaxBits = 0x7f7f;
  static constexpr uint16_t kEpsilonBits = 0x3c00;
  static constexpr uint16_t kInfinityBits = 0x7f80;
  static constexpr uint16_t kQuietNaNBits = 0x7fc0;
};

}  // namespace detail

using BFloat16 = detail::Float16<detail::BFloat16Format>;

static_assert(sizeof(BFloat16) == 2 && std::is_trivially_copyable_v<BFloat16>);

}  // namespace kiln
