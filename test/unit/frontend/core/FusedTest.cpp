// The fused eager softmax, log_softmax and layer_norm (frontend/core/kernels/Fused.h) give
// the bits of their compositions: the composition runs when an input requires grad, the
// fused kernel when none does, and the two results must be equal byte for byte (a trace,
// which runs the composition op by op, must agree with eager mode). Also: when each path
// is taken.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/core/kernels/Fused.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Functional.h"
#include "test/unit/frontend/core/TestTensors.h"

namespace kiln {
namespace {

using kiln::testing::spread;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Rows of `width` values in [-scale, scale), and from row 1 on one row each of: a -inf
// entry, all -inf, a NaN entry, a +inf entry, huge values (1e30, which overflows float32
// when squared), a -inf and a NaN together.
Tensor rows(int64_t count, int64_t width, DType dtype, double scale = 3.0, uint64_t seed = 7) {
  std::vector<double> v = spread(count * width, seed, -scale, scale);
  auto row = [&](int64_t r) { return v.begin() + r * width; };
  auto put = [&](int64_t r, int64_t at, double value) {
    if (r < count) row(r)[at % width] = value;
  };
  put(1, 2, -kInf);
  if (count > 2) std::fill(row(2), row(2) + width, -kInf);
  put(3, width / 2, kNaN);
  put(4, width - 1, kInf);
  if (count > 5)
    for (int64_t i = 0; i < width; ++i) row(5)[i] *= 1e30 / scale;
  put(6, 0, -kInf);
  put(6, width / 3 + 1, kNaN);
  return tensor(v, Shape{count, width}).to(dtype);
}

// Byte equality of two tensors' values (NaN payloads and signed zeros included).
::testing::AssertionResult sameBits(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype())
    return ::testing::AssertionFailure() << "shapes or dtypes differ: " << a << " vs " << b;
  Tensor ca = a.contiguous(), cb = b.contiguous();
  const size_t bytes = size_t(a.numel()) * a.element_size();
  if (std::memcmp(ca.rawData(), cb.rawData(), bytes) == 0) return ::testing::AssertionSuccess();
  for (int64_t i = 0; i < a.numel(); ++i) {
    const char* pa = static_cast<const char*>(ca.rawData()) + i * int64_t(a.element_size());
    const char* pb = static_cast<const char*>(cb.rawData()) + i * int64_t(a.element_size());
    if (std::memcmp(pa, pb, a.element_size()) != 0)
      return ::testing::AssertionFailure()
             << "element " << i << " of " << a.numel() << " differs: "
             << detail::readElementAsDouble(ca, i) << " vs " << detail::readElementAsDouble(cb, i);
  }
  return ::testing::AssertionFailure();
}

using Op = std::function<Tensor(const std::vector<Tensor>&)>;

// op on the composition (every input requires grad) and on the fused path (none does),
// both as seen through the public function.
::testing::AssertionResult fusedMatchesComposition(const Op& op, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> tracked;
  for (const Tensor& t : inputs)
    tracked.push_back(t.defined() ? t.detach().clone().requires_grad_() : t);
  Tensor composed = op(tracked);
  if (!composed.requires_grad())
    return ::testing::AssertionFailure() << "the composition did not run";
  return sameBits(op(inputs), composed.detach());
}

std::string describe(const Shape& shape, DType dtype, int64_t dim) {
  std::ostringstream os;
  os << "shape " << shape << ", " << dtype << ", dim " << dim;
  return os.str();
}

const std::vector<int64_t> kWidths = {1, 3, 17, 1000, 1024};

TEST(FusedTest, SoftmaxOverTheLastDimGivesTheCompositionsBits) {
  for (DType dtype : {kFloat32, kFloat64})
    for (int64_t width : kWidths)
      for (double scale : {3.0, 1e4}) {
        Tensor x = rows(9, width, dtype, scale);
        SCOPED_TRACE(describe(x.sizes(), dtype, 1) + ", scale " + std::to_string(scale));
        EXPECT_TRUE(fusedMatchesComposition([](auto& v) { return softmax(v[0], 1); }, {x}));
        EXPECT_TRUE(fusedMatchesComposition([](auto& v) { return log_softmax(v[0], -1); }, {x}));
      }
}

// dim 0 and middle dims reduce columns (the reduction op's column path); dims followed
// only by dims of size 1 reduce rows; a dim of size 1, a 1-d and a 0-d input.
TEST(FusedTest, SoftmaxOverOtherDimsGivesTheCompositionsBits) {
  struct Case {
    Shape shape;
    int64_t dim;
  };
  const std::vector<Case> cases = {{{17, 1024}, 0}, {{3, 17, 5}, 1},  {{2, 1000, 3}, 1},
                                   {{9, 3, 2}, 0},  {{4, 3, 1}, 1},   {{4, 1, 6}, 1},
                                   {{1, 2000}, 0},  {{3, 2, 1, 4}, 1}, {{1000}, 0},
                                   {{}, 0}};
  for (DType dtype : {kFloat32, kFloat64})
    for (const Case& c : cases) {
      SCOPED_TRACE(describe(c.shape, dtype, c.dim));
      Tensor x = rows(9, std::max<int64_t>(1, numel(c.shape) / 9 + 1), dtype)
                     .reshape({-1})
                     .narrow(0, 0, numel(c.shape))
                     .reshape(c.shape);
      const int64_t dim = c.dim;
      EXPECT_TRUE(fusedMatchesComposition([dim](auto& v) { return softmax(v[0], dim); }, {x}));
      EXPECT_TRUE(fusedMatchesComposition([dim](auto& v) { return log_softmax(v[0], dim); }, {x}));
    }
}

// Large enough that the rows, and the column blocks, are split across the pool.
TEST(FusedTest, InputsSplitAcrossThreadsGiveTheCompositionsBits) {
  Tensor x = rows(512, 1000, kFloat32);
  EXPECT_TRUE(fusedMatchesComposition([](auto& v) { return softmax(v[0], 1); }, {x}));
  EXPECT_TRUE(fusedMatchesComposition([](auto& v) { return log_softmax(v[0], 1); }, {x}));
  EXPECT_TRUE(fusedMatchesComposition([](auto& v) { return layer_norm(v[0], {1000}); }, {x}));
  Tensor wide = rows(40, 3000, kFloat32);
  EXPECT_TRUE(fusedMatchesComposition([](auto& v) { return softmax(v[0], 0); }, {wide}));
  EXPECT_TRUE(fusedMatchesComposition([](auto& v) { return log_softmax(v[0], 0); }, {wide}));
}

TEST(FusedTest, SoftmaxOfANonContiguousInputGivesTheCompositionsBits) {
  Tensor x = rows(40, 9, kFloat32).t();  // [9, 40], strides [1, 9]
  EXPECT_TRUE(fusedMatchesComposition([](auto& v) { return softmax(v[0], 1); }, {x}));
  EXPECT_TRUE(fusedMatchesComposition([](auto& v) { return log_softmax(v[0], 0); }, {x}));
}

TEST(FusedTest, LayerNormGivesTheCompositionsBits) {
  for (DType dtype : {kFloat32, kFloat64})
    for (int64_t width : kWidths)
      for (double scale : {3.0, 1e4}) {
        Tensor x = rows(9, width, dtype, scale);
        SCOPED_TRACE(describe(x.sizes(), dtype, 1) + ", scale " + std::to_string(scale));
        Tensor w = tensor(spread(width, 11, 0.5, 1.5), Shape{width}).to(dtype);
        Tensor b = tensor(spread(width, 13, -1.0, 1.0), Shape{width}).to(dtype);
        const Shape n{width};
        EXPECT_TRUE(fusedMatchesComposition([n](auto& v) { return layer_norm(v[0], n); }, {x}));
        EXPECT_TRUE(fusedMatchesComposition(
            [n](auto& v) { return layer_norm(v[0], n, v[1], v[2]); }, {x, w, b}));
        EXPECT_TRUE(fusedMatchesComposition(
            [n](auto& v) { return layer_norm(v[0], n, v[1], Tensor(), 0.1); }, {x, w}));
        EXPECT_TRUE(fusedMatchesComposition(
            [n](auto& v) { return layer_norm(v[0], n, Tensor(), v[1]); }, {x, b}));
      }
}

// Several normalized dims, a float64 weight for a float32 input (converted as the
// composition converts it), and a non-contiguous input.
TEST(FusedTest, LayerNormOverSeveralDimsAndMixedDTypesGivesTheCompositionsBits) {
  Tensor x = rows(6, 51, kFloat32).reshape({2, 3, 3, 17});
  Tensor w = tensor(spread(51, 3, 0.5, 1.5), Shape{3, 17});
  Tensor b = tensor(spread(51, 5, -1.0, 1.0), Shape{3, 17});
  EXPECT_TRUE(fusedMatchesComposition(
      [](auto& v) { return layer_norm(v[0], {3, 17}, v[1], v[2]); }, {x, w, b}));
  Tensor xt = rows(17, 6, kFloat64).t();  // [6, 17], strides [1, 6]
  EXPECT_TRUE(fusedMatchesComposition([](auto& v) { return layer_norm(v[0], {17}); }, {xt}));
  Tensor ones = rows(4, 1, kFloat32).reshape({4, 1, 1});
  EXPECT_TRUE(fusedMatchesComposition([](auto& v) { return layer_norm(v[0], {1, 1}); }, {ones}));
}

// The public functions route to the fused kernel exactly when nothing needs the
// composition: here the kernel itself, called directly, agrees with them.
TEST(FusedTest, TheKernelsAgreeWithThePublicFunctions) {
  Tensor x = rows(9, 1000, kFloat32);
  EXPECT_TRUE(sameBits(kernels::softmax(x, 1, false, SourceLoc::current()), softmax(x, 1)));
  EXPECT_TRUE(sameBits(kernels::softmax(x, 0, true, SourceLoc::current()), log_softmax(x, 0)));
  EXPECT_TRUE(sameBits(kernels::layerNorm(x, 1000, Tensor(), Tensor(), 1e-5, SourceLoc::current()),
                       layer_norm(x, {1000})));
}

// Counts the ops a tracer would see.
class CountingHook : public DispatchHook {
 public:
  bool symbolic() const override { return false; }
  void onOp(const OpCall& call) override { ops.push_back(std::string(call.op.kilnOp)); }
  void onValueRead(const Tensor&, std::string_view, const SourceLoc&) override {}
  std::vector<std::string> ops;
};

TEST(FusedTest, ATracerSeesTheComposition) {
  Tensor x = rows(3, 8, kFloat32);
  CountingHook hook;
  {
    DispatchHookGuard guard(&hook);
    softmax(x, 1);
    layer_norm(x, {8});
  }
  EXPECT_THAT(hook.ops, ::testing::Contains("kiln.reduce"));
  EXPECT_THAT(hook.ops, ::testing::Contains("kiln.exp"));
  EXPECT_THAT(hook.ops, ::testing::Contains("kiln.rsqrt"));
}

// Counts the ops a tracer would see; symbolic, it computes none.
class SymbolicHook : public CountingHook {
 public:
  bool symbolic() const override { return true; }
};

// The fused kernels read values: a placeholder leaked from a symbolic trace goes to the
// composition, whose first op rejects it as before.
TEST(FusedTest, APlaceholderOutsideItsTraceIsStillATraceError) {
  Tensor leaked;
  SymbolicHook hook;
  {
    DispatchHookGuard guard(&hook);
    leaked = exp(rows(3, 8, kFloat32));
  }
  ASSERT_TRUE(leaked.is_placeholder());
  EXPECT_THROW(softmax(leaked, 1), TraceError);
  EXPECT_THROW(log_softmax(leaked, 0), TraceError);
  EXPECT_THROW(layer_norm(leaked, {8}), TraceError);
}

// With an input that requires grad, the result has history (the composition ran) unless
// grad mode is off; then the fused kernel runs and gives the same bits.
TEST(FusedTest, GradientsNeedTheCompositionOnlyInGradMode) {
  Tensor x = rows(4, 17, kFloat32).requires_grad_();
  Tensor withHistory = log_softmax(x, 1);
  EXPECT_NE(withHistory.grad_fn(), nullptr);
  Tensor w = tensor(spread(17, 1, 0.5, 1.5), Shape{17}).to(kFloat32).requires_grad_();
  Tensor free = tensor(spread(4 * 17, 2, -1, 1), Shape{4, 17}).to(kFloat32);
  EXPECT_NE(layer_norm(free, {17}, w, Tensor()).grad_fn(), nullptr);  // a weight needs grad
  NoGradGuard noGrad;
  Tensor without = log_softmax(x, 1);
  EXPECT_EQ(without.grad_fn(), nullptr);
  EXPECT_FALSE(without.requires_grad());
  EXPECT_TRUE(sameBits(without, withHistory.detach()));
}

}  // namespace
}  // namespace kiln
