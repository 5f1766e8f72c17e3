// memref.copy between strided memrefs, for binaries linked with --define kiln_llvm=static
// (the GPU bundle). Compiled code calls MLIR's runtime helper `memrefCopy`, which Kiln
// normally links from libmlir_c_runner_utils.so; that library needs the shared libMLIR and
// libLLVM, which a statically linked binary must not load beside its own copies. This is
// the same algorithm as upstream's CRunnerUtils.cpp: walk the source's indices in row-major
// order, copying one element at a time between the two strided layouts.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "mlir/ExecutionEngine/CRunnerUtils.h"

namespace kiln::runtime {

inline void copyStridedMemref(int64_t elemSize, UnrankedMemRefType<char>* srcArg,
                              UnrankedMemRefType<char>* dstArg) {
  DynamicMemRefType<char> src(*srcArg);
  DynamicMemRefType<char> dst(*dstArg);
  const int64_t rank = src.rank;
  for (int64_t d = 0; d < rank; ++d)
    if (src.sizes[d] == 0) return;  // nothing to copy
  char* srcPtr = src.data + src.offset * elemSize;
  char* dstPtr = dst.data + dst.offset * elemSize;
  if (rank == 0) {
    std::memcpy(dstPtr, srcPtr, size_t(elemSize));
    return;
  }
  const auto n = static_cast<size_t>(rank);
  std::vector<int64_t> indices(n, 0), srcStrides(n, 0), dstStrides(n, 0);
  for (int64_t d = 0; d < rank; ++d) {
    srcStrides[size_t(d)] = src.strides[d] * elemSize;
    dstStrides[size_t(d)] = dst.strides[d] * elemSize;
  }
  int64_t readIndex = 0, writeIndex = 0;
  for (;;) {
    std::memcpy(dstPtr + writeIndex, srcPtr + readIndex, size_t(elemSize));
    for (int64_t axis = rank - 1; axis >= 0; --axis) {
      const auto a = size_t(axis);
      readIndex += srcStrides[a];
      writeIndex += dstStrides[a];
      if (++indices[a] < src.sizes[axis]) break;
      if (axis == 0) return;
      indices[a] = 0;
      readIndex -= src.sizes[axis] * srcStrides[a];
      writeIndex -= dst.sizes[axis] * dstStrides[a];
    }
  }
}

}  // namespace kiln::runtime
