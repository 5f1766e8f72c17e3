// Tensor: metadata, data access and autograd entry points (see kiln/core/Tensor.h).
#include "kiln/core/Tensor.h"

#include "kiln/core/Autograd.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"

namespace kiln {

int64_t Tensor::size(int64_t d, const SourceLoc& loc) const {
  if (dim() == 0)
    throw ShapeError::make(loc, "size", "dim ", d, " was requested of a 0-d tensor, which has no dims");
  return impl_->shape[normalizeDim(d, dim(), "size", loc)];
}

void* Tensor::rawData() const {
  if (!impl_->storage) return nullptr;
  return static_cast<char*>(impl_->storage->data()) + impl_->offset * int64_t(element_size());
}

void Tensor::checkDataAccess(DType requested, const char* what, const SourceLoc& loc) const {
  if (!defined()) throw Error::make(loc, what, "called on an undefined tensor");
  if (DispatchHook* hook = currentDispatchHook()) hook->onValueRead(*this, what, loc);
  if (is_placeholder())
    throw TraceError::make(loc, what, "a symbolic trace placeholder of shape ", sizes(),
                           " has no values outside its trace");
  if (requested != dtype())
    throw TypeError::make(loc, what, "requested ", requested, " data from a ", dtype(),
                          " tensor of shape ", sizes());
}

Tensor Tensor::to(DType dtype, const SourceLoc& loc) const { return convert(*this, dtype, loc); }

Tensor& Tensor::requires_grad_(bool requiresGrad, const SourceLoc& loc) {
  if (requiresGrad && !is_floating_point())
    throw TypeError::make(loc, "requires_grad_", "only floating-point tensors can require "
                          "gradients, got a ", dtype(), " tensor of shape ", sizes());
  if (!requiresGrad && !is_leaf())
    throw Error::make(loc, "requires_grad_", "cannot turn off requires_grad of a non-leaf tensor; "
                      "use detach()");
  impl_->requiresGrad = requiresGrad;
  return *this;
}

Tensor& Tensor::mutable_grad() const {
  if (DispatchHook* hook = currentDispatchHook()) hook->onGradSlot(*this);
  return impl_->grad;
}

Tensor Tensor::detach() const {
  auto impl = std::make_shared<TensorImpl>(*impl_);
  impl->requiresGrad = false;
  impl->gradFn = nullptr;
  impl->outputNr = 0;
  impl->grad = Tensor();
  Tensor alias(std::move(impl));
  if (DispatchHook* hook = currentDispatchHook()) hook->onAlias(*this, alias);
  return alias;
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retainGraph, bool createGraph,
                      const SourceLoc& loc) const {
  autograd::backward({*this}, {gradient}, retainGraph, createGraph, loc);
}

namespace detail {

Tensor emptyTensor(const Shape& shape, DType dtype, Device device, bool placeholder,
                   const SourceLoc& loc) {
  auto impl = std::make_shared<TensorImpl>();
  const int64_t n = checkedNumel(shape, "empty", loc);
  if (!placeholder) impl->storage = Storage::allocate(size_t(n) * elementSize(dtype), device, "empty", loc);
  impl->shape = shape;
  impl->strides = contiguousStrides(shape);
  impl->dtype = dtype;
  impl->device = device;
  return Tensor(std::move(impl));
}

double readElementAsDouble(const Tensor& tensor, int64_t linearIndex) {
  int64_t offset = 0;
  for (int64_t d = tensor.dim() - 1; d >= 0; --d) {
    offset += (linearIndex % tensor.sizes()[d]) * tensor.strides()[d];
    linearIndex /= tensor.sizes()[d];
  }
  const char* base = static_cast<const char*>(tensor.rawData());
  return dispatchDType(tensor.dtype(), [&]<class T>() {
    return double(OpMathType<T>(reinterpret_cast<const T*>(base)[offset]));
  });
}

}  // namespace detail

}  // namespace kiln
