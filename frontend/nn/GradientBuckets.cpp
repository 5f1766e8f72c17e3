// Gradient buckets of data-parallel training (kiln/nn/GradientBuckets.h).
#include "kiln/nn/GradientBuckets.h"

#include "kiln/core/Autograd.h"
#include "kiln/core/Ops.h"

namespace kiln::nn::detail {

std::vector<std::vector<Tensor>> gradientBuckets(const std::vector<Tensor>& params, double capMb) {
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

Tensor flatGradients(const std::vector<Tensor>& bucket, const SourceLoc& loc) {
  NoGradGuard noGrad;
  std::vector<Tensor> grads;
  for (const Tensor& p : bucket)
    grads.push_back((p.grad().defined() ? p.grad() : zeros_like(p, loc)).flatten(0, -1, loc));
  return grads.size() == 1 ? grads[0].clone(loc) : cat(grads, 0, loc);
}

void setGradients(const std::vector<Tensor>& bucket, const Tensor& flat, const SourceLoc& loc) {
  NoGradGuard noGrad;
  int64_t offset = 0;
  for (Tensor p : bucket) {
    Tensor values = flat.narrow(0, offset, p.numel(), loc).view(p.shape(), loc);
    offset += p.numel();
    if (p.grad().defined())
      p.grad().copy_(values, loc);
    else
      p.set_grad(values.clone(loc));
  }
}

}  // namespace kiln::nn::detail
