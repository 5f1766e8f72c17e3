// kiln→linalg for elementwise ops and constants: one linalg.generic per op with
// identity maps, parallel iterators and an arith/math body computing what the
// eager kernel does.
#include "dialect/KilnOps.h"
#include "passes/Passes.h"
#include "passes/conversion/KilnToLinalg/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/DialectConversion.h"

#include <numbers>

namespace mlir::kiln {

//===----------------------------------------------------------------------===//
// Shared helpers (Patterns.h)
//===----------------------------------------------------------------------===//

Type mathTypeOf(Type type) {
  if (type.isF16() || type.isBF16())
    return Float32Type::get(type.getContext());
  return type;
}

// `value` (a float) widened or narrowed to `to`, rounding to nearest even.
static Value resizeFloat(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, to, value);
  return arith::TruncFOp::create(b, loc, to, value);
}

static Value zeroOf(OpBuilder &b, Location loc, Type type) {
  return arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
}

Value convertScalar(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  // Half types are never computed in directly, as in the eager kernels.
  if (isa<FloatType>(from))
    value = resizeFloat(b, loc, value, mathTypeOf(from));
  if (to.isInteger(1)) {
    if (isa<FloatType>(from))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                   zeroOf(b, loc, value.getType()));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value,
                                 zeroOf(b, loc, from));
  }
  if (isa<FloatType>(to)) {
    Type math = mathTypeOf(to);
    Value wide;
    if (isa<FloatType>(from))
      wide = resizeFloat(b, loc, value, math);
    else if (from.isInteger(1))
      wide = arith::UIToFPOp::create(b, loc, math, value);
    else
      wide = arith::SIToFPOp::create(b, loc, math, value);
    return resizeFloat(b, loc, wide, to);
  }
  if (isa<FloatType>(from))
    return arith::FPToSIOp::create(b, loc, to, value);
  if (from.getIntOrFloatBitWidth() > to.getIntOrFloatBitWidth())
    return arith::TruncIOp::create(b, loc, to, value);
  if (from.isInteger(1))
    return arith::ExtUIOp::create(b, loc, to, value);
  return arith::ExtSIOp::create(b, loc, to, value);
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                  Value like) {
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(tensor::DimOp::create(b, loc, like, d));
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(),
                                 dynamicSizes);
}

OpFoldResult dimSize(OpBuilder &b, Location loc, Value x, int64_t d) {
  auto type = cast<RankedTensorType>(x.getType());
  if (!type.isDynamicDim(d))
    return b.getIndexAttr(type.getDimSize(d));
  return tensor::DimOp::create(b, loc, x, d).getResult();
}

SmallVector<OpFoldResult> mixedSizes(OpBuilder &b, ArrayRef<int64_t> sizes,
                                     ValueRange dynamicSizes) {
  SmallVector<OpFoldResult> mixed;
  auto next = dynamicSizes.begin();
  for (int64_t size : sizes)
    mixed.push_back(ShapedType::isDynamic(size) ? OpFoldResult(*next++)
                                                : b.getIndexAttr(size));
  return mixed;
}

Value SizeBuilder::value(OpFoldResult size) const {
  if (auto attr = dyn_cast<Attribute>(size))
    return arith::ConstantIndexOp::create(b, loc,
                                          cast<IntegerAttr>(attr).getInt());
  return cast<Value>(size);
}

// `fold` on two static sizes, else the arith op `Op` on their values.
template <typename Op, typename Fold>
static OpFoldResult sizeOp(const SizeBuilder &s, OpFoldResult x, OpFoldResult y,
                           Fold fold) {
  std::optional<int64_t> cx = getConstantIntValue(x), cy = getConstantIntValue(y);
  if (cx && cy)
    return s.b.getIndexAttr(fold(*cx, *cy));
  return Op::create(s.b, s.loc, s.value(x), s.value(y)).getResult();
}

OpFoldResult SizeBuilder::add(OpFoldResult x, OpFoldResult y) const {
  if (isConstantIntValue(y, 0))
    return x;
  return sizeOp<arith::AddIOp>(*this, x, y,
                               [](int64_t l, int64_t r) { return l + r; });
}
OpFoldResult SizeBuilder::sub(OpFoldResult x, OpFoldResult y) const {
  if (isConstantIntValue(y, 0))
    return x;
  return sizeOp<arith::SubIOp>(*this, x, y,
                               [](int64_t l, int64_t r) { return l - r; });
}
OpFoldResult SizeBuilder::mul(OpFoldResult x, OpFoldResult y) const {
  if (isConstantIntValue(y, 1))
    return x;
  if (isConstantIntValue(x, 1))
    return y;
  return sizeOp<arith::MulIOp>(*this, x, y,
                               [](int64_t l, int64_t r) { return l * r; });
}
OpFoldResult SizeBuilder::div(OpFoldResult x, int64_t y) const {
  return sizeOp<arith::DivUIOp>(*this, x, b.getIndexAttr(y),
                                [](int64_t l, int64_t r) { return l / r; });
}
OpFoldResult SizeBuilder::rem(OpFoldResult x, int64_t y) const {
  return sizeOp<arith::RemUIOp>(*this, x, b.getIndexAttr(y),
                                [](int64_t l, int64_t r) { return l % r; });
}
OpFoldResult SizeBuilder::max(OpFoldResult x, OpFoldResult y) const {
  return sizeOp<arith::MaxSIOp>(
      *this, x, y, [](int64_t l, int64_t r) { return std::max(l, r); });
}
OpFoldResult SizeBuilder::min(OpFoldResult x, OpFoldResult y) const {
  return sizeOp<arith::MinSIOp>(
      *this, x, y, [](int64_t l, int64_t r) { return std::min(l, r); });
}

Value buildParallelGeneric(OpBuilder &b, Location loc,
                           RankedTensorType resultType, ValueRange inputs,
                           ArrayRef<AffineMap> inputMaps, Value like,
                           ScalarBuilder body) {
  return buildParallelGenericInto(b, loc, emptyTensor(b, loc, resultType, like),
                                  inputs, inputMaps, body);
}

Value buildParallelGenericInto(OpBuilder &b, Location loc, Value init,
                               ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                               ScalarBuilder body) {
  auto resultType = cast<RankedTensorType>(init.getType());
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  bool built = true;
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = body(nested, nestedLoc, args.drop_back());
        built = bool(result);
        linalg::YieldOp::create(nested, nestedLoc,
                                result ? result : args.back());
      });
  // What was built is rolled back with the pattern that fails.
  return built ? generic.getResult(0) : Value();
}

namespace {

//===----------------------------------------------------------------------===//
// Scalar bodies: each op's formula on elements already in their math type
//===----------------------------------------------------------------------===//

bool isFloat(Value v) { return isa<FloatType>(v.getType()); }

Value constantLike(OpBuilder &b, Location loc, Value like, double value) {
  Type type = like.getType();
  if (isa<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

// One float formula: math (or arith) `FloatOp` on the operands; none for
// integers.
template <typename FloatOp>
Value floatOnly(OpBuilder &b, Location loc, ValueRange x) {
  if (!isFloat(x[0]))
    return {};
  return FloatOp::create(b, loc, x);
}

// A float and an integer formula.
template <typename FloatOp, typename IntOp>
Value floatOrInt(OpBuilder &b, Location loc, ValueRange x) {
  if (isFloat(x[0]))
    return FloatOp::create(b, loc, x);
  return IntOp::create(b, loc, x);
}

Value scalarOf(NegOp, OpBuilder &b, Location loc, ValueRange x) {
  if (isFloat(x[0]))
    return arith::NegFOp::create(b, loc, x[0]);
  return arith::SubIOp::create(b, loc, constantLike(b, loc, x[0], 0), x[0]);
}
Value scalarOf(AbsOp, OpBuilder &b, Location loc, ValueRange x) {
  return floatOrInt<math::AbsFOp, math::AbsIOp>(b, loc, x);
}
// NaN stays NaN: `ugt` is true for unordered operands.
Value scalarOf(ReluOp, OpBuilder &b, Location loc, ValueRange x) {
  Value zero = constantLike(b, loc, x[0], 0);
  if (!isFloat(x[0]))
    return arith::MaxSIOp::create(b, loc, x[0], zero);
  Value keep =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UGT, x[0], zero);
  return arith::SelectOp::create(b, loc, keep, x[0], zero);
}
// Bitwise: x xor all-ones (for i1, xor true).
Value scalarOf(NotOp, OpBuilder &b, Location loc, ValueRange x) {
  if (isFloat(x[0]))
    return {};
  return arith::XOrIOp::create(b, loc, x[0], constantLike(b, loc, x[0], -1));
}
Value scalarOf(ExpOp, OpBuilder &b, Location loc, ValueRange x) {
  return floatOnly<math::ExpOp>(b, loc, x);
}
Value scalarOf(LogOp, OpBuilder &b, Location loc, ValueRange x) {
  return floatOnly<math::LogOp>(b, loc, x);
}
Value scalarOf(SqrtOp, OpBuilder &b, Location loc, ValueRange x) {
  return floatOnly<math::SqrtOp>(b, loc, x);
}
// 1 / sqrt(x), as the eager kernel (math.rsqrt may become an approximation).
Value scalarOf(RsqrtOp, OpBuilder &b, Location loc, ValueRange x) {
  Value root = floatOnly<math::SqrtOp>(b, loc, x);
  if (!root)
    return {};
  return arith::DivFOp::create(b, loc, constantLike(b, loc, x[0], 1), root);
}
Value scalarOf(TanhOp, OpBuilder &b, Location loc, ValueRange x) {
  return floatOnly<math::TanhOp>(b, loc, x);
}
// 1 / (1 + e^-x)
Value scalarOf(SigmoidOp, OpBuilder &b, Location loc, ValueRange x) {
  if (!isFloat(x[0]))
    return {};
  Value one = constantLike(b, loc, x[0], 1);
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x[0]));
  return arith::DivFOp::create(b, loc, one,
                               arith::AddFOp::create(b, loc, one, e));
}
// (0.5 * x) * (1 + erf(x * sqrt(2)/2)), operation for operation as the eager
// kernel.
Value scalarOf(GeluOp, OpBuilder &b, Location loc, ValueRange x) {
  if (!isFloat(x[0]))
    return {};
  Value half = constantLike(b, loc, x[0], 0.5);
  Value one = constantLike(b, loc, x[0], 1);
  Value rsqrt2 = constantLike(b, loc, x[0], std::numbers::sqrt2 / 2);
  Value erf =
      math::ErfOp::create(b, loc, arith::MulFOp::create(b, loc, x[0], rsqrt2));
  return arith::MulFOp::create(b, loc,
                               arith::MulFOp::create(b, loc, half, x[0]),
                               arith::AddFOp::create(b, loc, one, erf));
}
Value scalarOf(SinOp, OpBuilder &b, Location loc, ValueRange x) {
  return floatOnly<math::SinOp>(b, loc, x);
}
Value scalarOf(CosOp, OpBuilder &b, Location loc, ValueRange x) {
  return floatOnly<math::CosOp>(b, loc, x);
}
Value scalarOf(FloorOp, OpBuilder &b, Location loc, ValueRange x) {
  return floatOnly<math::FloorOp>(b, loc, x);
}

Value scalarOf(AddOp, OpBuilder &b, Location loc, ValueRange x) {
  return floatOrInt<arith::AddFOp, arith::AddIOp>(b, loc, x);
}
Value scalarOf(SubOp, OpBuilder &b, Location loc, ValueRange x) {
  return floatOrInt<arith::SubFOp, arith::SubIOp>(b, loc, x);
}
Value scalarOf(MulOp, OpBuilder &b, Location loc, ValueRange x) {
  return floatOrInt<arith::MulFOp, arith::MulIOp>(b, loc, x);
}
// Integer division truncates toward zero.
Value scalarOf(DivOp, OpBuilder &b, Location loc, ValueRange x) {
  return floatOrInt<arith::DivFOp, arith::DivSIOp>(b, loc, x);
}

// Integers as the eager kernel: exact (wrapping) powers for b >= 0; for b < 0,
// 1/a^|b| truncated: 1 for a = 1, ±1 for a = -1 by b's parity, else 0.
Value integerPow(OpBuilder &b, Location loc, Value base, Value exponent) {
  using P = arith::CmpIPredicate;
  Value zero = constantLike(b, loc, base, 0);
  Value one = constantLike(b, loc, base, 1);
  Value minusOne = constantLike(b, loc, base, -1);
  auto cmp = [&](P p, Value l, Value r) {
    return arith::CmpIOp::create(b, loc, p, l, r);
  };
  auto select = [&](Value c, Value t, Value f) {
    return arith::SelectOp::create(b, loc, c, t, f);
  };
  // A negative exponent never reaches ipowi, whose lowering divides by a.
  Value power = math::IPowIOp::create(
      b, loc, base, arith::MaxSIOp::create(b, loc, exponent, zero));
  Value odd = cmp(P::ne, arith::AndIOp::create(b, loc, exponent, one), zero);
  Value negative = select(
      cmp(P::eq, base, one), one,
      select(cmp(P::eq, base, minusOne), select(odd, minusOne, one), zero));
  return select(cmp(P::slt, exponent, zero), negative, power);
}
Value scalarOf(PowOp, OpBuilder &b, Location loc, ValueRange x) {
  if (isFloat(x[0]))
    return math::PowFOp::create(b, loc, x[0], x[1]);
  return integerPow(b, loc, x[0], x[1]);
}

// Floats as the eager kernel: a NaN operand is the result (the first one),
// else `better(a, b) ? a : b`; so max(+0, -0) is -0, as there.
template <arith::CmpFPredicate Better, typename IntOp>
Value extremum(OpBuilder &b, Location loc, ValueRange x) {
  if (!isFloat(x[0]))
    return IntOp::create(b, loc, x);
  using P = arith::CmpFPredicate;
  auto cmp = [&](P p, Value l, Value r) {
    return arith::CmpFOp::create(b, loc, p, l, r);
  };
  Value best =
      arith::SelectOp::create(b, loc, cmp(Better, x[0], x[1]), x[0], x[1]);
  Value bOrBest =
      arith::SelectOp::create(b, loc, cmp(P::UNO, x[1], x[1]), x[1], best);
  return arith::SelectOp::create(b, loc, cmp(P::UNO, x[0], x[0]), x[0],
                                 bOrBest);
}
Value scalarOf(MaxOp, OpBuilder &b, Location loc, ValueRange x) {
  return extremum<arith::CmpFPredicate::OGT, arith::MaxSIOp>(b, loc, x);
}
Value scalarOf(MinOp, OpBuilder &b, Location loc, ValueRange x) {
  return extremum<arith::CmpFPredicate::OLT, arith::MinSIOp>(b, loc, x);
}
Value scalarOf(AndOp, OpBuilder &b, Location loc, ValueRange x) {
  return isFloat(x[0]) ? Value() : arith::AndIOp::create(b, loc, x);
}
Value scalarOf(OrOp, OpBuilder &b, Location loc, ValueRange x) {
  return isFloat(x[0]) ? Value() : arith::OrIOp::create(b, loc, x);
}

// Floats compare ordered (`ne` unordered, so true for NaN), integers signed,
// i1 unsigned.
Value scalarOf(CompareOp op, OpBuilder &b, Location loc, ValueRange x) {
  using D = CompareDirection;
  D direction = op.getDirection();
  if (isFloat(x[0])) {
    using P = arith::CmpFPredicate;
    static constexpr P kFloat[] = {P::OEQ, P::UNE, P::OLT,
                                   P::OLE, P::OGT, P::OGE};
    return arith::CmpFOp::create(b, loc, kFloat[static_cast<int>(direction)],
                                 x[0], x[1]);
  }
  using P = arith::CmpIPredicate;
  static constexpr P kSigned[] = {P::eq, P::ne, P::slt, P::sle, P::sgt, P::sge};
  static constexpr P kUnsigned[] = {P::eq,  P::ne,  P::ult,
                                    P::ule, P::ugt, P::uge};
  bool isBool = x[0].getType().isInteger(1);
  return arith::CmpIOp::create(
      b, loc, (isBool ? kUnsigned : kSigned)[static_cast<int>(direction)], x[0],
      x[1]);
}
static_assert(static_cast<int>(CompareDirection::ge) == 5,
              "the predicate tables follow the enum's order");

Value scalarOf(SelectOp, OpBuilder &b, Location loc, ValueRange x) {
  return arith::SelectOp::create(b, loc, x[0], x[1], x[2]);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

// kiln.<op> → linalg.generic computing scalarOf(op) on every element. Operands
// enter the body in their math type (f16, bf16 as f32) and the result leaves
// rounded to its element type, as the eager kernels compute.
template <typename OpTy>
struct ElementwiseToGeneric : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    ValueRange inputs = adaptor.getOperands();
    SmallVector<AffineMap> maps(
        inputs.size(), rewriter.getMultiDimIdentityMap(type.getRank()));
    // The last operand has the result's shape (select's cond is first).
    Value result = buildParallelGeneric(
        rewriter, op.getLoc(), type, inputs, maps, inputs.back(),
        [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          SmallVector<Value> math;
          for (Value element : elements)
            math.push_back(
                convertScalar(b, loc, element, mathTypeOf(element.getType())));
          Value value = scalarOf(op, b, loc, math);
          return value ? convertScalar(b, loc, value, type.getElementType())
                       : value;
        });
    if (!result)
      return op.emitOpError("cannot be converted to linalg: no scalar form "
                            "for element type ")
             << cast<RankedTensorType>(inputs.front().getType())
                    .getElementType();
    rewriter.replaceOp(op, result);
    return success();
  }
};

// kiln.convert → linalg.generic of convertScalar (no math-type round trip).
struct ConvertToGeneric : OpConversionPattern<ConvertOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConvertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Value result = buildParallelGeneric(
        rewriter, op.getLoc(), type, adaptor.getX(),
        rewriter.getMultiDimIdentityMap(type.getRank()), adaptor.getX(),
        [&](OpBuilder &b, Location loc, ValueRange elements) {
          return convertScalar(b, loc, elements[0], type.getElementType());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

// kiln.constant → arith.constant of the same (dense or dense_resource) value.
struct ConstantToArith : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, cast<TypedAttr>(Attribute(op.getValue())));
    return success();
  }
};

} // namespace

void populateKilnElementwiseToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<
      // unary
      ElementwiseToGeneric<NegOp>, ElementwiseToGeneric<AbsOp>,
      ElementwiseToGeneric<ReluOp>, ElementwiseToGeneric<NotOp>,
      ElementwiseToGeneric<ExpOp>, ElementwiseToGeneric<LogOp>,
      ElementwiseToGeneric<SqrtOp>, ElementwiseToGeneric<RsqrtOp>,
      ElementwiseToGeneric<TanhOp>, ElementwiseToGeneric<SigmoidOp>,
      ElementwiseToGeneric<GeluOp>, ElementwiseToGeneric<SinOp>,
      ElementwiseToGeneric<CosOp>, ElementwiseToGeneric<FloorOp>,
      // binary
      ElementwiseToGeneric<AddOp>, ElementwiseToGeneric<SubOp>,
      ElementwiseToGeneric<MulOp>, ElementwiseToGeneric<DivOp>,
      ElementwiseToGeneric<PowOp>, ElementwiseToGeneric<MaxOp>,
      ElementwiseToGeneric<MinOp>, ElementwiseToGeneric<AndOp>,
      ElementwiseToGeneric<OrOp>,
      // compare, select, convert, constant
      ElementwiseToGeneric<CompareOp>, ElementwiseToGeneric<SelectOp>,
      ConvertToGeneric, ConstantToArith>(patterns.getContext());
}

} // namespace mlir::kiln
