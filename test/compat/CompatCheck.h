// How the compatibility programs check their results: check(ok, what) prints what failed
// and counts it, all_close compares tensors of one shape, and main() returns
// exit_code(). Test scaffolding beside the LibTorch code, not part of it.
#pragma once

#include <iostream>

#include "kiln/torch.h"

namespace compat {

inline int failures = 0;

inline void check(bool ok, const char* what) {
  if (!ok) {
    std::cerr << "FAIL: " << what << std::endl;
    ++failures;
  }
}

inline bool all_close(const torch::Tensor& a, const torch::Tensor& b, double tolerance = 1e-5) {
  return a.sizes() == b.sizes() && (a - b).abs().max().item<double>() < tolerance;
}

inline int exit_code() { return failures == 0 ? 0 : 1; }

}  // namespace compat
