// Stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay,
// as torch::optim::SGD and PyTorch 1.13's single-tensor update.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "kiln/optim/Optimizer.h"

namespace kiln::optim {

class SGDOptions : public OptimizerOptions {
 public:
  using Self = SGDOptions;
  // Implicit, so `SGD opt(params, /*lr=*/0.1)` works as in LibTorch.
  SGDOptions(double lr);  // NOLINT

  std::unique_ptr<OptimizerOptions> clone() const override;
  void visit(OptionsVisitor& visitor) override;
  void validate(std::string_view op, const SourceLoc& loc) const override;

  KILN_OPTIM_LR();
  KILN_OPTIM_ARG(double, momentum) = 0;
  KILN_OPTIM_ARG(double, dampening) = 0;
  KILN_OPTIM_ARG(double, weight_decay) = 0;
  KILN_OPTIM_ARG(bool, nesterov) = false;
  // Ascends the objective instead (PyTorch's maximize).
  KILN_OPTIM_ARG(bool, maximize) = false;
};

// Per parameter p with gradient g (PyTorch's _single_tensor_sgd):
//   g += weight_decay * p;  buf = g on the first step, else buf = momentum * buf + (1 - dampening) * g;
//   g = nesterov ? g + momentum * buf : buf;  p -= lr * g.
// State: "momentum_buffer" when momentum != 0.
class SGD : public Optimizer {
 public:
  SGD(std::vector<OptimizerParamGroup> groups, SGDOptions defaults,
      const SourceLoc& loc = SourceLoc::current());
  SGD(std::vector<Tensor> params, SGDOptions defaults, const SourceLoc& loc = SourceLoc::current());

 protected:
  void update(OptimizerParamGroup& group, const SourceLoc& loc) override;
  std::vector<std::string> stateNames(const OptimizerOptions& options) const override;
};

}  // namespace kiln::optim
