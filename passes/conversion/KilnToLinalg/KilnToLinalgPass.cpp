// kiln-convert-to-linalg: kiln ops to linalg, tensor, arith and math on
// tensors, leaving library ops, rng, callbacks and fusion regions (whose bodies
// it converts) to later passes.
#include "dialect/KilnOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNCONVERTTOLINALGPASS
#include "passes/Passes.h.inc"

namespace {

struct KilnConvertToLinalgPass
    : impl::KilnConvertToLinalgPassBase<KilnConvertToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    ConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect>();
    target.addIllegalDialect<KilnDialect>();
    target.addLegalOp<AddmmOp, CallbackOp, Conv2dOp, FusionOp, MatmulOp, Pool2dOp, RngOp,
                      YieldOp>();

    RewritePatternSet patterns(context);
    populateKilnToLinalgPatterns(patterns);
    // Translation only: folding kiln ops is kiln-simplify's job, and folding
    // here would make the output depend on the folders.
    ConversionConfig config;
    config.foldingMode = DialectConversionFoldingMode::Never;
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns), config)))
      return signalPassFailure();
    resolveDims();
  }

  // A `?` size the patterns read as tensor.dim of another op's result becomes
  // the size that op was built with (its init's tensor.empty operand, in the
  // end an argument's tensor.dim or a size operand): a tensor.dim is a use of
  // the result, and linalg's elementwise fusion only fuses a producer with
  // one use. Only tensor.dim ops are rewritten, so static kernels are left as
  // they are.
  void resolveDims() {
    SmallVector<Operation *> dims;
    getOperation().walk([&](tensor::DimOp dim) { dims.push_back(dim); });
    if (dims.empty())
      return;
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    tensor::DimOp::getCanonicalizationPatterns(patterns, context);
    tensor::EmptyOp::getCanonicalizationPatterns(patterns, context);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(dims, std::move(patterns), config);
  }
};

} // namespace

void populateKilnToLinalgPatterns(RewritePatternSet &patterns) {
  populateKilnElementwiseToLinalgPatterns(patterns);
  populateKilnDataMovementToLinalgPatterns(patterns);
  populateKilnReduceToLinalgPatterns(patterns);
}

} // namespace mlir::kiln
