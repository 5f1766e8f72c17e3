// Compiling for a CUDA device (see GpuCompile.h).
#include "runtime/gpu/GpuCompile.h"

#include <algorithm>
#include <iostream>
#include <vector>

#include "dialect/KilnDialect.h"
#include "frontend/core/cuda/Driver.h"
#include "kiln/core/Log.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "mlir/Parser/Parser.h"
#include "runtime/CompileStages.h"
#include "runtime/CompileThreads.h"
#include "runtime/cache/DiskCache.h"
#include "runtime/HostPlan.h"
#include "runtime/gpu/CudaLaunch.h"
#include "runtime/gpu/MlirGpuKernels.h"
#include "runtime/nvrtc/NvrtcKernels.h"
#include "runtime/schedule/ScheduledProgram.h"

namespace kiln::runtime::gpu {
namespace {

// NVRTC's kernel as one launch: every operand and result by address, a grid-stride grid
// (elementwise) or a block per row, capped (the kernels loop over what the grid leaves).
LaunchPlan nvrtcPlan(const nvrtc::CudaKernel& kernel, mlir::func::FuncOp func) {
  LaunchPlan plan;
  plan.name = func.getSymName().str();
  plan.generator = "NVRTC";
  plan.cudaSource = kernel.source;
  plan.operands = func.getNumArguments();
  plan.schedule = kernel.describe();
  Launch launch;
  launch.entry = kernel.name;
  const int64_t threads = kernel.threads;
  const int64_t blocks = kernel.rows ? kernel.rowCount : (kernel.elements + threads - 1) / threads;
  launch.grid[0] = unsigned(std::clamp<int64_t>(blocks, 0, kernel.rows ? 65535 : 8192));
  launch.block[0] = unsigned(threads);
  const size_t buffers = func.getNumArguments() + func.getNumResults();
  for (size_t b = 0; b < buffers; ++b) launch.params.push_back({KernelParam::Buffer, int64_t(b), {}});
  plan.launches.push_back(std::move(launch));
  return plan;
}

// NVRTC's CUDA C, generated and compiled kernel by kernel.
class NvrtcCodegen final : public CudaKernelCodegen {
 public:
  std::string_view name() const override { return "NVRTC"; }
  std::string_view dumpExtension() const override { return ".cu"; }
  std::shared_ptr<const ExternalKernel> compile(mlir::func::FuncOp kernel, bool inPlace, Device device,
                                                std::string& why) const override {
    std::optional<nvrtc::CudaKernel> generated = nvrtc::generate(kernel, inPlace, why);
    return generated ? cudaKernel(nvrtcPlan(*generated, kernel), device) : nullptr;
  }
};

std::vector<mlir::func::FuncOp> fusionKernels(mlir::ModuleOp module) {
  std::vector<mlir::func::FuncOp> kernels;
  for (auto func : module.getOps<mlir::func::FuncOp>()) {
    auto kind = func->getAttrOfType<mlir::StringAttr>(mlir::kiln::KilnDialect::getKernelAttrName());
    if (kind && kind.getValue() == "fusion" && !func.isExternal()) kernels.push_back(func);
  }
  return kernels;
}

// KILN_DUMP_IR's NVVM IR: the kernel pipeline run again on a copy of `planned` with
// gpu-module-to-binary's `llvm` format, which leaves each GPU module as LLVM bitcode
// (libdevice linked, optimized as for the PTX), written as text, "nvvm-<gpu module>.ll":
// the IR LLVM's NVPTX backend turns into PTX. Only while dumping: it costs a second
// pipeline run.
void dumpNvvm(mlir::ModuleOp planned, mlir::kiln::GpuPipelineOptions options, IrDumps& dumps,
              std::string_view op, const SourceLoc& loc) {
  mlir::OwningOpRef<mlir::ModuleOp> copy(llvm::cast<mlir::ModuleOp>(planned->clone()));
  options.format = "llvm";
  mlir::PassManager pm(planned.getContext());
  mlir::kiln::buildGpuKernelPipeline(pm, options);
  runStage(pm, *copy, "GPU", "kernels (NVVM IR)", dumps, op, loc);
  copy->walk([&](mlir::gpu::BinaryOp binary) {
    for (mlir::Attribute attr : binary.getObjects()) {
      auto object = llvm::dyn_cast<mlir::gpu::ObjectAttr>(attr);
      if (!object) continue;
      llvm::LLVMContext context;
      llvm::Expected<std::unique_ptr<llvm::Module>> module = llvm::parseBitcodeFile(
          llvm::MemoryBufferRef(object.getObject().getValue(), binary.getSymName()), context);
      std::string text;
      llvm::raw_string_ostream out(text);
      if (module) (*module)->print(out, nullptr);
      else out << "; not LLVM bitcode: " << llvm::toString(module.takeError()) << "\n";
      dumps.write("nvvm-" + binary.getSymName().str(), text, ".ll");
    }
  });
}

// Bumped whenever kiln-gpu-pipeline's output for the same module changes.
constexpr std::string_view kGpuPipelineVersion = "kiln-gpu-pipeline/1";

}  // namespace

GpuKernels mlirGpuKernels(mlir::ModuleOp planned, const mlir::kiln::GpuPipelineOptions& options,
                          const DiskCache& cache, IrDumps& dumps, bool& fromCache, std::string_view op,
                          const SourceLoc& loc) {
  mlir::MLIRContext* context = planned.getContext();
  const std::string key =
      cache.enabled()
          ? DiskCache::keyOf({bytecodeOf(planned), options.chip, options.features, options.format,
                              std::to_string(options.blockSize), kGpuPipelineVersion,
                              DiskCache::fileIdentityOf(reinterpret_cast<const void*>(&mlirGpuKernels))})
          : "";
  fromCache = false;
  mlir::OwningOpRef<mlir::ModuleOp> pipelined;
  if (std::optional<CacheEntry> entry = cache.load(key)) {
    mlir::ParserConfig config(context);
    pipelined = mlir::parseSourceString<mlir::ModuleOp>(entry->module, config);
    fromCache = bool(pipelined);
  }
  if (!pipelined) {
    pipelined = mlir::OwningOpRef<mlir::ModuleOp>(llvm::cast<mlir::ModuleOp>(planned->clone()));
    mlir::PassManager pm(context);
    mlir::kiln::buildGpuKernelPipeline(pm, options);
    runStage(pm, *pipelined, "GPU", "kernels", dumps, op, loc);
    if (cache.enabled()) cache.store(key, {bytecodeOf(*pipelined), ""});
    if (dumps.enabled()) dumpNvvm(planned, options, dumps, op, loc);
  }
  dumps.write("gpu", *pipelined);
  return readLaunchPlans(*pipelined);
}

namespace {

// compileForCuda with `codegen`'s kernels, or MLIR's when it is null.
std::shared_ptr<const Program> compile(mlir::func::FuncOp main, const CallbackTable* callbacks,
                                       const CompileRequest& request, const CudaKernelCodegen* codegen,
                                       std::string_view op, const SourceLoc& loc) {
  const Device device = request.device;
  const cuda::DeviceInfo& info = cuda::device(device.index, op, loc);
  const std::string generatorName = codegen ? std::string(codegen->name()) : "MLIR";
  mlir::MLIRContext* context = main.getContext();
  mlir::OwningOpRef<mlir::ModuleOp> module = moduleFor(main, mlir::kiln::registerGpuPipelineDependencies);
  const std::string name = main.getSymName().str();

  StageClock clock;
  IrDumps dumps(name);
  dumps.write("traced", *module);
  mlir::PassManager planning(context);
  mlir::kiln::buildCpuPlanningPipeline(planning,
                                       {.fuse = request.fuse,
                                        .fuseMaxInputs = request.fuseMaxInputs,
                                        .severalResultsInPlace = !codegen || codegen->severalResultsInPlace()});
  runStage(planning, *module, "GPU", "planning", dumps, op, loc);
  clock.lap("planning");
  dumps.write("planned", *module);

  ScheduledProgram::Kernels kernels;
  std::string declined;
  if (codegen) {
    // As Executable::takeKernels: the generator's compiles on all cores, applied in order.
    std::vector<mlir::func::FuncOp> funcs = fusionKernels(*module);
    std::vector<bool> inPlace;
    for (mlir::func::FuncOp func : funcs) inPlace.push_back(writesInPlace(*module, func));
    std::vector<std::shared_ptr<const ExternalKernel>> compiled(funcs.size());
    std::vector<std::string> why(funcs.size());
    forEachOnThreads(funcs.size(), kernelCompileThreads(),
                     [&](size_t i) { compiled[i] = codegen->compile(funcs[i], inPlace[i], device, why[i]); });
    for (size_t i = 0; i < funcs.size(); ++i) {
      const std::string kernel = funcs[i].getSymName().str();
      if (!compiled[i]) {
        declined += "kiln:   " + generatorName + " declined @" + kernel + ": " + why[i] + "\n";
        continue;
      }
      if (dumps.enabled())
        dumps.write(generatorName + "-" + kernel, compiled[i]->lowered(), codegen->dumpExtension());
      kernels[kernel] = std::move(compiled[i]);
    }
    clock.lap("kernels");
  } else {
    mlir::kiln::GpuPipelineOptions options;
    options.chip = info.arch();
    options.features = info.major >= 10 ? "+ptx86" : "+ptx80";
    bool fromCache = false;
    GpuKernels read = mlirGpuKernels(*module, options, DiskCache::global(), dumps, fromCache, op, loc);
    clock.lap(fromCache ? "kiln-gpu-pipeline (from the disk cache)" : "kiln-gpu-pipeline");
    for (auto& [kernel, plan] : read.plans) {
      if (dumps.enabled())
        for (const Launch& launch : plan.launches) dumps.write("ptx-" + launch.entry, launch.image, ".ptx");
      kernels[kernel] = cudaKernel(std::move(plan), device);
    }
    for (const auto& [kernel, why] : read.declined) declined += "kiln:   MLIR: @" + kernel + ": " + why + "\n";
  }
  size_t interpreted = 0;
  for (mlir::func::FuncOp func : fusionKernels(*module))
    if (!kernels.count(func.getSymName().str())) {
      kernels[func.getSymName().str()] = interpretedKernel(func, device);
      ++interpreted;
    }
  std::shared_ptr<const ScheduledProgram> program = ScheduledProgram::create(
      std::move(module), name, kernels, callbacks, device, generatorName, op, loc);
  clock.lap("schedule");
  if (logEnabled("compile")) {
    const ScheduledProgram::Census census = program->census();
    std::cerr << "kiln: compiled @" << name << " for " << device.str() << " (" << info.arch() << ") by "
              << generatorName << " in " << clock.report() << "; " << kernels.size() << " fused kernels ("
              << interpreted << " interpreted), " << census.hostOps << " host ops, arena "
              << program->arenaBytes() << " bytes\n";
    for (const auto& [kernel, compiled] : kernels)
      std::cerr << "kiln:   " << compiled->describe() << "\n";
    std::cerr << declined;
  }
  return program;
}

}  // namespace

std::shared_ptr<const Program> compileForCuda(mlir::func::FuncOp main, const CallbackTable* callbacks,
                                              const CompileRequest& request, Generator generator,
                                              std::string_view op, const SourceLoc& loc) {
  static const NvrtcCodegen nvrtc;
  return compile(main, callbacks, request, generator == Generator::NVRTC ? &nvrtc : nullptr, op, loc);
}

std::shared_ptr<const Program> compileForCuda(mlir::func::FuncOp main, const CallbackTable* callbacks,
                                              const CompileRequest& request, const CudaKernelCodegen& generator,
                                              std::string_view op, const SourceLoc& loc) {
  return compile(main, callbacks, request, &generator, op, loc);
}

}  // namespace kiln::runtime::gpu
