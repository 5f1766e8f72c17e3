// kiln-tile-rows: a row fusion kernel computed one tile of rows at a time, its
// reductions fused into the tile loop (see Passes.td).
#include "passes/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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
    scf::SCFTilingOptions tiling;
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    tiling.setTileSizes(getAsIndexOpFoldResult(
        context, rowTileSizes(root, rows.getInt(), tileBytes)));
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    IRRewriter rewriter(context);
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
