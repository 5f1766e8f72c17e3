// BatchNorm2d: per-channel normalization of NCHW input with batch statistics in training
// and running statistics (buffers) in evaluation.
#pragma once

#include <optional>

#include "kiln/nn/Arg.h"
#include "kiln/nn/ModuleHolder.h"

namespace kiln::nn {

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT: implicit
  KILN_ARG(int64_t, num_features);
  KILN_ARG(double, eps) = 1e-5;
  // running = (1 - momentum)·running + momentum·batch; nullopt: the cumulative average
  // (momentum 1/num_batches_tracked).
  KILN_ARG(std::optional<double>, momentum) = 0.1;
  // Learnable weight (ones) and bias (zeros).
  KILN_ARG(bool, affine) = true;
  // Buffers running_mean (zeros), running_var (ones) and num_batches_tracked (int64 0);
  // without them evaluation also uses batch statistics.
  KILN_ARG(bool, track_running_stats) = true;
};

class BatchNorm2dImpl : public Module {
 public:
  explicit BatchNorm2dImpl(int64_t num_features) : BatchNorm2dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm2dImpl(const BatchNormOptions& options);

  void reset_running_stats(const SourceLoc& loc = SourceLoc::current());
  // reset_running_stats(), then weight ones and bias zeros.
  void reset_parameters(const SourceLoc& loc = SourceLoc::current());
  // x is [N, C, H, W]. In training, counts the batch in num_batches_tracked and updates
  // the running statistics in place.
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
  void pretty_print(std::ostream& os) const override;

  BatchNormOptions options;
  Tensor weight, bias;                                   // undefined without affine
  Tensor running_mean, running_var, num_batches_tracked;  // undefined without tracking
};
KILN_MODULE(BatchNorm2d);

}  // namespace kiln::nn
