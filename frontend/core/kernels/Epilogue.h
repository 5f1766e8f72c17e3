// The epilogues of a library op's output (kiln.addmm, kiln.conv2d) that oneDNN does not
// compute for it: a bias where the library call took none, and relu.
#pragma once

#include <cstdint>

#include "kiln/core/Tensor.h"

namespace kiln::kernels {

// In place on the contiguous `out`, seen as [outer, channels, inner]: bias[c] added to
// channel c when `bias` is defined, then relu when `relu`, in the dtype's math type and
// rounded as the add and relu kernels round. relu keeps NaN and makes everything not
// above 0 +0; oneDNN's relu post-op would give -0 for negative values (slope 0 x value).
void biasAndRelu(Tensor& out, const Tensor& bias, int64_t channels, int64_t inner, bool relu,
                 const SourceLoc& loc);

}  // namespace kiln::kernels
