// nn::Graph's printing in OneFlow's format (GRAPH/CONFIG/MODULE/PARAMETER/BUFFER lines,
// INPUT/OUTPUT after the first call) and its debug output while a program builds.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/nn/GraphReporter.h"
#include "kiln/core/DType.h"
#include "kiln/core/Device.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Error.h"
#include "kiln/core/Shape.h"
#include "kiln/nn/Graph.h"

namespace kiln::nn {

namespace {

const char* pythonBool(bool value) { return value ? "True" : "False"; }

// Python's tuple of the sizes, as OneFlow prints them: "(8, 4)", "(8,)", "()".
std::string sizeTuple(const Shape& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

// OneFlow's _meta_repr: what a graph knows of a tensor, never its values.
std::string metaRepr(const Tensor& t, bool withRequiresGrad) {
  std::string text =
      "tensor(..., size=" + sizeTuple(t.sizes()) + ", dtype=" + qualifiedName(t.dtype());
  if (withRequiresGrad && t.requires_grad()) text += ", requires_grad=True";
  return text + ")";
}

// An op's operand in a debug line: "float32(8, 4)".
std::string typeRepr(const Tensor& t) {
  return std::string(name(t.dtype())) + sizeTuple(t.sizes());
}

std::string typeList(std::span<const Tensor> tensors) {
  std::string text;
  for (size_t i = 0; i < tensors.size(); ++i) text += (i ? ", " : "") + typeRepr(tensors[i]);
  return text;
}

// A module's own line, with OneFlow's "()" after a bare name: "Sequential()".
std::string moduleRepr(const Module& module) {
  std::ostringstream os;
  module.pretty_print(os);
  std::string text = os.str();
  return text.ends_with(')') ? text : text + "()";
}

std::string moduleHead(const std::string& qualifiedName, const Module& module) {
  return "(MODULE:" + qualifiedName + ":" + moduleRepr(module) + ")";
}

// "(PARAMETER:model.0.weight:tensor(..., requires_grad=True))" and BUFFER lines.
std::vector<std::string> stateHeads(const std::string& qualifiedName, const Module& module) {
  std::vector<std::string> heads;
  for (const auto& [name, t] : module.named_parameters(/*recurse=*/false))
    heads.push_back("(PARAMETER:" + qualifiedName + "." + name + ":" + metaRepr(t, true) + ")");
  for (const auto& [name, t] : module.named_buffers(/*recurse=*/false))
    heads.push_back("(BUFFER:" + qualifiedName + "." + name + ":" + metaRepr(t, true) + ")");
  return heads;
}

// OneFlow's lines for the tensors of one call of `owner` (the graph or a module). Its
// names number the nodes of ((args...), {}) or ((outputs...),) depth first: the i-th
// argument is "_<owner>_input.0.<i>_<i + 2>"; a single output "_<owner>_output.0.0_2",
// the i-th of several "_<owner>_output.0.0.<i>_<i + 3>".
std::vector<std::string> ioLines(bool input, const std::string& owner,
                                 std::span<const Tensor> tensors, bool single) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string node = input    ? "input.0." + std::to_string(i) + "_" + std::to_string(i + 2)
                       : single ? "output.0.0_2"
                                : "output.0.0." + std::to_string(i) + "_" + std::to_string(i + 3);
    lines.push_back(std::string(input ? "(INPUT:_" : "(OUTPUT:_") + owner + "_" + node + ":" +
                    metaRepr(tensors[i], false) + ")");
  }
  return lines;
}

// OneFlow's block: "<head>: ()" when empty, else the children indented inside ( ).
std::vector<std::string> block(const std::string& head, const std::vector<std::string>& children) {
  if (children.empty()) return {head + ": ()"};
  std::vector<std::string> lines{head + ": ("};
  for (const std::string& child : children) lines.push_back("  " + child);
  lines.push_back(")");
  return lines;
}

void append(std::vector<std::string>& to, const std::vector<std::string>& lines) {
  to.insert(to.end(), lines.begin(), lines.end());
}

std::string milliseconds(std::chrono::steady_clock::duration elapsed) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms",
                std::chrono::duration<double, std::milli>(elapsed).count());
  return text;
}

}  // namespace

std::string GraphConfig::str() const {
  return std::string("GraphConfig(training=") + pythonBool(training_) +
         ", gradient_accumulation_steps=" + std::to_string(accumulationSteps_) +
         ", allow_fuse_add_to_output=" + pythonBool(fuseAddToOutput_) +
         ", enable_fusion=" + pythonBool(fusion_) +
         (backend_.empty() ? std::string() : ", backend='" + backend_ + "'") +
         (dataParallel_ ? ", data_parallel=True" : "") +
         (dynamicBatch_ ? ", dynamic_batch=True" : "") + ")";
}

// ---- GraphBase: printing -----------------------------------------------------------------

std::string GraphBase::shallowRepr() const { return "(GRAPH:" + name_ + ":" + className_ + ")"; }

// OneFlow's ModuleBlock order: inputs, parameters, buffers, child modules, outputs.
std::vector<std::string> GraphBase::moduleLines(const std::string& qualifiedName,
                                                const Module& module) const {
  std::vector<std::string> children;
  auto calls = io_.modules.find(&module);
  if (calls != io_.modules.end())
    for (const CallIo& call : calls->second) append(children, call.inputs);
  for (const std::string& head : stateHeads(qualifiedName, module))
    children.push_back(head + ": ()");
  for (const auto& [name, child] : module.named_children())
    append(children, moduleLines(qualifiedName + "." + name, *child));
  if (calls != io_.modules.end())
    for (const CallIo& call : calls->second) append(children, call.outputs);
  return block(moduleHead(qualifiedName, module), children);
}

std::string GraphBase::str() const {
  std::vector<std::string> children{"(CONFIG:config:" + config_.str() + ")"};
  append(children, io_.graph.inputs);
  for (const auto& [name, module] : root_->named_children())
    append(children, moduleLines(name, *module));
  append(children, io_.graph.outputs);
  std::string text;
  for (const std::string& line : block(shallowRepr(), children))
    text += (text.empty() ? "" : "\n") + line;
  return text;
}

std::ostream& operator<<(std::ostream& os, const GraphBase& graph) { return os << graph.str(); }

void GraphBase::reportCompiled(Phase phase) const {
  if (debugLevel_ < 0) return;
  std::cerr << shallowRepr() + " compiling and running program '" + phaseName(phase) +
                   "' done in " + milliseconds(Clock::now() - builtAt_) + ".\n";
}

// ---- GraphBase::Reporter -----------------------------------------------------------------

GraphBase::Reporter::Reporter(GraphBase& graph, Phase phase, std::span<const Tensor> inputs)
    : graph_(graph), phase_(phase), start_(Clock::now()), inner_(currentDispatchHook()) {
  for (const auto& [name, module] : graph.root_->named_modules("", /*include_self=*/false))
    names_.emplace(module.get(), name);
  io_.graph.inputs = ioLines(true, graph.name_, inputs, false);
  say(0, graph.shallowRepr() + " start building program '" + phaseName(phase) + "'.");
  for (const std::string& line : io_.graph.inputs) say(1, line);
  observing_.emplace(this);
  if (graph.debugLevel_ >= 2) hooked_.emplace(this);
}

void GraphBase::Reporter::finish(std::span<const Tensor> outputs) {
  io_.graph.outputs = ioLines(false, graph_.name_, outputs, graph_.singleOutput_);
  for (const std::string& line : io_.graph.outputs) say(1, line);
  say(0, graph_.shallowRepr() + " building program '" + phaseName(phase_) + "' done in " +
             milliseconds(Clock::now() - start_) + ".");
  if (!graph_.built_) graph_.io_ = std::move(io_);
  graph_.builtAt_ = Clock::now();
}

void GraphBase::Reporter::say(int level, const std::string& line) const {
  if (graph_.debugLevel_ >= level) std::cerr << line + "\n";  // one write per line
}

const std::string& GraphBase::Reporter::scope() const {
  for (auto frame = frames_.rbegin(); frame != frames_.rend(); ++frame)
    if (!frame->name.empty()) return frame->name;
  return graph_.name_;
}

void GraphBase::Reporter::onForwardBegin(const Module& module, std::span<const Tensor> inputs) {
  auto named = names_.find(&module);
  if (named == names_.end()) {
    frames_.push_back({&module, "", 0});
    return;
  }
  const std::string& name = named->second;
  std::vector<CallIo>& calls = io_.modules[&module];
  frames_.push_back({&module, name, calls.size()});
  calls.push_back({ioLines(true, name, inputs, true), {}});
  say(1, moduleHead(name, module));
  for (const std::string& line : calls.back().inputs) say(1, line);
  for (const std::string& head : stateHeads(name, module)) say(1, head);
}

void GraphBase::Reporter::onForwardEnd(const Module& module, std::span<const Tensor> outputs) {
  if (frames_.empty()) return;  // not begun inside this build
  Frame frame = std::move(frames_.back());
  frames_.pop_back();
  if (frame.name.empty()) return;
  std::vector<std::string>& lines = io_.modules[frame.module][frame.call].outputs;
  lines = ioLines(false, frame.name, outputs, true);
  for (const std::string& line : lines) say(1, line);
}

bool GraphBase::Reporter::symbolic() const { return inner_ && inner_->symbolic(); }

// Printed before the tracer sees the op, so an op the tracer rejects is the last line.
void GraphBase::Reporter::onOp(const OpCall& call) {
  std::string line = "(OPERATOR:" + scope() + ":" + std::string(call.op.name) +
                     (call.inPlace ? "_" : "") + "(" + typeList(call.inputs) + ") -> (" +
                     typeList(call.outputs) + ")";
  std::span<const Tensor> any = call.outputs.empty() ? call.inputs : call.outputs;
  if (!any.empty()) {
    std::ostringstream device;
    device << any.front().device();
    line += ", device=" + device.str();
  }
  if (graph_.debugLevel_ >= 3)
    line += ", location=" + std::string(kiln::detail::displayPath(call.loc.file_name())) + ":" +
            std::to_string(call.loc.line());
  say(2, line + ")");
  if (inner_) inner_->onOp(call);
}

void GraphBase::Reporter::onValueRead(const Tensor& tensor, std::string_view what,
                                      const SourceLoc& loc) {
  if (inner_) inner_->onValueRead(tensor, what, loc);
}

void GraphBase::Reporter::onGradCleared(const Tensor& leaf) {
  if (inner_) inner_->onGradCleared(leaf);
}

void GraphBase::Reporter::onAlias(const Tensor& source, const Tensor& alias) {
  if (inner_) inner_->onAlias(source, alias);
}

}  // namespace kiln::nn
