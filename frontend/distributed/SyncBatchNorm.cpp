// nn::SyncBatchNorm (kiln/nn/SyncBatchNorm.h): the job's batch statistics from one
// all-reduce of per-channel sums, written with ordinary ops so autograd derives the
// backward, whose only communication is the all-reduce's own gradient.
#include "kiln/nn/SyncBatchNorm.h"

#include <algorithm>
#include <sstream>

#include "kiln/core/Autograd.h"
#include "kiln/core/CustomFunction.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/distributed/Distributed.h"

namespace kiln::nn {

namespace {

constexpr const char* kOp = "SyncBatchNorm";

// A sum over the ranks that autograd differentiates: every rank's loss depends on the
// sum, so the gradient of each rank's operand is the sum over the ranks of the sum's
// gradients (one all-reduce in backward). For the statistics below these are PyTorch's
// SyncBatchNorm's two all-reduced per-channel sums of the backward (of dy and of
// dy·(x - mean)), in the form of the gradients of the sums and of the sums of squares.
struct AllReduceSum : autograd::Function<AllReduceSum> {
  static Tensor forward(autograd::AutogradContext*, Tensor local) {
    Tensor total = local.clone();
    distributed::all_reduce(total, distributed::ReduceOp::Sum);
    return total;
  }
  static autograd::tensor_list backward(autograd::AutogradContext*, autograd::tensor_list grads) {
    Tensor total = grads[0].clone();
    distributed::all_reduce(total, distributed::ReduceOp::Sum);
    return {total};
  }
};

// The job's per-channel mean and biased variance of x, and its element count per channel,
// each [C]. One all-reduce of [sums, sums of squares, count]: the count makes uneven
// batches weigh by their size.
struct JobStatistics {
  Tensor mean, var, count;
};

JobStatistics jobStatistics(const Tensor& x, const SourceLoc& loc) {
  const int64_t c = x.size(1);
  const Dims dims = {0, 2, 3};
  Tensor count = full({1}, double(x.numel() / std::max<int64_t>(c, 1)), TensorOptions(x.dtype()));
  Tensor local = cat({x.sum(dims, false, loc), (x * x).sum(dims, false, loc), count}, 0, loc);
  Tensor total = AllReduceSum::apply(local);
  JobStatistics stats;
  stats.count = total.narrow(0, 2 * c, 1, loc);
  stats.mean = total.narrow(0, 0, c, loc) / stats.count;
  stats.var = total.narrow(0, c, c, loc) / stats.count - stats.mean * stats.mean;
  return stats;
}

}  // namespace

Tensor SyncBatchNormImpl::forward(const Tensor& x, const SourceLoc& loc) {
  if (x.dim() != 4)
    throw ShapeError::make(loc, kOp, "expects a 4-d input [N, C, H, W], got shape ", x.sizes());
  if (x.size(1) != options.num_features())
    throw ShapeError::make(loc, kOp, "expects ", options.num_features(), " channels, got shape ",
                           x.sizes());
  // Evaluation normalizes locally, with the running statistics (or, without them, the
  // rank's own batch), as PyTorch's.
  if (!is_training()) return BatchNorm2dImpl::forward(x, loc);
  const JobStatistics stats = jobStatistics(x, loc);
  if (options.track_running_stats()) updateRunningStatistics(stats.mean, stats.var, stats.count, loc);
  const Shape channels = {1, x.size(1), 1, 1};
  Tensor y = (x - stats.mean.view(channels, loc)) *
             (stats.var + options.eps()).rsqrt().view(channels, loc);
  if (options.affine()) y = y * weight.view(channels, loc) + bias.view(channels, loc);
  return y;
}

void SyncBatchNormImpl::updateRunningStatistics(const Tensor& mean, const Tensor& var,
                                                const Tensor& count, const SourceLoc& loc) {
  NoGradGuard noGrad;
  num_batches_tracked.add_(scalarOperand(num_batches_tracked, int64_t(1), loc), 1.0, loc);
  // The running variance is unbiased over the job's elements, as BatchNorm's over its batch.
  Tensor unbiased = var * count / (count - 1.0);
  Tensor m = options.momentum()
                 ? full({}, *options.momentum(), TensorOptions(mean.dtype()))
                 : div(1.0, num_batches_tracked.to(mean.dtype(), loc), loc);
  running_mean.copy_(running_mean + (mean.detach() - running_mean) * m, loc);
  running_var.copy_(running_var + (unbiased.detach() - running_var) * m, loc);
}

void SyncBatchNormImpl::pretty_print(std::ostream& os) const {
  std::ostringstream base;  // "BatchNorm2d(64, eps=...)", renamed
  BatchNorm2dImpl::pretty_print(base);
  os << "SyncBatchNorm" << base.str().substr(base.str().find('('));
}

}  // namespace kiln::nn
