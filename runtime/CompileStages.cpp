// Compile stages (see CompileStages.h).
#include "runtime/CompileStages.h"

#include "bridge/OpBridge.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"

namespace kiln::runtime {

std::string printed(mlir::Operation* op) {
  std::string text;
  llvm::raw_string_ostream out(text);
  op->print(out, mlir::OpPrintingFlags().enableDebugInfo(true, /*prettyForm=*/true));
  return text;
}


std::string bytecodeOf(mlir::Operation* op) {
  std::string bytes;
  llvm::raw_string_ostream out(bytes);
  if (mlir::failed(mlir::writeBytecodeToFile(op, out))) return "";
  return bytes;
}

namespace {

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


}  // namespace

void runStage(mlir::PassManager& pm, mlir::ModuleOp module, std::string_view pipeline,
              std::string_view stage, IrDumps& dumps, std::string_view op, const SourceLoc& loc) {
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
  throw CompileError::make(loc, op, "the ", pipeline, " pipeline failed in pass '",
                           pass.empty() ? "unknown" : pass, "' (", stage, " stage): ",
                           first.empty() ? "no diagnostic" : first, "; the IR is in ", path);
}


}  // namespace kiln::runtime
