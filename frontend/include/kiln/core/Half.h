// Half: IEEE 754 binary16 storage type with correctly rounded conversions from float.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "kiln/core/Float16.h"

namespace kiln {

namespace detail {

// Round to nearest, ties to even, in integer arithmetic so the result does not depend on
// the floating-point environment. NaN stays NaN (quiet, sign and top payload bits kept).
constexpr uint16_t floatToHalfBits(float value) noexcept {
  uint32_t x = std::bit_cast<uint32_t>(value);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 rounds to infinity
  if (abs >= 0x38800000u) {                                 // normal half (>= 2^-14)
    uint32_t odd = (abs >> 13) & 1u;
    uint32_t rebiased = abs - ((127u - 15u) << 23) + 0xfffu + odd;
    return uint16_t(sign | (rebiased >> 13));
  }
  // Subnormal half or zero: the result counts units of 2^-24.
  uint32_t exponent = abs >> 23;
  if (exponent < 102) return uint16_t(sign);  // below 2^-25: rounds to (signed) zero
  uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126 - exponent;  // 14..24
  uint32_t units = mantissa >> shift;
  uint32_t rest = mantissa & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (units & 1u))) ++units;  // may carry into 2^-14: fine
  return uint16_t(sign | units);
}

// Exact: every half is a float.
constexpr float halfBitsToFloat(uint16_t bits) noexcept {
  uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0)
    return std::bit_cast<float>(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // Subnormal: normalize the mantissa into a float exponent.
  int shift = std::countl_zero(mantissa) - 21;  // moves the leading 1 to bit 10
  mantissa = (mantissa << shift) & 0x3ffu;
  uint32_t biased = uint32_t(127 - 15 + 1 - shift);
  return std::bit_cast<float>(sign | (biased << 23) | (mantissa << 13));
}

struct HalfFormat {
  static constexpr uint16_t toBits(float value) noexcept { return floatToHalfBits(value); }
  static constexpr float toFloat(uint16_t bits) noexcept { return halfBitsToFloat(bits); }
  static constexpr int kDigits = 11;
  static constexpr int kMaxExponent = 16;
  static constexpr int kMinExponent = -13;
  static constexpr uint16_t kMinBits = 0x0400;
  static constexpr uint16_t kMaxBits = 0x7bff;
  static constexpr uint16_t kEpsilonBits = 0x1400;
  static constexpr uint16_t kInfinityBits = 0x7c00;
  static constexpr uint16_t kQuietNaNBits = 0x7e00;
};

}  // namespace detail

using Half = detail::Float16<detail::HalfFormat>;

static_assert(sizeof(Half) == 2 && std::is_trivially_copyable_v<Half>);

}  // namespace kiln
