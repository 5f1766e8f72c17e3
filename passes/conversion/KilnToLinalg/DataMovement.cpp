// kiln→linalg for ops that move data without computing: broadcast_in_dim,
// reshape, transpose, slice, concat, gather and iota, to linalg and tensor ops.
// `?` dims take their sizes from the operands (tensor.dim) or from the ops'
// dynamic size operands, so one kernel serves every size.
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
// has size 1 (so it expands), and the new result dims are not read. A `?`
// operand dim is read along its result dim, never expanded: a map cannot
// choose at run time, and the dynamic dims of traces are batch dims, which a
// program does not broadcast from size 1 (at size 1 both read index 0).
struct BroadcastToGeneric : OpConversionPattern<BroadcastInDimOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BroadcastInDimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    auto xType = cast<RankedTensorType>(adaptor.getX().getType());
    SmallVector<AffineExpr> reads;
    for (auto [i, d] : llvm::enumerate(op.getDims()))
      reads.push_back(xType.getDimSize(i) == 1
                          ? rewriter.getAffineConstantExpr(0)
                          : rewriter.getAffineDimExpr(d));
    auto map = AffineMap::get(type.getRank(), 0, reads, getContext());
    Value init =
        tensor::EmptyOp::create(rewriter, op.getLoc(), type.getShape(),
                                type.getElementType(), adaptor.getDynamicShape());
    Value result = buildParallelGenericInto(
        rewriter, op.getLoc(), init, adaptor.getX(), map,
        [](OpBuilder &, Location, ValueRange elements) { return elements[0]; });
    rewriter.replaceOp(op, result);
    return success();
  }
};

// Whether `groups` regroup the dims of `large` into those of `small` at every
// run-time size: each group holds at most one `?` dim, which is `?` in `small`,
// and a static group multiplies to its static size in `small`.
bool regroupsExactly(ArrayRef<int64_t> small, ArrayRef<int64_t> large,
                     ArrayRef<ReassociationIndices> groups) {
  for (auto [size, group] : llvm::zip_equal(small, groups)) {
    int64_t dynamic = 0, product = 1;
    for (int64_t d : group) {
      if (ShapedType::isDynamic(large[d]))
        ++dynamic;
      else
        product *= large[d];
    }
    if (dynamic > 1 || (dynamic == 1) != ShapedType::isDynamic(size) ||
        (dynamic == 0 && product != size))
      return false;
  }
  return true;
}

// `x` with the shape of `to` (same element count, row-major order), whose
// sizes are `toSizes`: one collapse_shape or expand_shape where the dims
// regroup, else through rank 1. With more than one `?` dim on a side the
// types cannot tell how the dims regroup, so the reshape goes through rank 1.
Value reshapeTensor(OpBuilder &b, Location loc, Value x, RankedTensorType to,
                    ArrayRef<OpFoldResult> toSizes) {
  auto from = cast<RankedTensorType>(x.getType());
  // A scalar regroups with no dims at all.
  if (from.getRank() == 0)
    return tensor::ExpandShapeOp::create(
        b, loc, to, x, ArrayRef<ReassociationIndices>{}, toSizes);
  if (to.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, to, x,
                                           ArrayRef<ReassociationIndices>{});
  const bool typed = from.getNumDynamicDims() <= 1 && to.getNumDynamicDims() <= 1;
  if (typed && from == to)
    return x;
  if (auto groups =
          getReassociationIndicesForCollapse(from.getShape(), to.getShape());
      typed && groups &&
      regroupsExactly(to.getShape(), from.getShape(), *groups))
    return tensor::CollapseShapeOp::create(b, loc, to, x, *groups);
  if (auto groups =
          getReassociationIndicesForCollapse(to.getShape(), from.getShape());
      typed && groups &&
      regroupsExactly(from.getShape(), to.getShape(), *groups))
    return tensor::ExpandShapeOp::create(b, loc, to, x, *groups, toSizes);
  // Through rank 1: all dims collapsed into one, then expanded into `to`'s.
  auto flatOf = [](RankedTensorType type) {
    return RankedTensorType::get(
        {type.hasStaticShape() ? type.getNumElements() : ShapedType::kDynamic},
        type.getElementType());
  };
  ReassociationIndices all =
      llvm::to_vector(llvm::seq<int64_t>(0, from.getRank()));
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, flatOf(from), x, ArrayRef<ReassociationIndices>{all});
  // A static operand reshaped to `?` sizes (or the reverse) meets at rank 1.
  if (flatOf(from) != flatOf(to))
    flat = tensor::CastOp::create(b, loc, flatOf(to), flat);
  if (flat.getType() == to)
    return flat;
  ReassociationIndices allTo =
      llvm::to_vector(llvm::seq<int64_t>(0, to.getRank()));
  return tensor::ExpandShapeOp::create(
      b, loc, to, flat, ArrayRef<ReassociationIndices>{allTo}, toSizes);
}

// kiln.reshape → tensor.collapse_shape / tensor.expand_shape; a reshape to
// the operand's own shape (a copy, on values) is its operand.
struct ReshapeToTensor : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    rewriter.replaceOp(
        op, reshapeTensor(
                rewriter, op.getLoc(), adaptor.getX(), type,
                mixedSizes(rewriter, op.getShape(), adaptor.getDynamicShape())));
    return success();
  }
};

// kiln.transpose → linalg.transpose (same permutation convention).
struct TransposeToLinalg : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    SmallVector<OpFoldResult> sizes;
    for (int64_t d : op.getPermutation())
      sizes.push_back(dimSize(rewriter, op.getLoc(), adaptor.getX(), d));
    Value init = tensor::EmptyOp::create(rewriter, op.getLoc(), sizes,
                                         type.getElementType());
    auto transpose = linalg::TransposeOp::create(
        rewriter, op.getLoc(), adaptor.getX(), init, op.getPermutation());
    rewriter.replaceOp(op, transpose->getResults());
    return success();
  }
};

// kiln.slice → tensor.extract_slice with the same start and stride; a dynamic
// limit gives the size ceil((limit - start) / stride) at run time.
struct SliceToTensor : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    MLIRContext *context = getContext();
    SizeBuilder sizes{rewriter, op.getLoc()};
    SmallVector<OpFoldResult> limits =
        mixedSizes(rewriter, op.getLimit(), adaptor.getDynamicLimit());
    SmallVector<OpFoldResult> shape;
    for (auto [d, size] : llvm::enumerate(type.getShape())) {
      const int64_t stride = op.getStride()[d];
      shape.push_back(
          ShapedType::isDynamic(size)
              ? sizes.div(sizes.add(sizes.sub(limits[d], rewriter.getIndexAttr(
                                                             op.getStart()[d])),
                                    rewriter.getIndexAttr(stride - 1)),
                          stride)
              : rewriter.getIndexAttr(size));
    }
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, type, adaptor.getX(),
        getAsIndexOpFoldResult(context, op.getStart()), shape,
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
    auto type = cast<RankedTensorType>(op.getType());
    Location loc = op.getLoc();
    Value x = adaptor.getX(), indices = adaptor.getIndices();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t dim = op.getDim();
    int64_t indexRank = cast<RankedTensorType>(indices.getType()).getRank();
    SmallVector<OpFoldResult> shape;
    for (int64_t d = 0; d < type.getRank(); ++d)
      shape.push_back(d < dim ? dimSize(rewriter, loc, x, d)
                      : d < dim + indexRank
                          ? dimSize(rewriter, loc, indices, d - dim)
                          : dimSize(rewriter, loc, x, d - indexRank + 1));
    SizeBuilder sizes{rewriter, loc};
    OpFoldResult last = sizes.max(
        sizes.sub(dimSize(rewriter, loc, x, dim), rewriter.getIndexAttr(1)),
        rewriter.getIndexAttr(0));
    SmallVector<AffineExpr> reads;
    for (int64_t k = 0; k < indexRank; ++k)
      reads.push_back(rewriter.getAffineDimExpr(dim + k));
    auto map = AffineMap::get(type.getRank(), 0, reads, getContext());
    Value init =
        tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
    Value result = buildParallelGenericInto(
        rewriter, loc, init, indices, map,
        [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          Value index =
              arith::IndexCastOp::create(b, loc, b.getIndexType(), elements[0]);
          index = arith::MaxSIOp::create(
              b, loc, index, arith::ConstantIndexOp::create(b, loc, 0));
          index = arith::MinSIOp::create(b, loc, index,
                                         SizeBuilder{b, loc}.value(last));
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

// kiln.iota → linalg.generic yielding its loop index along `dim`, converted to
// the element type as kiln.convert converts an i64 (as the dense constant a
// static iota becomes holds it).
struct IotaToGeneric : OpConversionPattern<IotaOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(IotaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Value init =
        tensor::EmptyOp::create(rewriter, op.getLoc(), type.getShape(),
                                type.getElementType(), adaptor.getDynamicShape());
    const int64_t dim = op.getDim();
    Value result = buildParallelGenericInto(
        rewriter, op.getLoc(), init, ValueRange{}, {},
        [&](OpBuilder &b, Location loc, ValueRange) -> Value {
          Value index = linalg::IndexOp::create(b, loc, dim);
          Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
          return convertScalar(b, loc, i64, type.getElementType());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateKilnDataMovementToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<BroadcastToGeneric, ConcatToTensor, GatherToGeneric,
               IotaToGeneric, ReshapeToTensor, SliceToTensor,
               TransposeToLinalg>(
      patterns.getContext());
}

} // namespace mlir::kiln
