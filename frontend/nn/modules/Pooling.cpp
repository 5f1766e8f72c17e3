#include "kiln/nn/Pooling.h"

#include "kiln/core/Ops.h"

namespace kiln::nn {

namespace {
// "kernel_size=2, stride=2, padding=0": each as the user gave it (one value or a tuple).
void printPool(std::ostream& os, const char* name, const Pool2dOptions& options) {
  os << name << "(kernel_size=";
  printSizes(os, options.kernel_size(), true);
  os << ", stride=";
  printSizes(os, options.stride(), true);
  os << ", padding=";
  printSizes(os, options.padding(), true);
  os << ")";
}
}  // namespace

Tensor MaxPool2dImpl::forward(const Tensor& x, const SourceLoc& loc) {
  return max_pool2d(x, options.kernel_size().vec(), options.stride().vec(), options.padding().vec(),
                    loc);
}

void MaxPool2dImpl::pretty_print(std::ostream& os) const { printPool(os, "MaxPool2d", options); }

Tensor AvgPool2dImpl::forward(const Tensor& x, const SourceLoc& loc) {
  return avg_pool2d(x, options.kernel_size().vec(), options.stride().vec(), options.padding().vec(),
                    loc);
}

void AvgPool2dImpl::pretty_print(std::ostream& os) const { printPool(os, "AvgPool2d", options); }

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& x, const SourceLoc& loc) {
  return adaptive_avg_pool2d(x, options.output_size().vec(), loc);
}

void AdaptiveAvgPool2dImpl::pretty_print(std::ostream& os) const {
  os << "AdaptiveAvgPool2d(output_size=";
  printSizes(os, options.output_size(), true);
  os << ")";
}

}  // namespace kiln::nn
