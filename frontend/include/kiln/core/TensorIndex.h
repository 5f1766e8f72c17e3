// LibTorch's tensor indexing: torch::indexing::{Slice, None, Ellipsis} and TensorIndex,
// the element type of x.index({...}) and x.index_put_({...}, value) (Tensor.h).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <variant>

#include "kiln/core/Error.h"
#include "kiln/core/Tensor.h"

namespace kiln::indexing {

// Python's start:stop:step, each optional as in LibTorch (Slice(), Slice(1, None),
// Slice(None, None, 2)); negative bounds count from the end, out-of-range ones clamp.
class Slice {
 public:
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt)
      : start_(start.value_or(0)),
        stop_(stop.value_or(std::numeric_limits<int64_t>::max())),
        step_(step.value_or(1)) {}
  int64_t start() const { return start_; }
  int64_t stop() const { return stop_; }
  int64_t step() const { return step_; }

 private:
  int64_t start_, stop_, step_;
};

// None inserts a dim of size 1 (numpy.newaxis); as in LibTorch it is also the empty bound
// of a Slice. Ellipsis (or "...") stands for every dim the other indices leave.
inline constexpr std::nullopt_t None = std::nullopt;
struct EllipsisIndexType {};
inline constexpr EllipsisIndexType Ellipsis{};

// One entry of an index list: an integer (selects, removing the dim), a Slice, None,
// Ellipsis, or a tensor: int32/int64 positions along one dim, or a bool mask over as many
// dims as it has.
class TensorIndex {
 public:
  TensorIndex(std::nullopt_t) : value_(std::nullopt) {}                   // NOLINT
  TensorIndex(EllipsisIndexType) : value_(Ellipsis) {}                     // NOLINT
  TensorIndex(const char* text, const SourceLoc& loc = SourceLoc::current())  // NOLINT
      : value_(Ellipsis) {
    if (std::string_view(text) != "...")
      throw Error::make(loc, "index", "the only string index is \"...\", got \"", text, "\"");
  }
  template <std::integral T>
    requires(!std::is_same_v<T, bool>)
  TensorIndex(T integer) : value_(int64_t(integer)) {}                     // NOLINT
  TensorIndex(Slice slice) : value_(slice) {}                              // NOLINT
  TensorIndex(Tensor tensor) : value_(std::move(tensor)) {}                // NOLINT

  bool is_none() const { return std::holds_alternative<std::nullopt_t>(value_); }
  bool is_ellipsis() const { return std::holds_alternative<EllipsisIndexType>(value_); }
  bool is_integer() const { return std::holds_alternative<int64_t>(value_); }
  bool is_slice() const { return std::holds_alternative<Slice>(value_); }
  bool is_tensor() const { return std::holds_alternative<Tensor>(value_); }
  int64_t integer() const { return std::get<int64_t>(value_); }
  const Slice& slice() const { return std::get<Slice>(value_); }
  const Tensor& tensor() const { return std::get<Tensor>(value_); }

 private:
  std::variant<std::nullopt_t, EllipsisIndexType, int64_t, Slice, Tensor> value_;
};

}  // namespace kiln::indexing
