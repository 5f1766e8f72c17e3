// runtime/cpu/MemrefCopy.h (the memrefCopy of statically linked builds, --define
// kiln_llvm=static) against MLIR's own, from libmlir_c_runner_utils, on the layouts
// compiled code hands it: a transposed source, a strided slice, rank 0 and an empty copy,
// for 1-, 4- and 8-byte elements.
#include <gtest/gtest.h>

#include <cstdint>
#include <array>
#include <numeric>
#include <vector>

#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "runtime/cpu/MemrefCopy.h"

namespace {

// A rank-`R` strided view as compiled code describes it, over `data`.
template <int R>
StridedMemRefType<char, R> view(char* data, int64_t offset, std::array<int64_t, R> sizes,
                                std::array<int64_t, R> strides) {
  StridedMemRefType<char, R> m;
  m.basePtr = data;
  m.data = data;
  m.offset = offset;
  for (int d = 0; d < R; ++d) {
    m.sizes[d] = sizes[d];
    m.strides[d] = strides[d];
  }
  return m;
}

template <int R>
void expectSameCopy(int64_t elemSize, int64_t srcOffset, std::array<int64_t, R> sizes,
                    std::array<int64_t, R> srcStrides, std::array<int64_t, R> dstStrides) {
  std::vector<char> src(4096 * size_t(elemSize));
  std::iota(src.begin(), src.end(), char(1));
  std::vector<char> ours(src.size(), 0), theirs(src.size(), 0);
  auto s = view<R>(src.data(), srcOffset, sizes, srcStrides);
  auto a = view<R>(ours.data(), 3, sizes, dstStrides);
  auto b = view<R>(theirs.data(), 3, sizes, dstStrides);
  UnrankedMemRefType<char> us{R, &s}, ua{R, &a}, ub{R, &b};
  kiln::runtime::copyStridedMemref(elemSize, &us, &ua);
  memrefCopy(elemSize, &us, &ub);
  EXPECT_EQ(ours, theirs);
  EXPECT_NE(ours, std::vector<char>(ours.size(), 0)) << "nothing was copied";
}

TEST(MemrefCopy, AgreesWithMlirsOwnOnStridedLayouts) {
  for (int64_t elemSize : {1, 4, 8}) {
    SCOPED_TRACE(elemSize);
    expectSameCopy<2>(elemSize, 0, {5, 7}, {1, 5}, {7, 1});           // transposed source
    expectSameCopy<2>(elemSize, 9, {4, 3}, {20, 2}, {3, 1});          // strided slice
    expectSameCopy<3>(elemSize, 2, {2, 3, 4}, {40, 1, 3}, {12, 4, 1});
    expectSameCopy<1>(elemSize, 5, {17}, {3}, {1});
  }
}

TEST(MemrefCopy, RankZeroCopiesOneElementAndAnEmptyShapeNothing) {
  std::vector<char> src = {1, 2, 3, 4, 5, 6, 7, 8}, dst(8, 0);
  StridedMemRefType<char, 0> s{src.data(), src.data(), 1}, d{dst.data(), dst.data(), 0};
  UnrankedMemRefType<char> us{0, &s}, ud{0, &d};
  kiln::runtime::copyStridedMemref(4, &us, &ud);
  EXPECT_EQ(dst, (std::vector<char>{5, 6, 7, 8, 0, 0, 0, 0}));
  auto e = view<2>(src.data(), 0, {0, 3}, {3, 1});
  auto f = view<2>(dst.data(), 0, {0, 3}, {3, 1});
  UnrankedMemRefType<char> ue{2, &e}, uf{2, &f};
  kiln::runtime::copyStridedMemref(1, &ue, &uf);
  EXPECT_EQ(dst, (std::vector<char>{5, 6, 7, 8, 0, 0, 0, 0}));
}

}  // namespace
