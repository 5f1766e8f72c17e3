// Shared by the jit tests: bitwise tensor comparison and seeded inputs.
#pragma once

#include <cstring>
#include <utility>

#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/core/Tensor.h"

namespace kiln::testing {

// Same shape, dtype and bytes (NaNs compare by their bits).
inline bool sameBits(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
  Tensor x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.impl()->storage->data(), y.impl()->storage->data(),
                     size_t(x.numel()) * elementSize(x.dtype())) == 0;
}

// randn(shape) from manual_seed(seed).
inline Tensor seededInput(Shape shape, uint64_t seed) {
  manual_seed(seed);
  return randn(std::move(shape));
}

}  // namespace kiln::testing
