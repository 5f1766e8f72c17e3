// The depthwise convolution of Depthwise.h. Each input plane is copied once into a
// zero-padded scratch plane whose rows are split by column phase (column k of phase q is
// padded column k * strideW + q), so that for every stride the taps an output row needs
// are contiguous: output columns j..j+15 of tap (a, b) read 16 consecutive floats of
// phase (b * dilationW) % strideW. Sixteen outputs accumulate in one vector over the
// whole window, and a few output rows at a time, so their adds overlap.
//
// At stride 1 the rows start `lead` columns early, so that input column 0 lands on an
// aligned column and rows are copied in with aligned stores: a store split across cache
// lines stalls the aligned loads that read it back soon after (it cannot be forwarded).
//
// 3x3 windows at stride 1 (most depthwise layers) have their own loop: each column of 16
// outputs walks down the plane, loading each padded row once (aligned vectors, the shifted
// taps shuffled out of them) and adding it to the three output rows it feeds. Unaligned
// loads split across cache lines; with them, loads, not arithmetic, bounded the general
// loop. Both loops add the same products in the same order, so they give the same bits.
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
  int64_t rows, phases;  // rows x phases x phaseWidth floats
  int64_t lead;          // columns before padded column 0: at stride 1, (16 - padLeft) mod 16
  int64_t phaseWidth;

  explicit PaddedPlane(const DepthwiseGeometry& g)
      : rows((g.outH - 1) * g.strideH + (g.kh - 1) * g.dilationH + 1),
        phases(g.strideW),
        lead(g.strideW == 1 ? (kLanes - g.padLeft % kLanes) % kLanes : 0),
        // The lead, the columns the last output reads, per phase, and two vectors of slack
        // after them, so that the loads of a partial last vector, and the 3x3 loop's three
        // vectors from its last column, stay inside the plane; whole vectors, so that
        // column 0 of every row is as aligned as the plane.
        phaseWidth((lead + ((g.outW - 1) * g.strideW + (g.kw - 1) * g.dilationW + g.strideW) / g.strideW +
                    3 * kLanes - 1) / kLanes * kLanes) {}

  int64_t size() const { return rows * phases * phaseWidth; }
  // Padded row r, phase q, column 0.
  int64_t at(int64_t r, int64_t q) const { return (r * phases + q) * phaseWidth + lead; }
  // From one padded row to the next.
  int64_t rowStep() const { return phases * phaseWidth; }
};

// dst[0..n) = src[0..n) in whole vectors where possible: rows are short, and a memcpy call
// costs more than the copy. The empty asm keeps GCC from making the loop one anyway (-O3's
// loop distribution did, a call and a vzeroupper per row).
KILN_INLINE_IN_CLONES void copyShort(const float* src, int64_t n, float* dst) {
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes) {
    Floats v;
    std::memcpy(&v, src + c, sizeof v);
    std::memcpy(dst + c, &v, sizeof v);
    asm volatile("" ::: "memory");
  }
  for (; c < n; ++c) dst[c] = src[c];
}

// Copies input plane x into the interior of `plane`. Every plane writes the same
// positions, so the padding, zeroed once, stays zero.
KILN_INLINE_IN_CLONES void fillPlane(const float* x, const DepthwiseGeometry& g, const PaddedPlane& p,
                                     float* plane) {
  const int64_t firstRow = std::max<int64_t>(0, g.padTop);
  const int64_t lastRow = std::min(p.rows, g.padTop + g.height);  // exclusive
  if (p.phases == 1) {
    // Stride 1: one copy a row, to an aligned column (the lead's purpose). In locals, which
    // copyShort's asm leaves in registers: it makes GCC reload whatever is in memory.
    const int64_t width = g.width, rowStep = p.rowStep(), n = std::min(width, rowStep - p.lead - g.padLeft);
    const float* src = x + (firstRow - g.padTop) * width;
    float* dst = plane + p.at(firstRow, 0) + g.padLeft;
    for (int64_t r = firstRow; r < lastRow; ++r, src += width, dst += rowStep) copyShort(src, n, dst);
    return;
  }
  for (int64_t r = firstRow; r < lastRow; ++r) {
    const float* src = x + (r - g.padTop) * g.width;
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

// A 3x3 window at stride 1 and dilation 1, on a plane whose lead kLead is 15 or 14 (padLeft
// 1 or 2) or 0 (none): output columns j..j+15 read padded columns j + b, b < 3, which are
// lanes kLead + b.. of the three aligned vectors from row column j on. Named vectors, not
// arrays of them: GCC keeps arrays of vectors in memory, copied piecewise.
struct Taps3 {
  Floats left, middle, right;  // padded columns j.., j+1.., j+2..
};

// Lanes k..k+15 of the 48 floats v0, v1, v2.
template <int k>
KILN_INLINE_IN_CLONES Floats window(Floats v0, Floats v1, Floats v2) {
  if constexpr (k < kLanes) return shifted<k>(v0, v1);
  else if constexpr (k == kLanes) return v1;
  else return shifted<k - kLanes>(v1, v2);
}

template <int kLead>
KILN_INLINE_IN_CLONES Taps3 loadTaps3(const float* row) {
  Floats v0, v1, v2;  // GCC drops the loads no tap reads
  std::memcpy(&v0, row, sizeof v0);
  std::memcpy(&v1, row + kLanes, sizeof v1);
  std::memcpy(&v2, row + 2 * kLanes, sizeof v2);
  return {window<kLead>(v0, v1, v2), window<kLead + 1>(v0, v1, v2), window<kLead + 2>(v0, v1, v2)};
}

// acc + the window row whose weights w[0..3) are broadcast, in tap order.
KILN_INLINE_IN_CLONES Floats addTaps3(Floats acc, const Taps3& t, const Floats* w) {
  acc += w[0] * t.left;
  acc += w[1] * t.middle;
  acc += w[2] * t.right;
  return acc;
}

// Output columns j..j+15 of every output row (`row`: the plane's first row at column j),
// down the plane: each padded row is loaded once and added to the three outputs it feeds,
// each output adding its window rows 0, 1, 2 in turn: `next` holds the output below the
// one being finished after its window row 0, `last` the one being finished after rows 0
// and 1. wv[t] is w[t] in every lane.
template <int kLead>
KILN_INLINE_IN_CLONES void convolveColumn3x3(const float* row, int64_t rowStep, int64_t rows, const Floats* wv,
                                             int64_t outW, float* y) {
  const Floats *w0 = wv, *w1 = wv + 3, *w2 = wv + 6;
  Taps3 t = loadTaps3<kLead>(row);
  Floats last = addTaps3(Floats{}, t, w0);
  t = loadTaps3<kLead>(row + rowStep);
  Floats next = addTaps3(Floats{}, t, w0);
  last = addTaps3(last, t, w1);
  for (int64_t r = 2; r + 1 < rows; ++r, y += outW) {
    t = loadTaps3<kLead>(row + r * rowStep);
    const Floats done = addTaps3(last, t, w2);
    std::memcpy(y, &done, sizeof done);
    last = addTaps3(next, t, w1);
    next = addTaps3(Floats{}, t, w0);
  }
  const Floats done = addTaps3(last, loadTaps3<kLead>(row + (rows - 1) * rowStep), w2);
  std::memcpy(y, &done, sizeof done);
}

template <int kLead>
KILN_INLINE_IN_CLONES void convolveColumns3x3(const float* plane, const PaddedPlane& p, const Floats* wv,
                                            int64_t outW, float* y) {
  // The last column ends at the row's end, overlapping the one before where outW is not
  // whole vectors: those outputs are computed twice, the same way.
  for (int64_t j = 0; j < outW; j += kLanes) {
    const int64_t column = std::min(j, outW - kLanes);
    convolveColumn3x3<kLead>(plane + column, p.rowStep(), p.rows, wv, outW, y + column);
  }
}

// Whether g has a 3x3 loop: 3x3 at stride 1, a whole vector of outputs a row (outW >= 16),
// padLeft 0 to 2 (the plane's leads it is compiled for).
bool takes3x3(const DepthwiseGeometry& g) {
  return g.kh == 3 && g.kw == 3 && g.strideH == 1 && g.strideW == 1 && g.dilationH == 1 && g.dilationW == 1 &&
         g.outW >= kLanes && g.padLeft <= 2;
}

// The 3x3 loop for w[0..9), compiled for the plane's lead.
KILN_INLINE_IN_CLONES void convolvePlane3x3(const float* plane, const PaddedPlane& p, const float* w,
                                            int64_t outW, float* y) {
  Floats wv[9];
  for (int t = 0; t < 9; ++t) wv[t] = Floats{} + w[t];
  switch (p.lead) {
    case 0: convolveColumns3x3<0>(plane, p, wv, outW, y); break;
    case kLanes - 1: convolveColumns3x3<kLanes - 1>(plane, p, wv, outW, y); break;
    default: convolveColumns3x3<kLanes - 2>(plane, p, wv, outW, y); break;
  }
}

KILN_INLINE_IN_CLONES void convolvePlane(const float* plane, const PaddedPlane& p, const int64_t* taps,
                                         const float* w, const DepthwiseGeometry& g, float* y) {
  constexpr int kRows = 4;
  const int64_t numTaps = g.kh * g.kw, rowStep = g.strideH * p.rowStep();
  int64_t i = 0;
  for (; i + kRows <= g.outH; i += kRows)
    for (int64_t j = 0; j < g.outW; j += kLanes)
      convolveRows<kRows>(plane + i * rowStep, rowStep, taps, numTaps, w, j, g.outW, y + i * g.outW);
  for (; i < g.outH; ++i)
    for (int64_t j = 0; j < g.outW; j += kLanes)
      convolveRows<1>(plane + i * rowStep, rowStep, taps, numTaps, w, j, g.outW, y + i * g.outW);
}

// Input planes [begin, end) of the batch x channels planes, all their output channels,
// through the 3x3 loop or the general one.
template <bool k3x3>
KILN_INLINE_IN_CLONES void convolvePlanes(const float* x, const float* w, float* y, const DepthwiseGeometry& g,
                                          int64_t begin, int64_t end) {
  const PaddedPlane p(g);
  // Zeroed once: every plane writes the same interior positions.
  std::unique_ptr<Floats[]> buffer(new Floats[size_t(p.size() / kLanes)]());
  float* plane = reinterpret_cast<float*>(buffer.get());
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
      if constexpr (k3x3) convolvePlane3x3(plane, p, w + o * numTaps, g.outW, y + nOut * outPlane);
      else convolvePlane(plane, p, taps.data(), w + o * numTaps, g, y + nOut * outPlane);
    }
  }
}

// One vector clone each: the 3x3 loop's registers and code stay apart from the general one's.
KILN_VECTOR_CLONES void planesChunk(const float* x, const float* w, float* y, const DepthwiseGeometry& g,
                                    int64_t begin, int64_t end) {
  convolvePlanes<false>(x, w, y, g, begin, end);
}

KILN_VECTOR_CLONES void planesChunk3x3(const float* x, const float* w, float* y, const DepthwiseGeometry& g,
                                       int64_t begin, int64_t end) {
  convolvePlanes<true>(x, w, y, g, begin, end);
}

// The padded grid a group's planes are copied onto: the rows and columns the windows span,
// one plane after another; `length` rounded up to whole pairs of vectors, and `slack`
// floats after it, which the largest output shift reads past the last plane.
struct DotGrid {
  int64_t rows, cols, plane, length, slack;

  explicit DotGrid(const PlaneDotGeometry& g)
      : rows((g.outH - 1) * g.strideH + (g.kh - 1) * g.dilationH + 1),
        cols((g.outW - 1) * g.strideW + (g.kw - 1) * g.dilationW + 1),
        plane(rows * cols),
        length((g.channels * plane + 2 * kLanes - 1) / (2 * kLanes) * (2 * kLanes)),
        slack((g.outH - 1) * g.strideH * cols + (g.outW - 1) * g.strideW) {}
};

// Copies group `group`'s input planes and filters onto the grid. Every group writes the
// same positions, so the zeros around them, set once, stay. Returns whether every value
// copied is finite (v * 0 is NaN for inf and NaN alone).
KILN_INLINE_IN_CLONES bool fillGroup(const float* x, const float* w, const PlaneDotGeometry& g,
                                     const DotGrid& d, int64_t group, float* planes, float* filters) {
  float check = 0;
  const float* xg = x + group * g.channels * g.xChannel;
  const int64_t r0 = std::max<int64_t>(0, g.padTop), r1 = std::min(d.rows, g.padTop + g.height);
  const int64_t c0 = std::max<int64_t>(0, g.padLeft), c1 = std::min(d.cols, g.padLeft + g.width);
  for (int64_t k = 0; k < g.channels; ++k)
    for (int64_t r = r0; r < r1; ++r) {
      const float* src = xg + k * g.xChannel + (r - g.padTop) * g.xRow - g.padLeft * g.xCol;
      float* dst = planes + k * d.plane + r * d.cols;
      for (int64_t c = c0; c < c1; ++c) {
        dst[c] = src[c * g.xCol];
        check += dst[c] * 0.0f;
      }
    }
  const float* wg = w + group * g.wGroup;
  for (int64_t k = 0; k < g.channels; ++k)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const float v = wg[k * g.wChannel + i * g.wRow + j * g.wCol];
        filters[k * d.plane + i * g.dilationH * d.cols + j * g.dilationW] = v;
        check += v * 0.0f;
      }
  return check == 0.0f;
}

// The sum of a[t] * b[t] for t < n, n a multiple of 2 * kLanes, in two vectors of partial sums.
KILN_INLINE_IN_CLONES float dotProduct(const float* a, const float* b, int64_t n) {
  Floats s0 = {}, s1 = {};
  for (int64_t t = 0; t < n; t += 2 * kLanes) {
    Floats a0, a1, b0, b1;
    std::memcpy(&a0, a + t, sizeof a0);
    std::memcpy(&a1, a + t + kLanes, sizeof a1);
    std::memcpy(&b0, b + t, sizeof b0);
    std::memcpy(&b1, b + t + kLanes, sizeof b1);
    s0 += a0 * b0;
    s1 += a1 * b1;
  }
  float lanes[kLanes];
  const Floats s = s0 + s1;
  std::memcpy(lanes, &s, sizeof s);
  float sum = 0;
  for (float v : lanes) sum += v;
  return sum;
}

// Group `group`, tap by tap, the windows' parts outside x left out, as the reference loops.
void planeDotByTaps(const float* x, const float* w, const PlaneDotGeometry& g, int64_t group, float* y) {
  const float* xg = x + group * g.channels * g.xChannel;
  const float* wg = w + group * g.wGroup;
  for (int64_t a = 0; a < g.outH; ++a)
    for (int64_t b = 0; b < g.outW; ++b) {
      float acc = 0;
      for (int64_t k = 0; k < g.channels; ++k)
        for (int64_t i = 0; i < g.kh; ++i) {
          const int64_t h = a * g.strideH + i * g.dilationH - g.padTop;
          if (h < 0 || h >= g.height) continue;
          for (int64_t j = 0; j < g.kw; ++j) {
            const int64_t v = b * g.strideW + j * g.dilationW - g.padLeft;
            if (v < 0 || v >= g.width) continue;
            acc += wg[k * g.wChannel + i * g.wRow + j * g.wCol] * xg[k * g.xChannel + h * g.xRow + v * g.xCol];
          }
        }
      y[a * g.outW + b] = acc;
    }
}

// Groups [begin, end).
KILN_VECTOR_CLONES void planeDotChunk(const float* x, const float* w, float* y, const PlaneDotGeometry& g,
                                      int64_t begin, int64_t end) {
  const DotGrid d(g);
  // Zeroed once: every group writes the same positions.
  std::unique_ptr<Floats[]> planeBuffer(new Floats[size_t((d.length + d.slack + kLanes - 1) / kLanes)]());
  std::unique_ptr<Floats[]> filterBuffer(new Floats[size_t(d.length / kLanes)]());
  float* planes = reinterpret_cast<float*>(planeBuffer.get());
  float* filters = reinterpret_cast<float*>(filterBuffer.get());
  for (int64_t group = begin; group < end; ++group) {
    float* yg = y + group * g.outH * g.outW;
    if (!fillGroup(x, w, g, d, group, planes, filters)) {
      planeDotByTaps(x, w, g, group, yg);
      continue;
    }
    for (int64_t a = 0; a < g.outH; ++a)
      for (int64_t b = 0; b < g.outW; ++b)
        yg[a * g.outW + b] = dotProduct(filters, planes + a * g.strideH * d.cols + b * g.strideW, d.length);
  }
}

}  // namespace

int64_t planeDotScratch(const PlaneDotGeometry& g) {
  const DotGrid d(g);
  return d.length + d.slack;
}

void planeDotConv2d(const float* x, const float* w, float* y, const PlaneDotGeometry& g) {
  // About 64K multiply-adds per chunk at least.
  const int64_t perGroup = std::max<int64_t>(1, g.outH * g.outW * DotGrid(g).length);
  parallelFor(0, g.groups, std::max<int64_t>(1, 65536 / perGroup),
              [&](int64_t begin, int64_t end) { planeDotChunk(x, w, y, g, begin, end); });
}

void depthwiseConv2d(const float* x, const float* w, float* y, const DepthwiseGeometry& g) {
  // About 64K multiply-adds per chunk at least.
  const int64_t perPlane = std::max<int64_t>(1, g.multiplier * g.outH * g.outW * g.kh * g.kw);
  parallelFor(0, g.batch * g.channels, std::max<int64_t>(1, 65536 / perPlane),
              [&](int64_t begin, int64_t end) {
                if (takes3x3(g)) planesChunk3x3(x, w, y, g, begin, end);
                else planesChunk(x, w, y, g, begin, end);
              });
}

}  // namespace kiln::kernels
