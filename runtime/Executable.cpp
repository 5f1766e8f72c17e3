// Executable (see Executable.h): compiling with kiln-cpu-pipeline, binding buffers, and the
// kiln_rt_host_op entry point through which compiled code runs host ops eagerly.
#include "runtime/Executable.h"

#include <chrono>
#include <cstdlib>
#include <exception>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "dialect/KilnOps.h"
#include "frontend/jit/OpBridge.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Log.h"
#include "kiln/core/Ops.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "runtime/JitEngine.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::runtime {

// One op of the host schedule that compiled code hands back to the runtime.
struct HostOp {
  std::string what;  // "'kiln.matmul' at model.cc:12:3", for errors
  jit::TableCall call;
  int64_t callee = -1;  // for kiln.callback
  std::vector<TensorMeta> operands;
  std::vector<TensorMeta> results;
};

struct Executable::Arena {
  explicit Arena(int64_t bytes)
      : data(static_cast<char*>(std::aligned_alloc(64, size_t((std::max<int64_t>(bytes, 1) + 63) / 64 * 64)))) {
    if (!data) throw std::bad_alloc();
  }
  ~Arena() { std::free(data); }
  char* data;
};

namespace {

// What compiled code passes as its `runtime` pointer.
struct CallContext {
  const Executable* executable;
  std::exception_ptr error;
};

// Compiled code cannot unwind, so a failing host op records its exception, later host
// ops do nothing, and run() rethrows once the program returns.
extern "C" void kiln_rt_host_op(void* runtime, int64_t id, void* const* operands,
                                void* const* results) {
  auto* context = static_cast<CallContext*>(runtime);
  if (context->error) return;
  try {
    context->executable->runHostOp(id, operands, results);
  } catch (...) {
    context->error = std::current_exception();
  }
}

// Runs `pm` on `module`; a failure is a CompileError with the first error diagnostic.
void runStage(mlir::PassManager& pm, mlir::ModuleOp module, std::string_view stage,
              std::string_view op, const SourceLoc& loc) {
  std::string first;
  mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic& d) {
    if (first.empty() && d.getSeverity() == mlir::DiagnosticSeverity::Error)
      first = jit::formatLocation(d.getLocation()) + ": " + d.str();
    return mlir::success();
  });
  if (mlir::failed(pm.run(module)))
    throw CompileError::make(loc, op, "the CPU pipeline failed in ", stage, ": ",
                             first.empty() ? "no diagnostic" : first);
}

// Per-stage wall times for KILN_LOG=compile: "12.3 ms (planning 1.0, lowering 4.1, ...)".
class StageClock {
 public:
  void lap(const char* stage) {
    auto now = std::chrono::steady_clock::now();
    laps_.emplace_back(stage, std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }
  std::string report() const {
    double total = 0;
    std::ostringstream parts;
    for (const auto& [stage, ms] : laps_) {
      total += ms;
      parts << (parts.tellp() > 0 ? ", " : "") << stage << " " << std::fixed << std::setprecision(1) << ms;
    }
    std::ostringstream out;
    out << std::fixed << std::setprecision(1) << total << " ms (" << parts.str() << ")";
    return out.str();
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::vector<std::pair<const char*, double>> laps_;
};

std::string where(mlir::Operation* op) {
  return "'" + op->getName().getStringRef().str() + "' at " + jit::formatLocation(op->getLoc());
}

std::vector<TensorMeta> metasOf(mlir::TypeRange types) {
  std::vector<TensorMeta> metas;
  for (mlir::Type type : types) metas.push_back(jit::metaFor(type));
  return metas;
}

// The op a host step runs: a library kernel's single op, or the step itself.
mlir::Operation* computedBy(mlir::Operation* step) {
  auto call = llvm::dyn_cast<mlir::func::CallOp>(step);
  if (!call) return step;
  auto callee = mlir::SymbolTable::lookupNearestSymbolFrom<mlir::func::FuncOp>(step, call.getCalleeAttr());
  return &callee.getBody().front().front();
}

HostOp hostOpFor(mlir::Operation* step, const SourceLoc& loc) {
  mlir::Operation* op = computedBy(step);
  HostOp host{where(op), {}, -1, metasOf(step->getOperandTypes()), metasOf(step->getResultTypes())};
  if (auto callback = llvm::dyn_cast<mlir::kiln::CallbackOp>(op))
    host.callee = static_cast<int64_t>(callback.getCallee());
  else
    host.call = jit::tableCallFor(op, loc);
  return host;
}

bool hasMeta(const Tensor& value, const TensorMeta& meta) {
  return value.defined() && value.dtype() == meta.dtype && value.sizes() == meta.shape;
}

}  // namespace

Executable::Executable() = default;
Executable::~Executable() = default;

std::shared_ptr<const Executable> Executable::compile(mlir::func::FuncOp main,
                                                      const interp::CallbackTable* callbacks,
                                                      std::string_view op, const SourceLoc& loc) {
  mlir::MLIRContext* context = main.getContext();
  mlir::DialectRegistry registry;
  mlir::kiln::registerCpuPipelineDependencies(registry);
  context->appendDialectRegistry(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(main.getLoc());
  module->push_back(main.clone());

  StageClock clock;
  mlir::PassManager planning(context);
  mlir::kiln::buildCpuPlanningPipeline(planning);
  runStage(planning, *module, "planning (simplify, fuse, outline, plan memory)", op, loc);
  clock.lap("planning");

  std::shared_ptr<Executable> executable(new Executable());
  executable->name_ = main.getSymName().str();
  executable->callbacks_ = callbacks;
  auto host = module->lookupSymbol<mlir::func::FuncOp>(executable->name_);
  executable->arguments_ = metasOf(host.getArgumentTypes());
  executable->results_ = metasOf(host.getResultTypes());
  auto arenaBytes = host->getAttrOfType<mlir::IntegerAttr>("kiln.arena_bytes");
  if (!arenaBytes)
    throw CompileError::make(loc, op, "kiln-plan-memory did not plan @", executable->name_,
                             " (a host schedule must be one block of outlined ops)");
  executable->arenaBytes_ = arenaBytes.getInt();
  for (const mlir::kiln::HostResult& result : mlir::kiln::hostResults(host))
    executable->inPlaceArgument_.push_back(
        result.placement == mlir::kiln::ResultPlacement::InPlace ? result.stateArgument : -1);
  for (mlir::Operation& step : host.getBody().front()) {
    switch (mlir::kiln::hostStepOf(&step)) {
      case mlir::kiln::HostStep::Constant:
        executable->constants_.push_back(
            jit::tensorFromElements(llvm::cast<mlir::kiln::ConstantOp>(step).getValue(), loc));
        executable->constantPointers_.push_back(executable->constants_.back().rawData());
        break;
      case mlir::kiln::HostStep::Runtime:
        executable->hostOps_.push_back(hostOpFor(&step, loc));
        break;
      default:
        break;
    }
  }

  int64_t kernels = 0;
  for (auto func : module->getOps<mlir::func::FuncOp>())
    kernels += func->hasAttr("kiln.kernel");
  mlir::PassManager lowering(context);
  mlir::kiln::buildCpuLoweringPipeline(lowering);
  runStage(lowering, *module, "lowering to LLVM", op, loc);
  clock.lap("lowering");

  std::string object = JitEngine::compileObject(*module, op, loc);
  clock.lap("LLVM");
  executable->engine_ = JitEngine::link(
      object, {{"kiln_rt_host_op", reinterpret_cast<void*>(&kiln_rt_host_op)}}, op, loc);
  executable->entry_ = reinterpret_cast<Entry>(executable->engine_->lookup("kiln_" + executable->name_));
  clock.lap("link");
  if (logEnabled("compile"))
    std::cerr << "kiln: compiled @" << executable->name_ << " in " << clock.report() << "; "
              << kernels << " kernels, " << executable->hostOps_.size() << " host ops, arena "
              << executable->arenaBytes_ << " bytes\n";
  return executable;
}

std::unique_ptr<Executable::Arena> Executable::takeArena() const {
  {
    std::lock_guard lock(arenaMutex_);
    if (!arenas_.empty()) {
      std::unique_ptr<Arena> arena = std::move(arenas_.back());
      arenas_.pop_back();
      return arena;
    }
  }
  return std::make_unique<Arena>(arenaBytes_);
}

void Executable::giveBack(std::unique_ptr<Arena> arena) const {
  std::lock_guard lock(arenaMutex_);
  arenas_.push_back(std::move(arena));
}

std::vector<Tensor> Executable::run(std::span<const Tensor> arguments, const SourceLoc& loc) const {
  constexpr std::string_view kOp = "run compiled";
  if (arguments.size() != arguments_.size())
    throw Error::make(loc, kOp, "@", name_, " takes ", arguments_.size(), " arguments but was given ",
                      arguments.size());
  std::vector<void*> argumentPointers;
  std::vector<Tensor> dense;  // keeps contiguous copies alive
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Tensor& value = arguments[i];
    if (!hasMeta(value, arguments_[i]))
      throw Error::make(loc, kOp, "@", name_, " argument ", i, " is ",
                        value.defined() ? detail::concat(value.dtype(), " ", value.sizes()) : "undefined",
                        " but the program takes ", arguments_[i].dtype, " ", arguments_[i].shape);
    dense.push_back(value.contiguous());
    argumentPointers.push_back(dense.back().rawData());
  }
  std::vector<Tensor> results;
  std::vector<void*> resultPointers;
  for (size_t k = 0; k < results_.size(); ++k) {
    int64_t state = inPlaceArgument_[k];
    if (state >= 0 && !arguments[size_t(state)].is_contiguous())
      throw Error::make(loc, kOp, "@", name_, " updates argument ", state,
                        " in place, which must be contiguous");
    results.push_back(state >= 0 ? arguments[size_t(state)] : empty(results_[k].shape, results_[k].dtype));
    resultPointers.push_back(results.back().rawData());
  }
  NoGradGuard noGrad;
  DispatchHookGuard noHook(nullptr);
  std::unique_ptr<Arena> arena = takeArena();
  CallContext context{this, nullptr};
  entry_(argumentPointers.data(), resultPointers.data(), arena->data, constantPointers_.data(), &context);
  giveBack(std::move(arena));
  if (context.error) std::rethrow_exception(context.error);
  return results;
}

void Executable::runHostOp(int64_t id, void* const* operands, void* const* results) const {
  const HostOp& op = hostOps_.at(size_t(id));
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < op.operands.size(); ++i)
    inputs.push_back(from_blob(operands[i], op.operands[i].shape, op.operands[i].dtype));
  std::vector<Tensor> outputs;
  if (op.callee >= 0) {
    const interp::HostCallback* callback = callbacks_ ? callbacks_->find(op.callee) : nullptr;
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
    from_blob(results[k], op.results[k].shape, op.results[k].dtype).copy_(outputs[k]);
  }
}

}  // namespace kiln::runtime
