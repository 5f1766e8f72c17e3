// Scalar: a number of one of three kinds (bool, integer, floating), LibTorch's
// torch::Scalar. Ops take it where LibTorch does (x.pow(2), x + 0.5, x.add(y, alpha)), and
// Tensor::item() returns one. Integers keep all 64 bits.
#pragma once

#include <concepts>
#include <cstdint>
#include <ostream>
#include <type_traits>

#include "kiln/core/DType.h"

namespace kiln {

// The C++ types a Scalar is made from: bool, the integers and the floating types.
template <class S>
concept Arithmetic = std::is_arithmetic_v<S>;

class Scalar {
 public:
  Scalar() : Scalar(int64_t(0)) {}
  template <Arithmetic T>
  Scalar(T value) : kind_(scalarKindOf<T>()) {  // NOLINT: implicit, as LibTorch
    if constexpr (std::is_floating_point_v<T>) floating_ = double(value);
    else integral_ = int64_t(value);
  }

  ScalarKind kind() const { return kind_; }
  bool isFloatingPoint() const { return kind_ == ScalarKind::Floating; }
  bool isIntegral(bool includeBool) const {
    return kind_ == ScalarKind::Integral || (includeBool && kind_ == ScalarKind::Bool);
  }
  bool isBoolean() const { return kind_ == ScalarKind::Bool; }

  // The value converted to T, as a C++ cast of the held value would.
  template <Arithmetic T>
  T to() const {
    return isFloatingPoint() ? T(floating_) : T(integral_);
  }
  double toDouble() const { return to<double>(); }
  float toFloat() const { return to<float>(); }
  int64_t toLong() const { return to<int64_t>(); }
  int32_t toInt() const { return to<int32_t>(); }
  bool toBool() const { return to<bool>(); }

 private:
  ScalarKind kind_;
  double floating_ = 0;
  int64_t integral_ = 0;
};

// 2.5, 3, true: the value as its kind prints.
std::ostream& operator<<(std::ostream& os, const Scalar& scalar);

}  // namespace kiln
