// Conv2d: 2-d convolution over NCHW input with OIHW weights, groups and an optional bias;
// ConvTranspose2d, its adjoint.
#pragma once

#include "kiln/nn/Arg.h"
#include "kiln/nn/ModuleHolder.h"

namespace kiln::nn {

struct Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  KILN_ARG(int64_t, in_channels);
  KILN_ARG(int64_t, out_channels);
  KILN_ARG(ExpandingArray<2>, kernel_size);
  KILN_ARG(ExpandingArray<2>, stride) = 1;
  KILN_ARG(ExpandingArray<2>, padding) = 0;
  KILN_ARG(ExpandingArray<2>, dilation) = 1;
  KILN_ARG(int64_t, groups) = 1;
  KILN_ARG(bool, bias) = true;
};

// weight [out, in / groups, kH, kW], bias [out]; both channel counts must divide by
// groups. PyTorch's default initialization: weight U(±1/√fan_in) (kaiming_uniform_ with
// a = √5), bias U(±1/√fan_in), fan_in = in / groups · kH · kW.
class Conv2dImpl : public Module {
 public:
  Conv2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv2dImpl(const Conv2dOptions& options);

  void reset_parameters(const SourceLoc& loc = SourceLoc::current());
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
  // "Conv2d(3, 32, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=false)", as
  // PyTorch: padding, dilation, groups and bias only where they differ from the defaults.
  void pretty_print(std::ostream& os) const override;

  Conv2dOptions options;
  Tensor weight;
  Tensor bias;  // undefined with bias(false)
};
KILN_MODULE(Conv2d);

struct ConvTranspose2dOptions {
  ConvTranspose2dOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  KILN_ARG(int64_t, in_channels);
  KILN_ARG(int64_t, out_channels);
  KILN_ARG(ExpandingArray<2>, kernel_size);
  KILN_ARG(ExpandingArray<2>, stride) = 1;
  KILN_ARG(ExpandingArray<2>, padding) = 0;
  KILN_ARG(ExpandingArray<2>, output_padding) = 0;
  KILN_ARG(int64_t, groups) = 1;
  KILN_ARG(bool, bias) = true;
  KILN_ARG(ExpandingArray<2>, dilation) = 1;
};

// kiln::conv_transpose2d: weight [in, out / groups, kH, kW], bias [out]; both channel
// counts must divide by groups. Initialized as Conv2d, with PyTorch's fan_in of this
// weight: out / groups · kH · kW.
class ConvTranspose2dImpl : public Module {
 public:
  ConvTranspose2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : ConvTranspose2dImpl(ConvTranspose2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit ConvTranspose2dImpl(const ConvTranspose2dOptions& options);

  void reset_parameters(const SourceLoc& loc = SourceLoc::current());
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
  // As PyTorch: "ConvTranspose2d(100, 256, kernel_size=(4, 4), stride=(1, 1), bias=false)".
  void pretty_print(std::ostream& os) const override;

  ConvTranspose2dOptions options;
  Tensor weight;
  Tensor bias;  // undefined with bias(false)
};
KILN_MODULE(ConvTranspose2d);

}  // namespace kiln::nn
