// Reverse-mode autograd: nodes, the backward pass, grad mode (see kiln/core/Autograd.h).
#include "kiln/core/Autograd.h"

#include <cctype>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "kiln/core/Ops.h"
#include "kiln/core/PostAccumulateGradHook.h"

namespace kiln {

namespace {
thread_local bool tGradEnabled = true;
}  // namespace

bool isGradEnabled() { return tGradEnabled; }
AutoGradMode::AutoGradMode(bool enabled) : previous_(tGradEnabled) { tGradEnabled = enabled; }
AutoGradMode::~AutoGradMode() { tGradEnabled = previous_; }

bool autograd::GradMode::is_enabled() { return tGradEnabled; }
void autograd::GradMode::set_enabled(bool enabled) { tGradEnabled = enabled; }

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
// updates of one .grad never show up elsewhere. It keeps its history under create_graph.
void accumulateLeaf(TensorImpl& leaf, const Tensor& g, bool createGraph, const SourceLoc& loc) {
  Tensor total;
  if (leaf.grad.defined()) total = add(leaf.grad, convert(g, leaf.dtype, loc), loc);
  else total = g.dtype() == leaf.dtype ? g.clone(loc) : convert(g, leaf.dtype, loc);
  leaf.grad = createGraph ? total : total.detach();
}

// Nodes reachable from `roots` in an order where every node comes before the nodes it
// feeds gradients into (the reverse of a depth-first postorder).
std::vector<Node*> topologicalOrder(const std::vector<Node*>& roots) {
  std::vector<Node*> order;
  std::unordered_set<Node*> visited;
  for (Node* root : roots) {
    if (!visited.insert(root).second) continue;
    std::vector<std::pair<Node*, size_t>> stack{{root, 0}};
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
  }
  return {order.rbegin(), order.rend()};
}

// backward()'s post-accumulate-grad hooks (kiln/core/PostAccumulateGradHook.h). A leaf's
// gradient is complete once every node of the pass with an edge to it is done, whether
// it ran or had no gradient to send; its hooks then run if it received any.
class LeafHooks {
 public:
  // Counts the edges from the pass's nodes to leaves that have hooks.
  explicit LeafHooks(const std::vector<Node*>& order) {
    for (Node* node : order)
      for (const Edge& edge : node->next())
        if (edge.leaf && detail::hasPostAccumulateGradHooks(edge.leaf.get()))
          ++edgesLeft_[edge.leaf.get()];
  }
  void received(const std::shared_ptr<TensorImpl>& leaf) {
    if (received_.insert(leaf.get()).second) order_.push_back(leaf);
  }
  void nodeDone(const Node& node) {
    for (const Edge& edge : node.next()) {
      if (!edge.leaf) continue;
      auto left = edgesLeft_.find(edge.leaf.get());
      if (left != edgesLeft_.end() && --left->second == 0 && received_.count(edge.leaf.get()))
        detail::runPostAccumulateGradHooks(edge.leaf);
    }
  }
  // The leaves only the roots sent a gradient to (a root that is a leaf itself).
  void passDone() {
    for (const std::shared_ptr<TensorImpl>& leaf : order_)
      if (!edgesLeft_.count(leaf.get()) && detail::hasPostAccumulateGradHooks(leaf.get()))
        detail::runPostAccumulateGradHooks(leaf);
  }

 private:
  std::unordered_map<const TensorImpl*, int> edgesLeft_;
  std::unordered_set<const TensorImpl*> received_;
  std::vector<std::shared_ptr<TensorImpl>> order_;
};

// One backward pass. backward() accumulates into the leaves' .grad; grad() sets
// `capturing` and collects the gradients of its inputs instead: those of leaves at their
// edge, those of non-leaves where their node's output gradients are complete.
struct GraphTask {
  bool createGraph = false;
  bool capturing = false;
  std::unordered_map<const TensorImpl*, std::vector<size_t>> leafTargets;
  std::unordered_map<const Node*, std::vector<std::pair<int, size_t>>> nodeTargets;
  std::vector<Tensor> captured;
  LeafHooks* hooks = nullptr;  // backward() only
};

using Pending = std::unordered_map<Node*, std::vector<Tensor>>;

// Sends `g` along `edge`: into the gradients pending for a node's output, or to a leaf.
void deliver(GraphTask& task, const Edge& edge, const Tensor& g, Pending& pending, const SourceLoc& loc) {
  if (!g.defined()) return;
  if (edge.node) {
    auto& slots = pending[edge.node.get()];
    slots.resize(edge.node->numOutputs());
    accumulate(slots[edge.outputNr], g, loc);
  } else if (edge.leaf && !task.capturing) {
    accumulateLeaf(*edge.leaf, g, task.createGraph, loc);
    if (task.hooks) task.hooks->received(edge.leaf);
  } else if (edge.leaf) {
    auto target = task.leafTargets.find(edge.leaf.get());
    if (target == task.leafTargets.end()) return;
    for (size_t index : target->second) accumulate(task.captured[index], g, loc);
  }
}

// While capturing, the nodes through which a gradient reaches a target. `order` has every
// node before those it feeds, so walking it backwards sees a node's successors first.
std::unordered_set<Node*> nodesLeadingToTargets(const GraphTask& task, const std::vector<Node*>& order) {
  std::unordered_set<Node*> leading, reaching;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    bool leads = false;
    for (const Edge& edge : (*it)->next())
      leads = leads || (edge.node && reaching.count(edge.node.get())) ||
              (edge.leaf && task.leafTargets.count(edge.leaf.get()));
    if (leads) leading.insert(*it);
    if (leads || task.nodeTargets.count(*it)) reaching.insert(*it);
  }
  return leading;
}

// The gradient a pass starts `root` with: `seed`, or ones for a one-element root.
Tensor seedOf(const char* what, const Tensor& root, const Tensor& seed, const SourceLoc& loc) {
  if (!root.defined()) throw Error::make(loc, what, "called on an undefined tensor");
  if (!root.requires_grad())
    throw Error::make(loc, what, "the tensor (shape ", root.sizes(),
                      ") does not require grad and has no grad_fn");
  if (!seed.defined()) {
    if (root.numel() != 1)
      throw ShapeError::make(loc, what, "a gradient must be given for a non-scalar tensor of "
                             "shape ", root.sizes());
    return ones_like(root, loc);
  }
  if (seed.sizes() != root.sizes())
    throw ShapeError::make(loc, what, "gradient of shape ", seed.sizes(),
                           " does not match the tensor's shape ", root.sizes());
  return seed;
}

// Runs `node` if the pass sent it gradients (and, while capturing, it leads to a target),
// delivering its inputs' gradients; whether it ran.
bool runNode(GraphTask& task, Node& node, Pending& pending, const std::unordered_set<Node*>& leading,
             const SourceLoc& loc) {
  auto slot = pending.find(&node);
  if (slot == pending.end()) return false;
  std::vector<Tensor> grads = std::move(slot->second);
  pending.erase(slot);
  if (auto target = task.nodeTargets.find(&node); target != task.nodeTargets.end())
    for (auto [outputNr, index] : target->second)
      if (const Tensor& g = grads[size_t(outputNr)]; g.defined()) accumulate(task.captured[index], g, loc);
  if (task.capturing && !leading.count(&node)) return false;
  std::vector<Tensor> inputGrads = node.apply(grads, task.createGraph, loc);
  for (size_t i = 0; i < inputGrads.size() && i < node.next().size(); ++i)
    deliver(task, node.next()[i], inputGrads[i], pending, loc);
  return true;
}

// Runs `task` from `roots` with the gradients `seeds` (checked by seedOf), in grad mode
// exactly when the task creates a graph.
void execute(GraphTask& task, const char* what, const std::vector<Tensor>& roots,
             const std::vector<Tensor>& seeds, bool retainGraph, const SourceLoc& loc) {
  if (!seeds.empty() && seeds.size() != roots.size())
    throw Error::make(loc, what, "got ", seeds.size(), " gradients for ", roots.size(), " tensors");
  std::vector<Tensor> checked;
  for (size_t i = 0; i < roots.size(); ++i)
    checked.push_back(seedOf(what, roots[i], i < seeds.size() ? seeds[i] : Tensor(), loc));
  AutoGradMode gradMode(task.createGraph);
  Pending pending;
  std::vector<Node*> starts;
  for (size_t i = 0; i < roots.size(); ++i) {
    deliver(task, edgeTo(roots[i]), checked[i], pending, loc);
    if (roots[i].grad_fn()) starts.push_back(roots[i].grad_fn().get());
  }
  const std::vector<Node*> order = topologicalOrder(starts);
  const std::unordered_set<Node*> leading =
      task.capturing ? nodesLeadingToTargets(task, order) : std::unordered_set<Node*>{};
  std::optional<LeafHooks> hooks;
  if (!task.capturing) {
    hooks.emplace(order);
    for (size_t i = 0; i < roots.size(); ++i)
      if (!roots[i].grad_fn() && roots[i].requires_grad()) hooks->received(roots[i].implPtr());
    task.hooks = &*hooks;
  }
  std::vector<Node*> ran;
  for (Node* node : order) {
    if (runNode(task, *node, pending, leading, loc)) ran.push_back(node);
    if (hooks) hooks->nodeDone(*node);
  }
  if (hooks) hooks->passDone();
  if (!retainGraph)
    for (Node* node : ran) node->release();
}

}  // namespace

Node::Node(const std::vector<Tensor>& inputs, int numOutputs, const SourceLoc& loc)
    : loc_(loc), numOutputs_(numOutputs) {
  for (const Tensor& x : inputs) next_.push_back(edgeTo(x));
}

Error Node::releasedError(std::string_view what) const {
  return Error::make(loc_, what, "backward through this part of the graph a second time; "
                     "pass retain_graph = true to the first backward()");
}

namespace detail {

Tensor withHistory(const Tensor& values, const std::shared_ptr<Node>& node, int outputNr) {
  Tensor y = values.detach();  // a new handle on the values, which the tracer learns of
  if (y.is_floating_point()) {
    y.impl()->requiresGrad = true;
    y.impl()->gradFn = node;
    y.impl()->outputNr = outputNr;
  }
  return y;
}

std::vector<uint64_t> versionsOf(const std::vector<Tensor>& saved) {
  std::vector<uint64_t> versions;
  for (const Tensor& t : saved)
    versions.push_back(t.defined() && t.impl()->storage ? t.impl()->storage->version() : 0);
  return versions;
}

}  // namespace detail

OpNode::OpNode(const OpDef& op, std::vector<Tensor> inputs, std::vector<Tensor> outputs,
               Attrs attrs, const SourceLoc& loc)
    : Node(inputs, int(outputs.size()), loc), op_(&op), attrs_(std::move(attrs)) {
  inputs_ = std::move(inputs);
  for (const Tensor& y : outputs) outputs_.push_back(valuesOnly(y));
  inputVersions_ = detail::versionsOf(inputs_);
  outputVersions_ = detail::versionsOf(outputs_);
}

void OpNode::checkSavedVersions() const {
  auto check = [&](const std::vector<Tensor>& saved, const std::vector<uint64_t>& versions, const char* what) {
    for (size_t i = 0; i < saved.size(); ++i)
      if (saved[i].impl()->storage && saved[i].impl()->storage->version() != versions[i])
        throw Error::make(loc_, op_->name, what, " ", i, " (shape ", saved[i].sizes(),
                          "), which the gradient needs, was modified in place after this op used it");
  };
  if (op_->gradReads & kReadsInputs) check(inputs_, inputVersions_, "operand");
  if (op_->gradReads & kReadsOutputs) check(outputs_, outputVersions_, "result");
}

std::vector<Tensor> OpNode::apply(const std::vector<Tensor>& gradOutputs, bool createGraph,
                                  const SourceLoc&) {
  if (released_) throw releasedError(op_->name);
  checkSavedVersions();
  std::vector<Tensor> grads = gradOutputs;
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined()) grads[i] = zeros_like(outputs_[i], loc_);
  std::vector<Tensor> outputs = outputs_;
  if (createGraph)
    for (size_t i = 0; i < outputs.size(); ++i)
      outputs[i] = detail::withHistory(outputs_[i], shared_from_this(), int(i));
  std::vector<Tensor> result = op_->grad(GradArgs{inputs_, outputs, grads, attrs_, loc_});
  for (size_t i = 0; i < result.size(); ++i)
    if (result[i].defined() && result[i].sizes() != inputs_[i].sizes())
      throw Error::make(loc_, op_->name, "internal error: gradient of operand ", i, " has shape ",
                        result[i].sizes(), " but the operand has shape ", inputs_[i].sizes());
  return result;
}

std::string OpNode::name() const {
  std::string camel;
  bool upper = true;
  for (char c : op_->name) {
    if (c == '_') { upper = true; continue; }
    camel += upper ? char(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return camel + "Backward0";
}

void OpNode::release() {
  inputs_.clear();
  outputs_.clear();
  released_ = true;
}

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph, const SourceLoc& loc) {
  GraphTask task;
  task.createGraph = create_graph;
  execute(task, "backward", tensors, grad_tensors, retain_graph.value_or(create_graph), loc);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph,
                         bool create_graph, bool allow_unused, const SourceLoc& loc) {
  GraphTask task;
  task.createGraph = create_graph;
  task.capturing = true;
  task.captured.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (!x.defined()) throw Error::make(loc, "grad", "input ", i, " is an undefined tensor");
    if (!x.requires_grad())
      throw Error::make(loc, "grad", "input ", i, " (shape ", x.sizes(),
                        ") does not require grad, so it has no gradient");
    if (x.grad_fn()) task.nodeTargets[x.grad_fn().get()].push_back({x.impl()->outputNr, i});
    else task.leafTargets[x.impl()].push_back(i);
  }
  execute(task, "grad", outputs, grad_outputs, retain_graph.value_or(create_graph), loc);
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor& g = task.captured[i];
    if (!g.defined() && !allow_unused)
      throw Error::make(loc, "grad", "input ", i, " (shape ", inputs[i].sizes(),
                        ") was not used to compute the outputs; pass allow_unused = true "
                        "to get an undefined gradient for it");
    if (g.defined() && g.dtype() != inputs[i].dtype()) {
      AutoGradMode gradMode(create_graph);
      g = convert(g, inputs[i].dtype(), loc);
    }
  }
  return std::move(task.captured);
}

}  // namespace autograd

}  // namespace kiln
