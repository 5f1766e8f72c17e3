#include "kiln/nn/Conv.h"

#include <cmath>

#include "kiln/core/Ops.h"
#include "kiln/nn/Init.h"

namespace kiln::nn {

namespace {

void checkChannels(const char* module, int64_t in, int64_t out, int64_t groups) {
  const SourceLoc loc = SourceLoc::current();
  if (groups <= 0) throw Error::make(loc, module, "groups must be positive, got ", groups);
  if (in % groups != 0)
    throw Error::make(loc, module, "in_channels (", in, ") must be divisible by groups (", groups, ")");
  if (out % groups != 0)
    throw Error::make(loc, module, "out_channels (", out, ") must be divisible by groups (", groups, ")");
}

// PyTorch's _ConvNd.reset_parameters, for both directions: fan_in is read from the weight.
void resetConvParameters(Tensor& weight, Tensor& bias, const SourceLoc& loc) {
  init::kaiming_uniform_(weight, std::sqrt(5.0), init::kFanIn, init::kLeakyReLU, loc);
  if (bias.defined()) {
    const int64_t fanIn = weight.numel() == 0 ? 0 : init::calculate_fan_in_and_fan_out(weight, loc).fan_in;
    const double bound = fanIn > 0 ? 1.0 / std::sqrt(double(fanIn)) : 0.0;
    init::uniform_(bias, -bound, bound, loc);
  }
}

// ", padding=(1, 1), dilation=2, groups=2, bias=false": the settings that differ from
// their defaults, as PyTorch prints them (stride always).
void printConvSettings(std::ostream& os, const ExpandingArray<2>& stride, const ExpandingArray<2>& padding,
                       const ExpandingArray<2>* outputPadding, const ExpandingArray<2>& dilation,
                       int64_t groups, bool bias) {
  auto all = [](const ExpandingArray<2>& a, int64_t v) { return a[0] == v && a[1] == v; };
  auto print = [&](const char* name, const ExpandingArray<2>& a) {
    os << ", " << name << "=";
    printSizes(os, a, false);
  };
  print("stride", stride);
  if (!all(padding, 0)) print("padding", padding);
  if (outputPadding && !all(*outputPadding, 0)) print("output_padding", *outputPadding);
  if (!all(dilation, 1)) print("dilation", dilation);
  if (groups != 1) os << ", groups=" << groups;
  if (!bias) os << ", bias=false";
}

}  // namespace

Conv2dImpl::Conv2dImpl(const Conv2dOptions& options) : options(options) {
  const int64_t in = options.in_channels(), out = options.out_channels(), groups = options.groups();
  checkChannels("Conv2d", in, out, groups);
  const ExpandingArray<2>& k = options.kernel_size();
  weight = register_parameter("weight", empty({out, in / groups, k[0], k[1]}));
  if (options.bias()) bias = register_parameter("bias", empty({out}));
  reset_parameters();
}

void Conv2dImpl::reset_parameters(const SourceLoc& loc) { resetConvParameters(weight, bias, loc); }

Tensor Conv2dImpl::forward(const Tensor& x, const SourceLoc& loc) {
  return conv2d(x, weight, bias, options.stride().vec(), options.padding().vec(),
                options.dilation().vec(), options.groups(), loc);
}

void Conv2dImpl::pretty_print(std::ostream& os) const {
  os << "Conv2d(" << options.in_channels() << ", " << options.out_channels() << ", kernel_size=";
  printSizes(os, options.kernel_size(), false);
  printConvSettings(os, options.stride(), options.padding(), nullptr, options.dilation(), options.groups(),
                    options.bias());
  os << ")";
}

ConvTranspose2dImpl::ConvTranspose2dImpl(const ConvTranspose2dOptions& options) : options(options) {
  const int64_t in = options.in_channels(), out = options.out_channels(), groups = options.groups();
  checkChannels("ConvTranspose2d", in, out, groups);
  const ExpandingArray<2>& k = options.kernel_size();
  weight = register_parameter("weight", empty({in, out / groups, k[0], k[1]}));
  if (options.bias()) bias = register_parameter("bias", empty({out}));
  reset_parameters();
}

void ConvTranspose2dImpl::reset_parameters(const SourceLoc& loc) { resetConvParameters(weight, bias, loc); }

Tensor ConvTranspose2dImpl::forward(const Tensor& x, const SourceLoc& loc) {
  return conv_transpose2d(x, weight, bias, options.stride().vec(), options.padding().vec(),
                          options.output_padding().vec(), options.groups(), options.dilation().vec(), loc);
}

void ConvTranspose2dImpl::pretty_print(std::ostream& os) const {
  os << "ConvTranspose2d(" << options.in_channels() << ", " << options.out_channels() << ", kernel_size=";
  printSizes(os, options.kernel_size(), false);
  printConvSettings(os, options.stride(), options.padding(), &options.output_padding(), options.dilation(),
                    options.groups(), options.bias());
  os << ")";
}

}  // namespace kiln::nn
