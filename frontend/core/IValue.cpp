// IValue's checked accessors (see kiln/core/IValue.h).
#include "kiln/core/IValue.h"

namespace kiln {

template <class T>
const T& IValue::as(const char* kind, const char* what, const SourceLoc& loc) const {
  if (const T* value = std::get_if<T>(&value_)) return *value;
  throw TypeError::make(loc, what, "expected an IValue holding ", kind, ", but it holds ", tagKind());
}

bool IValue::toBool(const SourceLoc& loc) const { return as<bool>("Bool", "IValue::toBool", loc); }

int64_t IValue::toInt(const SourceLoc& loc) const { return as<int64_t>("Int", "IValue::toInt", loc); }

double IValue::toDouble(const SourceLoc& loc) const {
  if (isInt()) return double(std::get<int64_t>(value_));
  return as<double>("Double", "IValue::toDouble", loc);
}

const std::string& IValue::toStringRef(const SourceLoc& loc) const {
  return as<std::string>("String", "IValue::toStringRef", loc);
}

Tensor IValue::toTensor(const SourceLoc& loc) const {
  return as<Tensor>("Tensor", "IValue::toTensor", loc);
}

std::vector<int64_t> IValue::toIntVector(const SourceLoc& loc) const {
  return as<std::vector<int64_t>>("IntList", "IValue::toIntVector", loc);
}

std::vector<double> IValue::toDoubleVector(const SourceLoc& loc) const {
  return as<std::vector<double>>("DoubleList", "IValue::toDoubleVector", loc);
}

const char* IValue::tagKind() const {
  static constexpr const char* kKinds[] = {"None",   "Bool",   "Int",     "Double",
                                           "String", "Tensor", "IntList", "DoubleList"};
  return kKinds[value_.index()];
}

}  // namespace kiln
