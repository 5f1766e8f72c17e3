// The MLIR CPU backend (see MlirBackend.h).
#include "runtime/cpu/MlirBackend.h"

#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinTypes.h"
#include "runtime/Executable.h"
#include "runtime/cpu/GenericProgram.h"
#include "runtime/gpu/GpuCompile.h"

namespace kiln::runtime::cpu {

namespace {

class MlirBackend final : public Backend {
 public:
  std::string_view name() const override { return "MLIR"; }
  std::string_view summary() const override {
    return "code generator: kiln-cpu-pipeline, LLVM ORC JIT; cpu; kiln-gpu-pipeline (NVPTX) on cuda";
  }
  bool serves(DeviceType device) const override {
    return device == DeviceType::CPU || device == DeviceType::CUDA;
  }

  // The planning pipeline (the CPU's and the GPU's) plans memory for static shapes only.
  std::string unsupported(mlir::func::FuncOp main) const override {
    auto types = main.getArgumentTypes();
    for (size_t k = 0; k < types.size(); ++k) {
      auto ranked = llvm::dyn_cast<mlir::RankedTensorType>(types[k]);
      if (ranked && !ranked.hasStaticShape()) {
        std::string type;
        llvm::raw_string_ostream out(type);
        out << ranked;
        return "argument " + std::to_string(k) + " (" + type +
               ") has dynamic dims, which MLIR does not compile yet";
      }
    }
    return "";
  }

  std::shared_ptr<const Program> compile(mlir::func::FuncOp main, const CallbackTable* callbacks,
                                         const CompileRequest& request, std::string_view op,
                                         const SourceLoc& loc) const override {
    if (request.device.isCUDA())
      return gpu::compileForCuda(main, callbacks, request, gpu::Generator::MLIR, op, loc);
    return Executable::compile(main, callbacks, op, loc, /*cache=*/nullptr,
                               {.fuse = request.fuse, .fuseMaxInputs = request.fuseMaxInputs});
  }

  // On the CPU, kernels lowered once with their `?` dims (GenericProgram.h); CUDA compiles
  // per shape.
  std::shared_ptr<const ShapeGenericProgram> compileGeneric(mlir::func::FuncOp main,
                                                            const CallbackTable* callbacks,
                                                            const CompileRequest& request,
                                                            std::string_view op, const SourceLoc& loc,
                                                            std::string& why) const override {
    if (!request.device.isCPU()) return Backend::compileGeneric(main, callbacks, request, op, loc, why);
    return cpu::compileGeneric(main, callbacks, request, op, loc, why);
  }
};

}  // namespace

const Backend& mlirBackend() {
  static const MlirBackend backend;
  return backend;
}

}  // namespace kiln::runtime::cpu
