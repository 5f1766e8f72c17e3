#include "frontend/jit/Recorder.h"

#include <algorithm>
#include <iostream>
#include <mutex>

#include "dialect/KilnOps.h"
#include "bridge/OpBridge.h"
#include "kiln/core/Ops.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

namespace kiln::jit {

using mlir::kiln::KilnDialect;

namespace {

TensorMeta metaOf(const Tensor& t) { return {t.sizes(), t.dtype(), t.device()}; }

// Value reads warn once per source line per process, as Python's warnings do.
bool firstWarningAt(const SourceLoc& loc) {
  static std::mutex mutex;
  static std::set<std::pair<std::string, unsigned>> warned;
  std::lock_guard lock(mutex);
  return warned.emplace(std::string(kiln::detail::displayPath(loc.file_name())), loc.line()).second;
}

}  // namespace

// Tensors whose storage overlaps: a view op's output joins its input's group. An in-place
// write to one member while another is alive would change the other's values too, which
// the recorded functional op cannot express; the recorder refuses it.
struct Recorder::AliasGroup {
  std::vector<std::weak_ptr<TensorImpl>> members;
};

Recorder::Recorder(mlir::MLIRContext& context, RecorderOptions options)
    : context_(context), options_(std::move(options)), builder_(&context),
      body_(std::make_unique<mlir::Block>()) {
  builder_.setInsertionPointToEnd(body_.get());
}

Recorder::~Recorder() = default;

mlir::Location Recorder::locationOf(const SourceLoc& loc) {
  return mlir::FileLineColLoc::get(&context_, kiln::detail::displayPath(loc.file_name()), loc.line(),
                                   loc.column());
}

void Recorder::addInput(const Tensor& input) {
  mlir::Value arg = body_->addArgument(bridge::tensorTypeFor(&context_, metaOf(input)),
                                       mlir::UnknownLoc::get(&context_));
  argAttrs_.push_back(builder_.getDictionaryAttr(builder_.getNamedAttr(
      KilnDialect::getInputAttrName(), builder_.getI64IntegerAttr(int64_t(numInputs_)))));
  inputs_.push_back(input);
  ++numInputs_;
  bind(input, arg);
}

void Recorder::onGradSlot(const Tensor& tensor) {
  gradAtSlotAccess_.emplace(tensor.impl(), tensor.impl()->grad.implPtr());  // the first one
}

void Recorder::nameState(const TensorImpl* tensor, std::string name) {
  names_[tensor] = std::move(name);
}

void Recorder::bind(const Tensor& tensor, mlir::Value value) {
  values_[tensor.impl()] = Bound{tensor.implPtr(), value};
}

mlir::Value Recorder::valueOf(const Tensor& tensor, const SourceLoc& loc) {
  auto it = values_.find(tensor.impl());
  if (it != values_.end() && !it->second.impl.expired()) return it->second.value;
  return stateArgument(tensor, loc);
}

mlir::Value Recorder::stateArgument(const Tensor& tensor, const SourceLoc& loc) {
  if (!tensor.impl()->storage)
    throw TraceError::make(loc, "trace",
                           "an op reads a symbolic placeholder (shape ", tensor.sizes(),
                           ") that this trace did not create: a tensor from another trace "
                           "escaped into this one");
  const Storage* storage = tensor.impl()->storage.get();
  for (size_t k = 0; k < state_.size(); ++k)
    if (writtenStorages_.count(storage) && state_[k].impl()->storage.get() == storage)
      throw TraceError::make(loc, "trace", "the traced function reads a tensor of shape ",
                             tensor.sizes(), " that shares memory with state '", stateNames_[k],
                             "', which it wrote earlier; a trace binds each tensor separately "
                             "and applies writes after the call. Read the written tensor itself");
  auto named = names_.find(tensor.impl());
  std::string name = named != names_.end() ? named->second
                                           : "state." + std::to_string(state_.size());
  for (size_t k = 0; k < state_.size() && named == names_.end(); ++k)
    if (state_[k].impl()->grad.impl() == tensor.impl()) {  // an existing gradient, read
      name = stateNames_[k] + ".grad";
      break;
    }
  mlir::Value value;
  if (options_.captureAsConst) {
    mlir::OpBuilder::InsertionGuard guard(builder_);
    builder_.setInsertionPointToStart(body_.get());  // constants dominate every use
    value = bridge::buildConstant(builder_, locationOf(loc), tensor);
  } else {
    value = body_->addArgument(bridge::tensorTypeFor(&context_, metaOf(tensor)), locationOf(loc));
    argAttrs_.push_back(builder_.getDictionaryAttr(
        builder_.getNamedAttr(KilnDialect::getStateAttrName(), builder_.getStringAttr(name))));
  }
  state_.push_back(tensor);
  auto early = gradAtSlotAccess_.find(tensor.impl());
  gradAtStart_.push_back(early != gradAtSlotAccess_.end() ? early->second : tensor.impl()->grad.implPtr());
  stateNames_.push_back(std::move(name));
  stateValues_.push_back(value);
  bind(tensor, value);
  return value;
}

std::shared_ptr<Recorder::AliasGroup> Recorder::groupOf(const Tensor& tensor) {
  auto& group = groups_[tensor.impl()];
  if (!group) {
    group = std::make_shared<AliasGroup>();
    group->members.push_back(tensor.implPtr());
  }
  return group;
}

void Recorder::checkInPlaceWrite(const Tensor& target, const OpCall& call) {
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i].impl() == target.impl())
      throw TraceError::make(call.loc, call.op.name, "the traced function writes its input ", i,
                             " (shape ", target.sizes(),
                             ") in place; a trace cannot write back into its arguments. "
                             "Return the new value instead");
  if (options_.captureAsConst)
    for (size_t k = 0; k < state_.size(); ++k)
      if (state_[k].impl() == target.impl())
        throw TraceError::make(call.loc, call.op.name, "the traced function writes state '",
                               stateNames_[k], "' (shape ", target.sizes(),
                               ") in place, but capture_as_const made it a constant");
  const Storage* storage = target.impl()->storage.get();
  if (storage) {
    auto shares = [&](const Tensor& other) {
      return other.impl() != target.impl() && other.impl()->storage.get() == storage;
    };
    for (size_t k = 0; k < state_.size(); ++k)
      if (shares(state_[k]))
        throw TraceError::make(call.loc, call.op.name, "in-place write to a tensor of shape ",
                               target.sizes(), " that shares memory with state '",
                               stateNames_[k],
                               "'; a trace binds each tensor separately and applies writes "
                               "after the call. Write through one tensor only");
    writtenStorages_.insert(storage);
  }
  auto it = groups_.find(target.impl());
  if (it == groups_.end()) return;
  for (const std::weak_ptr<TensorImpl>& member : it->second->members) {
    std::shared_ptr<TensorImpl> alive = member.lock();
    if (alive && alive.get() != target.impl())
      throw TraceError::make(call.loc, call.op.name, "in-place write to a tensor of shape ",
                             target.sizes(), " that shares memory with a live view of shape ",
                             alive->shape,
                             "; a trace records values, not memory. Write to a copy "
                             "(clone()) or drop the other view first");
  }
}

mlir::Value Recorder::recordFactory(const OpCall& call, mlir::Location loc) {
  const Tensor& out = call.outputs[0];
  if (!call.inPlace) return bridge::buildConstant(builder_, loc, out);
  // fill_ in a symbolic trace leaves the target untouched, so the value comes from the
  // op's attributes, computed with the hook off.
  DispatchHookGuard off(nullptr);
  Tensor value = full(out.sizes(), call.attrs.get<double>("value"), out.dtype(), call.loc);
  return bridge::buildConstant(builder_, loc, value);
}

void Recorder::onOp(const OpCall& call) {
  mlir::Location loc = locationOf(call.loc);
  if (call.inPlace) {
    // A write to a tensor the function has not read yet (fill_, copy_) still targets
    // state: bind it first, so the write becomes that state's update.
    valueOf(call.outputs[0], call.loc);
    checkInPlaceWrite(call.outputs[0], call);
  }
  if (call.op.name == "to" && call.op.kilnOp.empty()) {
    // A move between devices (Tensor::to(Device), and the ops that build small tensors on
    // the CPU and move them, as cross_entropy's row offsets). A traced program runs whole
    // on one device, so in it the move is the value itself; finish() checks that every
    // move goes to that device.
    moves_.emplace_back(call.outputs[0].device(), call.loc);
    bind(call.outputs[0], valueOf(call.inputs[0], call.loc));
    noteCreated(call.outputs[0]);
    return;
  }
  if (call.op.kilnOp == "kiln.constant") {
    bind(call.outputs[0], recordFactory(call, loc));
    if (!call.inPlace) noteCreated(call.outputs[0]);
    return;
  }
  llvm::SmallVector<mlir::Value> operands;
  for (const Tensor& input : call.inputs) operands.push_back(valueOf(input, call.loc));
  std::vector<TensorMeta> metas;
  for (const Tensor& output : call.outputs) metas.push_back(metaOf(output));
  mlir::Operation* op = bridge::buildKilnOp(builder_, loc, call.op, operands, call.attrs, metas);
  for (size_t i = 0; i < call.outputs.size(); ++i) {
    bind(call.outputs[i], op->getResult(i));
    if (!call.inPlace) noteCreated(call.outputs[i]);
  }
  if (call.op.view && !call.inPlace) {  // the output aliases the input
    std::shared_ptr<AliasGroup> group = groupOf(call.inputs[0]);
    group->members.push_back(call.outputs[0].implPtr());
    groups_[call.outputs[0].impl()] = group;
  }
}

void Recorder::noteCreated(const Tensor& tensor) {
  created_[tensor.impl()] = {created_.size(), tensor.implPtr()};
}

void Recorder::onAlias(const Tensor& source, const Tensor& alias) {
  auto it = values_.find(source.impl());
  if (it == values_.end() || it->second.impl.expired()) return;  // read later as state
  bind(alias, it->second.value);
  if (created_.count(source.impl())) noteCreated(alias);
  std::shared_ptr<AliasGroup> group = groupOf(source);
  group->members.push_back(alias.implPtr());
  groups_[alias.impl()] = group;
}

std::vector<Tensor> Recorder::recordCallback(const detail::HostBody& body,
                                             std::span<const Tensor> inputs, const SourceLoc& loc) {
  if (options_.symbolic) throw NeedsValues{};
  llvm::SmallVector<mlir::Value> operands;
  for (const Tensor& input : inputs) operands.push_back(valueOf(input, loc));
  std::vector<Tensor> outputs;
  {
    DispatchHookGuard off(nullptr);
    outputs = body(inputs);
  }
  llvm::SmallVector<mlir::Type> types;
  for (const Tensor& output : outputs) types.push_back(bridge::tensorTypeFor(&context_, metaOf(output)));
  int64_t callee = callbacks_->add(body);
  auto op = builder_.create<mlir::kiln::CallbackOp>(locationOf(loc), types, operands,
                                                     uint64_t(callee));
  for (size_t i = 0; i < outputs.size(); ++i) {
    bind(outputs[i], op->getResult(i));
    noteCreated(outputs[i]);
  }
  return outputs;
}

void Recorder::onValueRead(const Tensor& tensor, std::string_view what, const SourceLoc& loc) {
  if (options_.symbolic || options_.forbidReads)
    throw TraceError::make(loc, what, "cannot read the values of a tensor of shape ",
                           tensor.sizes(),
                           " while tracing symbolically: it is a placeholder. Trace with "
                           "symbolic = false to bake the value in, or move the read into "
                           "jit::exclude_from_trace");
  if (firstWarningAt(loc))
    std::cerr << "kiln: warning: the trace bakes in the value " << what
              << " reads here (shape " << tensor.sizes() << "); later calls reuse it (at "
              << kiln::detail::displayPath(loc.file_name()) << ":" << loc.line() << ")\n";
}

// The program runs on its first input's device, else its first state's not on the CPU
// (Recording::device, which jit::trace compiles for): every input, every state on a
// device and every move inside the function must be on that device, or the program would
// read memory of another. State on the CPU (an optimizer's lr, the generator's key) is
// copied in and out per call.
Device Recorder::checkOneDevice(const SourceLoc& loc) const {
  Device device;
  if (!inputs_.empty()) device = inputs_.front().device();
  else
    for (const Tensor& state : state_)
      if (!state.device().isCPU()) {
        device = state.device();
        break;
      }
  const std::string runsOn = " but the traced program runs on " + device.str() +
                             (inputs_.empty() ? " (its state's device)" : " (its first input's device)");
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i].device() != device)
      throw TraceError::make(loc, "trace", "input ", i, " of shape ", inputs_[i].sizes(), " is on ",
                             inputs_[i].device().str(), runsOn,
                             ": a traced program's inputs live on one device; move them before the call");
  for (size_t k = 0; k < state_.size(); ++k)
    if (state_[k].device() != device && !state_[k].device().isCPU())
      throw TraceError::make(loc, "trace", "the traced function reads state '", stateNames_[k], "' of shape ",
                             state_[k].sizes(), " on ", state_[k].device().str(), runsOn,
                             ": a traced program's tensors live on one device; move the module or optimizer there");
  for (const auto& [target, moveLoc] : moves_)
    if (target != device)
      throw TraceError::make(moveLoc, "to", "the traced function moves a tensor to ", target.str(), runsOn,
                             ": a traced program runs on one device; move its inputs or results outside the trace");
  return device;
}

Recording Recorder::finish(std::vector<Tensor> outputs, const SourceLoc& loc) {
  const Device device = checkOneDevice(loc);
  llvm::SmallVector<mlir::Value> results;
  llvm::SmallVector<mlir::DictionaryAttr> resultAttrs;
  auto addResult = [&](mlir::Value value, llvm::StringRef attr, mlir::Attribute attrValue) {
    results.push_back(value);
    resultAttrs.push_back(builder_.getDictionaryAttr(builder_.getNamedAttr(attr, attrValue)));
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].defined())
      throw TraceError::make(loc, "trace", "output ", i, " of the traced function is undefined");
    addResult(valueOf(outputs[i], loc), KilnDialect::getOutputAttrName(),
              builder_.getI64IntegerAttr(int64_t(i)));
  }
  Recording recording;
  recording.device = device;
  recording.numOutputs = outputs.size();
  for (size_t k = 0; k < state_.size(); ++k) {
    recording.gradAtStart.push_back(gradAtStart_[k] ? Tensor(gradAtStart_[k]) : Tensor());
    recording.gradCleared.push_back(gradCleared_.count(state_[k].impl()) > 0);
  }
  outputs.clear();  // what is still alive now is held by someone else

  for (size_t k = 0; k < state_.size(); ++k) {
    mlir::Value current = valueOf(state_[k], loc);
    if (current == stateValues_[k]) continue;
    addResult(current, KilnDialect::getStateUpdateAttrName(),
              builder_.getStringAttr(stateNames_[k]));
    recording.updatedState.push_back(k);
  }
  // Gradients backward() left in the .grad of state (parameters).
  std::set<const TensorImpl*> slots;
  for (size_t k = 0; k < state_.size(); ++k) {
    const std::shared_ptr<TensorImpl>& grad = state_[k].impl()->grad.implPtr();
    if (!grad) {
      if (gradAtStart_[k]) recording.clearedGrads.push_back(k);
      continue;
    }
    if (grad == gradAtStart_[k] || !created_.count(grad.get())) continue;
    slots.insert(grad.get());
    addResult(valueOf(Tensor(grad), loc), KilnDialect::getGradUpdateAttrName(),
              builder_.getStringAttr(stateNames_[k] + ".grad"));
    recording.gradOf.push_back(k);
  }
  // Created tensors that outlive the call: a warm-up recording.
  std::vector<std::pair<size_t, std::shared_ptr<TensorImpl>>> outliving;
  for (auto& [impl, entry] : created_)
    if (std::shared_ptr<TensorImpl> alive = entry.second.lock(); alive && !slots.count(impl))
      outliving.emplace_back(entry.first, std::move(alive));
  std::sort(outliving.begin(), outliving.end());
  for (auto& [order, impl] : outliving) {
    addResult(valueOf(Tensor(impl), loc), KilnDialect::getCreatedAttrName(),
              builder_.getI64IntegerAttr(int64_t(recording.created.size())));
    recording.created.push_back(Tensor(std::move(impl)));
  }

  mlir::Location funcLoc = locationOf(loc);
  builder_.create<mlir::func::ReturnOp>(funcLoc, results);
  auto type = builder_.getFunctionType(body_->getArgumentTypes(), mlir::ValueRange(results).getTypes());
  auto func = mlir::func::FuncOp::create(funcLoc, options_.name, type);
  func.getBody().push_back(body_.release());
  for (size_t i = 0; i < argAttrs_.size(); ++i) func.setArgAttrs(unsigned(i), argAttrs_[i]);
  for (size_t i = 0; i < resultAttrs.size(); ++i) func.setResultAttrs(unsigned(i), resultAttrs[i]);
  recording.module = mlir::ModuleOp::create(funcLoc);
  recording.module->push_back(func);

  std::string diagnostics;
  {
    mlir::ScopedDiagnosticHandler handler(&context_, [&](mlir::Diagnostic& diag) {
      diagnostics += diag.str() + "\n";
      return mlir::success();
    });
    if (mlir::failed(mlir::verify(*recording.module)))
      throw CompileError::make(loc, "trace", "the recorded program does not verify (a Kiln bug): ",
                               diagnostics);
  }
  recording.callbacks = callbacks_;
  if (!options_.captureAsConst) {  // constants bind nothing
    recording.state = state_;
    recording.stateNames = stateNames_;
  }
  values_.clear();
  groups_.clear();
  created_.clear();
  return recording;
}

}  // namespace kiln::jit
