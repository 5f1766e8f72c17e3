// Options structs in LibTorch's style: KILN_ARG (kiln/core/OptionArg.h) declares a field
// with a chainable setter (`LinearOptions(4, 2).bias(false)`), and ExpandingArray holds a
// per-dimension size given as one value or one per dimension (`kernel_size = 3` or `{3, 5}`).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <source_location>
#include <utility>
#include <vector>

#include "kiln/core/Error.h"
#include "kiln/core/OptionArg.h"  // IWYU pragma: export

namespace kiln::nn {

// D sizes, one per spatial dimension. A single value expands to all D (torch's
// ExpandingArray); whether the user gave one value is remembered so that printing can
// echo it as PyTorch echoes the argument (`kernel_size=2` rather than `(2, 2)`).
template <size_t D>
class ExpandingArray {
 public:
  ExpandingArray(int64_t value) : scalar_(true) { values_.fill(value); }  // NOLINT: implicit
  ExpandingArray(std::initializer_list<int64_t> values,
                 const std::source_location& loc = std::source_location::current())
      : ExpandingArray(std::vector<int64_t>(values), loc) {}
  ExpandingArray(const std::vector<int64_t>& values,
                 const std::source_location& loc = std::source_location::current()) {
    if (values.size() != D)
      throw Error::make(loc, "ExpandingArray", "expected ", D, " values, got ", values.size());
    std::copy(values.begin(), values.end(), values_.begin());
  }

  int64_t operator[](size_t i) const { return values_[i]; }
  int64_t& operator[](size_t i) { return values_[i]; }
  const int64_t* begin() const { return values_.data(); }
  const int64_t* end() const { return values_.data() + D; }
  constexpr size_t size() const { return D; }
  // As the ops take sizes.
  std::vector<int64_t> vec() const { return {values_.begin(), values_.end()}; }
  // Given as one value (and so printed as one).
  bool scalar() const { return scalar_; }

  friend bool operator==(const ExpandingArray& a, const ExpandingArray& b) {
    return a.values_ == b.values_;
  }

 private:
  std::array<int64_t, D> values_{};
  bool scalar_ = false;
};

// "(3, 3)" as a Python tuple prints, or "3" when given as one value and `asGiven`.
template <size_t D>
void printSizes(std::ostream& os, const ExpandingArray<D>& a, bool asGiven) {
  if (asGiven && a.scalar()) {
    os << a[0];
    return;
  }
  os << "(";
  for (size_t i = 0; i < D; ++i) os << (i ? ", " : "") << a[i];
  os << ")";
}

}  // namespace kiln::nn
