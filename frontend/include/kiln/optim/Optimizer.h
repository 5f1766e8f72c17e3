// The optimizer base: options per parameter group, zero_grad/step, per-parameter state and
// its state_dict, as torch::optim::Optimizer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "kiln/core/OrderedDict.h"
#include "kiln/core/Tensor.h"

namespace kiln::optim {

// Declares a hyperparameter as LibTorch's TORCH_ARG: `options.momentum(0.9)` sets it and
// returns the options for chaining, `options.momentum()` reads it. The class names itself
// `Self`; a default value may follow: `KILN_OPTIM_ARG(double, momentum) = 0;`.
#define KILN_OPTIM_ARG(Type, name)           \
 public:                                     \
  Self& name(Type value) {                   \
    name##_ = value;                         \
    return static_cast<Self&>(*this);        \
  }                                          \
  Type name() const { return name##_; }      \
                                             \
 private:                                    \
  Type name##_

// Receives each hyperparameter of an options object by its PyTorch param_groups name, so
// state_dict and load_state_dict need no per-optimizer code.
class OptionsVisitor {
 public:
  virtual ~OptionsVisitor() = default;
  virtual void field(std::string_view name, double& value) = 0;
  virtual void field(std::string_view name, bool& value) = 0;
  virtual void field(std::string_view name, std::tuple<double, double>& value) = 0;
};

// The learning rate of an options class (`Self`), kept by OptimizerOptions:
// `options.lr(0.01)` sets it and returns the options, `options.lr()` reads it.
#define KILN_OPTIM_LR()                       \
 public:                                      \
  Self& lr(double value) {                    \
    set_lr(value);                            \
    return static_cast<Self&>(*this);         \
  }                                           \
  double lr() const { return get_lr(); }

// The hyperparameters of one parameter group (SGDOptions, AdamOptions, ...).
class OptimizerOptions {
 public:
  explicit OptimizerOptions(double lr);
  // A copy has a learning-rate tensor of its own, holding the same rate.
  OptimizerOptions(const OptimizerOptions& other);
  OptimizerOptions& operator=(const OptimizerOptions& other);
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  // The learning rate, for schedulers that work with any optimizer.
  double get_lr() const;
  void set_lr(double lr);
  // The learning rate as the 0-d float64 tensor updates compute with. A traced step
  // reads it as state, so a rate set between calls (a scheduler's step) reaches the
  // compiled program without a retrace; set_lr writes into this tensor, outside any trace.
  const Tensor& lr_tensor() const { return lr_; }
  // Takes over `other`'s learning-rate tensor with this rate written into it, so a traced
  // step bound to that tensor reads the new options' rate (load_state_dict).
  void adopt_lr_tensor(const OptimizerOptions& other);
  // Calls visitor.field(name, value) for every hyperparameter, lr first.
  virtual void visit(OptionsVisitor& visitor) = 0;
  // kiln::Error naming `op` for a value PyTorch's constructor rejects (lr < 0, ...).
  virtual void validate(std::string_view op, const SourceLoc& loc) const = 0;

 protected:
  // visitor.field("lr", rate), through a double.
  void visitLr(OptionsVisitor& visitor);

 private:
  Tensor lr_;
};

// Every hyperparameter but the learning rate, "betas=0.9,0.999;eps=1e-08;...": the numbers
// a traced step bakes in, which a trace of a named optimizer therefore keys on.
std::string baked_hyperparameters(const OptimizerOptions& options);

// Parameters that share options. Without options of its own a group takes a copy of the
// optimizer's defaults when it is added.
class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params);  // NOLINT: implicit as in LibTorch
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options);
  OptimizerParamGroup(const OptimizerParamGroup& other);
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other);
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;

  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }
  bool has_options() const { return options_ != nullptr; }
  // The group's options; cast to the optimizer's kind: static_cast<SGDOptions&>(...).
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

class Optimizer {
 public:
  using LossClosure = std::function<Tensor()>;

  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  virtual ~Optimizer() = default;

  // Adds a group; Error for an undefined or non-leaf parameter, one already optimized, or
  // invalid options.
  void add_param_group(const OptimizerParamGroup& group, const SourceLoc& loc = SourceLoc::current());

  // Clears every parameter's .grad: zeroed in place and detached (LibTorch 1.13's default),
  // or undefined when set_to_none (PyTorch 2's default, so the next backward assigns a
  // fresh tensor; what traced steps should use).
  void zero_grad(bool set_to_none = false, const SourceLoc& loc = SourceLoc::current());

  // One update of every parameter that has a gradient, in place under NoGradGuard with
  // ordinary tensor ops (so a trace records them). With a closure, it is called first to
  // recompute the loss, which step returns.
  Tensor step(LossClosure closure = nullptr, const SourceLoc& loc = SourceLoc::current());

  std::vector<OptimizerParamGroup>& param_groups() { return groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return groups_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  // The number of parameters over all groups.
  size_t size() const;

  // A parameter's state tensors by name ("momentum_buffer", "exp_avg", ...), made on the
  // first step that updates it; null before that or for a tensor not optimized here.
  const OrderedDict<Tensor>* state(const Tensor& param) const;

  // PyTorch's {state, param_groups} flattened into one dict of tensors, so it can be saved
  // with io::save: "state.<i>.<name>" (i counts parameters over all groups in order; the
  // live state tensors, not copies), "param_groups.<g>.params" (int64 indices) and
  // "param_groups.<g>.<hyperparameter>" (0-d float64 or bool; betas a float64 pair).
  OrderedDict<Tensor> state_dict() const;
  // Restores hyperparameters and copies of the state from a state_dict() of an optimizer
  // of the same kind whose groups have as many parameters. Everything is checked before
  // anything changes; Error naming the key and what is wrong otherwise.
  void load_state_dict(const OrderedDict<Tensor>& state_dict,
                       const SourceLoc& loc = SourceLoc::current());

 protected:
  // `name` ("SGD") prefixes error messages: kiln::optim::SGD: ...
  Optimizer(std::string name, std::vector<OptimizerParamGroup> groups,
            std::unique_ptr<OptimizerOptions> defaults, const SourceLoc& loc);

  // Updates the parameters of one group that have a gradient. Runs under NoGradGuard.
  virtual void update(OptimizerParamGroup& group, const SourceLoc& loc) = 0;
  // The state names a step makes for a parameter of a group with these options, in order.
  virtual std::vector<std::string> stateNames(const OptimizerOptions& options) const = 0;

  // The parameter's state, empty until the optimizer fills it.
  OrderedDict<Tensor>& stateOf(const Tensor& param);
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::unique_ptr<OptimizerOptions> defaults_;
  std::vector<OptimizerParamGroup> groups_;
  std::unordered_map<const TensorImpl*, OrderedDict<Tensor>> state_;
};

}  // namespace kiln::optim
