// conv2d and pooling: values against PyTorch 1.13, oneDNN (f32) against the reference
// kernel (f64), and finite-difference gradients of the composed backward passes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <functional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "frontend/core/kernels/Depthwise.h"
#include "frontend/core/kernels/OneDnn.h"
#include "frontend/core/ops/OpTable.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/core/ThreadPool.h"
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

// ---- oneDNN's blocked layouts ------------------------------------------------------------
// For kernels larger than 1x1 and for groups, oneDNN's plain-layout choice is im2col +
// sgemm, so f32 convolutions run in oneDNN's blocked layouts with reordered, cached weights.

struct ConvCase {
  const char* name;
  Shape x, w, stride, padding, dilation;
  int64_t groups;
};

void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

// f32 through oneDNN against f64 through the reference loops, relative to the largest value.
void expectMatchesReference(const Tensor& x, const Tensor& w, const ConvCase& c) {
  Tensor fast = conv2d(x, w, Tensor(), c.stride, c.padding, c.dilation, c.groups);
  Tensor ref = conv2d(x.to(kFloat64), w.to(kFloat64), Tensor(), c.stride, c.padding, c.dilation, c.groups);
  ASSERT_EQ(fast.sizes(), ref.sizes());
  const double scale = amax(abs(ref)).item<double>();
  EXPECT_LE(amax(abs(sub(fast.to(kFloat64), ref))).item<double>(), 1e-5 * scale) << "of " << scale;
}

class Conv2dOneDnn : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv2dOneDnn, MatchesTheReferenceKernel) {
  const ConvCase& c = GetParam();
  manual_seed(11);
  expectMatchesReference(randn(c.x), randn(c.w), c);
}

// x stored NHWC and read as an NCHW view: the blocked path reorders it through its strides.
TEST_P(Conv2dOneDnn, MatchesTheReferenceKernelOnANonContiguousInput) {
  const ConvCase& c = GetParam();
  manual_seed(12);
  Tensor x = randn({c.x[0], c.x[2], c.x[3], c.x[1]}).permute({0, 3, 1, 2});
  ASSERT_FALSE(x.is_contiguous());
  expectMatchesReference(x, randn(c.w), c);
}

// A strided slice whose strides oneDNN's descriptors cannot say (kiln-fuzz seed 400002:
// [11,5,1,5] sliced to every third column: dim 1's stride 5 is below dim 3's 3 x 2, so
// oneDNN calls the layout overlapping): conv2d copies it contiguous instead of failing with
// "could not construct a memory descriptor using strides".
TEST(Conv2d, AStridedSliceOneDnnCannotDescribeIsCopied) {
  manual_seed(400002);
  Tensor x = randn({11, 5, 1, 5}).slice(3, 1, 5, 3);
  ASSERT_EQ(x.sizes(), (Shape{11, 5, 1, 2}));
  ASSERT_FALSE(x.is_contiguous());
  Tensor w = randn({3, 5, 3, 3}), b = randn({3});
  Tensor got = conv2d(x, w, b, {2}, {1}, {1}, 1);
  Tensor want = conv2d(x.contiguous(), w, b, {2}, {1}, {1}, 1);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_EQ(amax(abs(sub(got, want))).item<float>(), 0.0f);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Conv2dOneDnn,
    ::testing::Values(ConvCase{"conv3x3", {4, 32, 16, 16}, {32, 32, 3, 3}, {1}, {1}, {1}, 1},
                      ConvCase{"depthwise", {4, 96, 16, 16}, {96, 1, 3, 3}, {1}, {1}, {1}, 96},
                      ConvCase{"depthwiseStride2", {2, 24, 15, 15}, {24, 1, 3, 3}, {2}, {1}, {1}, 24},
                      ConvCase{"stride2Padded", {2, 16, 17, 13}, {24, 16, 3, 3}, {2}, {1}, {1}, 1},
                      ConvCase{"dilated", {2, 8, 12, 12}, {16, 8, 3, 3}, {1}, {2}, {2}, 1},
                      ConvCase{"groups2", {2, 12, 9, 9}, {8, 6, 3, 3}, {1}, {1}, {1}, 2},
                      ConvCase{"batch1Odd", {1, 5, 7, 9}, {7, 5, 5, 3}, {1, 2}, {2, 1}, {1}, 1},
                      ConvCase{"pointwise", {2, 24, 8, 8}, {16, 24, 1, 1}, {1}, {0}, {1}, 1}),
    [](const ::testing::TestParamInfo<ConvCase>& info) { return std::string(info.param.name); });

TEST(Conv2dOneDnn, ReordersTheWeightsOncePerVersion) {
  manual_seed(13);
  Tensor x = randn({2, 16, 8, 8}), w = randn({16, 16, 3, 3});
  const auto start = kernels::onednn::weightCacheStats();
  Tensor y1 = conv2d(x, w, Tensor(), {1}, {1});
  Tensor y2 = conv2d(x, w, Tensor(), {1}, {1});
  const auto now = kernels::onednn::weightCacheStats();
  EXPECT_EQ(now.misses - start.misses, 1u);
  EXPECT_EQ(now.hits - start.hits, 1u);
  EXPECT_EQ(amax(abs(sub(y1, y2))).item<double>(), 0.0);
}

TEST(Conv2dOneDnn, SeesInPlaceUpdatesOfTheWeights) {
  manual_seed(14);
  const ConvCase c{"conv3x3", {}, {}, {1}, {1}, {1}, 1};
  Tensor x = randn({2, 16, 8, 8}), w = randn({16, 16, 3, 3}).requires_grad_();
  Tensor before = conv2d(x, w, Tensor(), {1}, {1}).detach();
  {
    NoGradGuard noGrad;
    w.mul_(2.0);
  }
  Tensor after = conv2d(x, w, Tensor(), {1}, {1}).detach();
  EXPECT_LE(amax(abs(sub(after, mul(before, 2.0)))).item<double>(), 1e-5 * amax(abs(after)).item<double>());
  expectMatchesReference(x, w.detach(), c);
  {
    NoGradGuard noGrad;
    w.narrow(0, 5, 1).zero_();  // through a view
  }
  Tensor zeroed = conv2d(x, w, Tensor(), {1}, {1}).detach();
  EXPECT_EQ(amax(abs(zeroed.narrow(1, 5, 1))).item<double>(), 0.0);
  expectMatchesReference(x, w.detach(), c);
}

TEST(Conv2dOneDnn, TellsWeightViewsOfOneStorageApart) {
  manual_seed(15);
  const ConvCase c{"conv3x3", {}, {}, {1}, {1}, {1}, 1};
  Tensor x = randn({1, 8, 6, 6}), base = randn({8, 8, 3, 3});
  for (const Tensor& w : {base, base.transpose(0, 1), base, ones({1, 8, 3, 3}).expand({8, 8, 3, 3})})
    expectMatchesReference(x, w, c);
}

TEST(Conv2dOneDnn, RunsOnSeveralThreadsAtOnce) {
  manual_seed(16);
  const ConvCase c{"conv3x3", {}, {}, {1}, {1}, {1}, 1};
  const ConvCase d{"depthwise", {}, {}, {1}, {1}, {1}, 16};
  Tensor x = randn({2, 16, 10, 10}), w = randn({16, 16, 3, 3}), wd = randn({16, 1, 3, 3});
  Tensor y = conv2d(x, w, Tensor(), {1}, {1}), yd = conv2d(x, wd, Tensor(), {1}, {1}, {1}, 16);
  std::vector<double> diffs(4, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      double worst = 0;
      for (int i = 0; i < 20; ++i) {
        Tensor out = t % 2 ? conv2d(x, wd, Tensor(), {1}, {1}, {1}, 16) : conv2d(x, w, Tensor(), {1}, {1});
        worst = std::max(worst, amax(abs(sub(out, t % 2 ? yd : y))).item<double>());
      }
      diffs[size_t(t)] = worst;
    });
  for (std::thread& t : threads) t.join();
  for (double diff : diffs) EXPECT_EQ(diff, 0.0);
  expectMatchesReference(x, w, c);
  expectMatchesReference(x, wd, d);
}

// The backward passes are convolutions too (of transposed views), on the blocked path in f32.
TEST(Conv2dOneDnn, F32GradientsMatchF64) {
  manual_seed(17);
  for (const ConvCase& c : {ConvCase{"conv3x3", {2, 16, 8, 8}, {16, 16, 3, 3}, {1}, {1}, {1}, 1},
                            ConvCase{"depthwise", {2, 16, 9, 9}, {16, 1, 3, 3}, {2}, {1}, {1}, 16},
                            ConvCase{"stride2Dilated", {2, 16, 12, 11}, {16, 16, 3, 3}, {2}, {1}, {2}, 1},
                            // Weight gradients through Kiln's plane-dot kernel and the sgemm.
                            ConvCase{"depthwiseStride1", {3, 8, 6, 6}, {8, 1, 3, 3}, {1}, {1}, {1}, 8},
                            ConvCase{"pointwise", {3, 16, 5, 4}, {8, 16, 1, 1}, {1}, {0}, {1}, 1}}) {
    Tensor x = randn(c.x), w = randn(c.w), g = randn(conv2d(x, w, Tensor(), c.stride, c.padding,
                                                            c.dilation, c.groups).sizes());
    std::vector<Tensor> grads;
    for (DType dtype : {kFloat32, kFloat64}) {
      Tensor xi = x.to(dtype).detach().requires_grad_(), wi = w.to(dtype).detach().requires_grad_();
      conv2d(xi, wi, Tensor(), c.stride, c.padding, c.dilation, c.groups).backward(g.to(dtype));
      grads.push_back(xi.grad().to(kFloat64));
      grads.push_back(wi.grad().to(kFloat64));
    }
    for (int i = 0; i < 2; ++i) {
      const double scale = amax(abs(grads[size_t(i) + 2])).item<double>();
      EXPECT_LE(amax(abs(sub(grads[size_t(i)], grads[size_t(i) + 2]))).item<double>(), 1e-5 * scale)
          << c.name << (i ? " weight" : " input");
    }
  }
}

// A pointwise layer's weight gradient comes out of its backward in the weight's own
// layout ([O, C, 1, 1], contiguous), not as a transposed view: a traced step's optimizer
// update reads it as it comes (no accumulation copies it), along rows, not across them.
TEST(Conv2d, PointwiseWeightGradientIsInTheWeightsLayout) {
  manual_seed(18);
  Tensor x = randn({3, 16, 5, 4}).requires_grad_(), w = randn({8, 16, 1, 1}).requires_grad_();
  Tensor y = conv2d(x, w, Tensor(), {1}, {0}, {1}, 1);
  const Tensor dw = autograd::grad({y}, {w}, {randn(y.sizes())})[0];
  EXPECT_EQ(dw.sizes(), (Shape{8, 16, 1, 1}));
  EXPECT_TRUE(dw.is_contiguous()) << "strides " << dw.strides()[0] << ", " << dw.strides()[1];
}

// kiln.conv2d's bias and relu epilogues give the values of the separate add and relu on
// every path the kernel takes: oneDNN blocked (3x3) and plain (1x1), oneDNN's depthwise
// kernel (stride 2), Kiln's depthwise kernel (3x3 stride 1), the reference loops (f64),
// one sgemm (whole-input windows) and Kiln's plane-dot kernel.
Tensor convOp(const std::vector<Tensor>& in, int64_t stride, int64_t pad, int64_t groups, bool relu) {
  return dispatch1(ops::kConv2d, in,
                   {{"stride", Shape{stride, stride}}, {"padding", Shape{pad, pad, pad, pad}},
                    {"dilation", Shape{1, 1}}, {"groups", groups}, {"relu", relu}},
                   SourceLoc::current());
}

// A pointwise layer's weight gradient arrives as a convolution of transposed views, x
// [C, N, H, W] by w [O, N, H, W] with the whole plane as window (convWeightGrad): on planes of
// 16 or more elements one sgemm per sample where the planes lie, on 1x1 planes one sgemm
// reading both transposed, else the copies and one sgemm. Each against the reference loops
// in f64, with N not a multiple of the 8-sample chunks, and on the per-sample path the
// same bits on one thread as on two.
TEST(Conv2d, WholeInputConvOfTransposedViewsMatchesTheReference) {
  manual_seed(41);
  for (const Shape& plane : {Shape{4, 4}, Shape{8, 8}, Shape{5, 7}, Shape{1, 1}, Shape{2, 2}}) {
    const int64_t n = 19, c = 12, o = 7;
    Tensor x = randn({n, c, plane[0], plane[1]}).transpose(0, 1);
    Tensor w = randn({n, o, plane[0], plane[1]}).transpose(0, 1);
    ASSERT_FALSE(x.is_contiguous());
    Tensor ref = convOp({x.to(kFloat64).contiguous(), w.to(kFloat64).contiguous()}, 1, 0, 1, false);
    const int threads = get_num_threads();
    set_num_threads(1);
    Tensor one = convOp({x, w}, 1, 0, 1, false);
    set_num_threads(2);
    Tensor two = convOp({x, w}, 1, 0, 1, false);
    set_num_threads(threads);
    ASSERT_EQ(one.sizes(), (Shape{c, o, 1, 1}));
    const double scale = amax(abs(ref)).item<double>();
    EXPECT_LE(amax(abs(sub(one.to(kFloat64), ref))).item<double>(), 1e-5 * scale) << plane[0] << "x" << plane[1];
    // The per-sample path's chunks fix the order of the adds; one sgemm (1x1 and 2x2
    // planes) is oneDNN's to split.
    if (plane[0] * plane[1] >= 16)
      EXPECT_EQ(std::memcmp(one.data_ptr<float>(), two.data_ptr<float>(), size_t(one.numel()) * sizeof(float)), 0)
          << plane[0] << "x" << plane[1];
  }
}

// Pointwise convolutions (oneDNN's plain layout), with the weights as given or as a
// transposed view (an input gradient's): the reference loops' values in f64, with a bias
// and a relu epilogue, and through a non-contiguous input whose planes are contiguous (a
// batch slice).
TEST(Conv2d, PointwiseConvMatchesTheReference) {
  manual_seed(43);
  for (const Shape& plane : {Shape{4, 4}, Shape{5, 7}, Shape{16, 16}, Shape{2, 2}}) {
    const int64_t n = 5, c = 12, o = 9;
    Tensor x = randn({n + 2, c, plane[0], plane[1]}).narrow(0, 1, n);
    Tensor w = randn({o, c, 1, 1}), wt = randn({c, o, 1, 1}).transpose(0, 1), bias = randn({o});
    for (const Tensor& weight : {w, wt}) {
      Tensor ref = convOp({x.to(kFloat64).contiguous(), weight.to(kFloat64).contiguous(), bias.to(kFloat64)},
                          1, 0, 1, true);
      Tensor y = convOp({x, weight, bias}, 1, 0, 1, true);
      const double scale = amax(abs(ref)).item<double>();
      EXPECT_LE(amax(abs(sub(y.to(kFloat64), ref))).item<double>(), 1e-5 * scale)
          << plane[0] << "x" << plane[1] << (weight.is_contiguous() ? "" : " transposed weights");
    }
  }
}

TEST(Conv2d, BiasAndReluEpiloguesGiveTheSeparateOpsValues) {
  struct Case {
    const char* name;
    Shape x, w;
    int64_t stride, pad, groups;
    DType dtype;
  };
  const std::vector<Case> cases = {
      {"3x3", {2, 8, 10, 10}, {16, 8, 3, 3}, 1, 1, 1, kFloat32},
      {"1x1", {2, 8, 6, 6}, {4, 8, 1, 1}, 1, 0, 1, kFloat32},
      {"depthwise stride 2", {2, 16, 12, 12}, {16, 1, 3, 3}, 2, 1, 16, kFloat32},
      {"depthwise 3x3 (Kiln's kernel)", {2, 16, 18, 18}, {16, 1, 3, 3}, 1, 1, 16, kFloat32},
      {"f64 (reference)", {1, 4, 7, 7}, {6, 4, 3, 3}, 1, 1, 1, kFloat64},
      {"whole-input window (sgemm)", {3, 5, 3, 4}, {6, 5, 3, 4}, 1, 0, 1, kFloat32},
      {"batch 1, a channel per group (plane dot)", {1, 12, 5, 5}, {4, 3, 3, 3}, 1, 1, 4, kFloat32},
  };
  manual_seed(11);
  for (const Case& c : cases)
    for (bool relu : {false, true}) {
      SCOPED_TRACE(std::string(c.name) + (relu ? ", relu" : ""));
      Tensor x = randn(c.x, c.dtype), w = randn(c.w, c.dtype), b = randn({c.w[0]}, c.dtype);
      Tensor want = add(convOp({x, w}, c.stride, c.pad, c.groups, false), b.reshape({1, c.w[0], 1, 1}));
      if (relu) want = kiln::relu(want);
      Tensor got = convOp({x, w, b}, c.stride, c.pad, c.groups, relu);
      ASSERT_EQ(got.sizes(), want.sizes());
      const double scale = amax(abs(want)).item<double>();
      EXPECT_LE(amax(abs(sub(got, want))).item<double>(), (c.dtype == kFloat32 ? 1e-6 : 0.0) * scale);
      if (relu) {
        EXPECT_GE(amin(got).item<double>(), 0.0);
      }
    }
}

TEST(Conv2d, ReluEpilogueGradientMatchesFiniteDifferences) {
  manual_seed(12);
  auto fn = [](const std::vector<Tensor>& in) { return convOp(in, 1, 1, 1, true); };
  EXPECT_TRUE(gradcheck(fn, {randn({1, 2, 5, 5}, kFloat64), randn({3, 2, 3, 3}, kFloat64),
                             randn({3}, kFloat64)}));
}

TEST(Conv2d, RejectsABiasOfTheWrongShape) {
  try {
    conv2d(randn({1, 2, 5, 5}), randn({3, 2, 3, 3}), randn({4}));
    FAIL() << "no error";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("bias of shape [4]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("3 output channels"), std::string::npos) << e.what();
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
                      GradCase{"pointwise", {2, 4, 3, 3}, {5, 4, 1, 1}, {1}, {0}, {1}, 1},
                      // 1x1 windows the weight gradient's direct form does not take.
                      GradCase{"pointwiseStride2", {1, 4, 5, 5}, {3, 4, 1, 1}, {2}, {0}, {1}, 1},
                      GradCase{"pointwisePadded", {1, 4, 3, 3}, {3, 4, 1, 1}, {1}, {1}, {1}, 1}),
    [](const ::testing::TestParamInfo<GradCase>& info) { return std::string(info.param.name); });

TEST(Pool2d, MatchesPyTorch) {
  expectValues(max_pool2d(inputX(), {3}, {2}, {1}),
               {-1.4, -1.2, -1.1, -0.4, -0.2, -0.1, 0.1, 0.3, 0.4, 1.1, 1.3, 1.4, 2.1, 2.3, 2.4, 2.6, 2.8, 2.9}, 1e-12);
  expectValues(avg_pool2d(inputX(), {2}), {-1.7, -1.5, -0.7, -0.5, 0.8, 1.0, 1.8, 2.0}, 1e-12);
  EXPECT_EQ(adaptive_avg_pool2d(inputX(), {1}).sizes(), (Shape{1, 2, 1, 1}));
}

// f32 pooling runs on oneDNN; f64 on the reference loops.
TEST(Pool2d, OneDnnAgreesWithTheReferenceKernel) {
  manual_seed(18);
  struct Case { Shape x, kernel, stride, padding; };
  for (const Case& c : std::vector<Case>{{{2, 3, 8, 8}, {2}, {}, {0}},
                                         {{2, 20, 9, 7}, {3}, {2}, {1}},
                                         {{1, 5, 7, 10}, {3, 2}, {1, 2}, {1, 0}}}) {
    Tensor x = randn({c.x[0], c.x[2], c.x[3], c.x[1]}).permute({0, 3, 1, 2});  // NHWC storage
    for (bool isMax : {true, false}) {
      auto pool = isMax ? max_pool2d : avg_pool2d;
      Tensor fast = pool(x, c.kernel, c.stride, c.padding, SourceLoc::current());
      Tensor ref = pool(x.to(kFloat64), c.kernel, c.stride, c.padding, SourceLoc::current());
      ASSERT_EQ(fast.sizes(), ref.sizes());
      EXPECT_LE(amax(abs(sub(fast.to(kFloat64), ref))).item<double>(), 1e-6) << (isMax ? "max" : "avg");
    }
  }
}

// oneDNN's max pooling drops NaNs; PyTorch's propagates them, and so does Kiln's.
TEST(Pool2d, MaxPropagatesNaNInF32) {
  Tensor x = arange(0.0, 32.0, 1.0, kFloat32).reshape({1, 2, 4, 4});
  x.narrow(3, 1, 1).narrow(2, 0, 1).narrow(1, 0, 1).fill_(std::nan(""));  // x[0, 0, 0, 1]
  for (Tensor y : {max_pool2d(x, {2}), avg_pool2d(x, {2})}) {
    Tensor flat = y.reshape({8});
    EXPECT_TRUE(std::isnan(flat.data_ptr<float>()[0]));
    for (int64_t i = 1; i < 8; ++i) EXPECT_FALSE(std::isnan(flat.data_ptr<float>()[i])) << i;
  }
  EXPECT_EQ(max_pool2d(x, {2}).reshape({8}).data_ptr<float>()[7], 31.0f);
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
  // With a stride the window must still fit: (2 - 3) / 2 + 1 truncates to an output of 1.
  EXPECT_THROW(conv2d(ones({1, 1, 2, 2}), ones({1, 1, 3, 3}), Tensor(), {2}), ShapeError);
  EXPECT_THROW(max_pool2d(ones({1, 1, 2, 2}), {3}, {2}), ShapeError);
  EXPECT_THROW(max_pool2d(ones({1, 1, 4, 4}), {2}, {2}, {2}), ShapeError);
}

// ---- Kiln's depthwise kernel -----------------------------------------------------------

struct DepthwiseCase {
  const char* name;
  Shape x;  // N, C, H, W
  int64_t multiplier, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr;
};

void PrintTo(const DepthwiseCase& c, std::ostream* os) { *os << c.name; }

kernels::DepthwiseGeometry geometryOf(const DepthwiseCase& c) {
  const int64_t outH = (c.x[2] + c.pt + c.pb - c.dh * (c.kh - 1) - 1) / c.sh + 1;
  const int64_t outW = (c.x[3] + c.pl + c.pr - c.dw * (c.kw - 1) - 1) / c.sw + 1;
  return {c.x[0], c.x[1], c.x[2], c.x[3], c.multiplier, c.kh, c.kw, c.sh,
          c.sw,   c.dh,   c.dw,   c.pt,   c.pl,         outH, outW};
}

// The kernel's contract, one output at a time: 0 + w00*x00 + w01*x01 + ... in row-major
// window order, padding read as zeros, float multiplies and adds (this file is compiled
// without FMA, and C++20 contracts nothing), so the kernel must match it bit for bit.
std::vector<float> depthwiseByWindowSums(const std::vector<float>& x, const std::vector<float>& w,
                                         const kernels::DepthwiseGeometry& g) {
  const int64_t outC = g.channels * g.multiplier;
  std::vector<float> y(size_t(g.batch * outC * g.outH * g.outW));
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t o = 0; o < outC; ++o)
      for (int64_t i = 0; i < g.outH; ++i)
        for (int64_t j = 0; j < g.outW; ++j) {
          float acc = 0.0f;
          for (int64_t a = 0; a < g.kh; ++a)
            for (int64_t b = 0; b < g.kw; ++b) {
              const int64_t h = i * g.strideH + a * g.dilationH - g.padTop;
              const int64_t v = j * g.strideW + b * g.dilationW - g.padLeft;
              const bool inside = h >= 0 && h < g.height && v >= 0 && v < g.width;
              const float xv =
                  inside ? x[size_t(((n * g.channels + o / g.multiplier) * g.height + h) * g.width + v)] : 0.0f;
              const float product = w[size_t((o * g.kh + a) * g.kw + b)] * xv;
              acc = acc + product;
            }
          y[size_t(((n * outC + o) * g.outH + i) * g.outW + j)] = acc;
        }
  return y;
}

class DepthwiseKernel : public ::testing::TestWithParam<DepthwiseCase> {};

TEST_P(DepthwiseKernel, AddsTheWindowInRowMajorOrder) {
  const DepthwiseCase& c = GetParam();
  const kernels::DepthwiseGeometry g = geometryOf(c);
  manual_seed(21);
  Tensor x = randn(c.x), w = randn({c.x[1] * c.multiplier, 1, c.kh, c.kw});
  std::vector<float> xs(x.data_ptr<float>(), x.data_ptr<float>() + x.numel());
  std::vector<float> ws(w.data_ptr<float>(), w.data_ptr<float>() + w.numel());
  const std::vector<float> expected = depthwiseByWindowSums(xs, ws, g);
  std::vector<float> y(expected.size(), std::numeric_limits<float>::quiet_NaN());
  kernels::depthwiseConv2d(xs.data(), ws.data(), y.data(), g);
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_EQ(std::memcmp(&y[i], &expected[i], sizeof(float)), 0)
        << "output " << i << ": " << y[i] << " instead of " << expected[i];
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, DepthwiseKernel,
    ::testing::Values(
        // The 3x3 stride-1 loop (outW >= 16, padLeft <= 2): one whole vector a row.
        DepthwiseCase{"mobilenet3x3", {2, 5, 16, 16}, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        // Several vectors a row, the last one overlapping the one before.
        DepthwiseCase{"partialLastVector", {1, 3, 7, 37}, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        DepthwiseCase{"oddWidthBatch1", {1, 4, 5, 33}, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        // Each lead the loop is compiled for: padLeft 0, 1 (above) and 2, whole and partial.
        DepthwiseCase{"unpadded", {1, 2, 9, 18}, 1, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0},
        DepthwiseCase{"unpaddedPartialVector", {2, 2, 6, 35}, 1, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0},
        DepthwiseCase{"padding2", {1, 3, 10, 14}, 1, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2},
        DepthwiseCase{"padding2PartialVector", {2, 2, 9, 21}, 1, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2},
        // Asymmetric padding: rows of the plane left zero at the bottom or the right only.
        DepthwiseCase{"asymmetricPadding", {1, 3, 8, 19}, 1, 3, 3, 1, 1, 1, 1, 0, 2, 2, 0},
        DepthwiseCase{"tallTopPadding", {1, 2, 6, 16}, 1, 3, 3, 1, 1, 1, 1, 3, 0, 1, 1},
        // One and two output rows: the column loop's prologue and epilogue alone.
        DepthwiseCase{"oneOutputRow", {2, 2, 1, 16}, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        DepthwiseCase{"twoOutputRows", {1, 2, 2, 20}, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        DepthwiseCase{"multiplier3", {2, 3, 6, 17}, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        // The general loop on rows narrower than a vector: MobileNetV2's 8x8 to 1x1 planes,
        // a row just short of a vector, one output row, dilation with a multiplier,
        // asymmetric padding, and padLeft past the 3x3 loop's.
        DepthwiseCase{"narrowerThanAVector", {2, 3, 5, 6}, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        DepthwiseCase{"mobilenet8x8", {3, 5, 8, 8}, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        DepthwiseCase{"mobilenet4x4", {2, 6, 4, 4}, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        DepthwiseCase{"mobilenet2x2", {2, 3, 2, 2}, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        DepthwiseCase{"mobilenet1x1", {4, 3, 1, 1}, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        DepthwiseCase{"rowOf15", {1, 2, 6, 15}, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        DepthwiseCase{"narrowOneOutputRow", {2, 2, 3, 9}, 1, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1},
        DepthwiseCase{"narrowDilatedMultiplier2", {1, 3, 9, 7}, 2, 3, 2, 1, 1, 2, 3, 2, 1, 3, 0},
        DepthwiseCase{"narrowAsymmetricPadding", {2, 2, 7, 5}, 1, 3, 3, 1, 1, 1, 1, 2, 0, 0, 2},
        // The general loop: strides (column phases), dilation, multipliers, asymmetric padding.
        DepthwiseCase{"stride2", {2, 4, 15, 15}, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
        DepthwiseCase{"dilatedMultiplier2", {1, 3, 11, 20}, 2, 5, 3, 1, 1, 2, 1, 2, 1, 1, 2},
        DepthwiseCase{"mixedStridesDilations", {1, 2, 13, 40}, 1, 3, 3, 2, 3, 1, 2, 0, 2, 3, 1},
        DepthwiseCase{"pointwise", {1, 4, 6, 19}, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
        DepthwiseCase{"paddingWiderThanTheWindow", {1, 2, 4, 5}, 1, 3, 3, 1, 1, 1, 1, 3, 3, 4, 4},
        DepthwiseCase{"padding3", {1, 2, 5, 18}, 1, 3, 3, 1, 1, 1, 1, 3, 3, 3, 3}),
    [](const ::testing::TestParamInfo<DepthwiseCase>& info) { return std::string(info.param.name); });

// Infinities and NaNs in the input reach the outputs whose windows hold them as the
// window sums say: the same bits, NaN where they give NaN (whose sign and payload depend
// on the order of an add's operands, which the compiler may swap).
TEST(DepthwiseKernel, NonFiniteInputsGiveTheWindowSums) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const DepthwiseCase& c : {DepthwiseCase{"3x3 loop", {2, 3, 7, 21}, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                                 DepthwiseCase{"general loop", {2, 3, 7, 21}, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
                                 DepthwiseCase{"narrow rows", {2, 3, 7, 12}, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}}) {
    SCOPED_TRACE(c.name);
    const kernels::DepthwiseGeometry g = geometryOf(c);
    manual_seed(23);
    Tensor x = randn(c.x), w = randn({c.x[1], 1, 3, 3});
    std::vector<float> xs(x.data_ptr<float>(), x.data_ptr<float>() + x.numel());
    std::vector<float> ws(w.data_ptr<float>(), w.data_ptr<float>() + w.numel());
    // Corners, an edge, the interior, and an inf beside a -inf (their sum is NaN).
    const int64_t plane = c.x[2] * c.x[3], row = c.x[3];
    xs[0] = inf, xs[size_t(plane - 1)] = nan, xs[size_t(plane + row)] = -inf;
    xs[size_t(2 * plane + 3 * row + 10)] = inf, xs[size_t(2 * plane + 3 * row + 11)] = -inf;
    xs[size_t(4 * plane + 2 * row + 20)] = nan;
    const std::vector<float> expected = depthwiseByWindowSums(xs, ws, g);
    std::vector<float> y(expected.size(), 0.0f);
    kernels::depthwiseConv2d(xs.data(), ws.data(), y.data(), g);
    int64_t nonFinite = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      nonFinite += !std::isfinite(expected[i]);
      if (std::isnan(expected[i])) ASSERT_TRUE(std::isnan(y[i])) << "output " << i << ": " << y[i];
      else ASSERT_EQ(std::memcmp(&y[i], &expected[i], sizeof(float)), 0) << "output " << i << ": " << y[i] << " instead of " << expected[i];
    }
    EXPECT_GT(nonFinite, 0);
  }
}

// conv2d hands f32 3x3 stride-1 depthwise layers with padding up to 2 to the kernel: the
// same bits. Wider padding goes to oneDNN (the kernel's 3x3 loop has no lead for it): the
// window sums, to rounding.
TEST(DepthwiseKernel, RunsConv2dOfAThreeByThreeDepthwiseLayer) {
  for (int64_t pad : {1, 2, 3}) {
    SCOPED_TRACE("padding " + std::to_string(pad));
    const DepthwiseCase c{"layer", {2, 6, 16, 20}, 1, 3, 3, 1, 1, 1, 1, pad, pad, pad, pad};
    manual_seed(22);
    Tensor x = randn(c.x), w = randn({6, 1, 3, 3});
    Tensor y = conv2d(x, w, Tensor(), {1}, {pad}, {1}, 6);
    std::vector<float> expected(size_t(y.numel()));
    kernels::depthwiseConv2d(x.data_ptr<float>(), w.data_ptr<float>(), expected.data(), geometryOf(c));
    if (pad <= 2) {
      EXPECT_EQ(std::memcmp(y.data_ptr<float>(), expected.data(), expected.size() * sizeof(float)), 0);
      continue;
    }
    const float* got = y.data_ptr<float>();
    for (size_t i = 0; i < expected.size(); ++i) ASSERT_NEAR(got[i], expected[i], 1e-5f) << "output " << i;
  }
}

// An infinite weight times the zero padding would be NaN in the kernel; PyTorch and oneDNN
// leave the padding out, so such weights go to oneDNN: the borders are infinite, not NaN.
TEST(DepthwiseKernel, InfiniteWeightsDoNotMultiplyThePadding) {
  Tensor x = add(rand({1, 2, 16, 16}), 1.0);
  Tensor w = full({2, 1, 3, 3}, std::numeric_limits<double>::infinity());
  Tensor y = conv2d(x, w, Tensor(), {1}, {1}, {1}, 2);
  const float* p = y.data_ptr<float>();
  for (int64_t i = 0; i < y.numel(); ++i) ASSERT_TRUE(std::isinf(p[i])) << "output " << i << ": " << p[i];
}

// ---- the weight gradients' shapes: Kiln's plane-dot kernel and one sgemm ---------------

struct PlaneDotCase {
  const char* name;
  int64_t groups, channels, height, width, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr;
};

void PrintTo(const PlaneDotCase& c, std::ostream* os) { *os << c.name; }

class PlaneDotKernel : public ::testing::TestWithParam<PlaneDotCase> {};

// kiln.conv2d with its four paddings (conv2d's API pads both sides alike).
Tensor convOf(const Tensor& x, const Tensor& w, const PlaneDotCase& c) {
  return dispatch1(ops::kConv2d, {x, w},
                   {{"stride", Shape{c.sh, c.sw}}, {"padding", Shape{c.pt, c.pb, c.pl, c.pr}},
                    {"dilation", Shape{c.dh, c.dw}}, {"groups", c.groups}},
                   SourceLoc::current());
}

// Runs kernels::planeDotConv2d on x and w through their strides and expects conv2d's
// values in f64 on the reference loops, within 1e-5 of the largest; returns its output.
Tensor expectPlaneDotMatchesReference(const Tensor& x, const Tensor& w, const PlaneDotCase& c) {
  Tensor ref = convOf(x.to(kFloat64), w.to(kFloat64), c);
  const Shape& ys = ref.sizes();
  const Strides &sx = x.strides(), &sw = w.strides();
  const kernels::PlaneDotGeometry g{c.groups, c.channels, c.height, c.width, c.kh, c.kw, c.sh, c.sw, c.dh, c.dw,
                                    c.pt, c.pl, ys[2], ys[3], sx[1], sx[2], sx[3], sw[0], sw[1], sw[2], sw[3]};
  Tensor y = full(ys, std::numeric_limits<double>::quiet_NaN());
  kernels::planeDotConv2d(x.data_ptr<float>(), w.data_ptr<float>(), y.data_ptr<float>(), g);
  const double scale = amax(abs(ref)).item<double>();
  EXPECT_LE(amax(abs(sub(y.to(kFloat64), ref))).item<double>(), 1e-5 * scale) << "of " << scale;
  return y;
}

// Called directly on strided views (x's planes in a transposed buffer, as convWeightGrad's
// transposed input; w a permuted view), against conv2d in f64 on the reference loops.
TEST_P(PlaneDotKernel, MatchesTheReferenceKernelThroughStrides) {
  const PlaneDotCase& c = GetParam();
  manual_seed(31);
  Tensor x = randn({c.channels, c.groups, c.height, c.width}).transpose(0, 1).reshape({1, c.groups * c.channels,
                                                                                      c.height, c.width});
  Tensor w = randn({c.channels, c.groups, c.kh, c.kw}).transpose(0, 1);
  ASSERT_FALSE(w.is_contiguous());
  Tensor y = expectPlaneDotMatchesReference(x, w, c);
  // conv2d takes the kernel for these geometries: the same values.
  Tensor viaConv = convOf(x, w, c);
  EXPECT_EQ(std::memcmp(viaConv.data_ptr<float>(), y.data_ptr<float>(), size_t(y.numel()) * sizeof(float)), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, PlaneDotKernel,
    ::testing::Values(
        // A 3x3 stride-1 depthwise layer's weight gradient: 8x8 planes, the gradient as filters.
        PlaneDotCase{"stride1Layer", 6, 5, 8, 8, 8, 8, 1, 1, 1, 1, 1, 1, 1, 1},
        // Of a stride-2 layer (dilation 2 here), of one on 1x1 planes (all but the centre
        // read padding), and of a dilated one (stride 2 here), with asymmetric padding.
        PlaneDotCase{"stride2Layer", 4, 3, 9, 9, 4, 4, 1, 1, 2, 2, 1, 0, 1, 0},
        PlaneDotCase{"onePixelPlanes", 7, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        PlaneDotCase{"dilatedLayer", 3, 2, 7, 6, 3, 2, 2, 2, 1, 1, 1, 2, 0, 1},
        // 5x4 outputs (the kernel takes up to 25); planes longer than a pair of vectors.
        PlaneDotCase{"twentyOutputs", 2, 40, 6, 6, 4, 4, 1, 1, 1, 1, 1, 1, 1, 0},
        // Whole 16x16 blocks of channels and positions, transposed in registers.
        PlaneDotCase{"wholeBlocks", 2, 32, 8, 8, 8, 8, 1, 1, 1, 1, 1, 1, 1, 1},
        // Groups too big for L1, laid out block by block: 16x16 planes at stride 1 and at
        // stride 2 (dilation 2 here), channels not a whole number of blocks.
        PlaneDotCase{"blockMajorStride1", 3, 20, 16, 16, 16, 16, 1, 1, 1, 1, 1, 1, 1, 1},
        PlaneDotCase{"blockMajorStride2", 2, 33, 16, 16, 8, 8, 1, 1, 2, 2, 1, 0, 1, 0}),
    [](const ::testing::TestParamInfo<PlaneDotCase>& info) { return std::string(info.param.name); });

// Planes whose rows are not one after another (x and w narrowed from wider tensors, as a
// sliced input would hand them in): copied row by row, for a group laid out block by block
// and for one laid out position by position.
TEST(PlaneDotKernel, ReadsPlanesRowByRow) {
  manual_seed(34);
  for (const PlaneDotCase& c : {PlaneDotCase{"blockMajor", 2, 24, 16, 16, 16, 16, 1, 1, 1, 1, 1, 1, 1, 1},
                                PlaneDotCase{"positionMajor", 3, 18, 4, 4, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1}}) {
    SCOPED_TRACE(c.name);
    Tensor x = randn({1, c.groups * c.channels, c.height, c.width + 3}).narrow(3, 1, c.width);
    Tensor w = randn({c.groups, c.channels, c.kh, c.kw + 2}).narrow(3, 2, c.kw);
    ASSERT_NE(x.strides()[2], c.width);
    ASSERT_NE(w.strides()[2], c.kw);
    expectPlaneDotMatchesReference(x, w, c);
  }
}

// More than 25 outputs a group is not the kernel's (conv2d takes such geometries elsewhere).
TEST(PlaneDotKernel, RefusesMoreThan25Outputs) {
  const kernels::PlaneDotGeometry g{1, 1, 6, 6, 1, 1, 1, 1, 1, 1, 0, 0, 6, 6, 36, 6, 1, 1, 1, 1, 1};
  std::vector<float> x(36), w(1), y(36);
  EXPECT_THROW(kernels::planeDotConv2d(x.data(), w.data(), y.data(), g), std::invalid_argument);
}

// An infinite input value in a dilation gap, which no window reads: the dot product would
// multiply it by the filters' zero there (NaN); its group is summed tap by tap instead.
// The other groups keep the dot product: all outputs agree with the reference loops.
TEST(PlaneDotKernel, LeavesValuesNoWindowReadsOut) {
  manual_seed(32);
  Tensor x = randn({1, 6, 5, 5});
  x.data_ptr<float>()[5 + 1] = std::numeric_limits<float>::infinity();  // channel 0, row 1, column 1
  Tensor w = randn({3, 2, 3, 3});
  Tensor y = conv2d(x, w, Tensor(), {1}, {0}, {2}, 3);
  Tensor ref = conv2d(x.to(kFloat64), w.to(kFloat64), Tensor(), {1}, {0}, {2}, 3);
  ASSERT_EQ(y.sizes(), (Shape{1, 3, 1, 1}));
  for (int64_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(std::isfinite(y.data_ptr<float>()[i])) << "group " << i;
    EXPECT_NEAR(y.data_ptr<float>()[i], ref.data_ptr<double>()[i], 1e-4) << "group " << i;
  }
}

// Whole-input windows (a pointwise layer's weight gradient) run as one sgemm: the values of
// the reference loops, for contiguous and transposed (convWeightGrad's) inputs.
TEST(Conv2d, WholeInputWindowsMatchTheReferenceKernel) {
  manual_seed(33);
  Tensor w = randn({6, 5, 3, 4});
  expectMatchesReference(randn({7, 5, 3, 4}), w, ConvCase{"wholeInput", {}, {}, {1}, {0}, {1}, 1});
  Tensor xt = randn({5, 7, 3, 4}).transpose(0, 1);
  ASSERT_FALSE(xt.is_contiguous());
  expectMatchesReference(xt, w, ConvCase{"wholeInputTransposed", {}, {}, {2}, {0}, {1}, 1});
}

}  // namespace
}  // namespace kiln
