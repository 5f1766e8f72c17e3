#include "kiln/nn/Module.h"

#include <cxxabi.h>

#include <cstdlib>
#include <sstream>
#include <typeinfo>
#include <unordered_set>

#include "kiln/core/Autograd.h"
#include "kiln/core/Cuda.h"
#include "kiln/core/Ops.h"

namespace kiln::nn {

namespace detail {

std::string unqualifiedTypeName(const std::type_info& type) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string full = status == 0 && demangled ? demangled : type.name();
  std::free(demangled);
  size_t scopeEnd = full.find('<');
  size_t lastColon = full.rfind("::", scopeEnd);
  return lastColon == std::string::npos ? full : full.substr(lastColon + 2);
}

}  // namespace detail

namespace {

// "kiln::vision::InvertedResidualImpl" -> "InvertedResidual".
std::string displayName(const std::type_info& type) {
  std::string name = detail::unqualifiedTypeName(type);
  const std::string impl = "Impl";
  if (name.size() > impl.size() && name.compare(name.size() - impl.size(), impl.size(), impl) == 0)
    name.resize(name.size() - impl.size());
  return name;
}

std::string join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

// Replaces what `target` holds by `dtype` values: the TensorImpl keeps its identity, so
// every handle sharing it sees the new storage (PyTorch's param.data = ...).
void convertInPlace(const Tensor& target, DType dtype, const SourceLoc& loc) {
  Tensor converted = target.detach().to(dtype, loc).contiguous(loc);
  TensorImpl& impl = *target.impl();
  const TensorImpl& from = *converted.impl();
  impl.storage = from.storage;
  impl.shape = from.shape;
  impl.strides = from.strides;
  impl.offset = from.offset;
  impl.dtype = dtype;
  ++impl.version;
  if (impl.grad.defined()) impl.grad = impl.grad.detach().to(dtype, loc).detach();
}

}  // namespace

Module::Module(std::string name) : name_(std::move(name)) {}
Module::Module() = default;

const std::string& Module::name() const {
  if (!name_) name_ = displayName(typeid(*this));
  return *name_;
}

// ---- the tree ----------------------------------------------------------------------------

template <class F>
void Module::visit(const std::string& prefix, F&& fn) const {
  fn(prefix, *this);
  for (const auto& [childName, child] : children_) child->visit(join(prefix, childName), fn);
}

namespace {
// Defined tensors of `slots` (a module's own parameters or buffers), each once.
void collectUnique(const OrderedDict<Tensor>& slots, const std::string& prefix,
                   std::unordered_set<const TensorImpl*>& seen, OrderedDict<Tensor>& out) {
  for (const auto& [name, tensor] : slots)
    if (tensor.defined() && seen.insert(tensor.impl()).second) out.insert(join(prefix, name), tensor);
}
}  // namespace

OrderedDict<Tensor> Module::named_parameters(bool recurse) const {
  OrderedDict<Tensor> result;
  std::unordered_set<const TensorImpl*> seen;
  auto own = [&](const std::string& prefix, const Module& m) {
    collectUnique(m.parameters_, prefix, seen, result);
  };
  if (recurse) visit("", own);
  else own("", *this);
  return result;
}

std::vector<Tensor> Module::parameters(bool recurse) const { return named_parameters(recurse).values(); }

OrderedDict<Tensor> Module::named_buffers(bool recurse) const {
  OrderedDict<Tensor> result;
  std::unordered_set<const TensorImpl*> seen;
  auto own = [&](const std::string& prefix, const Module& m) {
    collectUnique(m.buffers_, prefix, seen, result);
  };
  if (recurse) visit("", own);
  else own("", *this);
  return result;
}

std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

std::vector<std::shared_ptr<Module>> Module::children() const { return children_.values(); }

OrderedDict<std::shared_ptr<Module>> Module::named_children() const { return children_; }

OrderedDict<std::shared_ptr<Module>> Module::named_modules(const std::string& prefix,
                                                           bool include_self) const {
  OrderedDict<std::shared_ptr<Module>> result;
  if (include_self) {
    std::shared_ptr<Module> self;
    try {
      self = std::const_pointer_cast<Module>(shared_from_this());
    } catch (const std::bad_weak_ptr&) {
      throw Error::make(SourceLoc::current(), "named_modules",
                        "a module listing itself must be owned by a std::shared_ptr (a holder "
                        "such as nn::Linear, or std::make_shared); pass include_self = false");
    }
    result.insert(prefix, self);
  }
  std::unordered_set<const Module*> seen{this};
  for (const auto& [childName, child] : children_)
    child->visit(join(prefix, childName), [&](const std::string& name, const Module& m) {
      if (seen.insert(&m).second)
        result.insert(name, std::const_pointer_cast<Module>(m.shared_from_this()));
    });
  return result;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) const {
  return named_modules("", include_self).values();
}

void Module::apply(const std::function<void(Module&)>& fn) {
  visit("", [&](const std::string&, const Module& m) { fn(const_cast<Module&>(m)); });
}

void Module::apply(const std::function<void(const std::string&, Module&)>& fn,
                   const std::string& prefix) {
  visit(prefix, [&](const std::string& name, const Module& m) { fn(name, const_cast<Module&>(m)); });
}

// ---- modes, conversion, gradients ---------------------------------------------------------

void Module::train(bool on) {
  is_training_ = on;
  for (const auto& [name, child] : children_) child->train(on);
}

void Module::to(DType dtype, const SourceLoc& loc) {
  if (!isFloatingPoint(dtype))
    throw TypeError::make(loc, "Module::to", "modules convert to floating-point dtypes only, got ",
                          dtype);
  NoGradGuard noGrad;
  std::unordered_set<const TensorImpl*> done;
  auto convertAll = [&](const OrderedDict<Tensor>& tensors) {
    for (const auto& [name, tensor] : tensors)
      if (tensor.is_floating_point() && tensor.dtype() != dtype && done.insert(tensor.impl()).second)
        convertInPlace(tensor, dtype, loc);
  };
  convertAll(named_parameters());
  convertAll(named_buffers());
}

void Module::to(Device device, const SourceLoc& loc) {
  if (device.isCUDA()) {
    // Checked before anything moves, so a failed move leaves the whole module where it was.
    if (!cuda::is_available())
      throw Error::make(loc, "Module::to", "no CUDA device: ", cuda::unavailable_reason());
    const int count = cuda::device_count();
    if (device.index < 0 || device.index >= count)
      throw Error::make(loc, "Module::to", "no CUDA device ", device, " (this machine has ", count,
                        count == 1 ? " device)" : " devices)");
  }
  NoGradGuard noGrad;
  // Every copy is made first (a device out of memory throws here, before any tensor of the
  // module changed), then each TensorImpl takes over its copy's storage: the handles an
  // optimizer or a trace holds keep pointing at the moved parameters.
  struct Move {
    Tensor target, moved, grad;
  };
  std::vector<Move> moves;
  std::unordered_set<const TensorImpl*> seen;
  auto plan = [&](const OrderedDict<Tensor>& tensors) {
    for (const auto& [name, tensor] : tensors) {
      if (!seen.insert(tensor.impl()).second) continue;
      const bool here = tensor.device() == device;
      Tensor grad = tensor.grad();
      const bool gradHere = !grad.defined() || grad.device() == device;
      if (here && gradHere) continue;
      moves.push_back({tensor, here ? Tensor() : tensor.detach().to(device, loc).contiguous(loc),
                       gradHere ? grad : grad.detach().to(device, loc)});
    }
  };
  plan(named_parameters());
  plan(named_buffers());
  for (Move& m : moves) {
    TensorImpl& impl = *m.target.impl();
    if (m.moved.defined()) {
      const TensorImpl& from = *m.moved.impl();
      impl.storage = from.storage;
      impl.shape = from.shape;
      impl.strides = from.strides;
      impl.offset = from.offset;
      impl.device = device;
      ++impl.version;
    }
    impl.grad = m.grad;
  }
}

void Module::zero_grad(bool set_to_none, const SourceLoc& loc) {
  NoGradGuard noGrad;
  for (Tensor p : parameters()) {
    if (!p.grad().defined()) continue;
    if (set_to_none) p.set_grad(Tensor());
    else p.grad().zero_(loc);
  }
}

// ---- state dict ----------------------------------------------------------------------------

namespace {
// Parameters then buffers of each module, then its children: live handles.
void collectState(const Module& m, const std::string& prefix, OrderedDict<Tensor>& out) {
  for (const auto& [name, t] : m.named_parameters(false)) out.insert(join(prefix, name), t);
  for (const auto& [name, t] : m.named_buffers(false)) out.insert(join(prefix, name), t);
  for (const auto& [name, child] : m.named_children()) collectState(*child, join(prefix, name), out);
}

OrderedDict<Tensor> stateTensors(const Module& module) {
  OrderedDict<Tensor> result;
  collectState(module, "", result);
  return result;
}

void quotedList(std::ostream& os, const std::vector<std::string>& keys) {
  for (size_t i = 0; i < keys.size(); ++i) os << (i ? ", " : "") << '"' << keys[i] << '"';
}
}  // namespace

OrderedDict<Tensor> Module::state_dict() const {
  OrderedDict<Tensor> result;
  for (const auto& [name, t] : stateTensors(*this)) result.insert(name, t.detach());
  return result;
}

IncompatibleKeys Module::load_state_dict(const OrderedDict<Tensor>& state, bool strict,
                                         const SourceLoc& loc) {
  OrderedDict<Tensor> own = stateTensors(*this);
  IncompatibleKeys result;
  std::vector<std::string> mismatches;
  for (const auto& [name, target] : own) {
    const Tensor* source = state.find(name);
    if (!source || !source->defined()) result.missing_keys.push_back(name);
    else if (source->sizes() != target.sizes())
      mismatches.push_back("size mismatch for " + name + ": " + formatShape(source->sizes()) +
                           " in the state dict, " + formatShape(target.sizes()) + " in the module");
  }
  for (const auto& [name, source] : state)
    if (!own.contains(name)) result.unexpected_keys.push_back(name);

  const bool keyErrors = strict && (!result.missing_keys.empty() || !result.unexpected_keys.empty());
  if (keyErrors || !mismatches.empty()) {
    std::ostringstream os;
    os << "error(s) in loading the state dict of " << name() << ":";
    if (strict && !result.missing_keys.empty()) {
      os << "\n  missing keys: ";
      quotedList(os, result.missing_keys);
    }
    if (strict && !result.unexpected_keys.empty()) {
      os << "\n  unexpected keys: ";
      quotedList(os, result.unexpected_keys);
    }
    for (const std::string& m : mismatches) os << "\n  " << m;
    throw Error::make(loc, "load_state_dict", os.str());
  }

  NoGradGuard noGrad;
  for (const auto& [name, target] : own)
    if (const Tensor* source = state.find(name); source && source->defined())
      Tensor(target).copy_(*source, loc);
  return result;
}

// ---- registration ----------------------------------------------------------------------------

void Module::checkNewName(const std::string& name, const char* what, const SourceLoc& loc) const {
  if (name.empty()) throw Error::make(loc, what, "the name must not be empty");
  if (name.find('.') != std::string::npos)
    throw Error::make(loc, what, "the name must not contain a dot, got '", name, "'");
  const char* existing = parameters_.contains(name) ? "parameter"
                         : buffers_.contains(name)  ? "buffer"
                         : children_.contains(name) ? "submodule"
                                                    : nullptr;
  if (existing)
    throw Error::make(loc, what, displayName(typeid(*this)), " already has a ",
                      existing, " named '", name, "'");
}

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad,
                                   const SourceLoc& loc) {
  checkNewName(name, "register_parameter", loc);
  if (tensor.defined()) {
    if (!tensor.is_leaf())
      throw Error::make(loc, "register_parameter", "parameter '", name, "' must be a leaf tensor "
                        "(it has autograd history); register tensor.detach()");
    tensor.requires_grad_(requires_grad, loc);
  }
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor& Module::register_buffer(std::string name, Tensor tensor, const SourceLoc& loc) {
  checkNewName(name, "register_buffer", loc);
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::addChild(std::string name, std::shared_ptr<Module> module, const SourceLoc& loc) {
  checkNewName(name, "register_module", loc);
  if (!module) throw Error::make(loc, "register_module", "submodule '", name, "' is null");
  children_.insert(std::move(name), std::move(module));
}

void Module::replaceChild(const std::string& name, std::shared_ptr<Module> module,
                          const SourceLoc& loc) {
  if (!children_.contains(name))
    throw Error::make(loc, "replace_module", "no submodule named '", name, "'");
  if (!module) throw Error::make(loc, "replace_module", "submodule '", name, "' is null");
  children_.insert_or_assign(name, std::move(module));
}

// ---- printing ---------------------------------------------------------------------------------

void Module::pretty_print(std::ostream& os) const {
  os << name();
  if (children_.empty()) os << "()";
}

void Module::pretty_print_recursive(std::ostream& os, const std::string& indentation) const {
  pretty_print(os);
  if (children_.empty()) return;
  os << "(\n";
  const std::string inner = indentation + "  ";
  for (const auto& [name, child] : children_) {
    os << inner << "(" << name << "): ";
    child->pretty_print_recursive(os, inner);
    os << "\n";
  }
  os << indentation << ")";
}

std::ostream& operator<<(std::ostream& os, const Module& module) {
  module.pretty_print_recursive(os, "");
  return os;
}

// ---- observing forward calls -------------------------------------------------------------

namespace {
thread_local ForwardObserver* tForwardObserver = nullptr;
// The module whose forward call is being reported innermost on this thread.
thread_local const Module* tReportedModule = nullptr;
}  // namespace

ForwardObserverGuard::ForwardObserverGuard(ForwardObserver* observer) : previous_(tForwardObserver) {
  tForwardObserver = observer;
}
ForwardObserverGuard::~ForwardObserverGuard() { tForwardObserver = previous_; }
ForwardObserver* currentForwardObserver() { return tForwardObserver; }

namespace detail {

ForwardScope::ForwardScope(const Module& module, std::span<const Tensor> inputs)
    : module_(module), outer_(tReportedModule) {
  if (!tForwardObserver || tReportedModule == &module) return;
  tForwardObserver->onForwardBegin(module, inputs);
  observer_ = tForwardObserver;  // only now: a throwing observer leaves nothing to undo
  tReportedModule = &module;
}

ForwardScope::~ForwardScope() {
  if (observer_) tReportedModule = outer_;
}

void ForwardScope::outputs(std::span<const Tensor> outputs) {
  if (observer_) observer_->onForwardEnd(module_, outputs);
}

}  // namespace detail

}  // namespace kiln::nn
