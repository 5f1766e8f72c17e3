#include "kiln/nn/Conv.h"

#include <cmath>

#include "kiln/core/Ops.h"
#include "kiln/nn/Init.h"

namespace kiln::nn {

Conv2dImpl::Conv2dImpl(const Conv2dOptions& options) : options(options) {
  const SourceLoc loc = SourceLoc::current();
  const int64_t in = options.in_channels(), out = options.out_channels(), groups = options.groups();
  if (groups <= 0) throw Error::make(loc, "Conv2d", "groups must be positive, got ", groups);
  if (in % groups != 0)
    throw Error::make(loc, "Conv2d", "in_channels (", in, ") must be divisible by groups (", groups, ")");
  if (out % groups != 0)
    throw Error::make(loc, "Conv2d", "out_channels (", out, ") must be divisible by groups (", groups, ")");
  const ExpandingArray<2>& k = options.kernel_size();
  weight = register_parameter("weight", empty({out, in / groups, k[0], k[1]}));
  if (options.bias()) bias = register_parameter("bias", empty({out}));
  reset_parameters();
}

void Conv2dImpl::reset_parameters(const SourceLoc& loc) {
  init::kaiming_uniform_(weight, std::sqrt(5.0), init::kFanIn, init::kLeakyReLU, loc);
  if (bias.defined()) {
    const int64_t fanIn = weight.numel() == 0 ? 0 : init::calculate_fan_in_and_fan_out(weight, loc).fan_in;
    const double bound = fanIn > 0 ? 1.0 / std::sqrt(double(fanIn)) : 0.0;
    init::uniform_(bias, -bound, bound, loc);
  }
}

Tensor Conv2dImpl::forward(const Tensor& x, const SourceLoc& loc) {
  return conv2d(x, weight, bias, options.stride().vec(), options.padding().vec(),
                options.dilation().vec(), options.groups(), loc);
}

void Conv2dImpl::pretty_print(std::ostream& os) const {
  auto all = [](const ExpandingArray<2>& a, int64_t v) { return a[0] == v && a[1] == v; };
  os << "Conv2d(" << options.in_channels() << ", " << options.out_channels() << ", kernel_size=";
  printSizes(os, options.kernel_size(), false);
  os << ", stride=";
  printSizes(os, options.stride(), false);
  if (!all(options.padding(), 0)) {
    os << ", padding=";
    printSizes(os, options.padding(), false);
  }
  if (!all(options.dilation(), 1)) {
    os << ", dilation=";
    printSizes(os, options.dilation(), false);
  }
  if (options.groups() != 1) os << ", groups=" << options.groups();
  if (!options.bias()) os << ", bias=false";
  os << ")";
}

}  // namespace kiln::nn
