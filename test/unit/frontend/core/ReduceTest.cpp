// Reductions: sum/mean/amax/amin/prod over dims with keepdim and negative dims, their
// dtype rules and errors, empty and 0-d inputs, large inputs, and sum_to.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kiln/core/Ops.h"
#include "kiln/core/Tensor.h"
#include "test/unit/frontend/Golden.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/core/TestTensors.h"

namespace kiln {
namespace {

using golden::valuesAsDouble;
using golden::valuesAsInt64;
using kiln::testing::at;
using kiln::testing::ramp;
using ::testing::ElementsAre;

using D = std::vector<double>;
using I = std::vector<int64_t>;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// x[i][j][k] = 12i + 4j + k, shape [2, 3, 4].
Tensor x234(DType dtype = kFloat64) { return ramp({2, 3, 4}, dtype); }

TEST(ReduceTest, SumOverAllDims) {
  Tensor s = sum(x234());
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.dtype(), kFloat64);
  EXPECT_EQ(s.item<double>(), 276.0);
  Tensor k = sum(x234(), {}, true);
  EXPECT_THAT(k.sizes(), ElementsAre(1, 1, 1));
  EXPECT_EQ(k.item<double>(), 276.0);
}

TEST(ReduceTest, SumOverOneDim) {
  Tensor s1 = sum(x234(), {1});
  EXPECT_THAT(s1.sizes(), ElementsAre(2, 4));
  EXPECT_EQ(valuesAsDouble(s1), (D{12, 15, 18, 21, 48, 51, 54, 57}));
  Tensor s1k = sum(x234(), {1}, true);
  EXPECT_THAT(s1k.sizes(), ElementsAre(2, 1, 4));
  EXPECT_EQ(valuesAsDouble(s1k), valuesAsDouble(s1));
  EXPECT_EQ(valuesAsDouble(sum(x234(), {0})), valuesAsDouble(add(ramp({3, 4}, kFloat64),
                                                                  ramp({3, 4}, kFloat64, 12))));
  EXPECT_EQ(valuesAsDouble(sum(x234(), {2})), (D{6, 22, 38, 54, 70, 86}));
}

TEST(ReduceTest, SumOverSeveralAndNegativeDims) {
  Tensor s = sum(x234(), {0, 2});
  EXPECT_THAT(s.sizes(), ElementsAre(3));
  EXPECT_EQ(valuesAsDouble(s), (D{60, 92, 124}));
  EXPECT_EQ(valuesAsDouble(sum(x234(), {2, 0})), (D{60, 92, 124}));  // order does not matter
  EXPECT_EQ(valuesAsDouble(sum(x234(), {-1, -3})), (D{60, 92, 124}));
  EXPECT_THAT(sum(x234(), {-1, 0}, true).sizes(), ElementsAre(1, 3, 1));
  EXPECT_EQ(valuesAsDouble(sum(x234(), {-1})), (D{6, 22, 38, 54, 70, 86}));
}

TEST(ReduceTest, Mean) {
  EXPECT_EQ(mean(x234()).item<double>(), 11.5);
  EXPECT_EQ(valuesAsDouble(mean(x234(), {2})), (D{1.5, 5.5, 9.5, 13.5, 17.5, 21.5}));
  Tensor m = mean(x234(), {0, 1}, true);
  EXPECT_THAT(m.sizes(), ElementsAre(1, 1, 4));
  EXPECT_EQ(valuesAsDouble(m), (D{10, 11, 12, 13}));
  EXPECT_EQ(mean(x234(kFloat32)).dtype(), kFloat32);
  EXPECT_EQ(mean(x234(kFloat16), {0}).dtype(), kFloat16);
}

TEST(ReduceTest, AmaxAmin) {
  Tensor x = tensor(std::vector<double>{3, -1, 7, 2, 9, -4}, Shape{2, 3});
  EXPECT_EQ(amax(x).item<double>(), 9);
  EXPECT_EQ(amin(x).item<double>(), -4);
  EXPECT_EQ(valuesAsDouble(amax(x, {1})), (D{7, 9}));
  EXPECT_EQ(valuesAsDouble(amin(x, {0})), (D{2, -1, -4}));
  EXPECT_THAT(amax(x, {-1}, true).sizes(), ElementsAre(2, 1));
  EXPECT_EQ(valuesAsDouble(amin(x, {-2}, true)), (D{2, -1, -4}));
}

TEST(ReduceTest, AmaxAminPropagateNaN) {
  Tensor x = tensor(std::vector<double>{1, kNaN, 3, kNaN, 2, 0}, Shape{2, 3});
  std::vector<double> mx = valuesAsDouble(amax(x, {1}));
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]));
  EXPECT_TRUE(std::isnan(amin(x).item<double>()));
  std::vector<double> col = valuesAsDouble(amax(x, {0}));
  EXPECT_TRUE(std::isnan(col[0]) && std::isnan(col[1]));
  EXPECT_EQ(col[2], 3);
}

TEST(ReduceTest, Prod) {
  Tensor x = tensor(std::vector<double>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(prod(x).item<double>(), 720);
  EXPECT_EQ(valuesAsDouble(prod(x, {1})), (D{6, 120}));
  EXPECT_EQ(valuesAsDouble(prod(x, {0}, true)), (D{4, 10, 18}));
}

// ---- dtypes -------------------------------------------------------------------------------

TEST(ReduceTest, IntegerAndBoolSumsWidenToInt64) {
  Tensor i = tensor(std::vector<int32_t>{2000000000, 2000000000, -5});
  Tensor s = sum(i);
  EXPECT_EQ(s.dtype(), kInt64);
  EXPECT_EQ(s.item<int64_t>(), 3999999995);  // no int32 overflow
  Tensor b = tensor(std::vector<bool>{true, false, true, true});
  EXPECT_EQ(sum(b).dtype(), kInt64);
  EXPECT_EQ(sum(b).item<int64_t>(), 3);
  EXPECT_EQ(sum(ramp({2, 3}, kInt32), {1}).dtype(), kInt64);
  EXPECT_EQ(valuesAsInt64(sum(ramp({2, 3}, kInt32), {1})), (I{3, 12}));
  const int64_t big = (int64_t(1) << 53) + 1;
  EXPECT_EQ(sum(tensor(std::vector<int64_t>{big, 2})).item<int64_t>(), big + 2);  // exact
}

TEST(ReduceTest, IntegerProdWidensToInt64) {
  Tensor i = tensor(std::vector<int32_t>{100000, 100000, 3});
  EXPECT_EQ(prod(i).dtype(), kInt64);
  EXPECT_EQ(prod(i).item<int64_t>(), 30000000000);
}

TEST(ReduceTest, AmaxAminKeepIntegerDTypes) {
  Tensor i = tensor(std::vector<int32_t>{4, -9, 7});
  EXPECT_EQ(amax(i).dtype(), kInt32);
  EXPECT_EQ(amax(i).item<int64_t>(), 7);
  EXPECT_EQ(amin(i).item<int64_t>(), -9);
  const int64_t big = (int64_t(1) << 62) + 1;
  EXPECT_EQ(amax(tensor(std::vector<int64_t>{big, big - 1})).item<int64_t>(), big);
}

TEST(ReduceTest, FloatSumsKeepTheirDType) {
  EXPECT_EQ(sum(x234(kFloat32)).dtype(), kFloat32);
  EXPECT_EQ(sum(x234(kBFloat16)).dtype(), kBFloat16);
  EXPECT_EQ(sum(x234(kBFloat16)).item<float>(), 276.0f);
}

// torch.mean of an integer tensor: "mean(): could not infer output dtype. Input dtype
// must be either a floating point or complex dtype". The message names mean, not the
// primitive it is recorded as.
TEST(ReduceTest, MeanOfIntegersIsTypeError) {
  EXPECT_KILN_ERROR_HAS(mean(ramp({3}, kInt64)), TypeError, "int64");
  EXPECT_KILN_ERROR_HAS(mean(ramp({3}, kInt64)), TypeError, "kiln::mean: ");
  EXPECT_THROW(mean(tensor(std::vector<bool>{true})), TypeError);
}

// ---- errors -------------------------------------------------------------------------------

TEST(ReduceTest, DuplicateDimsAreShapeError) {
  EXPECT_KILN_ERROR(sum(x234(), {1, 1}), ShapeError,
                    "kiln::sum: dim appears more than once in [1, 1]" + at());
  EXPECT_KILN_ERROR(sum(x234(), {1, -2}), ShapeError,
                    "kiln::sum: dim appears more than once in [1, 1]" + at());
  EXPECT_KILN_ERROR_HAS(mean(x234(), {0, 2, -1}), ShapeError, "kiln::mean: dim appears more than once");
}

TEST(ReduceTest, OutOfRangeDimsAreShapeError) {
  EXPECT_KILN_ERROR(sum(x234(), {3}), ShapeError,
                    "kiln::sum: dimension 3 is out of range for a tensor of rank 3 (expected a "
                    "value in [-3, 2])" + at());
  EXPECT_KILN_ERROR_HAS(prod(x234(), {-4}), ShapeError, "kiln::prod: dimension -4 is out of range");
  EXPECT_KILN_ERROR_HAS(sum(scalar_tensor(1.0), {1}), ShapeError, "dimension 1 is out of range");
}

// The error names the op the user called.
TEST(ReduceTest, ErrorsNameAmaxAndAmin) {
  EXPECT_KILN_ERROR_HAS(amax(x234(), {5}), ShapeError, "kiln::amax: ");
  EXPECT_KILN_ERROR_HAS(amin(x234(), {0, 0}), ShapeError, "kiln::amin: ");
}

TEST(ReduceTest, MaxOfEmptyIsShapeError) {
  EXPECT_KILN_ERROR_HAS(amax(zeros({0})), ShapeError,
                        "kiln::amax: cannot reduce dim 0 of size 0 of a tensor of shape [0] (max and "
                        "min have no identity)");
  EXPECT_KILN_ERROR_HAS(amin(zeros({2, 0}), {1}), ShapeError,
                        "kiln::amin: cannot reduce dim 1 of size 0 of a tensor of shape [2, 0]");
  EXPECT_KILN_ERROR_HAS(amax(zeros({0}, kInt32)), ShapeError, "kiln::amax: ");
}

// Reducing a non-empty dim of an empty tensor is fine: torch.zeros(0, 3).amax(1) is
// tensor([]); only a reduced dim of size 0 has no identity.
TEST(ReduceTest, MaxOverANonEmptyDimOfAnEmptyTensor) {
  Tensor e = zeros({0, 3});
  Tensor m = amax(e, {1});
  EXPECT_THAT(m.sizes(), ElementsAre(0));
  EXPECT_THAT(amin(e, {1}, true).sizes(), ElementsAre(0, 1));
  EXPECT_THROW(amax(e, {0}), ShapeError);
}

// ---- empty and 0-d inputs -----------------------------------------------------------------

TEST(ReduceTest, EmptyInputs) {
  EXPECT_EQ(sum(zeros({0})).item<float>(), 0.0f);
  EXPECT_EQ(prod(zeros({0})).item<float>(), 1.0f);
  EXPECT_TRUE(std::isnan(mean(zeros({0})).item<float>()));
  Tensor s = sum(zeros({0, 3}), {0});
  EXPECT_THAT(s.sizes(), ElementsAre(3));
  EXPECT_EQ(valuesAsDouble(s), (D{0, 0, 0}));
  EXPECT_THAT(sum(zeros({0, 3}), {1}).sizes(), ElementsAre(0));
  EXPECT_EQ(sum(zeros({0}, kInt32)).item<int64_t>(), 0);
}

TEST(ReduceTest, ZeroDimInputs) {
  Tensor s = scalar_tensor(2.5, kFloat64);
  EXPECT_EQ(sum(s).item<double>(), 2.5);
  EXPECT_EQ(sum(s).dim(), 0);
  EXPECT_EQ(sum(s, {0}).dim(), 0);
  EXPECT_EQ(mean(s, {-1}, true).dim(), 0);
  EXPECT_EQ(amax(s).item<double>(), 2.5);
  EXPECT_EQ(prod(s).item<double>(), 2.5);
}

// ---- non-contiguous and large inputs ------------------------------------------------------

TEST(ReduceTest, NonContiguousInputs) {
  Tensor t = x234().permute({2, 0, 1});  // [4, 2, 3]
  EXPECT_EQ(valuesAsDouble(sum(t, {1, 2})), (D{60, 66, 72, 78}));
  Tensor s = x234().slice(2, 0, 4, 2);  // k = 0, 2
  EXPECT_EQ(valuesAsDouble(amax(s, {2})), (D{2, 6, 10, 14, 18, 22}));
  Tensor e = ramp({3}, kFloat64).expand({4, 3});
  EXPECT_EQ(valuesAsDouble(sum(e, {0})), (D{0, 4, 8}));
}

TEST(ReduceTest, LargeReductions) {
  const int64_t n = (int64_t(1) << 20) + 3;
  EXPECT_EQ(sum(ones({n}, kInt32)).item<int64_t>(), n);
  EXPECT_EQ(sum(ramp({n}, kFloat64)).item<double>(), double(n) * double(n - 1) / 2);
  EXPECT_EQ(amax(ramp({n}, kFloat32, -1e6)).item<float>(), float(-1e6 + double(n - 1)));
  // Many outputs, each a short segment: the parallel split is over outputs.
  const int64_t rows = 300007;
  Tensor x = ramp({rows, 4}, kInt64);
  std::vector<int64_t> r = valuesAsInt64(sum(x, {1}));
  int64_t wrong = 0;
  for (int64_t i = 0; i < rows; ++i) wrong += r[i] != 16 * i + 6;
  EXPECT_EQ(wrong, 0);
  // A transposed large input.
  std::vector<int64_t> c = valuesAsInt64(sum(x.t(), {1}));
  EXPECT_EQ(c[0], 4 * rows * (rows - 1) / 2);
  EXPECT_EQ(c[3], 4 * rows * (rows - 1) / 2 + 3 * rows);
}

// ---- sum_to -------------------------------------------------------------------------------

TEST(ReduceTest, SumToUndoesABroadcast) {
  Tensor g = x234();
  Tensor lead = sum_to(g, {3, 4});
  EXPECT_THAT(lead.sizes(), ElementsAre(3, 4));
  EXPECT_EQ(valuesAsDouble(lead), valuesAsDouble(sum(g, {0})));
  Tensor ones = sum_to(g, {1, 3, 1});
  EXPECT_THAT(ones.sizes(), ElementsAre(1, 3, 1));
  EXPECT_EQ(valuesAsDouble(ones), (D{60, 92, 124}));
  Tensor mixed = sum_to(g, {3, 1});
  EXPECT_THAT(mixed.sizes(), ElementsAre(3, 1));
  EXPECT_EQ(valuesAsDouble(mixed), (D{60, 92, 124}));
  Tensor scalar = sum_to(g, {});
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(scalar.item<double>(), 276);
  EXPECT_TRUE(sum_to(g, {2, 3, 4}).is_same(g));
  EXPECT_THAT(sum_to(ramp({1, 4}), {1, 1}).sizes(), ElementsAre(1, 1));
}

TEST(ReduceTest, SumToAnIncompatibleShapeIsShapeError) {
  EXPECT_THROW(sum_to(x234(), {2, 4}), ShapeError);
  EXPECT_THROW(sum_to(ramp({3}), {2, 3}), ShapeError);
}

}  // namespace
}  // namespace kiln
