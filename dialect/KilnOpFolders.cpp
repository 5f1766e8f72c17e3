// Folders of the kiln ops: identities that return an operand, and constant
// folding up to kFoldElementLimit result elements (any size when every
// operand is a splat). Identities that change NaN or infinity results
// (x * 0, x - x, x / x) are deliberately absent.

#include "dialect/KilnOps.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/APSInt.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::kiln;
using llvm::APFloat;
using llvm::APInt;

namespace {

constexpr llvm::RoundingMode kRound = llvm::RoundingMode::NearestTiesToEven;

//===----------------------------------------------------------------------===//
// Constant operands and results
//===----------------------------------------------------------------------===//

bool allSplat(ArrayRef<DenseElementsAttr> constants) {
  return llvm::all_of(constants,
                      [](DenseElementsAttr c) { return c.isSplat(); });
}

// The operands as dense constants, if all are and folding them into
// `resultType` stays within the element limit.
std::optional<SmallVector<DenseElementsAttr>>
foldableConstants(ArrayRef<Attribute> operands, Type resultType) {
  SmallVector<DenseElementsAttr> constants;
  for (Attribute operand : operands) {
    auto dense = dyn_cast_or_null<DenseElementsAttr>(operand);
    if (!dense)
      return std::nullopt;
    constants.push_back(dense);
  }
  auto type = cast<ShapedType>(resultType);
  if (!type.hasStaticShape() ||
      (!allSplat(constants) && type.getNumElements() > kFoldElementLimit))
    return std::nullopt;
  return constants;
}

// Builds a constant of `type` whose element i is `element(i)` (one element
// makes a splat); null if `element` gives up on any element.
template <typename T, typename Fn>
DenseElementsAttr buildElements(ShapedType type, bool splat, Fn element) {
  int64_t count = splat ? 1 : type.getNumElements();
  SmallVector<T> values;
  values.reserve(count);
  for (int64_t i = 0; i < count; ++i) {
    std::optional<T> value = element(i);
    if (!value)
      return {};
    values.push_back(std::move(*value));
  }
  return DenseElementsAttr::get(type, values);
}

// Applies `fn` to the elements of `a` and `b` (read as In) pairwise.
template <typename In, typename Out, typename Fn>
DenseElementsAttr mapPairs(ShapedType type, DenseElementsAttr a,
                           DenseElementsAttr b, Fn fn) {
  auto as = a.getValues<In>();
  auto bs = b.getValues<In>();
  return buildElements<Out>(
      type, a.isSplat() && b.isSplat(),
      [&](int64_t i) -> std::optional<Out> { return fn(as[i], bs[i]); });
}

// Whether `attr` is a splat constant of `value` (0 matches -0.0 too).
bool isSplatOf(Attribute attr, int64_t value) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return false;
  if (isa<FloatType>(dense.getElementType())) {
    APFloat splat = dense.getSplatValue<APFloat>();
    return value == 0 ? splat.isZero()
                      : splat.isExactlyValue(static_cast<double>(value));
  }
  return dense.getSplatValue<APInt>() == static_cast<uint64_t>(value);
}

// `x` where the other operand is a splat of the op's identity element and
// `x` already has the result type; null otherwise.
Value foldIdentity(Value x, Attribute other, int64_t identity, Type type) {
  return isSplatOf(other, identity) && x.getType() == type ? x : Value();
}

//===----------------------------------------------------------------------===//
// Elementwise constant folding
//===----------------------------------------------------------------------===//

using FloatFn = llvm::function_ref<APFloat(const APFloat &)>;
using IntFn = llvm::function_ref<APInt(const APInt &)>;
using FloatPairFn =
    llvm::function_ref<std::optional<APFloat>(const APFloat &, const APFloat &)>;
using IntPairFn =
    llvm::function_ref<std::optional<APInt>(const APInt &, const APInt &)>;

// Folds a unary op; an element kind without a function does not fold.
OpFoldResult foldUnary(Attribute operand, Type resultType, FloatFn onFloat,
                       IntFn onInt = {}) {
  auto constants = foldableConstants({operand}, resultType);
  if (!constants)
    return {};
  DenseElementsAttr x = constants->front();
  auto type = cast<ShapedType>(resultType);
  if (isa<FloatType>(x.getElementType())) {
    if (!onFloat)
      return {};
    auto xs = x.getValues<APFloat>();
    return buildElements<APFloat>(type, x.isSplat(), [&](int64_t i) {
      return std::optional<APFloat>(onFloat(xs[i]));
    });
  }
  if (!onInt)
    return {};
  auto xs = x.getValues<APInt>();
  return buildElements<APInt>(type, x.isSplat(), [&](int64_t i) {
    return std::optional<APInt>(onInt(xs[i]));
  });
}

// Folds a binary op whose operands and result share one element type.
OpFoldResult foldBinary(ArrayRef<Attribute> operands, Type resultType,
                        FloatPairFn onFloat, IntPairFn onInt) {
  auto constants = foldableConstants(operands, resultType);
  if (!constants)
    return {};
  DenseElementsAttr a = (*constants)[0], b = (*constants)[1];
  auto type = cast<ShapedType>(resultType);
  if (isa<FloatType>(a.getElementType()))
    return onFloat ? mapPairs<APFloat, APFloat>(type, a, b, onFloat)
                   : DenseElementsAttr();
  return onInt ? mapPairs<APInt, APInt>(type, a, b, onInt)
               : DenseElementsAttr();
}

double toDouble(APFloat x) {
  bool lost;
  x.convert(APFloat::IEEEdouble(), kRound, &lost);
  return x.convertToDouble();
}

APFloat fromDouble(double value, const llvm::fltSemantics &semantics) {
  APFloat result(value);
  bool lost;
  result.convert(semantics, kRound, &lost);
  return result;
}

// Evaluates a libm function in double precision, rounded to x's type.
APFloat viaDouble(const APFloat &x, double (*fn)(double)) {
  return fromDouble(fn(toDouble(x)), x.getSemantics());
}

APFloat relu(const APFloat &x) {
  bool positive = x.compare(APFloat::getZero(x.getSemantics())) ==
                  APFloat::cmpGreaterThan;
  return positive || x.isNaN() ? x : APFloat::getZero(x.getSemantics());
}

// Integer power by squaring, wrapping like the runtime's multiply; negative
// exponents do not fold.
std::optional<APInt> intPow(const APInt &base, const APInt &exponent) {
  if (exponent.isNegative())
    return std::nullopt;
  APInt result(base.getBitWidth(), 1), square = base, e = exponent;
  for (; !e.isZero(); e.lshrInPlace(1)) {
    if (e[0])
      result *= square;
    square *= square;
  }
  return result;
}

// Signed division truncating toward zero; x / 0 and overflow do not fold.
std::optional<APInt> intDiv(const APInt &a, const APInt &b) {
  bool overflow = false;
  if (b.isZero())
    return std::nullopt;
  APInt result = a.sdiv_ov(b, overflow);
  return overflow ? std::nullopt : std::optional<APInt>(result);
}

// The order of two integers as APFloat reports it for floats; i1 compares
// unsigned (false < true), wider integers signed.
APFloat::cmpResult compareInts(const APInt &a, const APInt &b) {
  bool isUnsigned = a.getBitWidth() == 1;
  if (a == b)
    return APFloat::cmpEqual;
  return (isUnsigned ? a.ult(b) : a.slt(b)) ? APFloat::cmpLessThan
                                            : APFloat::cmpGreaterThan;
}

bool holds(CompareDirection direction, APFloat::cmpResult order) {
  bool less = order == APFloat::cmpLessThan;
  bool equal = order == APFloat::cmpEqual;
  bool greater = order == APFloat::cmpGreaterThan;
  switch (direction) {
  case CompareDirection::eq:
    return equal;
  case CompareDirection::ne:
    return !equal; // true for unordered (NaN) operands
  case CompareDirection::lt:
    return less;
  case CompareDirection::le:
    return less || equal;
  case CompareDirection::gt:
    return greater;
  case CompareDirection::ge:
    return greater || equal;
  }
  llvm_unreachable("unknown compare direction");
}

template <typename T>
DenseElementsAttr selectElements(ShapedType type,
                                 ArrayRef<DenseElementsAttr> constants) {
  auto conds = constants[0].getValues<bool>();
  auto as = constants[1].getValues<T>();
  auto bs = constants[2].getValues<T>();
  return buildElements<T>(type, allSplat(constants), [&](int64_t i) {
    return std::optional<T>(conds[i] ? as[i] : bs[i]);
  });
}

//===----------------------------------------------------------------------===//
// Conversions (semantics in ConvertOp's description)
//===----------------------------------------------------------------------===//

APFloat floatToFloat(APFloat x, FloatType to) {
  bool lost;
  x.convert(to.getFloatSemantics(), kRound, &lost);
  return x;
}

// Truncates toward zero; NaN and out-of-range values do not fold.
std::optional<APInt> floatToInt(const APFloat &x, unsigned width) {
  if (width == 1)
    return APInt(1, !x.isZero());
  llvm::APSInt result(width, /*isUnsigned=*/false);
  bool exact;
  if (x.convertToInteger(result, APFloat::rmTowardZero, &exact) ==
      APFloat::opInvalidOp)
    return std::nullopt;
  return APInt(result);
}

APFloat intToFloat(const APInt &x, FloatType to) {
  APFloat result(to.getFloatSemantics());
  result.convertFromAPInt(x, /*IsSigned=*/x.getBitWidth() != 1, kRound);
  return result;
}

APInt intToInt(const APInt &x, unsigned width) {
  if (width == 1)
    return APInt(1, !x.isZero());
  return x.getBitWidth() == 1 ? x.zext(width) : x.sextOrTrunc(width);
}

DenseElementsAttr convertElements(DenseElementsAttr x, ShapedType type) {
  Type to = type.getElementType();
  auto toFloat = dyn_cast<FloatType>(to);
  unsigned width = to.getIntOrFloatBitWidth();
  if (isa<FloatType>(x.getElementType())) {
    auto xs = x.getValues<APFloat>();
    if (toFloat)
      return buildElements<APFloat>(type, x.isSplat(), [&](int64_t i) {
        return std::optional<APFloat>(floatToFloat(xs[i], toFloat));
      });
    return buildElements<APInt>(type, x.isSplat(), [&](int64_t i) {
      return floatToInt(xs[i], width);
    });
  }
  auto xs = x.getValues<APInt>();
  if (toFloat)
    return buildElements<APFloat>(type, x.isSplat(), [&](int64_t i) {
      return std::optional<APFloat>(intToFloat(xs[i], toFloat));
    });
  return buildElements<APInt>(type, x.isSplat(), [&](int64_t i) {
    return std::optional<APInt>(intToInt(xs[i], width));
  });
}

//===----------------------------------------------------------------------===//
// Shape op constant folding
//===----------------------------------------------------------------------===//

using SourceIndexFn = llvm::function_ref<int64_t(ArrayRef<int64_t>)>;

template <typename T>
DenseElementsAttr rearrange(DenseElementsAttr x, ShapedType type,
                            SourceIndexFn sourceIndex) {
  auto xs = x.getValues<T>();
  SmallVector<int64_t> strides = computeStrides(type.getShape());
  return buildElements<T>(type, /*splat=*/false, [&](int64_t i) {
    return std::optional<T>(xs[sourceIndex(delinearize(i, strides))]);
  });
}

// Builds `type` from x's elements: the element at result index `idx` is x's
// element number `sourceIndex(idx)`.
DenseElementsAttr rearrangeElements(DenseElementsAttr x, ShapedType type,
                                    SourceIndexFn sourceIndex) {
  if (x.isSplat())
    return x.resizeSplat(type);
  if (isa<FloatType>(x.getElementType()))
    return rearrange<APFloat>(x, type, sourceIndex);
  return rearrange<APInt>(x, type, sourceIndex);
}

} // namespace

//===----------------------------------------------------------------------===//
// Constant
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  return foldUnary(
      adaptor.getX(), getType(), [](const APFloat &x) { return -x; },
      [](const APInt &x) { return -x; });
}

OpFoldResult AbsOp::fold(FoldAdaptor adaptor) {
  return foldUnary(
      adaptor.getX(), getType(), [](const APFloat &x) { return abs(x); },
      [](const APInt &x) { return x.abs(); });
}

OpFoldResult ReluOp::fold(FoldAdaptor adaptor) {
  return foldUnary(adaptor.getX(), getType(), relu, [](const APInt &x) {
    return x.isNegative() ? APInt::getZero(x.getBitWidth()) : x;
  });
}

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  return foldUnary(adaptor.getX(), getType(), {},
                   [](const APInt &x) { return ~x; });
}

OpFoldResult ExpOp::fold(FoldAdaptor adaptor) {
  return foldUnary(adaptor.getX(), getType(), [](const APFloat &x) {
    return viaDouble(x, [](double v) { return std::exp(v); });
  });
}

OpFoldResult LogOp::fold(FoldAdaptor adaptor) {
  return foldUnary(adaptor.getX(), getType(), [](const APFloat &x) {
    return viaDouble(x, [](double v) { return std::log(v); });
  });
}

OpFoldResult SqrtOp::fold(FoldAdaptor adaptor) {
  return foldUnary(adaptor.getX(), getType(), [](const APFloat &x) {
    return viaDouble(x, [](double v) { return std::sqrt(v); });
  });
}

OpFoldResult RsqrtOp::fold(FoldAdaptor adaptor) {
  return foldUnary(adaptor.getX(), getType(), [](const APFloat &x) {
    return viaDouble(x, [](double v) { return 1.0 / std::sqrt(v); });
  });
}

OpFoldResult TanhOp::fold(FoldAdaptor adaptor) {
  return foldUnary(adaptor.getX(), getType(), [](const APFloat &x) {
    return viaDouble(x, [](double v) { return std::tanh(v); });
  });
}

OpFoldResult SigmoidOp::fold(FoldAdaptor adaptor) {
  return foldUnary(adaptor.getX(), getType(), [](const APFloat &x) {
    return viaDouble(x, [](double v) { return 1.0 / (1.0 + std::exp(-v)); });
  });
}

OpFoldResult GeluOp::fold(FoldAdaptor adaptor) {
  return foldUnary(adaptor.getX(), getType(), [](const APFloat &x) {
    return viaDouble(x, [](double v) {
      return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    });
  });
}

OpFoldResult SinOp::fold(FoldAdaptor adaptor) {
  return foldUnary(adaptor.getX(), getType(), [](const APFloat &x) {
    return viaDouble(x, [](double v) { return std::sin(v); });
  });
}

OpFoldResult CosOp::fold(FoldAdaptor adaptor) {
  return foldUnary(adaptor.getX(), getType(), [](const APFloat &x) {
    return viaDouble(x, [](double v) { return std::cos(v); });
  });
}

OpFoldResult FloorOp::fold(FoldAdaptor adaptor) {
  return foldUnary(adaptor.getX(), getType(), [](const APFloat &x) {
    APFloat result = x;
    result.roundToIntegral(APFloat::rmTowardNegative);
    return result;
  });
}

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  // x + 0 -> x, although -0.0 + 0.0 is +0.0 (see ARCHITECTURE.md).
  if (Value x = foldIdentity(getLhs(), adaptor.getRhs(), 0, getType()))
    return x;
  if (Value x = foldIdentity(getRhs(), adaptor.getLhs(), 0, getType()))
    return x;
  return foldBinary(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return std::optional(a + b); },
      [](const APInt &a, const APInt &b) { return std::optional(a + b); });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (Value x = foldIdentity(getLhs(), adaptor.getRhs(), 0, getType()))
    return x;
  return foldBinary(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return std::optional(a - b); },
      [](const APInt &a, const APInt &b) { return std::optional(a - b); });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (Value x = foldIdentity(getLhs(), adaptor.getRhs(), 1, getType()))
    return x;
  if (Value x = foldIdentity(getRhs(), adaptor.getLhs(), 1, getType()))
    return x;
  return foldBinary(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return std::optional(a * b); },
      [](const APInt &a, const APInt &b) { return std::optional(a * b); });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (Value x = foldIdentity(getLhs(), adaptor.getRhs(), 1, getType()))
    return x;
  return foldBinary(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return std::optional(a / b); },
      intDiv);
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) {
        return std::optional(fromDouble(std::pow(toDouble(a), toDouble(b)),
                                        a.getSemantics()));
      },
      intPow);
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) {
        return std::optional(llvm::maximum(a, b));
      },
      [](const APInt &a, const APInt &b) {
        return std::optional(llvm::APIntOps::smax(a, b));
      });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) {
        return std::optional(llvm::minimum(a, b));
      },
      [](const APInt &a, const APInt &b) {
        return std::optional(llvm::APIntOps::smin(a, b));
      });
}

OpFoldResult AndOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getOperands(), getType(), {},
      [](const APInt &a, const APInt &b) { return std::optional(a & b); });
}

OpFoldResult OrOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getOperands(), getType(), {},
      [](const APInt &a, const APInt &b) { return std::optional(a | b); });
}

//===----------------------------------------------------------------------===//
// Compare, select, convert
//===----------------------------------------------------------------------===//

OpFoldResult CompareOp::fold(FoldAdaptor adaptor) {
  auto constants = foldableConstants(adaptor.getOperands(), getType());
  if (!constants)
    return {};
  DenseElementsAttr a = (*constants)[0], b = (*constants)[1];
  auto type = cast<ShapedType>(getType());
  CompareDirection direction = getDirection();
  if (isa<FloatType>(a.getElementType()))
    return mapPairs<APFloat, APInt>(
        type, a, b, [&](const APFloat &x, const APFloat &y) {
          return APInt(1, holds(direction, x.compare(y)));
        });
  return mapPairs<APInt, APInt>(type, a, b,
                                [&](const APInt &x, const APInt &y) {
                                  return APInt(1, holds(direction,
                                                        compareInts(x, y)));
                                });
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  auto constants = foldableConstants(adaptor.getOperands(), getType());
  if (!constants)
    return {};
  auto type = cast<ShapedType>(getType());
  if (isa<FloatType>(type.getElementType()))
    return selectElements<APFloat>(type, *constants);
  return selectElements<APInt>(type, *constants);
}

OpFoldResult ConvertOp::fold(FoldAdaptor adaptor) {
  if (getX().getType() == getType())
    return getX();
  auto constants = foldableConstants({adaptor.getX()}, getType());
  if (!constants)
    return {};
  return convertElements(constants->front(), cast<ShapedType>(getType()));
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  // With `?` dims equal types need not mean equal shapes ([?, ?] to [?, ?]).
  const bool staticShape = getType().hasStaticShape();
  if (staticShape && getX().getType() == getType())
    return getX();
  if (auto inner = getX().getDefiningOp<ReshapeOp>()) {
    if (staticShape && inner.getX().getType() == getType())
      return inner.getX();
    // Only the element count matters, so skip the inner reshape in place.
    getXMutable().assign(inner.getX());
    return getResult();
  }
  if (!staticShape)
    return {};
  auto constants = foldableConstants({adaptor.getX()}, getType());
  if (!constants)
    return {};
  return constants->front().reshape(cast<ShapedType>(getType()));
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  if (isIdentityPermutation(perm))
    return getX();
  if (auto inner = getX().getDefiningOp<TransposeOp>())
    if (isIdentityPermutation(applyPermutation(inner.getPermutation(), perm)))
      return inner.getX();
  auto constants = foldableConstants({adaptor.getX()}, getType());
  if (!constants)
    return {};
  // Result dim i is operand dim perm[i].
  SmallVector<int64_t> strides =
      computeStrides(getX().getType().getShape());
  return rearrangeElements(constants->front(), cast<ShapedType>(getType()),
                           [&](ArrayRef<int64_t> idx) {
                             int64_t source = 0;
                             for (auto [i, d] : llvm::enumerate(perm))
                               source += idx[i] * strides[d];
                             return source;
                           });
}

// A reduction of a float splat: mean, max and min give the splat's value; a sum the value
// times the count, folded only where that product is exact in the element type (a count,
// ops::countOver's sum of ones, which a static trace then reads as the number it is).
OpFoldResult ReduceOp::fold(FoldAdaptor adaptor) {
  auto type = dyn_cast<RankedTensorType>(getType());
  auto splat = dyn_cast_if_present<SplatElementsAttr>(adaptor.getX());
  if (!type || !type.hasStaticShape() || !getX().getType().hasStaticShape() || !splat)
    return {};
  auto floatType = dyn_cast<FloatType>(type.getElementType());
  if (!floatType)
    return {};
  const double value = splat.getSplatValue<APFloat>().convertToDouble();
  double result = value;
  switch (getKind()) {
  case ReduceKind::mean:
  case ReduceKind::max:
  case ReduceKind::min:
    if (getX().getType().getNumElements() == 0)
      return {};
    break;
  case ReduceKind::prod:
    return {};
  case ReduceKind::sum: {
    const int64_t count =
        getX().getType().getNumElements() / std::max<int64_t>(type.getNumElements(), 1);
    result = value * double(count);
    break;
  }
  }
  APFloat folded(result);
  bool lost = false;
  folded.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
  if (lost || folded.convertToDouble() != result)
    return {};
  return SplatElementsAttr::get(type, folded);
}

OpFoldResult BroadcastInDimOp::fold(FoldAdaptor adaptor) {
  if (!getType().hasStaticShape())
    return {};
  if (getX().getType() == getType())
    return getX();
  auto constants = foldableConstants({adaptor.getX()}, getType());
  if (!constants)
    return {};
  // Operand dim i is result dim dims[i], or repeated where its size is 1.
  ArrayRef<int64_t> xShape = getX().getType().getShape();
  SmallVector<int64_t> strides = computeStrides(xShape);
  return rearrangeElements(constants->front(), cast<ShapedType>(getType()),
                           [&](ArrayRef<int64_t> idx) {
                             int64_t source = 0;
                             for (auto [i, d] : llvm::enumerate(getDims()))
                               if (xShape[i] != 1)
                                 source += idx[d] * strides[i];
                             return source;
                           });
}
