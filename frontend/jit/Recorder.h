// Recorder: the dispatcher hook that records one run of a traced function into a
// func.func of kiln ops, with inputs, state, outputs and state updates (docs/ARCHITECTURE.md §5).
#pragma once

#include <memory>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/core/Dispatcher.h"
#include "kiln/core/Tensor.h"
#include "kiln/jit/Trace.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "runtime/HostCallbacks.h"

namespace kiln::jit {

struct RecorderOptions {
  bool symbolic = false;        // placeholders without storage; value reads are errors
  bool captureAsConst = false;  // state becomes kiln.constant of its current value
  std::string name = "main";    // the recorded function's name
  bool forbidReads = false;     // value reads are errors even with values (symbolic redone)
};

// Thrown by a symbolic recording that meets exclude_from_trace: the block must run on
// values, so the trace starts again by value (reads still forbidden).
struct NeedsValues {};

// What a finished recording binds: the state tensors the function read (its arguments
// after the inputs, in order) and what each result after the outputs writes back.
struct Recording {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<Tensor> state;
  std::vector<std::string> stateNames;
  size_t numOutputs = 0;
  // Result numOutputs + k is written into state[updatedState[k]] in place.
  std::vector<size_t> updatedState;
  // Then result numOutputs + updatedState.size() + k becomes state[gradOf[k]].grad, as
  // backward() leaves a fresh gradient in a leaf's .grad.
  std::vector<size_t> gradOf;
  // .grad of these state tensors is cleared (zero_grad(set_to_none) with no backward after).
  std::vector<size_t> clearedGrads;
  // Each state tensor's .grad when the recording started (undefined: none). backward()
  // adds to an existing gradient and makes a fresh one otherwise, so the recording holds
  // only while the same gradients exist; one it reads is state, bound by reference.
  std::vector<Tensor> gradAtStart;
  // Whether the function cleared state k's .grad itself (zero_grad): then whether one
  // existed before the call does not matter.
  std::vector<bool> gradCleared;
  // The host functions of its kiln.callback ops, by callee id.
  std::shared_ptr<runtime::CallbackTable> callbacks;
  // Tensors the function created that outlive the call and are not outputs (optimizer
  // slots made on a first step): held elsewhere, they are state from the next call on, so
  // this recording is a warm-up, run once and then retraced. Their values are the last
  // results; in a symbolic trace they are placeholders that the run fills in.
  std::vector<Tensor> created;
  // Recorded while running eagerly (by value, or a symbolic trace redone for
  // exclude_from_trace): the recording call's effects already happened.
  bool byValue = false;
  // Where the program runs: its first input's device, else its first state's not on the
  // CPU (state on the CPU, as an optimizer's lr, is copied in per call), else the CPU.
  Device device;
};

// Install with DispatchHookGuard for the duration of the traced call. Every dispatched
// op becomes a kiln op; a tensor an op reads that is neither an input nor the result of
// a recorded op is state: a new function argument `kiln.state = "<name>"` (or, with
// captureAsConst, a constant). An in-place write rebinds the written tensor to the op's
// result; a write to state becomes a `kiln.state_update` result.
class Recorder final : public DispatchHook {
 public:
  Recorder(mlir::MLIRContext& context, RecorderOptions options);
  ~Recorder() override;

  // Declares the next tensor argument (`kiln.input = N`). Call before the function runs.
  void addInput(const Tensor& input);
  // The name a state tensor gets if the function reads it (default "state.<k>").
  void nameState(const TensorImpl* tensor, std::string name);

  bool symbolic() const override { return options_.symbolic; }
  void onOp(const OpCall& call) override;
  void onValueRead(const Tensor& tensor, std::string_view what, const SourceLoc& loc) override;
  void onAlias(const Tensor& source, const Tensor& alias) override;
  void onGradCleared(const Tensor& leaf) override { gradCleared_.insert(leaf.impl()); }
  void onGradSlot(const Tensor& tensor) override;

  // Runs an exclude_from_trace body on `inputs` with the hook off and records it as a
  // kiln.callback whose results are its outputs. NeedsValues in a symbolic recording.
  std::vector<Tensor> recordCallback(const detail::HostBody& body, std::span<const Tensor> inputs,
                                     const SourceLoc& loc);

  // Ends the recording: `outputs` become the results `kiln.output = N`, followed by one
  // `kiln.state_update` result per state the function wrote, one `kiln.grad_update` per
  // state whose .grad it replaced, and the warm-up's created tensors (Recording). The
  // outputs are released first: what is still alive after that is held elsewhere. The
  // module is verified.
  Recording finish(std::vector<Tensor> outputs, const SourceLoc& loc);

 private:
  struct Bound {
    std::weak_ptr<TensorImpl> impl;  // detects a freed tensor whose address was reused
    mlir::Value value;
  };
  struct AliasGroup;

  mlir::Location locationOf(const SourceLoc& loc);
  mlir::Value valueOf(const Tensor& tensor, const SourceLoc& loc);
  mlir::Value stateArgument(const Tensor& tensor, const SourceLoc& loc);
  void bind(const Tensor& tensor, mlir::Value value);
  mlir::Value recordFactory(const OpCall& call, mlir::Location loc);
  std::shared_ptr<AliasGroup> groupOf(const Tensor& tensor);
  // TraceError for writes the recording cannot express: into an input, into captured
  // constant state, or through memory another live tensor views.
  void checkInPlaceWrite(const Tensor& target, const OpCall& call);
  Device checkOneDevice(const SourceLoc& loc) const;

  mlir::MLIRContext& context_;
  RecorderOptions options_;
  mlir::OpBuilder builder_;
  std::unique_ptr<mlir::Block> body_;
  std::unordered_map<const TensorImpl*, Bound> values_;
  std::unordered_map<const TensorImpl*, std::shared_ptr<AliasGroup>> groups_;
  std::vector<mlir::DictionaryAttr> argAttrs_;
  size_t numInputs_ = 0;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> state_;  // held: bound by reference for later calls
  std::vector<std::string> stateNames_;
  std::vector<mlir::Value> stateValues_;  // the argument (or constant) each state starts as
  std::vector<std::shared_ptr<TensorImpl>> gradAtStart_;  // each state's .grad when first read
  std::set<const TensorImpl*> gradCleared_;  // leaves whose .grad the function cleared
  std::vector<std::pair<Device, SourceLoc>> moves_;  // each device move's target and line
  // The .grad of tensors whose slot the function took before reading them: what their
  // gradAtStart_ is once they become state (by then the function may have replaced it).
  std::unordered_map<const TensorImpl*, std::shared_ptr<TensorImpl>> gradAtSlotAccess_;
  // Results of ops (not in-place writes), by creation order.
  std::unordered_map<const TensorImpl*, std::pair<size_t, std::weak_ptr<TensorImpl>>> created_;
  void noteCreated(const Tensor& tensor);
  std::unordered_map<const TensorImpl*, std::string> names_;
  std::set<const Storage*> writtenStorages_;  // memory the function wrote in place
  std::shared_ptr<runtime::CallbackTable> callbacks_ = std::make_shared<runtime::CallbackTable>();
};

}  // namespace kiln::jit
