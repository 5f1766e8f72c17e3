// conv_transpose2d: values against a direct scatter loop (the definition), f32 (oneDNN)
// against f64, finite-difference gradients of the composed backward, and its errors.
#include <vector>

#include <gtest/gtest.h>

#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "test/unit/frontend/GradCheck.h"
#include "test/unit/frontend/core/ExpectError.h"

namespace kiln {
namespace {

using kiln::testing::gradcheck;

struct Case {
  Shape x, w;  // w is [C_in, C_out / groups, kH, kW]
  Shape stride, padding, outputPadding, dilation;
  int64_t groups;
  bool bias;
};

// Every input element scatters x·w into the output window it reaches (PyTorch's
// definition of the transposed convolution), in float64.
Tensor referenceTransposed(const Tensor& xIn, const Tensor& wIn, const Tensor& b, const Case& c) {
  Tensor x = xIn.contiguous(), w = wIn.contiguous();
  const Shape &xs = x.sizes(), &ws = w.sizes();
  const int64_t cinG = xs[1] / c.groups, coutG = ws[1];
  const int64_t ho = (xs[2] - 1) * c.stride[0] - 2 * c.padding[0] + c.dilation[0] * (ws[2] - 1) + c.outputPadding[0] + 1;
  const int64_t wo = (xs[3] - 1) * c.stride[1] - 2 * c.padding[1] + c.dilation[1] * (ws[3] - 1) + c.outputPadding[1] + 1;
  const int64_t cout = coutG * c.groups;
  std::vector<double> y(size_t(xs[0] * cout * ho * wo), 0.0);
  const double* px = x.data_ptr<double>();
  const double* pw = w.data_ptr<double>();
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t ci = 0; ci < xs[1]; ++ci)
      for (int64_t i = 0; i < xs[2]; ++i)
        for (int64_t j = 0; j < xs[3]; ++j)
          for (int64_t o = 0; o < coutG; ++o)
            for (int64_t a = 0; a < ws[2]; ++a)
              for (int64_t bb = 0; bb < ws[3]; ++bb) {
                const int64_t h = i * c.stride[0] - c.padding[0] + a * c.dilation[0];
                const int64_t v = j * c.stride[1] - c.padding[1] + bb * c.dilation[1];
                if (h < 0 || h >= ho || v < 0 || v >= wo) continue;
                const int64_t co = (ci / cinG) * coutG + o;
                y[size_t(((n * cout + co) * ho + h) * wo + v)] +=
                    px[((n * xs[1] + ci) * xs[2] + i) * xs[3] + j] * pw[((ci * coutG + o) * ws[2] + a) * ws[3] + bb];
              }
  Tensor out = tensor(y, Shape{xs[0], cout, ho, wo});
  return b.defined() ? add(out, b.reshape({1, cout, 1, 1})) : out;
}

const std::vector<Case> kCases = {
    {{2, 3, 4, 5}, {3, 2, 3, 3}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, 1, true},
    {{1, 4, 3, 3}, {4, 3, 4, 4}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, 1, false},   // DCGAN's upsampling
    {{2, 4, 3, 4}, {4, 1, 3, 2}, {2, 3}, {1, 0}, {1, 2}, {1, 1}, 2, true},    // output_padding, groups
    {{1, 2, 4, 3}, {2, 3, 2, 3}, {3, 1}, {2, 1}, {1, 0}, {2, 2}, 1, true},    // dilation, padding > kernel
    {{1, 100, 1, 1}, {100, 8, 4, 4}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, 1, false},  // noise to 4x4
};

Tensor run(const Tensor& x, const Tensor& w, const Tensor& b, const Case& c) {
  return conv_transpose2d(x, w, b, c.stride, c.padding, c.outputPadding, c.groups, c.dilation);
}

TEST(ConvTranspose2d, MatchesTheDirectLoopInF64AndF32) {
  manual_seed(3);
  for (const Case& c : kCases) {
    Tensor x = randn(c.x, kFloat64), w = randn(c.w, kFloat64);
    Tensor b = c.bias ? randn({c.w[1] * c.groups}, kFloat64) : Tensor();
    Tensor want = referenceTransposed(x, w, b, c);
    Tensor got = run(x, w, b, c);
    ASSERT_EQ(got.sizes(), want.sizes());
    EXPECT_LT(amax(abs(sub(got, want))).item<double>(), 1e-12);
    Tensor f32 = run(x.to(kFloat32), w.to(kFloat32), b.defined() ? b.to(kFloat32) : b, c);
    EXPECT_EQ(f32.dtype(), kFloat32);
    EXPECT_LT(amax(abs(sub(f32.to(kFloat64), want))).item<double>(), 1e-4);
  }
}

TEST(ConvTranspose2d, GradientsMatchFiniteDifferences) {
  manual_seed(4);
  for (const Case& c : {kCases[1], kCases[2], kCases[3]}) {
    std::vector<Tensor> inputs{randn(c.x, kFloat64), randn(c.w, kFloat64)};
    if (c.bias) inputs.push_back(randn({c.w[1] * c.groups}, kFloat64));
    EXPECT_TRUE(gradcheck(
        [&](const std::vector<Tensor>& in) { return run(in[0], in[1], in.size() > 2 ? in[2] : Tensor(), c); },
        inputs));
  }
}

// Its input gradient is conv2d's forward with the same weight and settings.
TEST(ConvTranspose2d, InputGradientIsConv2d) {
  manual_seed(5);
  Tensor x = randn({2, 4, 5, 5}, kFloat64).requires_grad_(true), w = randn({4, 3, 3, 3}, kFloat64);
  Tensor y = conv_transpose2d(x, w, Tensor(), {2}, {1}, {1});
  Tensor g = randn(y.sizes(), kFloat64);
  y.backward(g);
  EXPECT_LT(amax(abs(sub(x.grad(), conv2d(g, w, Tensor(), {2}, {1})))).item<double>(), 1e-12);
}

TEST(ConvTranspose2d, Errors) {
  Tensor x = zeros({1, 4, 3, 3}), w = zeros({4, 2, 3, 3});
  EXPECT_KILN_ERROR_HAS(conv_transpose2d(x, zeros({3, 2, 3, 3})), ShapeError,
                        "conv_transpose2d: input [1, 4, 3, 3] and weight [3, 2, 3, 3] do not fit groups = 1");
  EXPECT_KILN_ERROR_HAS(conv_transpose2d(x, zeros({4, 2, 3, 3}), Tensor(), {1}, {0}, {0}, 3), ShapeError,
                        "do not fit groups = 3");
  EXPECT_KILN_ERROR_HAS(conv_transpose2d(x, w, Tensor(), {2}, {0}, {2}), ShapeError,
                        "output_padding [2, 2] smaller than stride or dilation");
  EXPECT_KILN_ERROR_HAS(conv_transpose2d(x, w, Tensor(), {1}, {3}), ShapeError,
                        "gives an empty output of spatial size [-1, -1]");
  EXPECT_KILN_ERROR_HAS(conv_transpose2d(x, w, Tensor(), {1, 2, 3}), ShapeError,
                        "conv_transpose2d: stride must have one or two values, got [1, 2, 3]");
}

}  // namespace
}  // namespace kiln
