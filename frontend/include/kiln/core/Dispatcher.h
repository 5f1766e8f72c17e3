// The one dispatcher every tensor op goes through, eager or traced, and the narrow hook
// the tracer observes it with (docs/ARCHITECTURE.md §2). Nothing here knows of MLIR.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "kiln/core/OpDef.h"
#include "kiln/core/Tensor.h"

namespace kiln {

// One dispatched op as the hook sees it.
struct OpCall {
  const OpDef& op;
  std::span<const Tensor> inputs;
  const Attrs& attrs;
  std::span<const Tensor> outputs;
  const SourceLoc& loc;
  // outputs[0] is inputs[0] updated in place (add_, copy_, optimizer updates): the tracer
  // records a functional op and rebinds inputs[0] to its result.
  bool inPlace = false;
};

// Implemented by the tracer (frontend/jit). Installed per thread with DispatchHookGuard.
class DispatchHook {
 public:
  virtual ~DispatchHook() = default;
  // While true, ops compute no values: outputs are placeholders (symbolic tracing).
  virtual bool symbolic() const = 0;
  // Every dispatched op, after its outputs exist.
  virtual void onOp(const OpCall& call) = 0;
  // A read of a tensor's values on the host (item(), data_ptr(), printing). A by-value
  // trace bakes the value in and warns; a symbolic trace throws TraceError.
  virtual void onValueRead(const Tensor& tensor, std::string_view what, const SourceLoc& loc) = 0;
  // `alias` is a new handle on `source`'s values made without dispatching an op
  // (detach()): the tracer gives it the same value.
  virtual void onAlias(const Tensor& source, const Tensor& alias) {}
  // `leaf` has no .grad from here on (zero_grad(set_to_none), or it had none): what
  // follows does not depend on an earlier gradient of it.
  virtual void onGradCleared(const Tensor& leaf) {}
  // The function takes `tensor`'s .grad slot (mutable_grad()) and may replace it: a trace
  // keys on the .grad the slot holds now, the one the call started with unless the
  // function replaced it before.
  virtual void onGradSlot(const Tensor& tensor) {}
};

// Installs `hook` for the current thread; restores the previous one on destruction.
class DispatchHookGuard {
 public:
  explicit DispatchHookGuard(DispatchHook* hook);
  ~DispatchHookGuard();
  DispatchHookGuard(const DispatchHookGuard&) = delete;
  DispatchHookGuard& operator=(const DispatchHookGuard&) = delete;

 private:
  DispatchHook* previous_;
};

DispatchHook* currentDispatchHook();

// Runs `op`: checks shapes and dtypes, computes (or describes) the outputs, records an
// autograd node when gradients are needed, and tells the hook.
std::vector<Tensor> dispatch(const OpDef& op, std::vector<Tensor> inputs, const Attrs& attrs,
                             const SourceLoc& loc);

// dispatch for single-output ops.
Tensor dispatch1(const OpDef& op, std::vector<Tensor> inputs, const Attrs& attrs,
                 const SourceLoc& loc);

// Runs `op` on `inputs` and writes its single output into `self` (which may be one of
// the inputs), which must already have the output's shape and dtype: add_, copy_,
// optimizer updates. Writes to leaves that require grad are rejected while grad mode is on.
void dispatchInPlace(const OpDef& op, const Tensor& self, std::vector<Tensor> inputs,
                     const Attrs& attrs, const SourceLoc& loc);

}  // namespace kiln
