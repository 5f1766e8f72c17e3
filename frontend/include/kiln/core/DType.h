// Element types: sizes, names, PyTorch's type promotion, C++ type traits and dispatch.
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <source_location>
#include <string_view>
#include <type_traits>

#include "kiln/core/BFloat16.h"
#include "kiln/core/Error.h"
#include "kiln/core/Half.h"

namespace kiln {

enum class DType : uint8_t { Float32, Float64, Float16, BFloat16, Int32, Int64, Bool };

inline constexpr int kNumDTypes = 7;

// LibTorch's spellings.
inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
inline constexpr DType kDouble = DType::Float64;
inline constexpr DType kFloat16 = DType::Float16;
inline constexpr DType kHalf = DType::Float16;
inline constexpr DType kBFloat16 = DType::BFloat16;
inline constexpr DType kInt32 = DType::Int32;
inline constexpr DType kInt = DType::Int32;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kLong = DType::Int64;
inline constexpr DType kBool = DType::Bool;

// The dtype of `rand`, `ones`, ... when none is given and of float scalars meeting integer
// tensors (torch.get_default_dtype()).
inline constexpr DType kDefaultFloat = DType::Float32;

// Bytes per element.
size_t elementSize(DType dtype);

// "float32", "bfloat16", "bool", ...; "kiln.float32" as PyTorch prints "torch.float32".
std::string_view name(DType dtype);
std::string qualifiedName(DType dtype);

// Prints name(dtype), so messages read "got int64".
std::ostream& operator<<(std::ostream& os, DType dtype);

bool isFloatingPoint(DType dtype);
bool isIntegral(DType dtype, bool includeBool);

// The dtype two tensor operands compute in: PyTorch's promoteTypes restricted to Kiln's
// dtypes (bool < integers < floats; float16 with bfloat16 gives float32; an integer with
// a 16-bit float keeps the 16-bit float).
DType promoteTypes(DType a, DType b);

// What a C++/Python scalar operand is, for PyTorch's result_type rules.
enum class ScalarKind : uint8_t { Bool, Integral, Floating };

template <class T>
constexpr ScalarKind scalarKindOf() {
  static_assert(std::is_arithmetic_v<T>, "scalars are bool, integers or floating point");
  if constexpr (std::is_same_v<T, bool>) return ScalarKind::Bool;
  else if constexpr (std::is_integral_v<T>) return ScalarKind::Integral;
  else return ScalarKind::Floating;
}

// The result dtype of `tensor <op> scalar`: a scalar only changes the dtype when it is of a
// higher kind than the tensor, and then gives that kind's default (int64, float32). So
// int32 + 2.5 -> float32, float16 + 2.5 -> float16, bool + 1 -> int64, int32 + 1 -> int32.
DType resultTypeWithScalar(DType tensor, ScalarKind scalar);

// ---- C++ types ------------------------------------------------------------------------

namespace detail {
template <DType D> struct CppTypeOf;
template <> struct CppTypeOf<DType::Float32> { using type = float; };
template <> struct CppTypeOf<DType::Float64> { using type = double; };
template <> struct CppTypeOf<DType::Float16> { using type = Half; };
template <> struct CppTypeOf<DType::BFloat16> { using type = BFloat16; };
template <> struct CppTypeOf<DType::Int32> { using type = int32_t; };
template <> struct CppTypeOf<DType::Int64> { using type = int64_t; };
template <> struct CppTypeOf<DType::Bool> { using type = bool; };
}  // namespace detail

// The element type stored for a dtype: CppType<kHalf> is Half.
template <DType D>
using CppType = typename detail::CppTypeOf<D>::type;

template <class T>
constexpr DType dtypeOf() {
  if constexpr (std::is_same_v<T, float>) return DType::Float32;
  else if constexpr (std::is_same_v<T, double>) return DType::Float64;
  else if constexpr (std::is_same_v<T, Half>) return DType::Float16;
  else if constexpr (std::is_same_v<T, BFloat16>) return DType::BFloat16;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::Int32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::Int64;
  else if constexpr (std::is_same_v<T, bool>) return DType::Bool;
  else static_assert(!sizeof(T), "no kiln dtype stores this C++ type");
}

// The type kernels compute in: 16-bit floats widen to float, the rest compute as stored.
template <class T>
using OpMathType =
    std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// ---- dispatch -------------------------------------------------------------------------

namespace detail {
// A DType holding none of the enumerators (a cast from a corrupt byte).
[[noreturn]] void throwInvalidDType(DType dtype);
[[noreturn]] void throwUnsupportedDType(DType dtype, std::string_view op,
                                        const std::source_location& loc,
                                        const DType* supported, size_t count);
}  // namespace detail

// Calls f.template operator()<T>() with T = CppType<dtype>; f is usually a template
// lambda: dispatchDType(dt, [&]<class T>() { fill<T>(out); }).
template <class F>
decltype(auto) dispatchDType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float32: return f.template operator()<float>();
    case DType::Float64: return f.template operator()<double>();
    case DType::Float16: return f.template operator()<Half>();
    case DType::BFloat16: return f.template operator()<BFloat16>();
    case DType::Int32: return f.template operator()<int32_t>();
    case DType::Int64: return f.template operator()<int64_t>();
    case DType::Bool: return f.template operator()<bool>();
  }
  detail::throwInvalidDType(dtype);
}

// As dispatchDType, instantiating f only for the listed dtypes; any other dtype raises
// TypeError naming `op`, the dtype and the supported ones, at the user's `loc`.
template <DType... Supported, class F>
decltype(auto) dispatchDTypeAmong(DType dtype, std::string_view op,
                                  const std::source_location& loc, F&& f) {
  static_assert(sizeof...(Supported) > 0);
  static constexpr std::array<DType, sizeof...(Supported)> kSupported{Supported...};
  if (((dtype != Supported) && ...))
    detail::throwUnsupportedDType(dtype, op, loc, kSupported.data(), kSupported.size());
  using Result = decltype(f.template operator()<CppType<kSupported[0]>>());
  return dispatchDType(dtype, [&]<class T>() -> Result {
    if constexpr (((dtypeOf<T>() == Supported) || ...)) return f.template operator()<T>();
    else detail::throwInvalidDType(dtypeOf<T>());  // excluded by the check above
  });
}

// Floating-point kernels (exp, softmax, ...): float32, float64, float16, bfloat16.
template <class F>
decltype(auto) dispatchFloatingDType(DType dtype, std::string_view op,
                                     const std::source_location& loc, F&& f) {
  return dispatchDTypeAmong<DType::Float32, DType::Float64, DType::Float16, DType::BFloat16>(
      dtype, op, loc, std::forward<F>(f));
}

}  // namespace kiln
