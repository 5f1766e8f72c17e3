// In-place Tensor methods (add_, copy_, fill_, ...): the op's result is written into the
// tensor's own storage and the tracer sees a state update (Dispatcher.h, OpCall::inPlace).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>

#include "frontend/core/ops/OpTable.h"
#include "frontend/core/ops/ShapeRules.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"

namespace kiln {

namespace {

using ops::resultType;

// `other` converted to self's dtype and broadcast to self's shape; the result may not
// grow self (PyTorch: "output with shape [3] doesn't match the broadcast shape [2, 3]").
Tensor operandFor(const Tensor& self, const Tensor& other, const char* op, const SourceLoc& loc) {
  Shape shape = broadcastShapes(self.sizes(), other.sizes(), op, loc);
  if (shape != self.sizes())
    throw ShapeError::make(loc, op, "an operand of shape ", other.sizes(),
                           " would broadcast the result to ", shape,
                           ", which does not fit in place into shape ", self.sizes());
  Tensor x = convert(other, self.dtype(), loc);
  // copy_ takes a source on any device, as PyTorch; other ops a CPU scalar (0-d) with a
  // CUDA tensor. Anything else meets the dispatcher's one-device check.
  if (x.device() != self.device() && (std::string_view(op) == "copy_" || x.dim() == 0))
    x = x.to(self.device(), loc);
  return x.sizes() == shape ? x : x.expand(shape, loc);
}

// PyTorch's canCast: an in-place result may not go from floating to integral, or from
// anything else to bool ("result type Float can't be cast to the desired output type Int").
void requireCastable(const char* op, const Tensor& self, DType result, const SourceLoc& loc) {
  bool narrowsKind = (isFloatingPoint(result) && !isFloatingPoint(self.dtype())) ||
                     (result != kBool && self.dtype() == kBool);
  if (narrowsKind)
    throw TypeError::make(loc, op, "result type ", result,
                          " can't be cast to the desired output type ", self.dtype(),
                          " of the in-place tensor of shape ", self.sizes());
}

void binaryInPlace(const OpDef& op, const Tensor& self, const Tensor& other, const SourceLoc& loc) {
  requireCastable(op.name.data(), self, resultType(self, other), loc);
  dispatchInPlace(op, self, {self, operandFor(self, other, op.name.data(), loc)}, {}, loc);
}

// other·alpha computed in the dtype self ⊕ other promotes to, as PyTorch does, so alpha is
// not first rounded to other's dtype; integral results take only integral alphas.
Tensor scaledOperand(const char* op, const Tensor& self, const Tensor& other, double alpha,
                     const SourceLoc& loc) {
  DType result = resultType(self, other);
  requireCastable(op, self, result, loc);
  if (alpha == 1.0) return other;
  if (!isFloatingPoint(result) && alpha != std::trunc(alpha))
    throw TypeError::make(loc, op, "alpha must be an integer for ", result,
                          " operands (got ", alpha, "; other has shape ", other.sizes(), ")");
  Tensor x = convert(other, result, loc);
  if (isFloatingPoint(result)) return mul(x, alpha, loc);
  return mul(x, scalarOperand(x, int64_t(alpha), loc), loc);
}

// The in-place random fills draw into floating-point tensors only, as LibTorch's.
void requireFloating(const Tensor& self, const char* op, const SourceLoc& loc) {
  if (!self.defined()) throw Error::make(loc, op, "called on an undefined tensor");
  if (!self.is_floating_point())
    throw TypeError::make(loc, op, "expects a floating-point tensor, got ", self.dtype(),
                          " of shape ", self.sizes());
}

}  // namespace

Tensor& Tensor::add_(const Tensor& other, double alpha, const SourceLoc& loc) {
  binaryInPlace(ops::kAdd, *this, scaledOperand("add", *this, other, alpha, loc), loc);
  return *this;
}

Tensor& Tensor::sub_(const Tensor& other, double alpha, const SourceLoc& loc) {
  binaryInPlace(ops::kSub, *this, scaledOperand("sub", *this, other, alpha, loc), loc);
  return *this;
}

Tensor& Tensor::mul_(const Tensor& other, const SourceLoc& loc) {
  binaryInPlace(ops::kMul, *this, other, loc);
  return *this;
}

Tensor& Tensor::div_(const Tensor& other, const SourceLoc& loc) {
  binaryInPlace(ops::kDiv, *this, other, loc);
  return *this;
}

// A double is a floating scalar, as a Python float: int tensors reject it (PyTorch does).
Tensor& Tensor::add_(double other, const SourceLoc& loc) {
  return add_(scalarOperand(*this, other, loc), 1.0, loc);
}

Tensor& Tensor::mul_(double other, const SourceLoc& loc) {
  return mul_(scalarOperand(*this, other, loc), loc);
}

Tensor& Tensor::copy_(const Tensor& src, const SourceLoc& loc) {
  dispatchInPlace(ops::kCopy, *this, {operandFor(*this, src, "copy_", loc)}, {{"shape", sizes()}}, loc);
  return *this;
}

Tensor& Tensor::fill_(double value, const SourceLoc& loc) {
  detail::FactoryDeviceGuard onDevice(device());
  dispatchInPlace(ops::kFull, *this, {}, {{"shape", sizes()}, {"value", value}, {"dtype", dtype()}}, loc);
  return *this;
}

Tensor& Tensor::zero_(const SourceLoc& loc) { return fill_(0.0, loc); }

Tensor& Tensor::uniform_(double from, double to, const SourceLoc& loc) {
  requireFloating(*this, "uniform_", loc);
  if (!(from <= to))
    throw Error::make(loc, "uniform_", "expects a [from, to) range, but found from=", from,
                      " > to=", to, " (tensor of shape ", sizes(), ")");
  return copy_(kiln::add(kiln::mul(rand(sizes(), options(), loc), to - from, loc), from, loc), loc);
}

Tensor& Tensor::normal_(double mean, double std, const SourceLoc& loc) {
  requireFloating(*this, "normal_", loc);
  if (!(std >= 0))
    throw Error::make(loc, "normal_", "expects std >= 0, but found std=", std, " (tensor of shape ",
                      sizes(), ")");
  return copy_(kiln::add(kiln::mul(randn(sizes(), options(), loc), std, loc), mean, loc), loc);
}

Tensor& Tensor::bernoulli_(double p, const SourceLoc& loc) {
  requireFloating(*this, "bernoulli_", loc);
  if (!(p >= 0 && p <= 1))
    throw Error::make(loc, "bernoulli_", "expects 0 <= p <= 1, but found p=", p, " (tensor of shape ",
                      sizes(), ")");
  return copy_(kiln::bernoulli(sizes(), p, options(), loc), loc);
}

// ---- the other distributions, composed from rand/randn as uniform_ is ----------------------

namespace {

// U[0, 1) of self's shape, in `dtype` on self's device.
Tensor uniformFor(const Tensor& self, DType dtype, const SourceLoc& loc) {
  return rand(self.sizes(), self.options().dtype(dtype), loc);
}

// log(1 - u) for u in [0, 1): in (-inf, 0], never log(0).
Tensor logOfOneMinus(const Tensor& u, const SourceLoc& loc) {
  return kiln::log(kiln::add(kiln::neg(u, loc), 1.0, loc), loc);
}

// The integers `dtype` holds, with all between them: up to ±2^digits for floats.
int64_t largestInteger(DType dtype) {
  switch (dtype) {
    case kFloat16: return int64_t(1) << 11;
    case kBFloat16: return int64_t(1) << 8;
    case kFloat32: return int64_t(1) << 24;
    case kFloat64: return int64_t(1) << 53;
    case kInt32: return std::numeric_limits<int32_t>::max();
    case kInt64: return std::numeric_limits<int64_t>::max();
    case kBool: return 1;
  }
  return 0;
}

int64_t smallestInteger(DType dtype) {
  switch (dtype) {
    case kInt32: return std::numeric_limits<int32_t>::min();
    case kInt64: return std::numeric_limits<int64_t>::min();
    case kBool: return 0;
    default: return -largestInteger(dtype);
  }
}

}  // namespace

Tensor& Tensor::exponential_(double lambd, const SourceLoc& loc) {
  requireFloating(*this, "exponential_", loc);
  if (!(lambd > 0))
    throw Error::make(loc, "exponential_", "expects lambda > 0, but found lambda=", lambd,
                      " (tensor of shape ", sizes(), ")");
  // -log(1 - u) / lambda: the inverse of the CDF 1 - exp(-lambda x).
  return copy_(kiln::mul(logOfOneMinus(uniformFor(*this, dtype(), loc), loc), -1.0 / lambd, loc), loc);
}

Tensor& Tensor::geometric_(double p, const SourceLoc& loc) {
  if (!defined()) throw Error::make(loc, "geometric_", "called on an undefined tensor");
  if (!(p > 0 && p < 1))
    throw Error::make(loc, "geometric_", "expects p in (0, 1), but found p=", p, " (tensor of shape ",
                      sizes(), ")");
  // The number of trials up to the first success: ceil(log(1 - u) / log(1 - p)), at least 1
  // (u = 0 gives 0), drawn in float64 so that integer tensors get the far tail too.
  Tensor trials = kiln::mul(logOfOneMinus(uniformFor(*this, kFloat64, loc), loc), 1.0 / std::log1p(-p), loc);
  Tensor ceil = kiln::neg(kiln::floor(kiln::neg(trials, loc), loc), loc);
  // Capped where the dtype's integers end (2^62 for int64: a double that converts back),
  // which only p near 0 reaches.
  const double cap = std::min(double(largestInteger(dtype())), 0x1p62);
  return copy_(ceil.clamp(1.0, cap, loc), loc);
}

Tensor& Tensor::log_normal_(double mean, double std, const SourceLoc& loc) {
  requireFloating(*this, "log_normal_", loc);
  if (!(std > 0))
    throw Error::make(loc, "log_normal_", "expects std > 0, but found std=", std, " (tensor of shape ",
                      sizes(), ")");
  return copy_(kiln::exp(kiln::add(kiln::mul(randn(sizes(), options(), loc), std, loc), mean, loc), loc), loc);
}

Tensor& Tensor::cauchy_(double median, double sigma, const SourceLoc& loc) {
  requireFloating(*this, "cauchy_", loc);
  if (!(sigma > 0))
    throw Error::make(loc, "cauchy_", "expects sigma > 0, but found sigma=", sigma,
                      " (tensor of shape ", sizes(), ")");
  // median + sigma tan(pi (u - 1/2)): the inverse of the CDF 1/2 + atan((x - median) / sigma) / pi.
  Tensor angle = kiln::mul(kiln::add(uniformFor(*this, dtype(), loc), -0.5, loc), std::numbers::pi, loc);
  Tensor tan = kiln::div(kiln::sin(angle, loc), kiln::cos(angle, loc), loc);
  return copy_(kiln::add(kiln::mul(tan, sigma, loc), median, loc), loc);
}

Tensor& Tensor::random_(int64_t from, std::optional<int64_t> to, const SourceLoc& loc) {
  if (!defined()) throw Error::make(loc, "random_", "called on an undefined tensor");
  if (to && from >= *to)
    throw Error::make(loc, "random_", "expects 'from' to be less than 'to', but got from=", from,
                      " >= to=", *to, " (tensor of shape ", sizes(), ")");
  // As LibTorch: without `to`, up to the dtype's largest integer (2^digits for floats).
  const int64_t last = to ? *to - 1 : largestInteger(dtype());
  if (from < smallestInteger(dtype()) || from > last || last > largestInteger(dtype()))
    throw Error::make(loc, "random_", "the range [", from, ", ", last, "] does not fit a ", dtype(),
                      " tensor (shape ", sizes(), "), whose integers are [", smallestInteger(dtype()),
                      ", ", largestInteger(dtype()), "]");
  // floor(u · n) + from with u a float64 uniform takes each of the n values with equal
  // probability up to n / 2^53: exact for n a power of two, and the draw needs n <= 2^53.
  const uint64_t span = uint64_t(last) - uint64_t(from);  // n - 1, exact even for n = 2^64
  if (span >= uint64_t(1) << 53)
    throw Error::make(loc, "random_", "draws ranges of at most 2^53 integers, but [", from, ", ",
                      last, "] has more (tensor of shape ", sizes(), ")");
  Tensor drawn = kiln::floor(kiln::mul(uniformFor(*this, kFloat64, loc), double(span + 1), loc), loc);
  // Integers add `from` in int64, where it is exact however large; floats hold the whole
  // range exactly, as checked.
  if (is_floating_point()) return copy_(kiln::add(drawn, double(from), loc), loc);
  return copy_(kiln::add(convert(drawn, kInt64, loc), Scalar(from), loc), loc);
}

Tensor& Tensor::random_(int64_t to, const SourceLoc& loc) { return random_(0, to, loc); }

Tensor& Tensor::random_(const SourceLoc& loc) { return random_(0, std::nullopt, loc); }

}  // namespace kiln
