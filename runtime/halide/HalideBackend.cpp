// The HALIDE backend (see HalideBackend.h).
#include "runtime/halide/HalideBackend.h"

#include "runtime/Executable.h"
#include "runtime/cpu/MlirBackend.h"
#include "runtime/halide/HalideKernels.h"

namespace kiln::runtime::halide {

namespace {

class HalideBackend final : public Backend {
 public:
  std::string_view name() const override { return "HALIDE"; }
  std::string_view summary() const override {
    return "fused kernels by Halide 14's JIT, the rest as MLIR; cpu";
  }
  bool serves(DeviceType device) const override { return device == DeviceType::CPU; }
  // The host schedule is the MLIR CPU pipeline's, with its limits.
  std::string unsupported(mlir::func::FuncOp main) const override {
    return cpu::mlirBackend().unsupported(main);
  }
  std::shared_ptr<const Program> compile(mlir::func::FuncOp main, const CallbackTable* callbacks,
                                         const CompileRequest& request, std::string_view op,
                                         const SourceLoc& loc) const override {
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
