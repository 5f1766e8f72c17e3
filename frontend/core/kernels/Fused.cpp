// The fused softmax, log_softmax and layer_norm (see Fused.h). Each step below names the
// op of the composition it stands for; T is float or double, which is also the type the
// composition's elementwise kernels compute in (OpMathType), so a T operation here is that
// kernel's operation.
#include "frontend/core/kernels/Fused.h"

#include <algorithm>
#include <cmath>

#include "frontend/core/kernels/Loops.h"
#include "frontend/core/kernels/Reduce.h"
#include "frontend/core/kernels/VecMath.h"

namespace kiln::kernels {

namespace {

template <class T>
constexpr bool kComputesAsStored = std::is_same_v<OpMathType<T>, T>;

// Rows of n elements (x's dim is last, or the dims after it are all 1): the reductions
// are the row reductions the reduction op uses for a reduced last dim.
template <class T>
KILN_INLINE_IN_CLONES void softmaxRow(const T* x, int64_t n, bool log, T* y) {
  const T max = reduceRow<ReduceKind::Max>(x, n);                    // amax
  if (!log) {
    for (int64_t i = 0; i < n; ++i) y[i] = kernels::exp(T(x[i] - max));  // sub, exp
    const T inverse = T(1) / reduceRow<ReduceKind::Sum>(y, n);       // sum, div
    for (int64_t i = 0; i < n; ++i) y[i] = y[i] * inverse;           // mul
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] - max;  // sub
  const T sum = finish<ReduceKind::Sum, T>(           // exp, sum
      rowSum(y, n, [](T v) { return kernels::exp(v); }), n);
  const T logSum = kernels::log(sum);                       // log
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] - logSum;     // sub
}

// Blocks of `width` columns of r rows, rows `inner` apart (x's dim has dims of size > 1
// after it): the reductions are the column reductions the reduction op uses there.
template <class T>
KILN_INLINE_IN_CLONES void softmaxColumns(const T* x, int64_t r, int64_t inner, int64_t width, bool log, T* y) {
  T max[kMaxColumnBlock], sum[kMaxColumnBlock];
  ColumnAcc<ReduceKind::Max, T> maxAcc[kMaxColumnBlock];
  ColumnAcc<ReduceKind::Sum, T> sumAcc[kMaxColumnBlock];
  reduceColumns<ReduceKind::Max>(x, r, inner, width, max, maxAcc);  // amax
  if (!log) {
    for (int64_t k = 0; k < r; ++k)  // sub, exp
      for (int64_t j = 0; j < width; ++j) y[k * inner + j] = kernels::exp(T(x[k * inner + j] - max[j]));
    reduceColumns<ReduceKind::Sum>(y, r, inner, width, sum, sumAcc);  // sum
    for (int64_t j = 0; j < width; ++j) sum[j] = T(1) / sum[j];       // div
    for (int64_t k = 0; k < r; ++k)                                  // mul
      for (int64_t j = 0; j < width; ++j) y[k * inner + j] = y[k * inner + j] * sum[j];
    return;
  }
  for (int64_t k = 0; k < r; ++k)  // sub
    for (int64_t j = 0; j < width; ++j) y[k * inner + j] = x[k * inner + j] - max[j];
  reduceColumnsWith<ReduceKind::Sum>(  // exp, sum
      r, width, [y, inner](int64_t k, int64_t j) { return kernels::exp(y[k * inner + j]); }, sum,
      sumAcc);
  for (int64_t j = 0; j < width; ++j) sum[j] = kernels::log(sum[j]);  // log
  for (int64_t k = 0; k < r; ++k)                                     // sub
    for (int64_t j = 0; j < width; ++j) y[k * inner + j] = y[k * inner + j] - sum[j];
}

// One parallelFor chunk of rows [begin, end), and of column blocks (jobs) [begin, end):
// the loops the vector clones are made of. Cloned per chunk, not per row, so the row functions
// inline into each clone and a chunk pays one ifunc call, not one per short row.
template <class T>
KILN_VECTOR_CLONES void softmaxRows(const T* x, int64_t r, int64_t begin, int64_t end, bool log,
                                    T* y) {
  for (int64_t o = begin; o < end; ++o) softmaxRow(x + o * r, r, log, y + o * r);
}

template <class T>
KILN_VECTOR_CLONES void softmaxColumnBlocks(const T* x, int64_t r, int64_t inner, int64_t block,
                                            int64_t begin, int64_t end, bool log, T* y) {
  const int64_t blocks = (inner + block - 1) / block;
  for (int64_t job = begin; job < end; ++job) {
    const int64_t at = job / blocks * r * inner + job % blocks * block;
    softmaxColumns(x + at, r, inner, std::min(block, inner - job % blocks * block), log, y + at);
  }
}

template <class T>
void softmaxOf(const T* x, const Shape& shape, int64_t dim, bool log, T* y) {
  static_assert(kComputesAsStored<T>);
  const int64_t outer = numel(Shape(shape.begin(), shape.begin() + dim));
  const int64_t r = dim < int64_t(shape.size()) ? shape[dim] : 1;  // 0-d: one element
  const int64_t inner = numel(Shape(shape.begin() + std::min<int64_t>(dim + 1, shape.size()), shape.end()));
  // As the reduction op: only dims of size > 1 after `dim` make it a column reduction.
  if (inner == 1 || r == 1) {  // r == 1: either gives exp(x - x) / its sum, elementwise
    const int64_t rows = outer * inner;
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / r);
    parallelFor(0, rows, grain,
                [&](int64_t begin, int64_t end) { softmaxRows(x, r, begin, end, log, y); });
    return;
  }
  const int64_t block = columnBlock(outer, inner);
  const int64_t blocks = (inner + block - 1) / block;
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / (r * block));
  parallelFor(0, outer * blocks, grain, [&](int64_t begin, int64_t end) {
    softmaxColumnBlocks(x, r, inner, block, begin, end, log, y);
  });
}

// One row of layer_norm: mean, sub, mul, mean, add eps, rsqrt, mul, then the weight's mul
// and the bias's add (each rounded as its own op: no FMA, see frontend/BUILD.bazel).
template <bool Weight, bool Bias, class T>
KILN_INLINE_IN_CLONES void layerNormRow(const T* x, int64_t n, const T* weight, const T* bias, T eps, T* y) {
  const T mean = reduceRow<ReduceKind::Mean>(x, n);
  const T variance = finish<ReduceKind::Mean, T>(rowSum(x, n, [mean](T v) {
    const T deviation = v - mean;
    return T(deviation * deviation);
  }), n);
  const T rstd = T(1) / std::sqrt(T(variance + eps));  // the rsqrt kernel's formula
  for (int64_t i = 0; i < n; ++i) {
    T v = T(x[i] - mean) * rstd;
    if constexpr (Weight) v = v * weight[i];
    if constexpr (Bias) v = v + bias[i];
    y[i] = v;
  }
}

// Rows [begin, end) of layer_norm: one parallelFor chunk, cloned as softmaxRows.
template <bool Weight, bool Bias, class T>
KILN_VECTOR_CLONES void layerNormRows(const T* x, int64_t n, int64_t begin, int64_t end,
                                      const T* weight, const T* bias, T eps, T* y) {
  for (int64_t r = begin; r < end; ++r)
    layerNormRow<Weight, Bias>(x + r * n, n, weight, bias, eps, y + r * n);
}

template <class F>
decltype(auto) dispatchFloat32Or64(DType dtype, F&& f) {
  return dtype == kFloat64 ? f.template operator()<double>() : f.template operator()<float>();
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim, bool log, const SourceLoc& loc) {
  Tensor y = kiln::detail::emptyTensor(x.sizes(), x.dtype(), x.device(), false, loc);
  dispatchFloat32Or64(x.dtype(), [&]<class T>() {
    softmaxOf(static_cast<const T*>(x.rawData()), x.sizes(), dim, log, static_cast<T*>(y.rawData()));
  });
  return y;
}

Tensor layerNorm(const Tensor& x, int64_t normalized, const Tensor& weight, const Tensor& bias,
                 double eps, const SourceLoc& loc) {
  Tensor y = kiln::detail::emptyTensor(x.sizes(), x.dtype(), x.device(), false, loc);
  dispatchFloat32Or64(x.dtype(), [&]<class T>() {
    static_assert(kComputesAsStored<T>);
    const T* src = static_cast<const T*>(x.rawData());
    const T* w = weight.defined() ? static_cast<const T*>(weight.rawData()) : nullptr;
    const T* b = bias.defined() ? static_cast<const T*>(bias.rawData()) : nullptr;
    T* dst = static_cast<T*>(y.rawData());
    const T epsilon = T(eps);  // the 0-d constant the composition adds
    const int64_t rows = x.numel() / normalized;
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / normalized);
    auto run = [&]<bool Weight, bool Bias>() {
      parallelFor(0, rows, grain, [&](int64_t begin, int64_t end) {
        layerNormRows<Weight, Bias>(src, normalized, begin, end, w, b, epsilon, dst);
      });
    };
    if (w && b) run.template operator()<true, true>();
    else if (w) run.template operator()<true, false>();
    else if (b) run.template operator()<false, true>();
    else run.template operator()<false, false>();
  });
  return y;
}

}  // namespace kiln::kernels
