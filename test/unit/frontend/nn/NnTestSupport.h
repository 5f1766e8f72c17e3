// Shared by the nn tests: seeded samples, elementwise closeness and summary statistics of a
// tensor's values (for checking initializers' distributions).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "test/unit/frontend/Golden.h"

namespace kiln::nn::testing {

// randn(shape) from manual_seed(seed).
inline Tensor sample(const Shape& shape, uint64_t seed = 1) {
  manual_seed(seed);
  return randn(shape);
}

// Same shape, and every element within `tol` (absolute).
inline void expectCloseWithin(const Tensor& a, const Tensor& b, double tol) {
  ASSERT_EQ(a.sizes(), b.sizes());
  std::vector<double> x = golden::valuesAsDouble(a), y = golden::valuesAsDouble(b);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], tol) << "element " << i;
}

struct Stats {
  double min, max, mean, var;  // var: the population variance
};

inline Stats statsOf(const Tensor& t) {
  std::vector<double> v = golden::valuesAsDouble(t);
  Stats s{*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()), 0, 0};
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
  for (double x : v) s.var += (x - s.mean) * (x - s.mean) / double(v.size());
  return s;
}

}  // namespace kiln::nn::testing
