#include "frontend/jit/Context.h"

#include "dialect/KilnDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln::jit {

std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, mlir::kiln::KilnDialect>();
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

}  // namespace kiln::jit
