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

BCELossImpl::BCELossImpl(const BCELossOptions& options) : options(options) {
  if (options.weight().defined()) weight = register_buffer("weight", options.weight());
}

Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target, const SourceLoc& loc) {
  return binary_cross_entropy(input, target, weight, options.reduction(), loc);
}

BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options) : options(options) {
  if (options.weight().defined()) weight = register_buffer("weight", options.weight());
  if (options.pos_weight().defined()) pos_weight = register_buffer("pos_weight", options.pos_weight());
}

Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target, const SourceLoc& loc) {
  return binary_cross_entropy_with_logits(input, target, weight, pos_weight, options.reduction(), loc);
}

}  // namespace kiln::nn
