// The f32 matmul kernel on every operand layout it takes without a copy (row-major,
// column-major, rows longer than the matrix, single rows and columns, the transpose
// flags of kiln.matmul) and on those it must copy (broadcast rows, steps of 2), each
// against the f64 product of the same values.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
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

}  // namespace
}  // namespace kiln
