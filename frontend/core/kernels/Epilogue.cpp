#include "frontend/core/kernels/Epilogue.h"

#include <algorithm>

#include "kiln/core/DType.h"
#include "kiln/core/ThreadPool.h"

namespace kiln::kernels {

void biasAndRelu(Tensor& out, const Tensor& bias, int64_t channels, int64_t inner, bool relu,
                 const SourceLoc& loc) {
  const int64_t perOuter = channels * inner, outer = perOuter ? out.numel() / perOuter : 0;
  dispatchFloatingDType(out.dtype(), "bias and relu", loc, [&]<class T>() {
    using M = OpMathType<T>;
    const T* pb = bias.defined() ? static_cast<const T*>(bias.rawData()) : nullptr;
    T* py = static_cast<T*>(out.rawData());
    parallelFor(0, outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(perOuter, 1)),
                [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o)
        for (int64_t c = 0; c < channels; ++c) {
          T* p = py + (o * channels + c) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            T v = pb ? T(M(p[i]) + M(pb[c])) : p[i];
            if (relu && !(v != v || v > T(0))) v = T(0);
            p[i] = v;
          }
        }
    });
  });
}

}  // namespace kiln::kernels
