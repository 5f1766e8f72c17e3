// Copies between strided tensors for kernels (see Copy.h).
#include "frontend/core/kernels/Copy.h"

#include "frontend/core/cuda/Driver.h"
#include "frontend/core/cuda/Kernels.h"
#include "frontend/core/kernels/Map.h"

namespace kiln::kernels {

namespace {

// Bytes between a contiguous tensor on one device and one on another.
void transferContiguous(const Tensor& dst, const Tensor& src, const SourceLoc& loc) {
  const size_t nbytes = size_t(src.numel()) * src.element_size();
  if (nbytes == 0) return;
  const auto address = [](const Tensor& t) { return cuda::CUdeviceptr(t.rawData()); };
  if (src.device().isCPU() && dst.device().isCUDA()) {
    cuda::copyHostToDevice(dst.device().index, address(dst), src.rawData(), nbytes, "to", loc);
  } else if (src.device().isCUDA() && dst.device().isCPU()) {
    cuda::copyDeviceToHost(src.device().index, dst.rawData(), address(src), nbytes, "to", loc);
  } else {  // two CUDA devices: through the host
    Tensor host = detail::emptyTensor(src.sizes(), src.dtype(), kCPU, false, loc);
    transferContiguous(host, src, loc);
    transferContiguous(dst, host, loc);
  }
}

}  // namespace

void copyValues(const Tensor& dst, const Tensor& src) {
  const SourceLoc loc = SourceLoc::current();
  if (dst.device() != src.device()) {
    Tensor from = contiguousValues(src, loc);
    if (dst.is_contiguous()) return transferContiguous(dst, from, loc);
    Tensor staged = detail::emptyTensor(src.sizes(), src.dtype(), dst.device(), false, loc);
    transferContiguous(staged, from, loc);
    return copyValues(dst, staged);
  }
  if (dst.device().isCUDA()) return cuda::copyValues(dst, src, loc);
  auto ops = stridedOperands<2>(dst.sizes(), {&dst, &src});
  dispatchDType(dst.dtype(), [&]<class T>() {
    forEachRun(ops, [](int64_t, const std::array<const char*, 2>& ptrs, int64_t count,
                       const std::array<int64_t, 2>& strides) {
      T* d = reinterpret_cast<T*>(const_cast<char*>(ptrs[0]));
      const T* s = reinterpret_cast<const T*>(ptrs[1]);
      if (strides[0] == 1 && strides[1] == 1) {  // a plain copy the compiler vectorizes
        for (int64_t k = 0; k < count; ++k) d[k] = s[k];
        return;
      }
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
