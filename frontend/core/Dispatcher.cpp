// The dispatcher: shape rules, eager kernels or placeholders, autograd recording and the
// tracer's hook, for every op (see kiln/core/Dispatcher.h).
#include "kiln/core/Dispatcher.h"

#include "frontend/core/cuda/Kernels.h"
#include "frontend/core/kernels/Copy.h"
#include "frontend/core/ops/OpTable.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/ProfileEvents.h"

namespace kiln {

namespace {

thread_local DispatchHook* tHook = nullptr;

std::vector<TensorMeta> checkedMetas(const OpDef& op, const std::vector<Tensor>& inputs,
                                     bool symbolic, const SourceLoc& loc) {
  std::vector<TensorMeta> metas;
  metas.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (!x.defined()) throw Error::make(loc, op.name, "operand ", i, " is an undefined tensor");
    if (x.is_placeholder() && !symbolic)
      throw TraceError::make(loc, op.name, "operand ", i, " (shape ", x.sizes(),
                             ") is a symbolic trace placeholder used outside its trace");
    metas.push_back(TensorMeta{x.sizes(), x.dtype(), x.device()});
  }
  // Every op of the table runs on one device; only to() moves values between them.
  if (&op != &ops::kToDevice)
    for (size_t i = 1; i < metas.size(); ++i)
      if (metas[i].device != metas[0].device)
        throw Error::make(loc, op.name, "expects all operands on one device, but operand 0 (shape ",
                          metas[0].shape, ") is on ", metas[0].device, " and operand ", i, " (shape ",
                          metas[i].shape, ") is on ", metas[i].device, "; move one with .to()");
  return metas;
}

// Runs `op`'s eager kernel with the tracer's hook off: a kernel reading its own operands
// (oneDNN arguments, the depthwise kernel's finite-weight check) is the op computing, not
// the user reading a value, so it must neither warn that a value is baked in nor throw in
// a symbolic trace; and whatever ops a kernel dispatches internally are part of this op,
// which the hook records once, as a whole.
// Ops on CUDA tensors run CUDA kernels (frontend/core/cuda); to() copies between devices
// itself. While the profiler records, each run is an "op" event (views run no kernel and
// are not timed; a CUDA kernel is timed as long as its launch takes).
void runKernel(const OpDef& op, const OpArgs& args, std::span<Tensor> outputs) {
  DispatchHookGuard kernelOnly(nullptr);
  const profiler::Stopwatch watch;
  if (!outputs.empty() && outputs[0].device().isCUDA() && &op != &ops::kToDevice)
    cuda::runKernel(op, args, outputs);
  else
    op.kernel(args, outputs);
  if (watch) {
    profiler::Event event = watch.stop(std::string(op.name), "op");
    profiler::describe(event, args.inputs, outputs);
    profiler::record(std::move(event));
  }
}

// A view in a symbolic trace: a placeholder with the strides and offset the eager view
// would have, so that is_contiguous() answers as it does eagerly and what depends on it
// (contiguous() copying or not, reshape viewing or copying) records the same ops. With
// contiguous placeholders, contiguous() of a transposed parameter recorded no copy, the
// autograd graph lost a node, and gradients met in another order than eagerly (issue 19,
// kiln-fuzz seed 108071). A view of a real tensor (state bound by reference) is a
// placeholder too: its values are not the trace's to read.
Tensor placeholderView(const OpDef& op, const Tensor& x, const TensorMeta& out, const Attrs& attrs,
                       const SourceLoc& loc) {
  Tensor source = kernels::aliasOf(x, x.sizes(), x.strides(), x.storage_offset());
  source.impl()->storage = nullptr;
  return op.view(OpArgs{std::span<const Tensor>(&source, 1), attrs, loc}, out);
}

std::vector<Tensor> compute(const OpDef& op, const std::vector<Tensor>& inputs,
                            const std::vector<TensorMeta>& metas, const Attrs& attrs,
                            bool symbolic, const SourceLoc& loc) {
  std::vector<Tensor> outputs;
  // Ops without tensor operands (factories) compute even in a symbolic trace: their
  // values are known, and the tracer records them as constants.
  if (symbolic && !inputs.empty()) {
    if (op.view) {
      outputs.push_back(placeholderView(op, inputs[0], metas[0], attrs, loc));
      return outputs;
    }
    for (const TensorMeta& m : metas) outputs.push_back(detail::emptyTensor(m.shape, m.dtype, m.device, true, loc));
    return outputs;
  }
  OpArgs args{inputs, attrs, loc};
  if (op.view) {
    outputs.push_back(op.view(args, metas[0]));
    return outputs;
  }
  for (const TensorMeta& m : metas) outputs.push_back(detail::emptyTensor(m.shape, m.dtype, m.device, false, loc));
  runKernel(op, args, outputs);
  return outputs;
}

// Whether `op`'s kernel may write straight into `self` (add_, mul_, copy_, fill_ in
// optimizer steps), saving a temporary and a copy: an elementwise kernel, a contiguous
// target, and every input either in other memory or exactly `self` (same storage, offset
// and strides). Anything else (a broadcast view of self's own memory, an overlapping
// slice) computes into a fresh output first.
bool writesInPlaceSafely(const OpDef& op, const Tensor& self, const std::vector<Tensor>& inputs) {
  if (!op.elementwise || !op.kernel || !self.is_contiguous() || !self.impl()->storage)
    return false;
  const TensorImpl& target = *self.impl();
  for (const Tensor& x : inputs) {
    const TensorImpl& in = *x.impl();
    if (in.storage != target.storage) continue;
    if (in.offset != target.offset || in.strides != target.strides || in.shape != target.shape)
      return false;
  }
  return true;
}

bool needsGrad(const OpDef& op, const std::vector<Tensor>& inputs) {
  if (!op.grad || !isGradEnabled()) return false;
  for (const Tensor& x : inputs)
    if (x.requires_grad()) return true;
  return false;
}

void recordGrad(const OpDef& op, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                const Attrs& attrs, const SourceLoc& loc) {
  auto node = std::make_shared<autograd::OpNode>(op, inputs, outputs, attrs, loc);
  for (size_t i = 0; i < outputs.size(); ++i) {
    TensorImpl& out = *outputs[i].impl();
    if (!isFloatingPoint(out.dtype)) continue;
    out.requiresGrad = true;
    out.gradFn = node;
    out.outputNr = int(i);
  }
}

// A copy of x's values that keeps x's autograd identity, so a node that saves it still
// sees the value from before an in-place write.
Tensor snapshot(const Tensor& x, const SourceLoc& loc) {
  Tensor values = detail::emptyTensor(x.sizes(), x.dtype(), x.device(), false, loc);
  kernels::copyValues(values, x);
  auto impl = std::make_shared<TensorImpl>(*x.impl());
  impl->storage = values.impl()->storage;
  impl->strides = values.strides();
  impl->offset = 0;
  return Tensor(std::move(impl));
}

}  // namespace

DispatchHookGuard::DispatchHookGuard(DispatchHook* hook) : previous_(tHook) { tHook = hook; }
DispatchHookGuard::~DispatchHookGuard() { tHook = previous_; }
DispatchHook* currentDispatchHook() { return tHook; }

std::vector<Tensor> dispatch(const OpDef& op, std::vector<Tensor> inputs, const Attrs& attrs,
                             const SourceLoc& loc) {
  DispatchHook* hook = tHook;
  const bool symbolic = hook && hook->symbolic();
  std::vector<TensorMeta> metas = op.shape(op, checkedMetas(op, inputs, symbolic, loc), attrs, loc);
  std::vector<Tensor> outputs = compute(op, inputs, metas, attrs, symbolic, loc);
  // The hook first: the autograd node keeps detached aliases of the outputs, which the
  // tracer can only bind to values it has recorded.
  if (hook) hook->onOp(OpCall{op, inputs, attrs, outputs, loc, false});
  if (needsGrad(op, inputs)) recordGrad(op, inputs, outputs, attrs, loc);
  return outputs;
}

Tensor dispatch1(const OpDef& op, std::vector<Tensor> inputs, const Attrs& attrs,
                 const SourceLoc& loc) {
  return std::move(dispatch(op, std::move(inputs), attrs, loc)[0]);
}

void dispatchInPlace(const OpDef& op, const Tensor& self, std::vector<Tensor> inputs,
                     const Attrs& attrs, const SourceLoc& loc) {
  DispatchHook* hook = tHook;
  const bool symbolic = hook && hook->symbolic();
  const bool grad = needsGrad(op, inputs);
  if (isGradEnabled() && self.is_leaf() && self.requires_grad())
    throw Error::make(loc, op.name, "a leaf tensor that requires grad (shape ", self.sizes(),
                      ") cannot be modified in place; wrap the update in NoGradGuard");
  std::vector<TensorMeta> metas = op.shape(op, checkedMetas(op, inputs, symbolic, loc), attrs, loc);
  if (metas[0].shape != self.sizes() || metas[0].dtype != self.dtype())
    throw ShapeError::make(loc, op.name, "the result (", metas[0].dtype, ", shape ", metas[0].shape,
                           ") cannot be written in place into a ", self.dtype(), " tensor of shape ",
                           self.sizes());
  std::vector<Tensor> computeInputs = inputs;
  if (grad && !symbolic)
    for (Tensor& x : computeInputs)
      if (x.impl()->storage == self.impl()->storage) x = snapshot(x, loc);
  std::vector<Tensor> outputs;
  if (!grad && !symbolic && writesInPlaceSafely(op, self, inputs)) {
    Tensor target = self;
    runKernel(op, OpArgs{inputs, attrs, loc}, std::span(&target, 1));
    outputs.push_back(self);
  } else {
    outputs = compute(op, computeInputs, metas, attrs, symbolic, loc);
    if (grad) recordGrad(op, computeInputs, outputs, attrs, loc);
    if (!symbolic) kernels::copyValues(self, outputs[0]);
  }
  TensorImpl& target = *self.impl();
  ++target.version;
  if (target.storage) target.storage->bumpVersion();
  if (grad) {
    target.requiresGrad = outputs[0].requires_grad();
    target.gradFn = outputs[0].impl()->gradFn;
    target.outputNr = outputs[0].impl()->outputNr;
  }
  if (hook) hook->onOp(OpCall{op, inputs, attrs, std::span(&self, 1), loc, true});
}

}  // namespace kiln
