// The INTERP backend (see InterpBackend.h).
#include "runtime/interp/InterpBackend.h"

#include "runtime/interp/Interpreter.h"

namespace kiln::interp {

namespace {

class InterpretedProgram final : public runtime::Program {
 public:
  InterpretedProgram(mlir::func::FuncOp main, const runtime::CallbackTable* callbacks)
      : main_(main), callbacks_(callbacks) {}

  std::vector<Tensor> run(std::span<const Tensor> arguments, const SourceLoc& loc,
                          std::span<const Tensor> /*reuse*/) const override {
    return interpretVerified(main_, arguments, callbacks_, loc);
  }
  std::string_view backend() const override { return "INTERP"; }
  bool compiled() const override { return false; }

 private:
  mlir::func::FuncOp main_;
  const runtime::CallbackTable* callbacks_;
};

class InterpBackend final : public runtime::Backend {
 public:
  std::string_view name() const override { return "INTERP"; }
  std::string_view summary() const override {
    return "reference interpreter over the eager kernels; cpu, cuda";
  }
  // On a CUDA device it runs the device's eager kernels (its constants copied there).
  bool serves(DeviceType device) const override {
    return device == DeviceType::CPU || device == DeviceType::CUDA;
  }
  std::string unsupported(mlir::func::FuncOp) const override { return ""; }
  std::shared_ptr<const runtime::Program> compile(mlir::func::FuncOp main,
                                                  const runtime::CallbackTable* callbacks,
                                                  const runtime::CompileRequest&,
                                                  std::string_view, const SourceLoc&) const override {
    return std::make_shared<InterpretedProgram>(main, callbacks);
  }
};

}  // namespace

const runtime::Backend& interpBackend() {
  static const InterpBackend backend;
  return backend;
}

}  // namespace kiln::interp
