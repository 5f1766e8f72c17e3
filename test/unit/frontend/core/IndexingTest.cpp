// take's adjoint, kiln.scatter_add: index_add's values, the gradients of take, gather and
// max pooling that go through it, and its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "frontend/core/ops/Compose.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Storage.h"
#include "test/unit/frontend/GradCheck.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/core/TestTensors.h"

namespace kiln {
namespace {

using testing::at;
using testing::gradcheck;
using testing::ramp;
using testing::spreadTensor;

Tensor i64(std::vector<int64_t> v, Shape shape) {
  return tensor(std::vector<double>(v.begin(), v.end()), shape).to(kInt64);
}

std::vector<double> valuesOf(const Tensor& t) {
  Tensor c = t.to(kFloat64).contiguous();
  const double* p = static_cast<const double*>(c.rawData());
  return std::vector<double>(p, p + c.numel());
}

TEST(IndexAdd, AddsRowsAtTheirIndicesAndRepeatsAccumulate) {
  Tensor x = ramp({4, 2});                                  // [[0,1],[2,3],[4,5],[6,7]]
  Tensor src = ramp({3, 2}, kFloat32, 10, 10);              // [[10,20],[30,40],[50,60]]
  Tensor y = index_add(x, 0, i64({3, 0, 3}, {3}), src);
  EXPECT_EQ(y.sizes(), (Shape{4, 2}));
  EXPECT_EQ(valuesOf(y), (std::vector<double>{30, 41, 2, 3, 4, 5, 66, 87}));
}

TEST(IndexAdd, WorksAlongAnInnerDimForIntegersAndInt32Indices) {
  Tensor x = zeros({2, 3}, kInt64);
  Tensor src = ramp({2, 2}, kInt64, 1);                     // [[1,2],[3,4]]
  Tensor y = index_add(x, -1, i64({2, 2}, {2}).to(kInt32), src);
  EXPECT_EQ(y.dtype(), kInt64);
  EXPECT_EQ(valuesOf(y), (std::vector<double>{0, 0, 3, 0, 0, 7}));
}

TEST(IndexAdd, GradCheck) {
  Tensor ids = i64({2, 0, 2, 1}, {4});
  EXPECT_TRUE(gradcheck([&](auto& v) { return index_add(v[0], 1, ids, v[1]); },
                        {spreadTensor({3, 3, 2}, 1), spreadTensor({3, 4, 2}, 2)}));
}

TEST(ScatterAdd, IsTheAdjointOfTakeForMultiDimIndices) {
  // <take(x, ids), g> == <x, scatter_add(g, ids)> for any x and g.
  Tensor x = spreadTensor({2, 5, 3}, 3), ids = i64({4, 0, 4, 2, 1, 4}, {2, 3});
  Tensor g = spreadTensor({2, 2, 3, 3}, 4);
  Tensor scattered = ops::scatterAdd(g, ids, 1, 5, SourceLoc::current());
  EXPECT_EQ(scattered.sizes(), (Shape{2, 5, 3}));
  const double lhs = sum(mul(take(x, ids, 1), g)).item<double>();
  const double rhs = sum(mul(x, scattered)).item<double>();
  EXPECT_NEAR(lhs, rhs, 1e-12 * std::abs(lhs));
  EXPECT_TRUE(gradcheck([&](auto& v) { return ops::scatterAdd(v[0], ids, 1, 5, SourceLoc::current()); },
                        {g}));
}

TEST(ScatterAdd, SumsRepeatsInIndexOrderWhateverTheThreadSplit) {
  // Many repeats of few indices over a long inner dim (this suite runs on 4 threads): the
  // split is over outer rows and inner blocks, never over the repeats, so each sum is
  // taken in index order, the same bits for every thread count.
  const int64_t outer = 2, k = 300, inner = 5000;
  Tensor g = spreadTensor({outer, k, inner}, 5, -1, 1, kFloat32);
  std::vector<int64_t> v(static_cast<size_t>(k));
  for (size_t i = 0; i < v.size(); ++i) v[i] = int64_t(i * 7 % 3);
  Tensor got = ops::scatterAdd(g, i64(v, {k}), 1, 3, SourceLoc::current());
  std::vector<float> want(size_t(outer * 3 * inner), 0.0f);
  const float* src = static_cast<const float*>(g.rawData());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < k; ++j)
      for (int64_t i = 0; i < inner; ++i)
        want[size_t((o * 3 + v[size_t(j)]) * inner + i)] += src[(o * k + j) * inner + i];
  const float* out = static_cast<const float*>(got.rawData());
  EXPECT_TRUE(std::equal(want.begin(), want.end(), out));
}

TEST(ScatterAdd, TakeAndGatherGradientsNeedNoOneHot) {
  // The one-hot product this replaced allocated indices x size elements: 4 MB here.
  Tensor table = zeros({1024, 1}).requires_grad_();
  Tensor ids = i64(std::vector<int64_t>(1024, 7), {1024});
  Tensor loss = sum(take(table, ids, 0));
  const int64_t before = Storage::allocatedBytes();
  Storage::resetPeakAllocatedBytes();
  loss.backward();
  EXPECT_LT(Storage::peakAllocatedBytes() - before, 64 * 1024);
  std::vector<double> grad = valuesOf(table.grad());
  EXPECT_EQ(grad[7], 1024.0);
  EXPECT_EQ(sum(table.grad()).item<float>(), 1024.0f);
}

TEST(ScatterAdd, MaxPoolGradientGoesToTheFirstMaximumOfEachWindow) {
  // Overlapping 3x3 windows, stride 2: a maximum shared by two windows gets both.
  Tensor x = tensor(std::vector<double>{1, 2, 3, 4, 5,  //
                                        6, 7, 9, 8, 0,  //
                                        1, 2, 3, 4, 5,  //
                                        1, 2, 3, 4, 5,  //
                                        1, 2, 3, 4, 5},
                    Shape{1, 1, 5, 5})
                 .requires_grad_();
  sum(max_pool2d(x, {3}, {2})).backward();
  // Windows at (0,0) and (0,2) share their maximum 9 at (1,2); the lower two windows
  // take the first of their tied maxima, 3 at (2,2) and 5 at (2,4).
  EXPECT_EQ(valuesOf(x.grad()), (std::vector<double>{0, 0, 0, 0, 0,  //
                                                     0, 0, 2, 0, 0,  //
                                                     0, 0, 1, 0, 1,  //
                                                     0, 0, 0, 0, 0,  //
                                                     0, 0, 0, 0, 0}));
}

TEST(IndexAdd, Errors) {
  Tensor x = zeros({4, 2}), src = zeros({3, 2});
  EXPECT_KILN_ERROR(index_add(x, 0, i64({0, 1, 2}, {3, 1}), src), ShapeError,
                    "kiln::index_add: index must be 0-d or 1-d, got shape [3, 1]" + at());
  EXPECT_KILN_ERROR(index_add(x, 0, i64({0, 1}, {2}), src), ShapeError,
                    "kiln::index_add: source of shape [3, 2] does not match [2, 2] (x's shape "
                    "[4, 2] with dim 0 of the index's 2 entries)" + at());
  EXPECT_KILN_ERROR(index_add(x, 0, i64({0, 1, 2}, {3}), src.to(kFloat64)), TypeError,
                    "kiln::index_add: source of dtype float64 must have the dtype of x, float32" +
                        at());
  EXPECT_KILN_ERROR(index_add(x, 0, i64({0, 4, 2}, {3}), src), ShapeError,
                    "kiln::scatter_add: index 4 is out of range for a dim of size 4" + at());
  EXPECT_KILN_ERROR(index_add(x, 0, zeros({3}), src), TypeError,
                    "kiln::scatter_add: indices must be int32 or int64, got float32" + at());
  EXPECT_KILN_ERROR(index_add(x, 2, i64({0}, {1}), src), ShapeError,
                    "kiln::index_add: dimension 2 is out of range for a tensor of rank 2 (expected a value "
                    "in [-2, 1])" + at());
}

TEST(ScatterAdd, ShapeRuleErrors) {
  const SourceLoc here = SourceLoc::current();
  EXPECT_KILN_ERROR_HAS(ops::scatterAdd(zeros({3, 2}), i64({0, 1}, {2}), 0, 4, here), ShapeError,
                        "updates of shape [3, 2] do not hold indices of shape [2] at dim 0");
  EXPECT_KILN_ERROR_HAS(ops::scatterAdd(zeros({3}), i64({0, 1, 2}, {3}), 1, 4, here), ShapeError,
                        "dim 1 and size 4 do not fit updates of shape [3] with indices of shape [3]");
  EXPECT_KILN_ERROR_HAS(ops::scatterAdd(zeros({3}, kBool), i64({0, 1, 2}, {3}), 0, 4, here),
                        TypeError, "updates must be numbers, got bool");
}

}  // namespace
}  // namespace kiln
