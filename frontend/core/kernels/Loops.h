// Strided elementwise iteration for eager kernels: N inputs of any strides (views,
// broadcasts with stride 0) into one contiguous output, split across the thread pool.
#pragma once

#include <array>
#include <cstdint>
#include <cstddef>

#include "kiln/core/Tensor.h"
#include "kiln/core/ThreadPool.h"

// Compiles a hot loop three times, for x86-64-v4 (AVX-512), x86-64-v3 (AVX2) and the
// build's baseline, and picks one at load time (GCC function multiversioning, as ATen's
// per-CPU kernels). Results do not depend on the clone: FMA contraction is off, fused
// multiply-adds are explicit std::fma calls, and the loops use no approximate
// instructions, so every clone computes the same IEEE operations. AVX-512's 32 vector
// registers hold vexp's constants without spilling (exp 1M on a Zen 4: 0.30 -> 0.19 ms).
// Off under ASan (the asan config also runs UBSan), which does not support ifunc resolvers.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define KILN_VECTOR_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KILN_VECTOR_CLONES
#endif

// For the functions a KILN_VECTOR_CLONES loop calls (a row of a fused kernel or of a
// reduction): GCC inlines a function into a clone of another target only when told to, and
// a call out of the AVX-512 or AVX2 clone would run the baseline code.
#define KILN_INLINE_IN_CLONES [[gnu::always_inline]] inline

namespace kiln::kernels {

// Elements per parallel chunk: small enough to spread 1M elements over 16 cores, large
// enough that the per-chunk index arithmetic is noise.
inline constexpr int64_t kElementwiseGrain = 32768;

// A tensor's strides as seen from an output of `shape`: the same strides (inputs are
// already broadcast to the output shape by the dispatcher's explicit expand).
template <size_t N>
struct StridedOperands {
  Shape shape;                         // coalesced iteration shape
  std::array<Strides, N> strides;      // per input, in elements, coalesced alike
  std::array<const char*, N> base;     // per input, first element
  std::array<size_t, N> elementSize;
};

// Merges adjacent dims that every input walks contiguously, so a contiguous tensor
// iterates as one flat run and the inner loop vectorizes.
template <size_t N>
void coalesce(StridedOperands<N>& ops) {
  Shape shape;
  std::array<Strides, N> strides;
  for (size_t d = 0; d < ops.shape.size(); ++d) {
    if (ops.shape[d] == 1) continue;
    bool merge = !shape.empty();
    for (size_t i = 0; merge && i < N; ++i)
      merge = strides[i].back() == ops.strides[i][d] * ops.shape[d];
    if (merge) {
      shape.back() *= ops.shape[d];
      for (size_t i = 0; i < N; ++i) strides[i].back() = ops.strides[i][d];
      continue;
    }
    shape.push_back(ops.shape[d]);
    for (size_t i = 0; i < N; ++i) strides[i].push_back(ops.strides[i][d]);
  }
  if (shape.empty()) {  // a scalar or all-ones shape: one element
    shape.push_back(1);
    for (size_t i = 0; i < N; ++i) strides[i].push_back(0);
  }
  ops.shape = std::move(shape);
  ops.strides = std::move(strides);
}

template <size_t N>
StridedOperands<N> stridedOperands(const Shape& shape, const std::array<const Tensor*, N>& inputs) {
  StridedOperands<N> ops;
  ops.shape = shape;
  for (size_t i = 0; i < N; ++i) {
    const TensorImpl& impl = *inputs[i]->impl();
    ops.strides[i] = impl.strides;
    ops.elementSize[i] = elementSize(impl.dtype);
    ops.base[i] = static_cast<const char*>(impl.storage->data()) + impl.offset * ops.elementSize[i];
  }
  coalesce(ops);
  return ops;
}

// Calls run(outIndex, ptrs, count, innerStrides) for runs of `count` output elements that
// are contiguous in the output; ptrs[i] points at input i's first element of the run and
// innerStrides[i] is its stride in elements along the run.
template <size_t N, class Run>
void forEachRun(const StridedOperands<N>& ops, Run&& run) {
  const int64_t rank = int64_t(ops.shape.size());
  const int64_t inner = ops.shape.back();
  int64_t total = 1;
  for (int64_t d : ops.shape) total *= d;
  std::array<int64_t, N> innerStrides;
  for (size_t i = 0; i < N; ++i) innerStrides[i] = ops.strides[i].back();

  parallelFor(0, total, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    // The multi-index of `begin`, then an odometer over the outer dims.
    std::array<int64_t, 8> fixedIndex{};
    std::vector<int64_t> heapIndex;
    int64_t* index = rank <= 8 ? fixedIndex.data() : (heapIndex.resize(rank), heapIndex.data());
    for (int64_t d = rank - 1, rest = begin; d >= 0; --d) {
      index[d] = rest % ops.shape[d];
      rest /= ops.shape[d];
    }
    // Each input's byte offset at `index`, kept up to date as the odometer turns: a
    // transposed copy's runs can be a few elements long, and recomputing the offsets from
    // the whole index for each run cost more than the run.
    std::array<int64_t, N> offset{};
    for (size_t i = 0; i < N; ++i)
      for (int64_t d = 0; d < rank; ++d) offset[i] += index[d] * ops.strides[i][d] * int64_t(ops.elementSize[i]);
    // Byte steps along the second-innermost dim, whose whole runs are walked in one loop.
    const int64_t outer = rank >= 2 ? ops.shape[rank - 2] : 1;
    std::array<int64_t, N> outerStep{};
    for (size_t i = 0; rank >= 2 && i < N; ++i) outerStep[i] = ops.strides[i][rank - 2] * int64_t(ops.elementSize[i]);
    // Turns the odometer from dim `from` down: each dim that reached its extent wraps to 0
    // and carries into the one before, moving the offsets back over it and one step on.
    auto carry = [&](int64_t from) {
      for (int64_t d = from; d > 0 && index[d] == ops.shape[d]; --d) {
        index[d] = 0;
        ++index[d - 1];
        for (size_t i = 0; i < N; ++i)
          offset[i] += (ops.strides[i][d - 1] - ops.shape[d] * ops.strides[i][d]) * int64_t(ops.elementSize[i]);
      }
    };
    for (int64_t at = begin; at < end;) {
      std::array<const char*, N> ptrs;
      for (size_t i = 0; i < N; ++i) ptrs[i] = ops.base[i] + offset[i];
      const int64_t rows = rank >= 2 && index[rank - 1] == 0 ? std::min((end - at) / inner, outer - index[rank - 2]) : 0;
      if (rows > 1) {
        for (int64_t r = 0; r < rows; ++r) {
          run(at + r * inner, ptrs, inner, innerStrides);
          for (size_t i = 0; i < N; ++i) ptrs[i] += outerStep[i];
        }
        at += rows * inner;
        index[rank - 2] += rows;
        for (size_t i = 0; i < N; ++i) offset[i] += rows * outerStep[i];
        carry(rank - 2);
        continue;
      }
      const int64_t count = std::min(end - at, inner - index[rank - 1]);
      run(at, ptrs, count, innerStrides);
      at += count;
      index[rank - 1] += count;
      for (size_t i = 0; i < N; ++i) offset[i] += count * innerStrides[i] * int64_t(ops.elementSize[i]);
      carry(rank - 1);
    }
  });
}

}  // namespace kiln::kernels
