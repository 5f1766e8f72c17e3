// kiln-fuse-generics: linalg's elementwise fusion, except where it would recompute a
// producer for every element of a broadcast, and also into a generic that reads a
// producer through several operands, each element once.
#include "passes/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <optional>

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNFUSEGENERICSPASS
#include "passes/Passes.h.inc"

namespace {

// How many times the generic that owns `use` reads the operand: its iterations (a
// loop the operand's map does not name is a broadcast: the operand is read again on
// each of its steps). Nothing when a size is unknown.
std::optional<int64_t> readings(OpOperand *use) {
  auto consumer = dyn_cast<linalg::GenericOp>(use->getOwner());
  if (!consumer)
    return std::nullopt;
  int64_t iterations = 1;
  for (int64_t range : consumer.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return std::nullopt;
    iterations *= range;
  }
  return iterations;
}

// Whether `use`'s producer may be fused into the generic that owns it. Upstream's
// rule: the producer has no other use. Kiln's adds two things. A producer used
// several times by that one generic is fused into each use when together they read
// each element once at most: a float32 sum reads its input through 32 operands, one
// per element of a block of pairs, and BatchNorm's (x - mean)^2 is then computed in
// the sum's loop instead of stored to a scratch and read back. And (without
// `broadcasts`) nothing is fused into a generic that reads the producer more often
// than it has elements: through a broadcast, it would compute each of its elements
// once per reading (BatchNorm's per-channel scale, rsqrt(var + eps) * gamma, once
// per pixel). With a size unknown, a sole use is fused (upstream's rule) and several
// are not.
bool mayFuse(OpOperand *use, bool broadcasts) {
  Operation *producer = use->get().getDefiningOp();
  if (!producer)
    return false;
  auto type = dyn_cast<RankedTensorType>(use->get().getType());
  const bool sized = type && type.hasStaticShape();
  if (producer->hasOneUse()) {
    std::optional<int64_t> n = readings(use);
    return broadcasts || !sized || !n || *n <= type.getNumElements();
  }
  if (!sized || producer->getNumResults() != 1)
    return false;
  int64_t total = 0;
  for (OpOperand &other : use->get().getUses()) {
    std::optional<int64_t> n = readings(&other);
    if (other.getOwner() != use->getOwner() || !n)
      return false;
    total += *n;
  }
  return total <= type.getNumElements();
}

struct KilnFuseGenericsPass : impl::KilnFuseGenericsPassBase<KilnFuseGenericsPass> {
  using KilnFuseGenericsPassBase::KilnFuseGenericsPassBase;
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    linalg::ControlFusionFn control = [broadcasts = bool(broadcasts)](OpOperand *use) {
      return mayFuse(use, broadcasts);
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
