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
#include <array>
#include <cstring>
#include <memory>
#include <vector>
#include <utility>
#include <stdexcept>

#include "frontend/core/kernels/Loops.h"
#include "frontend/core/kernels/Scratch.h"
#include "frontend/core/kernels/Transpose16.h"
#include "kiln/core/ThreadPool.h"

namespace kiln::kernels {

namespace {

// 16 floats: one AVX-512 register, two AVX2 ones, four SSE ones in the baseline clone.
using Floats = Floats16;
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

// A group's planes and filters with the channels innermost, in blocks of 16 channels (one
// vector), so that each tap of each output is whole vector products however small the
// planes are: every position r, c of the padded grid the windows span holds input channel
// k at row r - padTop, column c - padLeft (only positions inside the input are written,
// and only those are read), every tap i, j the channels' filter values. Channels past the
// last are zero. A group that fits in L1 (32 KiB) keeps each position's blocks together;
// a bigger one each block's positions (and taps) together, so that one block's inputs and
// filters (36 KiB for 16x16 planes) stay in L1 while every output sums its taps over them.
struct ChannelsLast {
  int64_t rows, cols, blocks, tapCount;
  bool blockMajor;
  int64_t position, block;        // the input's floats from one position, one block to the next
  int64_t tapPosition, tapBlock;  // the filters'

  explicit ChannelsLast(const PlaneDotGeometry& g)
      : rows((g.outH - 1) * g.strideH + (g.kh - 1) * g.dilationH + 1),
        cols((g.outW - 1) * g.strideW + (g.kw - 1) * g.dilationW + 1),
        blocks((g.channels + kLanes - 1) / kLanes),
        tapCount(g.kh * g.kw),
        blockMajor(floats() * int64_t(sizeof(float)) > 32 * 1024),
        position(blockMajor ? kLanes : blocks * kLanes),
        block(blockMajor ? rows * cols * kLanes : kLanes),
        tapPosition(blockMajor ? kLanes : blocks * kLanes),
        tapBlock(blockMajor ? tapCount * kLanes : kLanes) {}
  int64_t inputFloats() const { return blocks * kLanes * rows * cols; }
  int64_t floats() const { return blocks * kLanes * (rows * cols + tapCount); }
};

// Channels [0, channels) of `positions` plane positions, channel k's position p at
// src[k * channelStride + p * positionStride], written channels last: channel k of
// position p to dst(p)[(k / 16) * blockStride + k % 16] (dst(p) null: p is left out).
// Where positions are contiguous, 16 channels by 16 positions at a time through
// registers, transposed; the rest one value at a time.
template <class Dst>
KILN_INLINE_IN_CLONES void toChannelsLast(const float* src, int64_t channels, int64_t channelStride,
                                          int64_t positions, int64_t positionStride, int64_t blockStride,
                                          Dst dst) {
  const int64_t wholeChannels = positionStride == 1 && positions >= kLanes ? channels / kLanes * kLanes : 0;
  const int64_t wholePositions = wholeChannels > 0 ? positions / kLanes * kLanes : 0;
  for (int64_t k0 = 0; k0 < wholeChannels; k0 += kLanes)
    for (int64_t p0 = 0; p0 < wholePositions; p0 += kLanes) {
      Floats16 rows[kLanes];
      for (int r = 0; r < kLanes; ++r) std::memcpy(&rows[r], src + (k0 + r) * channelStride + p0, sizeof(Floats16));
      transpose16(rows);
      for (int r = 0; r < kLanes; ++r)
        if (float* to = dst(p0 + r)) std::memcpy(to + k0 / kLanes * blockStride, &rows[r], sizeof(Floats16));
    }
  // What the blocks left: the channels past them at their positions, everything elsewhere.
  for (int64_t p = 0; p < positions; ++p) {
    float* to = dst(p);
    if (!to) continue;
    const float* from = src + p * positionStride;
    if (blockStride == kLanes) {  // the blocks of a position one after another
      for (int64_t k = p < wholePositions ? wholeChannels : 0; k < channels; ++k) to[k] = from[k * channelStride];
      continue;
    }
    for (int64_t k0 = p < wholePositions ? wholeChannels : 0; k0 < channels; k0 += kLanes) {
      float* block = to + k0 / kLanes * blockStride;
      const int64_t n = std::min(kLanes, channels - k0);
      for (int64_t k = 0; k < n; ++k) block[k] = from[(k0 + k) * channelStride];
    }
  }
}

// Copies group `group`'s input planes and filters into `at` and `taps`, channels last.
KILN_INLINE_IN_CLONES void fillChannelsLast(const float* x, const float* w, const PlaneDotGeometry& g,
                                            const ChannelsLast& d, int64_t group, float* at, float* taps) {
  const int64_t width = g.width, cols = d.cols, padTop = g.padTop, padLeft = g.padLeft, position = d.position;
  const int64_t h1 = std::min(g.height, d.rows - padTop), w1 = std::min(width, cols - padLeft);
  const float* xg = x + group * g.channels * g.xChannel;
  const auto atOf = [&](int64_t h, int64_t v) { return at + ((h + padTop) * cols + v + padLeft) * position; };
  if (g.xRow == width * g.xCol && g.height * width >= kLanes) {  // rows one after another: blocks across rows
    toChannelsLast(xg, g.channels, g.xChannel, g.height * width, g.xCol, d.block, [&](int64_t p) {
      const int64_t h = p / width, v = p % width;
      return h < h1 && v < w1 ? atOf(h, v) : nullptr;
    });
  } else {
    for (int64_t h = 0; h < h1; ++h)
      toChannelsLast(xg + h * g.xRow, g.channels, g.xChannel, w1, g.xCol, d.block,
                     [&](int64_t v) { return atOf(h, v); });
  }
  const float* wg = w + group * g.wGroup;
  const int64_t kw = g.kw, tapPosition = d.tapPosition;
  if (g.wRow == kw * g.wCol) {
    toChannelsLast(wg, g.channels, g.wChannel, d.tapCount, g.wCol, d.tapBlock,
                   [&](int64_t t) { return taps + t * tapPosition; });
  } else {
    for (int64_t i = 0; i < g.kh; ++i)
      toChannelsLast(wg + i * g.wRow, g.channels, g.wChannel, kw, g.wCol, d.tapBlock,
                     [&](int64_t j) { return taps + (i * kw + j) * tapPosition; });
  }
}

// The first and one past the last window index t whose position start + t * step lies in
// [lo, hi): the taps of a window that read inside the input along one dim.
inline std::pair<int64_t, int64_t> tapsInside(int64_t start, int64_t step, int64_t taps, int64_t lo, int64_t hi) {
  auto ceilDiv = [](int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -(-a / b); };
  const int64_t first = std::max<int64_t>(0, ceilDiv(lo - start, step));
  const int64_t last = std::min<int64_t>(taps, ceilDiv(hi - start, step));
  return {first, std::max(first, last)};
}

// Outputs per group the kernel takes (so at most as many rows, and columns).
constexpr int64_t kMaxPlaneDotOutputs = 25;

// Each output row's (or column's) range of window rows (columns) that read inside the
// input: the same for every group.
struct TapRanges {
  std::array<std::pair<int64_t, int64_t>, kMaxPlaneDotOutputs> rows, cols;

  explicit TapRanges(const PlaneDotGeometry& g) {
    for (int64_t a = 0; a < g.outH; ++a)
      rows[size_t(a)] = tapsInside(a * g.strideH, g.dilationH, g.kh, g.padTop, g.padTop + g.height);
    for (int64_t b = 0; b < g.outW; ++b)
      cols[size_t(b)] = tapsInside(b * g.strideW, g.dilationW, g.kw, g.padLeft, g.padLeft + g.width);
  }
};

// A group's outputs, each the sum of the products of its taps that read inside the input
// (so that a tap reading padding is never multiplied by the zero standing for it: 0 * inf
// is NaN), in vectors, then the lanes of its vector sum in order. Block-major groups (see
// ChannelsLast) go block by block, each output adding its taps' products (row by row,
// alternately into two vectors) to its running vector; the others output by output, block
// q of every tap into accumulator q mod 4, added (0 + 1) + (2 + 3). y: outH x outW, at
// most kMaxPlaneDotOutputs.

KILN_INLINE_IN_CLONES Floats loadFloats(const float* p) {
  Floats v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

KILN_INLINE_IN_CLONES float laneSum(const Floats& v) {
  float lanes[kLanes];
  std::memcpy(lanes, &v, sizeof lanes);
  float sum = 0;
  for (float l : lanes) sum += l;
  return sum;
}

KILN_INLINE_IN_CLONES void channelsLastOutputs(const PlaneDotGeometry& g, const ChannelsLast& d,
                                               const TapRanges& inside, const float* at, const float* taps,
                                               float* y) {
  const int64_t cols = d.cols, xStep = g.dilationW * d.position, wStep = d.tapPosition;
  if (d.blockMajor) {
    Floats acc[kMaxPlaneDotOutputs];
    for (int64_t o = 0; o < g.outH * g.outW; ++o) acc[o] = Floats{};
    for (int64_t q = 0; q < d.blocks; ++q)
      for (int64_t a = 0; a < g.outH; ++a) {
        const auto [i0, i1] = inside.rows[size_t(a)];
        for (int64_t b = 0; b < g.outW; ++b) {
          const auto [j0, j1] = inside.cols[size_t(b)];
          Floats s0 = {}, s1 = {};
          for (int64_t i = i0; i < i1; ++i) {
            const float* xp = at + q * d.block + ((a * g.strideH + i * g.dilationH) * cols + b * g.strideW) * d.position;
            const float* wp = taps + q * d.tapBlock + i * g.kw * wStep;
            int64_t j = j0;
            for (; j + 1 < j1; j += 2) {
              s0 += loadFloats(xp + j * xStep) * loadFloats(wp + j * wStep);
              s1 += loadFloats(xp + (j + 1) * xStep) * loadFloats(wp + (j + 1) * wStep);
            }
            if (j < j1) s0 += loadFloats(xp + j * xStep) * loadFloats(wp + j * wStep);
          }
          acc[a * g.outW + b] += s0 + s1;
        }
      }
    for (int64_t o = 0; o < g.outH * g.outW; ++o) y[o] = laneSum(acc[o]);
    return;
  }
  const int64_t lanes = d.blocks * kLanes, whole = lanes / (4 * kLanes) * (4 * kLanes);
  for (int64_t a = 0; a < g.outH; ++a) {
    const auto [i0, i1] = inside.rows[size_t(a)];
    for (int64_t b = 0; b < g.outW; ++b) {
      const auto [j0, j1] = inside.cols[size_t(b)];
      Floats s0 = {}, s1 = {}, s2 = {}, s3 = {};
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j) {
          const float* xv = at + ((a * g.strideH + i * g.dilationH) * cols + b * g.strideW) * d.position + j * xStep;
          const float* wv = taps + (i * g.kw + j) * wStep;
          int64_t k = 0;
          for (; k < whole; k += 4 * kLanes) {
            s0 += loadFloats(xv + k) * loadFloats(wv + k);
            s1 += loadFloats(xv + k + kLanes) * loadFloats(wv + k + kLanes);
            s2 += loadFloats(xv + k + 2 * kLanes) * loadFloats(wv + k + 2 * kLanes);
            s3 += loadFloats(xv + k + 3 * kLanes) * loadFloats(wv + k + 3 * kLanes);
          }
          if (k < lanes) s0 += loadFloats(xv + k) * loadFloats(wv + k);
          if (k + kLanes < lanes) s1 += loadFloats(xv + k + kLanes) * loadFloats(wv + k + kLanes);
          if (k + 2 * kLanes < lanes) s2 += loadFloats(xv + k + 2 * kLanes) * loadFloats(wv + k + 2 * kLanes);
        }
      y[a * g.outW + b] = laneSum((s0 + s1) + (s2 + s3));
    }
  }
}

// Groups [begin, end).
KILN_VECTOR_CLONES void planeDotChunk(const float* x, const float* w, float* y, const PlaneDotGeometry& g,
                                      int64_t begin, int64_t end) {
  const ChannelsLast d(g);
  const size_t floats = size_t(d.floats());
  float* at = static_cast<float*>(threadScratch(ScratchSlot::kPlaneDot, floats * sizeof(float)));
  float* taps = at + d.inputFloats();
  // Every group writes the same positions' channels; the lanes past the last channel must
  // be zero (positions no tap reads are never read).
  if (g.channels % kLanes != 0) std::memset(at, 0, floats * sizeof(float));
  const TapRanges inside(g);
  for (int64_t group = begin; group < end; ++group) {
    fillChannelsLast(x, w, g, d, group, at, taps);
    channelsLastOutputs(g, d, inside, at, taps, y + group * g.outH * g.outW);
  }
}

}  // namespace

int64_t planeDotScratch(const PlaneDotGeometry& g) { return ChannelsLast(g).floats(); }

void planeDotConv2d(const float* x, const float* w, float* y, const PlaneDotGeometry& g) {
  if (g.outH * g.outW > kMaxPlaneDotOutputs)
    throw std::invalid_argument("planeDotConv2d: more than 25 outputs per group");
  // About 64K floats copied or multiplied per chunk at least.
  const ChannelsLast d(g);
  const int64_t perGroup = std::max<int64_t>(
      1, g.channels * (g.height * g.width + g.kh * g.kw) + g.outH * g.outW * g.kh * g.kw * d.blocks * kLanes);
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
