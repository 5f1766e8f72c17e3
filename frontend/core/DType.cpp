#include "kiln/core/DType.h"

#include <string>

namespace kiln {

namespace {

struct DTypeInfo {
  std::string_view name;
  size_t size;
};

// Indexed by the enumerator value.
constexpr std::array<DTypeInfo, kNumDTypes> kInfo{{
    {"float32", 4},
    {"float64", 8},
    {"float16", 2},
    {"bfloat16", 2},
    {"int32", 4},
    {"int64", 8},
    {"bool", 1},
}};

const DTypeInfo& info(DType dtype) {
  auto index = static_cast<size_t>(dtype);
  if (index >= kInfo.size()) detail::throwInvalidDType(dtype);
  return kInfo[index];
}

// PyTorch's c10::promoteTypes table, rows and columns in enumerator order
// (f32 f64 f16 bf16 i32 i64 b1).
constexpr DType f4 = DType::Float32, f8 = DType::Float64, f2 = DType::Float16,
                bf = DType::BFloat16, i4 = DType::Int32, i8 = DType::Int64, b1 = DType::Bool;
constexpr DType kPromote[kNumDTypes][kNumDTypes] = {
    /* f32  */ {f4, f8, f4, f4, f4, f4, f4},
    /* f64  */ {f8, f8, f8, f8, f8, f8, f8},
    /* f16  */ {f4, f8, f2, f4, f2, f2, f2},
    /* bf16 */ {f4, f8, f4, bf, bf, bf, bf},
    /* i32  */ {f4, f8, f2, bf, i4, i8, i4},
    /* i64  */ {f4, f8, f2, bf, i8, i8, i8},
    /* bool */ {f4, f8, f2, bf, i4, i8, b1},
};

// bool < integral < floating, the order result_type compares kinds in.
ScalarKind kindOf(DType dtype) {
  if (isFloatingPoint(dtype)) return ScalarKind::Floating;
  return dtype == DType::Bool ? ScalarKind::Bool : ScalarKind::Integral;
}

}  // namespace

size_t elementSize(DType dtype) { return info(dtype).size; }

std::string_view name(DType dtype) { return info(dtype).name; }

std::string qualifiedName(DType dtype) { return "kiln." + std::string(name(dtype)); }

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << name(dtype); }

bool isFloatingPoint(DType dtype) {
  info(dtype);  // rejects invalid values
  return dtype == DType::Float32 || dtype == DType::Float64 || dtype == DType::Float16 ||
         dtype == DType::BFloat16;
}

bool isIntegral(DType dtype, bool includeBool) {
  info(dtype);
  return dtype == DType::Int32 || dtype == DType::Int64 || (includeBool && dtype == DType::Bool);
}

DType promoteTypes(DType a, DType b) {
  info(a);
  info(b);
  return kPromote[static_cast<size_t>(a)][static_cast<size_t>(b)];
}

DType resultTypeWithScalar(DType tensor, ScalarKind scalar) {
  if (scalar <= kindOf(tensor)) return tensor;
  return scalar == ScalarKind::Floating ? kDefaultFloat : DType::Int64;
}

namespace detail {

void throwInvalidDType(DType dtype) {
  throw TypeError::make(std::source_location::current(), "dtype", "invalid dtype value ",
                        static_cast<int>(dtype), " (memory corruption or a bad cast)");
}

void throwUnsupportedDType(DType dtype, std::string_view op, const std::source_location& loc,
                           const DType* supported, size_t count) {
  std::string list;
  for (size_t i = 0; i < count; ++i) list += (i ? ", " : "") + std::string(name(supported[i]));
  throw TypeError::make(loc, op, "dtype ", dtype, " is not supported (expected one of ", list,
                        ")");
}

}  // namespace detail

}  // namespace kiln
