// A compiler that is wrong on purpose, standing in for a compiler bug in the check-mode
// tests: it compiles `func` with every kiln.exp rewritten into kiln.sin first.
#pragma once

#include <memory>
#include <vector>

#include "kiln/core/Error.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "runtime/Executable.h"

namespace kiln::testing {

// `func` compiled as it is, or (`wrong`) with its kiln.exp ops made kiln.sin.
inline std::shared_ptr<const runtime::Executable> compileExpAsSin(mlir::func::FuncOp func,
                                                                  bool wrong) {
  if (!wrong) return runtime::Executable::compile(func, nullptr, "test", SourceLoc::current());
  mlir::OwningOpRef<mlir::ModuleOp> copy(func->getParentOfType<mlir::ModuleOp>().clone());
  auto f = copy->lookupSymbol<mlir::func::FuncOp>(func.getSymName());
  std::vector<mlir::Operation*> exps;
  f.walk([&](mlir::Operation* op) {
    if (op->getName().getStringRef() == "kiln.exp") exps.push_back(op);
  });
  for (mlir::Operation* op : exps) {
    mlir::OpBuilder builder(op);
    mlir::OperationState state(op->getLoc(), "kiln.sin");
    state.addOperands(op->getOperands());
    state.addTypes(op->getResultTypes());
    op->replaceAllUsesWith(builder.create(state));
    op->erase();
  }
  return runtime::Executable::compile(f, nullptr, "test", SourceLoc::current());
}

}  // namespace kiln::testing
