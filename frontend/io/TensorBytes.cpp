// Contiguous copies to write from and fresh tensors to read into.
#include "frontend/io/TensorBytes.h"

#include "kiln/core/Autograd.h"

namespace kiln::io {

Tensor contiguousForWrite(const Tensor& tensor, const SourceLoc& loc) {
  NoGradGuard noGrad;
  // A CUDA tensor's bytes are read on the host: copied there first (waiting for the work
  // that makes them).
  Tensor out = (tensor.device().isCPU() ? tensor : tensor.cpu(loc)).contiguous(loc);
  // data_ptr tells a tracer that the values are read (and rejects placeholders).
  dispatchDType(out.dtype(), [&]<class T>() { (void)out.data_ptr<T>(loc); });
  return out;
}

Tensor allocateForRead(const Shape& shape, DType dtype, const SourceLoc& loc) {
  return detail::emptyTensor(shape, dtype, kCPU, /*placeholder=*/false, loc);
}

std::optional<uint64_t> byteSize(const Shape& shape, DType dtype) {
  // The product of the non-zero dims must fit too: strides are computed from it.
  uint64_t nonZero = elementSize(dtype);
  bool empty = false;
  for (int64_t dim : shape) {
    if (dim < 0) return std::nullopt;
    if (dim == 0) {
      empty = true;
      continue;
    }
    if (nonZero > uint64_t(INT64_MAX) / uint64_t(dim)) return std::nullopt;
    nonZero *= uint64_t(dim);
  }
  return empty ? 0 : nonZero;
}

int64_t firstInvalidBool(const Tensor& tensor) {
  const auto* bytes = static_cast<const uint8_t*>(tensor.rawData());
  for (int64_t i = 0; i < tensor.numel(); ++i)
    if (bytes[i] > 1) return i;
  return -1;
}

}  // namespace kiln::io
