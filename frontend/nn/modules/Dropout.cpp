#include "kiln/nn/Dropout.h"

#include "kiln/core/Functional.h"

namespace kiln::nn {

namespace {
void checkProbability(const char* module, double p) {
  if (!(p >= 0.0 && p <= 1.0))
    throw Error::make(SourceLoc::current(), module, "probability must be in [0, 1], got ", p);
}
}  // namespace

DropoutImpl::DropoutImpl(const DropoutOptions& options) : options(options) {
  checkProbability("Dropout", options.p());
}

Tensor DropoutImpl::forward(const Tensor& x, const SourceLoc& loc) {
  return dropout(x, options.p(), is_training(), loc);
}

void DropoutImpl::pretty_print(std::ostream& os) const { os << "Dropout(p=" << options.p() << ")"; }

Dropout2dImpl::Dropout2dImpl(const Dropout2dOptions& options) : options(options) {
  checkProbability("Dropout2d", options.p());
}

Tensor Dropout2dImpl::forward(const Tensor& x, const SourceLoc& loc) {
  return dropout2d(x, options.p(), is_training(), loc);
}

void Dropout2dImpl::pretty_print(std::ostream& os) const { os << "Dropout2d(p=" << options.p() << ")"; }

}  // namespace kiln::nn
