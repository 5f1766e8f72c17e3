// How a traced result is compared with the eager one: bitwise for the interpreter, and for
// compiled code within a tolerance derived from the dtype, the longest reduction feeding
// the result and how well-conditioned the program is on these inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/core/Tensor.h"

namespace kiln::fuzz {

// |got - want| <= atol + rtol |want| elementwise on floating dtypes, NaN matching NaN;
// integers, bools and a bitwise tolerance compare the bytes.
struct Tolerance {
  bool bitwise = true;
  double atol = 0, rtol = 0;
};

// Empty when `got` matches `want`; else what differs: the count and the first element.
std::string difference(const Tensor& got, const Tensor& want, const Tolerance& tolerance);

// The tolerance for a compiled result of `want`, from the same output computed eagerly
// with every value in float32 (`shadow32`) and in float64 (`shadow64`): their difference
// is the rounding error this program shows on these inputs, which the compiled result may
// exceed by a constant factor; `reduce` is the longest reduction feeding it (sums may
// associate differently, error growing like its square root); `precision` is the lowest
// floating dtype the result went through (float32 for a float64 output of float32 values).
// `floor` is a magnitude the result's own may be far below: a gradient that sums terms
// of the forward values' size which cancel (a bias through batch_norm) is wrong by
// rounding in units of those terms, not of the small sum.
Tolerance compiledTolerance(const Tensor& want, const Tensor& shadow32, const Tensor& shadow64, int64_t reduce,
                            DType precision, double floor = 0);

// The largest finite |element| of any of `tensors` (a floor for compiledTolerance).
double largestMagnitude(const std::vector<Tensor>& tensors);

}  // namespace kiln::fuzz
