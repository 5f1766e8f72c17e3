// Adam and AdamW (decoupled weight decay), as torch::optim::Adam/AdamW and PyTorch 1.13's
// single-tensor updates, including amsgrad and the capturable form.
#pragma once

#include <memory>
#include <string_view>
#include <tuple>
#include <vector>

#include "kiln/optim/Optimizer.h"

namespace kiln::optim {

// Adam's (beta1, beta2).
using Betas = std::tuple<double, double>;

namespace detail {

// Error naming `op` for the values PyTorch's Adam rejects.
void checkAdamOptions(double lr, const Betas& betas, double eps, double weightDecay,
                      std::string_view op, const SourceLoc& loc);

// The hyperparameters Adam and AdamW share; they differ in the default weight decay and in
// how it is applied.
template <class Derived>
class AdamOptionsBase : public OptimizerOptions {
 public:
  using Self = Derived;
  explicit AdamOptionsBase(double lr) : OptimizerOptions(lr) {}

  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
  void visit(OptionsVisitor& visitor) override {
    visitLr(visitor);
    visitor.field("betas", betas_);
    visitor.field("eps", eps_);
    visitor.field("weight_decay", weight_decay_);
    visitor.field("amsgrad", amsgrad_);
    visitor.field("maximize", maximize_);
    visitor.field("capturable", capturable_);
  }
  void validate(std::string_view op, const SourceLoc& loc) const override {
    checkAdamOptions(lr(), betas_, eps_, weight_decay_, op, loc);
  }

  KILN_OPTIM_LR();
  KILN_OPTIM_ARG(Betas, betas) = {0.9, 0.999};
  KILN_OPTIM_ARG(double, eps) = 1e-8;
  KILN_OPTIM_ARG(double, weight_decay) = 0;
  KILN_OPTIM_ARG(bool, amsgrad) = false;
  // Ascends the objective instead (PyTorch's maximize).
  KILN_OPTIM_ARG(bool, maximize) = false;
  // PyTorch's capturable form of the bias corrections (f32 tensor ops on the step,
  // rounded as PyTorch's capturable form rounds). Both forms compute from the step tensor
  // without reading its value, so either traces, by value or symbolically; the default
  // keeps the bits of PyTorch's default form, which reads step.item().
  KILN_OPTIM_ARG(bool, capturable) = false;
};

}  // namespace detail

class AdamOptions : public detail::AdamOptionsBase<AdamOptions> {
 public:
  AdamOptions(double lr = 1e-3) : AdamOptionsBase(lr) {}  // NOLINT: implicit as in LibTorch
};

class AdamWOptions : public detail::AdamOptionsBase<AdamWOptions> {
 public:
  AdamWOptions(double lr = 1e-3) : AdamOptionsBase(lr) {  // NOLINT: implicit as in LibTorch
    weight_decay(1e-2);
  }
};

// Per parameter p with gradient g, after step += 1 (PyTorch's _single_tensor_adam):
//   g += weight_decay * p;  m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g²;
//   v̂ = amsgrad ? (max_v = max(max_v, v)) : v;
//   p -= lr / (1 - beta1^step) * m / (sqrt(v̂) / sqrt(1 - beta2^step) + eps).
// State: "step" (0-d float32), "exp_avg", "exp_avg_sq", and "max_exp_avg_sq" with amsgrad.
class Adam : public Optimizer {
 public:
  Adam(std::vector<OptimizerParamGroup> groups, AdamOptions defaults = {},
       const SourceLoc& loc = SourceLoc::current());
  Adam(std::vector<Tensor> params, AdamOptions defaults = {},
       const SourceLoc& loc = SourceLoc::current());

 protected:
  void update(OptimizerParamGroup& group, const SourceLoc& loc) override;
  std::vector<std::string> stateNames(const OptimizerOptions& options) const override;
};

// As Adam, but the weight decay shrinks the parameter directly (p *= 1 - lr * weight_decay)
// instead of entering the gradient (PyTorch's _single_tensor_adamw).
class AdamW : public Optimizer {
 public:
  AdamW(std::vector<OptimizerParamGroup> groups, AdamWOptions defaults = {},
        const SourceLoc& loc = SourceLoc::current());
  AdamW(std::vector<Tensor> params, AdamWOptions defaults = {},
        const SourceLoc& loc = SourceLoc::current());

 protected:
  void update(OptimizerParamGroup& group, const SourceLoc& loc) override;
  std::vector<std::string> stateNames(const OptimizerOptions& options) const override;
};

}  // namespace kiln::optim
