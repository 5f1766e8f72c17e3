// Dropout and Dropout2d: zero elements (whole channels) with probability p in training
// mode, the identity in eval mode.
#pragma once

#include "kiln/nn/Arg.h"
#include "kiln/nn/ModuleHolder.h"

namespace kiln::nn {

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT: implicit, as LibTorch
  KILN_ARG(double, p);
};

class DropoutImpl : public Module {
 public:
  // kiln::Error unless 0 <= p <= 1.
  explicit DropoutImpl(const DropoutOptions& options = {});
  // kiln::dropout(x, p, is_training()).
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
  void pretty_print(std::ostream& os) const override;
  DropoutOptions options;
};
KILN_MODULE(Dropout);

using Dropout2dOptions = DropoutOptions;

class Dropout2dImpl : public Module {
 public:
  // kiln::Error unless 0 <= p <= 1.
  explicit Dropout2dImpl(const Dropout2dOptions& options = {});
  // kiln::dropout2d(x, p, is_training()): x is [N, C, H, W] or [C, H, W].
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
  void pretty_print(std::ostream& os) const override;
  Dropout2dOptions options;
};
KILN_MODULE(Dropout2d);

}  // namespace kiln::nn
