#include "kiln/nn/Activation.h"

#include "kiln/core/Functional.h"

namespace kiln::nn {

Tensor ReLUImpl::forward(const Tensor& x, const SourceLoc& loc) { return relu(x, loc); }
Tensor ReLU6Impl::forward(const Tensor& x, const SourceLoc& loc) { return relu6(x, loc); }
Tensor SiLUImpl::forward(const Tensor& x, const SourceLoc& loc) { return silu(x, loc); }
Tensor SigmoidImpl::forward(const Tensor& x, const SourceLoc& loc) { return sigmoid(x, loc); }
Tensor TanhImpl::forward(const Tensor& x, const SourceLoc& loc) { return tanh(x, loc); }

Tensor LeakyReLUImpl::forward(const Tensor& x, const SourceLoc& loc) {
  return leaky_relu(x, options.negative_slope(), loc);
}

void LeakyReLUImpl::pretty_print(std::ostream& os) const {
  os << "LeakyReLU(negative_slope=" << options.negative_slope() << ")";
}

Tensor GELUImpl::forward(const Tensor& x, const SourceLoc& loc) {
  return gelu(x, options.approximate(), loc);
}

void GELUImpl::pretty_print(std::ostream& os) const {
  os << "GELU(approximate='" << options.approximate() << "')";
}

Tensor SoftmaxImpl::forward(const Tensor& x, const SourceLoc& loc) {
  return softmax(x, options.dim(), loc);
}

void SoftmaxImpl::pretty_print(std::ostream& os) const { os << "Softmax(dim=" << options.dim() << ")"; }

}  // namespace kiln::nn
