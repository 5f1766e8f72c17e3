// The kernels' conversion to the LLVM dialect on the CPU, one dialect conversion where
// upstream's passes are six (finalize-memref-to-llvm, convert-math-to-llvm,
// convert-math-to-libm, convert-arith-to-llvm, convert-func-to-llvm,
// convert-cf-to-llvm), with the same patterns. kiln-cpu-pipeline runs the kernel
// lowering on every kernel's own module, so each of those passes built its pattern set
// and walked each of MobileNetV2's ~470 small modules again: about 2 s of the step's 4.7 s
// of lowering CPU time went to them (docs/ARCHITECTURE.md, "The kernels' conversion to
// LLVM is one conversion"). Here the patterns are built once per pass instance and each
// module is converted in one walk.
#include "passes/pipelines/KernelsToLLVM.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToFuncs/MathToFuncs.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::kiln {
namespace {

class KernelsToLLVMPass : public PassWrapper<KernelsToLLVMPass, OperationPass<ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(KernelsToLLVMPass)

  KernelsToLLVMPass() = default;
  explicit KernelsToLLVMPass(bool bare) { barePointers = bare; }
  // A copy (the pass manager's per-thread clone; Pass::clone copies the option) builds
  // its own converter and patterns.
  KernelsToLLVMPass(const KernelsToLLVMPass &other) : PassWrapper(other) {}

  StringRef getArgument() const override { return "kiln-kernels-to-llvm"; }
  StringRef getDescription() const override {
    return "a kernel module's memref, math, arith, func and cf ops to LLVM in one conversion";
  }
  // With convert-math-to-funcs' own, loaded before the threads start: it runs nested here.
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<LLVM::LLVMDialect, func::FuncDialect>();
    createConvertMathToFuncs()->getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Integer powers and counts become functions of loops first, as convert-math-to-funcs
    // did before convert-math-to-llvm; most kernels have none, so it runs only where needed.
    const bool needsFuncs = module
                                .walk([](Operation *op) {
                                  return isa<math::IPowIOp, math::FPowIOp, math::CountLeadingZerosOp>(op)
                                             ? WalkResult::interrupt()
                                             : WalkResult::advance();
                                })
                                .wasInterrupted();
    if (needsFuncs) {
      OpPassManager funcs(ModuleOp::getOperationName());
      funcs.addPass(createConvertMathToFuncs());
      if (failed(runPipeline(funcs, module))) return signalPassFailure();
    }
    if (!converter_) build(&getContext());
    LLVMConversionTarget target(getContext());
    if (failed(applyPartialConversion(module, target, patterns_))) signalPassFailure();
  }

 private:
  // The default data layout, as upstream's passes derive it for modules without a DLTI
  // spec (kernel modules have none): 64-bit index.
  void build(MLIRContext *context) {
    LowerToLLVMOptions options(context);
    options.useBarePtrCallConv = barePointers;
    converter_ = std::make_unique<LLVMTypeConverter>(context, options);
    RewritePatternSet patterns(context);
    populateFinalizeMemRefToLLVMConversionPatterns(*converter_, patterns);
    // What LLVM has an intrinsic for becomes the intrinsic (benefit 2); the rest (what
    // kiln-approximate-math left: powf, f64 functions) libm calls, as math-to-llvm then
    // math-to-libm did.
    populateMathToLLVMConversionPatterns(*converter_, patterns, /*approximateLog1p=*/true, /*benefit=*/2);
    populateMathToLibmConversionPatterns(patterns, /*benefit=*/1);
    // convert-arith-to-llvm expands ceildivsi, ceildivui and floordivsi first (dynamic
    // kernels' tile counts have them).
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    arith::populateArithToLLVMConversionPatterns(*converter_, patterns);
    populateFuncToLLVMConversionPatterns(*converter_, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(*converter_, patterns);
    cf::populateAssertToLLVMConversionPattern(*converter_, patterns);
    patterns_ = FrozenRewritePatternSet(std::move(patterns));
  }

  Option<bool> barePointers{*this, "bare-pointers",
                             llvm::cl::desc("kernels take one pointer per buffer (static shapes), "
                                            "not MLIR memref descriptors"),
                             llvm::cl::init(false)};
  std::unique_ptr<LLVMTypeConverter> converter_;
  FrozenRewritePatternSet patterns_;
};

}  // namespace

std::unique_ptr<Pass> createKernelsToLLVMPass(bool barePointers) {
  return std::make_unique<KernelsToLLVMPass>(barePointers);
}

void registerKernelsToLLVMPass() { PassRegistration<KernelsToLLVMPass>(); }

}  // namespace mlir::kiln
