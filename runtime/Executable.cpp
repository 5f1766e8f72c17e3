// Executable (see Executable.h): compiling with kiln-cpu-pipeline, binding buffers, and the
// kiln_rt_host_op entry point through which compiled code runs host ops eagerly.
#include "runtime/Executable.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include <filesystem>
#include <optional>

#include "dialect/KilnOps.h"
#include "bridge/OpBridge.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Log.h"
#include "kiln/core/Ops.h"
#include "kiln/core/ProfileEvents.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "runtime/CompileStages.h"
#include "runtime/CompileThreads.h"
#include "runtime/HostPlan.h"
#include "runtime/JitEngine.h"
#include "runtime/cache/ProgramKey.h"
#include "runtime/cpu/Parallel.h"
#include "support/BinaryFile.h"

namespace kiln::runtime {

using mlir::kiln::KilnDialect;

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
  std::span<const Tensor> arguments;  // contiguous, in the host function's order
  std::exception_ptr error;
  profiler::Clock::time_point kernelBegin = {};  // of the fusion kernel running now
};

// Compiled code cannot unwind, so a failing host op records its exception, later host
// ops do nothing, and run() rethrows once the program returns.
extern "C" void kiln_rt_host_op(void* runtime, int64_t id, void* const* operands,
                                void* const* results) {
  auto* context = static_cast<CallContext*>(runtime);
  if (context->error) return;
  try {
    context->executable->runHostOp(id, operands, results, context->arguments);
  } catch (...) {
    context->error = std::current_exception();
  }
}

// The profiler's hooks around each fusion kernel call, in programs compiled while it
// records (kiln-lower-host's time-kernels). Kernels run one after another on the calling
// thread, so one start per call suffices.
extern "C" void kiln_rt_kernel_begin(void* runtime, int64_t /*id*/) {
  static_cast<CallContext*>(runtime)->kernelBegin = profiler::Clock::now();
}

extern "C" void kiln_rt_kernel_end(void* runtime, int64_t id) {
  auto* context = static_cast<CallContext*>(runtime);
  if (profiler::enabled())
    context->executable->recordKernel(id, context->kernelBegin, profiler::Clock::now());
}

// Bumped whenever the pipeline's output for the same module changes, so old disk cache
// entries stop matching (buildIdentity() also changes with every build of Kiln).
constexpr std::string_view kPipelineVersion = "kiln-cpu-pipeline/11";

// The build of Kiln this code belongs to (the binary or shared library holding it).
std::string buildIdentity() {
  return DiskCache::fileIdentityOf(reinterpret_cast<const void*>(&kiln_rt_host_op));
}


// Code compiled in this process, by key, for as long as a program holds it, so that
// programs with one key (an nn::Graph class made twice) run one JIT session's code.
class SharedCode {
 public:
  struct Code {
    std::shared_ptr<const JitEngine> engine;
    std::string planned;      // plannedBytecode of the program that compiled it
    std::string compiledFor;  // that program's name
  };
  static SharedCode& global() {
    static SharedCode* table = new SharedCode();  // never destroyed: programs may outlive main
    return *table;
  }
  std::optional<Code> find(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto found = held_.find(key);
    if (found == held_.end()) return std::nullopt;
    std::shared_ptr<const JitEngine> engine = found->second.engine.lock();
    if (!engine) return std::nullopt;
    return Code{std::move(engine), found->second.planned, found->second.compiledFor};
  }
  void add(const std::string& key, Code code) {
    std::lock_guard lock(mutex_);
    std::erase_if(held_, [](const auto& entry) { return entry.second.engine.expired(); });
    held_[key] = {code.engine, std::move(code.planned), std::move(code.compiledFor)};
  }

 private:
  struct Held {
    std::weak_ptr<const JitEngine> engine;
    std::string planned, compiledFor;
  };
  std::mutex mutex_;
  std::map<std::string, Held> held_;
};

}  // namespace

Executable::Executable() = default;
Executable::~Executable() = default;

std::shared_ptr<const Executable> Executable::compile(
    mlir::func::FuncOp main, const runtime::CallbackTable* callbacks, std::string_view op,
    const SourceLoc& loc, const DiskCache* cache, const mlir::kiln::CpuPipelineOptions& options,
    const KernelCodegen* kernels) {
  if (!cache) cache = &DiskCache::global();
  mlir::MLIRContext* context = main.getContext();
  mlir::OwningOpRef<mlir::ModuleOp> module = moduleFor(main, mlir::kiln::registerCpuPipelineDependencies);

  std::shared_ptr<Executable> executable(new Executable());
  executable->name_ = main.getSymName().str();
  executable->callbacks_ = callbacks;
  if (kernels) executable->backend_ = kernels->name();
  // Compiled while the profiler records, fusion kernel calls report their times.
  const mlir::kiln::CpuLoweringOptions lowerings{.timeKernels = profiler::enabled()};
  StageClock clock;
  IrDumps dumps(executable->name_);
  dumps.write("traced", *module);
  nameCanonically(*module);
  const mlir::ArrayAttr traced = sourceLocations(*module);
  const unsigned optLevel = llvmOptLevel(op, loc);
  const std::string key = DiskCache::keyOf({canonicalBytecode(*module), HostTarget::get().key(),
                                            kPipelineVersion, buildIdentity(),
                                            compileOptionsKey(options.fuse, options.fuseMaxInputs, optLevel,
                                                              lowerings.timeKernels),
                                            executable->backend_});
  if (std::optional<SharedCode::Code> shared = SharedCode::global().find(key);
      shared && executable->adopt(shared->planned, traced, kernels, *cache, op, loc)) {
    executable->engine_ = std::move(shared->engine);
    executable->findEntry();
    executable->origin_ = Origin::Shared;
    clock.lap("share");
    if (logEnabled("compile")) {
      std::cerr << "kiln: reused @" << shared->compiledFor << "'s code for @" << executable->name_
                << " (the same program, compiled in this process) in " << clock.report();
      executable->logKernels(kernels);
    }
    return executable;
  }
  if (std::optional<CacheEntry> entry = cache->load(key);
      entry && executable->adopt(entry->module, traced, kernels, *cache, op, loc)) {
    executable->link(entry->object, op, loc);
    SharedCode::global().add(key, {executable->engine_, std::move(entry->module), executable->name_});
    executable->origin_ = Origin::DiskCache;
    clock.lap("load");
    if (logEnabled("compile")) {
      std::cerr << "kiln: loaded @" << executable->name_ << " from the disk cache in "
                << clock.report();
      executable->logKernels(kernels);
    }
    return executable;
  }

  mlir::PassManager planning(context);
  mlir::kiln::CpuPipelineOptions planningOptions = options;
  if (kernels && !kernels->severalResultsInPlace()) planningOptions.severalResultsInPlace = false;
  mlir::kiln::buildCpuPlanningPipeline(planning, planningOptions);
  runStage(planning, *module, "CPU", "planning", dumps, op, loc);
  clock.lap("planning");
  const std::string declined = kernels ? executable->takeKernels(*module, *kernels, *cache) : "";
  if (kernels) clock.lap(kernels->name().data());
  if (dumps.enabled())
    for (const auto& [name, kernel] : executable->externalKernels_)
      dumps.write(std::string(kernels->name()) + "-" + name, kernel->lowered(), ".stmt");
  dumps.write("planned", *module);
  std::string planned = plannedBytecode(*module, traced);
  executable->readPlan(*module, op, loc);
  int64_t kernelCount = 0;
  for (auto func : module->getOps<mlir::func::FuncOp>())
    kernelCount += func->hasAttr(KilnDialect::getKernelAttrName());

  mlir::PassManager lowering(context);
  mlir::kiln::buildCpuLoweringPipeline(lowering, lowerings);
  runStage(lowering, *module, "CPU", "lowering", dumps, op, loc);
  clock.lap("lowering");
  dumps.write("lowered", *module);
  std::string llvmIR;
  std::string object =
      JitEngine::compileObject(*module, op, loc, dumps.enabled() ? &llvmIR : nullptr, optLevel);
  clock.lap("LLVM");
  dumps.write("llvm", llvmIR, ".ll");
  cache->store(key, {planned, object});
  executable->link(object, op, loc);
  SharedCode::global().add(key, {executable->engine_, std::move(planned), executable->name_});
  clock.lap("link");
  if (logEnabled("compile")) {
    std::cerr << "kiln: compiled @" << executable->name_ << " in " << clock.report() << "; "
              << kernelCount << " kernels, " << executable->hostOps_.size() << " host ops, arena "
              << executable->arenaBytes_ << " bytes";
    executable->logKernels(kernels);
    std::cerr << declined;
  }
  return executable;
}

bool Executable::adopt(std::string_view planned, mlir::ArrayAttr traced,
                       const KernelCodegen* kernels, const DiskCache& cache, std::string_view op,
                       const SourceLoc& loc) {
  mlir::OwningOpRef<mlir::ModuleOp> module = readPlanned(planned, traced);
  if (!module) return false;
  if (kernels) retakeKernels(*module, *kernels, cache, op, loc);
  readPlan(*module, op, loc);
  return true;
}

std::string Executable::takeKernels(mlir::ModuleOp planned, const KernelCodegen& kernels,
                                    const DiskCache& cache) {
  // Asked on this thread (they read the host schedule); the generator's compiles, which
  // only read their kernels, on all cores (kernelCompileThreads), applied in order after.
  struct Job {
    mlir::func::FuncOp func;
    bool inPlace = false;
    std::shared_ptr<const ExternalKernel> compiled;
    std::string why;
  };
  std::vector<Job> jobs;
  for (auto func : planned.getOps<mlir::func::FuncOp>()) {
    auto kind = func->getAttrOfType<mlir::StringAttr>(KilnDialect::getKernelAttrName());
    if (kind && kind.getValue() == "fusion") jobs.push_back({func, writesInPlace(planned, func), nullptr, {}});
  }
  forEachOnThreads(jobs.size(), kernelCompileThreads(), [&](size_t i) {
    jobs[i].compiled = kernels.compile(jobs[i].func, jobs[i].inPlace, cache, jobs[i].why);
  });
  std::string declined;
  mlir::Builder builder(planned.getContext());
  for (Job& job : jobs) {
    if (job.compiled) {
      externalKernels_[job.func.getSymName().str()] = std::move(job.compiled);
      job.func->setAttr(KilnDialect::getKernelAttrName(), builder.getStringAttr("external"));
    } else {
      declined += "kiln:   " + std::string(kernels.name()) + " declined @" + job.func.getSymName().str() +
                  " (MLIR compiles it): " + job.why + "\n";
    }
  }
  return declined;
}

void Executable::retakeKernels(mlir::ModuleOp planned, const KernelCodegen& kernels,
                               const DiskCache& cache, std::string_view op, const SourceLoc& loc) {
  std::vector<mlir::func::FuncOp> funcs;
  for (auto func : planned.getOps<mlir::func::FuncOp>()) {
    auto kind = func->getAttrOfType<mlir::StringAttr>(KilnDialect::getKernelAttrName());
    if (kind && kind.getValue() == "external") funcs.push_back(func);
  }
  std::vector<bool> inPlace;
  for (mlir::func::FuncOp func : funcs) inPlace.push_back(writesInPlace(planned, func));
  std::vector<std::shared_ptr<const ExternalKernel>> compiled(funcs.size());
  forEachOnThreads(funcs.size(), kernelCompileThreads(), [&](size_t i) {
    std::string why;
    compiled[i] = kernels.compile(funcs[i], inPlace[i], cache, why);
    if (!compiled[i])
      throw CompileError::make(loc, op, "the disk cache's plan of @", name_, " has kernel @",
                               funcs[i].getSymName().str(), " for ", kernels.name(),
                               ", which now declines it: ", why);
  });
  for (size_t i = 0; i < funcs.size(); ++i)
    externalKernels_[funcs[i].getSymName().str()] = std::move(compiled[i]);
}

void Executable::logKernels(const KernelCodegen* kernels) const {
  if (kernels)
    std::cerr << "; " << externalKernels_.size() << " fused kernels by " << kernels->name();
  std::cerr << "\n";
  for (const auto& [name, kernel] : externalKernels_)
    std::cerr << "kiln:   " << kernels->name() << " " << kernel->describe() << "\n";
}

void Executable::readPlan(mlir::ModuleOp planned, std::string_view op, const SourceLoc& loc) {
  PlannedHost plan = readPlannedHost(planned, std::string(kProgramSymbol), op, loc);
  mlir::func::FuncOp host = plan.host;
  arguments_ = std::move(plan.arguments);
  results_ = std::move(plan.results);
  arenaBytes_ = plan.arenaBytes;
  inPlaceArgument_ = std::move(plan.inPlaceArgument);
  for (mlir::Operation& step : host.getBody().front()) {
    switch (mlir::kiln::hostStepOf(&step)) {
      case mlir::kiln::HostStep::Constant:
        constants_.push_back(
            bridge::tensorFromElements(llvm::cast<mlir::kiln::ConstantOp>(step).getValue(), loc));
        constantPointers_.push_back(constants_.back().rawData());
        break;
      case mlir::kiln::HostStep::Runtime:
        hostOps_.push_back(hostOpFor(&step, loc, externalKernels_));
        break;
      case mlir::kiln::HostStep::Kernel:
        kernelCalls_.push_back({llvm::cast<mlir::func::CallOp>(step).getCallee().str(),
                                metasOf(step.getOperandTypes()), metasOf(step.getResultTypes())});
        break;
      default:
        break;
    }
  }
}

void Executable::link(std::string_view object, std::string_view op, const SourceLoc& loc) {
  engine_ = JitEngine::link(
      object,
      {{"kiln_rt_host_op", reinterpret_cast<void*>(&kiln_rt_host_op)},
       {"kiln_rt_kernel_begin", reinterpret_cast<void*>(&kiln_rt_kernel_begin)},
       {"kiln_rt_kernel_end", reinterpret_cast<void*>(&kiln_rt_kernel_end)},
       {"kiln_rt_parallel_for", reinterpret_cast<void*>(&kiln_rt_parallel_for)},
       // memref.copy between non-contiguous strided memrefs (one-shot bufferization's
       // copy of a strided slice) lowers to a call of MLIR's own runtime helper.
       {"memrefCopy", reinterpret_cast<void*>(&memrefCopy)}},
      op, loc);
  findEntry();
}

void Executable::findEntry() {
  entry_ = reinterpret_cast<Entry>(engine_->lookup("kiln_" + std::string(kProgramSymbol)));
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

namespace {

// Whether `buffer` can take a result of type `meta`: contiguous, of that type, and in no
// argument's storage (the program may still read the arguments while writing results).
bool reusable(const Tensor& buffer, const TensorMeta& meta, std::span<const Tensor> arguments) {
  if (!buffer.defined() || !hasMeta(buffer, meta) || !buffer.is_contiguous() ||
      !buffer.impl()->storage)
    return false;
  return std::none_of(arguments.begin(), arguments.end(), [&](const Tensor& a) {
    return a.impl()->storage == buffer.impl()->storage;
  });
}

}  // namespace

std::vector<Tensor> Executable::run(std::span<const Tensor> arguments, const SourceLoc& loc,
                                    std::span<const Tensor> reuse) const {
  constexpr std::string_view kOp = "run compiled";
  const profiler::Stopwatch watch;
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
  std::vector<bool> reused(results_.size(), false);
  for (size_t k = 0; k < results_.size(); ++k) {
    int64_t state = inPlaceArgument_[k];
    if (state >= 0 && !arguments[size_t(state)].is_contiguous())
      throw Error::make(loc, kOp, "@", name_, " updates argument ", state,
                        " in place, which must be contiguous");
    reused[k] = state < 0 && k < reuse.size() && reusable(reuse[k], results_[k], arguments);
    // Not zero-filled (empty() is): the program writes every element of its results.
    results.push_back(state >= 0 ? arguments[size_t(state)]
                      : reused[k] ? reuse[k]
                                  : detail::emptyTensor(results_[k].shape, results_[k].dtype,
                                                        kCPU, /*placeholder=*/false, loc));
    resultPointers.push_back(results.back().rawData());
  }
  NoGradGuard noGrad;
  DispatchHookGuard noHook(nullptr);
  std::unique_ptr<Arena> arena = takeArena();
  CallContext context{this, dense, nullptr};
  entry_(argumentPointers.data(), resultPointers.data(), arena->data, constantPointers_.data(), &context);
  giveBack(std::move(arena));
  if (context.error) std::rethrow_exception(context.error);
  for (size_t k = 0; k < results.size(); ++k)
    if (inPlaceArgument_[k] >= 0 || reused[k]) markWritten(results[k]);
  if (watch) {
    profiler::Event event = watch.stop("@" + name_, "program");
    profiler::describe(event, arguments, results);
    profiler::record(std::move(event));
  }
  return results;
}

void Executable::recordKernel(int64_t id, profiler::Clock::time_point begin,
                              profiler::Clock::time_point end) const {
  const KernelCall& call = kernelCalls_.at(size_t(id));
  profiler::Event event{call.name, "kernel", begin, end};
  profiler::describe(event, call.operands, call.results);
  profiler::record(std::move(event));
}

void Executable::runHostOp(int64_t id, void* const* operands, void* const* results,
                           std::span<const Tensor> arguments) const {
  runtime::runHostOp(hostOps_.at(size_t(id)), operands, results, arguments, callbacks_, kCPU);
}

}  // namespace kiln::runtime
