// The NVRTC backend (see NvrtcBackend.h).
#include "runtime/nvrtc/NvrtcBackend.h"

#include "runtime/cpu/MlirBackend.h"
#include "runtime/gpu/GpuCompile.h"

namespace kiln::runtime::nvrtc {

namespace {

class NvrtcBackend final : public Backend {
 public:
  std::string_view name() const override { return "NVRTC"; }
  std::string_view summary() const override {
    return "fused kernels as CUDA C compiled by NVRTC, the rest as MLIR's GPU host schedule; cuda";
  }
  bool serves(DeviceType device) const override { return device == DeviceType::CUDA; }
  // The host schedule is planned as MLIR's, with its limits.
  std::string unsupported(mlir::func::FuncOp main) const override {
    return cpu::mlirBackend().unsupported(main);
  }
  std::shared_ptr<const Program> compile(mlir::func::FuncOp main, const CallbackTable* callbacks,
                                         const CompileRequest& request, std::string_view op,
                                         const SourceLoc& loc) const override {
    return gpu::compileForCuda(main, callbacks, request, gpu::Generator::NVRTC, op, loc);
  }
};

}  // namespace

const Backend& nvrtcBackend() {
  static const NvrtcBackend backend;
  return backend;
}

}  // namespace kiln::runtime::nvrtc
