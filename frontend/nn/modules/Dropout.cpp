#include "kiln/nn/Dropout.h"

#include "kiln/core/Functional.h"

namespace kiln::nn {

DropoutImpl::DropoutImpl(const DropoutOptions& options) : options(options) {
  if (!(options.p() >= 0.0 && options.p() <= 1.0))
    throw Error::make(SourceLoc::current(), "Dropout", "probability must be in [0, 1], got ", options.p());
}

Tensor DropoutImpl::forward(const Tensor& x, const SourceLoc& loc) {
  return dropout(x, options.p(), is_training(), loc);
}

void DropoutImpl::pretty_print(std::ostream& os) const { os << "Dropout(p=" << options.p() << ")"; }

}  // namespace kiln::nn
