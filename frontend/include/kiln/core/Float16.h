// The storage type shared by Half and BFloat16: 16 bits converted to and from float by a
// format (codec) that also supplies the numeric limits.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

namespace kiln::detail {

// Arithmetic goes through float (the implicit conversions), as with c10::Half/BFloat16.
// Format provides toBits(float), toFloat(bits) and the limits' constants.
template <class Format>
struct Float16 {
  uint16_t bits;

  Float16() = default;
  constexpr Float16(float value) noexcept : bits(Format::toBits(value)) {}
  constexpr operator float() const noexcept { return Format::toFloat(bits); }

  static constexpr Float16 fromBits(uint16_t bits) noexcept {
    Float16 f;
    f.bits = bits;
    return f;
  }
};

}  // namespace kiln::detail

// Kernels write numeric_limits<T>::lowest() and infinity(); the primary template would
// silently answer 0 for a 16-bit float.
template <class Format>
struct std::numeric_limits<kiln::detail::Float16<Format>> {
  using T = kiln::detail::Float16<Format>;
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = Format::kDigits;
  static constexpr int max_exponent = Format::kMaxExponent;
  static constexpr int min_exponent = Format::kMinExponent;
  static constexpr T min() noexcept { return T::fromBits(Format::kMinBits); }
  static constexpr T max() noexcept { return T::fromBits(Format::kMaxBits); }
  static constexpr T lowest() noexcept { return T::fromBits(Format::kMaxBits | 0x8000); }
  static constexpr T epsilon() noexcept { return T::fromBits(Format::kEpsilonBits); }
  static constexpr T infinity() noexcept { return T::fromBits(Format::kInfinityBits); }
  static constexpr T quiet_NaN() noexcept { return T::fromBits(Format::kQuietNaNBits); }
  static constexpr T denorm_min() noexcept { return T::fromBits(0x0001); }
};
