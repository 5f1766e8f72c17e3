// kiln→linalg for ops that move data without computing: broadcast_in_dim,
// reshape, transpose, slice, concat and gather, to linalg and tensor ops on
// static shapes.
#include "dialect/KilnOps.h"
#include "passes/Passes.h"
#include "passes/conversion/KilnToLinalg/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::kiln {
namespace {

// kiln.broadcast_in_dim → linalg.generic copying its operand through a
// projected map: operand dim i reads result dim dims[i], or index 0 where it
// has size 1 (so it expands), and the new result dims are not read.
struct BroadcastToGeneric : OpConversionPattern<BroadcastInDimOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BroadcastInDimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireStaticShapes(op)))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    auto xType = cast<RankedTensorType>(adaptor.getX().getType());
    SmallVector<AffineExpr> reads;
    for (auto [i, d] : llvm::enumerate(op.getDims()))
      reads.push_back(xType.getDimSize(i) == 1
                          ? rewriter.getAffineConstantExpr(0)
                          : rewriter.getAffineDimExpr(d));
    auto map = AffineMap::get(type.getRank(), 0, reads, getContext());
    Value result = buildParallelGeneric(
        rewriter, op.getLoc(), type, adaptor.getX(), map, Value(),
        [](OpBuilder &, Location, ValueRange elements) { return elements[0]; });
    rewriter.replaceOp(op, result);
    return success();
  }
};

// `x` with the shape of `to` (same element count, row-major order): one
// collapse_shape or expand_shape where the dims regroup, else through rank 1.
Value reshapeTensor(OpBuilder &b, Location loc, Value x, RankedTensorType to) {
  auto from = cast<RankedTensorType>(x.getType());
  // A scalar regroups with no dims at all.
  if (from.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, to, x,
                                         ArrayRef<ReassociationIndices>{});
  if (to.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, to, x,
                                           ArrayRef<ReassociationIndices>{});
  if (auto groups =
          getReassociationIndicesForCollapse(from.getShape(), to.getShape()))
    return tensor::CollapseShapeOp::create(b, loc, to, x, *groups);
  if (auto groups =
          getReassociationIndicesForCollapse(to.getShape(), from.getShape()))
    return tensor::ExpandShapeOp::create(b, loc, to, x, *groups);
  // Ranks >= 2 on both sides here, so each step below regroups directly.
  auto flat =
      RankedTensorType::get({from.getNumElements()}, from.getElementType());
  return reshapeTensor(b, loc, reshapeTensor(b, loc, x, flat), to);
}

// kiln.reshape → tensor.collapse_shape / tensor.expand_shape; a reshape to
// the operand's own shape (a copy, on values) is its operand.
struct ReshapeToTensor : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireStaticShapes(op)))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    Value x = adaptor.getX();
    rewriter.replaceOp(op, x.getType() == type
                               ? x
                               : reshapeTensor(rewriter, op.getLoc(), x, type));
    return success();
  }
};

// kiln.transpose → linalg.transpose (same permutation convention).
struct TransposeToLinalg : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireStaticShapes(op)))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    Value init = emptyTensor(rewriter, op.getLoc(), type, Value());
    auto transpose = linalg::TransposeOp::create(
        rewriter, op.getLoc(), adaptor.getX(), init, op.getPermutation());
    rewriter.replaceOp(op, transpose->getResults());
    return success();
  }
};

// kiln.slice → tensor.extract_slice with the same start and stride.
struct SliceToTensor : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireStaticShapes(op)))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    MLIRContext *context = getContext();
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, type, adaptor.getX(),
        getAsIndexOpFoldResult(context, op.getStart()),
        getAsIndexOpFoldResult(context, type.getShape()),
        getAsIndexOpFoldResult(context, op.getStride()));
    return success();
  }
};

// kiln.concat → tensor.concat (one operand: the operand).
struct ConcatToTensor : OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireStaticShapes(op)))
      return failure();
    ValueRange xs = adaptor.getXs();
    if (xs.size() == 1) {
      rewriter.replaceOp(op, xs.front());
      return success();
    }
    rewriter.replaceOp(op,
                       tensor::ConcatOp::create(rewriter, op.getLoc(),
                                                op.getType(), op.getDim(), xs)
                           .getResult());
    return success();
  }
};

// kiln.gather → linalg.generic over the result reading `indices` at result
// dims [dim, dim + rank(indices)) and extracting the element of x it names.
// The eager op rejects an out-of-range index; compiled code cannot raise, so
// it clamps the index into x rather than read outside it.
struct GatherToGeneric : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireStaticShapes(op)))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t dim = op.getDim();
    int64_t indexRank =
        cast<RankedTensorType>(adaptor.getIndices().getType()).getRank();
    SmallVector<AffineExpr> reads;
    for (int64_t k = 0; k < indexRank; ++k)
      reads.push_back(rewriter.getAffineDimExpr(dim + k));
    auto map = AffineMap::get(type.getRank(), 0, reads, getContext());
    int64_t last = std::max<int64_t>(xType.getDimSize(dim) - 1, 0);
    Value result = buildParallelGeneric(
        rewriter, op.getLoc(), type, adaptor.getIndices(), map, Value(),
        [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          Value index =
              arith::IndexCastOp::create(b, loc, b.getIndexType(), elements[0]);
          index = arith::MaxSIOp::create(
              b, loc, index, arith::ConstantIndexOp::create(b, loc, 0));
          index = arith::MinSIOp::create(
              b, loc, index, arith::ConstantIndexOp::create(b, loc, last));
          SmallVector<Value> at;
          for (int64_t d = 0; d < xType.getRank(); ++d)
            at.push_back(d == dim ? index
                                  : linalg::IndexOp::create(
                                        b, loc, d < dim ? d : d + indexRank - 1)
                                        .getResult());
          return tensor::ExtractOp::create(b, loc, x, at);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateKilnDataMovementToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<BroadcastToGeneric, ConcatToTensor, GatherToGeneric,
               ReshapeToTensor, SliceToTensor, TransposeToLinalg>(
      patterns.getContext());
}

} // namespace mlir::kiln
