// kiln-split-kernel-modules and kiln-join-kernel-modules: each kernel lowered in a module
// of its own, so the pass manager lowers several at once, then the modules joined again.
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNSPLITKERNELMODULESPASS
#define GEN_PASS_DEF_KILNJOINKERNELMODULESPASS
#include "passes/Passes.h.inc"

namespace {

// Kernels are lowered each in a module of its own, so that the pass manager runs the
// kernel pipeline on several of them at once: most of its passes are module passes
// (bufferization, kiln-parallelize, every conversion to LLVM), which on one module of all
// kernels ran on one thread (a mobilenet_v2 step's 474 kernels: 3 s of MLIR lowering,
// nearly all of it in module passes). Kernels never call each other, so nothing a pass
// does to one kernel depends on another.
struct KilnSplitKernelModulesPass
    : impl::KilnSplitKernelModulesPassBase<KilnSplitKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp kernels = getOperation();
    for (func::FuncOp kernel : llvm::make_early_inc_range(kernels.getOps<func::FuncOp>())) {
      OpBuilder builder(kernel);
      auto module = ModuleOp::create(builder, kernel.getLoc());
      // Data layout and target attributes hold for every kernel.
      module->setDiscardableAttrs(kernels->getDiscardableAttrDictionary());
      kernel->moveBefore(module.getBody(), module.getBody()->end());
    }
  }
};

// Whether the LLVM dialect symbol `op` is local to its module (a name another module
// may also use for something else).
bool isLocalSymbol(Operation *op) {
  std::optional<LLVM::Linkage> linkage;
  if (auto func = dyn_cast<LLVM::LLVMFuncOp>(op))
    linkage = func.getLinkage();
  if (auto global = dyn_cast<LLVM::GlobalOp>(op))
    linkage = global.getLinkage();
  return linkage == LLVM::Linkage::Private || linkage == LLVM::Linkage::Internal;
}

// The lowered kernel modules of kiln-split-kernel-modules back into one. What several of them
// declare (malloc, kiln_rt_parallel_for) or define alike (math-to-funcs' helpers) is kept
// once; a local symbol whose name is taken by something else (bufferization names each
// module's constants `__constant_<type>` from 0) is renamed; anything else defined twice
// is an error.
struct KilnJoinKernelModulesPass
    : impl::KilnJoinKernelModulesPassBase<KilnJoinKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp kernels = getOperation();
    SymbolTable joined(kernels);
    for (ModuleOp module : llvm::make_early_inc_range(kernels.getOps<ModuleOp>())) {
      SymbolTable own(module);
      for (Operation &op : llvm::make_early_inc_range(*module.getBody())) {
        if (failed(join(op, own, joined)))
          return signalPassFailure();
      }
      module.erase();
    }
  }

private:
  static LogicalResult join(Operation &op, SymbolTable &own, SymbolTable &joined) {
    auto name = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (Operation *existing = name ? joined.lookup(name) : nullptr) {
      auto func = dyn_cast<LLVM::LLVMFuncOp>(op);
      auto existingFunc = dyn_cast<LLVM::LLVMFuncOp>(existing);
      if ((func && existingFunc && func.isExternal() && existingFunc.isExternal() &&
           func.getFunctionType() == existingFunc.getFunctionType()) ||
          OperationEquivalence::isEquivalentTo(
              &op, existing, OperationEquivalence::Flags::IgnoreLocations)) {
        op.erase();
        return success();
      }
      if (!isLocalSymbol(&op))
        return op.emitOpError("defines @")
               << name.getValue() << ", which another kernel defines differently";
      if (failed(own.renameToUnique(&op, {&joined})))
        return op.emitOpError("cannot be renamed apart from another kernel's @")
               << name.getValue();
    }
    op.remove();
    joined.insert(&op);
    return success();
  }
};

} // namespace
} // namespace mlir::kiln
