// A 16x16 block of 32-bit values transposed in registers, for kernels that change layout
// (channels last, transposed copies).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "frontend/core/kernels/Loops.h"

namespace kiln::kernels {

// 16 floats: one AVX-512 register, two AVX2 ones, four SSE ones in the baseline clone.
using Floats16 = float __attribute__((vector_size(64)));

namespace transposeDetail {

// Round B of the transpose: exchanges bit B of the row index with bit B of the column
// index (rows i and i + B trade the halves of their 2B-wide column blocks), two-register
// shuffles throughout.
template <int B>
KILN_INLINE_IN_CLONES void exchangeBit(Floats16* rows) {
  constexpr int n = 16;
  constexpr auto lo = [] {
    std::array<int, n> idx{};
    for (int c = 0; c < n; ++c) idx[size_t(c)] = (c & B) == 0 ? c : n + c - B;
    return idx;
  }();
  constexpr auto hi = [] {
    std::array<int, n> idx{};
    for (int c = 0; c < n; ++c) idx[size_t(c)] = (c & B) == 0 ? c + B : n + c;
    return idx;
  }();
  for (int i = 0; i < n; ++i) {
    if (i & B) continue;
    const Floats16 a = rows[i], b = rows[i + B];
    rows[i] = __builtin_shufflevector(a, b, lo[0], lo[1], lo[2], lo[3], lo[4], lo[5], lo[6], lo[7], lo[8], lo[9],
                                      lo[10], lo[11], lo[12], lo[13], lo[14], lo[15]);
    rows[i + B] = __builtin_shufflevector(a, b, hi[0], hi[1], hi[2], hi[3], hi[4], hi[5], hi[6], hi[7], hi[8],
                                          hi[9], hi[10], hi[11], hi[12], hi[13], hi[14], hi[15]);
  }
}

}  // namespace transposeDetail

// rows[0..16) transposed in place: four rounds of transposeDetail::exchangeBit.
KILN_INLINE_IN_CLONES void transpose16(Floats16* rows) {
  transposeDetail::exchangeBit<8>(rows);
  transposeDetail::exchangeBit<4>(rows);
  transposeDetail::exchangeBit<2>(rows);
  transposeDetail::exchangeBit<1>(rows);
}

// Element (r, c) of the 16x16 block at src (rows srcRow elements apart, 32-bit elements)
// to (c, r) of the block at dst (rows dstRow apart).
KILN_INLINE_IN_CLONES void transposeBlock16(const void* src, int64_t srcRow, void* dst, int64_t dstRow) {
  Floats16 rows[16];
  for (int r = 0; r < 16; ++r)
    std::memcpy(&rows[r], static_cast<const char*>(src) + r * srcRow * 4, sizeof(Floats16));
  transpose16(rows);
  for (int r = 0; r < 16; ++r) std::memcpy(static_cast<char*>(dst) + r * dstRow * 4, &rows[r], sizeof(Floats16));
}

}  // namespace kiln::kernels
