// The f32 matmul kernel on every operand layout it takes without a copy (row-major,
// column-major, rows longer than the matrix, single rows and columns, the transpose
// flags of kiln.matmul) and on those it must copy (broadcast rows, steps of 2), each
// against the f64 product of the same values.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "frontend/core/ops/OpTable.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "test/unit/frontend/core/TestTensors.h"

namespace kiln {
namespace {

using kiln::testing::spreadTensor;

// A [rows, cols] f32 operand whose values are `base`'s (an f64 matrix) in a given layout.
struct Layout {
  std::string name;
  Tensor (*make)(const Tensor& base);
};

std::vector<Layout> layouts() {
  return {
      {"contiguous", [](const Tensor& m) { return m.to(kFloat32); }},
      {"column-major", [](const Tensor& m) { return m.t().contiguous().to(kFloat32).t(); }},
      {"rows longer than the matrix",
       [](const Tensor& m) {
         Tensor wide = zeros({m.sizes()[0], m.sizes()[1] + 3}, kFloat32);
         Tensor view = wide.narrow(1, 1, m.sizes()[1]);
         view.copy_(m.to(kFloat32));
         return view;
       }},
      {"every other column",
       [](const Tensor& m) {
         Tensor wide = zeros({m.sizes()[0], 2 * m.sizes()[1]}, kFloat32);
         Tensor view = wide.slice(1, 0, 2 * m.sizes()[1], 2);
         view.copy_(m.to(kFloat32));
         return view;
       }},
  };
}

// The product of kiln.matmul with its transpose flags, checked against f64.
void expectProduct(const Tensor& a, const Tensor& b, bool ta, bool tb, const std::string& what) {
  Tensor got = dispatch1(ops::kMatmul, {a, b}, {{"transpose_a", ta}, {"transpose_b", tb}}, SourceLoc::current());
  Tensor want = dispatch1(ops::kMatmul, {a.to(kFloat64), b.to(kFloat64)},
                          {{"transpose_a", ta}, {"transpose_b", tb}}, SourceLoc::current());
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  double err = amax(abs(sub(got.to(kFloat64), want))).item<double>();
  double scale = amax(abs(want)).item<double>();
  EXPECT_LE(err, 1e-5 * std::max(scale, 1.0)) << what;
}

TEST(Matmul, EveryLayoutAndTransposeFlagMatchesTheF64Product) {
  // Shapes with m, n, k each 1 somewhere, so single rows and columns are covered.
  const std::vector<std::array<int64_t, 3>> shapes = {{5, 7, 3}, {1, 6, 4}, {6, 1, 4}, {4, 5, 1}, {33, 17, 65}};
  for (auto [m, n, k] : shapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        Tensor a64 = spreadTensor(ta ? Shape{k, m} : Shape{m, k}, 1 + m + k);
        Tensor b64 = spreadTensor(tb ? Shape{n, k} : Shape{k, n}, 2 + n + k);
        for (const Layout& la : layouts())
          for (const Layout& lb : layouts())
            expectProduct(la.make(a64), lb.make(b64), ta, tb,
                          "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                              " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) + " a " + la.name +
                              ", b " + lb.name);
      }
}

TEST(Matmul, BroadcastRowsAndBatchesMatchTheF64Product) {
  // A row expanded to a matrix (stride 0 between rows) must not be read as a matrix.
  Tensor row = spreadTensor({1, 6}, 3);
  Tensor b = spreadTensor({6, 4}, 4);
  expectProduct(row.to(kFloat32).expand({5, 6}), b.to(kFloat32), false, false, "expanded rows");
  // A batch of products, one with a transposed operand.
  Tensor ba = spreadTensor({3, 4, 5}, 5), bb = spreadTensor({3, 6, 5}, 6);
  expectProduct(ba.to(kFloat32), bb.to(kFloat32), false, true, "batch");
}

// kiln.addmm (the bias as oneDNN's epilogue for f32, relu after) gives the values of the
// ops it stands for, matmul, add and relu, on every layout and transpose flag: the bias
// joins the product's f32 accumulator and rounds once, as the add of the stored product.
Tensor addmmOp(const Tensor& bias, const Tensor& a, const Tensor& b, bool ta, bool tb, bool relu) {
  return dispatch1(ops::kAddmm, {a, b, bias}, {{"transpose_a", ta}, {"transpose_b", tb}, {"relu", relu}},
                   SourceLoc::current());
}

// An empty inner dim (K == 0) gives zeros, as torch.matmul; oneDNN's f32 matmul divided
// by zero on it (SIGFPE) before the kernel checked.
TEST(Matmul, AnEmptyInnerDimGivesZeros) {
  for (DType dtype : {kFloat32, kFloat64}) {
    Tensor c = matmul(ones({5, 0}, dtype), ones({0, 7}, dtype));
    EXPECT_EQ(c.sizes(), (Shape{5, 7}));
    EXPECT_EQ(amax(abs(c)).item<double>(), 0.0);
    Tensor batched = matmul(ones({2, 3, 0}, dtype), ones({2, 0, 4}, dtype));
    EXPECT_EQ(batched.sizes(), (Shape{2, 3, 4}));
    EXPECT_EQ(amax(abs(batched)).item<double>(), 0.0);
  }
}

TEST(Addmm, GivesTheValuesOfMatmulAddAndRelu) {
  const std::vector<std::array<int64_t, 3>> shapes = {{5, 7, 3}, {1, 6, 4}, {6, 1, 4}, {33, 17, 65}, {128, 256, 784}};
  for (auto [m, n, k] : shapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (bool relu : {false, true})
          for (DType dtype : {kFloat32, kFloat64}) {
            const std::string what = "m=" + std::to_string(m) + " n=" + std::to_string(n) +
                                     " k=" + std::to_string(k) + " ta=" + std::to_string(ta) +
                                     " tb=" + std::to_string(tb) + " relu=" + std::to_string(relu) +
                                     " " + std::string(name(dtype));
            Tensor a = spreadTensor(ta ? Shape{k, m} : Shape{m, k}, 1 + m + k).to(dtype);
            Tensor b = spreadTensor(tb ? Shape{n, k} : Shape{k, n}, 2 + n + k).to(dtype);
            Tensor bias = spreadTensor({n}, 3 + n).to(dtype);
            Tensor want = add(dispatch1(ops::kMatmul, {a, b}, {{"transpose_a", ta}, {"transpose_b", tb}},
                                        SourceLoc::current()),
                              bias);
            if (relu) want = kiln::relu(want);
            Tensor got = addmmOp(bias, a, b, ta, tb, relu);
            ASSERT_EQ(got.sizes(), want.sizes()) << what;
            EXPECT_EQ(amax(abs(sub(got, want))).item<double>(), 0.0) << what;
            if (relu) {
              EXPECT_GE(amin(got).item<double>(), 0.0) << what;
            }
          }
}

TEST(Addmm, ReluGivesPositiveZeroAndKeepsNaN) {
  // y = [[-2, 5], [3, 0]] + [0, NaN] through relu: [[+0, NaN], [3, NaN]].
  Tensor a = tensor(std::vector<float>{1, 0, 0, 1}, Shape{2, 2});
  Tensor b = tensor(std::vector<float>{-2, 5, 3, 0}, Shape{2, 2});
  Tensor bias = tensor(std::vector<float>{0, std::numeric_limits<float>::quiet_NaN()}, Shape{2});
  Tensor y = addmmOp(bias, a, b, false, false, true).contiguous();
  const float* p = static_cast<const float*>(y.rawData());
  EXPECT_EQ(std::bit_cast<uint32_t>(p[0]), 0u);  // relu(-2) is +0, not -0
  EXPECT_TRUE(std::isnan(p[1]));
  EXPECT_EQ(p[2], 3.0f);
  EXPECT_TRUE(std::isnan(p[3]));
}

// Products big enough that the epilogue runs in several parallel chunks whose edges fall
// inside rows (303 columns, chunks of 16384 values): bias and relu equal the separate ops
// on every value, f32 (relu after oneDNN's bias) and f64 (bias and relu in Kiln's loop).
TEST(Addmm, EpilogueOverManyChunksEqualsAddAndRelu) {
  for (DType dtype : {kFloat32, kFloat64}) {
    Tensor a = spreadTensor({170, 7}, 11).to(dtype), b = spreadTensor({7, 303}, 12).to(dtype);
    Tensor bias = spreadTensor({303}, 13).to(dtype);
    Tensor want = relu(add(matmul(a, b), bias));
    Tensor got = addmmOp(bias, a, b, false, false, true);
    EXPECT_EQ(amax(abs(sub(got, want))).item<double>(), 0.0) << dtype;
    Tensor noRelu = addmmOp(bias, a, b, false, false, false);
    EXPECT_EQ(amax(abs(sub(noRelu, add(matmul(a, b), bias)))).item<double>(), 0.0) << dtype;
  }
}

// As PyTorch's addmm (and conv2d with a bias), the gradient reads only the inputs: the
// output may be changed in place before backward.
TEST(Addmm, AnOutputChangedInPlaceBeforeBackwardIsFine) {
  Tensor a = spreadTensor({4, 3}, 1).requires_grad_(), b = spreadTensor({3, 5}, 2).requires_grad_();
  Tensor bias = spreadTensor({5}, 3).requires_grad_();
  Tensor y = addmm(bias, a, b);
  y.mul_(2.0);
  sum(y).backward();
  EXPECT_EQ(amax(abs(sub(bias.grad(), full({5}, 8.0, kFloat64)))).item<double>(), 0.0);
  Tensor x = spreadTensor({1, 2, 5, 5}, 4).requires_grad_(), w = spreadTensor({3, 2, 3, 3}, 5);
  Tensor cb = spreadTensor({3}, 6).requires_grad_();
  Tensor c = conv2d(x, w, cb);
  c.add_(1.0);
  sum(c).backward();
  EXPECT_EQ(amax(abs(sub(cb.grad(), full({3}, 9.0, kFloat64)))).item<double>(), 0.0);  // 3x3 outputs
}

TEST(Addmm, PublicFunctionMatchesTorchAddmmAndRejectsBadShapes) {
  Tensor a = spreadTensor({4, 3}, 1), b = spreadTensor({3, 5}, 2), bias = spreadTensor({5}, 3);
  EXPECT_EQ(amax(abs(sub(addmm(bias, a, b), add(mm(a, b), bias)))).item<double>(), 0.0);
  // An empty contraction leaves the bias.
  EXPECT_EQ(amax(abs(sub(addmm(bias, zeros({4, 0}, kFloat64), zeros({0, 5}, kFloat64)),
                         bias.expand({4, 5})))).item<double>(), 0.0);
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { addmm(spreadTensor({4}, 4), a, b); }).find("bias of shape [4]"), std::string::npos);
  EXPECT_NE(message([&] { addmm(bias.reshape({1, 5}), a, b); }).find("1-d bias"), std::string::npos);
  EXPECT_NE(message([&] { addmm(bias, a.reshape({2, 2, 3}), b); }).find("2-d operands"), std::string::npos);
  EXPECT_NE(message([&] { addmm(bias, a, spreadTensor({4, 5}, 5)); }).find("cannot multiply"), std::string::npos);
  EXPECT_NE(message([&] {
              addmm(zeros({5}, kInt64), zeros({4, 3}, kInt64), zeros({3, 5}, kInt64));
            }).find("floating"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln
