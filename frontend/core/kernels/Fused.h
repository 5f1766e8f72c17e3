// Fused eager kernels for composite ops: softmax, log_softmax and layer_norm in one pass
// over each row. Each gives bit for bit the values of its composition in ops/Functional.cpp
// (the same float operations in the same order, reductions through kernels/Reduce.h), so
// running it in place of the composition changes nothing but the time. Functional.cpp
// decides when it may (no tracer, no autograd history).
#pragma once

#include "kiln/core/Tensor.h"

namespace kiln::kernels {

// softmax(x, dim), or log_softmax when `log`: x is float32 or float64, contiguous, not empty.
Tensor softmax(const Tensor& x, int64_t dim, bool log, const SourceLoc& loc);

// layer_norm of x over its trailing `normalized` elements: x is float32 or float64,
// contiguous, not empty; weight and bias are undefined or contiguous with x's dtype and
// `normalized` elements.
Tensor layerNorm(const Tensor& x, int64_t normalized, const Tensor& weight, const Tensor& bias,
                 double eps, const SourceLoc& loc);

}  // namespace kiln::kernels
