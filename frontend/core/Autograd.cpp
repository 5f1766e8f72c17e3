// Reverse-mode autograd: nodes, the backward pass, grad mode (see kiln/core/Autograd.h).
#include "kiln/core/Autograd.h"

#include <cctype>
#include <unordered_map>
#include <unordered_set>

#include "kiln/core/Ops.h"

namespace kiln {

namespace {
thread_local bool tGradEnabled = true;
}  // namespace

bool isGradEnabled() { return tGradEnabled; }
NoGradGuard::NoGradGuard() : previous_(tGradEnabled) { tGradEnabled = false; }
NoGradGuard::~NoGradGuard() { tGradEnabled = previous_; }

namespace autograd {

namespace {

// The values of a tensor without its history, so a node can keep its outputs without a
// cycle output -> node -> output.
Tensor valuesOnly(const Tensor& x) { return x.detach(); }

Edge edgeTo(const Tensor& x) {
  if (x.grad_fn()) return Edge{x.grad_fn(), x.impl()->outputNr, nullptr};
  if (x.requires_grad()) return Edge{nullptr, 0, x.implPtr()};
  return Edge{};
}

void accumulate(Tensor& slot, const Tensor& g, const SourceLoc& loc) {
  slot = slot.defined() ? add(slot, g, loc) : g;
}

// .grad always gets the leaf's dtype and its own storage (the first gradient is copied,
// as it may be shared with another leaf or be the caller's `gradient`), so in-place
// updates of one .grad never show up elsewhere.
void accumulateLeaf(TensorImpl& leaf, const Tensor& g, const SourceLoc& loc) {
  Tensor total;
  if (leaf.grad) total = add(Tensor(leaf.grad), convert(g, leaf.dtype, loc), loc);
  else total = g.dtype() == leaf.dtype ? g.clone(loc) : convert(g, leaf.dtype, loc);
  leaf.grad = total.detach().implPtr();
}

// The storage versions of saved tensors, to detect in-place writes before backward.
std::vector<uint64_t> versionsOf(const std::vector<Tensor>& saved) {
  std::vector<uint64_t> versions;
  for (const Tensor& t : saved) versions.push_back(t.impl()->storage ? t.impl()->storage->version() : 0);
  return versions;
}

// Nodes reachable from `root` in an order where every node comes before the nodes it
// feeds gradients into.
std::vector<Node*> topologicalOrder(Node* root) {
  std::vector<Node*> order;
  std::unordered_set<Node*> visited;
  std::vector<std::pair<Node*, size_t>> stack{{root, 0}};
  visited.insert(root);
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->next().size()) {
      Node* child = node->next()[next++].node.get();
      if (child && visited.insert(child).second) stack.push_back({child, 0});
      continue;
    }
    order.push_back(node);
    stack.pop_back();
  }
  return {order.rbegin(), order.rend()};
}

}  // namespace

Node::Node(const OpDef& op, std::vector<Tensor> inputs, std::vector<Tensor> outputs, Attrs attrs,
           const SourceLoc& loc)
    : op_(&op), attrs_(std::move(attrs)), loc_(loc), numOutputs_(int(outputs.size())) {
  for (const Tensor& x : inputs) next_.push_back(edgeTo(x));
  inputs_ = std::move(inputs);
  for (const Tensor& y : outputs) outputs_.push_back(valuesOnly(y));
  inputVersions_ = versionsOf(inputs_);
  outputVersions_ = versionsOf(outputs_);
}

void Node::checkSavedVersions() const {
  auto check = [&](const std::vector<Tensor>& saved, const std::vector<uint64_t>& versions, const char* what) {
    for (size_t i = 0; i < saved.size(); ++i)
      if (saved[i].impl()->storage && saved[i].impl()->storage->version() != versions[i])
        throw Error::make(loc_, op_->name, what, " ", i, " (shape ", saved[i].sizes(),
                          "), which the gradient needs, was modified in place after this op used it");
  };
  if (op_->gradReads & kReadsInputs) check(inputs_, inputVersions_, "operand");
  if (op_->gradReads & kReadsOutputs) check(outputs_, outputVersions_, "result");
}

std::vector<Tensor> Node::apply(const std::vector<Tensor>& gradOutputs) const {
  if (released_)
    throw Error::make(loc_, op_->name, "backward through this part of the graph a second time; "
                      "pass retainGraph = true to the first backward()");
  checkSavedVersions();
  std::vector<Tensor> grads = gradOutputs;
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined()) grads[i] = zeros_like(outputs_[i], loc_);
  std::vector<Tensor> result = op_->grad(GradArgs{inputs_, outputs_, grads, attrs_, loc_});
  for (size_t i = 0; i < result.size(); ++i)
    if (result[i].defined() && result[i].sizes() != inputs_[i].sizes())
      throw Error::make(loc_, op_->name, "internal error: gradient of operand ", i, " has shape ",
                        result[i].sizes(), " but the operand has shape ", inputs_[i].sizes());
  return result;
}

std::string Node::name() const {
  std::string camel;
  bool upper = true;
  for (char c : op_->name) {
    if (c == '_') { upper = true; continue; }
    camel += upper ? char(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return camel + "Backward0";
}

void Node::release() {
  inputs_.clear();
  outputs_.clear();
  released_ = true;
}

void backward(const Tensor& root, const Tensor& gradRoot, bool retainGraph, const SourceLoc& loc) {
  if (!root.requires_grad())
    throw Error::make(loc, "backward", "the tensor (shape ", root.sizes(),
                      ") does not require grad and has no grad_fn");
  Tensor seed = gradRoot;
  if (!seed.defined()) {
    if (root.numel() != 1)
      throw ShapeError::make(loc, "backward", "a gradient must be given for a non-scalar tensor of "
                             "shape ", root.sizes());
    seed = ones_like(root, loc);
  }
  if (seed.sizes() != root.sizes())
    throw ShapeError::make(loc, "backward", "gradient of shape ", seed.sizes(),
                           " does not match the tensor's shape ", root.sizes());
  NoGradGuard noGrad;
  if (!root.grad_fn()) {
    accumulateLeaf(*root.impl(), convert(seed, root.dtype(), loc), loc);
    return;
  }
  std::unordered_map<Node*, std::vector<Tensor>> pending;
  Node* start = root.grad_fn().get();
  pending[start].resize(start->numOutputs());
  pending[start][root.impl()->outputNr] = seed;
  std::vector<Node*> order = topologicalOrder(start);
  for (Node* node : order) {
    std::vector<Tensor> grads = node->apply(pending[node]);
    pending.erase(node);
    for (size_t i = 0; i < grads.size() && i < node->next().size(); ++i) {
      const Edge& edge = node->next()[i];
      if (!grads[i].defined()) continue;
      if (edge.node) {
        auto& slots = pending[edge.node.get()];
        slots.resize(edge.node->numOutputs());
        accumulate(slots[edge.outputNr], grads[i], loc);
      } else if (edge.leaf) {
        accumulateLeaf(*edge.leaf, grads[i], loc);
      }
    }
  }
  if (!retainGraph)
    for (Node* node : order) node->release();
}

}  // namespace autograd

}  // namespace kiln
