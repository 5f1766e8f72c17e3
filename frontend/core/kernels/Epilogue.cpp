#include "frontend/core/kernels/Epilogue.h"

#include <algorithm>

#include "kiln/core/DType.h"
#include "kiln/core/ThreadPool.h"

namespace kiln::kernels {

namespace {

// One value of the epilogue: plus the bias when there is one (in the math type M, rounded
// once, as the add kernel), then relu (NaN kept, everything not above 0 made +0).
template <class T, class M>
inline T epilogueValue(T v, const T* bias, int64_t c, bool relu) {
  if (bias) v = T(M(v) + M(bias[c]));
  return relu && !(v != v || v > T(0)) ? T(0) : v;
}

}  // namespace

void biasAndRelu(Tensor& out, const Tensor& bias, int64_t channels, int64_t inner, bool relu,
                 const SourceLoc& loc) {
  if (out.numel() == 0) return;
  const int64_t perOuter = channels * inner, outer = perOuter ? out.numel() / perOuter : 0;
  dispatchFloatingDType(out.dtype(), "bias and relu", loc, [&]<class T>() {
    using M = OpMathType<T>;
    const T* pb = bias.defined() ? static_cast<const T*>(bias.rawData()) : nullptr;
    T* py = static_cast<T*>(out.rawData());
    // The innermost loop runs along memory over as many values as possible, so it
    // vectorizes: every value without a bias (addmm's relu: channels of inner 1 would
    // make a loop of one value per channel), along the channels of a row when inner is 1.
    if (!pb || inner == 1) {
      const int64_t row = pb ? channels : perOuter * outer, rows = pb ? outer : 1;
      parallelFor(0, rows * row, 16384, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin / row; r * row < end; ++r) {
          T* p = py + r * row;
          const int64_t from = std::max(begin - r * row, int64_t(0)), to = std::min(end - r * row, row);
          for (int64_t c = from; c < to; ++c) p[c] = epilogueValue<T, M>(p[c], pb, c, relu);
        }
      });
      return;
    }
    parallelFor(0, outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(perOuter, 1)),
                [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o)
        for (int64_t c = 0; c < channels; ++c) {
          T* p = py + (o * channels + c) * inner;
          for (int64_t i = 0; i < inner; ++i) p[i] = epilogueValue<T, M>(p[i], pb, c, relu);
        }
    });
  });
}

}  // namespace kiln::kernels
