// Copies between strided tensors for kernels (see Copy.h).
#include "frontend/core/kernels/Copy.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "frontend/core/cuda/Driver.h"
#include "frontend/core/cuda/Kernels.h"
#include "frontend/core/kernels/Map.h"
#include "frontend/core/kernels/Transpose16.h"

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

// A copy that exchanges two dims, each element (or run of elements) `run` bytes that lie
// together in both: destination block (o, i, j) at o's offset + i * dstRow + j * run, source
// block at o's offset + i * run + j * srcCol. The dims before the two (`outer` of them) keep
// their order.
struct TransposedCopy {
  size_t outer;
  int64_t rows, cols, run, dstRow, srcCol;  // the last three in bytes
};

// `ops` (coalesced, operand 0 the destination) as a TransposedCopy where it is one worth
// tiling: single elements (the source walks the destination's last dim with a stride and
// the dim before it in order), or runs shorter than 256 bytes (a transposed copy of small
// planes: the source's runs of a row far apart).
std::optional<TransposedCopy> transposedCopyOf(const StridedOperands<2>& ops) {
  const size_t r = ops.shape.size();
  const int64_t size = int64_t(ops.elementSize[0]);
  const Strides &d = ops.strides[0], &s = ops.strides[1];
  if (r >= 2 && d[r - 1] == 1 && s[r - 1] != 1 && s[r - 2] == 1)
    return TransposedCopy{r - 2, ops.shape[r - 2], ops.shape[r - 1], size, d[r - 2] * size, s[r - 1] * size};
  if (r >= 3 && d[r - 1] == 1 && s[r - 1] == 1 && ops.shape[r - 1] * size < 256 && d[r - 2] == ops.shape[r - 1] &&
      s[r - 3] == ops.shape[r - 1])
    return TransposedCopy{r - 3, ops.shape[r - 3], ops.shape[r - 2], ops.shape[r - 1] * size, d[r - 3] * size,
                          s[r - 2] * size};
  return std::nullopt;
}

// `bytes` bytes from src to dst: whole-size moves for the sizes short runs come in (a
// memcpy call or a loop with a run-time count costs more than the move).
KILN_INLINE_IN_CLONES void moveBytes(char* dst, const char* src, int64_t bytes) {
  switch (bytes) {
    case 4: std::memcpy(dst, src, 4); return;
    case 8: std::memcpy(dst, src, 8); return;
    case 16: std::memcpy(dst, src, 16); return;
    case 32: std::memcpy(dst, src, 32); return;
    case 64: std::memcpy(dst, src, 64); return;
    default: std::memcpy(dst, src, size_t(bytes));
  }
}

// Tasks [begin, end) of a TransposedCopy, a task a 16-row block of one outer index: 16x16
// tiles, so that a tile's reads and writes each stay within 16 rows (pages); a tile of
// 4-byte elements through registers.
KILN_VECTOR_CLONES void transposeTiles(const StridedOperands<2>& ops, const TransposedCopy& t, int64_t begin,
                                       int64_t end) {
  const int64_t rowBlocks = (t.rows + 15) / 16;
  for (int64_t task = begin; task < end; ++task) {
    int64_t outer = task / rowBlocks, dstAt = 0, srcAt = 0;
    for (size_t d = t.outer; d-- > 0;) {
      const int64_t index = outer % ops.shape[d];
      outer /= ops.shape[d];
      dstAt += index * ops.strides[0][d] * int64_t(ops.elementSize[0]);
      srcAt += index * ops.strides[1][d] * int64_t(ops.elementSize[1]);
    }
    char* dst = const_cast<char*>(ops.base[0]) + dstAt;
    const char* src = ops.base[1] + srcAt;
    const int64_t i0 = task % rowBlocks * 16, i1 = std::min(t.rows, i0 + 16);
    for (int64_t j0 = 0; j0 < t.cols; j0 += 16) {
      const int64_t j1 = std::min(t.cols, j0 + 16);
      if (t.run == 4 && i1 - i0 == 16 && j1 - j0 == 16) {
        transposeBlock16(src + i0 * 4 + j0 * t.srcCol, t.srcCol / 4, dst + i0 * t.dstRow + j0 * 4, t.dstRow / 4);
        continue;
      }
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j) moveBytes(dst + i * t.dstRow + j * t.run, src + i * t.run + j * t.srcCol, t.run);
    }
  }
}

// A run of `count` contiguous elements: memcpy for long ones and whole-size moves for the
// short sizes, else a loop.
template <class T>
inline void copyRun(T* d, const T* s, int64_t count) {
  const int64_t bytes = count * int64_t(sizeof(T));
  if (bytes >= 256 || bytes == 16 || bytes == 32 || bytes == 64)
    return moveBytes(reinterpret_cast<char*>(d), reinterpret_cast<const char*>(s), bytes);
  for (int64_t k = 0; k < count; ++k) d[k] = s[k];
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
  if (const std::optional<TransposedCopy> t = transposedCopyOf(ops)) {
    int64_t tasks = (t->rows + 15) / 16;
    for (size_t d = 0; d < t->outer; ++d) tasks *= ops.shape[d];
    const int64_t perTask = 16 * t->cols * t->run / int64_t(ops.elementSize[0]);  // elements
    parallelFor(0, tasks, std::max<int64_t>(1, kElementwiseGrain / perTask),
                [&](int64_t begin, int64_t end) { transposeTiles(ops, *t, begin, end); });
    return;
  }
  dispatchDType(dst.dtype(), [&]<class T>() {
    forEachRun(ops, [](int64_t, const std::array<const char*, 2>& ptrs, int64_t count,
                       const std::array<int64_t, 2>& strides) {
      T* d = reinterpret_cast<T*>(const_cast<char*>(ptrs[0]));
      const T* s = reinterpret_cast<const T*>(ptrs[1]);
      if (strides[0] == 1 && strides[1] == 1) return copyRun(d, s, count);
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
