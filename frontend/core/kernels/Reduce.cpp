#include "frontend/core/kernels/Reduce.h"

// Not under ASan (the config also runs UBSan), as the vector clones of Loops.h.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#include <immintrin.h>
#define KILN_SUM_ROW_AVX512 1
#endif

namespace kiln::kernels {

namespace {

double sumFloatRowPortable(const float* x, int64_t n) {
  PairFold fold;
  fold.add(n, [x](int64_t i) { return x[i]; });
  return fold.result();
}

#ifdef KILN_SUM_ROW_AVX512
// Lanes 0..15 += the 16 pair sums in `pairs`.
[[gnu::target("arch=x86-64-v4"), gnu::always_inline]] inline void foldPairs(__m512 pairs, __m512d& lo,
                                                                           __m512d& hi) {
  const __m512d one = _mm512_set1_pd(1.0);
  const __m256 upper = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(pairs), 1));
  lo = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(pairs)), one, lo);
  hi = _mm512_fmadd_pd(_mm512_cvtps_pd(upper), one, hi);
}

// PairFold's order with its 16 lanes as two vectors of 8 doubles, lanes 0..7 and 8..15:
// a block's pairs are one float32 vector add of its two halves. The double adds are fused
// multiply-adds by 1.0, which round as an add does (x * 1.0 is exact). The last block is
// masked loads: a missing element reads +0, so an element without a partner is added to +0
// (exact), and a lane with no element at all gets +0, which changes no lane (a lane is never
// -0: it starts at +0, and a sum is -0 only when both terms are).
[[gnu::target("arch=x86-64-v4")]] double sumFloatRowAvx512(const float* x, int64_t n) {
  __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
  int64_t i = 0;
  for (; i + PairFold::kBlock <= n; i += PairFold::kBlock)
    foldPairs(_mm512_add_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(x + i + kLanes)), lo, hi);
  if (const int64_t rest = n - i; rest > 0) {
    const auto mask = [](int64_t count) { return __mmask16((1u << std::clamp<int64_t>(count, 0, 16)) - 1); };
    foldPairs(_mm512_add_ps(_mm512_maskz_loadu_ps(mask(rest), x + i),
                            _mm512_maskz_loadu_ps(mask(rest - kLanes), x + i + kLanes)),
              lo, hi);
  }
  // detail::combineLanes: lane k with lane k + 8, then k + 4, k + 2, k + 1.
  const __m512d eight = _mm512_add_pd(lo, hi);
  const __m256d four = _mm256_add_pd(_mm512_castpd512_pd256(eight), _mm512_extractf64x4_pd(eight, 1));
  const __m128d two = _mm_add_pd(_mm256_castpd256_pd128(four), _mm256_extractf128_pd(four, 1));
  return _mm_cvtsd_f64(_mm_add_sd(two, _mm_unpackhi_pd(two, two)));
}
#endif

}  // namespace

double sumFloatRow(const float* x, int64_t n) {
#ifdef KILN_SUM_ROW_AVX512
  static_assert(kLanes == 16, "two vectors of 8 doubles");
  static const auto sum = (__builtin_cpu_init(), __builtin_cpu_supports("x86-64-v4"))
                              ? sumFloatRowAvx512
                              : sumFloatRowPortable;
  return sum(x, n);
#else
  return sumFloatRowPortable(x, n);
#endif
}

}  // namespace kiln::kernels
