// kiln→linalg for ops that move data without computing: broadcast_in_dim,
// reshape, transpose, slice, concat, gather, scatter_add and iota, to linalg,
// tensor (and for scatter_add scf) ops.
// `?` dims take their sizes from the operands (tensor.dim) or from the ops'
// dynamic size operands, so one kernel serves every size.
#include "dialect/KilnOps.h"
#include "passes/Passes.h"
#include "passes/conversion/KilnToLinalg/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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

// The last index of a dim of `extent` elements (0 for an empty one).
OpFoldResult lastIndex(const SizeBuilder &sizes, OpFoldResult extent) {
  return sizes.max(sizes.sub(extent, sizes.b.getIndexAttr(1)),
                   sizes.b.getIndexAttr(0));
}

// An element of an index tensor as an index clamped into [0, last]: the eager
// ops reject an out-of-range index; compiled code cannot raise, so it stays
// within the tensor rather than touch memory outside it.
Value clampIndex(OpBuilder &b, Location loc, Value element, OpFoldResult last) {
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), element);
  index = arith::MaxSIOp::create(b, loc, index,
                                 arith::ConstantIndexOp::create(b, loc, 0));
  return arith::MinSIOp::create(b, loc, index, SizeBuilder{b, loc}.value(last));
}

// kiln.gather → linalg.generic over the result reading `indices` at result
// dims [dim, dim + rank(indices)) and extracting the element of x it names
// (the index clamped into x).
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
    OpFoldResult last =
        lastIndex(SizeBuilder{rewriter, loc}, dimSize(rewriter, loc, x, dim));
    SmallVector<AffineExpr> reads;
    for (int64_t k = 0; k < indexRank; ++k)
      reads.push_back(rewriter.getAffineDimExpr(dim + k));
    auto map = AffineMap::get(type.getRank(), 0, reads, getContext());
    Value init =
        tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
    Value result = buildParallelGenericInto(
        rewriter, loc, init, indices, map,
        [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          Value index = clampIndex(b, loc, elements[0], last);
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

// The coordinates of `linear` in a tensor of `sizes`, row-major.
SmallVector<Value> coordinates(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<Value> sizes) {
  SmallVector<Value> at(sizes.size());
  for (size_t k = sizes.size() - 1; k > 0; --k) {
    at[k] = arith::RemUIOp::create(b, loc, linear, sizes[k]);
    linear = arith::DivUIOp::create(b, loc, linear, sizes[k]);
  }
  at[0] = linear;
  return at;
}

// `into` + `values` (of one type) as the eager kernels add: in the math type,
// rounded back.
Value addInto(OpBuilder &b, Location loc, Value values, Value into) {
  auto type = cast<RankedTensorType>(into.getType());
  Type element = type.getElementType(), math = mathTypeOf(element);
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, values, into, maps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value update = convertScalar(nb, nloc, args[0], math),
                     held = convertScalar(nb, nloc, args[1], math);
               Value sum =
                   isa<FloatType>(math)
                       ? arith::AddFOp::create(nb, nloc, held, update).getResult()
                       : arith::AddIOp::create(nb, nloc, held, update).getResult();
               linalg::YieldOp::create(nb, nloc,
                                       convertScalar(nb, nloc, sum, element));
             })
      .getResult(0);
}

// kiln.scatter_add → a linalg.fill of zeros, then an scf.for over the indices in
// their order (k ascending, as the eager kernel adds them into each destination):
// slice k of the updates added into the result's slice at indices[k] by a
// linalg.generic, in the math type and rounded at each add, as the eager kernel.
// The index is clamped into the result, as gather's into its operand.
struct ScatterAddToLoop : OpConversionPattern<ScatterAddOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ScatterAddOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    Value updates = adaptor.getUpdates(), indices = adaptor.getIndices();
    const int64_t dim = op.getDim(),
                  indexRank = cast<RankedTensorType>(indices.getType()).getRank();
    if (indexRank == 0)
      return op.emitOpError("cannot be converted to linalg: 0-d indices");
    SizeBuilder sizes{rewriter, loc};
    OpFoldResult size = adaptor.getDynamicSize()
                            ? OpFoldResult(adaptor.getDynamicSize())
                            : rewriter.getIndexAttr(op.getSize());
    // The result's sizes; a slice of it (or of the updates, rank-reduced) at one
    // index has 1 in place of `size`.
    SmallVector<OpFoldResult> shape, sliceShape;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      OpFoldResult extent =
          d < dim ? dimSize(rewriter, loc, updates, d)
          : d == dim
              ? size
              : dimSize(rewriter, loc, updates, d + indexRank - 1);
      shape.push_back(extent);
      sliceShape.push_back(d == dim ? rewriter.getIndexAttr(1) : extent);
    }
    Type element = type.getElementType();
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getZeroAttr(element));
    Value empty = tensor::EmptyOp::create(rewriter, loc, shape, element);
    Value result =
        linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
    SmallVector<Value> indexSizes;
    OpFoldResult count = rewriter.getIndexAttr(1);
    for (int64_t k = 0; k < indexRank; ++k) {
      OpFoldResult extent = dimSize(rewriter, loc, indices, k);
      indexSizes.push_back(sizes.value(extent));
      count = sizes.mul(count, extent);
    }
    Value last = sizes.value(lastIndex(sizes, size));
    auto loop = scf::ForOp::create(
        rewriter, loc, sizes.value(rewriter.getIndexAttr(0)), sizes.value(count),
        sizes.value(rewriter.getIndexAttr(1)), ValueRange{result});
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(loop.getBody());
    Value acc = loop.getRegionIterArgs()[0];
    SmallVector<Value> at =
        coordinates(rewriter, loc, loop.getInductionVar(), indexSizes);
    Value index = clampIndex(
        rewriter, loc, tensor::ExtractOp::create(rewriter, loc, indices, at), last);

    const int64_t rank = type.getRank();
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
        strides(rank, rewriter.getIndexAttr(1));
    offsets[dim] = index;
    Value into = tensor::ExtractSliceOp::create(rewriter, loc, acc, offsets,
                                                sliceShape, strides);
    // Slice k of the updates: 1 in the indices' dims, dropped but one.
    SmallVector<OpFoldResult> from(dim, rewriter.getIndexAttr(0)), fromSizes;
    llvm::append_range(from, at);
    from.append(rank - dim - 1, rewriter.getIndexAttr(0));
    for (int64_t d = 0; d < int64_t(from.size()); ++d)
      fromSizes.push_back(d >= dim && d < dim + indexRank
                              ? rewriter.getIndexAttr(1)
                              : dimSize(rewriter, loc, updates, d));
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, loc, cast<RankedTensorType>(into.getType()), updates, from,
        fromSizes, SmallVector<OpFoldResult>(from.size(), rewriter.getIndexAttr(1)));
    scf::YieldOp::create(
        rewriter, loc,
        tensor::InsertSliceOp::create(rewriter, loc, addInto(rewriter, loc, slice, into),
                                      acc, offsets, sliceShape, strides)
            .getResult());
    rewriter.replaceOp(op, loop.getResults());
    return success();
  }
};

} // namespace

void populateKilnDataMovementToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<BroadcastToGeneric, ConcatToTensor, GatherToGeneric,
               IotaToGeneric, ReshapeToTensor, ScatterAddToLoop, SliceToTensor,
               TransposeToLinalg>(
      patterns.getContext());
}

} // namespace mlir::kiln
