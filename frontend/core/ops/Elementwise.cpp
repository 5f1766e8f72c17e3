// Elementwise ops of the op table (unary, binary, compare, select, convert) and the public
// functions that promote and broadcast explicitly before dispatching them.
#include <cmath>

#include "frontend/core/kernels/Map.h"
#include "frontend/core/kernels/VecMath.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "frontend/core/ops/OpTable.h"
#include "frontend/core/ops/ShapeRules.h"

namespace kiln {
namespace ops {
namespace {

using Grads = std::vector<Tensor>;

// ---- kernels --------------------------------------------------------------------------

template <class Fn, DType... Types>
void unaryKernel(const OpArgs& args, std::span<Tensor> out) {
  dispatchDTypeAmong<Types...>(out[0].dtype(), "kernel", args.loc, [&]<class T>() {
    using M = OpMathType<T>;
    kernels::map<T, T>(out[0], {&args.inputs[0]}, [](T x) { return T(Fn::apply(M(x))); });
  });
}

template <class Fn>
constexpr KernelFn kFloatUnary =
    unaryKernel<Fn, DType::Float32, DType::Float64, DType::Float16, DType::BFloat16>;
template <class Fn>
constexpr KernelFn kNumericUnary = unaryKernel<Fn, DType::Float32, DType::Float64, DType::Float16,
                                               DType::BFloat16, DType::Int32, DType::Int64>;

template <class Fn, DType... Types>
void binaryKernel(const OpArgs& args, std::span<Tensor> out) {
  dispatchDTypeAmong<Types...>(out[0].dtype(), "kernel", args.loc, [&]<class T>() {
    using M = OpMathType<T>;
    kernels::map<T, T, T>(out[0], {&args.inputs[0], &args.inputs[1]},
                          [](T a, T b) { return T(Fn::apply(M(a), M(b))); });
  });
}

template <class Fn>
constexpr KernelFn kNumericBinary = binaryKernel<Fn, DType::Float32, DType::Float64, DType::Float16,
                                                 DType::BFloat16, DType::Int32, DType::Int64>;
// add/mul/max/min also take bools, as PyTorch (or, and, or, and).
template <class Fn>
constexpr KernelFn kAnyBinary = binaryKernel<Fn, DType::Float32, DType::Float64, DType::Float16,
                                             DType::BFloat16, DType::Int32, DType::Int64, DType::Bool>;

#define KILN_FN(Name, expr) \
  struct Name {             \
    template <class T>      \
    static T apply(T x) {   \
      return expr;          \
    }                       \
  };
KILN_FN(Neg, -x)
KILN_FN(Abs, x < T(0) ? -x : (x == T(0) ? T(0) : x))  // abs(-0.0) is +0.0
KILN_FN(Exp, kernels::exp(x))
KILN_FN(Log, kernels::log(x))
KILN_FN(Sqrt, std::sqrt(x))
KILN_FN(Rsqrt, T(1) / std::sqrt(x))
KILN_FN(Tanh, kernels::tanh(x))
KILN_FN(Sigmoid, T(1) / (T(1) + kernels::exp(-x)))
KILN_FN(Relu, (x != x || x > T(0)) ? x : T(0))  // NaN propagates, as PyTorch
KILN_FN(Sin, std::sin(x))
KILN_FN(Cos, std::cos(x))
KILN_FN(Floor, std::floor(x))
KILN_FN(Not, !x)
#undef KILN_FN

#define KILN_FN2(Name, expr)   \
  struct Name {                \
    template <class T>         \
    static T apply(T a, T b) { \
      return expr;             \
    }                          \
  };
KILN_FN2(Add, a + b)
KILN_FN2(Sub, a - b)
struct Mul {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) return a && b;  // bool mul is and, as PyTorch
    else return a * b;
  }
};
KILN_FN2(Div, a / b)
// Integers by repeated squaring, exact in 64 bits as PyTorch; negative exponents give
// 1/a^|b| truncated (0 unless |a| == 1).
template <class T>
T integerPow(T a, T b) {
  if (b < 0) return a == 1 ? T(1) : a == -1 ? ((b & 1) ? T(-1) : T(1)) : T(0);
  using U = std::make_unsigned_t<T>;  // wraps on overflow instead of UB, as PyTorch's CPU kernel
  U result = 1, base = U(a);
  for (U e = U(b); e; e >>= 1, base *= base)
    if (e & 1) result *= base;
  return T(result);
}
struct Pow {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return integerPow(a, b);
    else return T(std::pow(a, b));
  }
};
// NaN propagates through maximum/minimum, as in PyTorch.
KILN_FN2(Max, (a != a) ? a : (b != b) ? b : (a > b ? a : b))
KILN_FN2(Min, (a != a) ? a : (b != b) ? b : (a < b ? a : b))
KILN_FN2(And, a && b)
KILN_FN2(Or, a || b)
#undef KILN_FN2

void notKernel(const OpArgs& args, std::span<Tensor> out) {
  kernels::map<bool, bool>(out[0], {&args.inputs[0]}, [](bool x) { return !x; });
}

template <class Fn>
void boolBinaryKernel(const OpArgs& args, std::span<Tensor> out) {
  kernels::map<bool, bool, bool>(out[0], {&args.inputs[0], &args.inputs[1]},
                                 [](bool a, bool b) { return Fn::apply(a, b); });
}

template <class Cmp>
void compareAs(const OpArgs& args, Tensor& out) {
  dispatchDType(args.inputs[0].dtype(), [&]<class T>() {
    using M = OpMathType<T>;
    kernels::map<bool, T, T>(out, {&args.inputs[0], &args.inputs[1]},
                             [](T a, T b) { return Cmp{}(M(a), M(b)); });
  });
}

void compareKernel(const OpArgs& args, std::span<Tensor> out) {
  const std::string& dir = args.attrs.get<std::string>("direction");
  if (dir == "eq") compareAs<std::equal_to<>>(args, out[0]);
  else if (dir == "ne") compareAs<std::not_equal_to<>>(args, out[0]);
  else if (dir == "lt") compareAs<std::less<>>(args, out[0]);
  else if (dir == "le") compareAs<std::less_equal<>>(args, out[0]);
  else if (dir == "gt") compareAs<std::greater<>>(args, out[0]);
  else compareAs<std::greater_equal<>>(args, out[0]);
}

void selectKernel(const OpArgs& args, std::span<Tensor> out) {
  dispatchDType(out[0].dtype(), [&]<class T>() {
    kernels::map<T, bool, T, T>(out[0], {&args.inputs[0], &args.inputs[1], &args.inputs[2]},
                                [](bool c, T a, T b) { return c ? a : b; });
  });
}

void convertKernel(const OpArgs& args, std::span<Tensor> out) {
  dispatchDType(args.inputs[0].dtype(), [&]<class From>() {
    dispatchDType(out[0].dtype(), [&]<class To>() {
      using M = OpMathType<From>;
      kernels::map<To, From>(out[0], {&args.inputs[0]}, [](From x) {
        if constexpr (std::is_same_v<To, bool>) return M(x) != M(0);
        else return To(static_cast<OpMathType<To>>(M(x)));
      });
    });
  });
}

// ---- shape rules ----------------------------------------------------------------------

template <DTypeClass Cls>
std::vector<TensorMeta> unaryShape(const OpDef& op, std::span<const TensorMeta> in,
                                   const Attrs&, const SourceLoc& loc) {
  requireDType(op, in[0], Cls, loc);
  return {in[0]};
}

template <DTypeClass Cls>
std::vector<TensorMeta> binaryShape(const OpDef& op, std::span<const TensorMeta> in,
                                    const Attrs&, const SourceLoc& loc) {
  requireSameShapeAndDType(op, in, loc);
  requireDType(op, in[0], Cls, loc);
  return {in[0]};
}

std::vector<TensorMeta> compareShape(const OpDef& op, std::span<const TensorMeta> in,
                                     const Attrs&, const SourceLoc& loc) {
  requireSameShapeAndDType(op, in, loc);
  return withDType(in[0], kBool);
}

std::vector<TensorMeta> selectShape(const OpDef& op, std::span<const TensorMeta> in,
                                    const Attrs&, const SourceLoc& loc) {
  requireDType(op, in[0], DTypeClass::Bool, loc);
  requireSameShapeAndDType(op, in.subspan(1), loc);
  if (in[0].shape != in[1].shape)
    throw ShapeError::make(loc, op.name, "condition has shape ", in[0].shape,
                           " but the values have shape ", in[1].shape);
  return {in[1]};
}

std::vector<TensorMeta> convertShape(const OpDef&, std::span<const TensorMeta> in,
                                     const Attrs& attrs, const SourceLoc&) {
  return withDType(in[0], attrs.get<DType>("dtype"));
}

// ---- gradients (frontend ops, so a traced backward records ordinary ops) --------------

const Tensor& g0(const GradArgs& a) { return a.gradOutputs[0]; }
const Tensor& x0(const GradArgs& a) { return a.inputs[0]; }
const Tensor& x1(const GradArgs& a) { return a.inputs[1]; }
const Tensor& y0(const GradArgs& a) { return a.outputs[0]; }

Tensor mask(const Tensor& cond, const Tensor& like, const SourceLoc& loc) {
  return convert(cond, like.dtype(), loc);
}

Grads negGrad(const GradArgs& a) { return {neg(g0(a), a.loc)}; }
Grads absGrad(const GradArgs& a) {
  const SourceLoc& l = a.loc;
  Tensor sign = sub(mask(gt(x0(a), 0.0, l), x0(a), l), mask(lt(x0(a), 0.0, l), x0(a), l), l);
  return {mul(g0(a), sign, l)};
}
Grads expGrad(const GradArgs& a) { return {mul(g0(a), y0(a), a.loc)}; }
Grads logGrad(const GradArgs& a) { return {div(g0(a), x0(a), a.loc)}; }
Grads sqrtGrad(const GradArgs& a) { return {div(g0(a), mul(y0(a), 2.0, a.loc), a.loc)}; }
Grads rsqrtGrad(const GradArgs& a) {
  const SourceLoc& l = a.loc;
  Tensor cube = mul(mul(y0(a), y0(a), l), y0(a), l);
  return {mul(g0(a), mul(cube, -0.5, l), l)};
}
Grads tanhGrad(const GradArgs& a) {
  const SourceLoc& l = a.loc;
  return {mul(g0(a), sub(1.0, mul(y0(a), y0(a), l), l), l)};
}
Grads sigmoidGrad(const GradArgs& a) {
  const SourceLoc& l = a.loc;
  return {mul(g0(a), mul(y0(a), sub(1.0, y0(a), l), l), l)};
}
Grads reluGrad(const GradArgs& a) {
  return {mul(g0(a), mask(gt(y0(a), 0.0, a.loc), y0(a), a.loc), a.loc)};
}
Grads sinGrad(const GradArgs& a) { return {mul(g0(a), cos(x0(a), a.loc), a.loc)}; }
Grads cosGrad(const GradArgs& a) { return {neg(mul(g0(a), sin(x0(a), a.loc), a.loc), a.loc)}; }
Grads floorGrad(const GradArgs& a) { return {zeros_like(x0(a), a.loc)}; }

Grads addGrad(const GradArgs& a) { return {g0(a), g0(a)}; }
Grads subGrad(const GradArgs& a) { return {g0(a), neg(g0(a), a.loc)}; }
Grads mulGrad(const GradArgs& a) {
  return {mul(g0(a), x1(a), a.loc), mul(g0(a), x0(a), a.loc)};
}
Grads divGrad(const GradArgs& a) {
  const SourceLoc& l = a.loc;
  Tensor ga = div(g0(a), x1(a), l);
  return {ga, neg(mul(ga, div(x0(a), x1(a), l), l), l)};
}
// d/da a^b = b a^(b-1); d/db a^b = a^b log a (0 where a == 0, as PyTorch).
Grads powGrad(const GradArgs& a) {
  const SourceLoc& l = a.loc;
  Tensor ga = mul(g0(a), mul(x1(a), pow(x0(a), sub(x1(a), 1.0, l), l), l), l);
  Tensor logA = where(eq(x0(a), 0.0, l), zeros_like(x0(a), l), log(x0(a), l), l);
  return {ga, mul(g0(a), mul(y0(a), logA, l), l)};
}
// PyTorch's formula: ties split the gradient evenly, the losing side gets none, and
// when a NaN makes every comparison false both sides get all of it.
Grads minMaxGrad(const GradArgs& a, bool isMax) {
  const SourceLoc& l = a.loc;
  const Tensor &x = x0(a), &y = x1(a);
  Tensor split = where(eq(x, y, l), mul(g0(a), 0.5, l), g0(a), l);
  Tensor zero = zeros_like(split, l);
  Tensor xLoses = isMax ? lt(x, y, l) : gt(x, y, l);
  Tensor yLoses = isMax ? gt(x, y, l) : lt(x, y, l);
  return {where(xLoses, zero, split, l), where(yLoses, zero, split, l)};
}
Grads maxGrad(const GradArgs& a) { return minMaxGrad(a, true); }
Grads minGrad(const GradArgs& a) { return minMaxGrad(a, false); }

Grads selectGrad(const GradArgs& a) {
  const SourceLoc& l = a.loc;
  Tensor zero = zeros_like(g0(a), l);
  return {Tensor(), where(x0(a), g0(a), zero, l), where(x0(a), zero, g0(a), l)};
}
Grads convertGrad(const GradArgs& a) {
  if (!x0(a).is_floating_point()) return {Tensor()};
  return {convert(g0(a), x0(a).dtype(), a.loc)};
}

}  // namespace

#define KILN_UNARY_DEF(var, name, kiln, cls, kernel, grad, reads) \
  const OpDef var{name, kiln, unaryShape<DTypeClass::cls>, kernel, nullptr, grad, reads, true};
KILN_UNARY_DEF(kNeg, "neg", "kiln.neg", Numeric, kNumericUnary<Neg>, negGrad, kReadsNothing)
KILN_UNARY_DEF(kAbs, "abs", "kiln.abs", Numeric, kNumericUnary<Abs>, absGrad, kReadsInputs)
KILN_UNARY_DEF(kExp, "exp", "kiln.exp", Floating, kFloatUnary<Exp>, expGrad, kReadsOutputs)
KILN_UNARY_DEF(kLog, "log", "kiln.log", Floating, kFloatUnary<Log>, logGrad, kReadsInputs)
KILN_UNARY_DEF(kSqrt, "sqrt", "kiln.sqrt", Floating, kFloatUnary<Sqrt>, sqrtGrad, kReadsOutputs)
KILN_UNARY_DEF(kRsqrt, "rsqrt", "kiln.rsqrt", Floating, kFloatUnary<Rsqrt>, rsqrtGrad, kReadsOutputs)
KILN_UNARY_DEF(kTanh, "tanh", "kiln.tanh", Floating, kFloatUnary<Tanh>, tanhGrad, kReadsOutputs)
KILN_UNARY_DEF(kSigmoid, "sigmoid", "kiln.sigmoid", Floating, kFloatUnary<Sigmoid>, sigmoidGrad, kReadsOutputs)
KILN_UNARY_DEF(kRelu, "relu", "kiln.relu", Numeric, kNumericUnary<Relu>, reluGrad, kReadsOutputs)
KILN_UNARY_DEF(kSin, "sin", "kiln.sin", Floating, kFloatUnary<Sin>, sinGrad, kReadsInputs)
KILN_UNARY_DEF(kCos, "cos", "kiln.cos", Floating, kFloatUnary<Cos>, cosGrad, kReadsInputs)
KILN_UNARY_DEF(kFloor, "floor", "kiln.floor", Floating, kFloatUnary<Floor>, floorGrad, kReadsNothing)
KILN_UNARY_DEF(kNot, "logical_not", "kiln.not", Bool, notKernel, nullptr, kReadsNothing)
#undef KILN_UNARY_DEF

#define KILN_BINARY_DEF(var, name, kiln, cls, kernel, grad, reads) \
  const OpDef var{name, kiln, binaryShape<DTypeClass::cls>, kernel, nullptr, grad, reads, true};
KILN_BINARY_DEF(kAdd, "add", "kiln.add", Any, kAnyBinary<Add>, addGrad, kReadsNothing)
KILN_BINARY_DEF(kSub, "sub", "kiln.sub", Numeric, kNumericBinary<Sub>, subGrad, kReadsNothing)
KILN_BINARY_DEF(kMul, "mul", "kiln.mul", Any, kAnyBinary<Mul>, mulGrad, kReadsInputs)
KILN_BINARY_DEF(kDiv, "div", "kiln.div", Floating, kNumericBinary<Div>, divGrad, kReadsInputs)
KILN_BINARY_DEF(kPow, "pow", "kiln.pow", Numeric, kNumericBinary<Pow>, powGrad, kReadsBoth)
KILN_BINARY_DEF(kMax, "maximum", "kiln.max", Any, kAnyBinary<Max>, maxGrad, kReadsInputs)
KILN_BINARY_DEF(kMin, "minimum", "kiln.min", Any, kAnyBinary<Min>, minGrad, kReadsInputs)
KILN_BINARY_DEF(kAnd, "logical_and", "kiln.and", Bool, boolBinaryKernel<And>, nullptr, kReadsNothing)
KILN_BINARY_DEF(kOr, "logical_or", "kiln.or", Bool, boolBinaryKernel<Or>, nullptr, kReadsNothing)
#undef KILN_BINARY_DEF

const OpDef kCompare{"compare", "kiln.compare", compareShape, compareKernel, nullptr, nullptr};
const OpDef kSelect{"where", "kiln.select", selectShape, selectKernel, nullptr, selectGrad, kReadsInputs,
                    true};
const OpDef kConvert{"convert", "kiln.convert", convertShape, convertKernel, nullptr, convertGrad,
                     kReadsNothing, true};

}  // namespace ops

// ---- public functions -----------------------------------------------------------------

namespace {
int category(DType dtype) { return dtype == kBool ? 0 : isFloatingPoint(dtype) ? 2 : 1; }
}  // namespace

DType ops::resultType(const Tensor& a, const Tensor& b) {
  bool aZero = a.dim() == 0, bZero = b.dim() == 0;
  if (aZero == bZero) return promoteTypes(a.dtype(), b.dtype());
  DType dimmed = aZero ? b.dtype() : a.dtype();
  DType zeroDim = aZero ? a.dtype() : b.dtype();
  return category(zeroDim) > category(dimmed) ? promoteTypes(dimmed, zeroDim) : dimmed;
}

namespace {
using ops::resultType;

Tensor expandTo(const Tensor& x, const Shape& shape, const SourceLoc& loc) {
  return x.sizes() == shape ? x : x.expand(shape, loc);
}

Tensor toFloating(const Tensor& x, const SourceLoc& loc) {
  return x.is_floating_point() ? x : convert(x, kDefaultFloat, loc);
}

// Converts both operands to `dtype` and broadcasts them to a common shape.
// A 0-d CPU tensor meeting a tensor on another device joins it there, as a scalar does in
// PyTorch.
Tensor onDeviceOf(const Tensor& x, const Tensor& other, const SourceLoc& loc) {
  return x.device() != other.device() && x.dim() == 0 && x.device().isCPU() ? x.to(other.device(), loc) : x;
}

std::pair<Tensor, Tensor> promoteAndBroadcast(std::string_view op, const Tensor& a0,
                                              const Tensor& b0, DType dtype,
                                              const SourceLoc& loc) {
  const Tensor a = onDeviceOf(a0, b0, loc), b = onDeviceOf(b0, a0, loc);
  Shape shape = broadcastShapes(a.sizes(), b.sizes(), op, loc);
  return {expandTo(convert(a, dtype, loc), shape, loc), expandTo(convert(b, dtype, loc), shape, loc)};
}

Tensor binary(const OpDef& op, const Tensor& a, const Tensor& b, DType dtype, const SourceLoc& loc) {
  auto [x, y] = promoteAndBroadcast(op.name, a, b, dtype, loc);
  return dispatch1(op, {x, y}, {}, loc);
}

Tensor compareOp(const char* direction, const Tensor& a, const Tensor& b, const SourceLoc& loc) {
  auto [x, y] = promoteAndBroadcast(direction, a, b, resultType(a, b), loc);
  return dispatch1(ops::kCompare, {x, y}, {{"direction", std::string(direction)}}, loc);
}

}  // namespace

Tensor convert(const Tensor& x, DType dtype, const SourceLoc& loc) {
  if (x.dtype() == dtype) return x;
  return dispatch1(ops::kConvert, {x}, {{"dtype", dtype}}, loc);
}

#define KILN_PUBLIC_UNARY(name, op, prepare) \
  Tensor name(const Tensor& x, const SourceLoc& loc) { return dispatch1(ops::op, {prepare}, {}, loc); }
KILN_PUBLIC_UNARY(neg, kNeg, x)
KILN_PUBLIC_UNARY(abs, kAbs, x)
KILN_PUBLIC_UNARY(relu, kRelu, x)
KILN_PUBLIC_UNARY(exp, kExp, toFloating(x, loc))
KILN_PUBLIC_UNARY(log, kLog, toFloating(x, loc))
KILN_PUBLIC_UNARY(sqrt, kSqrt, toFloating(x, loc))
KILN_PUBLIC_UNARY(rsqrt, kRsqrt, toFloating(x, loc))
KILN_PUBLIC_UNARY(tanh, kTanh, toFloating(x, loc))
KILN_PUBLIC_UNARY(sigmoid, kSigmoid, toFloating(x, loc))
KILN_PUBLIC_UNARY(sin, kSin, toFloating(x, loc))
KILN_PUBLIC_UNARY(cos, kCos, toFloating(x, loc))
// floor of an integer tensor is the tensor's values, in its dtype (torch.floor).
Tensor floor(const Tensor& x, const SourceLoc& loc) {
  return x.is_floating_point() ? dispatch1(ops::kFloor, {x}, {}, loc) : x.clone(loc);
}
KILN_PUBLIC_UNARY(logical_not, kNot, convert(x, kBool, loc))
#undef KILN_PUBLIC_UNARY

Tensor add(const Tensor& a, const Tensor& b, const SourceLoc& loc) { return binary(ops::kAdd, a, b, resultType(a, b), loc); }
Tensor sub(const Tensor& a, const Tensor& b, const SourceLoc& loc) { return binary(ops::kSub, a, b, resultType(a, b), loc); }
Tensor mul(const Tensor& a, const Tensor& b, const SourceLoc& loc) { return binary(ops::kMul, a, b, resultType(a, b), loc); }
Tensor pow(const Tensor& a, const Tensor& b, const SourceLoc& loc) { return binary(ops::kPow, a, b, resultType(a, b), loc); }
Tensor maximum(const Tensor& a, const Tensor& b, const SourceLoc& loc) { return binary(ops::kMax, a, b, resultType(a, b), loc); }
Tensor minimum(const Tensor& a, const Tensor& b, const SourceLoc& loc) { return binary(ops::kMin, a, b, resultType(a, b), loc); }
// True division: integer operands divide as the default float dtype (torch.div).
Tensor div(const Tensor& a, const Tensor& b, const SourceLoc& loc) {
  DType dtype = resultType(a, b);
  return binary(ops::kDiv, a, b, isFloatingPoint(dtype) ? dtype : kDefaultFloat, loc);
}
Tensor logical_and(const Tensor& a, const Tensor& b, const SourceLoc& loc) { return binary(ops::kAnd, a, b, kBool, loc); }
Tensor logical_or(const Tensor& a, const Tensor& b, const SourceLoc& loc) { return binary(ops::kOr, a, b, kBool, loc); }

Tensor eq(const Tensor& a, const Tensor& b, const SourceLoc& loc) { return compareOp("eq", a, b, loc); }
Tensor ne(const Tensor& a, const Tensor& b, const SourceLoc& loc) { return compareOp("ne", a, b, loc); }
Tensor lt(const Tensor& a, const Tensor& b, const SourceLoc& loc) { return compareOp("lt", a, b, loc); }
Tensor le(const Tensor& a, const Tensor& b, const SourceLoc& loc) { return compareOp("le", a, b, loc); }
Tensor gt(const Tensor& a, const Tensor& b, const SourceLoc& loc) { return compareOp("gt", a, b, loc); }
Tensor ge(const Tensor& a, const Tensor& b, const SourceLoc& loc) { return compareOp("ge", a, b, loc); }

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, const SourceLoc& loc) {
  Shape shape = broadcastShapes(broadcastShapes(cond.sizes(), a.sizes(), "where", loc), b.sizes(),
                                "where", loc);
  DType dtype = resultType(a, b);
  return dispatch1(ops::kSelect,
                   {expandTo(convert(cond, kBool, loc), shape, loc),
                    expandTo(convert(a, dtype, loc), shape, loc),
                    expandTo(convert(b, dtype, loc), shape, loc)},
                   {}, loc);
}

Tensor scalarOperand(const Tensor& like, const Scalar& value, const SourceLoc& loc) {
  DType dtype = resultTypeWithScalar(like.dtype(), value.kind());
  detail::FactoryDeviceGuard onDevice(like.device());
  if (value.isIntegral(false) && !isFloatingPoint(dtype)) return full({}, value.toLong(), dtype, loc);
  return scalar_tensor(value.toDouble(), dtype, loc);
}

}  // namespace kiln
