// Branch-free float exp/log/tanh that the compiler vectorizes inside a plain loop, used by
// every eager f32 kernel (elementwise and fused) so a value's bits never depend on which
// kernel or memory layout computed it. f64 and the other dtypes keep the C library.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace kiln::kernels {

// The polynomials' coefficients, highest power first, shared with the HALIDE backend's
// Exprs of the same functions (runtime/halide/HalideKernels.cpp), so both compute the same
// formula.
inline constexpr float kExpPolynomial[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                           4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
inline constexpr float kLogPolynomial[] = {7.0376836292e-2f,  -1.1514610310e-1f, 1.1676998740e-1f,
                                           -1.2420140846e-1f, 1.4249322787e-1f,  -1.6668057665e-1f,
                                           2.0000714765e-1f,  -2.4999993993e-1f, 3.3333331174e-1f};

// p = c[0], then p = step(p, c[k]) for k = 1..N-1, written out at compile time; V is float
// here and Halide's Expr in the HALIDE backend, which evaluates the same tables. A plain
// loop over the table kept GCC from vectorizing the element loops that inline vexp/vlog
// (the eager exp ran scalar, 10x slower, from 2026-11-26 to 2026-11-27).
template <typename V, size_t N, typename Step, size_t... K>
inline V hornerUnrolled(const float (&c)[N], Step step, std::index_sequence<K...>) {
  V p = V(c[0]);
  ((p = step(p, c[K + 1])), ...);
  return p;
}
template <typename V, size_t N, typename Step>
inline V horner(const float (&c)[N], Step step) {
  return hornerUnrolled<V>(c, step, std::make_index_sequence<N - 1>{});
}

// exp(x) for float, |relative error| <= 1 ulp (Cephes expf coefficients): x = n·ln2 + r
// with |r| <= ln2/2, e^r by a degree-6 polynomial, 2^n put into the exponent bits in two
// halves. The reduction and the polynomial are explicit fused multiply-adds: an exactly
// rounded IEEE operation, so the bits are the same in every clone and build (the AVX2 and
// AVX-512 clones execute vfmadd, the baseline calls fmaf), where contraction, which the
// compiler applies or not, stays off; it takes 8 of the 33 vector operations away. The
// clamps are wide enough that the last multiply itself overflows to inf, rounds into the
// denormals and underflows to 0, so one select (for NaN, which the clamps turn into kMin
// so the integer conversion stays defined) is all that follows the polynomial.
inline float vexp(float x) {
  constexpr float kMax = 89.0f, kMin = -110.0f;  // beyond: inf and 0 from the multiply
  float clamped = x > kMin ? x : kMin;  // NaN -> kMin
  clamped = clamped < kMax ? clamped : kMax;
  // Round to nearest by adding and removing 1.5·2^23 (SSE2 has no vector round).
  constexpr float kRound = 12582912.0f;
  float n = (clamped * 1.44269504088896341f + kRound) - kRound;
  // ln2 split in two: n·0.693359375 is exact, and the fused multiply-adds round once each.
  float r = std::fma(n, -0.693359375f, clamped);
  r = std::fma(n, 2.12194440e-4f, r);
  float r2 = r * r;
  float p = horner<float>(kExpPolynomial, [r](float q, float c) { return std::fma(q, r, c); });
  float er = std::fma(p, r2, r) + 1.0f;
  // n is in [-159, 128]: each half of the scale stays a normal float.
  int32_t e = int32_t(n);
  int32_t e1 = e >> 1;
  float s1 = std::bit_cast<float>(int32_t((e1 + 127) << 23));
  float s2 = std::bit_cast<float>(int32_t((e - e1 + 127) << 23));
  float result = er * s1 * s2;
  return x != x ? x : result;
}

// log(x) for float, |relative error| ≤ 2 ulp away from 1 and absolute ≤ 1e-7 near it
// (Cephes logf): x = m·2^e with m in [√½, √2), log(m) by a degree-8 polynomial in m−1.
inline float vlog(float x) {
  // Denormals are scaled up by 2^23 first; everything stays float or int32 so it vectorizes.
  float denormal = x < 1.17549435e-38f && x > 0.0f ? 1.0f : 0.0f;
  float xn = x * (1.0f + denormal * 8388607.0f);
  int32_t bits = std::bit_cast<int32_t>(xn);
  float e = float(((bits >> 23) & 0xff) - 126) - denormal * 23.0f;
  float m = std::bit_cast<float>((bits & 0x007fffff) | 0x3f000000);  // [0.5, 1)
  float small = m < 0.707106781186547524f ? 1.0f : 0.0f;
  float ef = e - small;
  m = m + small * m - 1.0f;
  float z = m * m;
  float p = horner<float>(kLogPolynomial, [m](float q, float c) { return q * m + c; });
  float y = p * m * z;
  y = y + ef * -2.12194440e-4f;
  y = y - 0.5f * z;
  float result = m + y + ef * 0.693359375f;
  result = x == 0.0f ? -INFINITY : result;
  result = x < 0.0f ? NAN : result;
  result = x == INFINITY ? INFINITY : result;
  return x != x ? x : result;
}

// tanh(x) for float: an odd polynomial below |x| = 0.625 (Cephes tanhf), where 1 − 2/(e^2x+1)
// would cancel, and that formula above it. |relative error| ≤ 3 ulp.
inline float vtanh(float x) {
  float a = std::fabs(x);
  float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  float small = p * z * a + a;
  float large = 1.0f - 2.0f / (vexp(a + a) + 1.0f);
  return std::copysign(a < 0.625f ? small : large, x);  // odd, and tanh(-0) is -0
}

// The math type's exp/log/tanh: the functions above for float, the C library otherwise.
template <class M>
inline M exp(M x) {
  if constexpr (std::is_same_v<M, float>) return vexp(x);
  else return std::exp(x);
}
template <class M>
inline M log(M x) {
  if constexpr (std::is_same_v<M, float>) return vlog(x);
  else return std::log(x);
}
template <class M>
inline M tanh(M x) {
  if constexpr (std::is_same_v<M, float>) return vtanh(x);
  else return std::tanh(x);
}

}  // namespace kiln::kernels
