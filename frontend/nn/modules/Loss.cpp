#include "kiln/nn/Loss.h"

namespace kiln::nn {

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& options) : options(options) {
  if (options.weight().defined()) weight = register_buffer("weight", options.weight());
}

Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target, const SourceLoc& loc) {
  return cross_entropy(input, target, options.reduction(), weight, options.ignore_index(), loc);
}

NLLLossImpl::NLLLossImpl(const NLLLossOptions& options) : options(options) {
  if (options.weight().defined()) weight = register_buffer("weight", options.weight());
}

Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target, const SourceLoc& loc) {
  return nll_loss(input, target, options.reduction(), weight, options.ignore_index(), loc);
}

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target, const SourceLoc& loc) {
  return mse_loss(input, target, options.reduction(), loc);
}

Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target, const SourceLoc& loc) {
  return l1_loss(input, target, options.reduction(), loc);
}

Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target, const SourceLoc& loc) {
  return smooth_l1_loss(input, target, options.reduction(), options.beta(), loc);
}

}  // namespace kiln::nn
