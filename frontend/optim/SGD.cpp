// SGD: PyTorch 1.13's _single_tensor_sgd written with kiln's in-place tensor ops.
#include "kiln/optim/SGD.h"

#include "kiln/core/Ops.h"

namespace kiln::optim {

SGDOptions::SGDOptions(double lr) : OptimizerOptions(lr) {}

std::unique_ptr<OptimizerOptions> SGDOptions::clone() const {
  return std::make_unique<SGDOptions>(*this);
}

void SGDOptions::visit(OptionsVisitor& visitor) {
  visitLr(visitor);
  visitor.field("momentum", momentum_);
  visitor.field("dampening", dampening_);
  visitor.field("weight_decay", weight_decay_);
  visitor.field("nesterov", nesterov_);
  visitor.field("maximize", maximize_);
}

void SGDOptions::validate(std::string_view op, const SourceLoc& loc) const {
  // !(x >= 0) also rejects NaN.
  if (!(lr() >= 0)) throw Error::make(loc, op, "invalid learning rate ", lr(), " (must be >= 0)");
  if (!(momentum_ >= 0)) throw Error::make(loc, op, "invalid momentum ", momentum_, " (must be >= 0)");
  if (!(weight_decay_ >= 0))
    throw Error::make(loc, op, "invalid weight_decay ", weight_decay_, " (must be >= 0)");
  if (nesterov_ && (momentum_ <= 0 || dampening_ != 0))
    throw Error::make(loc, op, "Nesterov momentum requires a momentum and zero dampening (got "
                      "momentum ", momentum_, ", dampening ", dampening_, ")");
}

SGD::SGD(std::vector<OptimizerParamGroup> groups, SGDOptions defaults, const SourceLoc& loc)
    : Optimizer("SGD", std::move(groups), defaults.clone(), loc) {}

SGD::SGD(std::vector<Tensor> params, SGDOptions defaults, const SourceLoc& loc)
    : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))},
          std::move(defaults), loc) {}

std::vector<std::string> SGD::stateNames(const OptimizerOptions& options) const {
  if (static_cast<const SGDOptions&>(options).momentum() == 0) return {};
  return {"momentum_buffer"};
}

void SGD::update(OptimizerParamGroup& group, const SourceLoc& loc) {
  const auto& o = static_cast<const SGDOptions&>(group.options());
  const Tensor negLr = neg(o.lr_tensor(), loc);
  for (Tensor& p : group.params()) {
    if (!p.grad().defined()) continue;
    Tensor d_p = o.maximize() ? neg(p.grad(), loc) : p.grad();
    if (o.weight_decay() != 0) d_p = add(d_p, mul(p, o.weight_decay(), loc), loc);
    if (o.momentum() != 0) {
      OrderedDict<Tensor>& state = stateOf(p);
      Tensor* buf = state.find("momentum_buffer");
      if (buf) buf->mul_(o.momentum(), loc).add_(d_p, 1 - o.dampening(), loc);
      else buf = &state.insert("momentum_buffer", d_p.clone(loc).detach(), loc);
      d_p = o.nesterov() ? add(d_p, mul(*buf, o.momentum(), loc), loc) : *buf;
    }
    // p.add_(d_p, -lr) with the rate read from its tensor: the same product, rounded as
    // the scalar alpha would be.
    p.add_(mul(d_p, negLr.to(d_p.dtype(), loc), loc), 1.0, loc);
  }
}

}  // namespace kiln::optim
