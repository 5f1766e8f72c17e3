// Copies between strided tensors for kernels: no dispatch, so nothing is recorded.
#pragma once

#include "kiln/core/Tensor.h"

namespace kiln::kernels {

// Writes src's values into dst (same shape and dtype, any strides, dst not overlapping src),
// on one device or from one device to another.
void copyValues(const Tensor& dst, const Tensor& src);

// x itself when contiguous, else a contiguous copy of its values (no autograd history).
Tensor contiguousValues(const Tensor& x, const SourceLoc& loc);

// A view of x's storage with other shape/strides/offset and no autograd history.
Tensor aliasOf(const Tensor& x, Shape shape, Strides strides, int64_t offset);

}  // namespace kiln::kernels
