// kiln-fuse-generics: linalg's elementwise fusion, except where it would recompute a
// producer for every element of a broadcast.
#include "passes/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNFUSEGENERICSPASS
#include "passes/Passes.h.inc"

namespace {

// Whether the generic that owns `use` iterates more often than the operand has
// elements: it reads the operand through a broadcast, so a producer fused into it would
// compute each of its elements once per reading (BatchNorm's per-channel scale,
// rsqrt(var + eps) * gamma, once per pixel). Unknown sizes count as no broadcast.
bool readsThroughBroadcast(OpOperand *use) {
  auto consumer = dyn_cast<linalg::GenericOp>(use->getOwner());
  auto type = dyn_cast<RankedTensorType>(use->get().getType());
  if (!consumer || !type || !type.hasStaticShape())
    return false;
  int64_t iterations = 1;
  for (int64_t range : consumer.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return false;
    iterations *= range;
  }
  return type.getNumElements() < iterations;
}

struct KilnFuseGenericsPass : impl::KilnFuseGenericsPassBase<KilnFuseGenericsPass> {
  using KilnFuseGenericsPassBase::KilnFuseGenericsPassBase;
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // Upstream's rule (a producer with one use is fused), less broadcasts.
    linalg::ControlFusionFn control = [broadcasts = bool(broadcasts)](OpOperand *use) {
      Operation *producer = use->get().getDefiningOp();
      return producer && producer->hasOneUse() && (broadcasts || !readsThroughBroadcast(use));
    };
    // The patterns of upstream's linalg-fuse-elementwise-ops, with that rule.
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, control);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     GreedyRewriteConfig().setUseTopDownTraversal())))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::kiln
