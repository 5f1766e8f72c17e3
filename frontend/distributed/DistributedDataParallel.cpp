// nn::DistributedDataParallel: the initial broadcast, buckets, and gradient averaging.
#include "kiln/nn/DistributedDataParallel.h"

#include "kiln/core/Dispatcher.h"
#include "kiln/core/PostAccumulateGradHook.h"
#include "kiln/distributed/Distributed.h"
#include "kiln/nn/GradientBuckets.h"
#include "Environment.h"

namespace kiln::nn {

namespace {

constexpr std::string_view kOp = "nn::DistributedDataParallel";

}  // namespace

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<Module> module,
                                                 DistributedDataParallelOptions options,
                                                 const SourceLoc& loc)
    : module_(std::move(module)), options_(options) {
  loc_ = loc;
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
  state_.resize(buckets_.size());
  for (size_t b = 0; b < buckets_.size(); ++b)
    for (const Tensor& p : buckets_[b])
      hooks_.push_back(autograd::register_post_accumulate_grad_hook(
          p, [this, b](const Tensor&) { onGradientReady(b); }, loc));
}

DistributedDataParallel::~DistributedDataParallel() {
  for (autograd::RemovableHandle& hook : hooks_) hook.remove();
}

void DistributedDataParallel::onGradientReady(size_t bucket) {
  // Under no_sync() the gradients stay local. While a trace records, the hooks run on
  // placeholders or once: synchronize_gradients() records the collectives instead.
  if (!syncing_ || currentDispatchHook() != nullptr) return;
  BucketState& state = state_[bucket];
  if (state.started) state.stale = true;
  if (++state.ready == buckets_[bucket].size()) start(bucket, loc_);
}

void DistributedDataParallel::start(size_t bucket, const SourceLoc& loc) {
  BucketState& state = state_[bucket];
  if (state.started) state.work.wait(loc);  // out of date, but every rank started it
  state.flat = detail::flatGradients(buckets_[bucket], loc);
  state.work = distributed::all_reduce_async(state.flat, distributed::ReduceOp::Mean, loc);
  state.started = true;
  state.stale = false;
  state.ready = 0;
}

void DistributedDataParallel::synchronize_gradients(const SourceLoc& loc) {
  if (!syncing_) return;
  for (size_t b = 0; b < buckets_.size(); ++b)
    if (!state_[b].started || state_[b].stale) start(b, loc);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    state_[b].work.wait(loc);
    detail::setGradients(buckets_[b], state_[b].flat, loc);
    state_[b] = BucketState{};
  }
}

size_t DistributedDataParallel::buckets_started() const {
  size_t started = 0;
  for (const BucketState& state : state_) started += state.started;
  return started;
}

}  // namespace kiln::nn
