#include "kiln/nn/Normalization.h"

#include "kiln/core/Functional.h"
#include "kiln/nn/Init.h"

namespace kiln::nn {

LayerNormImpl::LayerNormImpl(const LayerNormOptions& options) : options(options) {
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", empty(options.normalized_shape()));
    bias = register_parameter("bias", empty(options.normalized_shape()));
  }
  reset_parameters();
}

void LayerNormImpl::reset_parameters(const SourceLoc& loc) {
  if (!options.elementwise_affine()) return;
  init::ones_(weight, loc);
  init::zeros_(bias, loc);
}

Tensor LayerNormImpl::forward(const Tensor& x, const SourceLoc& loc) {
  return layer_norm(x, options.normalized_shape(), weight, bias, options.eps(), loc);
}

void LayerNormImpl::pretty_print(std::ostream& os) const {
  // The shape as a Python tuple, as PyTorch prints it: (10,) or (4, 10).
  const Shape& shape = options.normalized_shape();
  os << "LayerNorm((";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << (shape.size() == 1 ? ",)" : ")") << ", eps=" << options.eps()
     << ", elementwise_affine=" << (options.elementwise_affine() ? "true" : "false") << ")";
}

}  // namespace kiln::nn
