// In-place Tensor methods (add_, copy_, fill_, ...): the op's result is written into the
// tensor's own storage and the tracer sees a state update (Dispatcher.h, OpCall::inPlace).
#include "frontend/core/ops/OpTable.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"

namespace kiln {

namespace {

// `other` converted to self's dtype and broadcast to self's shape; the result may not
// grow self (PyTorch: "output with shape [3] doesn't match the broadcast shape [2, 3]").
Tensor operandFor(const Tensor& self, const Tensor& other, const char* op, const SourceLoc& loc) {
  Shape shape = broadcastShapes(self.sizes(), other.sizes(), op, loc);
  if (shape != self.sizes())
    throw ShapeError::make(loc, op, "an operand of shape ", other.sizes(),
                           " would broadcast the result to ", shape,
                           ", which does not fit in place into shape ", self.sizes());
  Tensor x = convert(other, self.dtype(), loc);
  return x.sizes() == shape ? x : x.expand(shape, loc);
}

void binaryInPlace(const OpDef& op, const Tensor& self, const Tensor& other, const SourceLoc& loc) {
  dispatchInPlace(op, self, {self, operandFor(self, other, op.name.data(), loc)}, {}, loc);
}

}  // namespace

Tensor& Tensor::add_(const Tensor& other, double alpha, const SourceLoc& loc) {
  binaryInPlace(ops::kAdd, *this, alpha == 1.0 ? other : mul(other, alpha, loc), loc);
  return *this;
}

Tensor& Tensor::sub_(const Tensor& other, double alpha, const SourceLoc& loc) {
  binaryInPlace(ops::kSub, *this, alpha == 1.0 ? other : mul(other, alpha, loc), loc);
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

Tensor& Tensor::add_(double other, const SourceLoc& loc) {
  return add_(scalar_tensor(other, dtype(), loc), 1.0, loc);
}

Tensor& Tensor::mul_(double other, const SourceLoc& loc) {
  return mul_(scalar_tensor(other, dtype(), loc), loc);
}

Tensor& Tensor::copy_(const Tensor& src, const SourceLoc& loc) {
  dispatchInPlace(ops::kCopy, *this, {operandFor(*this, src, "copy_", loc)}, {{"shape", sizes()}}, loc);
  return *this;
}

Tensor& Tensor::fill_(double value, const SourceLoc& loc) {
  dispatchInPlace(ops::kFull, *this, {}, {{"shape", sizes()}, {"value", value}, {"dtype", dtype()}}, loc);
  return *this;
}

Tensor& Tensor::zero_(const SourceLoc& loc) { return fill_(0.0, loc); }

}  // namespace kiln
