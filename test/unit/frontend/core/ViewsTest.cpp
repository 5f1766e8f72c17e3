// Views (reshape/view, flatten, transpose/t/permute, expand, slice/narrow,
// squeeze/unsqueeze) share storage and compute the right elements; cat copies and promotes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kiln/core/Ops.h"
#include "kiln/core/Tensor.h"
#include "kiln/core/ThreadPool.h"
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

using I = std::vector<int64_t>;
using D = std::vector<double>;

bool sharesStorage(const Tensor& a, const Tensor& b) {
  return a.impl()->storage == b.impl()->storage;
}

// ---- reshape / view ------------------------------------------------------------------

TEST(ViewsTest, ReshapeOfAContiguousTensorIsAView) {
  Tensor x = ramp({2, 3, 4});
  Tensor r = x.reshape({4, 6});
  EXPECT_THAT(r.sizes(), ElementsAre(4, 6));
  EXPECT_THAT(r.strides(), ElementsAre(6, 1));
  EXPECT_TRUE(sharesStorage(r, x));
  EXPECT_EQ(valuesAsDouble(r), valuesAsDouble(x));
}

TEST(ViewsTest, ReshapeInfersOneDim) {
  Tensor x = ramp({2, 3, 4});
  EXPECT_THAT(x.reshape({-1, 3}).sizes(), ElementsAre(8, 3));
  EXPECT_THAT(x.reshape({2, -1}).sizes(), ElementsAre(2, 12));
  EXPECT_THAT(x.reshape({-1}).sizes(), ElementsAre(24));
  EXPECT_THAT(ramp({1}).reshape({}).sizes(), ElementsAre());
  EXPECT_THAT(scalar_tensor(1.0).reshape({1, 1}).sizes(), ElementsAre(1, 1));
  EXPECT_THAT(zeros({0, 4}).reshape({2, 0, 5}).sizes(), ElementsAre(2, 0, 5));
  // With a zero-size dim any size fits the -1 (PyTorch raises too).
  EXPECT_KILN_ERROR_HAS(zeros({0, 4}).reshape({2, 0, -1}), ShapeError, "cannot infer the -1");
}

TEST(ViewsTest, ReshapeToItsOwnShapeIsItself) {
  Tensor x = ramp({2, 3});
  EXPECT_TRUE(x.reshape({2, 3}).is_same(x));
  EXPECT_TRUE(x.reshape({2, -1}).is_same(x));
}

TEST(ViewsTest, ReshapeOfANonContiguousTensorCopies) {
  Tensor x = ramp({2, 3});
  Tensor r = x.t().reshape({6});
  EXPECT_FALSE(sharesStorage(r, x));
  EXPECT_EQ(valuesAsDouble(r), (D{0, 3, 1, 4, 2, 5}));
}

// As PyTorch's reshape: a view wherever the new shape can be expressed with strides over the
// same storage (adding or dropping size-1 dims, splitting or merging dims that are laid out
// together), so select, squeeze and unsqueeze of a non-contiguous tensor are views and a
// write through them reaches the base tensor.
TEST(ViewsTest, ReshapeOfANonContiguousTensorIsAViewWhereStridesAllowIt) {
  Tensor x = ramp({2, 3});
  Tensor column = x.t().select(0, 1);  // x[:, 1]
  EXPECT_TRUE(sharesStorage(column, x));
  EXPECT_EQ(column.strides(), (Strides{3}));
  EXPECT_EQ(valuesAsDouble(column), (D{1, 4}));
  column.fill_(9.0);
  EXPECT_EQ(valuesAsDouble(x), (D{0, 9, 2, 3, 9, 5}));

  Tensor t = ramp({2, 3}).t();  // shape [3, 2], strides [1, 3]
  Tensor u = t.unsqueeze(1);
  EXPECT_TRUE(sharesStorage(u, t));
  EXPECT_EQ(u.sizes(), (Shape{3, 1, 2}));
  EXPECT_EQ(valuesAsDouble(u), valuesAsDouble(t));
  EXPECT_TRUE(sharesStorage(u.squeeze(1), t));

  // A slice with steps, split into two dims: a view with the slice's strides.
  Tensor s = ramp({12}).slice(0, 0, 12, 2);  // 0 2 4 ... 10, stride 2
  Tensor r = s.reshape({2, 3});
  EXPECT_TRUE(sharesStorage(r, s));
  EXPECT_EQ(r.strides(), (Strides{6, 2}));
  EXPECT_EQ(valuesAsDouble(r), (D{0, 2, 4, 6, 8, 10}));
}

TEST(ViewsTest, ReshapeErrors) {
  Tensor x = ramp({2, 3});
  EXPECT_KILN_ERROR(x.reshape({4}), ShapeError,
                    "kiln::reshape: cannot reshape a tensor of 6 elements into shape [4]" + at());
  EXPECT_KILN_ERROR(x.reshape({-1, 4}), ShapeError,
                    "kiln::reshape: cannot reshape a tensor of 6 elements into shape [-1, 4]" +
                        at());
  EXPECT_KILN_ERROR(x.reshape({-1, -1}), ShapeError,
                    "kiln::reshape: shape [-1, -1] has more than one -1; only one dimension can "
                    "be inferred" + at());
  EXPECT_KILN_ERROR_HAS(x.reshape({-2, -3}), ShapeError, "has invalid dimension -2");
}

TEST(ViewsTest, ViewSharesStorage) {
  Tensor x = ramp({2, 3});
  Tensor v = x.view({3, 2});
  EXPECT_TRUE(sharesStorage(v, x));
  EXPECT_THAT(v.sizes(), ElementsAre(3, 2));
  EXPECT_EQ(valuesAsDouble(v), valuesAsDouble(x));
}

TEST(ViewsTest, ViewOfANonContiguousTensorThrows) {
  Tensor x = ramp({2, 3});
  EXPECT_KILN_ERROR(x.t().view({6}), ShapeError,
                    "kiln::view: a tensor of shape [3, 2] and strides [1, 3] is not contiguous; "
                    "use reshape (which may copy)" + at());
  EXPECT_THROW(ramp({4, 6}).slice(1, 0, 6, 2).view({12}), ShapeError);
  EXPECT_THROW(ramp({3}).expand({2, 3}).view({6}), ShapeError);
}

TEST(ViewsTest, FlattenMergesARangeOfDims) {
  Tensor x = ramp({2, 3, 4, 5});
  EXPECT_THAT(x.flatten().sizes(), ElementsAre(120));
  EXPECT_THAT(x.flatten(1).sizes(), ElementsAre(2, 60));
  EXPECT_THAT(x.flatten(1, 2).sizes(), ElementsAre(2, 12, 5));
  EXPECT_THAT(x.flatten(-2, -1).sizes(), ElementsAre(2, 3, 20));
  EXPECT_THAT(x.flatten(2, 2).sizes(), ElementsAre(2, 3, 4, 5));
  EXPECT_TRUE(sharesStorage(x.flatten(), x));
}

TEST(ViewsTest, FlattenOfAScalarIsOneElement) {
  Tensor f = scalar_tensor(3.0).flatten();
  EXPECT_THAT(f.sizes(), ElementsAre(1));
  EXPECT_EQ(f.item<float>(), 3.0f);
}

TEST(ViewsTest, FlattenOfATransposeCopiesInViewOrder) {
  Tensor x = ramp({2, 3});
  EXPECT_EQ(valuesAsDouble(x.t().flatten()), (D{0, 3, 1, 4, 2, 5}));
}

TEST(ViewsTest, FlattenErrors) {
  Tensor x = ramp({2, 3, 4});
  EXPECT_KILN_ERROR(x.flatten(2, 1), ShapeError,
                    "kiln::flatten: start dim 2 comes after end dim 1 for a tensor of shape "
                    "[2, 3, 4]" + at());
  EXPECT_KILN_ERROR_HAS(x.flatten(0, 3), ShapeError, "kiln::flatten: dimension 3 is out of range");
}

// ---- transpose / t / permute ---------------------------------------------------------

TEST(ViewsTest, TransposeSwapsSizesAndStrides) {
  Tensor x = ramp({2, 3, 4});
  Tensor t = x.transpose(0, 2);
  EXPECT_THAT(t.sizes(), ElementsAre(4, 3, 2));
  EXPECT_THAT(t.strides(), ElementsAre(1, 4, 12));
  EXPECT_TRUE(sharesStorage(t, x));
  EXPECT_FALSE(t.is_contiguous());
  // t[i][j][k] == x[k][j][i]
  EXPECT_EQ(valuesAsDouble(t)[1 * 6 + 2 * 2 + 1], valuesAsDouble(x)[1 * 12 + 2 * 4 + 1]);
  EXPECT_THAT(x.transpose(-1, 0).sizes(), ElementsAre(4, 3, 2));
  EXPECT_TRUE(x.transpose(1, 1).is_same(x));
}

TEST(ViewsTest, TransposeErrors) {
  Tensor x = ramp({2, 3});
  EXPECT_KILN_ERROR(x.transpose(0, 2), ShapeError,
                    "kiln::transpose: dimension 2 is out of range for a tensor of rank 2 "
                    "(expected a value in [-2, 1])" + at());
}

// PyTorch: torch.tensor(1.).transpose(0, 5) raises IndexError ("expected to be in range
// of [-1, 0], but got 5"); only 0 and -1 are valid dims of a scalar.
TEST(ViewsTest, TransposeOfAScalarChecksItsDims) {
  Tensor s = scalar_tensor(1.0);
  EXPECT_TRUE(s.transpose(0, -1).is_same(s));
  EXPECT_THROW(s.transpose(0, 5), ShapeError);
}

TEST(ViewsTest, TOfMatricesVectorsAndScalars) {
  Tensor m = ramp({2, 3});
  EXPECT_THAT(m.t().sizes(), ElementsAre(3, 2));
  EXPECT_EQ(valuesAsDouble(m.t()), (D{0, 3, 1, 4, 2, 5}));
  Tensor v = ramp({3});
  EXPECT_TRUE(v.t().is_same(v));
  Tensor s = scalar_tensor(1.0);
  EXPECT_TRUE(s.t().is_same(s));
  EXPECT_KILN_ERROR(ramp({2, 3, 4}).t(), ShapeError,
                    "kiln::t: expects a tensor with at most 2 dims, got shape [2, 3, 4]" + at());
}

TEST(ViewsTest, PermuteReordersDims) {
  Tensor x = ramp({2, 3, 4});
  Tensor p = x.permute({2, 0, 1});
  EXPECT_THAT(p.sizes(), ElementsAre(4, 2, 3));
  EXPECT_THAT(p.strides(), ElementsAre(1, 12, 4));
  EXPECT_TRUE(sharesStorage(p, x));
  EXPECT_THAT(x.permute({-1, -3, -2}).sizes(), ElementsAre(4, 2, 3));
  EXPECT_TRUE(x.permute({0, 1, 2}).is_same(x));
  // p[k][i][j] == x[i][j][k]
  std::vector<double> pv = valuesAsDouble(p), xv = valuesAsDouble(x);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(pv[k * 6 + i * 3 + j], xv[i * 12 + j * 4 + k]);
}

// contiguous() of permuted and sliced views, large enough to be split across threads
// mid-row, with runs of 1 to 5 elements: the element at each multi-index is the base's
// element at the view's strides. Transposes go through 16x16 tiles (4-byte elements
// through registers): whole tiles and edges, with dims before the two exchanged, and
// 2- and 8-byte elements, alone and in runs.
TEST(ViewsTest, ContiguousCopiesOfViewsWithShortRuns) {
  set_num_threads(2);
  struct Case {
    Shape base, perm;
    DType dtype = kFloat32;
  };
  for (const Case& c : {Case{{64, 600, 2, 2}, {1, 0, 2, 3}}, Case{{70001, 3}, {1, 0}},
                        Case{{5, 7, 11, 13, 3}, {4, 2, 0, 3, 1}}, Case{{96, 64, 5}, {1, 0, 2}},
                        Case{{37, 53}, {1, 0}}, Case{{3, 40, 33}, {0, 2, 1}}, Case{{37, 53}, {1, 0}, kFloat64},
                        Case{{33, 40}, {1, 0}, kFloat16}, Case{{64, 20, 4, 4}, {1, 0, 2, 3}, kFloat64},
                        Case{{20, 30, 3}, {1, 0, 2}, kFloat16}}) {
    Tensor x = ramp(c.base, c.dtype);
    Tensor v = x.permute(c.perm).narrow(0, 1, x.permute(c.perm).sizes()[0] - 1);
    std::vector<double> got = valuesAsDouble(v.contiguous()), base = valuesAsDouble(x);
    ASSERT_EQ(int64_t(got.size()), v.numel());
    const Shape& shape = v.sizes();
    std::vector<int64_t> index(shape.size(), 0);
    for (int64_t flat = 0; flat < v.numel(); ++flat) {
      int64_t offset = v.storage_offset();
      for (size_t d = 0; d < shape.size(); ++d) offset += index[d] * v.strides()[d];
      ASSERT_EQ(got[flat], base[offset]) << "base of " << c.base.size() << " dims, element " << flat;
      for (int64_t d = int64_t(shape.size()) - 1; d >= 0 && ++index[d] == shape[d]; --d) index[d] = 0;
    }
  }
}

// A transposed copy into a strided destination (rows wider than the copy).
TEST(ViewsTest, CopyOfATransposeIntoANarrowedTensor) {
  Tensor x = ramp({37, 53});
  Tensor wide = zeros({53, 40});
  Tensor dst = wide.narrow(1, 2, 37);
  dst.copy_(x.transpose(0, 1));
  std::vector<double> got = valuesAsDouble(wide), xv = valuesAsDouble(x);
  for (int64_t i = 0; i < 53; ++i)
    for (int64_t j = 0; j < 40; ++j)
      ASSERT_EQ(got[size_t(i * 40 + j)], j >= 2 && j < 39 ? xv[size_t((j - 2) * 53 + i)] : 0.0) << i << ", " << j;
}

TEST(ViewsTest, PermuteErrors) {
  Tensor x = ramp({2, 3});
  EXPECT_KILN_ERROR(x.permute({0, 0}), ShapeError,
                    "kiln::permute: permutation [0, 0] is not a permutation of the dims of a "
                    "tensor of shape [2, 3]" + at());
  EXPECT_KILN_ERROR(x.permute({0}), ShapeError,
                    "kiln::permute: permutation [0] is not a permutation of the dims of a "
                    "tensor of shape [2, 3]" + at());
  EXPECT_KILN_ERROR(x.permute({1, 0, 2}), ShapeError,
                    "kiln::permute: dimension 2 is out of range for a tensor of rank 2 "
                    "(expected a value in [-2, 1])" + at());
}

// ---- expand ------------------------------------------------------------------------------

TEST(ViewsTest, ExpandStretchesSizeOneDimsWithStrideZero) {
  Tensor x = ramp({3, 1});
  Tensor e = x.expand({2, 3, 4});
  EXPECT_THAT(e.sizes(), ElementsAre(2, 3, 4));
  EXPECT_THAT(e.strides(), ElementsAre(0, 1, 0));
  EXPECT_TRUE(sharesStorage(e, x));
  std::vector<double> v = valuesAsDouble(e);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(v[i * 12 + j * 4 + k], double(j));
}

TEST(ViewsTest, ExpandMinusOneKeepsADim) {
  Tensor x = ramp({3, 1});
  EXPECT_THAT(x.expand({-1, 5}).sizes(), ElementsAre(3, 5));
  EXPECT_THAT(x.expand({2, -1, -1}).sizes(), ElementsAre(2, 3, 1));
  EXPECT_TRUE(x.expand({-1, -1}).is_same(x));
  EXPECT_TRUE(x.expand({3, 1}).is_same(x));
}

TEST(ViewsTest, ExpandOfAScalarAndToZeroSize) {
  Tensor s = scalar_tensor(2.0);
  EXPECT_EQ(valuesAsDouble(s.expand({2, 2})), (D{2, 2, 2, 2}));
  Tensor z = ramp({1}).expand({0});
  EXPECT_THAT(z.sizes(), ElementsAre(0));
  EXPECT_EQ(z.numel(), 0);
}

TEST(ViewsTest, ExpandErrors) {
  Tensor x = ramp({3, 1});
  EXPECT_KILN_ERROR(x.expand({2, 4, 4}), ShapeError,
                    "kiln::expand: cannot expand a tensor of shape [3, 1] to [2, 4, 4]" + at());
  EXPECT_KILN_ERROR(ramp({2, 3}).expand({3}), ShapeError,
                    "kiln::expand: cannot expand a tensor of shape [2, 3] to fewer dims: [3]" +
                        at());
}

// PyTorch: "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing
// dimension 0". A -1 (or any negative size) in a new leading dim has no size to keep.
TEST(ViewsTest, ExpandRejectsNegativeSizesInNewDims) {
  Tensor x = ramp({3});
  EXPECT_THROW(x.expand({-1, 3}), ShapeError);
  EXPECT_THROW(x.expand({-2, 3}), ShapeError);
  EXPECT_THROW(ramp({1}).expand({-3}), ShapeError);
}

// ---- slice / narrow ----------------------------------------------------------------------

TEST(ViewsTest, SliceWithSteps) {
  Tensor x = ramp({8});
  EXPECT_EQ(valuesAsDouble(x.slice(0, 1, 7, 2)), (D{1, 3, 5}));
  EXPECT_EQ(valuesAsDouble(x.slice(0, 0, 8, 3)), (D{0, 3, 6}));
  EXPECT_EQ(valuesAsDouble(x.slice(0, 2, 3, 5)), (D{2}));
  Tensor s = x.slice(0, 1, 8, 2);
  EXPECT_THAT(s.strides(), ElementsAre(2));
  EXPECT_EQ(s.storage_offset(), 1);
  EXPECT_TRUE(sharesStorage(s, x));
}

TEST(ViewsTest, SliceNegativeAndClampedIndices) {
  Tensor x = ramp({6});
  EXPECT_EQ(valuesAsDouble(x.slice(0, -3, -1)), (D{3, 4}));
  EXPECT_EQ(valuesAsDouble(x.slice(0, -100, 2)), (D{0, 1}));
  EXPECT_EQ(valuesAsDouble(x.slice(0, 4, 100)), (D{4, 5}));
  EXPECT_EQ(valuesAsDouble(x.slice(0, -100, 100, 4)), (D{0, 4}));
  EXPECT_TRUE(x.slice(0, 0, 6).is_same(x));
  EXPECT_TRUE(x.slice(0, -6, 100).is_same(x));
}

TEST(ViewsTest, SliceEmptyRanges) {
  Tensor x = ramp({6});
  EXPECT_THAT(x.slice(0, 4, 2).sizes(), ElementsAre(0));
  EXPECT_THAT(x.slice(0, 6, 6).sizes(), ElementsAre(0));
  EXPECT_THAT(x.slice(0, 100, 200).sizes(), ElementsAre(0));
  EXPECT_THAT(x.slice(0, -1, -2).sizes(), ElementsAre(0));
}

TEST(ViewsTest, SliceOfAnInnerDimAndOfASlice) {
  Tensor x = ramp({3, 5});
  Tensor s = x.slice(1, 1, 5, 2);
  EXPECT_THAT(s.sizes(), ElementsAre(3, 2));
  EXPECT_THAT(s.strides(), ElementsAre(5, 2));
  EXPECT_EQ(valuesAsDouble(s), (D{1, 3, 6, 8, 11, 13}));
  Tensor ss = s.slice(0, 1, 3).slice(-1, 1, 2);
  EXPECT_EQ(ss.storage_offset(), 8);
  EXPECT_EQ(valuesAsDouble(ss), (D{8, 13}));
}

TEST(ViewsTest, SliceErrors) {
  Tensor x = ramp({3, 5});
  EXPECT_KILN_ERROR(x.slice(1, 0, 5, 0), ShapeError,
                    "kiln::slice: step must be positive, got 0" + at());
  EXPECT_KILN_ERROR(x.slice(1, 5, 0, -1), ShapeError,
                    "kiln::slice: step must be positive, got -1" + at());
  EXPECT_KILN_ERROR_HAS(x.slice(2, 0, 1), ShapeError, "kiln::slice: dimension 2 is out of range");
}

TEST(ViewsTest, Narrow) {
  Tensor x = ramp({2, 5});
  EXPECT_EQ(valuesAsDouble(x.narrow(1, 2, 3)), (D{2, 3, 4, 7, 8, 9}));
  EXPECT_EQ(valuesAsDouble(x.narrow(1, -2, 2)), (D{3, 4, 8, 9}));
  EXPECT_EQ(valuesAsDouble(x.narrow(-2, 1, 1)), (D{5, 6, 7, 8, 9}));
  EXPECT_THAT(x.narrow(1, 5, 0).sizes(), ElementsAre(2, 0));
  EXPECT_TRUE(sharesStorage(x.narrow(1, 1, 2), x));
}

TEST(ViewsTest, NarrowErrors) {
  Tensor x = ramp({2, 5});
  EXPECT_KILN_ERROR(x.narrow(1, 3, 3), ShapeError,
                    "kiln::narrow: start 3 and length 3 are out of range for dim 1 of a tensor "
                    "of shape [2, 5]" + at());
  EXPECT_KILN_ERROR(x.narrow(1, 0, -1), ShapeError,
                    "kiln::narrow: start 0 and length -1 are out of range for dim 1 of a tensor "
                    "of shape [2, 5]" + at());
  EXPECT_THROW(x.narrow(1, -6, 1), ShapeError);
}

// ---- squeeze / unsqueeze -----------------------------------------------------------------

TEST(ViewsTest, Squeeze) {
  Tensor x = ramp({3, 1, 4, 1});
  EXPECT_THAT(x.squeeze().sizes(), ElementsAre(3, 4));
  EXPECT_THAT(x.squeeze(1).sizes(), ElementsAre(3, 4, 1));
  EXPECT_THAT(x.squeeze(-1).sizes(), ElementsAre(3, 1, 4));
  EXPECT_TRUE(x.squeeze(0).is_same(x));  // not size 1: unchanged, as PyTorch
  EXPECT_TRUE(sharesStorage(x.squeeze(), x));
  EXPECT_THAT(ramp({1, 1}).squeeze().sizes(), ElementsAre());
  Tensor s = scalar_tensor(1.0);
  EXPECT_TRUE(s.squeeze(0).is_same(s));
  EXPECT_KILN_ERROR_HAS(x.squeeze(4), ShapeError, "kiln::squeeze: dimension 4 is out of range");
}

TEST(ViewsTest, Unsqueeze) {
  Tensor x = ramp({2, 3});
  EXPECT_THAT(x.unsqueeze(0).sizes(), ElementsAre(1, 2, 3));
  EXPECT_THAT(x.unsqueeze(2).sizes(), ElementsAre(2, 3, 1));
  EXPECT_THAT(x.unsqueeze(-1).sizes(), ElementsAre(2, 3, 1));
  EXPECT_THAT(x.unsqueeze(-3).sizes(), ElementsAre(1, 2, 3));
  EXPECT_THAT(scalar_tensor(1.0).unsqueeze(0).sizes(), ElementsAre(1));
  EXPECT_TRUE(sharesStorage(x.unsqueeze(1), x));
  EXPECT_KILN_ERROR_HAS(x.unsqueeze(3), ShapeError, "kiln::unsqueeze: dimension 3 is out of range");
  EXPECT_KILN_ERROR_HAS(x.unsqueeze(-4), ShapeError, "kiln::unsqueeze: dimension -4 is out of range");
}

// ---- views alias their base ----------------------------------------------------------------

TEST(ViewsTest, WritesToTheBaseShowThroughEveryView) {
  std::vector<float> data{0, 1, 2, 3, 4, 5};
  Tensor base = from_blob(data.data(), {2, 3});
  Tensor r = base.reshape({3, 2});
  Tensor t = base.t();
  Tensor s = base.slice(1, 1, 3);
  Tensor e = base.slice(0, 0, 1).expand({4, 3});
  Tensor u = base.unsqueeze(0);
  data[4] = 40;  // base[1][1]
  EXPECT_EQ(valuesAsDouble(r)[4], 40);
  EXPECT_EQ(valuesAsDouble(t)[1 * 2 + 1], 40);
  EXPECT_EQ(valuesAsDouble(s)[1 * 2 + 0], 40);
  EXPECT_EQ(valuesAsDouble(u)[4], 40);
  data[1] = 10;  // base[0][1], seen in every row of the expand
  for (int64_t row = 0; row < 4; ++row) EXPECT_EQ(valuesAsDouble(e)[row * 3 + 1], 10);
}

TEST(ViewsTest, WritesThroughAViewReachTheBase) {
  Tensor base = zeros({2, 3}, kInt64);
  Tensor col = base.t().slice(0, 2, 3);  // base[:, 2]
  ASSERT_TRUE(sharesStorage(col, base));
  col.data_ptr<int64_t>()[0] = 7;  // col's first element is base[0][2]
  EXPECT_EQ(valuesAsInt64(base), (I{0, 0, 7, 0, 0, 0}));
}

// ---- cat -------------------------------------------------------------------------------------

TEST(ViewsTest, CatAlongEachDim) {
  Tensor a = ramp({2, 2}), b = ramp({1, 2}, kFloat32, 10);
  Tensor c0 = cat({a, b});
  EXPECT_THAT(c0.sizes(), ElementsAre(3, 2));
  EXPECT_EQ(valuesAsDouble(c0), (D{0, 1, 2, 3, 10, 11}));
  Tensor d = ramp({2, 1}, kFloat32, 20);
  EXPECT_EQ(valuesAsDouble(cat({a, d}, 1)), (D{0, 1, 20, 2, 3, 21}));
  EXPECT_EQ(valuesAsDouble(cat({a, d, a}, -1)), (D{0, 1, 20, 0, 1, 2, 3, 21, 2, 3}));
}

TEST(ViewsTest, CatOfViewsAndEmptyTensors) {
  Tensor a = ramp({2, 3});
  Tensor c = cat({a.t(), ramp({0, 2}), a.slice(1, 0, 2).t()});
  EXPECT_THAT(c.sizes(), ElementsAre(5, 2));
  EXPECT_EQ(valuesAsDouble(c), (D{0, 3, 1, 4, 2, 5, 0, 3, 1, 4}));
  EXPECT_TRUE(c.is_contiguous());
}

TEST(ViewsTest, CatPromotesDTypes) {
  Tensor i = tensor(std::vector<int32_t>{1, 2});
  Tensor f = tensor(std::vector<float>{0.5f});
  Tensor c = cat({i, f});
  EXPECT_EQ(c.dtype(), kFloat32);
  EXPECT_EQ(valuesAsDouble(c), (D{1, 2, 0.5}));
  Tensor b = tensor(std::vector<bool>{true, false});
  Tensor l = tensor(std::vector<int64_t>{-3});
  Tensor bl = cat({b, l});
  EXPECT_EQ(bl.dtype(), kInt64);
  EXPECT_EQ(valuesAsInt64(bl), (I{1, 0, -3}));
  EXPECT_EQ(cat({f, tensor(std::vector<double>{2})}).dtype(), kFloat64);
  EXPECT_EQ(cat({i, tensor(std::vector<int64_t>{2})}).dtype(), kInt64);
}

// torch.cat always returns a new tensor; sharing the input's storage would let a later
// in-place write to the result change the input.
TEST(ViewsTest, CatOfOneTensorIsACopy) {
  Tensor a = ramp({2, 3});
  Tensor c = cat({a});
  EXPECT_EQ(valuesAsDouble(c), valuesAsDouble(a));
  EXPECT_FALSE(sharesStorage(c, a));
}

TEST(ViewsTest, CatErrors) {
  Tensor a = ramp({2, 3});
  EXPECT_KILN_ERROR(cat({}), ShapeError, "kiln::cat: expects at least one tensor" + at());
  EXPECT_KILN_ERROR(cat({a, ramp({2, 4})}), ShapeError,
                    "kiln::cat: tensor 1 has shape [2, 4], which does not match tensor 0's "
                    "shape [2, 3] outside dim 0" + at());
  EXPECT_KILN_ERROR(cat({a, ramp({2, 3, 1})}, 1), ShapeError,
                    "kiln::cat: tensor 1 has shape [2, 3, 1], which does not match tensor 0's "
                    "shape [2, 3] outside dim 1" + at());
  EXPECT_KILN_ERROR_HAS(cat({a, a}, 2), ShapeError, "kiln::cat: dimension 2 is out of range");
}

// PyTorch: "zero-dimensional tensor (at position 0) cannot be concatenated".
TEST(ViewsTest, CatOfScalarsIsShapeError) {
  EXPECT_THROWS_WITHOUT_CRASH(cat({scalar_tensor(1.0), scalar_tensor(2.0)}), ShapeError);
  EXPECT_THROWS_WITHOUT_CRASH(cat({ramp({2}), scalar_tensor(2.0)}), ShapeError);
}

}  // namespace
}  // namespace kiln
