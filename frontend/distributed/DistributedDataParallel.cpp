// nn::DistributedDataParallel: the initial broadcast, buckets, and gradient averaging.
#include "kiln/nn/DistributedDataParallel.h"

#include "kiln/core/Ops.h"
#include "kiln/distributed/Distributed.h"
#include "kiln/nn/GradientBuckets.h"
#include "Environment.h"
#include "kiln/core/Autograd.h"

namespace kiln::nn {

namespace {

constexpr std::string_view kOp = "nn::DistributedDataParallel";

}  // namespace

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<Module> module,
                                                 DistributedDataParallelOptions options,
                                                 const SourceLoc& loc)
    : module_(std::move(module)), options_(options) {
  if (!module_) throw Error::make(loc, kOp, "got no module (a null pointer)");
  if (!(options_.bucket_cap_mb > 0))
    throw Error::make(loc, kOp, "bucket_cap_mb must be positive, got ", options_.bucket_cap_mb);
  std::vector<Tensor> state = module_->parameters();
  if (options_.broadcast_buffers)
    for (const Tensor& b : module_->buffers()) state.push_back(b);
  distributed::detail::broadcastFromRank0(state, loc);
  std::vector<Tensor> trained;
  for (const Tensor& p : module_->parameters())
    if (p.requires_grad()) trained.push_back(p);
  buckets_ = detail::gradientBuckets(trained, options_.bucket_cap_mb);
}

void DistributedDataParallel::synchronize_gradients(const SourceLoc& loc) {
  if (!syncing_) return;
  std::vector<Tensor> flats;
  std::vector<distributed::Work> works;
  for (const std::vector<Tensor>& bucket : buckets_) {
    flats.push_back(detail::flatGradients(bucket, loc));
    works.push_back(distributed::all_reduce_async(flats.back(), distributed::ReduceOp::Mean, loc));
  }
  for (size_t b = 0; b < buckets_.size(); ++b) {
    works[b].wait(loc);
    detail::setGradients(buckets_[b], flats[b], loc);
  }
}

}  // namespace kiln::nn
