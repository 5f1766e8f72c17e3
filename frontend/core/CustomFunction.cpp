// Custom autograd functions: the context and the node (see kiln/core/CustomFunction.h).
#include "kiln/core/CustomFunction.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "kiln/core/Ops.h"

namespace kiln::autograd {

namespace {

std::string demangle(const char* name) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string result = status == 0 && demangled ? demangled : name;
  std::free(demangled);
  return result;
}

TensorMeta metaOf(const Tensor& x) { return TensorMeta{x.sizes(), x.dtype(), x.device()}; }

bool anyEdge(const std::vector<Edge>& edges) {
  return std::any_of(edges.begin(), edges.end(),
                     [](const Edge& e) { return e.node || e.leaf; });
}

}  // namespace

// ---- AutogradContext ------------------------------------------------------------------------

void AutogradContext::save_for_backward(variable_list to_save) { toSave_ = std::move(to_save); }

variable_list AutogradContext::get_saved_variables(const SourceLoc& loc) const {
  if (!forwardDone_) return toSave_;
  variable_list saved;
  for (size_t i = 0; i < saved_.size(); ++i) saved.push_back(node_->unpack(i, loc));
  return saved;
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  for (const Tensor& y : outputs)
    if (y.defined()) nonDifferentiable_.insert(y.impl());
}

bool AutogradContext::needs_input_grad(size_t index, const SourceLoc& loc) const {
  const std::vector<Edge>& edges = node_->next();
  if (index >= edges.size())
    throw Error::make(loc, node_->what(), "needs_input_grad(", index, "): forward has ",
                      edges.size(), " tensor arguments");
  return node_->recordsHistory_ && (edges[index].node || edges[index].leaf);
}

// ---- CppNode --------------------------------------------------------------------------------

CppNode::CppNode(const char* typeName, BackwardFn backward, const variable_list& tensorInputs,
                 std::vector<bool> isTensorArg)
    // No user line of its own (apply cannot take one): errors name the backward pass's.
    : Node(tensorInputs, 0, SourceLoc::current()),
      function_(demangle(typeName)),
      backward_(backward),
      isTensorArg_(std::move(isTensorArg)),
      inputs_(tensorInputs),
      recordsHistory_(isGradEnabled() && anyEdge(next_)) {
  for (const Tensor& x : tensorInputs) inputMetas_.push_back(metaOf(x));
  ctx_.node_ = this;
}

std::string CppNode::name() const { return "kiln::autograd::CppNode<" + function_ + ">"; }

std::string CppNode::what() const { return "autograd::Function<" + function_ + ">"; }

variable_list CppNode::wrapOutputs(variable_list outputs) {
  numOutputs_ = int(outputs.size());
  std::vector<const TensorImpl*> raw;
  auto isInput = [&](const TensorImpl* impl) {
    return std::any_of(inputs_.begin(), inputs_.end(), [&](const Tensor& x) { return x.impl() == impl; });
  };
  for (Tensor& y : outputs) {
    outputMetas_.push_back(y.defined() ? std::optional(metaOf(y)) : std::nullopt);
    outputHasHistory_.push_back(false);
    raw.push_back(y.impl());
    if (!y.defined()) continue;
    // An input, an output twice, or a tensor with history of its own keeps its autograd
    // identity: the output is a new handle on its values.
    bool seen = std::count(raw.begin(), raw.end(), y.impl()) > 1;
    if (isInput(y.impl()) || seen || y.requires_grad()) y = y.detach();
    if (!recordsHistory_ || !y.is_floating_point() || ctx_.nonDifferentiable_.count(raw.back()))
      continue;
    y.impl()->requiresGrad = true;
    y.impl()->gradFn = shared_from_this();
    y.impl()->outputNr = int(outputHasHistory_.size() - 1);
    outputHasHistory_.back() = true;
  }
  if (recordsHistory_) {
    for (const Tensor& t : ctx_.toSave_) {
      AutogradContext::Saved saved{t};
      if (t.defined() && !isInput(t.impl()))
        if (auto at = std::find(raw.begin(), raw.end(), t.impl()); at != raw.end()) {
          saved.outputNr = int(at - raw.begin());
          saved.values = outputs[size_t(saved.outputNr)].detach();
        }
      ctx_.saved_.push_back(std::move(saved));
    }
    variable_list values;
    for (const AutogradContext::Saved& s : ctx_.saved_) values.push_back(s.values);
    ctx_.savedVersions_ = detail::versionsOf(values);
  }
  ctx_.toSave_.clear();
  ctx_.forwardDone_ = true;
  inputs_.clear();
  return outputs;
}

Tensor CppNode::unpack(size_t index, const SourceLoc& loc) {
  const AutogradContext::Saved& saved = ctx_.saved_[index];
  if (!saved.values.defined()) return saved.values;
  const TensorImpl& impl = *saved.values.impl();
  if (impl.storage && impl.storage->version() != ctx_.savedVersions_[index])
    throw Error::make(loc, what(), "saved tensor ", index, " (shape ", saved.values.sizes(),
                      "), which backward needs, was modified in place after forward saved it");
  // With create_graph (grad mode on in backward), a saved output is this node's output
  // again, so what backward computes from it differentiates through this node.
  if (saved.outputNr >= 0 && outputHasHistory_[size_t(saved.outputNr)] && isGradEnabled())
    return detail::withHistory(saved.values, shared_from_this(), saved.outputNr);
  return saved.values;
}

std::vector<Tensor> CppNode::apply(const std::vector<Tensor>& gradOutputs, bool createGraph,
                                   const SourceLoc& passLoc) {
  if (released_) throw releasedError(what());
  variable_list grads = gradOutputs;
  grads.resize(size_t(numOutputs_));
  if (ctx_.materializeGrads_)
    for (size_t i = 0; i < grads.size(); ++i)
      if (const std::optional<TensorMeta>& m = outputMetas_[i]; !grads[i].defined() && m)
        grads[i] = zeros(m->shape, TensorOptions(m->dtype).device(m->device), passLoc);
  return checkedGradients(backward_(&ctx_, std::move(grads)), passLoc);
}

variable_list CppNode::checkedGradients(variable_list grads, const SourceLoc& passLoc) const {
  const size_t arguments = isTensorArg_.size();
  // Extra gradients are fine if undefined, as LibTorch allows.
  if (grads.size() > arguments &&
      std::none_of(grads.begin() + long(arguments), grads.end(), [](const Tensor& g) { return g.defined(); }))
    grads.resize(arguments);
  if (grads.size() != arguments)
    throw Error::make(passLoc, what(), "backward returned ", grads.size(), " gradients, but forward took ",
                      arguments, " arguments; return one per argument (an undefined Tensor for an "
                      "argument that is not a tensor)");
  variable_list perEdge;
  for (size_t i = 0; i < arguments; ++i) {
    Tensor g = grads[i];
    if (!isTensorArg_[i]) {
      if (g.defined())
        throw Error::make(passLoc, what(), "backward returned a gradient (shape ", g.sizes(),
                          ") for argument ", i, ", which is not a tensor; return an undefined Tensor there");
      continue;
    }
    const TensorMeta& input = inputMetas_[perEdge.size()];
    if (g.defined() && g.sizes() != input.shape)
      throw ShapeError::make(passLoc, what(), "backward returned a gradient of shape ", g.sizes(),
                             " for argument ", i, ", which has shape ", input.shape);
    // As LibTorch: each gradient takes its input's dtype.
    if (g.defined() && g.dtype() != input.dtype && isFloatingPoint(input.dtype))
      g = convert(g, input.dtype, passLoc);
    perEdge.push_back(g);
  }
  return perEdge;
}

void CppNode::release() {
  ctx_.saved_.clear();
  ctx_.savedVersions_.clear();
  released_ = true;
}

}  // namespace kiln::autograd
