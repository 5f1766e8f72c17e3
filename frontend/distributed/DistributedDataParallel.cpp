// nn::DistributedDataParallel: the initial broadcast, buckets, and gradient averaging.
#include "kiln/nn/DistributedDataParallel.h"

#include "kiln/core/Autograd.h"
#include "kiln/core/Ops.h"
#include "kiln/distributed/Distributed.h"

namespace kiln::nn {

namespace {

constexpr std::string_view kOp = "nn::DistributedDataParallel";

// Parameters in reverse order, a new bucket at each change of dtype or device and
// whenever the next one would pass the cap.
std::vector<std::vector<Tensor>> makeBuckets(const std::vector<Tensor>& params, double capMb) {
  const double capBytes = capMb * 1024 * 1024;
  std::vector<std::vector<Tensor>> buckets;
  double bytes = 0;
  for (auto it = params.rbegin(); it != params.rend(); ++it) {
    const Tensor& p = *it;
    const double size = double(p.numel()) * double(p.element_size());
    const bool fits = !buckets.empty() && bytes + size <= capBytes &&
                      buckets.back().front().dtype() == p.dtype() &&
                      buckets.back().front().device() == p.device();
    if (!fits) {
      buckets.emplace_back();
      bytes = 0;
    }
    buckets.back().push_back(p);
    bytes += size;
  }
  return buckets;
}

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
  std::vector<distributed::Work> works;
  for (const Tensor& t : state) works.push_back(distributed::broadcast_async(t, 0, loc));
  for (distributed::Work& w : works) w.wait(loc);
  std::vector<Tensor> trained;
  for (const Tensor& p : module_->parameters())
    if (p.requires_grad()) trained.push_back(p);
  buckets_ = makeBuckets(trained, options_.bucket_cap_mb);
}

void DistributedDataParallel::synchronize_gradients(const SourceLoc& loc) {
  if (!syncing_) return;
  NoGradGuard noGrad;
  std::vector<Tensor> flats;
  std::vector<distributed::Work> works;
  for (const std::vector<Tensor>& bucket : buckets_) {
    std::vector<Tensor> grads;
    for (const Tensor& p : bucket)
      grads.push_back((p.grad().defined() ? p.grad() : zeros_like(p, loc)).flatten(0, -1, loc));
    flats.push_back(grads.size() == 1 ? grads[0].clone(loc) : cat(grads, 0, loc));
    works.push_back(distributed::all_reduce_async(flats.back(), distributed::ReduceOp::Mean, loc));
  }
  for (size_t b = 0; b < buckets_.size(); ++b) {
    works[b].wait(loc);
    int64_t offset = 0;
    for (Tensor p : buckets_[b]) {
      Tensor mean = flats[b].narrow(0, offset, p.numel(), loc).view(p.shape(), loc);
      offset += p.numel();
      if (p.grad().defined())
        p.grad().copy_(mean, loc);
      else
        p.set_grad(mean.clone(loc));
    }
  }
}

}  // namespace kiln::nn
