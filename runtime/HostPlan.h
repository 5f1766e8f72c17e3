// What every runner of a planned host schedule shares (docs/ARCHITECTURE.md §7): the host
// ops it hands back to the runtime (library kernels, callbacks, kernels a generator
// compiled), read once from the planned function, and running one on raw buffers of any
// device. Executable runs them from compiled host code (kiln_rt_host_op); ScheduledProgram
// (runtime/schedule) from its C++ schedule of a GPU program.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bridge/OpBridge.h"
#include "kiln/core/Device.h"
#include "kiln/core/Error.h"
#include "kiln/core/OpDef.h"
#include "kiln/core/Tensor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/TypeRange.h"
#include "passes/SpecializeShapes.h"
#include "runtime/HostCallbacks.h"
#include "runtime/KernelCodegen.h"

namespace kiln::runtime {

// One op of the host schedule that compiled code hands back to the runtime.
struct HostOp {
  std::string what;  // "'kiln.matmul' at model.cc:12:3", for errors
  std::string name;  // "kiln.matmul", or the kernel's function: the profiler's event name
  bridge::TableCall call;
  int64_t callee = -1;  // for kiln.callback
  std::vector<TensorMeta> operands;
  std::vector<TensorMeta> results;
  // Per operand, the host function's argument it is or views (-1: a value computed in
  // the call). Such operands are passed as the caller's tensors, so caches keyed by
  // storage (oneDNN's reordered weights) hit across calls.
  std::vector<int64_t> arguments;
  // Per operand read through a transpose that kiln-plan-memory left a view
  // (mlir::kiln::isBufferView): the buffer holds the transpose's operand, of shape
  // `viewed[i]`, and the op reads it permuted by `permutations[i]`; empty otherwise.
  std::vector<Shape> viewed;
  std::vector<Shape> permutations;
  // The op's kernel computes straight into the result buffers (its shape rule gives
  // exactly the results' types), saving a temporary and a copy per call.
  bool intoResults = false;
  // A fused kernel compiled by a KernelCodegen: run on the raw buffers.
  std::shared_ptr<const ExternalKernel> external;
};

// What a runner reads of the host function `name` of a module kiln-plan-memory planned: a
// CompileError naming `op` where it was not planned.
struct PlannedHost {
  mlir::func::FuncOp host;
  int64_t arenaBytes = 0;
  std::vector<TensorMeta> arguments, results;
  std::vector<int64_t> inPlaceArgument;  // per result: the state argument it is, or -1
};
PlannedHost readPlannedHost(mlir::ModuleOp planned, const std::string& name, std::string_view op,
                            const SourceLoc& loc);

// `main` cloned into a module of its own, for a pipeline whose dialects
// `registerDependencies` registers in main's context.
mlir::OwningOpRef<mlir::ModuleOp> moduleFor(mlir::func::FuncOp main,
                                            void (*registerDependencies)(mlir::DialectRegistry&));

// The host op `step` (a Runtime step of mlir::kiln::hostStepOf) runs; a call of a kernel in
// `external` runs that kernel.
HostOp hostOpFor(mlir::Operation* step, const SourceLoc& loc,
                 const std::map<std::string, std::shared_ptr<const ExternalKernel>>& external);

// Whether a call of `kernel` in `planned` has a result kiln-plan-memory writes over a state
// argument (offset -2: the state updated in place), as a KernelCodegen is told.
bool writesInPlace(mlir::ModuleOp planned, mlir::func::FuncOp kernel);

// Runs `op` on raw buffers of `device` (host addresses, or device addresses for CUDA):
// `operands` per operand (a transposed view's source), `results` per result. Operands that
// are arguments are read as `arguments[i]` (contiguous, in the host function's order).
// Callbacks are looked up in `callbacks`. While the profiler records, a "host_op" event.
void runHostOp(const HostOp& op, void* const* operands, void* const* results,
               std::span<const Tensor> arguments, const CallbackTable* callbacks, Device device);

// A tensor of `meta`'s shape and dtype over `data` (contiguous, not owned) on `device`.
Tensor wrapBuffer(void* data, const TensorMeta& meta, Device device);

std::vector<TensorMeta> metasOf(mlir::TypeRange types);
bool hasMeta(const Tensor& value, const TensorMeta& meta);

// Compiled code wrote `t` behind the dispatcher's back: bump its version as an eager
// in-place op would, so caches keyed by version (oneDNN's reordered weights) and
// autograd's saved-tensor checks see the write.
void markWritten(const Tensor& t);

// "[64, 784], [64]": argument shapes in messages.
std::string shapesText(const std::vector<Shape>& shapes);

// `func` (in a module of its own) specialized in place to argument `shapes`
// (mlir::kiln::specializeShapes, `kernels` as it takes them) and its module verified; a
// ShapeError naming `op`, `what` and the first op the shapes do not fit.
void specializeOrThrow(mlir::func::FuncOp func, const std::vector<Shape>& shapes,
                       mlir::kiln::SpecializedKernels* kernels, std::string_view op,
                       std::string_view what, const SourceLoc& loc);

// "'kiln.add' at model.cc:3:5", for errors.
std::string where(mlir::Operation* op);

}  // namespace kiln::runtime
