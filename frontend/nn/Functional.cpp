#include "kiln/nn/Functional.h"

namespace kiln::nn::functional {

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const SourceLoc& loc) {
  if (weight.dim() != 2)
    throw ShapeError::make(loc, "linear", "weight must be 2-d [out_features, in_features], got shape ",
                           weight.sizes());
  if (x.dim() == 0 || x.sizes().back() != weight.sizes()[1])
    throw ShapeError::make(loc, "linear", "input of shape ", x.sizes(), " does not end in ",
                           weight.sizes()[1], " features (weight of shape ", weight.sizes(), ")");
  Tensor y = matmul(x, weight.t(loc), loc);
  return bias.defined() ? add(y, bias, loc) : y;
}

Tensor dropout(const Tensor& x, const DropoutFuncOptions& options, const SourceLoc& loc) {
  return kiln::dropout(x, options.p(), options.training(), loc);
}

Tensor dropout2d(const Tensor& x, const Dropout2dFuncOptions& options, const SourceLoc& loc) {
  return kiln::dropout2d(x, options.p(), options.training(), loc);
}

Tensor gelu(const Tensor& x, const GELUFuncOptions& options, const SourceLoc& loc) {
  return kiln::gelu(x, options.approximate(), loc);
}

Tensor leaky_relu(const Tensor& x, const LeakyReLUFuncOptions& options, const SourceLoc& loc) {
  return kiln::leaky_relu(x, options.negative_slope(), loc);
}

Tensor softmax(const Tensor& x, const SoftmaxFuncOptions& options, const SourceLoc& loc) {
  return kiln::softmax(x, options.dim(), loc);
}

Tensor log_softmax(const Tensor& x, const LogSoftmaxFuncOptions& options, const SourceLoc& loc) {
  return kiln::log_softmax(x, options.dim(), loc);
}

Tensor conv2d(const Tensor& x, const Tensor& weight, const Conv2dFuncOptions& options,
              const SourceLoc& loc) {
  return kiln::conv2d(x, weight, options.bias(), options.stride().vec(), options.padding().vec(),
                      options.dilation().vec(), options.groups(), loc);
}

Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const ConvTranspose2dFuncOptions& options,
                        const SourceLoc& loc) {
  return kiln::conv_transpose2d(x, weight, options.bias(), options.stride().vec(), options.padding().vec(),
                                options.output_padding().vec(), options.groups(), options.dilation().vec(),
                                loc);
}

Tensor max_pool2d(const Tensor& x, const MaxPool2dFuncOptions& options, const SourceLoc& loc) {
  return kiln::max_pool2d(x, options.kernel_size().vec(), options.stride().vec(),
                          options.padding().vec(), loc);
}

Tensor avg_pool2d(const Tensor& x, const AvgPool2dFuncOptions& options, const SourceLoc& loc) {
  return kiln::avg_pool2d(x, options.kernel_size().vec(), options.stride().vec(),
                          options.padding().vec(), loc);
}

Tensor adaptive_avg_pool2d(const Tensor& x, const AdaptiveAvgPool2dFuncOptions& options,
                           const SourceLoc& loc) {
  return kiln::adaptive_avg_pool2d(x, options.output_size().vec(), loc);
}

Tensor layer_norm(const Tensor& x, const LayerNormFuncOptions& options, const SourceLoc& loc) {
  return kiln::layer_norm(x, options.normalized_shape(), options.weight(), options.bias(),
                          options.eps(), loc);
}

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options, const SourceLoc& loc) {
  return kiln::batch_norm(x, running_mean, running_var, options.weight(), options.bias(),
                          options.training(), options.momentum(), options.eps(), loc);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyFuncOptions& options, const SourceLoc& loc) {
  return kiln::cross_entropy(input, target, options.reduction(), options.weight(),
                             options.ignore_index(), loc);
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options,
                const SourceLoc& loc) {
  return kiln::nll_loss(input, target, options.reduction(), options.weight(),
                        options.ignore_index(), loc);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options,
                const SourceLoc& loc) {
  return kiln::mse_loss(input, target, options.reduction(), loc);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options,
               const SourceLoc& loc) {
  return kiln::l1_loss(input, target, options.reduction(), loc);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const SmoothL1LossFuncOptions& options, const SourceLoc& loc) {
  return kiln::smooth_l1_loss(input, target, options.reduction(), options.beta(), loc);
}

Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& options,
                 const SourceLoc& loc) {
  Tensor rows = kiln::embedding(weight, input, loc);
  if (!options.padding_idx()) return rows;
  int64_t pad = *options.padding_idx();
  const int64_t count = weight.dim() > 0 ? weight.sizes()[0] : 0;
  if (pad < -count || pad >= count)
    throw Error::make(loc, "embedding", "padding_idx ", pad, " is out of range for ", count,
                      " embeddings");
  if (pad < 0) pad += count;
  // The same values, but the rows picked by padding_idx come from a detached copy, so no
  // gradient reaches that row of the weight (PyTorch's padding_idx).
  if (!rows.requires_grad()) return rows;
  Tensor keep = ne(input, pad, loc).unsqueeze(-1, loc);
  return where(keep, rows, rows.detach(), loc);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options, const SourceLoc& loc) {
  return kiln::binary_cross_entropy(input, target, options.weight(), options.reduction(), loc);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options,
                                        const SourceLoc& loc) {
  return kiln::binary_cross_entropy_with_logits(input, target, options.weight(), options.pos_weight(),
                                                options.reduction(), loc);
}

}  // namespace kiln::nn::functional
