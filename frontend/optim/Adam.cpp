// Adam and AdamW: PyTorch 1.13's _single_tensor_adam/_single_tensor_adamw written with
// kiln's tensor ops, in both the default and the capturable form.
#include "kiln/optim/Adam.h"

#include <cmath>

#include "kiln/core/Ops.h"

namespace kiln::optim {

namespace detail {

void checkAdamOptions(double lr, const Betas& betas, double eps, double weightDecay,
                      std::string_view op, const SourceLoc& loc) {
  // !(x >= 0) also rejects NaN.
  if (!(lr >= 0)) throw Error::make(loc, op, "invalid learning rate ", lr, " (must be >= 0)");
  if (!(eps >= 0)) throw Error::make(loc, op, "invalid eps ", eps, " (must be >= 0)");
  auto [beta1, beta2] = betas;
  if (!(beta1 >= 0 && beta1 < 1))
    throw Error::make(loc, op, "invalid beta1 ", beta1, " (must be in [0, 1))");
  if (!(beta2 >= 0 && beta2 < 1))
    throw Error::make(loc, op, "invalid beta2 ", beta2, " (must be in [0, 1))");
  if (!(weightDecay >= 0))
    throw Error::make(loc, op, "invalid weight_decay ", weightDecay, " (must be >= 0)");
}

}  // namespace detail

namespace {

// The hyperparameters one update reads; AdamW decays the parameter itself (`decoupled`).
struct AdamStep {
  Tensor lr;  // 0-d float64: the group's lr_tensor(), state in a trace
  double beta1, beta2, eps, weightDecay;
  bool amsgrad, maximize, capturable, decoupled;
};

template <class Options>
AdamStep adamStep(const OptimizerOptions& options, bool decoupled) {
  const auto& o = static_cast<const Options&>(options);
  auto [beta1, beta2] = o.betas();
  return {o.lr_tensor(), beta1, beta2, o.eps(), o.weight_decay(),
          o.amsgrad(), o.maximize(), o.capturable(), decoupled};
}

std::vector<std::string> adamStateNames(bool amsgrad) {
  std::vector<std::string> names{"step", "exp_avg", "exp_avg_sq"};
  if (amsgrad) names.push_back("max_exp_avg_sq");
  return names;
}

// `scalar / t` as PyTorch evaluates it (Tensor.__rtruediv__ is t.reciprocal() * scalar),
// which rounds differently from one division; `scalar` is 0-d, rounded to t's dtype as
// PyTorch rounds a Python number.
Tensor rdiv(const Tensor& scalar, const Tensor& t, const SourceLoc& loc) {
  return mul(div(1.0, t, loc), scalar.to(t.dtype(), loc), loc);
}

// p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps), bc_i = 1 - beta_i^step, with the bias
// corrections computed from the step tensor by tensor ops (nothing read on the host).
void capturableUpdate(Tensor& p, const Tensor& expAvg, const Tensor& secondMoment,
                      const Tensor& step, const AdamStep& h, const SourceLoc& loc) {
  Tensor bias1 = sub(1.0, pow(h.beta1, step, loc), loc);
  Tensor bias2 = sub(1.0, pow(h.beta2, step, loc), loc);
  Tensor stepSizeNeg = neg(rdiv(h.lr, bias1, loc), loc);
  Tensor bias2Sqrt = sqrt(bias2, loc);
  Tensor denom = div(sqrt(secondMoment, loc), mul(bias2Sqrt, stepSizeNeg, loc), loc);
  denom.add_(rdiv(full({}, h.eps, TensorOptions(kFloat64).device(p.device()), loc), stepSizeNeg, loc),
             1.0, loc);
  p.add_(div(expAvg, denom, loc), 1.0, loc);
}

// PyTorch's default form, which reads the step count as a number: lr / bc1 and
// sqrt(bc2) in double. Here they are 0-d f64 tensors computed from the step state by
// tensor ops, so a trace records them instead of baking in the count of the step it
// recorded; each is rounded to the parameter's dtype where PyTorch passes its double as
// a scalar operand, so the values keep the same bits.
void hostUpdate(Tensor& p, const Tensor& expAvg, const Tensor& secondMoment, const Tensor& step,
                const AdamStep& h, const SourceLoc& loc) {
  const Tensor count = step.to(kFloat64, loc);
  auto biasCorrection = [&](double beta) { return sub(1.0, pow(beta, count, loc), loc); };
  const Tensor stepSizeNeg = neg(div(h.lr, biasCorrection(h.beta1), loc), loc).to(p.dtype(), loc);
  const Tensor bias2Sqrt = sqrt(biasCorrection(h.beta2), loc).to(p.dtype(), loc);
  Tensor denom = div(sqrt(secondMoment, loc), bias2Sqrt, loc);
  denom.add_(h.eps, loc);
  // addcdiv_(m, denom, value=-step_size) computes p + (value * m) / denom.
  p.add_(div(mul(expAvg, stepSizeNeg, loc), denom, loc), 1.0, loc);
}

void adamUpdate(OptimizerParamGroup& group, const AdamStep& h,
                const std::function<OrderedDict<Tensor>&(const Tensor&)>& stateOf,
                const SourceLoc& loc) {
  for (Tensor& p : group.params()) {
    if (!p.grad().defined()) continue;
    Tensor grad = h.maximize ? neg(p.grad(), loc) : p.grad();
    OrderedDict<Tensor>& state = stateOf(p);
    if (state.empty()) {
      // torch.tensor(0.), on the parameter's device so the update reads it without a copy.
      state.insert("step", zeros({}, TensorOptions(kFloat32).device(p.device()), loc), loc);
      state.insert("exp_avg", zeros_like(p, loc), loc);
      state.insert("exp_avg_sq", zeros_like(p, loc), loc);
    }
    if (h.amsgrad && !state.contains("max_exp_avg_sq"))
      state.insert("max_exp_avg_sq", zeros_like(p, loc), loc);
    Tensor step = state.at("step", loc);
    Tensor expAvg = state.at("exp_avg", loc);
    Tensor expAvgSq = state.at("exp_avg_sq", loc);

    step.add_(1.0, loc);
    if (h.decoupled) {
      if (h.weightDecay != 0) p.mul_(sub(1.0, mul(h.lr, h.weightDecay, loc), loc).to(p.dtype(), loc), loc);
    } else if (h.weightDecay != 0) {
      grad = add(grad, mul(p, h.weightDecay, loc), loc);
    }
    expAvg.mul_(h.beta1, loc).add_(grad, 1 - h.beta1, loc);
    // addcmul_(g, g, value=1 - beta2) computes v + (value * g) * g.
    expAvgSq.mul_(h.beta2, loc).add_(mul(mul(grad, 1 - h.beta2, loc), grad, loc), 1.0, loc);

    Tensor secondMoment = expAvgSq;
    if (h.amsgrad) {
      secondMoment = state.at("max_exp_avg_sq", loc);
      secondMoment.copy_(maximum(secondMoment, expAvgSq, loc), loc);
    }
    if (h.capturable) capturableUpdate(p, expAvg, secondMoment, step, h, loc);
    else hostUpdate(p, expAvg, secondMoment, step, h, loc);
  }
}

}  // namespace

Adam::Adam(std::vector<OptimizerParamGroup> groups, AdamOptions defaults, const SourceLoc& loc)
    : Optimizer("Adam", std::move(groups), defaults.clone(), loc) {}

Adam::Adam(std::vector<Tensor> params, AdamOptions defaults, const SourceLoc& loc)
    : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))},
           std::move(defaults), loc) {}

void Adam::update(OptimizerParamGroup& group, const SourceLoc& loc) {
  adamUpdate(group, adamStep<AdamOptions>(group.options(), /*decoupled=*/false),
             [this](const Tensor& p) -> OrderedDict<Tensor>& { return stateOf(p); }, loc);
}

std::vector<std::string> Adam::stateNames(const OptimizerOptions& options) const {
  return adamStateNames(static_cast<const AdamOptions&>(options).amsgrad());
}

AdamW::AdamW(std::vector<OptimizerParamGroup> groups, AdamWOptions defaults, const SourceLoc& loc)
    : Optimizer("AdamW", std::move(groups), defaults.clone(), loc) {}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions defaults, const SourceLoc& loc)
    : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))},
            std::move(defaults), loc) {}

void AdamW::update(OptimizerParamGroup& group, const SourceLoc& loc) {
  adamUpdate(group, adamStep<AdamWOptions>(group.options(), /*decoupled=*/true),
             [this](const Tensor& p) -> OrderedDict<Tensor>& { return stateOf(p); }, loc);
}

std::vector<std::string> AdamW::stateNames(const OptimizerOptions& options) const {
  return adamStateNames(static_cast<const AdamWOptions&>(options).amsgrad());
}

}  // namespace kiln::optim
