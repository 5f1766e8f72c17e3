// Deterministic input tensors for the eager core's tests, built from std::vector values so
// the tests do not depend on the random factories they may be testing.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/core/Ops.h"
#include "kiln/core/Tensor.h"

namespace kiln::testing {

// start, start + step, ... in row-major order, converted to `dtype`.
inline Tensor ramp(const Shape& shape, DType dtype = kFloat32, double start = 0, double step = 1) {
  std::vector<double> v(size_t(numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + step * double(i);
  return tensor(v, shape).to(dtype);
}

// Values spread over [low, high) by a fixed 64-bit LCG: reproducible, distinct, and far
// enough apart that max/min have no ties and relu/abs no kinks when low > 0 or the range
// avoids 0.
inline std::vector<double> spread(int64_t n, uint64_t seed, double low, double high) {
  std::vector<double> v(static_cast<size_t>(n));
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = low + (high - low) * double(s >> 11) * 0x1p-53;
  }
  return v;
}

inline Tensor spreadTensor(const Shape& shape, uint64_t seed, double low = -2, double high = 2,
                           DType dtype = kFloat64) {
  return tensor(spread(numel(shape), seed, low, high), shape).to(dtype);
}

// Values away from 0 on both sides: |x| in [0.2, 2), signs mixed (no kinks for abs/relu).
inline Tensor signedAwayFromZero(const Shape& shape, uint64_t seed) {
  std::vector<double> v = spread(numel(shape), seed, 0.2, 2.0);
  for (size_t i = 0; i < v.size(); ++i)
    if ((i * 7 + seed) % 3 == 0) v[i] = -v[i];
  return tensor(v, shape);
}

}  // namespace kiln::testing
