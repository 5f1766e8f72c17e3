// In-place Tensor methods (add_, copy_, fill_, ...): the op's result is written into the
// tensor's own storage and the tracer sees a state update (Dispatcher.h, OpCall::inPlace).
#include <cmath>

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

}  // namespace kiln
