// Traced programs compiled for a CUDA device (docs/ARCHITECTURE.md, "Traced programs on the
// GPU"): planned as on the CPU (kiln-plan-memory's schedule and arena), the fused kernels
// compiled by one GPU generator and launched by the host schedule (ScheduledProgram), which
// runs everything else (library ops through cuBLASLt and Kiln's CUDA kernels, callbacks)
// eagerly on the device. A kernel the generator declines runs interpreted on the device.
#pragma once

#include <memory>
#include <string_view>

#include "kiln/core/Error.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "runtime/Backend.h"
#include "runtime/HostCallbacks.h"
#include "runtime/KernelCodegen.h"
#include "runtime/gpu/MlirGpuKernels.h"

namespace kiln::runtime {
class DiskCache;
class IrDumps;
}  // namespace kiln::runtime

namespace kiln::runtime::gpu {

enum class Generator {
  MLIR,   // kiln-gpu-pipeline: NVVM, PTX by LLVM's NVPTX backend, loaded by the driver
  NVRTC,  // each kernel as CUDA C (runtime/nvrtc), compiled by NVRTC to a cubin
};

// A generator that compiles each fused kernel on its own into something the host schedule
// runs on the device's stream: NVRTC's (runtime/nvrtc, through Generator::NVRTC) and
// HALIDE's (runtime/halide). MLIR's compiles the planned module's kernels together.
class CudaKernelCodegen {
 public:
  virtual ~CudaKernelCodegen() = default;
  // "HALIDE", as KILN_JIT_BACKEND spells it.
  virtual std::string_view name() const = 0;
  // The extension of the file KILN_DUMP_IR writes of each kernel's ExternalKernel::lowered()
  // ("<name>-<kernel><extension>").
  virtual std::string_view dumpExtension() const { return ".stmt"; }
  // `kernel` (a kiln.kernel = "fusion" function) for `device`, or null with `why` set
  // (the host schedule then interprets it on the device). `inPlace` as KernelCodegen's.
  // Called from several threads at once, as KernelCodegen's; touches no device (code is
  // loaded at a kernel's first run).
  virtual std::shared_ptr<const ExternalKernel> compile(mlir::func::FuncOp kernel, bool inPlace, Device device,
                                                        std::string& why) const = 0;
  // As KernelCodegen's: false plans no result of a kernel of several results in place.
  virtual bool severalResultsInPlace() const { return true; }
};

// The MLIR generator's kernels for a planned module (unchanged): kiln-gpu-pipeline's
// kernel half for `options.chip`, read into launch plans. The pipelined module (kernels and
// their PTX) is kept in `cache` keyed by the planned module, the chip, the features and this
// build of Kiln, so a later process parses it instead of running LLVM's NVPTX backend;
// `fromCache` says which happened. No device is needed. With KILN_DUMP_IR (`dumps`
// enabled), a compile (not a cache hit) also writes each GPU module's NVVM IR, the
// optimized LLVM IR the NVPTX backend turns into PTX ("nvvm-<module>.ll").
GpuKernels mlirGpuKernels(mlir::ModuleOp planned, const mlir::kiln::GpuPipelineOptions& options,
                          const DiskCache& cache, IrDumps& dumps, bool& fromCache, std::string_view op,
                          const SourceLoc& loc);

// `main` compiled for `request.device` (a CUDA device, which must be present: its compute
// capability picks the chip). Failures are CompileErrors naming `op`.
std::shared_ptr<const Program> compileForCuda(mlir::func::FuncOp main, const CallbackTable* callbacks,
                                              const CompileRequest& request, Generator generator,
                                              std::string_view op, const SourceLoc& loc);
// The same with `generator`'s kernels.
std::shared_ptr<const Program> compileForCuda(mlir::func::FuncOp main, const CallbackTable* callbacks,
                                              const CompileRequest& request, const CudaKernelCodegen& generator,
                                              std::string_view op, const SourceLoc& loc);

}  // namespace kiln::runtime::gpu
