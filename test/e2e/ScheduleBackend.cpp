// KILN_JIT_BACKEND=SCHEDULE, for tests only: the GPU backends' host schedule
// (runtime/schedule/ScheduledProgram) run on the CPU, every fused kernel interpreted. It
// plans as the compiled backends do and follows the plan step by step from C++, so the
// parity suites check on any machine what a GPU program does with its buffers: arena
// offsets, results written in place or copied, views, constants, library ops and
// callbacks. Linking this library registers the backend.
#include "dialect/KilnDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "runtime/Backend.h"
#include "runtime/HostPlan.h"
#include "runtime/cpu/MlirBackend.h"
#include "runtime/schedule/ScheduledProgram.h"

namespace kiln::e2e {
namespace {

class ScheduleBackend final : public runtime::Backend {
 public:
  std::string_view name() const override { return "SCHEDULE"; }
  std::string_view summary() const override {
    return "tests only: the GPU host schedule on the CPU, fused kernels interpreted; cpu";
  }
  bool serves(DeviceType device) const override { return device == DeviceType::CPU; }
  std::string unsupported(mlir::func::FuncOp main) const override {
    return runtime::cpu::mlirBackend().unsupported(main);
  }
  std::shared_ptr<const runtime::Program> compile(mlir::func::FuncOp main,
                                                  const runtime::CallbackTable* callbacks,
                                                  const runtime::CompileRequest& request,
                                                  std::string_view op,
                                                  const SourceLoc& loc) const override {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        runtime::moduleFor(main, mlir::kiln::registerCpuPipelineDependencies);
    mlir::PassManager planning(main.getContext());
    mlir::kiln::buildCpuPlanningPipeline(
        planning, {.fuse = request.fuse, .fuseMaxInputs = request.fuseMaxInputs});
    if (mlir::failed(planning.run(*module)))
      throw CompileError::make(loc, op, "SCHEDULE: the CPU planning pipeline failed");
    runtime::ScheduledProgram::Kernels kernels;
    for (auto func : module->getOps<mlir::func::FuncOp>()) {
      auto kind = func->getAttrOfType<mlir::StringAttr>(mlir::kiln::KilnDialect::getKernelAttrName());
      if (kind && kind.getValue() == "fusion")
        kernels[func.getSymName().str()] = runtime::interpretedKernel(func, kCPU);
    }
    return runtime::ScheduledProgram::create(std::move(module), main.getSymName().str(),
                                             std::move(kernels), callbacks, kCPU, "SCHEDULE", op, loc);
  }
};

const bool registered = [] {
  static const ScheduleBackend backend;
  runtime::addBackendForTesting(backend);
  return true;
}();

}  // namespace
}  // namespace kiln::e2e
