// Host ops of a planned schedule (see HostPlan.h).
#include "runtime/HostPlan.h"

#include "mlir/IR/Verifier.h"

#include <algorithm>
#include <typeinfo>

#include "dialect/KilnOps.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "kiln/core/ProfileEvents.h"
#include "kiln/core/Storage.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "passes/Passes.h"

namespace kiln::runtime {

std::string where(mlir::Operation* op) {
  return "'" + op->getName().getStringRef().str() + "' at " + bridge::formatLocation(op->getLoc());
}

std::vector<TensorMeta> metasOf(mlir::TypeRange types) {
  std::vector<TensorMeta> metas;
  for (mlir::Type type : types) metas.push_back(bridge::metaFor(type));
  return metas;
}

bool hasMeta(const Tensor& value, const TensorMeta& meta) {
  return value.defined() && value.dtype() == meta.dtype && value.sizes() == meta.shape;
}

void markWritten(const Tensor& t) {
  TensorImpl& impl = *t.impl();
  ++impl.version;
  if (impl.storage) impl.storage->bumpVersion();
}

Tensor wrapBuffer(void* data, const TensorMeta& meta, Device device) {
  if (device.isCPU()) return from_blob(data, meta.shape, meta.dtype);
  auto impl = std::make_shared<TensorImpl>();
  const int64_t bytes = numel(meta.shape) * int64_t(elementSize(meta.dtype));
  impl->storage = Storage::fromBlob(data, size_t(bytes), {}, device);
  impl->shape = meta.shape;
  impl->strides = contiguousStrides(meta.shape);
  impl->dtype = meta.dtype;
  impl->device = device;
  return Tensor(std::move(impl));
}

PlannedHost readPlannedHost(mlir::ModuleOp planned, const std::string& name, std::string_view op,
                            const SourceLoc& loc) {
  PlannedHost plan;
  plan.host = planned.lookupSymbol<mlir::func::FuncOp>(name);
  auto arenaBytes = plan.host ? plan.host->getAttrOfType<mlir::IntegerAttr>(
                                    mlir::kiln::KilnDialect::getArenaBytesAttrName())
                              : mlir::IntegerAttr();
  if (!arenaBytes)
    throw CompileError::make(loc, op, "kiln-plan-memory did not plan @", name,
                             " (a host schedule must be one block of outlined ops)");
  plan.arenaBytes = arenaBytes.getInt();
  plan.arguments = metasOf(plan.host.getArgumentTypes());
  plan.results = metasOf(plan.host.getResultTypes());
  for (const mlir::kiln::HostResult& result : mlir::kiln::hostResults(plan.host))
    plan.inPlaceArgument.push_back(
        result.placement == mlir::kiln::ResultPlacement::InPlace ? result.stateArgument : -1);
  return plan;
}

mlir::OwningOpRef<mlir::ModuleOp> moduleFor(mlir::func::FuncOp main,
                                            void (*registerDependencies)(mlir::DialectRegistry&)) {
  mlir::DialectRegistry registry;
  registerDependencies(registry);
  main.getContext()->appendDialectRegistry(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(main.getLoc());
  module->push_back(main.clone());
  return module;
}

namespace {

// The op a host step runs: a library kernel's single op, or the step itself.
mlir::Operation* computedBy(mlir::Operation* step) {
  auto call = llvm::dyn_cast<mlir::func::CallOp>(step);
  if (!call) return step;
  auto callee = mlir::SymbolTable::lookupNearestSymbolFrom<mlir::func::FuncOp>(step, call.getCalleeAttr());
  return &callee.getBody().front().front();
}

bool sameMetas(std::span<const TensorMeta> a, std::span<const TensorMeta> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const TensorMeta& x, const TensorMeta& y) {
    return x.shape == y.shape && x.dtype == y.dtype;
  });
}

// Whether `call`'s kernel (not a view) can write straight into buffers of types
// `results`: its shape rule accepts the operands and gives exactly those types.
bool computesInto(const bridge::TableCall& call, std::span<const TensorMeta> operands,
                  std::span<const TensorMeta> results) {
  if (!call.op->kernel || call.op->view) return false;
  try {
    const std::source_location here = std::source_location::current();
    return sameMetas(call.op->shape(*call.op, operands, call.attrs, here), results);
  } catch (const Error&) {
    return false;
  }
}

// The kernel function `step` calls, if it calls one.
mlir::func::FuncOp calleeOf(mlir::Operation* step) {
  auto call = llvm::dyn_cast<mlir::func::CallOp>(step);
  return call ? mlir::SymbolTable::lookupNearestSymbolFrom<mlir::func::FuncOp>(step, call.getCalleeAttr())
              : mlir::func::FuncOp();
}

// Whether the byte ranges [a, a + m) and [b, b + n) overlap.
bool overlaps(const void* a, int64_t m, const void* b, int64_t n) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return m > 0 && n > 0 && x < y + uintptr_t(n) && y < x + uintptr_t(m);
}

int64_t bytesOf(const TensorMeta& meta) { return numel(meta.shape) * int64_t(elementSize(meta.dtype)); }

// Kernels assume their outputs do not overlap their inputs; kiln-plan-memory never
// places them so, and this keeps a plan that did from corrupting values.
bool resultsOverlapOperands(const HostOp& op, void* const* operands, void* const* results) {
  for (size_t k = 0; k < op.results.size(); ++k)
    for (size_t i = 0; i < op.operands.size(); ++i)
      if (overlaps(results[k], bytesOf(op.results[k]), operands[i], bytesOf(op.operands[i])))
        return true;
  return false;
}

}  // namespace

HostOp hostOpFor(mlir::Operation* step, const SourceLoc& loc,
                 const std::map<std::string, std::shared_ptr<const ExternalKernel>>& external) {
  HostOp host;
  host.operands = metasOf(step->getOperandTypes());
  host.results = metasOf(step->getResultTypes());
  if (mlir::func::FuncOp callee = calleeOf(step)) {
    if (auto found = external.find(callee.getSymName().str()); found != external.end()) {
      host.what = "kernel @" + callee.getSymName().str();
      host.name = callee.getSymName().str();
      host.external = found->second;
      return host;
    }
  }
  mlir::Operation* op = computedBy(step);
  host.what = where(op);
  host.name = op->getName().getStringRef().str();
  for (mlir::Value operand : step->getOperands()) {
    auto transpose = operand.getDefiningOp<mlir::kiln::TransposeOp>();
    const bool view = transpose && mlir::kiln::isBufferView(transpose);
    host.viewed.push_back(view ? bridge::metaFor(transpose.getX().getType()).shape : Shape{});
    host.permutations.push_back(view ? Shape(transpose.getPermutation().begin(),
                                             transpose.getPermutation().end())
                                     : Shape{});
    mlir::Value buffer = view ? transpose.getX() : operand;
    auto argument = llvm::dyn_cast<mlir::BlockArgument>(buffer);
    host.arguments.push_back(argument && argument.getOwner() == step->getBlock()
                                 ? int64_t(argument.getArgNumber())
                                 : -1);
  }
  if (auto callback = llvm::dyn_cast<mlir::kiln::CallbackOp>(op)) {
    host.callee = static_cast<int64_t>(callback.getCallee());
  } else {
    host.call = bridge::tableCallFor(op, loc);
    host.intoResults = computesInto(host.call, host.operands, host.results);
  }
  return host;
}

bool writesInPlace(mlir::ModuleOp planned, mlir::func::FuncOp kernel) {
  bool inPlace = false;
  planned.walk([&](mlir::func::CallOp call) {
    if (call.getCallee() != kernel.getSymName()) return;
    if (auto offsets = call->getAttrOfType<mlir::DenseI64ArrayAttr>(
            mlir::kiln::KilnDialect::getOffsetsAttrName()))
      for (int64_t offset : offsets.asArrayRef()) inPlace = inPlace || offset == -2;
  });
  return inPlace;
}

namespace {

void runUntimed(const HostOp& op, void* const* operands, void* const* results,
                std::span<const Tensor> arguments, const CallbackTable* callbacks, Device device) {
  if (op.external) {
    op.external->run(operands, results);
    return;
  }
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const int64_t argument = op.arguments[i];
    const bool view = !op.permutations[i].empty();
    Tensor buffer = argument >= 0
                        ? arguments[size_t(argument)]
                        : wrapBuffer(operands[i],
                                     {view ? op.viewed[i] : op.operands[i].shape, op.operands[i].dtype},
                                     device);
    inputs.push_back(view ? buffer.permute(op.permutations[i]) : buffer);
  }
  // The op's CPU kernel straight into the results; on a device the dispatcher picks the
  // device's kernel, and the result is copied.
  if (op.intoResults && device.isCPU() && !resultsOverlapOperands(op, operands, results)) {
    std::vector<Tensor> outputs;
    for (size_t k = 0; k < op.results.size(); ++k)
      outputs.push_back(from_blob(results[k], op.results[k].shape, op.results[k].dtype));
    const std::source_location here = std::source_location::current();
    op.call.op->kernel(OpArgs{inputs, op.call.attrs, here}, outputs);
    return;
  }
  std::vector<Tensor> outputs;
  if (op.callee >= 0) {
    const HostCallback* callback = callbacks ? callbacks->find(op.callee) : nullptr;
    if (!callback)
      throw Error::make(SourceLoc::current(), "run compiled", op.what, ": callee ", op.callee,
                        " is not in the callback table");
    outputs = (*callback)(inputs);
  } else {
    outputs = dispatch(*op.call.op, inputs, op.call.attrs, SourceLoc::current());
  }
  if (outputs.size() != op.results.size())
    throw Error::make(SourceLoc::current(), "run compiled", op.what, ": computed ", outputs.size(),
                      " results but the op has ", op.results.size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!hasMeta(outputs[k], op.results[k]))
      throw Error::make(SourceLoc::current(), "run compiled", op.what, ": result ", k,
                        " does not have the op's type");
    wrapBuffer(results[k], op.results[k], device).copy_(outputs[k]);
  }
}

// An error of a host op's kernel gains the op and its line in the user's code, as the
// interpreter's do, and keeps its kind: a kernel sees only the runtime's location (a
// collective that timed out would otherwise not say which of the user's lines waited).
void runNamed(const HostOp& op, void* const* operands, void* const* results,
              std::span<const Tensor> arguments, const CallbackTable* callbacks, Device device) {
  constexpr std::string_view kRun = "run compiled";
  try {
    runUntimed(op, operands, results, arguments, callbacks, device);
  } catch (const ShapeError& e) {
    throw ShapeError(kRun, op.what + ": " + e.op() + ": " + e.message(), SourceLoc::current());
  } catch (const TypeError& e) {
    throw TypeError(kRun, op.what + ": " + e.op() + ": " + e.message(), SourceLoc::current());
  } catch (const TraceError& e) {
    throw TraceError(kRun, op.what + ": " + e.op() + ": " + e.message(), SourceLoc::current());
  } catch (const Error& e) {
    if (e.op() == kRun || typeid(e) != typeid(Error)) throw;  // named already, or a kind of its own
    throw Error(kRun, op.what + ": " + e.op() + ": " + e.message(), SourceLoc::current());
  }
}

}  // namespace

void runHostOp(const HostOp& op, void* const* operands, void* const* results,
               std::span<const Tensor> arguments, const CallbackTable* callbacks, Device device) {
  const profiler::Stopwatch watch;
  runNamed(op, operands, results, arguments, callbacks, device);
  if (watch) {
    profiler::Event event = watch.stop(op.name, "host_op");
    profiler::describe(event, op.operands, op.results);
    event.device = device.str();
    profiler::record(std::move(event));
  }
}

std::string shapesText(const std::vector<Shape>& shapes) {
  std::string text;
  for (const Shape& shape : shapes) text += (text.empty() ? "" : ", ") + detail::concat(shape);
  return text;
}

void specializeOrThrow(mlir::func::FuncOp func, const std::vector<Shape>& shapes,
                       mlir::kiln::SpecializedKernels* kernels, std::string_view op,
                       std::string_view what, const SourceLoc& loc) {
  bridge::CapturedDiagnostics diagnostics(func.getContext());
  llvm::SmallVector<llvm::SmallVector<int64_t>> sizes;
  for (const Shape& shape : shapes) sizes.emplace_back(shape.begin(), shape.end());
  if (mlir::failed(mlir::kiln::specializeShapes(func, sizes, kernels)) ||
      mlir::failed(mlir::verify(func->getParentOp())))
    throw ShapeError::make(loc, op, what, ": the arguments' shapes (", shapesText(shapes),
                           ") do not fit the program: ",
                           diagnostics.first().empty() ? "it does not verify" : diagnostics.first());
}

}  // namespace kiln::runtime
