// Gradient buckets of data-parallel training: which parameters' gradients one all-reduce
// averages, and their gradients as one flat tensor and back. Shared by
// nn::DistributedDataParallel (eager or traced) and nn::Graph's data-parallel step.
#pragma once

#include <vector>

#include "kiln/core/Tensor.h"

namespace kiln::nn::detail {

// `params` in reverse order (the order backward produces their gradients), a new bucket
// at each change of dtype or device and whenever the next one would pass `capMb` MiB (a
// larger parameter gets a bucket of its own).
std::vector<std::vector<Tensor>> gradientBuckets(const std::vector<Tensor>& params, double capMb);

// The bucket's gradients flattened and concatenated (zeros for a parameter without one),
// in a tensor of its own.
Tensor flatGradients(const std::vector<Tensor>& bucket, const SourceLoc& loc);

// Writes `flat` (as flatGradients lays it out) into the bucket's gradients, in place, or
// as a new gradient where a parameter had none.
void setGradients(const std::vector<Tensor>& bucket, const Tensor& flat, const SourceLoc& loc);

}  // namespace kiln::nn::detail
