// Custom autograd functions as LibTorch spells them (torch/csrc/autograd/custom_function.h):
//
//   struct MulConstant : public kiln::autograd::Function<MulConstant> {
//     static Tensor forward(AutogradContext* ctx, Tensor x, double c) {
//       ctx->saved_data["c"] = c;
//       return x * c;
//     }
//     static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
//       return {grad_outputs[0] * ctx->saved_data["c"].toDouble(), Tensor()};
//     }
//   };
//   Tensor y = MulConstant::apply(x, 5.5);
//
// forward runs without recording history; its outputs get one CppNode as grad_fn, whose
// backward pass calls T::backward. backward returns one gradient per forward argument
// (a std::vector<Tensor> argument counts as one per element), an undefined Tensor for an
// argument that is not a tensor. Written with ordinary ops, a backward pass records
// ordinary ops: with create_graph they differentiate again, and jit::trace sees them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/IValue.h"
#include "kiln/core/OpDef.h"
#include "kiln/core/Tensor.h"

namespace kiln::autograd {

using variable_list = std::vector<Tensor>;
using tensor_list = std::vector<Tensor>;

class CppNode;

// What forward leaves for backward (LibTorch's AutogradContext).
class AutogradContext {
 public:
  // Non-tensor values (and tensors that need no in-place check) for backward.
  std::unordered_map<std::string, IValue> saved_data;

  // Tensors for backward, inputs or outputs of forward or anything else. An output saved
  // here is kept without its history (no reference cycle) and has it again when backward
  // runs with create_graph. In-place writes to a saved tensor before backward are errors.
  void save_for_backward(variable_list to_save);
  // The saved tensors, in the order given to save_for_backward.
  variable_list get_saved_variables(const SourceLoc& loc = SourceLoc::current()) const;
  // These outputs of forward get no gradient: they do not require grad, and backward is
  // given an undefined (or zero) gradient for them.
  void mark_non_differentiable(const variable_list& outputs);
  // Whether backward sees zeros (the default) or undefined tensors for outputs that
  // received no gradient.
  void set_materialize_grads(bool value) { materializeGrads_ = value; }
  // Whether tensor argument `index` (counting tensor arguments only, as LibTorch's edges)
  // requires a gradient.
  bool needs_input_grad(size_t index, const SourceLoc& loc = SourceLoc::current()) const;

 private:
  friend class CppNode;
  struct Saved {
    Tensor values;       // an output's values are kept detached
    int outputNr = -1;   // which output of the node it is, or -1
  };

  CppNode* node_ = nullptr;
  variable_list toSave_;  // as given, until forward returns
  std::vector<Saved> saved_;
  std::vector<uint64_t> savedVersions_;
  bool forwardDone_ = false;
  std::unordered_set<const TensorImpl*> nonDifferentiable_;
  bool materializeGrads_ = true;
};

// The grad_fn of a custom function's outputs.
class CppNode final : public Node {
 public:
  using BackwardFn = variable_list (*)(AutogradContext*, variable_list);

  // `typeName` is typeid(T).name(); `isTensorArg` says, per forward argument, whether it
  // is one of `tensorInputs`.
  CppNode(const char* typeName, BackwardFn backward, const variable_list& tensorInputs,
          std::vector<bool> isTensorArg);

  // "kiln::autograd::CppNode<MyFn>", as LibTorch's "torch::autograd::CppNode<MyFn>".
  std::string name() const override;
  AutogradContext* context() { return &ctx_; }
  // Makes forward's outputs this node's outputs (when the call records history: grad mode
  // on and a tensor argument requiring grad) and keeps what ctx saved. An output that is an
  // input, or already had history, is returned as a new handle on its values.
  variable_list wrapOutputs(variable_list outputs);
  std::vector<Tensor> apply(const std::vector<Tensor>& gradOutputs, bool createGraph,
                            const SourceLoc& passLoc) override;
  void release() override;

 private:
  friend class AutogradContext;
  // "autograd::Function<MyFn>", the op that errors name.
  std::string what() const;
  // backward's result checked against the arguments, one gradient per edge.
  variable_list checkedGradients(variable_list grads, const SourceLoc& passLoc) const;
  Tensor unpack(size_t index, const SourceLoc& loc);

  std::string function_;
  BackwardFn backward_;
  std::vector<bool> isTensorArg_;
  variable_list inputs_;  // until forward returns: which outputs are inputs, which saved
  std::vector<TensorMeta> inputMetas_;
  std::vector<std::optional<TensorMeta>> outputMetas_;  // none for an undefined output
  std::vector<bool> outputHasHistory_;
  bool recordsHistory_;
  bool released_ = false;
  AutogradContext ctx_;
};

namespace detail {
inline void collectArgument(const Tensor& x, variable_list& tensors, std::vector<bool>& isTensor) {
  tensors.push_back(x);
  isTensor.push_back(true);
}
inline void collectArgument(const variable_list& xs, variable_list& tensors,
                            std::vector<bool>& isTensor) {
  for (const Tensor& x : xs) collectArgument(x, tensors, isTensor);
}
template <class T>
  requires(!std::is_convertible_v<const T&, const Tensor&> &&
           !std::is_convertible_v<const T&, const variable_list&>)
void collectArgument(const T&, variable_list&, std::vector<bool>& isTensor) {
  isTensor.push_back(false);
}
}  // namespace detail

// LibTorch's torch::autograd::Function<T>: T derives from it and defines
//   static Tensor or variable_list forward(AutogradContext*, Args...);
//   static variable_list backward(AutogradContext*, variable_list grad_outputs);
// and is called as T::apply(args...).
template <class T>
struct Function {
  template <class X = T, class... Args>
  static auto apply(Args&&... args) {
    variable_list tensors;
    std::vector<bool> isTensorArg;
    (detail::collectArgument(args, tensors, isTensorArg), ...);
    auto node = std::make_shared<CppNode>(
        typeid(X).name(),
        [](AutogradContext* ctx, variable_list grads) -> variable_list {
          return X::backward(ctx, std::move(grads));
        },
        tensors, std::move(isTensorArg));
    using Result = std::decay_t<decltype(X::forward(node->context(), std::forward<Args>(args)...))>;
    static_assert(std::is_same_v<Result, Tensor> || std::is_same_v<Result, variable_list>,
                  "a custom Function's forward returns a Tensor or a variable_list");
    variable_list outputs;
    {
      AutoGradMode noGrad(false);
      if constexpr (std::is_same_v<Result, Tensor>)
        outputs.push_back(X::forward(node->context(), std::forward<Args>(args)...));
      else
        outputs = X::forward(node->context(), std::forward<Args>(args)...);
    }
    outputs = node->wrapOutputs(std::move(outputs));
    if constexpr (std::is_same_v<Result, Tensor>) return outputs[0];
    else return outputs;
  }
};

}  // namespace kiln::autograd
