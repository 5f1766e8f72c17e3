#include "frontend/jit/Context.h"

#include "dialect/KilnDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace kiln::jit {

std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::DialectRegistry registry;
  // arith and tensor: the sizes of dynamic programs (tensor.dim, index arithmetic).
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect, mlir::kiln::KilnDialect,
                  mlir::tensor::TensorDialect>();
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

}  // namespace kiln::jit
