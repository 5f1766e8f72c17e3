// gelu(x, "tanh") runs as one fused kernel eagerly when no gradient or tracer needs its
// ops; it must give exactly the bits of the composition it replaces.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"

namespace kiln {
namespace {

template <class T>
Tensor inputs(int64_t n) {
  manual_seed(7);
  Tensor x = mul(randn({n}, dtypeOf<T>()), 4.0).contiguous();
  T* p = x.data_ptr<T>();
  const T special[] = {T(0), T(-0.0), std::numeric_limits<T>::infinity(),
                       -std::numeric_limits<T>::infinity(), std::numeric_limits<T>::quiet_NaN(),
                       T(1e20), T(-1e20), T(1e-30), T(0.3), T(-0.3), T(9), T(-9)};
  for (size_t i = 0; i < std::size(special) && int64_t(i) < n; ++i) p[i] = special[i];
  return x;
}

template <class T>
void expectSameBits(int64_t n) {
  Tensor x = inputs<T>(n);
  Tensor fused = gelu(x, "tanh");  // no grad needed, no hook: the fused kernel
  Tensor leaf = x.clone().requires_grad_();
  Tensor composed = gelu(leaf, "tanh").detach();  // grad needed: the primitive ops
  ASSERT_TRUE(fused.is_contiguous() && composed.is_contiguous());
  EXPECT_EQ(std::memcmp(fused.data_ptr<T>(), composed.data_ptr<T>(), n * sizeof(T)), 0)
      << "n = " << n;
}

TEST(GeluTanhFusedTest, BitwiseEqualToTheCompositionF32) {
  for (int64_t n : {1, 3, 17, 1000, 70000}) expectSameBits<float>(n);
}

TEST(GeluTanhFusedTest, BitwiseEqualToTheCompositionF64) {
  for (int64_t n : {1, 17, 70000}) expectSameBits<double>(n);
}

TEST(GeluTanhFusedTest, StridedInputsAndNoGradGuard) {
  Tensor x = inputs<float>(64).reshape({8, 8}).transpose(0, 1).requires_grad_();
  Tensor composed = gelu(x, "tanh").detach();
  NoGradGuard noGrad;  // grad mode off: fused even though x requires grad
  Tensor fused = gelu(x, "tanh");
  EXPECT_FALSE(fused.requires_grad());
  EXPECT_EQ(std::memcmp(fused.data_ptr<float>(), composed.contiguous().data_ptr<float>(),
                        64 * sizeof(float)),
            0);
}

}  // namespace
}  // namespace kiln
