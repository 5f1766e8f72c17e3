// nn::functional: the stateless forms of the modules (torch::nn::functional, usually
// aliased `namespace F = kiln::nn::functional;`). The kiln:: ops are re-exported under
// their names; LibTorch's options structs are accepted where LibTorch takes them.
#pragma once

#include <optional>
#include <string>

#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/nn/Activation.h"
#include "kiln/nn/Arg.h"
#include "kiln/nn/Dropout.h"
#include "kiln/nn/Loss.h"

namespace kiln::nn::functional {

// ---- re-exported ops (their signatures are in kiln/core/{Ops,Functional}.h) -------------
using kiln::adaptive_avg_pool2d;
using kiln::avg_pool2d;
using kiln::batch_norm;
using kiln::binary_cross_entropy;
using kiln::binary_cross_entropy_with_logits;
using kiln::clamp;
using kiln::conv2d;
using kiln::conv_transpose2d;
using kiln::cross_entropy;
using kiln::dropout;
using kiln::dropout2d;
using kiln::gelu;
using kiln::l1_loss;
using kiln::layer_norm;
using kiln::leaky_relu;
using kiln::log_softmax;
using kiln::max_pool2d;
using kiln::mse_loss;
using kiln::nll_loss;
using kiln::relu;
using kiln::relu6;
using kiln::sigmoid;
using kiln::silu;
using kiln::smooth_l1_loss;
using kiln::softmax;
using kiln::tanh;

// y = x·weightᵀ + bias (bias undefined = none); weight [out, in], x [*, in].
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              const SourceLoc& loc = SourceLoc::current());

// ---- options forms ----------------------------------------------------------------------
struct DropoutFuncOptions {
  KILN_ARG(double, p) = 0.5;
  KILN_ARG(bool, training) = true;
};
Tensor dropout(const Tensor& x, const DropoutFuncOptions& options,
               const SourceLoc& loc = SourceLoc::current());

using Dropout2dFuncOptions = DropoutFuncOptions;
Tensor dropout2d(const Tensor& x, const Dropout2dFuncOptions& options,
                 const SourceLoc& loc = SourceLoc::current());

using GELUFuncOptions = GELUOptions;
Tensor gelu(const Tensor& x, const GELUFuncOptions& options,
            const SourceLoc& loc = SourceLoc::current());

using LeakyReLUFuncOptions = LeakyReLUOptions;
Tensor leaky_relu(const Tensor& x, const LeakyReLUFuncOptions& options,
                  const SourceLoc& loc = SourceLoc::current());

using SoftmaxFuncOptions = SoftmaxOptions;
using LogSoftmaxFuncOptions = SoftmaxOptions;
Tensor softmax(const Tensor& x, const SoftmaxFuncOptions& options,
               const SourceLoc& loc = SourceLoc::current());
Tensor log_softmax(const Tensor& x, const LogSoftmaxFuncOptions& options,
                   const SourceLoc& loc = SourceLoc::current());

struct Conv2dFuncOptions {
  KILN_ARG(Tensor, bias);
  KILN_ARG(ExpandingArray<2>, stride) = 1;
  KILN_ARG(ExpandingArray<2>, padding) = 0;
  KILN_ARG(ExpandingArray<2>, dilation) = 1;
  KILN_ARG(int64_t, groups) = 1;
};
Tensor conv2d(const Tensor& x, const Tensor& weight, const Conv2dFuncOptions& options,
              const SourceLoc& loc = SourceLoc::current());

struct ConvTranspose2dFuncOptions {
  KILN_ARG(Tensor, bias);
  KILN_ARG(ExpandingArray<2>, stride) = 1;
  KILN_ARG(ExpandingArray<2>, padding) = 0;
  KILN_ARG(ExpandingArray<2>, output_padding) = 0;
  KILN_ARG(int64_t, groups) = 1;
  KILN_ARG(ExpandingArray<2>, dilation) = 1;
};
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const ConvTranspose2dFuncOptions& options,
                        const SourceLoc& loc = SourceLoc::current());

// stride defaults to the kernel size.
struct Pool2dFuncOptions {
  Pool2dFuncOptions(ExpandingArray<2> kernel_size)  // NOLINT: implicit, as LibTorch
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  KILN_ARG(ExpandingArray<2>, kernel_size);
  KILN_ARG(ExpandingArray<2>, stride);
  KILN_ARG(ExpandingArray<2>, padding) = 0;
};
using MaxPool2dFuncOptions = Pool2dFuncOptions;
using AvgPool2dFuncOptions = Pool2dFuncOptions;
Tensor max_pool2d(const Tensor& x, const MaxPool2dFuncOptions& options,
                  const SourceLoc& loc = SourceLoc::current());
Tensor avg_pool2d(const Tensor& x, const AvgPool2dFuncOptions& options,
                  const SourceLoc& loc = SourceLoc::current());

struct AdaptiveAvgPool2dFuncOptions {
  AdaptiveAvgPool2dFuncOptions(ExpandingArray<2> output_size)  // NOLINT: implicit
      : output_size_(output_size) {}
  KILN_ARG(ExpandingArray<2>, output_size);
};
Tensor adaptive_avg_pool2d(const Tensor& x, const AdaptiveAvgPool2dFuncOptions& options,
                           const SourceLoc& loc = SourceLoc::current());

struct LayerNormFuncOptions {
  LayerNormFuncOptions(Shape normalized_shape)  // NOLINT: implicit
      : normalized_shape_(std::move(normalized_shape)) {}
  KILN_ARG(Shape, normalized_shape);
  KILN_ARG(Tensor, weight);
  KILN_ARG(Tensor, bias);
  KILN_ARG(double, eps) = 1e-5;
};
Tensor layer_norm(const Tensor& x, const LayerNormFuncOptions& options,
                  const SourceLoc& loc = SourceLoc::current());

struct BatchNormFuncOptions {
  KILN_ARG(Tensor, weight);
  KILN_ARG(Tensor, bias);
  KILN_ARG(bool, training) = false;
  KILN_ARG(double, momentum) = 0.1;
  KILN_ARG(double, eps) = 1e-5;
};
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options, const SourceLoc& loc = SourceLoc::current());

using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using MSELossFuncOptions = MSELossOptions;
Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyFuncOptions& options,
                     const SourceLoc& loc = SourceLoc::current());
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options,
                const SourceLoc& loc = SourceLoc::current());
Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options,
                const SourceLoc& loc = SourceLoc::current());
using L1LossFuncOptions = L1LossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options,
               const SourceLoc& loc = SourceLoc::current());
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const SmoothL1LossFuncOptions& options,
                      const SourceLoc& loc = SourceLoc::current());

using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options,
                            const SourceLoc& loc = SourceLoc::current());
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options,
                                        const SourceLoc& loc = SourceLoc::current());

struct EmbeddingFuncOptions {
  KILN_ARG(std::optional<int64_t>, padding_idx);
};
// LibTorch's argument order (input first), unlike kiln::embedding(weight, indices):
// rows of weight [V, D] picked by integer `input`; a padding_idx row gets no gradient.
Tensor embedding(const Tensor& input, const Tensor& weight,
                 const EmbeddingFuncOptions& options = {},
                 const SourceLoc& loc = SourceLoc::current());

}  // namespace kiln::nn::functional
