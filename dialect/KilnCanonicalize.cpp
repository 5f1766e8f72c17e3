// Canonicalization patterns of the kiln ops (folders are in KilnOpFolders.cpp).

#include "dialect/KilnOps.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallVectorExtras.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

// neg(neg(x)) -> x
struct NegOfNeg : OpRewritePattern<NegOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(NegOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getX().getDefiningOp<NegOp>();
    if (!inner || inner.getX().getType() != op.getType())
      return failure();
    rewriter.replaceOp(op, inner.getX());
    return success();
  }
};

// transpose(transpose(x, p1), p2) -> transpose(x, p1[p2[i]])
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getX().getDefiningOp<TransposeOp>();
    if (!inner)
      return failure();
    rewriter.replaceOpWithNewOp<TransposeOp>(
        op, inner.getX(),
        applyPermutation(inner.getPermutation(), op.getPermutation()));
    return success();
  }
};

// broadcast_in_dim(broadcast_in_dim(x, d1), d2) -> broadcast_in_dim(x, d2[d1[i]])
struct ComposeBroadcasts : OpRewritePattern<BroadcastInDimOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BroadcastInDimOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getX().getDefiningOp<BroadcastInDimOp>();
    if (!inner)
      return failure();
    ArrayRef<int64_t> outerDims = op.getDims();
    SmallVector<int64_t> dims = llvm::map_to_vector(
        inner.getDims(), [&](int64_t d) { return outerDims[d]; });
    if (!inner.getDynamicShape().empty())
      return failure();
    rewriter.replaceOpWithNewOp<BroadcastInDimOp>(
        op, inner.getX(), op.getDynamicShape(), dims, op.getShape());
    return success();
  }
};

// select(splat c, a, b) -> c ? a : b
struct SelectOfSplatCondition : OpRewritePattern<SelectOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SelectOp op,
                                PatternRewriter &rewriter) const override {
    DenseElementsAttr cond;
    if (!matchPattern(op.getCond(), m_Constant(&cond)) || !cond.isSplat())
      return failure();
    Value chosen = cond.getSplatValue<bool>() ? op.getA() : op.getB();
    if (chosen.getType() != op.getType())
      return failure();
    rewriter.replaceOp(op, chosen);
    return success();
  }
};

// reshape(splat constant) -> splat constant, at any size
struct ReshapeOfSplat : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    DenseElementsAttr value;
    if (!matchPattern(op.getX(), m_Constant(&value)) || !value.isSplat() ||
        !op.getType().hasStaticShape())
      return failure();
    rewriter.replaceOpWithNewOp<ConstantOp>(
        op, cast<ElementsAttr>(value.resizeSplat(op.getType())));
    return success();
  }
};

// Whether converting `from` to `to` keeps every value exactly, so converting
// onwards from `to` gives what converting from `from` directly would.
bool isExactConversion(Type from, Type to) {
  if (from == to || from.isInteger(1))
    return true;
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat)
    return llvm::APFloat::isRepresentableBy(fromFloat.getFloatSemantics(),
                                            toFloat.getFloatSemantics());
  if (fromFloat || !isa<IntegerType>(from))
    return false;
  unsigned magnitudeBits = from.getIntOrFloatBitWidth() - 1;
  if (toFloat)
    return magnitudeBits <= static_cast<unsigned>(toFloat.getFPMantissaWidth());
  return to.getIntOrFloatBitWidth() >= from.getIntOrFloatBitWidth();
}

// convert(convert(x, m), t) -> convert(x, t) where x -> m is exact
struct CollapseExactConverts : OpRewritePattern<ConvertOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvertOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getX().getDefiningOp<ConvertOp>();
    if (!inner || !isExactConversion(inner.getX().getType().getElementType(),
                                     inner.getDtype()))
      return failure();
    rewriter.replaceOpWithNewOp<ConvertOp>(op, inner.getX(), op.getDtype());
    return success();
  }
};

} // namespace

void NegOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<NegOfNeg>(context);
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<ComposeTransposes>(context);
}

void BroadcastInDimOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                                   MLIRContext *context) {
  patterns.add<ComposeBroadcasts>(context);
}

void SelectOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<SelectOfSplatCondition>(context);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<ReshapeOfSplat>(context);
}

void ConvertOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<CollapseExactConverts>(context);
}
