// map: out[i] = f(in0[i], in1[i], ...) for eager elementwise kernels, typed, over strided
// inputs; the inner loop is a plain indexed loop the compiler vectorizes when contiguous.
#pragma once

#include <array>
#include <cstdint>
#include <tuple>
#include <utility>

#include "frontend/core/kernels/Loops.h"

namespace kiln::kernels {

// One run whose inputs all have stride 1 or 0: bit I of Broadcast set means input I has
// stride 0 and is read once, so the loop body is plain loads and the compiler vectorizes.
template <unsigned Broadcast, class Out, class... In, class F, size_t... I>
KILN_VECTOR_CLONES void denseRun(Out* o, const std::tuple<const In*...>& src, int64_t count, F& f,
              std::index_sequence<I...>) {
  const std::tuple<In...> first{*std::get<I>(src)...};
  auto at = [&]<size_t J>(int64_t k) {
    if constexpr ((Broadcast >> J) & 1u) return std::get<J>(first);
    else return std::get<J>(src)[k];
  };
  for (int64_t k = 0; k < count; ++k) o[k] = f(at.template operator()<I>(k)...);
}

template <class Out, class... In, class F, size_t... I, unsigned... B>
void denseRunFor(unsigned broadcast, Out* o, const std::tuple<const In*...>& src, int64_t count,
                 F& f, std::index_sequence<I...> is, std::integer_sequence<unsigned, B...>) {
  ((broadcast == B ? (denseRun<B, Out, In...>(o, src, count, f, is), true) : false) || ...);
}

// One run with a strided input: a plain loop, cloned like denseRun so that the functions f
// calls (vexp's fused multiply-adds) compile to the clone's instructions, not library calls.
template <class Out, class... In, class F, size_t... I>
KILN_VECTOR_CLONES void stridedRun(Out* o, const std::tuple<const In*...>& src, int64_t count,
                                   const std::array<int64_t, sizeof...(In)>& strides, F& f,
                                   std::index_sequence<I...>) {
  for (int64_t k = 0; k < count; ++k) o[k] = f(std::get<I>(src)[k * strides[I]]...);
}

template <class Out, class... In, class F, size_t... I>
void mapImpl(Tensor& out, const std::array<const Tensor*, sizeof...(In)>& inputs, F& f,
             std::index_sequence<I...> is) {
  constexpr size_t N = sizeof...(In);
  auto ops = stridedOperands<N>(out.shape(), inputs);
  Out* dst = static_cast<Out*>(out.rawData());
  forEachRun(ops, [&](int64_t at, const std::array<const char*, N>& ptrs, int64_t count,
                      const std::array<int64_t, N>& strides) {
    Out* o = dst + at;
    std::tuple<const In*...> src{reinterpret_cast<const In*>(ptrs[I])...};
    if (((strides[I] == 0 || strides[I] == 1) && ...)) {
      unsigned broadcast = ((unsigned(strides[I] == 0) << I) | ... | 0u);
      denseRunFor<Out, In...>(broadcast, o, src, count, f, is,
                              std::make_integer_sequence<unsigned, (1u << N)>{});
    } else {
      stridedRun<Out, In...>(o, src, count, strides, f, is);
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
