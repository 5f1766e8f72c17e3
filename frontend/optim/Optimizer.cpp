// The optimizer base: parameter groups, zero_grad, step, and the flattened state_dict.
#include "kiln/optim/Optimizer.h"

#include <charconv>
#include <set>
#include <typeinfo>
#include <unordered_set>

#include "kiln/core/Autograd.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"

namespace kiln::optim {

// ---- OptimizerOptions -----------------------------------------------------------------

OptimizerOptions::OptimizerOptions(double lr) : lr_(scalar_tensor(lr, kFloat64)) {}

OptimizerOptions::OptimizerOptions(const OptimizerOptions& other)
    : lr_(scalar_tensor(other.get_lr(), kFloat64)) {}

OptimizerOptions& OptimizerOptions::operator=(const OptimizerOptions& other) {
  set_lr(other.get_lr());
  return *this;
}

double OptimizerOptions::get_lr() const { return detail::readElementAsDouble(lr_, 0); }

void OptimizerOptions::set_lr(double lr) {
  // Host code between calls, not part of any trace: traced programs read the tensor.
  DispatchHookGuard untraced(nullptr);
  NoGradGuard noGrad;
  lr_.fill_(lr);
}

void OptimizerOptions::adopt_lr_tensor(const OptimizerOptions& other) {
  const double lr = get_lr();
  lr_ = other.lr_;
  set_lr(lr);
}

void OptimizerOptions::visitLr(OptionsVisitor& visitor) {
  double lr = get_lr();
  visitor.field("lr", lr);
  set_lr(lr);
}

// ---- OptimizerParamGroup --------------------------------------------------------------

OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}

OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params,
                                         std::unique_ptr<OptimizerOptions> options)
    : params_(std::move(params)), options_(std::move(options)) {}

OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& other)
    : params_(other.params_), options_(other.options_ ? other.options_->clone() : nullptr) {}

OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& other) {
  OptimizerParamGroup copy(other);
  return *this = std::move(copy);
}

OptimizerOptions& OptimizerParamGroup::options() {
  return const_cast<OptimizerOptions&>(std::as_const(*this).options());
}

const OptimizerOptions& OptimizerParamGroup::options() const {
  if (!options_)
    throw Error::make(SourceLoc::current(), "optim::OptimizerParamGroup",
                      "the group has no options of its own; it gets the optimizer's "
                      "defaults when added to an optimizer");
  return *options_;
}

// ---- Optimizer ------------------------------------------------------------------------

Optimizer::Optimizer(std::string name, std::vector<OptimizerParamGroup> groups,
                     std::unique_ptr<OptimizerOptions> defaults, const SourceLoc& loc)
    : name_("optim::" + name), defaults_(std::move(defaults)) {
  defaults_->validate(name_, loc);
  for (const OptimizerParamGroup& group : groups) add_param_group(group, loc);
  if (size() == 0) throw Error::make(loc, name_, "got an empty parameter list");
}

void Optimizer::add_param_group(const OptimizerParamGroup& group, const SourceLoc& loc) {
  OptimizerParamGroup added(group.params(),
                            group.has_options() ? group.options().clone() : defaults_->clone());
  const size_t index = groups_.size();
  // update() casts a group's options to the optimizer's kind.
  if (typeid(added.options()) != typeid(*defaults_))
    throw Error::make(loc, name_, "parameter group ", index, " has options of another kind than ",
                      name_, "'s defaults");
  added.options().validate(name_, loc);

  std::unordered_map<const TensorImpl*, size_t> groupOf;
  for (size_t g = 0; g < groups_.size(); ++g)
    for (const Tensor& p : groups_[g].params()) groupOf.emplace(p.impl(), g);
  for (size_t i = 0; i < added.params().size(); ++i) {
    const Tensor& p = added.params()[i];
    if (!p.defined())
      throw Error::make(loc, name_, "parameter ", i, " of group ", index, " is undefined");
    if (!p.is_leaf())
      throw Error::make(loc, name_, "parameter ", i, " of group ", index,
                        " is not a leaf tensor (an op computed it); optimizers update the "
                        "leaves a model owns");
    if (auto [it, inserted] = groupOf.emplace(p.impl(), index); !inserted)
      throw Error::make(loc, name_, "parameter ", i, " of group ", index,
                        " is already optimized in group ", it->second);
  }
  groups_.push_back(std::move(added));
}

void Optimizer::zero_grad(bool set_to_none, const SourceLoc& loc) {
  NoGradGuard noGrad;
  for (OptimizerParamGroup& group : groups_) {
    for (Tensor& p : group.params()) {
      Tensor grad = p.grad();
      if (!grad.defined() || set_to_none) {
        if (grad.defined()) p.set_grad(Tensor());
        // A trace learns that the step does not read an earlier gradient of p.
        if (DispatchHook* hook = currentDispatchHook()) hook->onGradCleared(p);
        continue;
      }
      // A gradient with history (backward with a graph) must not drag it along.
      if (!grad.is_leaf()) {
        grad = grad.detach();
        p.set_grad(grad);
      } else if (grad.requires_grad()) {
        grad.requires_grad_(false, loc);
      }
      grad.zero_(loc);
    }
  }
}

Tensor Optimizer::step(LossClosure closure, const SourceLoc& loc) {
  Tensor loss;
  if (closure) loss = closure();
  NoGradGuard noGrad;
  for (OptimizerParamGroup& group : groups_) update(group, loc);
  return loss;
}

size_t Optimizer::size() const {
  size_t n = 0;
  for (const OptimizerParamGroup& group : groups_) n += group.params().size();
  return n;
}

const OrderedDict<Tensor>* Optimizer::state(const Tensor& param) const {
  auto it = state_.find(param.impl());
  return it == state_.end() ? nullptr : &it->second;
}

OrderedDict<Tensor>& Optimizer::stateOf(const Tensor& param) { return state_[param.impl()]; }

// ---- state_dict -----------------------------------------------------------------------

namespace {

std::string groupPrefix(size_t group) { return "param_groups." + std::to_string(group) + "."; }
std::string stateKey(int64_t param, const std::string& name) {
  return "state." + std::to_string(param) + "." + name;
}

// Writes hyperparameters as tensors: 0-d float64 or bool, betas a float64 pair.
class HyperparameterWriter : public OptionsVisitor {
 public:
  HyperparameterWriter(OrderedDict<Tensor>& out, std::string prefix)
      : out_(out), prefix_(std::move(prefix)) {}

  void field(std::string_view name, double& value) override {
    put(name, scalar_tensor(value, kFloat64));
  }
  void field(std::string_view name, bool& value) override {
    put(name, scalar_tensor(value ? 1.0 : 0.0, kBool));
  }
  void field(std::string_view name, std::tuple<double, double>& value) override {
    put(name, tensor(std::vector<double>{std::get<0>(value), std::get<1>(value)}));
  }

 private:
  void put(std::string_view name, Tensor value) { out_.insert(prefix_ + std::string(name), value); }

  OrderedDict<Tensor>& out_;
  std::string prefix_;
};

// Reads the hyperparameters HyperparameterWriter wrote, checking their dtypes and shapes.
class HyperparameterReader : public OptionsVisitor {
 public:
  using Getter = std::function<const Tensor&(const std::string&)>;
  HyperparameterReader(Getter get, std::string prefix, const std::string& op, const SourceLoc& loc)
      : get_(std::move(get)), prefix_(std::move(prefix)), op_(op), loc_(loc) {}

  void field(std::string_view name, double& value) override {
    value = expect(name, {}, false, "a 0-d floating-point tensor").item<double>();
  }
  void field(std::string_view name, bool& value) override {
    value = expect(name, {}, true, "a 0-d bool tensor").item<bool>();
  }
  void field(std::string_view name, std::tuple<double, double>& value) override {
    Tensor pair = expect(name, {2}, false, "a floating-point tensor of shape [2]");
    const Tensor host = pair.cpu().contiguous();
    value = {detail::readElementAsDouble(host, 0), detail::readElementAsDouble(host, 1)};
  }

 private:
  const Tensor& expect(std::string_view name, const Shape& shape, bool isBool,
                       const char* what) const {
    std::string key = prefix_ + std::string(name);
    const Tensor& t = get_(key);
    bool ok = t.sizes() == shape && (isBool ? t.dtype() == kBool : t.is_floating_point());
    if (!ok)
      throw Error::make(loc_, op_, "'", key, "' must be ", what, ", got ", t.dtype(), " ",
                        t.sizes());
    return t;
  }

  Getter get_;
  std::string prefix_;
  const std::string& op_;
  const SourceLoc& loc_;
};

// Writes "name=value;" for each hyperparameter but the learning rate.
class BakedHyperparameters : public OptionsVisitor {
 public:
  void field(std::string_view name, double& value) override { put(name, number(value)); }
  void field(std::string_view name, bool& value) override { put(name, value ? "true" : "false"); }
  void field(std::string_view name, std::tuple<double, double>& value) override {
    put(name, number(std::get<0>(value)) + "," + number(std::get<1>(value)));
  }
  std::string text;

 private:
  static std::string number(double value) {
    char digits[32];
    return std::string(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
  }
  void put(std::string_view name, const std::string& value) {
    if (name != "lr") text += std::string(name) + "=" + value + ";";
  }
};

std::string quotedList(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "'" : ", '") + name + "'";
  return out;
}

}  // namespace

std::string baked_hyperparameters(const OptimizerOptions& options) {
  BakedHyperparameters writer;
  options.clone()->visit(writer);  // visit takes its fields by reference
  return writer.text;
}

OrderedDict<Tensor> Optimizer::state_dict() const {
  OrderedDict<Tensor> out;
  int64_t index = 0;
  for (const OptimizerParamGroup& group : groups_) {
    for (const Tensor& p : group.params()) {
      if (const OrderedDict<Tensor>* s = state(p))
        for (const auto& [name, value] : *s) out.insert(stateKey(index, name), value);
      ++index;
    }
  }
  index = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    HyperparameterWriter writer(out, groupPrefix(g));
    groups_[g].options().clone()->visit(writer);
    std::vector<int64_t> ids;
    for (size_t i = 0; i < groups_[g].params().size(); ++i) ids.push_back(index++);
    out.insert(groupPrefix(g) + "params", tensor(ids));
  }
  return out;
}

void Optimizer::load_state_dict(const OrderedDict<Tensor>& dict, const SourceLoc& loc) {
  const std::string op = name_ + "::load_state_dict";
  std::set<std::string> used;
  auto get = [&](const std::string& key) -> const Tensor& {
    const Tensor* t = dict.find(key);
    if (!t) throw Error::make(loc, op, "missing key '", key, "'");
    if (!t->defined()) throw Error::make(loc, op, "'", key, "' is undefined");
    used.insert(key);
    return *t;
  };

  size_t savedGroups = 0;
  while (dict.contains(groupPrefix(savedGroups) + "params")) ++savedGroups;
  if (savedGroups != groups_.size())
    throw Error::make(loc, op, "the state dict has ", savedGroups,
                      " parameter groups but the optimizer has ", groups_.size());

  // Hyperparameters per group, and which current parameter each saved index stands for
  // (PyTorch pairs them in order).
  NoGradGuard noGrad;
  std::vector<std::unique_ptr<OptimizerOptions>> options;
  std::vector<int64_t> savedIndex;  // per current parameter, in order
  std::unordered_set<int64_t> seenIndices;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const std::string idsKey = groupPrefix(g) + "params";
    const Tensor& ids = get(idsKey);
    if (ids.dtype() != kInt64 || ids.dim() != 1)
      throw Error::make(loc, op, "'", idsKey, "' must be a 1-d int64 tensor, got ", ids.dtype(),
                        " ", ids.sizes());
    if (size_t(ids.numel()) != groups_[g].params().size())
      throw Error::make(loc, op, "parameter group ", g, " of the state dict has ", ids.numel(),
                        " parameters but the optimizer's has ", groups_[g].params().size());
    Tensor contiguousIds = ids.cpu().contiguous();
    for (int64_t k = 0; k < ids.numel(); ++k) {
      int64_t id = contiguousIds.data_ptr<int64_t>()[k];
      if (!seenIndices.insert(id).second)
        throw Error::make(loc, op, "parameter index ", id, " appears twice in param_groups");
      savedIndex.push_back(id);
    }
    options.push_back(groups_[g].options().clone());
    HyperparameterReader reader(get, groupPrefix(g), op, loc);
    options.back()->visit(reader);
    options.back()->validate(op, loc);
  }

  // State: for each parameter, all of the names its group's options make, or none.
  std::unordered_map<const TensorImpl*, OrderedDict<Tensor>> state;
  size_t current = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const std::vector<std::string> names = stateNames(*options[g]);
    for (const Tensor& p : groups_[g].params()) {
      const int64_t id = savedIndex[current++];
      OrderedDict<Tensor> entries;
      std::vector<std::string> present;
      for (const std::string& name : names) {
        const std::string key = stateKey(id, name);
        if (!dict.contains(key)) continue;
        const Tensor& value = get(key);
        const bool isStep = name == "step";
        if (!isStep && value.sizes() != p.sizes())
          throw Error::make(loc, op, "'", key, "' has shape ", value.sizes(), " but parameter ",
                            current - 1, " has shape ", p.sizes());
        if (isStep && value.numel() != 1)
          throw Error::make(loc, op, "'", key, "' must have one element, got shape ",
                            value.sizes());
        // PyTorch casts floating state to the parameter's dtype, all but the step count;
        // all of it goes to the parameter's device (a CPU state dict loaded for CUDA
        // parameters), where the updates read it.
        Tensor copy = !isStep && p.is_floating_point() ? value.to(p.dtype()) : value;
        copy = copy.to(p.device());
        entries.insert(name, copy.is_same(value) ? value.clone() : copy);
        present.push_back(name);
      }
      if (!present.empty() && present.size() != names.size())
        throw Error::make(loc, op, "the state of parameter ", current - 1, " has ",
                          quotedList(present), " but ", name_, " keeps ", quotedList(names));
      if (!entries.empty()) state.emplace(p.impl(), std::move(entries));
    }
  }

  std::vector<std::string> unexpected;
  for (const auto& [key, value] : dict)
    if (!used.count(key)) unexpected.push_back(key);
  if (!unexpected.empty())
    throw Error::make(loc, op, "unexpected keys ", quotedList(unexpected));

  for (size_t g = 0; g < groups_.size(); ++g) {
    options[g]->adopt_lr_tensor(groups_[g].options());
    groups_[g].set_options(std::move(options[g]));
  }
  state_ = std::move(state);
}

}  // namespace kiln::optim
