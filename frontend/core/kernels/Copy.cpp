// Copies between strided tensors for kernels (see Copy.h).
#include "frontend/core/kernels/Copy.h"

#include "frontend/core/kernels/Map.h"

namespace kiln::kernels {

void copyValues(const Tensor& dst, const Tensor& src) {
  auto ops = stridedOperands<2>(dst.sizes(), {&dst, &src});
  dispatchDType(dst.dtype(), [&]<class T>() {
    forEachRun(ops, [](int64_t, const std::array<const char*, 2>& ptrs, int64_t count,
                       const std::array<int64_t, 2>& strides) {
      T* d = reinterpret_cast<T*>(const_cast<char*>(ptrs[0]));
      const T* s = reinterpret_cast<const T*>(ptrs[1]);
      for (int64_t k = 0; k < count; ++k) d[k * strides[0]] = s[k * strides[1]];
    });
  });
}

Tensor contiguousValues(const Tensor& x, const SourceLoc& loc) {
  if (x.is_contiguous()) return x;
  Tensor out = detail::emptyTensor(x.sizes(), x.dtype(), x.device(), false, loc);
  copyValues(out, x);
  return out;
}

Tensor aliasOf(const Tensor& x, Shape shape, Strides strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = x.impl()->storage;
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = x.dtype();
  impl->device = x.device();
  return Tensor(std::move(impl));
}

}  // namespace kiln::kernels
