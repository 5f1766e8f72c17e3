// Building blocks for gradients composed from primitive ops (slice, conv and pool
// gradients), shared by the op families.
#pragma once

#include "kiln/core/OpDef.h"
#include "kiln/core/Ops.h"

namespace kiln::ops {

// Inserts factor-1 zeros between consecutive elements along `dim` (XLA's interior
// padding): length n becomes (n-1)*factor+1.
Tensor interleaveZeros(const Tensor& x, int64_t dim, int64_t factor, const SourceLoc& loc);

// Pads `dim` with `before` and `after` copies of `value` (concat with constants).
Tensor padDim(const Tensor& x, int64_t dim, int64_t before, int64_t after, double value,
              const SourceLoc& loc);

// take's adjoint (kiln.scatter_add): zeros of shape u[:dim] ++ [size] ++ u[dim+r:] with
// each slice of `updates` (shape u) added at the position its index names along `dim`;
// `indices` has rank r. Gradients of take, gather and max pooling go through it.
Tensor scatterAdd(const Tensor& updates, const Tensor& indices, int64_t dim, int64_t size,
                  const SourceLoc& loc);

// How many elements of `x` a reduction over `dims` (all dims when empty) folds into one, as a
// 0-d tensor of x's dtype and device: a sum of ones over one output element's slice. A
// trace records it as computed from the sizes, where the number would be a constant that
// differs between batch sizes, so means and batch norm merge into dynamic programs
// (docs/ARCHITECTURE.md, "Dynamic shapes"). Exact below 2^24 in float32.
Tensor countOver(const Tensor& x, const Shape& dims, const SourceLoc& loc);

// Reverses `dim` (a take with descending indices).
Tensor flipDim(const Tensor& x, int64_t dim, const SourceLoc& loc);

// Whether an op's relu epilogue flag (kiln.addmm, kiln.conv2d) is set; absent is false.
bool reluEpilogue(const Attrs& attrs);

// The output gradient of an op with a relu epilogue, taken back through the relu: masked
// where the op's value before the relu is not above 0. That value is recomputed from the
// inputs, so the gradient reads only them, as PyTorch's addmm and convolution do: an
// output changed in place before backward is no error. Only compiler-made ops carry the
// flag. Without it, the gradient as it is.
Tensor gradBeforeRelu(const OpDef& op, const GradArgs& a);

}  // namespace kiln::ops
