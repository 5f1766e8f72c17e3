#include "kiln/nn/Linear.h"

#include <cmath>

#include "kiln/nn/Functional.h"
#include "kiln/nn/Init.h"

namespace kiln::nn {

LinearImpl::LinearImpl(const LinearOptions& options) : options(options) {
  if (options.in_features() < 0 || options.out_features() < 0)
    throw Error::make(SourceLoc::current(), "Linear", "in_features and out_features must be >= 0, got ",
                      options.in_features(), " and ", options.out_features());
  weight = register_parameter("weight", empty({options.out_features(), options.in_features()}));
  if (options.bias()) bias = register_parameter("bias", empty({options.out_features()}));
  reset_parameters();
}

void LinearImpl::reset_parameters(const SourceLoc& loc) {
  init::kaiming_uniform_(weight, std::sqrt(5.0), init::kFanIn, init::kLeakyReLU, loc);
  if (bias.defined()) {
    const int64_t fanIn = options.in_features();
    const double bound = fanIn > 0 ? 1.0 / std::sqrt(double(fanIn)) : 0.0;
    init::uniform_(bias, -bound, bound, loc);
  }
}

Tensor LinearImpl::forward(const Tensor& x, const SourceLoc& loc) {
  return functional::linear(x, weight, bias, loc);
}

void LinearImpl::pretty_print(std::ostream& os) const {
  os << "Linear(in_features=" << options.in_features() << ", out_features=" << options.out_features()
     << ", bias=" << (options.bias() ? "true" : "false") << ")";
}

Tensor FlattenImpl::forward(const Tensor& x, const SourceLoc& loc) {
  return x.flatten(options.start_dim(), options.end_dim(), loc);
}

void FlattenImpl::pretty_print(std::ostream& os) const {
  os << "Flatten(start_dim=" << options.start_dim() << ", end_dim=" << options.end_dim() << ")";
}

}  // namespace kiln::nn
