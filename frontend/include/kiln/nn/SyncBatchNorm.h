// nn::SyncBatchNorm: batch normalization over the whole batch of an MPI job (PyTorch's
// torch.nn.SyncBatchNorm; LibTorch's C++ API has none). In training every rank normalizes
// with the statistics of all ranks' inputs together (the per-channel sums, sums of
// squares and element counts all-reduced), so N ranks with batch B each compute what one
// BatchNorm computes on the N·B batch, gradients and running statistics included, also
// when the ranks' batches differ in size. Evaluation uses the running statistics, as
// BatchNorm2d's. Link //frontend:distributed; call distributed::init() first.
//
//   auto bn = nn::SyncBatchNorm(64);                       // in place of BatchNorm2d(64)
//
// Every rank must run the same forwards and backwards in the same order: each training
// forward and its backward are one all-reduce each (docs/DISTRIBUTED.md, "SyncBatchNorm").
#pragma once

#include <ostream>

#include "kiln/nn/BatchNorm.h"
#include "kiln/nn/ModuleHolder.h"

namespace kiln::nn {

class SyncBatchNormImpl : public BatchNorm2dImpl {
 public:
  explicit SyncBatchNormImpl(int64_t num_features) : BatchNorm2dImpl(num_features) {}
  explicit SyncBatchNormImpl(const BatchNormOptions& options) : BatchNorm2dImpl(options) {}

  // x is [N, C, *] (N may differ between the ranks, and be 0 on some). In training,
  // counts the batch in num_batches_tracked and updates the running statistics in place
  // with the job's statistics (the unbiased variance over all ranks' elements).
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
  void pretty_print(std::ostream& os) const override;

 private:
  // running = running + momentum·(batch - running), with the job's mean and unbiased
  // variance; `count` is the job's elements per channel.
  void updateRunningStatistics(const Tensor& mean, const Tensor& var, const Tensor& count,
                               const SourceLoc& loc);
};
KILN_MODULE(SyncBatchNorm);

}  // namespace kiln::nn
