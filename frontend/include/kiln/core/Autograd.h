// Reverse-mode autograd: graph nodes recorded by the dispatcher, the backward pass, and
// the grad-mode switches (NoGradGuard) users know from LibTorch.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/OpDef.h"
#include "kiln/core/Tensor.h"

namespace kiln {

namespace autograd {

// Where an input's gradient flows: into the node that produced it (its output `outputNr`)
// or, for a leaf that requires grad, into that leaf's .grad.
struct Edge {
  std::shared_ptr<Node> node;
  int outputNr = 0;
  std::shared_ptr<TensorImpl> leaf;
};

// A node of the autograd graph: one differentiable call, whose apply() turns the
// gradients of its outputs into those of its inputs. An op of the table makes an OpNode;
// a custom autograd::Function<T> a CppNode (kiln/core/CustomFunction.h).
class Node : public std::enable_shared_from_this<Node> {
 public:
  virtual ~Node() = default;

  // As LibTorch names its nodes: "AddBackward0", "kiln::autograd::CppNode<MyFn>".
  virtual std::string name() const = 0;
  const std::vector<Edge>& next() const { return next_; }
  const SourceLoc& loc() const { return loc_; }
  int numOutputs() const { return numOutputs_; }
  // Gradients of the inputs given those of the outputs (undefined = zero), one per edge.
  // With `createGraph` the caller has grad mode on and the formula sees the saved outputs
  // with their history (this node), so the gradients it records are differentiable
  // again. `passLoc` is where the backward pass was asked for (backward(), grad()).
  virtual std::vector<Tensor> apply(const std::vector<Tensor>& gradOutputs, bool createGraph,
                                    const SourceLoc& passLoc) = 0;
  // Drops the saved tensors after a backward pass without retain_graph.
  virtual void release() = 0;

 protected:
  // Edges to each of `inputs`: its grad_fn, the leaf itself, or none.
  Node(const std::vector<Tensor>& inputs, int numOutputs, const SourceLoc& loc);

  // The error for a second pass through a released node.
  Error releasedError(std::string_view what) const;

  std::vector<Edge> next_;
  SourceLoc loc_;
  int numOutputs_;
};

// One call of an op of the table. It keeps its inputs and its outputs' data (without
// their history, so there is no reference cycle) for the gradient formula.
class OpNode final : public Node {
 public:
  OpNode(const OpDef& op, std::vector<Tensor> inputs, std::vector<Tensor> outputs, Attrs attrs,
         const SourceLoc& loc);

  const OpDef& op() const { return *op_; }
  std::string name() const override;
  std::vector<Tensor> apply(const std::vector<Tensor>& gradOutputs, bool createGraph,
                            const SourceLoc& passLoc) override;
  void release() override;

 private:
  // Error if a saved tensor's storage was written in place since the node was made.
  void checkSavedVersions() const;

  const OpDef* op_;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> outputs_;
  std::vector<uint64_t> inputVersions_, outputVersions_;
  Attrs attrs_;
  bool released_ = false;
};

namespace detail {
// A new handle on `values` (a detached tensor) that is output `outputNr` of `node` again,
// if floating-point (the others never had history): what a gradient formula run with
// create_graph sees of a saved output.
Tensor withHistory(const Tensor& values, const std::shared_ptr<Node>& node, int outputNr);
// The storage versions of saved tensors, to detect in-place writes before backward.
std::vector<uint64_t> versionsOf(const std::vector<Tensor>& saved);
}  // namespace detail

// torch::autograd::backward: accumulates the gradients of `tensors` (seeded with
// `grad_tensors`, one per tensor; an undefined or missing one is ones for a one-element
// tensor) into the .grad of the leaves they depend on. retain_graph defaults to
// create_graph; with create_graph the backward pass records its own ops, so the .grad
// tensors have a grad_fn and can be differentiated again.
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const SourceLoc& loc = SourceLoc::current());

// torch::autograd::grad: the gradients of `outputs` (seeded as in backward) with respect
// to each of `inputs` (leaves or not), returned rather than accumulated into any .grad.
// Only the part of the graph between them runs. An input the outputs do not depend on is
// an error, or an undefined gradient with allow_unused.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {},
                         std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                         bool allow_unused = false, const SourceLoc& loc = SourceLoc::current());

// torch::autograd::GradMode: isGradEnabled() and its switch, as LibTorch spells them
// (AutoGradMode and NoGradGuard set it for a scope).
struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

}  // namespace autograd

// Whether ops record autograd history on this thread (on by default).
bool isGradEnabled();

// Turns history recording on or off for its scope, as torch::AutoGradMode.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled);
  ~AutoGradMode();
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool previous_;
};

// Turns history recording off for its scope, as torch::NoGradGuard.
class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

}  // namespace kiln
