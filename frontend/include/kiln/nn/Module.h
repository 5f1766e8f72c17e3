// nn::Module: the base of every layer and model, as torch::nn::Module. A module owns named
// parameters, buffers and child modules; everything that walks a model (parameters(),
// state_dict(), train(), to(), printing) walks that tree.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <typeinfo>
#include <type_traits>
#include <vector>

#include "kiln/core/OrderedDict.h"
#include "kiln/core/Tensor.h"

namespace kiln::nn {

template <class Contained>
class ModuleHolder;

// What load_state_dict(strict = false) could not match, as PyTorch's _IncompatibleKeys.
struct IncompatibleKeys {
  std::vector<std::string> missing_keys;     // in the module, not in the state dict
  std::vector<std::string> unexpected_keys;  // in the state dict, not in the module
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  // `name` is what printing shows; by default the class's name without namespaces and
  // without a trailing "Impl" (LinearImpl prints as Linear, as PyTorch's class name).
  explicit Module(std::string name);
  Module();
  virtual ~Module() = default;

  Module(const Module&) = default;
  Module& operator=(const Module&) = default;
  Module(Module&&) = default;
  Module& operator=(Module&&) = default;

  const std::string& name() const;

  // ---- the tree ----------------------------------------------------------------------
  // Parameters of this module and (recurse) its descendants, depth first, each module's
  // own before its children's; named with dotted paths ("features.0.0.weight").
  // Undefined tensors (a slot registered empty, as a disabled bias) are left out, and a
  // tensor reached twice (a shared module) is listed once, under its first name, so an
  // optimizer never updates it twice (PyTorch's remove_duplicate).
  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<Tensor> named_buffers(bool recurse = true) const;
  // Direct children in registration order.
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::shared_ptr<Module>> named_children() const;
  // Every module of the tree in pre-order, each once; this one is named `prefix` ("" by
  // default).
  // Including this one needs it to be owned by a std::shared_ptr (a holder, make_shared).
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true) const;
  OrderedDict<std::shared_ptr<Module>> named_modules(const std::string& prefix = "",
                                                     bool include_self = true) const;
  // Calls `fn` on every module of the tree in pre-order, with its dotted name.
  void apply(const std::function<void(Module&)>& fn);
  void apply(const std::function<void(const std::string&, Module&)>& fn,
             const std::string& prefix = "");

  // ---- modes -------------------------------------------------------------------------
  // Sets training mode here and in every descendant (Dropout and BatchNorm read it).
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return is_training_; }

  // ---- conversion and gradients ----------------------------------------------------
  // Converts every floating-point parameter and buffer (and a parameter's gradient) to
  // `dtype` in place; integer buffers such as num_batches_tracked keep their dtype, as in
  // PyTorch. The tensors keep their identity: every handle to a parameter (the module's
  // member, an optimizer's list, a trace's state binding) sees the converted values,
  // because the conversion replaces the contents of the shared TensorImpl.
  virtual void to(DType dtype, const SourceLoc& loc = SourceLoc::current());
  // Moves every parameter and buffer (and a parameter's gradient) to `device` in place, as
  // LibTorch's module.to(torch::kCUDA): like to(DType), the tensors keep their identity and
  // requires_grad, so an optimizer made before or after the move updates the moved tensors.
  // All of the copies are made before any tensor changes: a failure leaves the module
  // where it was. kiln::Error "no CUDA device: <why>" for a CUDA device this machine lacks.
  virtual void to(Device device, const SourceLoc& loc = SourceLoc::current());
  // Zeroes every parameter's gradient in place (LibTorch 1.13's default), or clears it
  // (set_to_none).
  virtual void zero_grad(bool set_to_none = false, const SourceLoc& loc = SourceLoc::current());

  // ---- state dict --------------------------------------------------------------------
  // Parameters and buffers by dotted name, each module's parameters then its buffers, then
  // its children (PyTorch's order). The values are detached views of the module's
  // tensors: they alias them (clone() to keep a snapshot).
  OrderedDict<Tensor> state_dict() const;
  // Copies the values of `state` into the module's tensors in place (converting dtypes),
  // without recording history. Shape mismatches are always an error; missing and
  // unexpected keys are one when `strict`, and are returned otherwise. The error lists
  // every problem by name in one message, and nothing is copied when there is one.
  IncompatibleKeys load_state_dict(const OrderedDict<Tensor>& state, bool strict = true,
                                   const SourceLoc& loc = SourceLoc::current());

  // ---- registration ------------------------------------------------------------------
  // `name` must be non-empty, contain no '.', and not name another parameter, buffer or
  // child of this module. An undefined tensor registers an empty slot. The tensor is
  // stored as is (not copied) and marked requires_grad as asked; it must be a leaf.
  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true,
                             const SourceLoc& loc = SourceLoc::current());
  Tensor& register_buffer(std::string name, Tensor tensor,
                          const SourceLoc& loc = SourceLoc::current());
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module,
                                     const SourceLoc& loc = SourceLoc::current()) {
    static_assert(std::is_base_of_v<Module, M>, "register_module takes a module");
    addChild(std::move(name), module, loc);
    return module;
  }
  template <class M>
  std::shared_ptr<M> register_module(std::string name, const ModuleHolder<M>& holder,
                                     const SourceLoc& loc = SourceLoc::current()) {
    return register_module(std::move(name), holder.ptr(), loc);
  }
  // Swaps the child `name` for `module` (which keeps the slot's position). A Sequential
  // refuses: its calls are bound to its children's types when they are added.
  template <class M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module,
                                    const SourceLoc& loc = SourceLoc::current()) {
    replaceChild(name, module, loc);
    return module;
  }

  // This module as a `M` (a module type or a holder type), or null if it is not one.
  template <class M>
  auto* as() {
    if constexpr (requires { typename M::ContainedType; })
      return dynamic_cast<typename M::ContainedType*>(this);
    else
      return dynamic_cast<M*>(this);
  }

  // ---- printing ----------------------------------------------------------------------
  // Prints this module's own line: "Linear(in_features=4, out_features=2, bias=true)". The
  // default prints the name, and "()" when there are no children. operator<< prints the
  // tree below it, PyTorch's layout with C++'s true/false.
  virtual void pretty_print(std::ostream& os) const;
  void pretty_print_recursive(std::ostream& os, const std::string& indentation) const;

 protected:
  virtual void replaceChild(const std::string& name, std::shared_ptr<Module> module,
                            const SourceLoc& loc);

 private:
  void checkNewName(const std::string& name, const char* what, const SourceLoc& loc) const;
  void addChild(std::string name, std::shared_ptr<Module> module, const SourceLoc& loc);
  template <class F>
  void visit(const std::string& prefix, F&& fn) const;

  OrderedDict<Tensor> parameters_;
  OrderedDict<Tensor> buffers_;
  OrderedDict<std::shared_ptr<Module>> children_;
  mutable std::optional<std::string> name_;
  bool is_training_ = true;
};

std::ostream& operator<<(std::ostream& os, const Module& module);

// ---- observing forward calls -------------------------------------------------------------
// Told about the forward calls made on its thread through a holder (`model(x)`) or a
// Sequential (its own forward and its children's): nn::Graph prints each module's inputs
// and outputs and, under debug(1), reports module by module while it builds. A custom
// module's forward called directly (`impl->forward(x)`) is not seen; only calls whose
// arguments and result are Tensors are reported.
class ForwardObserver {
 public:
  virtual ~ForwardObserver() = default;
  virtual void onForwardBegin(const Module& module, std::span<const Tensor> inputs) = 0;
  virtual void onForwardEnd(const Module& module, std::span<const Tensor> outputs) = 0;
};

// Installs `observer` for the current thread; restores the previous one on destruction.
class ForwardObserverGuard {
 public:
  explicit ForwardObserverGuard(ForwardObserver* observer);
  ~ForwardObserverGuard();
  ForwardObserverGuard(const ForwardObserverGuard&) = delete;
  ForwardObserverGuard& operator=(const ForwardObserverGuard&) = delete;

 private:
  ForwardObserver* previous_;
};

ForwardObserver* currentForwardObserver();

namespace detail {

// Reports one forward call of `module` to the thread's observer, if any: the inputs now,
// the outputs when outputs() is called. A call already being reported for the same module
// (a holder's call that enters Sequential::forward) is reported once.
class ForwardScope {
 public:
  ForwardScope(const Module& module, std::span<const Tensor> inputs);
  ~ForwardScope();
  ForwardScope(const ForwardScope&) = delete;
  ForwardScope& operator=(const ForwardScope&) = delete;
  void outputs(std::span<const Tensor> outputs);

 private:
  const Module& module_;
  ForwardObserver* observer_ = nullptr;  // null: this call is not reported
  const Module* outer_ = nullptr;        // the module reported before this one
};

// "kiln::(anonymous namespace)::TrainGraph" -> "TrainGraph": a class's name without its
// namespaces or enclosing scopes (module and graph names).
std::string unqualifiedTypeName(const std::type_info& type);

}  // namespace detail

}  // namespace kiln::nn
