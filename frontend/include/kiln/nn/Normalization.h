// LayerNorm: normalization over the trailing dims of each sample.
#pragma once

#include "kiln/core/Shape.h"
#include "kiln/nn/Arg.h"
#include "kiln/nn/ModuleHolder.h"

namespace kiln::nn {

struct LayerNormOptions {
  LayerNormOptions(Shape normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  KILN_ARG(Shape, normalized_shape);
  KILN_ARG(double, eps) = 1e-5;
  // Learnable per-element weight (ones) and bias (zeros) of normalized_shape.
  KILN_ARG(bool, elementwise_affine) = true;
};

class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(const LayerNormOptions& options);
  void reset_parameters(const SourceLoc& loc = SourceLoc::current());
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
  void pretty_print(std::ostream& os) const override;

  LayerNormOptions options;
  Tensor weight, bias;  // undefined without elementwise_affine
};
KILN_MODULE(LayerNorm);

}  // namespace kiln::nn
