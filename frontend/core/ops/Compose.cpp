// Building blocks for composed gradients (see Compose.h).
#include "frontend/core/ops/Compose.h"

#include <algorithm>

#include "kiln/core/Dispatcher.h"

namespace kiln::ops {

Tensor interleaveZeros(const Tensor& x, int64_t dim, int64_t factor, const SourceLoc& loc) {
  const int64_t count = x.sizes()[dim];
  if (factor == 1 || count == 0) return x;
  detail::FactoryDeviceGuard onDevice(x.device());
  Tensor spread = x.unsqueeze(dim + 1, loc);
  Shape gap = spread.sizes();
  gap[dim + 1] = factor - 1;
  spread = cat({spread, zeros(gap, x.dtype(), loc)}, dim + 1, loc);
  Shape flat = x.sizes();
  flat[dim] = count * factor;
  return spread.reshape(flat, loc).narrow(dim, 0, (count - 1) * factor + 1, loc);
}

Tensor padDim(const Tensor& x, int64_t dim, int64_t before, int64_t after, double value,
              const SourceLoc& loc) {
  if (before == 0 && after == 0) return x;
  Shape b = x.sizes(), a = x.sizes();
  b[dim] = before;
  a[dim] = after;
  detail::FactoryDeviceGuard onDevice(x.device());
  return cat({full(b, value, x.dtype(), loc), x, full(a, value, x.dtype(), loc)}, dim, loc);
}

Tensor flipDim(const Tensor& x, int64_t dim, const SourceLoc& loc) {
  const int64_t n = x.sizes()[dim];
  if (n <= 1) return x;
  detail::FactoryDeviceGuard onDevice(x.device());
  return take(x, arange(double(n - 1), -1.0, -1.0, kInt64, loc), dim, loc);
}

Tensor countOver(const Tensor& x, const Shape& dims, const SourceLoc& loc) {
  Shape slice = x.sizes();
  if (!dims.empty())
    for (size_t d = 0; d < slice.size(); ++d)
      if (std::find(dims.begin(), dims.end(), int64_t(d)) == dims.end()) slice[d] = 1;
  return sum(ones(slice, x.options(), loc), {}, false, loc);
}

bool reluEpilogue(const Attrs& attrs) { return attrs.has("relu") && attrs.get<bool>("relu"); }

Tensor gradBeforeRelu(const OpDef& op, const GradArgs& a) {
  const Tensor& g = a.gradOutputs[0];
  if (!reluEpilogue(a.attrs)) return g;
  Attrs plain = a.attrs;
  plain.set("relu", false);
  const Tensor pre = dispatch1(op, std::vector<Tensor>(a.inputs.begin(), a.inputs.end()), plain, a.loc);
  return mul(g, convert(gt(pre, 0.0, a.loc), g.dtype(), a.loc), a.loc);
}

}  // namespace kiln::ops
