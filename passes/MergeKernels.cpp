// kiln-merge-kernels: the separately lowered kernels module joins its host's LLVM module.
#include "passes/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNMERGEKERNELSPASS
#include "passes/Passes.h.inc"

namespace {

struct KilnMergeKernelsPass
    : impl::KilnMergeKernelsPassBase<KilnMergeKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (ModuleOp kernels : llvm::make_early_inc_range(module.getOps<ModuleOp>())) {
      if (kernels.getSymName() != "kiln_kernels")
        continue;
      for (Operation &op : llvm::make_early_inc_range(*kernels.getBody())) {
        // An unregistered op has no dialect.
        if (!isa_and_nonnull<LLVM::LLVMDialect>(op.getDialect())) {
          op.emitOpError("is still in the kernels module after lowering; only "
                         "LLVM dialect ops can join the host");
          return signalPassFailure();
        }
        // The host declared each kernel it calls; the definition replaces it.
        if (auto name = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName())) {
          if (auto declared = dyn_cast_or_null<LLVM::LLVMFuncOp>(symbols.lookup(name));
              declared && declared.isExternal()) {
            symbols.erase(declared);
          } else if (symbols.lookup(name)) {
            // Runtime functions both sides declare (malloc, memcpy) are kept once.
            if (auto func = dyn_cast<LLVM::LLVMFuncOp>(op); func && func.isExternal()) {
              op.erase();
              continue;
            }
            op.emitOpError("defines a symbol the host module already has");
            return signalPassFailure();
          }
        }
        op.moveBefore(module.getBody(), module.getBody()->end());
        symbols.insert(&op);
      }
      kernels.erase();
    }
  }
};

} // namespace
} // namespace mlir::kiln
