// compileGeneric (see GenericProgram.h).
#include "runtime/cpu/GenericProgram.h"

#include <cstring>
#include <iostream>
#include <map>
#include <vector>

#include "bridge/OpBridge.h"
#include "dialect/KilnDialect.h"
#include "dialect/KilnOps.h"
#include "kiln/core/Log.h"
#include "kiln/core/ProfileEvents.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "passes/SpecializeShapes.h"
#include "runtime/CompileStages.h"
#include "runtime/HostPlan.h"
#include "runtime/JitEngine.h"
#include "runtime/cache/ProgramKey.h"
#include "runtime/cpu/Parallel.h"
#include "runtime/schedule/ScheduledProgram.h"

namespace kiln::runtime::cpu {

namespace {

using mlir::kiln::KilnDialect;

// The entry kiln_packed_<kernel> every kernel gets: one pointer per argument of its
// `_mlir_ciface_` wrapper (a memref's descriptor, or the address of a size), then of its
// out-parameters, in order.
using PackedEntry = void (*)(void* const*);
constexpr std::string_view kPackedPrefix = "kiln_packed_";

std::vector<mlir::func::FuncOp> fusionKernelsOf(mlir::ModuleOp module) {
  std::vector<mlir::func::FuncOp> kernels;
  for (auto func : module.getOps<mlir::func::FuncOp>()) {
    auto kind = func->getAttrOfType<mlir::StringAttr>(KilnDialect::getKernelAttrName());
    if (kind && kind.getValue() == "fusion") kernels.push_back(func);
  }
  return kernels;
}

// Adds kiln_packed_<name> for every `_mlir_ciface_<name>` of `names` to `module` (LLVM
// dialect): it loads each argument's pointer from its one array argument and passes it,
// or the i64 it points to, on.
void addPackedEntries(mlir::ModuleOp module, const std::vector<std::string>& names) {
  mlir::MLIRContext* context = module.getContext();
  mlir::OpBuilder builder(context);
  auto pointer = mlir::LLVM::LLVMPointerType::get(context);
  auto type = mlir::LLVM::LLVMFunctionType::get(mlir::LLVM::LLVMVoidType::get(context), {pointer});
  for (const std::string& name : names) {
    auto wrapped = module.lookupSymbol<mlir::LLVM::LLVMFuncOp>("_mlir_ciface_" + name);
    builder.setInsertionPointToEnd(module.getBody());
    auto packed = mlir::LLVM::LLVMFuncOp::create(builder, wrapped.getLoc(),
                                                 std::string(kPackedPrefix) + name, type);
    mlir::Block* entry = packed.addEntryBlock(builder);
    builder.setInsertionPointToStart(entry);
    llvm::SmallVector<mlir::Value> arguments;
    for (auto [i, argument] : llvm::enumerate(wrapped.getArgumentTypes())) {
      mlir::Value slot = mlir::LLVM::GEPOp::create(
          builder, packed.getLoc(), pointer, pointer, entry->getArgument(0),
          llvm::ArrayRef<mlir::LLVM::GEPArg>{int32_t(i)});
      mlir::Value address = mlir::LLVM::LoadOp::create(builder, packed.getLoc(), pointer, slot);
      arguments.push_back(llvm::isa<mlir::LLVM::LLVMPointerType>(argument)
                              ? address
                              : mlir::LLVM::LoadOp::create(builder, packed.getLoc(), argument, address)
                                    .getResult());
    }
    mlir::LLVM::CallOp::create(builder, packed.getLoc(), wrapped, arguments);
    mlir::LLVM::ReturnOp::create(builder, packed.getLoc(), mlir::ValueRange{});
  }
}

// One kernel of a specialization: the compiled entry, called with descriptors of these
// shapes and these sizes.
class DescriptorKernel final : public ExternalKernel {
 public:
  // `isSize[i]`: whether argument i of the kernel (as compiled, with `?` dims) was a size.
  DescriptorKernel(PackedEntry entry, std::string name, const std::vector<bool>& isSize,
                   std::vector<TensorMeta> operands, std::vector<TensorMeta> results,
                   std::vector<int64_t> sizes)
      : entry_(entry), name_(std::move(name)), sizes_(std::move(sizes)), operands_(operands),
        results_(results) {
    size_t tensor = 0, size = 0;
    for (bool isSizeArgument : isSize) {
      if (isSizeArgument) {
        slots_.push_back({Slot::Size, size++, 0});
        continue;
      }
      slots_.push_back({Slot::Operand, tensor, addDescriptor(operands.at(tensor))});
      ++tensor;
    }
    for (size_t k = 0; k < results.size(); ++k) slots_.push_back({Slot::Result, k, addDescriptor(results[k])});
  }

  void run(void* const* operands, void* const* results) const override {
    // A descriptor is {allocated, aligned, offset, sizes..., strides...} as 64-bit words;
    // only the two pointers differ from call to call. On the stack for the usual kernel.
    llvm::SmallVector<int64_t, 128> words(words_.begin(), words_.end());
    llvm::SmallVector<void*, 16> arguments(slots_.size());
    for (size_t i = 0; i < slots_.size(); ++i) {
      const Slot& slot = slots_[i];
      if (slot.kind == Slot::Size) {
        arguments[i] = const_cast<int64_t*>(&sizes_[slot.index]);
        continue;
      }
      void* buffer = slot.kind == Slot::Operand ? operands[slot.index] : results[slot.index];
      std::memcpy(&words[slot.word], &buffer, sizeof(void*));
      std::memcpy(&words[slot.word + 1], &buffer, sizeof(void*));
      arguments[i] = &words[slot.word];
    }
    if (!profiler::enabled()) {
      entry_(arguments.data());
      return;
    }
    profiler::Event event{name_, "kernel", profiler::Clock::now(), {}};
    entry_(arguments.data());
    event.end = profiler::Clock::now();
    profiler::describe(event, operands_, results_);
    profiler::record(std::move(event));
  }
  std::string describe() const override { return "@" + name_ + ": compiled once for `?` dims"; }
  std::string lowered() const override { return ""; }

 private:
  struct Slot {
    enum Kind { Operand, Result, Size } kind;
    size_t index;  // the operand, result or size number
    size_t word;   // where its descriptor starts in words_
  };

  size_t addDescriptor(const TensorMeta& meta) {
    const size_t start = words_.size();
    words_.push_back(0);  // allocated
    words_.push_back(0);  // aligned
    words_.push_back(0);  // offset
    for (int64_t size : meta.shape) words_.push_back(size);
    int64_t stride = 1;
    std::vector<int64_t> strides(meta.shape.size());
    for (size_t d = meta.shape.size(); d-- > 0;) {
      strides[d] = stride;
      stride *= meta.shape[d];
    }
    words_.insert(words_.end(), strides.begin(), strides.end());
    return start;
  }

  PackedEntry entry_;
  std::string name_;
  std::vector<int64_t> sizes_;
  std::vector<TensorMeta> operands_, results_;  // for the profiler
  std::vector<Slot> slots_;
  std::vector<int64_t> words_;
};

// Why `kernel` (specialized from `original`, the kernel with `?` dims) cannot run as the
// original's compiled code ("" if it can): a broadcast whose operand dim is `?` reads it
// along the result's dim, which a size-1 operand dim widened to more would overrun (eager
// code broadcasts it; a trace's duck-sized dims make this rare).
std::string widenedDynamicDim(mlir::func::FuncOp kernel, mlir::func::FuncOp original) {
  llvm::SmallVector<mlir::kiln::BroadcastInDimOp> now, before;
  kernel.walk([&](mlir::kiln::BroadcastInDimOp op) { now.push_back(op); });
  original.walk([&](mlir::kiln::BroadcastInDimOp op) { before.push_back(op); });
  if (now.size() != before.size()) return "its broadcasts changed";
  for (auto [specialized, generic] : llvm::zip_equal(now, before)) {
    auto operand = llvm::cast<mlir::RankedTensorType>(specialized.getX().getType());
    auto dynamic = llvm::cast<mlir::RankedTensorType>(generic.getX().getType());
    auto result = llvm::cast<mlir::RankedTensorType>(specialized.getType());
    for (auto [d, to] : llvm::enumerate(specialized.getDims()))
      if (dynamic.isDynamicDim(int64_t(d)) && operand.getDimSize(int64_t(d)) == 1 &&
          result.getDimSize(to) != 1)
        return where(specialized) + " widens a `?` dim of size 1";
  }
  return "";
}

class GenericCpuProgram final : public ShapeGenericProgram {
 public:
  struct Kernel {
    PackedEntry entry = nullptr;
    std::vector<bool> isSize;
  };

  // `planned`: the program planned under its canonical name (kProgramSymbol), which the
  // host takes back here, so that errors and the profiler name it as the user does.
  GenericCpuProgram(mlir::OwningOpRef<mlir::ModuleOp> planned, std::string name,
                    std::unique_ptr<JitEngine> engine, std::map<std::string, Kernel> kernels,
                    const CallbackTable* callbacks)
      : planned_(std::move(planned)), name_(std::move(name)), engine_(std::move(engine)),
        kernels_(std::move(kernels)), callbacks_(callbacks) {
    planned_->lookupSymbol<mlir::func::FuncOp>(kProgramSymbol).setSymName(name_);
  }

  std::shared_ptr<const Program> instantiate(const std::vector<Shape>& shapes, std::string_view op,
                                             std::string_view what,
                                             const SourceLoc& loc) const override {
    mlir::OwningOpRef<mlir::ModuleOp> module = planned_.get().clone();
    auto host = module->lookupSymbol<mlir::func::FuncOp>(name_);
    mlir::kiln::SpecializedKernels specialized;
    specializeOrThrow(host, shapes, &specialized, op, what, loc);
    mlir::PassManager planning(module->getContext());
    planning.addPass(mlir::kiln::createKilnPlanMemoryPass());
    IrDumps dumps(name_);
    runStage(planning, *module, "CPU", "memory planning", dumps, op, loc);

    ScheduledProgram::Kernels kernels;
    for (mlir::func::FuncOp func : fusionKernelsOf(*module)) {
      const std::string name = func.getSymName().str();
      auto called = specialized.find(name);
      if (called == specialized.end()) continue;  // called by no one
      const Kernel& compiled = kernels_.at(called->second.origin);
      if (std::string why = widenedDynamicDim(
              func, planned_.get().lookupSymbol<mlir::func::FuncOp>(called->second.origin));
          !why.empty()) {
        if (logEnabled("compile"))
          std::cerr << "kiln: " << what << " is compiled for these shapes on their own: " << why << "\n";
        return nullptr;
      }
      kernels[name] = std::make_shared<DescriptorKernel>(
          compiled.entry, name, compiled.isSize, metasOf(func.getArgumentTypes()),
          metasOf(func.getResultTypes()),
          std::vector<int64_t>(called->second.sizes.begin(), called->second.sizes.end()));
    }
    return ScheduledProgram::create(std::move(module), name_, std::move(kernels), callbacks_, kCPU,
                                    "MLIR", op, loc);
  }

 private:
  mlir::OwningOpRef<mlir::ModuleOp> planned_;
  std::string name_;
  std::unique_ptr<JitEngine> engine_;
  std::map<std::string, Kernel> kernels_;
  const CallbackTable* callbacks_;
};

// Bumped whenever the generic pipeline's output for the same module changes, so old disk
// cache entries stop matching (the build's identity is part of the key as well).
constexpr std::string_view kGenericPipelineVersion = "kiln-cpu-generic/3";

// Each fusion kernel of `planned` with which of its arguments are sizes (its entry is
// looked up once the code is linked).
std::map<std::string, GenericCpuProgram::Kernel> kernelsOf(mlir::ModuleOp planned) {
  std::map<std::string, GenericCpuProgram::Kernel> kernels;
  for (mlir::func::FuncOp func : fusionKernelsOf(planned)) {
    GenericCpuProgram::Kernel& kernel = kernels[func.getSymName().str()];
    for (mlir::Type type : func.getArgumentTypes()) kernel.isSize.push_back(type.isIndex());
  }
  return kernels;
}

std::unique_ptr<JitEngine> linkKernels(const std::string& object,
                                       std::map<std::string, GenericCpuProgram::Kernel>& kernels,
                                       std::string_view op, const SourceLoc& loc) {
  std::unique_ptr<JitEngine> engine = JitEngine::link(
      object,
      {{"kiln_rt_parallel_for", reinterpret_cast<void*>(&kiln_rt_parallel_for)},
       {"memrefCopy", reinterpret_cast<void*>(&memrefCopy)}},
      op, loc);
  for (auto& [name, kernel] : kernels)
    kernel.entry = reinterpret_cast<PackedEntry>(engine->lookup(std::string(kPackedPrefix) + name));
  return engine;
}

}  // namespace

std::shared_ptr<const ShapeGenericProgram> compileGeneric(mlir::func::FuncOp main,
                                                          const CallbackTable* callbacks,
                                                          const CompileRequest& request,
                                                          std::string_view op, const SourceLoc& loc,
                                                          std::string& why,
                                                          const DiskCache* diskCache) {
  mlir::MLIRContext* context = main.getContext();
  const std::string name = main.getSymName().str();
  mlir::OwningOpRef<mlir::ModuleOp> planned =
      moduleFor(main, mlir::kiln::registerCpuPipelineDependencies);
  StageClock clock;
  IrDumps dumps(name);
  dumps.write("traced", *planned);
  // As Executable::compile: programs that differ only in names share the key and the code.
  nameCanonically(*planned);
  const mlir::ArrayAttr traced = sourceLocations(*planned);
  const unsigned optLevel = llvmOptLevel(op, loc);
  const DiskCache& cache = diskCache ? *diskCache : DiskCache::global();
  const std::string key =
      cache.enabled()
          ? DiskCache::keyOf({canonicalBytecode(*planned), HostTarget::get().key(),
                              kGenericPipelineVersion,
                              DiskCache::fileIdentityOf(reinterpret_cast<const void*>(&compileGeneric)),
                              compileOptionsKey(request.fuse, request.fuseMaxInputs, optLevel, false)})
          : "";
  if (std::optional<CacheEntry> entry = key.empty() ? std::nullopt : cache.load(key))
    if (mlir::OwningOpRef<mlir::ModuleOp> read = readPlanned(entry->module, traced)) {
      std::map<std::string, GenericCpuProgram::Kernel> kernels = kernelsOf(*read);
      std::unique_ptr<JitEngine> engine = linkKernels(entry->object, kernels, op, loc);
      clock.lap("load");
      if (logEnabled("compile"))
        std::cerr << "kiln: loaded @" << name << " for all sizes from the disk cache in "
                  << clock.report() << "; " << kernels.size() << " kernels with `?` dims\n";
      return std::make_shared<GenericCpuProgram>(std::move(read), name, std::move(engine),
                                                 std::move(kernels), callbacks);
    }

  mlir::PassManager planning(context);
  mlir::kiln::buildCpuPlanningPipeline(
      planning, {.fuse = request.fuse, .fuseMaxInputs = request.fuseMaxInputs, .planMemory = false});
  runStage(planning, *planned, "CPU", "planning", dumps, op, loc);
  clock.lap("planning");
  dumps.write("planned", *planned);

  // The kernels, public and with C interfaces, in a module of their own.
  mlir::OwningOpRef<mlir::ModuleOp> lowered = mlir::ModuleOp::create(main.getLoc());
  std::map<std::string, GenericCpuProgram::Kernel> kernels = kernelsOf(*planned);
  std::vector<std::string> names;
  mlir::Builder builder(context);
  for (const auto& entry : kernels) {
    auto copy = planned->lookupSymbol<mlir::func::FuncOp>(entry.first).clone();
    copy.setPublic();
    copy->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
    lowered->push_back(copy);
    names.push_back(entry.first);
  }
  {
    bridge::CapturedDiagnostics diagnostics(context);
    mlir::PassManager lowering(context);
    mlir::kiln::buildCpuDynamicKernelPipeline(lowering);
    if (mlir::failed(lowering.run(*lowered))) {
      why = "a kernel does not lower with `?` dims: " +
            (diagnostics.first().empty() ? std::string("the kernel pipeline failed") : diagnostics.first());
      return nullptr;
    }
  }
  clock.lap("lowering");
  addPackedEntries(*lowered, names);
  dumps.write("lowered", *lowered);
  std::string object = JitEngine::compileObject(*lowered, op, loc, nullptr, optLevel);
  clock.lap("LLVM");
  if (!key.empty()) cache.store(key, {plannedBytecode(*planned, traced), object});
  std::unique_ptr<JitEngine> engine = linkKernels(object, kernels, op, loc);
  clock.lap("link");
  if (logEnabled("compile"))
    std::cerr << "kiln: compiled @" << name << " once for all sizes in " << clock.report() << "; "
              << kernels.size() << " kernels with `?` dims\n";
  return std::make_shared<GenericCpuProgram>(std::move(planned), name, std::move(engine),
                                             std::move(kernels), callbacks);
}

}  // namespace kiln::runtime::cpu
