// Pooling modules over NCHW input: MaxPool2d, AvgPool2d, AdaptiveAvgPool2d.
#pragma once

#include "kiln/nn/Arg.h"
#include "kiln/nn/ModuleHolder.h"

namespace kiln::nn {

// stride defaults to the kernel size, as PyTorch's stride=None.
struct Pool2dOptions {
  Pool2dOptions(ExpandingArray<2> kernel_size)  // NOLINT: implicit, as LibTorch
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  KILN_ARG(ExpandingArray<2>, kernel_size);
  KILN_ARG(ExpandingArray<2>, stride);
  KILN_ARG(ExpandingArray<2>, padding) = 0;
};
using MaxPool2dOptions = Pool2dOptions;
using AvgPool2dOptions = Pool2dOptions;

class MaxPool2dImpl : public Module {
 public:
  explicit MaxPool2dImpl(ExpandingArray<2> kernel_size) : options(kernel_size) {}
  explicit MaxPool2dImpl(const MaxPool2dOptions& options) : options(options) {}
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
  void pretty_print(std::ostream& os) const override;
  MaxPool2dOptions options;
};
KILN_MODULE(MaxPool2d);

// Padding counts in the average (count_include_pad = true).
class AvgPool2dImpl : public Module {
 public:
  explicit AvgPool2dImpl(ExpandingArray<2> kernel_size) : options(kernel_size) {}
  explicit AvgPool2dImpl(const AvgPool2dOptions& options) : options(options) {}
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
  void pretty_print(std::ostream& os) const override;
  AvgPool2dOptions options;
};
KILN_MODULE(AvgPool2d);

struct AdaptiveAvgPool2dOptions {
  AdaptiveAvgPool2dOptions(ExpandingArray<2> output_size)  // NOLINT: implicit
      : output_size_(output_size) {}
  KILN_ARG(ExpandingArray<2>, output_size);
};

// Averages to output_size (which must divide the input's spatial size; 1 is a mean).
class AdaptiveAvgPool2dImpl : public Module {
 public:
  explicit AdaptiveAvgPool2dImpl(ExpandingArray<2> output_size) : options(output_size) {}
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options) : options(options) {}
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
  void pretty_print(std::ostream& os) const override;
  AdaptiveAvgPool2dOptions options;
};
KILN_MODULE(AdaptiveAvgPool2d);

}  // namespace kiln::nn
