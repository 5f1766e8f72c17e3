#include "kiln/nn/BatchNorm.h"

#include "kiln/core/Autograd.h"
#include "kiln/core/Functional.h"
#include "kiln/nn/Init.h"

namespace kiln::nn {

BatchNorm2dImpl::BatchNorm2dImpl(const BatchNormOptions& options) : options(options) {
  const int64_t c = options.num_features();
  if (c < 0) throw Error::make(SourceLoc::current(), "BatchNorm2d", "num_features must be >= 0, got ", c);
  if (options.affine()) {
    weight = register_parameter("weight", empty({c}));
    bias = register_parameter("bias", empty({c}));
  }
  if (options.track_running_stats()) {
    running_mean = register_buffer("running_mean", empty({c}));
    running_var = register_buffer("running_var", empty({c}));
    num_batches_tracked = register_buffer("num_batches_tracked", full({}, int64_t(0)));
  }
  reset_parameters();
}

void BatchNorm2dImpl::reset_running_stats(const SourceLoc& loc) {
  if (!options.track_running_stats()) return;
  init::zeros_(running_mean, loc);
  init::ones_(running_var, loc);
  init::zeros_(num_batches_tracked, loc);
}

void BatchNorm2dImpl::reset_parameters(const SourceLoc& loc) {
  reset_running_stats(loc);
  if (options.affine()) {
    init::ones_(weight, loc);
    init::zeros_(bias, loc);
  }
}

Tensor BatchNorm2dImpl::forward(const Tensor& x, const SourceLoc& loc) {
  if (x.dim() != 4)
    throw ShapeError::make(loc, "BatchNorm2d", "expects a 4-d input [N, C, H, W], got shape ", x.sizes());
  // Evaluation without running statistics normalizes with the batch's, as PyTorch.
  const bool batchStats = is_training() || !running_mean.defined();
  if (!is_training() || !options.track_running_stats())
    return batch_norm(x, running_mean, running_var, weight, bias, batchStats,
                      options.momentum().value_or(0.0), options.eps(), loc);
  Tensor cumulative;  // the cumulative average's momentum, 1 / num_batches_tracked
  {
    NoGradGuard noGrad;
    Tensor one = scalarOperand(num_batches_tracked, int64_t(1), loc);
    num_batches_tracked.add_(one, 1.0, loc);
    // A tensor op on the count, not a read of it: a trace records it (issue 19).
    if (!options.momentum()) cumulative = div(1.0, num_batches_tracked.to(kFloat64, loc), loc);
  }
  if (cumulative.defined())
    return batch_norm(x, running_mean, running_var, weight, bias, true, cumulative, options.eps(), loc);
  return batch_norm(x, running_mean, running_var, weight, bias, true, *options.momentum(),
                    options.eps(), loc);
}

void BatchNorm2dImpl::pretty_print(std::ostream& os) const {
  os << "BatchNorm2d(" << options.num_features() << ", eps=" << options.eps() << ", momentum=";
  if (options.momentum()) os << *options.momentum();
  else os << "none";
  os << ", affine=" << (options.affine() ? "true" : "false")
     << ", track_running_stats=" << (options.track_running_stats() ? "true" : "false") << ")";
}

}  // namespace kiln::nn
