// kiln-tile-rows: a row fusion kernel computed one tile of rows at a time, its
// reductions fused into the tile loop (see Passes.td).
#include "passes/Passes.h"

#include <cassert>

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNTILEROWSPASS
#include "passes/Passes.h.inc"

namespace {

// Tile sizes for the root's loops: 1 for each row dim but the last, as many of
// the last as make about `tileBytes` of the result (at least 1), 0 (untiled)
// for the dims a row spans.
SmallVector<int64_t> rowTileSizes(linalg::GenericOp root, int64_t rowDims,
                                  int64_t tileBytes) {
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  auto resultType = cast<RankedTensorType>(root->getResult(0).getType());
  int64_t rowBytes =
      std::max<int64_t>(1, byteSize(resultType) / std::max<int64_t>(
                                                      1, resultType.getNumElements()));
  for (int64_t d = rowDims; d < int64_t(ranges.size()); ++d)
    rowBytes *= ranges[d];
  SmallVector<int64_t> sizes(ranges.size(), 0);
  for (int64_t d = 0; d + 1 < rowDims; ++d)
    sizes[d] = 1;
  sizes[rowDims - 1] =
      std::clamp<int64_t>(tileBytes / rowBytes, 1, ranges[rowDims - 1]);
  return sizes;
}

// The generic a row kernel returns, when it can be tiled along `rowDims`
// leading loops: static, all loops parallel, more loops than row dims.
linalg::GenericOp rowRoot(func::FuncOp kernel, int64_t rowDims) {
  auto ret = dyn_cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
  if (!ret || ret.getNumOperands() != 1)
    return {};
  auto root = ret.getOperand(0).getDefiningOp<linalg::GenericOp>();
  if (!root || root->getNumResults() != 1 || root.getNumReductionLoops() != 0 ||
      rowDims < 1 || int64_t(root.getNumLoops()) <= rowDims ||
      !root.hasPureTensorSemantics() ||
      llvm::any_of(root.getStaticLoopRanges(), ShapedType::isDynamic))
    return {};
  return root;
}

// Whether `op` is an elementwise generic on tensors (all loops parallel, one result)
// whose result has several users: the producers fuseMultiUseProducers considers.
bool isMultiUseElementwise(linalg::GenericOp op) {
  return op.getNumReductionLoops() == 0 && op->getNumResults() == 1 &&
         op.hasPureTensorSemantics() && !op->getResult(0).use_empty() &&
         !op->getResult(0).hasOneUse();
}

// Whether a multi-use elementwise `op` costs less to compute again in each of its
// users than to store and read back: a payload of a few arith ops. (A
// transcendental is worth its store.)
bool isCheapToRecompute(linalg::GenericOp op) {
  constexpr int kMaxOps = 4;
  int ops = 0;
  for (Operation &inner : op.getRegion().front().without_terminator()) {
    if (!isa<arith::ArithDialect>(inner.getDialect()) || ++ops > kMaxOps)
      return false;
  }
  return true;
}

// Fuses each cheap elementwise producer with several users (layer_norm's x - mean
// feeds the variance and the normalisation) into every one of them, a copy each.
// Tiled as it is, such a producer is stored to a tile-sized scratch buffer and read
// back once per user; fused, each user recomputes it from inputs it reads anyway.
void recomputeCheapProducers(func::FuncOp kernel, RewriterBase &rewriter) {
  SmallVector<linalg::GenericOp> producers;
  kernel.walk([&](linalg::GenericOp op) {
    if (isMultiUseElementwise(op) && isCheapToRecompute(op) &&
        llvm::all_of(op->getResult(0).getUsers(),
                     [](Operation *user) { return isa<linalg::GenericOp>(user); }))
      producers.push_back(op);
  });
  for (linalg::GenericOp producer : producers) {
    SmallVector<OpOperand *> uses = llvm::map_to_vector(
        producer->getResult(0).getUses(), [](OpOperand &use) { return &use; });
    if (!llvm::all_of(uses, [](OpOperand *use) {
          return linalg::areElementwiseOpsFusable(use);
        }))
      continue;
    // A copy of the producer for each user, so that fusing it keeps no result of
    // the producer alive for the others.
    for (OpOperand *use : uses) {
      rewriter.setInsertionPoint(producer);
      Operation *copy = rewriter.clone(*producer);
      rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(copy->getResult(0)); });
      rewriter.setInsertionPoint(use->getOwner());  // the fused op replaces the user
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, use);
      if (failed(fused))
        continue;  // the user reads the copy's stored result, as it read the producer's
      Operation *consumer = use->getOwner();
      for (Value result : consumer->getResults())
        rewriter.replaceAllUsesWith(result, fused->replacements.lookup(result));
      rewriter.eraseOp(consumer);
      rewriter.eraseOp(copy);
    }
    rewriter.eraseOp(producer);
  }
}

// Fuses each costly elementwise producer with several users, one of them a
// reduction (softmax's exp feeds the row sum and the division), into that reduction,
// which then also yields the producer's values for the other users: one loop computes
// the values, stores them and reduces them, where tiled as it is the reduction would
// read back a scratch tile the producer's loop had just written.
void storeWhileReducing(func::FuncOp kernel, RewriterBase &rewriter) {
  SmallVector<std::pair<linalg::GenericOp, OpOperand *>> candidates;
  kernel.walk([&](linalg::GenericOp op) {
    if (!isMultiUseElementwise(op) || isCheapToRecompute(op))
      return;
    Value result = op->getResult(0);
    OpOperand *reduction = nullptr;
    for (OpOperand &use : result.getUses()) {
      auto user = dyn_cast<linalg::GenericOp>(use.getOwner());
      if (!user || user.getNumReductionLoops() == 0)
        continue;
      if (reduction)
        return;  // two reductions: fuse into neither
      reduction = &use;
    }
    // The fused op stands where the reduction is, so it must come before the others.
    if (!reduction || !linalg::areElementwiseOpsFusable(reduction) ||
        llvm::any_of(result.getUsers(), [&](Operation *user) {
          return user != reduction->getOwner() &&
                 (user->getBlock() != reduction->getOwner()->getBlock() ||
                  user->isBeforeInBlock(reduction->getOwner()));
        }))
      return;
    candidates.emplace_back(op, reduction);
  });
  for (auto [producer, use] : candidates) {
    Operation *consumer = use->getOwner();
    rewriter.setInsertionPoint(consumer);
    FailureOr<linalg::ElementwiseOpFusionResult> fused =
        linalg::fuseElementwiseOps(rewriter, use);
    if (failed(fused))
      continue;
    // The producer had other users, so the fused op keeps its values as a result.
    Value values = fused->replacements.lookup(producer->getResult(0));
    assert(values && "fusion dropped a producer result that has other users");
    for (Value result : consumer->getResults())
      rewriter.replaceAllUsesWith(result, fused->replacements.lookup(result));
    rewriter.replaceAllUsesWith(producer->getResult(0), values);
    rewriter.eraseOp(consumer);
    rewriter.eraseOp(producer);
  }
}

// Row kernels: fuses producers with several users into them (see the two above),
// then drops results nobody reads: fusing into a reduction may keep a producer's
// values as an extra result (linalg keeps them when it cannot tell the operand is
// droppable), and unused they would still be stored.
void fuseMultiUseProducers(func::FuncOp kernel, RewriterBase &rewriter) {
  recomputeCheapProducers(kernel, rewriter);
  storeWhileReducing(kernel, rewriter);
  RewritePatternSet patterns(kernel.getContext());
  linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
  (void)applyPatternsGreedily(kernel, std::move(patterns));
}

struct KilnTileRowsPass : impl::KilnTileRowsPassBase<KilnTileRowsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    auto rows = kernel->getAttrOfType<IntegerAttr>(kRowDimsAttr);
    if (!rows || kernel.isExternal())
      return;
    linalg::GenericOp root = rowRoot(kernel, rows.getInt());
    if (!root)
      return;
    // Linalg's TilingInterface is an external model the context must hold
    // (registerCpuPipelineDependencies): without it, fail loudly rather than
    // compile the kernel with a full-size scratch.
    auto tileable = dyn_cast<TilingInterface>(root.getOperation());
    if (!tileable) {
      root.emitError("kiln-tile-rows: linalg's TilingInterface models are not "
                     "registered in this context");
      return signalPassFailure();
    }
    MLIRContext *context = &getContext();
    IRRewriter rewriter(context);
    fuseMultiUseProducers(kernel, rewriter);
    root = rowRoot(kernel, rows.getInt());  // fusing into the root replaced it
    if (!root)
      return;
    tileable = cast<TilingInterface>(root.getOperation());
    scf::SCFTilingOptions tiling;
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    tiling.setTileSizes(getAsIndexOpFoldResult(
        context, rowTileSizes(root, rows.getInt(), tileBytes)));
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    rewriter.setInsertionPoint(root);
    FailureOr<scf::SCFTileAndFuseResult> tiled =
        scf::tileConsumerAndFuseProducersUsingSCF(rewriter, tileable, options);
    if (failed(tiled))
      return;  // untiled is still correct
    rewriter.replaceOp(root, tiled->replacements.lookup(root->getResult(0)));

    // A producer reached along several paths (softmax's exp feeds the sum and
    // the division) was fused once per path: merge the copies, drop the
    // untiled originals, and size each tensor.empty to its tile.
    DominanceInfo dominance(kernel);
    eliminateCommonSubExpressions(rewriter, dominance, kernel);
    RewritePatternSet patterns(context);
    tensor::populateFoldTensorEmptyPatterns(patterns);
    tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns, context);
    if (failed(applyPatternsGreedily(kernel, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::kiln
