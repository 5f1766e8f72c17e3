// Row and column reductions shared by the reduction op (ops/Reduce.cpp) and the fused
// kernels (kernels/Fused.cpp). A fused softmax or layer_norm reduces a row with exactly the
// code `sum`/`amax`/`mean` use, so fused and op by op give the same bits.
//
// Order of operations, which fixes the bits:
// - A row (contiguous elements 0..n) folds element i into lane i % kLanes, each lane in
//   increasing i, and the lanes combine by halving (lane k with lane k + kLanes/2, ...).
//   The order depends on n only: never on threads, chunks or memory layout.
// - A column (one element per row) folds its rows in order, in one accumulator.
// - A float32 sum (and mean) pairs its elements first: in each block of 32 (elements
//   32k .. 32k + 31), element 32k + l and element 32k + 16 + l, l < 16, are added in
//   float32 (an element whose partner is past the end stands alone), and the pair sum goes
//   to lane l in double, the lanes then combining by halving as above. The elements are
//   counted in the order of the reduced dims, as a packed copy with them last holds them:
//   a row's in a row, a column's down the column. Converting every element to double
//   bounds a float32 sum on x86 (the conversion takes the pipes that add); pairs halve the
//   conversions and read memory in order. A pair's rounding is at most 2^-24 of its
//   magnitude and does not grow with n. The compiled reductions form the same pairs
//   (passes/conversion/KilnToLinalg/Reduce.cpp), so the two differ only by double
//   roundings.
// Sums and products accumulate in double (int64 for integers) and round once at the end.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "frontend/core/kernels/Loops.h"
#include "kiln/core/DType.h"
#include "kiln/core/ThreadPool.h"

namespace kiln::kernels {

enum class ReduceKind { Sum, Mean, Prod, Max, Min };

// What sums and products accumulate in.
template <class T>
using ReduceAcc = std::conditional_t<std::is_floating_point_v<OpMathType<T>>, double, int64_t>;

// 16 independent chains: 8 SSE2 registers of doubles, enough to hide the add latency.
inline constexpr int64_t kLanes = 16;
static_assert((kLanes & (kLanes - 1)) == 0, "a power of two");

namespace detail {

template <ReduceKind K>
constexpr bool kIsExtremum = K == ReduceKind::Max || K == ReduceKind::Min;

// The accumulator of kind K before any element (max/min start from their first element).
template <ReduceKind K, class V>
KILN_INLINE_IN_CLONES constexpr V identity() {
  return K == ReduceKind::Prod ? V(1) : V(0);
}

// One step of kind K. max/min take a NaN v, so a lane that saw a NaN ends NaN (which NaN
// is settled apart: the result is the first NaN in index order, whatever the lanes saw).
template <ReduceKind K, class V>
KILN_INLINE_IN_CLONES V step(V acc, V v) {
  if constexpr (K == ReduceKind::Prod) return acc * v;
  else if constexpr (K == ReduceKind::Max) return ((v > acc) | (v != v)) ? v : acc;
  else if constexpr (K == ReduceKind::Min) return ((v < acc) | (v != v)) ? v : acc;
  else return acc + v;
}

// The lanes l[0..kLanes) combined by halving: (l0 op l8), (l1 op l9), ..., then halving
// again. max/min: only without NaNs, so the combine can leave out the NaN test (with it,
// the scalar halving compiled to a branch per step: a fifth of a 64-element row's
// softmax).
template <ReduceKind K, class V>
KILN_INLINE_IN_CLONES V combineLanes(V* l) {
  // Unrolled, the halving stays in registers; left a loop, GCC kept the lanes on the
  // stack and read them back one by one (softmax of [16384,64]: 0.556 -> 0.498 ms).
#pragma GCC unroll 4
  for (int64_t width = kLanes / 2; width >= 1; width /= 2)
#pragma GCC unroll 8
    for (int64_t k = 0; k < width; ++k) {
      if constexpr (K == ReduceKind::Max) l[k] = l[k + width] > l[k] ? l[k + width] : l[k];
      else if constexpr (K == ReduceKind::Min) l[k] = l[k + width] < l[k] ? l[k + width] : l[k];
      else l[k] = step<K == ReduceKind::Mean ? ReduceKind::Sum : K>(l[k], l[k + width]);
    }
  return l[0];
}

}  // namespace detail

// Folds load(i), i in [0, n), into kLanes lanes with kind K (Sum for Mean). The partial
// results can be continued with further segments (add), as if they were one row; an
// element's lane is its index in the whole row mod kLanes.
template <ReduceKind K, class V>
class LaneFold {
 public:
  static constexpr ReduceKind kStep = K == ReduceKind::Mean ? ReduceKind::Sum : K;

  // max/min: every lane starts at `first`, an element of the row.
  KILN_INLINE_IN_CLONES explicit LaneFold(V first = detail::identity<kStep, V>()) {
    for (V& l : lane_) l = first;
  }

  template <class Load>
  KILN_INLINE_IN_CLONES void add(int64_t n, Load&& load) {
    // Up to the next multiple of kLanes in the whole row, whole blocks, then the rest.
    int64_t i = std::min(n, (kLanes - phase_) % kLanes);
    for (int64_t k = 0; k < i; ++k) one(load(k));
    for (; i + kLanes <= n; i += kLanes) {
      if constexpr (detail::kIsExtremum<K>) {
        // Left a loop, so the vectorizer if-converts the select (unrolled, it is branches).
#pragma GCC unroll 1
        for (int64_t k = 0; k < kLanes; ++k) lane_[k] = detail::step<kStep>(lane_[k], load(i + k));
      } else {
        for (int64_t k = 0; k < kLanes; ++k) lane_[k] = detail::step<kStep>(lane_[k], load(i + k));
      }
    }
    // The rest, fewer than kLanes: the mask only tells the compiler so.
    for (int64_t k = 0; k < ((n - i) & (kLanes - 1)); ++k) one(load(i + k));
  }

  // Whether some element was NaN (max/min only).
  KILN_INLINE_IN_CLONES bool sawNaN() const {
    bool any = false;
    for (int64_t k = 0; k < kLanes; ++k) any |= lane_[k] != lane_[k];
    return any;
  }

  // The lanes combined (detail::combineLanes); max/min only once sawNaN() is false.
  KILN_INLINE_IN_CLONES V result() const {
    V l[kLanes];
    for (int64_t k = 0; k < kLanes; ++k) l[k] = lane_[k];
    return detail::combineLanes<K>(l);
  }

 private:
  KILN_INLINE_IN_CLONES void one(V v) {
    lane_[phase_] = detail::step<kStep>(lane_[phase_], v);
    phase_ = (phase_ + 1) % kLanes;
  }

  V lane_[kLanes];
  int64_t phase_ = 0;
};

// Sum of load(i) for i in [0, n) in the row order above; load returns the accumulator type.
template <class Acc, class Load>
KILN_INLINE_IN_CLONES Acc laneSum(int64_t n, Load&& load) {
  LaneFold<ReduceKind::Sum, Acc> fold;
  fold.add(n, load);
  return fold.result();
}

// Whether a sum of kind K over T pairs its elements in T first (see the top of this file).
template <ReduceKind K, class T>
constexpr bool kSumsPairs = std::is_same_v<T, float> && (K == ReduceKind::Sum || K == ReduceKind::Mean);

// The float32 sum in double of a sequence of float32 values given in pieces, in the pairs
// of the top of this file: add(n, load) continues the sequence with load(0..n).
class PairFold {
 public:
  static constexpr int64_t kBlock = 2 * kLanes;

  template <class Load>
  KILN_INLINE_IN_CLONES void add(int64_t n, Load&& load) {
    int64_t i = 0;
    if (pending_ > 0) {  // complete the block the last piece began
      for (; i < n && pending_ < kBlock; ++i) block_[pending_++] = load(i);
      if (pending_ < kBlock) return;
      foldBlock([this](int64_t k) { return block_[k]; });
      pending_ = 0;
    }
    for (; i + kBlock <= n; i += kBlock) foldBlock([&](int64_t k) { return load(i + k); });
    for (; i < n; ++i) block_[pending_++] = load(i);
  }

  KILN_INLINE_IN_CLONES double result() const {
    double l[kLanes];
    for (int64_t k = 0; k < kLanes; ++k) l[k] = lane_[k];
    // The last block's elements: those with a partner paired, the others alone.
    for (int64_t k = 0; k < std::min(pending_, kLanes); ++k)
      l[k] += k + kLanes < pending_ ? double(float(block_[k] + block_[k + kLanes])) : double(block_[k]);
    return detail::combineLanes<ReduceKind::Sum>(l);
  }

 private:
  template <class Load>
  KILN_INLINE_IN_CLONES void foldBlock(Load&& load) {
    for (int64_t k = 0; k < kLanes; ++k) lane_[k] += double(float(float(load(k)) + float(load(k + kLanes))));
  }

  double lane_[kLanes] = {};
  float block_[kBlock];
  int64_t pending_ = 0;
};

// PairFold's sum of the float32 row x[0..n), bit for bit, out of line: on x86-64-v4 in AVX-512
// with the double adds as fused multiply-adds by 1.0, which -ffp-contract=off keeps the
// vector clones from forming. The float-to-double conversion bounds this loop and takes
// the pipes that add, so the adds move to the multiply pipes. For rows long enough to pay
// for the call (reduceRow).
double sumFloatRow(const float* x, int64_t n);
inline constexpr int64_t kMinOutOfLineRow = 256;

// The sum in the accumulator type of f(x[i]) over the row x[0..n), each f a T, in the order
// of sum's rows (pairs for float32): for fused kernels that sum values they compute.
template <class T, class F>
KILN_INLINE_IN_CLONES ReduceAcc<T> rowSum(const T* x, int64_t n, F&& f) {
  if constexpr (std::is_same_v<T, float>) {
    PairFold fold;
    fold.add(n, [&](int64_t i) { return float(f(x[i])); });
    return fold.result();
  } else {
    return laneSum<ReduceAcc<T>>(n, [&](int64_t i) { return ReduceAcc<T>(OpMathType<T>(f(x[i]))); });
  }
}

// The value a reduction of kind K stores for an accumulated `acc` over `n` elements.
template <ReduceKind K, class T, class V>
KILN_INLINE_IN_CLONES T finish(V acc, int64_t n) {
  using M = OpMathType<T>;
  if constexpr (K == ReduceKind::Mean) return T(M(acc / V(n)));
  else return T(M(acc));
}

// What a sum, mean or product of no elements stores (max/min of nothing are errors).
template <ReduceKind K, class T>
T reduceNothing() {
  if constexpr (detail::kIsExtremum<K>) return T();
  else return finish<K, T>(detail::identity<K, ReduceAcc<T>>(), 0);
}

// Calls visit(p, len) for the runs that at(i) reaches over [0, n), in order (at as in
// reduceSegments).
template <class At, class Visit>
KILN_INLINE_IN_CLONES void forEachRun(int64_t n, At&& at, Visit&& visit) {
  for (int64_t i = 0; i < n;) {
    const auto [p, len] = at(i);
    const int64_t take = std::min<int64_t>(len, n - i);
    visit(p, take);
    i += take;
  }
}

// Reduces the n elements of one output that at(i) reaches (at(i) is {p, len}: element i at
// p[0] and the elements after it up to i + len - 1 at p[1..len); a plain row is
// one run, rows in segments a run per segment), in the order of their index i. n >= 1 for
// max/min.
template <ReduceKind K, class T, class At>
KILN_INLINE_IN_CLONES T reduceSegments(At&& at, int64_t n) {
  using M = OpMathType<T>;
  if constexpr (detail::kIsExtremum<K>) {
    if (n < 1) return T();  // unreachable: max/min of nothing is rejected before
    LaneFold<K, M> fold{M(*at(0).first)};
    forEachRun(n, at, [&](const T* x, int64_t len) { fold.add(len, [x](int64_t i) { return M(x[i]); }); });
    if (!fold.sawNaN()) return T(fold.result());
    const T* nanAt = nullptr;
    forEachRun(n, at, [&](const T* x, int64_t len) {
      for (int64_t i = 0; i < len && !nanAt; ++i)
        if (M(x[i]) != M(x[i])) nanAt = x + i;
    });
    return *nanAt;  // NaN propagates: the first one, payload and all
  } else if constexpr (kSumsPairs<K, T>) {
    PairFold fold;
    forEachRun(n, at, [&](const T* x, int64_t len) { fold.add(len, [x](int64_t i) { return x[i]; }); });
    return finish<K, T>(fold.result(), n);
  } else {
    using Acc = ReduceAcc<T>;
    LaneFold<K, Acc> fold;
    forEachRun(n, at, [&](const T* x, int64_t len) { fold.add(len, [x](int64_t i) { return Acc(M(x[i])); }); });
    return finish<K, T>(fold.result(), n);
  }
}

// Reduces the row x[0..n) with kind K, as the reduction op does (n >= 1 for max/min).
template <ReduceKind K, class T>
KILN_INLINE_IN_CLONES T reduceRow(const T* x, int64_t n) {
  if constexpr (kSumsPairs<K, T>)
    if (n >= kMinOutOfLineRow) return finish<K, T>(sumFloatRow(x, n), n);
  return reduceSegments<K, T>([x, n](int64_t i) { return std::pair{x + i, n - i}; }, n);
}

// Scratch a column reduction of kind K accumulates in, one per column.
template <ReduceKind K, class T>
using ColumnAcc = std::conditional_t<detail::kIsExtremum<K>, OpMathType<T>, ReduceAcc<T>>;

// Reduces a `rows` x `width` block column-wise into out[0..width), load(r, j) giving element
// (r, j) as a T: each column in row order, the inner loop along a row so it vectorizes.
// `acc` is scratch for `width` accumulators. rows >= 1 for max/min.
template <ReduceKind K, class T, class Load>
KILN_INLINE_IN_CLONES void reduceColumnsWith(int64_t rows, int64_t width, Load&& load, T* out, ColumnAcc<K, T>* acc) {
  using M = OpMathType<T>;
  if constexpr (detail::kIsExtremum<K>) {
    for (int64_t j = 0; j < width; ++j) acc[j] = M(load(0, j));
    for (int64_t r = 1; r < rows; ++r)
      for (int64_t j = 0; j < width; ++j) {
        M v = M(load(r, j)), best = acc[j];
        // A NaN stays once there; a new NaN replaces a number (the first NaN propagates).
        acc[j] = best != best ? best : detail::step<K>(best, v);
      }
    for (int64_t j = 0; j < width; ++j) out[j] = T(acc[j]);
  } else {
    using Acc = ReduceAcc<T>;
    constexpr ReduceKind kStep = K == ReduceKind::Mean ? ReduceKind::Sum : K;
    for (int64_t j = 0; j < width; ++j) acc[j] = detail::identity<kStep, Acc>();
    if constexpr (kSumsPairs<K, T>) {  // row 32k + l with row 32k + 16 + l, if there is one
      for (int64_t r0 = 0; r0 < rows; r0 += PairFold::kBlock)
        for (int64_t r = r0; r < std::min(r0 + kLanes, rows); ++r) {
          if (r + kLanes < rows) {
            for (int64_t j = 0; j < width; ++j)
              acc[j] += double(float(float(load(r, j)) + float(load(r + kLanes, j))));
          } else {
            for (int64_t j = 0; j < width; ++j) acc[j] += double(float(load(r, j)));
          }
        }
    } else {
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < width; ++j) acc[j] = detail::step<kStep>(acc[j], Acc(M(load(r, j))));
    }
    for (int64_t j = 0; j < width; ++j) out[j] = finish<K, T>(acc[j], rows);
  }
}

// reduceColumnsWith over rows of x that start rowStride elements apart.
template <ReduceKind K, class T>
KILN_INLINE_IN_CLONES void reduceColumns(const T* x, int64_t rows, int64_t rowStride, int64_t width, T* out,
                   ColumnAcc<K, T>* acc) {
  reduceColumnsWith<K>(rows, width, [&](int64_t r, int64_t j) { return x[r * rowStride + j]; },
                       out, acc);
}

// Columns per block for reducing `outer` matrices of `inner` columns: a few blocks per
// thread where the columns allow, in whole vectors, but at least kMinColumnBlock (2 KB of
// float32 per row: narrower blocks make every row a cold read from a new page) and at most
// kMaxColumnBlock (the accumulators stay in L1). Column results do not depend on the blocks.
inline constexpr int64_t kMinColumnBlock = 512, kMaxColumnBlock = 1024;
inline int64_t columnBlock(int64_t outer, int64_t inner) {
  const int64_t perOuter = (4 * int64_t(get_num_threads()) + outer - 1) / outer;
  int64_t block = ((inner + perOuter - 1) / perOuter + kLanes - 1) / kLanes * kLanes;
  return std::min(std::max(block, std::min(kMinColumnBlock, inner)), kMaxColumnBlock);
}

}  // namespace kiln::kernels
