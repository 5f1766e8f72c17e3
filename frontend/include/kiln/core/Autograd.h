// Reverse-mode autograd: graph nodes recorded by the dispatcher, the backward pass, and
// the grad-mode switches (NoGradGuard) users know from LibTorch.
#pragma once

#include <memory>
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

// One differentiable op call. It keeps its inputs and its outputs' data (without their
// history, so there is no reference cycle) for the gradient formula.
class Node {
 public:
  Node(const OpDef& op, std::vector<Tensor> inputs, std::vector<Tensor> outputs, Attrs attrs,
       const SourceLoc& loc);

  const OpDef& op() const { return *op_; }
  // The op's name as LibTorch names its nodes: "AddBackward0", "LogSoftmaxBackward0".
  std::string name() const;
  const std::vector<Edge>& next() const { return next_; }
  const SourceLoc& loc() const { return loc_; }
  int numOutputs() const { return numOutputs_; }
  // Gradients of the inputs given those of the outputs (undefined = zero).
  std::vector<Tensor> apply(const std::vector<Tensor>& gradOutputs) const;
  // Drops the saved tensors after a backward pass without retain_graph.
  void release();

 private:
  // Error if a saved tensor's storage was written in place since the node was made.
  void checkSavedVersions() const;

  const OpDef* op_;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> outputs_;
  std::vector<uint64_t> inputVersions_, outputVersions_;
  std::vector<Edge> next_;
  Attrs attrs_;
  SourceLoc loc_;
  int numOutputs_;
  bool released_ = false;
};

// Runs the backward pass from `root` with initial gradient `gradRoot`.
void backward(const Tensor& root, const Tensor& gradRoot, bool retainGraph, const SourceLoc& loc);

}  // namespace autograd

// Whether ops record autograd history on this thread (on by default).
bool isGradEnabled();

// Turns history recording off for its scope, as torch::NoGradGuard.
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace kiln
