// kiln→linalg for kiln.reduce: linalg.fill of the kind's neutral element, a
// linalg.generic with reduction iterators, then rounding (and mean's division).
#include "dialect/KilnOps.h"
#include "passes/Passes.h"
#include "passes/conversion/KilnToLinalg/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

namespace mlir::kiln {
namespace {

// The eager kernels sum and multiply floats in f64 and round once at the end,
// so the compiled reduction does too; integers wrap in their own width (the
// eager kernels' int64 accumulator truncated gives the same bits); max and
// min compare in the math type.
Type accumulatorTypeOf(ReduceKind kind, Type element) {
  bool extremum = kind == ReduceKind::max || kind == ReduceKind::min;
  if (isa<FloatType>(element) && !extremum)
    return Float64Type::get(element.getContext());
  return mathTypeOf(element);
}

TypedAttr neutralOf(OpBuilder &b, ReduceKind kind, Type type) {
  if (auto floatType = dyn_cast<FloatType>(type)) {
    double inf = std::numeric_limits<double>::infinity();
    switch (kind) {
    case ReduceKind::sum:
    case ReduceKind::mean:
      return b.getFloatAttr(floatType, 0.0);
    case ReduceKind::prod:
      return b.getFloatAttr(floatType, 1.0);
    case ReduceKind::max:
      return b.getFloatAttr(floatType, -inf);
    case ReduceKind::min:
      return b.getFloatAttr(floatType, inf);
    }
  }
  unsigned width = type.getIntOrFloatBitWidth();
  switch (kind) {
  case ReduceKind::sum:
  case ReduceKind::mean:
    return b.getIntegerAttr(type, 0);
  case ReduceKind::prod:
    return b.getIntegerAttr(type, 1);
  case ReduceKind::max:
    return b.getIntegerAttr(type, APInt::getSignedMinValue(width));
  case ReduceKind::min:
    return b.getIntegerAttr(type, APInt::getSignedMaxValue(width));
  }
  llvm_unreachable("every reduce kind is handled");
}

// The accumulator after element `v`. Float max/min take a NaN and then keep
// it, as the eager kernels. Float sums and
// products may be reassociated: they accumulate in f64, where another order
// changes the f32 result by at most an ulp, and it lets LLVM vectorize them
// (the eager kernels' order is 16 interleaved lanes, not the index order).
Value combine(OpBuilder &b, Location loc, ReduceKind kind, Value acc, Value v) {
  bool isFloat = isa<FloatType>(acc.getType());
  auto reassoc = arith::FastMathFlags::reassoc;
  switch (kind) {
  case ReduceKind::sum:
  case ReduceKind::mean:
    return isFloat ? arith::AddFOp::create(b, loc, acc, v, reassoc).getResult()
                   : arith::AddIOp::create(b, loc, acc, v).getResult();
  case ReduceKind::prod:
    return isFloat ? arith::MulFOp::create(b, loc, acc, v, reassoc).getResult()
                   : arith::MulIOp::create(b, loc, acc, v).getResult();
  case ReduceKind::max:
  case ReduceKind::min:
    break;
  }
  // maximumf/minimumf propagate NaN like the eager kernels and are reductions
  // LLVM vectorizes; they differ only in which of -0 and +0 wins a tie.
  bool max = kind == ReduceKind::max;
  if (!isFloat)
    return max ? arith::MaxSIOp::create(b, loc, acc, v).getResult()
               : arith::MinSIOp::create(b, loc, acc, v).getResult();
  return max ? arith::MaximumFOp::create(b, loc, acc, v).getResult()
             : arith::MinimumFOp::create(b, loc, acc, v).getResult();
}

struct ReduceToGeneric : OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireStaticShapes(op)))
      return failure();
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    Type element = xType.getElementType();
    ReduceKind kind = op.getKind();
    ArrayRef<int64_t> dims = op.getDims();
    Type accType = accumulatorTypeOf(kind, element);

    // Loops: with keep_dims first one of extent 1 per reduced dim (the result's
    // size-1 dims), then one per dim of `x`. The result is written in its own
    // shape, so no reshape stands between the reduction and its users, which
    // kiln-tile-rows needs to fuse the reduction into their row loop.
    const bool keep = op.getKeepDims();
    const int64_t rank = xType.getRank();
    const int64_t extra = keep ? int64_t(dims.size()) : 0;
    SmallVector<int64_t> keptShape;
    SmallVector<AffineExpr> resultDims;
    SmallVector<utils::IteratorType> iterators(extra,
                                               utils::IteratorType::parallel);
    int64_t count = 1, unit = 0;
    for (int64_t d = 0; d < rank; ++d) {
      AffineExpr loop = rewriter.getAffineDimExpr(extra + d);
      if (llvm::is_contained(dims, d)) {
        iterators.push_back(utils::IteratorType::reduction);
        count *= xType.getDimSize(d);
        if (keep) {
          keptShape.push_back(1);
          resultDims.push_back(rewriter.getAffineDimExpr(unit++));
        }
        continue;
      }
      iterators.push_back(utils::IteratorType::parallel);
      keptShape.push_back(xType.getDimSize(d));
      resultDims.push_back(loop);
    }

    auto accTensor = RankedTensorType::get(keptShape, accType);
    Value init = tensor::EmptyOp::create(rewriter, loc, keptShape, accType);
    Value neutral = arith::ConstantOp::create(
        rewriter, loc, neutralOf(rewriter, kind, accType));
    Value filled =
        linalg::FillOp::create(rewriter, loc, neutral, init).getResult(0);
    SmallVector<AffineMap> maps = {
        AffineMap::getMultiDimIdentityMap(rank, getContext())
            .shiftDims(extra),
        AffineMap::get(extra + rank, 0, resultDims, getContext())};
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{accTensor}, x, filled, maps, iterators,
            [&](OpBuilder &b, Location nestedLoc, ValueRange args) {
              Value v = convertScalar(b, nestedLoc, args[0], accType);
              linalg::YieldOp::create(b, nestedLoc,
                                      combine(b, nestedLoc, kind, args[1], v));
            })
            .getResult(0);

    // The mean divides in the accumulator type; then one rounding.
    if (kind == ReduceKind::mean || accType != element) {
      auto type = RankedTensorType::get(keptShape, element);
      result = buildParallelGeneric(
          rewriter, loc, type, result,
          rewriter.getMultiDimIdentityMap(type.getRank()), Value(),
          [&](OpBuilder &b, Location nestedLoc, ValueRange elements) {
            Value v = elements[0];
            if (kind == ReduceKind::mean)
              v = arith::DivFOp::create(
                  b, nestedLoc, v,
                  arith::ConstantOp::create(
                      b, nestedLoc,
                      b.getFloatAttr(accType, static_cast<double>(count))));
            return convertScalar(b, nestedLoc, v, element);
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateKilnReduceToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ReduceToGeneric>(patterns.getContext());
}

} // namespace mlir::kiln
