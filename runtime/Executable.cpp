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

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <optional>

#include "dialect/KilnOps.h"
#include "bridge/OpBridge.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Log.h"
#include "kiln/core/Ops.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "runtime/JitEngine.h"
#include "runtime/cpu/Parallel.h"
#include "support/BinaryFile.h"

namespace kiln::runtime {

using mlir::kiln::KilnDialect;

// One op of the host schedule that compiled code hands back to the runtime.
struct HostOp {
  std::string what;  // "'kiln.matmul' at model.cc:12:3", for errors
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

// Bumped whenever the pipeline's output for the same module changes, so old disk cache
// entries stop matching (buildIdentity() also changes with every build of Kiln).
constexpr std::string_view kPipelineVersion = "kiln-cpu-pipeline/7";

// The build of Kiln this code belongs to: the path, size and modification time of the
// binary or shared library holding it, so a rebuilt compiler never reuses old entries.
std::string buildIdentity() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(&kiln_rt_host_op), &info) || !info.dli_fname)
    return "unknown";
  struct stat file;
  if (::stat(info.dli_fname, &file) != 0) return info.dli_fname;
  return std::string(info.dli_fname) + ":" + std::to_string(file.st_size) + ":" +
         std::to_string(file.st_mtim.tv_sec) + "." + std::to_string(file.st_mtim.tv_nsec);
}

std::string optionsKey(const mlir::kiln::CpuPipelineOptions& options) {
  return "fuse=" + std::to_string(options.fuse) + ";max-inputs=" +
         std::to_string(options.fuseMaxInputs);
}

std::string bytecodeOf(mlir::Operation* op) {
  std::string bytes;
  llvm::raw_string_ostream out(bytes);
  if (mlir::failed(mlir::writeBytecodeToFile(op, out))) return "";
  return bytes;
}

std::string printed(mlir::Operation* op) {
  std::string text;
  llvm::raw_string_ostream out(text);
  op->print(out, mlir::OpPrintingFlags().enableDebugInfo(true, /*prettyForm=*/true));
  return text;
}

// Writes IR files "<dir>/<function>.<pid>.<program>.<n>-<stage>.mlir": after every stage when
// KILN_DUMP_IR=<dir> is set, and the IR a failing pass left behind in any case (to the
// temporary directory without KILN_DUMP_IR). Files are written atomically.
class IrDumps {
 public:
  explicit IrDumps(std::string name) : name_(std::move(name)) {
    if (const char* dir = std::getenv("KILN_DUMP_IR"); dir && *dir) dir_ = dir;
  }
  bool enabled() const { return !dir_.empty(); }

  void write(std::string_view stage, mlir::Operation* op) {
    if (enabled()) write(stage, printed(op), ".mlir");
  }
  void write(std::string_view stage, const std::string& text, std::string_view suffix) {
    if (enabled()) writeTo(dir_, stage, text, suffix);
  }
  // The IR at a failure, wherever dumps go; returns the file's path.
  std::string writeFailure(std::string_view stage, mlir::Operation* op) {
    std::string dir = enabled() ? dir_ : std::filesystem::temp_directory_path().string();
    return writeTo(dir, std::string(stage) + "-failed", printed(op), ".mlir");
  }

 private:
  std::string writeTo(const std::string& dir, std::string_view stage, const std::string& text,
                      std::string_view suffix) {
    std::error_code ignored;
    std::filesystem::create_directories(dir, ignored);
    std::string path = dir + "/" + name_ + "." + std::to_string(::getpid()) + "." +
                       std::to_string(program_) + "." + std::to_string(count_++) + "-" +
                       std::string(stage) + std::string(suffix);
    support::AtomicFileWriter file(path, "KILN_DUMP_IR", SourceLoc::current());
    file.write(text);
    file.commit();
    return path;
  }

  std::string name_;
  std::string dir_;
  // Programs compiled in one process often share a function name ("main"): each gets
  // its own number so their dumps never overwrite each other.
  uint64_t program_ = nextProgram();
  int count_ = 0;

  static uint64_t nextProgram() {
    static std::atomic<uint64_t> next{0};
    return next++;
  }
};

// Records the first pass that fails.
class FailedPassName final : public mlir::PassInstrumentation {
 public:
  explicit FailedPassName(std::string* name) : name_(name) {}
  void runAfterPassFailed(mlir::Pass* pass, mlir::Operation*) override {
    if (name_->empty()) *name_ = pass->getArgument().empty() ? pass->getName().str() : pass->getArgument().str();
  }

 private:
  std::string* name_;
};

// Runs `pm` on `module`; a failure is a CompileError naming the pass, its first error
// diagnostic and the file holding the IR it failed on.
void runStage(mlir::PassManager& pm, mlir::ModuleOp module, std::string_view stage, IrDumps& dumps,
              std::string_view op, const SourceLoc& loc) {
  std::string first, pass;
  pm.addInstrumentation(std::make_unique<FailedPassName>(&pass));
  mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic& d) {
    if (first.empty() && d.getSeverity() == mlir::DiagnosticSeverity::Error)
      first = bridge::formatLocation(d.getLocation()) + ": " + d.str();
    return mlir::success();
  });
  if (mlir::succeeded(pm.run(module))) return;
  std::string path;
  try {
    path = dumps.writeFailure(stage, module);
  } catch (const Error& e) {
    path = std::string("(not written: ") + e.what() + ")";
  }
  throw CompileError::make(loc, op, "the CPU pipeline failed in pass '",
                           pass.empty() ? "unknown" : pass, "' (", stage, " stage): ",
                           first.empty() ? "no diagnostic" : first, "; the IR is in ", path);
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
  return "'" + op->getName().getStringRef().str() + "' at " + bridge::formatLocation(op->getLoc());
}

std::vector<TensorMeta> metasOf(mlir::TypeRange types) {
  std::vector<TensorMeta> metas;
  for (mlir::Type type : types) metas.push_back(bridge::metaFor(type));
  return metas;
}

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

HostOp hostOpFor(mlir::Operation* step, const SourceLoc& loc,
                 const std::map<std::string, std::shared_ptr<const ExternalKernel>>& external) {
  HostOp host;
  host.operands = metasOf(step->getOperandTypes());
  host.results = metasOf(step->getResultTypes());
  if (mlir::func::FuncOp callee = calleeOf(step)) {
    if (auto found = external.find(callee.getSymName().str()); found != external.end()) {
      host.what = "kernel @" + callee.getSymName().str();
      host.external = found->second;
      return host;
    }
  }
  mlir::Operation* op = computedBy(step);
  host.what = where(op);
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

bool hasMeta(const Tensor& value, const TensorMeta& meta) {
  return value.defined() && value.dtype() == meta.dtype && value.sizes() == meta.shape;
}

}  // namespace

Executable::Executable() = default;
Executable::~Executable() = default;

std::shared_ptr<const Executable> Executable::compile(
    mlir::func::FuncOp main, const runtime::CallbackTable* callbacks, std::string_view op,
    const SourceLoc& loc, const DiskCache* cache, const mlir::kiln::CpuPipelineOptions& options,
    const KernelCodegen* kernels) {
  if (!cache) cache = &DiskCache::global();
  mlir::MLIRContext* context = main.getContext();
  mlir::DialectRegistry registry;
  mlir::kiln::registerCpuPipelineDependencies(registry);
  context->appendDialectRegistry(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(main.getLoc());
  module->push_back(main.clone());

  std::shared_ptr<Executable> executable(new Executable());
  executable->name_ = main.getSymName().str();
  executable->callbacks_ = callbacks;
  if (kernels) executable->backend_ = kernels->name();
  StageClock clock;
  IrDumps dumps(executable->name_);
  dumps.write("traced", *module);
  const std::string key =
      cache->enabled() ? DiskCache::keyOf({bytecodeOf(*module), HostTarget::get().key(),
                                           kPipelineVersion, buildIdentity(),
                                           optionsKey(options), executable->backend_})
                       : "";
  if (std::optional<CacheEntry> entry = cache->load(key)) {
    mlir::ParserConfig config(context);
    mlir::OwningOpRef<mlir::ModuleOp> planned =
        mlir::parseSourceString<mlir::ModuleOp>(entry->module, config);
    if (planned) {
      if (kernels) executable->retakeKernels(*planned, *kernels, op, loc);
      executable->readPlan(*planned, op, loc);
      executable->link(entry->object, op, loc);
      executable->loadedFromCache_ = true;
      clock.lap("load");
      if (logEnabled("compile"))
        std::cerr << "kiln: loaded @" << executable->name_ << " from the disk cache in "
                  << clock.report() << "\n";
      return executable;
    }
  }

  mlir::PassManager planning(context);
  mlir::kiln::buildCpuPlanningPipeline(planning, options);
  runStage(planning, *module, "planning", dumps, op, loc);
  clock.lap("planning");
  const std::string declined = kernels ? executable->takeKernels(*module, *kernels) : "";
  if (kernels) clock.lap(kernels->name().data());
  if (dumps.enabled())
    for (const auto& [name, kernel] : executable->externalKernels_)
      dumps.write(std::string(kernels->name()) + "-" + name, kernel->lowered(), ".stmt");
  dumps.write("planned", *module);
  const std::string plannedBytecode = cache->enabled() ? bytecodeOf(*module) : "";
  executable->readPlan(*module, op, loc);
  int64_t kernelCount = 0;
  for (auto func : module->getOps<mlir::func::FuncOp>())
    kernelCount += func->hasAttr(KilnDialect::getKernelAttrName());

  mlir::PassManager lowering(context);
  mlir::kiln::buildCpuLoweringPipeline(lowering);
  runStage(lowering, *module, "lowering", dumps, op, loc);
  clock.lap("lowering");
  dumps.write("lowered", *module);
  std::string llvmIR;
  std::string object = JitEngine::compileObject(*module, op, loc, dumps.enabled() ? &llvmIR : nullptr);
  clock.lap("LLVM");
  dumps.write("llvm", llvmIR, ".ll");
  cache->store(key, {plannedBytecode, object});
  executable->link(object, op, loc);
  clock.lap("link");
  if (logEnabled("compile")) {
    std::cerr << "kiln: compiled @" << executable->name_ << " in " << clock.report() << "; "
              << kernelCount << " kernels, " << executable->hostOps_.size() << " host ops, arena "
              << executable->arenaBytes_ << " bytes";
    if (kernels)
      std::cerr << "; " << executable->externalKernels_.size() << " fused kernels by "
                << kernels->name();
    std::cerr << "\n";
    for (const auto& [name, kernel] : executable->externalKernels_)
      std::cerr << "kiln:   " << kernels->name() << " " << kernel->describe() << "\n";
    std::cerr << declined;
  }
  return executable;
}

namespace {

// Whether a call of `kernel` in `planned` has a result kiln-plan-memory writes over a state
// argument (offset -2: the state updated in place).
bool writesInPlace(mlir::ModuleOp planned, mlir::func::FuncOp kernel) {
  bool inPlace = false;
  planned.walk([&](mlir::func::CallOp call) {
    if (call.getCallee() != kernel.getSymName()) return;
    if (auto offsets = call->getAttrOfType<mlir::DenseI64ArrayAttr>(KilnDialect::getOffsetsAttrName()))
      for (int64_t offset : offsets.asArrayRef()) inPlace = inPlace || offset == -2;
  });
  return inPlace;
}

}  // namespace

std::string Executable::takeKernels(mlir::ModuleOp planned, const KernelCodegen& kernels) {
  std::string declined;
  mlir::Builder builder(planned.getContext());
  for (auto func : planned.getOps<mlir::func::FuncOp>()) {
    auto kind = func->getAttrOfType<mlir::StringAttr>(KilnDialect::getKernelAttrName());
    if (!kind || kind.getValue() != "fusion") continue;
    std::string why;
    if (std::shared_ptr<const ExternalKernel> kernel = kernels.compile(func, writesInPlace(planned, func), why)) {
      externalKernels_[func.getSymName().str()] = std::move(kernel);
      func->setAttr(KilnDialect::getKernelAttrName(), builder.getStringAttr("external"));
    } else {
      declined += "kiln:   " + std::string(kernels.name()) + " declined @" +
                  func.getSymName().str() + " (MLIR compiles it): " + why + "\n";
    }
  }
  return declined;
}

void Executable::retakeKernels(mlir::ModuleOp planned, const KernelCodegen& kernels,
                               std::string_view op, const SourceLoc& loc) {
  for (auto func : planned.getOps<mlir::func::FuncOp>()) {
    auto kind = func->getAttrOfType<mlir::StringAttr>(KilnDialect::getKernelAttrName());
    if (!kind || kind.getValue() != "external") continue;
    std::string why;
    std::shared_ptr<const ExternalKernel> kernel =
        kernels.compile(func, writesInPlace(planned, func), why);
    if (!kernel)
      throw CompileError::make(loc, op, "the disk cache's plan of @", name_, " has kernel @",
                               func.getSymName().str(), " for ", kernels.name(),
                               ", which now declines it: ", why);
    externalKernels_[func.getSymName().str()] = std::move(kernel);
  }
}

void Executable::readPlan(mlir::ModuleOp planned, std::string_view op, const SourceLoc& loc) {
  auto host = planned.lookupSymbol<mlir::func::FuncOp>(name_);
  auto arenaBytes =
      host ? host->getAttrOfType<mlir::IntegerAttr>(KilnDialect::getArenaBytesAttrName())
           : mlir::IntegerAttr();
  if (!arenaBytes)
    throw CompileError::make(loc, op, "kiln-plan-memory did not plan @", name_,
                             " (a host schedule must be one block of outlined ops)");
  arguments_ = metasOf(host.getArgumentTypes());
  results_ = metasOf(host.getResultTypes());
  arenaBytes_ = arenaBytes.getInt();
  for (const mlir::kiln::HostResult& result : mlir::kiln::hostResults(host))
    inPlaceArgument_.push_back(
        result.placement == mlir::kiln::ResultPlacement::InPlace ? result.stateArgument : -1);
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
      default:
        break;
    }
  }
}

void Executable::link(std::string_view object, std::string_view op, const SourceLoc& loc) {
  engine_ = JitEngine::link(
      object,
      {{"kiln_rt_host_op", reinterpret_cast<void*>(&kiln_rt_host_op)},
       {"kiln_rt_parallel_for", reinterpret_cast<void*>(&kiln_rt_parallel_for)},
       // memref.copy between non-contiguous strided memrefs (one-shot bufferization's
       // copy of a strided slice) lowers to a call of MLIR's own runtime helper.
       {"memrefCopy", reinterpret_cast<void*>(&memrefCopy)}},
      op, loc);
  entry_ = reinterpret_cast<Entry>(engine_->lookup("kiln_" + name_));
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

// Compiled code wrote `t` behind the dispatcher's back: bump its version as an eager
// in-place op would, so caches keyed by version (oneDNN's reordered weights) and
// autograd's saved-tensor checks see the write.
void markWritten(const Tensor& t) {
  TensorImpl& impl = *t.impl();
  ++impl.version;
  if (impl.storage) impl.storage->bumpVersion();
}

}  // namespace

std::vector<Tensor> Executable::run(std::span<const Tensor> arguments, const SourceLoc& loc,
                                    std::span<const Tensor> reuse) const {
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
  return results;
}

void Executable::runHostOp(int64_t id, void* const* operands, void* const* results,
                           std::span<const Tensor> arguments) const {
  const HostOp& op = hostOps_.at(size_t(id));
  if (op.external) {
    op.external->run(operands, results);
    return;
  }
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const int64_t argument = op.arguments[i];
    const bool view = !op.permutations[i].empty();
    Tensor buffer = argument >= 0 ? arguments[size_t(argument)]
                                  : from_blob(operands[i], view ? op.viewed[i] : op.operands[i].shape,
                                              op.operands[i].dtype);
    inputs.push_back(view ? buffer.permute(op.permutations[i]) : buffer);
  }
  if (op.intoResults && !resultsOverlapOperands(op, operands, results)) {
    std::vector<Tensor> outputs;
    for (size_t k = 0; k < op.results.size(); ++k)
      outputs.push_back(from_blob(results[k], op.results[k].shape, op.results[k].dtype));
    const std::source_location here = std::source_location::current();
    op.call.op->kernel(OpArgs{inputs, op.call.attrs, here}, outputs);
    return;
  }
  std::vector<Tensor> outputs;
  if (op.callee >= 0) {
    const runtime::HostCallback* callback = callbacks_ ? callbacks_->find(op.callee) : nullptr;
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
