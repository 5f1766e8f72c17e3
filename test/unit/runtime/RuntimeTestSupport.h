// Helpers shared by the runtime's tests: comparing compiled results with expected ones.
#pragma once

#include <cmath>

#include "kiln/core/Tensor.h"

namespace kiln::runtime {

// Whether a and b have the same shape and |a - b| <= atol + rtol |b| everywhere (NaNs
// match NaNs); rtol = atol = 0 asks for equality.
inline bool allclose(const Tensor& a, const Tensor& b, double rtol = 0, double atol = 0) {
  if (a.sizes() != b.sizes()) return false;
  Tensor x = a.to(kFloat64).contiguous(), y = b.to(kFloat64).contiguous();
  const double* p = x.data_ptr<double>();
  const double* q = y.data_ptr<double>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (std::isnan(p[i]) && std::isnan(q[i])) continue;
    if (!(std::abs(p[i] - q[i]) <= atol + rtol * std::abs(q[i]))) return false;
  }
  return true;
}

inline bool equal(const Tensor& a, const Tensor& b) { return allclose(a, b); }

}  // namespace kiln::runtime
