// IValue: one value of a few kinds (none, bool, int, double, string, tensor, int and
// double lists), as LibTorch's at::IValue holds them in a custom Function's saved_data.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "kiln/core/Tensor.h"

namespace kiln {

class IValue {
 public:
  IValue() = default;  // None
  IValue(bool value) : value_(value) {}  // NOLINT: implicit, as LibTorch's
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  IValue(T value) : value_(int64_t(value)) {}  // NOLINT
  template <std::floating_point T>
  IValue(T value) : value_(double(value)) {}  // NOLINT
  IValue(std::string value) : value_(std::move(value)) {}  // NOLINT
  IValue(const char* value) : value_(std::string(value)) {}  // NOLINT: not a bool
  IValue(Tensor value) : value_(std::move(value)) {}  // NOLINT
  IValue(std::vector<int64_t> value) : value_(std::move(value)) {}  // NOLINT
  IValue(std::vector<double> value) : value_(std::move(value)) {}  // NOLINT

  bool isNone() const { return holds<std::monostate>(); }
  bool isBool() const { return holds<bool>(); }
  bool isInt() const { return holds<int64_t>(); }
  bool isDouble() const { return holds<double>(); }
  bool isString() const { return holds<std::string>(); }
  bool isTensor() const { return holds<Tensor>(); }
  bool isIntList() const { return holds<std::vector<int64_t>>(); }
  bool isDoubleList() const { return holds<std::vector<double>>(); }

  // The value as the kind asked for; TypeError naming both kinds if it holds another.
  // toDouble() also takes an int, as a Python number would.
  bool toBool(const SourceLoc& loc = SourceLoc::current()) const;
  int64_t toInt(const SourceLoc& loc = SourceLoc::current()) const;
  double toDouble(const SourceLoc& loc = SourceLoc::current()) const;
  const std::string& toStringRef(const SourceLoc& loc = SourceLoc::current()) const;
  Tensor toTensor(const SourceLoc& loc = SourceLoc::current()) const;
  std::vector<int64_t> toIntVector(const SourceLoc& loc = SourceLoc::current()) const;
  std::vector<double> toDoubleVector(const SourceLoc& loc = SourceLoc::current()) const;

  // LibTorch's tag names: "None", "Bool", "Int", "Double", "String", "Tensor",
  // "IntList", "DoubleList".
  const char* tagKind() const;

 private:
  template <class T>
  bool holds() const { return std::holds_alternative<T>(value_); }
  template <class T>
  const T& as(const char* kind, const char* what, const SourceLoc& loc) const;

  std::variant<std::monostate, bool, int64_t, double, std::string, Tensor, std::vector<int64_t>,
               std::vector<double>>
      value_;
};

}  // namespace kiln
