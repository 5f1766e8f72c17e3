// conv2d and pooling: values against PyTorch 1.13, oneDNN (f32) against the reference
// kernel (f64), and finite-difference gradients of the composed backward passes.
#include <functional>
#include <vector>

#include <gtest/gtest.h>

#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "test/unit/frontend/GradCheck.h"

namespace kiln {
namespace {

using kiln::testing::gradcheck;

// x = arange(50)/10 - 2 as [1, 2, 5, 5]; w = arange(72)/20 - 1.5 as [4, 2, 3, 3] (f64).
Tensor inputX() { return sub(div(arange(0.0, 50.0, 1.0, kFloat64), 10.0), 2.0).reshape({1, 2, 5, 5}); }
Tensor inputW() { return sub(div(arange(0.0, 72.0, 1.0, kFloat64), 20.0), 1.5).reshape({4, 2, 3, 3}); }

void expectValues(const Tensor& t, const std::vector<double>& expected, double tol) {
  Tensor flat = t.to(kFloat64).contiguous().reshape({t.numel()});
  ASSERT_EQ(flat.numel(), int64_t(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(flat.data_ptr<double>()[i], expected[i], tol * (1 + std::abs(expected[i]))) << "element " << i;
}

const std::vector<double> kConvStride2Pad1 = {
    5.92, 7.24, 3.64, 0.21, -2.685, -3.93, -7.04, -12.92, -10.28, 2.68, 4.0, 2.56,
    3.45, 4.605, 2.55, 0.52, 0.04, -0.56, -0.56, 0.76, 1.48, 6.69, 11.895, 9.03,
    8.08, 13.0, 9.16, -3.8, -2.48, 0.4, 9.93, 19.185, 15.51, 15.64, 25.96, 18.88};

TEST(Conv2d, MatchesPyTorchInF64AndF32) {
  expectValues(conv2d(inputX(), inputW(), Tensor(), {2}, {1}), kConvStride2Pad1, 1e-12);
  expectValues(conv2d(inputX().to(kFloat32), inputW().to(kFloat32), Tensor(), {2}, {1}), kConvStride2Pad1, 1e-5);
}

TEST(Conv2d, DepthwiseMatchesPyTorch) {
  Tensor wd = sub(div(arange(0.0, 18.0, 1.0, kFloat64), 9.0), 0.4).reshape({2, 1, 3, 3});
  expectValues(sum(conv2d(inputX(), wd, Tensor(), {1}, {1}, {1}, 2), {2, 3}), {3.2355555555555586, 309.3133333333333}, 1e-12);
}

TEST(Conv2d, OneDnnAgreesWithTheReferenceKernelOnRandomShapes) {
  manual_seed(1);
  struct Case { Shape x, w; Shape stride, padding, dilation; int64_t groups; };
  for (const Case& c : std::vector<Case>{{{2, 3, 9, 7}, {4, 3, 3, 3}, {1}, {1}, {1}, 1},
                                         {{1, 4, 8, 8}, {4, 1, 3, 3}, {2}, {1}, {1}, 4},
                                         {{1, 6, 10, 10}, {4, 3, 3, 2}, {2, 1}, {0, 1}, {2}, 2}}) {
    Tensor x = randn(c.x, kFloat64), w = randn(c.w, kFloat64);
    Tensor ref = conv2d(x, w, Tensor(), c.stride, c.padding, c.dilation, c.groups);
    Tensor fast = conv2d(x.to(kFloat32), w.to(kFloat32), Tensor(), c.stride, c.padding, c.dilation, c.groups);
    ASSERT_EQ(ref.sizes(), fast.sizes());
    EXPECT_LT(amax(abs(sub(ref, fast.to(kFloat64)))).item<double>(), 1e-4);
  }
}

struct GradCase {
  const char* name;
  Shape x, w, stride, padding, dilation;
  int64_t groups;
};

void PrintTo(const GradCase& c, std::ostream* os) { *os << c.name; }

class Conv2dGrad : public ::testing::TestWithParam<GradCase> {};

TEST_P(Conv2dGrad, MatchesFiniteDifferences) {
  const GradCase& c = GetParam();
  manual_seed(5);
  auto fn = [&](const std::vector<Tensor>& in) {
    return conv2d(in[0], in[1], in[2], c.stride, c.padding, c.dilation, c.groups);
  };
  EXPECT_TRUE(gradcheck(fn, {randn(c.x, kFloat64), randn(c.w, kFloat64), randn({c.w[0]}, kFloat64)}));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Conv2dGrad,
    ::testing::Values(GradCase{"plain", {2, 3, 5, 5}, {2, 3, 3, 3}, {1}, {0}, {1}, 1},
                      GradCase{"padded", {1, 2, 5, 4}, {3, 2, 3, 3}, {1}, {1}, {1}, 1},
                      GradCase{"stride2", {1, 2, 6, 7}, {2, 2, 3, 3}, {2}, {1}, {1}, 1},
                      GradCase{"stride2Uneven", {1, 1, 6, 6}, {2, 1, 2, 3}, {2, 3}, {0, 1}, {1}, 1},
                      GradCase{"dilated", {1, 2, 7, 7}, {2, 2, 3, 3}, {1}, {2}, {2}, 1},
                      GradCase{"depthwise", {2, 3, 6, 6}, {3, 1, 3, 3}, {2}, {1}, {1}, 3},
                      GradCase{"grouped", {1, 4, 5, 5}, {6, 2, 3, 3}, {1}, {1}, {1}, 2},
                      GradCase{"pointwise", {2, 4, 3, 3}, {5, 4, 1, 1}, {1}, {0}, {1}, 1}),
    [](const ::testing::TestParamInfo<GradCase>& info) { return std::string(info.param.name); });

TEST(Pool2d, MatchesPyTorch) {
  expectValues(max_pool2d(inputX(), {3}, {2}, {1}),
               {-1.4, -1.2, -1.1, -0.4, -0.2, -0.1, 0.1, 0.3, 0.4, 1.1, 1.3, 1.4, 2.1, 2.3, 2.4, 2.6, 2.8, 2.9}, 1e-12);
  expectValues(avg_pool2d(inputX(), {2}), {-1.7, -1.5, -0.7, -0.5, 0.8, 1.0, 1.8, 2.0}, 1e-12);
  EXPECT_EQ(adaptive_avg_pool2d(inputX(), {1}).sizes(), (Shape{1, 2, 1, 1}));
}

TEST(Pool2d, GradientsMatchFiniteDifferences) {
  manual_seed(9);
  Tensor x = randn({2, 2, 6, 5}, kFloat64);
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return max_pool2d(in[0], {2}); }, {x}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return max_pool2d(in[0], {3}, {2}, {1}); }, {x}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return avg_pool2d(in[0], {2}); }, {x}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return avg_pool2d(in[0], {3}, {2}, {1}); }, {x}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return adaptive_avg_pool2d(in[0], {1}); }, {x}));
}

TEST(Pool2d, MaxGradientGoesToTheFirstMaximumOnTies) {
  Tensor x = zeros({1, 1, 2, 2}, kFloat64).requires_grad_();
  sum(max_pool2d(x, {2})).backward();
  expectValues(x.grad(), {1, 0, 0, 0}, 0);
}

TEST(Conv2d, RejectsMismatchedChannelsWithTheShapes) {
  try {
    conv2d(ones({1, 3, 5, 5}), ones({2, 2, 3, 3}));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("input [1, 3, 5, 5] and weight [2, 2, 3, 3] do not fit groups = 1"),
              std::string::npos) << e.what();
  }
  EXPECT_THROW(conv2d(ones({1, 1, 2, 2}), ones({1, 1, 3, 3})), ShapeError);
  EXPECT_THROW(max_pool2d(ones({1, 1, 4, 4}), {2}, {2}, {2}), ShapeError);
}

}  // namespace
}  // namespace kiln
