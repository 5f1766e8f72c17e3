// The HALIDE backend (see HalideBackend.h).
#include "runtime/halide/HalideBackend.h"

#include "runtime/Executable.h"
#include "runtime/cache/DiskCache.h"
#include "runtime/cpu/MlirBackend.h"
#include "runtime/gpu/GpuCompile.h"
#include "runtime/halide/HalideKernels.h"

namespace kiln::runtime::halide {

namespace {

// HALIDE's kernels for the GPU host schedule, kept in the process's disk cache.
class HalideCudaKernels final : public gpu::CudaKernelCodegen {
 public:
  std::string_view name() const override { return "HALIDE"; }
  std::shared_ptr<const ExternalKernel> compile(mlir::func::FuncOp kernel, bool inPlace, Device device,
                                                std::string& why) const override {
    return cudaKernel(kernel, inPlace, device, DiskCache::global(), why);
  }
  bool severalResultsInPlace() const override { return kCudaSeveralResultsInPlace; }
};

class HalideBackend final : public Backend {
 public:
  std::string_view name() const override { return "HALIDE"; }
  std::string_view summary() const override {
    return "fused kernels by Halide 14 (JIT on the CPU, PTX on CUDA), the rest as MLIR; cpu, cuda";
  }
  bool serves(DeviceType) const override { return true; }
  // The host schedule is the MLIR CPU pipeline's, with its limits.
  std::string unsupported(mlir::func::FuncOp main) const override {
    return cpu::mlirBackend().unsupported(main);
  }
  std::shared_ptr<const Program> compile(mlir::func::FuncOp main, const CallbackTable* callbacks,
                                         const CompileRequest& request, std::string_view op,
                                         const SourceLoc& loc) const override {
    if (request.device.isCUDA()) {
      static const HalideCudaKernels kernels;
      return gpu::compileForCuda(main, callbacks, request, kernels, op, loc);
    }
    return Executable::compile(main, callbacks, op, loc, /*cache=*/nullptr,
                               {.fuse = request.fuse, .fuseMaxInputs = request.fuseMaxInputs},
                               &halideKernels());
  }
};

}  // namespace

const Backend& halideBackend() {
  static const HalideBackend backend;
  return backend;
}

}  // namespace kiln::runtime::halide
