// map: out[i] = f(in0[i], in1[i], ...) for eager elementwise kernels, typed, over strided
// inputs; the inner loop is a plain indexed loop the compiler vectorizes when contiguous.
#pragma once

#include <utility>

#include "frontend/core/kernels/Loops.h"

namespace kiln::kernels {

template <class Out, class... In, class F, size_t... I>
void mapImpl(Tensor& out, const std::array<const Tensor*, sizeof...(In)>& inputs, F& f,
             std::index_sequence<I...>) {
  constexpr size_t N = sizeof...(In);
  auto ops = stridedOperands<N>(out.shape(), inputs);
  Out* dst = static_cast<Out*>(out.rawData());
  forEachRun(ops, [&](int64_t at, const std::array<const char*, N>& ptrs, int64_t count,
                      const std::array<int64_t, N>& strides) {
    Out* o = dst + at;
    std::tuple<const In*...> src{reinterpret_cast<const In*>(ptrs[I])...};
    if (((strides[I] == 1) && ...)) {
      for (int64_t k = 0; k < count; ++k) o[k] = f(std::get<I>(src)[k]...);
    } else {
      for (int64_t k = 0; k < count; ++k) o[k] = f(std::get<I>(src)[k * strides[I]]...);
    }
  });
}

// `out` must be contiguous and each input already have out's shape (possibly by stride-0
// broadcast views).
template <class Out, class... In, class F>
void map(Tensor& out, const std::array<const Tensor*, sizeof...(In)>& inputs, F f) {
  mapImpl<Out, In...>(out, inputs, f, std::index_sequence_for<In...>{});
}

}  // namespace kiln::kernels
