// The depthwise convolution of Depthwise.h. Each input plane is copied once into a
// zero-padded scratch plane whose rows are split by column phase (column k of phase q is
// padded column k * strideW + q), so that for every stride the taps an output row needs
// are contiguous: output columns j..j+15 of tap (a, b) read 16 consecutive floats of
// phase (b * dilationW) % strideW. Sixteen outputs accumulate in one vector over the
// whole window, and a few output rows at a time, so their adds overlap.
//
// 3x3 windows at stride 1 (most depthwise layers) have their own loop: each aligned vector
// of the plane is loaded once for the three output rows it feeds, and the shifted taps are
// shuffled out of it and the next one. Unaligned loads split across cache lines; with them
// loads, not arithmetic, bounded the general loop. Both loops add the same products in the
// same order, so they give the same bits.
#include "frontend/core/kernels/Depthwise.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "frontend/core/kernels/Loops.h"
#include "kiln/core/ThreadPool.h"

namespace kiln::kernels {

namespace {

// 16 floats: one AVX-512 register, two AVX2 ones, four SSE ones in the baseline clone.
using Floats = float __attribute__((vector_size(64)));
using Lanes = int32_t __attribute__((vector_size(64)));
constexpr int64_t kLanes = 16;

// Lanes k..k+15 of the 32 floats lo, hi.
template <int k>
KILN_INLINE_IN_CLONES Floats shifted(Floats lo, Floats hi) {
#if defined(__clang__)  // the fuzz build (docs/FUZZING.md); clang has no __builtin_shuffle
  return __builtin_shufflevector(lo, hi, k, k + 1, k + 2, k + 3, k + 4, k + 5, k + 6, k + 7, k + 8,
                                 k + 9, k + 10, k + 11, k + 12, k + 13, k + 14, k + 15);
#else
  return __builtin_shuffle(lo, hi, Lanes{k, k + 1, k + 2, k + 3, k + 4, k + 5, k + 6, k + 7, k + 8,
                                         k + 9, k + 10, k + 11, k + 12, k + 13, k + 14, k + 15});
#endif
}

struct PaddedPlane {
  int64_t rows, phases, phaseWidth;  // rows x phases x phaseWidth floats

  explicit PaddedPlane(const DepthwiseGeometry& g)
      : rows((g.outH - 1) * g.strideH + (g.kh - 1) * g.dilationH + 1),
        phases(g.strideW),
        // Columns the last output reads, per phase, and a vector of slack after them so the
        // loads of a partial last vector stay inside the plane; whole vectors, so that
        // column 0 of every row is as aligned as the plane.
        phaseWidth((((g.outW - 1) * g.strideW + (g.kw - 1) * g.dilationW + g.strideW) / g.strideW +
                    2 * kLanes - 1) / kLanes * kLanes) {}

  int64_t size() const { return rows * phases * phaseWidth; }
  // Padded row r, phase q.
  int64_t at(int64_t r, int64_t q) const { return (r * phases + q) * phaseWidth; }
};

// dst[0..n) = src[0..n) in whole vectors where possible: rows are short, and a memcpy call
// (rep movs for a loop GCC recognises as one) costs more than the copy.
KILN_INLINE_IN_CLONES void copyShort(const float* src, int64_t n, float* dst) {
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes) {
    Floats v;
    std::memcpy(&v, src + c, sizeof v);
    std::memcpy(dst + c, &v, sizeof v);
  }
  for (; c < n; ++c) dst[c] = src[c];
}

// Copies input plane x into the interior of `plane`. Every plane writes the same
// positions, so the padding, zeroed once, stays zero.
KILN_INLINE_IN_CLONES void fillPlane(const float* x, const DepthwiseGeometry& g, const PaddedPlane& p,
                                     float* plane) {
  const int64_t firstRow = std::max<int64_t>(0, g.padTop);
  const int64_t lastRow = std::min(p.rows, g.padTop + g.height);  // exclusive
  for (int64_t r = firstRow; r < lastRow; ++r) {
    const float* src = x + (r - g.padTop) * g.width;
    if (p.phases == 1) {
      float* dst = plane + p.at(r, 0) + g.padLeft;
      const int64_t n = std::min(g.width, p.phaseWidth - g.padLeft);
      copyShort(src, n, dst);
      continue;
    }
    for (int64_t q = 0; q < p.phases; ++q) {  // padded column k * phases + q
      float* dst = plane + p.at(r, q);
      const int64_t first = std::max<int64_t>(0, g.padLeft - q + p.phases - 1) / p.phases;
      const int64_t end = std::min(p.phaseWidth, (g.padLeft + g.width - q + p.phases - 1) / p.phases);
      for (int64_t k = first; k < end; ++k) dst[k] = src[k * p.phases + q - g.padLeft];
    }
  }
}

// y[j..j+16) = v, cut at outW. Through a copy for the last partial vector: indexing v's
// lanes with a variable would keep every accumulator in memory.
KILN_INLINE_IN_CLONES void storeRow(Floats v, int64_t j, int64_t outW, float* y) {
  if (j + kLanes <= outW) {
    std::memcpy(y + j, &v, sizeof v);
    return;
  }
  float lanes[kLanes];
  std::memcpy(lanes, &v, sizeof v);
  for (int64_t k = 0; k < outW - j; ++k) y[j + k] = lanes[k];
}

// kRows output rows from `row` on (rowStep floats apart in the plane), columns j..j+15:
// kRows independent sums, so their adds overlap instead of waiting on each other.
// taps[t]: where tap t of output (0, 0) reads, from the plane's start.
template <int kRows>
KILN_INLINE_IN_CLONES void convolveRows(const float* row, int64_t rowStep, const int64_t* taps,
                                        int64_t numTaps, const float* w, int64_t j, int64_t outW,
                                        float* y) {
  Floats acc[kRows] = {};
  for (int64_t t = 0; t < numTaps; ++t) {
    const float wt = w[t];
    for (int r = 0; r < kRows; ++r) {
      Floats v;
      std::memcpy(&v, row + r * rowStep + taps[t] + j, sizeof v);
      acc[r] += wt * v;
    }
  }
  for (int r = 0; r < kRows; ++r) storeRow(acc[r], j, outW, y + r * outW);
}

// A 3x3 window at stride 1 and dilation 1. Named vectors, not arrays of them: GCC keeps
// arrays of vectors in memory, copied piecewise.
struct Taps3 {
  Floats left, middle, right;  // padded columns j.., j+1.., j+2..
};

KILN_INLINE_IN_CLONES Taps3 loadTaps3(const float* p) {
  Floats lo, hi;
  std::memcpy(&lo, p, sizeof lo);
  std::memcpy(&hi, p + kLanes, sizeof hi);
  return {lo, shifted<1>(lo, hi), shifted<2>(lo, hi)};
}

// acc + the window row a whose weights w[0..3) are broadcast, in tap order.
KILN_INLINE_IN_CLONES Floats addTaps3(Floats acc, const Taps3& t, const Floats* w) {
  acc += w[0] * t.left;
  acc += w[1] * t.middle;
  acc += w[2] * t.right;
  return acc;
}

// Output rows i..i+3 (`row` is padded row i), columns j..j+15: each padded row is loaded
// once for the up to three outputs it feeds; each output still adds its window rows
// a = 0, 1, 2 in turn, as convolveRows does. wv[t] is w[t] in every lane.
KILN_INLINE_IN_CLONES void convolve4Rows3x3(const float* row, int64_t rowStep, const Floats* wv, int64_t j,
                                            int64_t outW, float* y) {
  const Floats* w0 = wv;
  const Floats *w1 = wv + 3, *w2 = wv + 6;
  Floats a0 = {}, a1 = {}, a2 = {}, a3 = {};
  Taps3 t = loadTaps3(row + j);
  a0 = addTaps3(a0, t, w0);
  t = loadTaps3(row + rowStep + j);
  a0 = addTaps3(a0, t, w1), a1 = addTaps3(a1, t, w0);
  t = loadTaps3(row + 2 * rowStep + j);
  a0 = addTaps3(a0, t, w2), a1 = addTaps3(a1, t, w1), a2 = addTaps3(a2, t, w0);
  t = loadTaps3(row + 3 * rowStep + j);
  a1 = addTaps3(a1, t, w2), a2 = addTaps3(a2, t, w1), a3 = addTaps3(a3, t, w0);
  t = loadTaps3(row + 4 * rowStep + j);
  a2 = addTaps3(a2, t, w2), a3 = addTaps3(a3, t, w1);
  t = loadTaps3(row + 5 * rowStep + j);
  a3 = addTaps3(a3, t, w2);
  storeRow(a0, j, outW, y);
  storeRow(a1, j, outW, y + outW);
  storeRow(a2, j, outW, y + 2 * outW);
  storeRow(a3, j, outW, y + 3 * outW);
}

KILN_INLINE_IN_CLONES void convolveRow3x3(const float* row, int64_t rowStep, const Floats* wv, int64_t j,
                                          int64_t outW, float* y) {
  Floats a = addTaps3(Floats{}, loadTaps3(row + j), wv);
  a = addTaps3(a, loadTaps3(row + rowStep + j), wv + 3);
  a = addTaps3(a, loadTaps3(row + 2 * rowStep + j), wv + 6);
  storeRow(a, j, outW, y);
}

KILN_INLINE_IN_CLONES void convolvePlane3x3(const float* plane, const PaddedPlane& p, const float* w,
                                            const DepthwiseGeometry& g, float* y) {
  Floats wv[9];
  for (int t = 0; t < 9; ++t) wv[t] = Floats{} + w[t];
  const int64_t rowStep = p.at(1, 0);
  int64_t i = 0;
  for (; i + 4 <= g.outH; i += 4)
    for (int64_t j = 0; j < g.outW; j += kLanes)
      convolve4Rows3x3(plane + i * rowStep, rowStep, wv, j, g.outW, y + i * g.outW);
  for (; i < g.outH; ++i)
    for (int64_t j = 0; j < g.outW; j += kLanes)
      convolveRow3x3(plane + i * rowStep, rowStep, wv, j, g.outW, y + i * g.outW);
}

KILN_INLINE_IN_CLONES void convolvePlane(const float* plane, const PaddedPlane& p, const int64_t* taps,
                                         const float* w, const DepthwiseGeometry& g, float* y) {
  constexpr int kRows = 4;
  const int64_t numTaps = g.kh * g.kw, rowStep = p.at(g.strideH, 0);
  int64_t i = 0;
  for (; i + kRows <= g.outH; i += kRows)
    for (int64_t j = 0; j < g.outW; j += kLanes)
      convolveRows<kRows>(plane + i * rowStep, rowStep, taps, numTaps, w, j, g.outW, y + i * g.outW);
  for (; i < g.outH; ++i)
    for (int64_t j = 0; j < g.outW; j += kLanes)
      convolveRows<1>(plane + i * rowStep, rowStep, taps, numTaps, w, j, g.outW, y + i * g.outW);
}

// Input planes [begin, end) of the batch x channels planes, all their output channels.
KILN_VECTOR_CLONES void planesChunk(const float* x, const float* w, float* y, const DepthwiseGeometry& g,
                                    int64_t begin, int64_t end) {
  const PaddedPlane p(g);
  // Zeroed once: every plane writes the same interior positions.
  std::unique_ptr<Floats[]> buffer(new Floats[size_t(p.size() / kLanes)]());
  float* plane = reinterpret_cast<float*>(buffer.get());
  const bool is3x3 = g.kh == 3 && g.kw == 3 && g.strideH == 1 && g.strideW == 1 &&
                     g.dilationH == 1 && g.dilationW == 1;
  const int64_t inPlane = g.height * g.width, outPlane = g.outH * g.outW, numTaps = g.kh * g.kw;
  std::vector<int64_t> taps(static_cast<size_t>(numTaps));
  for (int64_t a = 0; a < g.kh; ++a)
    for (int64_t b = 0; b < g.kw; ++b) {
      const int64_t col = b * g.dilationW;
      taps[size_t(a * g.kw + b)] = p.at(a * g.dilationH, col % p.phases) + col / p.phases;
    }
  for (int64_t nc = begin; nc < end; ++nc) {
    fillPlane(x + nc * inPlane, g, p, plane);
    const int64_t c = nc % g.channels;
    for (int64_t m = 0; m < g.multiplier; ++m) {
      const int64_t o = c * g.multiplier + m, nOut = (nc - c) * g.multiplier + o;
      if (is3x3) convolvePlane3x3(plane, p, w + o * numTaps, g, y + nOut * outPlane);
      else convolvePlane(plane, p, taps.data(), w + o * numTaps, g, y + nOut * outPlane);
    }
  }
}

}  // namespace

void depthwiseConv2d(const float* x, const float* w, float* y, const DepthwiseGeometry& g) {
  // About 64K multiply-adds per chunk at least.
  const int64_t perPlane = std::max<int64_t>(1, g.multiplier * g.outH * g.outW * g.kh * g.kw);
  parallelFor(0, g.batch * g.channels, std::max<int64_t>(1, 65536 / perPlane),
              [&](int64_t begin, int64_t end) { planesChunk(x, w, y, g, begin, end); });
}

}  // namespace kiln::kernels
