// Tensor: metadata, data access, contiguous/clone/detach, factories and from_blob.
#include "kiln/core/Tensor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kiln/core/Ops.h"
#include "test/unit/frontend/Golden.h"
#include "test/unit/frontend/core/ExpectError.h"

namespace kiln {
namespace {

using golden::valuesAsDouble;
using golden::valuesAsInt64;
using kiln::testing::at;
using ::testing::ElementsAre;

// ---- metadata -------------------------------------------------------------------------

TEST(TensorTest, UndefinedByDefault) {
  Tensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_EQ(t.impl(), nullptr);
}

TEST(TensorTest, MetadataOfAContiguousTensor) {
  Tensor t = zeros({2, 3, 4});
  EXPECT_TRUE(t.defined());
  EXPECT_THAT(t.sizes(), ElementsAre(2, 3, 4));
  EXPECT_EQ(t.shape(), t.sizes());
  EXPECT_THAT(t.strides(), ElementsAre(12, 4, 1));
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_EQ(t.scalar_type(), kFloat32);
  EXPECT_EQ(t.element_size(), 4u);
  EXPECT_EQ(t.storage_offset(), 0);
  EXPECT_EQ(t.device(), kCPU);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_TRUE(t.is_floating_point());
  EXPECT_FALSE(t.is_placeholder());
  EXPECT_FALSE(t.requires_grad());
  EXPECT_TRUE(t.is_leaf());
}

TEST(TensorTest, SizeTakesNegativeDims) {
  Tensor t = zeros({2, 3, 4});
  EXPECT_EQ(t.size(0), 2);
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(t.size(-3), 2);
}

TEST(TensorTest, SizeOutOfRangeNamesDimAndLine) {
  Tensor t = zeros({2, 3});
  EXPECT_KILN_ERROR(t.size(2), ShapeError,
                    "kiln::size: dimension 2 is out of range for a tensor of rank 2 "
                    "(expected a value in [-2, 1])" + at());
  EXPECT_KILN_ERROR(t.size(-3), ShapeError,
                    "kiln::size: dimension -3 is out of range for a tensor of rank 2 "
                    "(expected a value in [-2, 1])" + at());
}

TEST(TensorTest, ElementSizePerDType) {
  EXPECT_EQ(zeros({1}, kFloat64).element_size(), 8u);
  EXPECT_EQ(zeros({1}, kFloat16).element_size(), 2u);
  EXPECT_EQ(zeros({1}, kBFloat16).element_size(), 2u);
  EXPECT_EQ(zeros({1}, kInt32).element_size(), 4u);
  EXPECT_EQ(zeros({1}, kInt64).element_size(), 8u);
  EXPECT_EQ(zeros({1}, kBool).element_size(), 1u);
  EXPECT_FALSE(zeros({1}, kInt64).is_floating_point());
  EXPECT_TRUE(zeros({1}, kBFloat16).is_floating_point());
}

TEST(TensorTest, ZeroDimTensor) {
  Tensor s = scalar_tensor(2.5);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_TRUE(s.sizes().empty());
  EXPECT_TRUE(s.strides().empty());
  EXPECT_EQ(s.numel(), 1);
  EXPECT_TRUE(s.is_contiguous());
  EXPECT_EQ(s.item<float>(), 2.5f);
}

// A 0-d tensor has no dims to ask the size of (PyTorch: IndexError). normalizeDim accepts 0
// and -1 for a scalar, so size() must check before indexing the empty shape.
TEST(TensorTest, SizeOfAZeroDimTensorIsShapeError) {
  EXPECT_THROWS_WITHOUT_CRASH(scalar_tensor(1.0).size(0), ShapeError);
  EXPECT_THROWS_WITHOUT_CRASH(scalar_tensor(1.0).size(-1), ShapeError);
}

TEST(TensorTest, EmptyTensorMetadata) {
  Tensor e = zeros({2, 0, 3});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.is_contiguous());
  EXPECT_THAT(e.strides(), ElementsAre(3, 3, 1));  // PyTorch's strides for size-0 dims
}

// ---- item and data_ptr ---------------------------------------------------------------

TEST(TensorTest, ItemConvertsLikeTorch) {
  Tensor f = scalar_tensor(2.75);
  EXPECT_EQ(f.item<float>(), 2.75f);
  EXPECT_EQ(f.item<double>(), 2.75);
  EXPECT_EQ(f.item<int64_t>(), 2);  // truncation toward zero
  EXPECT_EQ(scalar_tensor(-2.75).item<int32_t>(), -2);
  EXPECT_TRUE(f.item<bool>());
  EXPECT_FALSE(scalar_tensor(0.0).item<bool>());
  EXPECT_EQ(scalar_tensor(7, kInt64).item<double>(), 7.0);
  EXPECT_EQ(scalar_tensor(1, kBool).item<int>(), 1);
  EXPECT_EQ(scalar_tensor(1.5, kFloat16).item<float>(), 1.5f);
  EXPECT_EQ(scalar_tensor(-3.0, kBFloat16).item<double>(), -3.0);
}

TEST(TensorTest, ItemOfLargeInt64IsExact) {
  const int64_t big = (int64_t(1) << 62) + 1;
  Tensor t = tensor(std::vector<int64_t>{big});
  EXPECT_EQ(t.item<int64_t>(), big);
}

TEST(TensorTest, ItemOfAOneElementTensorOfAnyRank) {
  EXPECT_EQ(full({1, 1, 1}, 4.0).item<float>(), 4.0f);
}

TEST(TensorTest, ItemReadsAViewAtItsOffset) {
  Tensor t = tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(t.slice(1, 2, 3).slice(0, 1, 2).item<float>(), 6.0f);
}

TEST(TensorTest, ItemOfManyElementsIsShapeError) {
  Tensor t = zeros({2, 3});
  EXPECT_KILN_ERROR(t.item<float>(), ShapeError,
                    "kiln::item: a tensor with 6 elements cannot be converted to a scalar "
                    "(shape [2, 3])" + at());
  EXPECT_KILN_ERROR(zeros({0}).item<float>(), ShapeError,
                    "kiln::item: a tensor with 0 elements cannot be converted to a scalar "
                    "(shape [0])" + at());
}

TEST(TensorTest, DataPtrMustMatchTheDType) {
  Tensor t = zeros({2}, kInt64);
  EXPECT_NE(t.data_ptr<int64_t>(), nullptr);
  EXPECT_KILN_ERROR(t.data_ptr<float>(), TypeError,
                    "kiln::data_ptr: requested float32 data from a int64 tensor of shape [2]" +
                        at());
  EXPECT_KILN_ERROR(zeros({3}).data_ptr<double>(), TypeError,
                    "kiln::data_ptr: requested float64 data from a float32 tensor of shape [3]" +
                        at());
  EXPECT_KILN_ERROR(zeros({3}).data_ptr<Half>(), TypeError,
                    "kiln::data_ptr: requested float16 data from a float32 tensor of shape [3]" +
                        at());
}

TEST(TensorTest, DataPtrOfAnUndefinedTensorIsAnError) {
  Tensor undefined;
  EXPECT_KILN_ERROR(undefined.data_ptr<float>(), Error,
                    "kiln::data_ptr: called on an undefined tensor" + at());
}

// item() reads the dtype before checking that the tensor is defined.
TEST(TensorTest, ItemOfAnUndefinedTensorIsAnError) {
  Tensor undefined;
  EXPECT_THROWS_WITHOUT_CRASH(undefined.item<float>(), Error);
}

TEST(TensorTest, DataPtrOfAViewPointsAtItsFirstElement) {
  Tensor t = tensor(std::vector<int32_t>{10, 11, 12, 13, 14, 15}, Shape{2, 3});
  Tensor row = t.slice(0, 1, 2);
  EXPECT_EQ(row.storage_offset(), 3);
  EXPECT_EQ(row.data_ptr<int32_t>(), t.data_ptr<int32_t>() + 3);
  EXPECT_EQ(row.data_ptr<int32_t>()[0], 13);
}

// ---- contiguous, clone, to, detach -----------------------------------------------------

TEST(TensorTest, ContiguousOfAContiguousTensorIsItself) {
  Tensor t = zeros({2, 3});
  EXPECT_TRUE(t.contiguous().is_same(t));
}

TEST(TensorTest, ContiguousCopiesATransposeInRowMajorOrder) {
  Tensor t = tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  Tensor tt = t.t();
  ASSERT_FALSE(tt.is_contiguous());
  Tensor c = tt.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_THAT(c.sizes(), ElementsAre(3, 2));
  EXPECT_THAT(c.strides(), ElementsAre(2, 1));
  EXPECT_NE(c.impl()->storage, t.impl()->storage);
  const float* p = c.data_ptr<float>();
  EXPECT_EQ(std::vector<float>(p, p + 6), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(TensorTest, ContiguousOfAnExpandedTensorMaterializes) {
  Tensor row = tensor(std::vector<int64_t>{1, 2, 3});
  Tensor c = row.expand({2, 3}).contiguous();
  EXPECT_THAT(c.strides(), ElementsAre(3, 1));
  EXPECT_EQ(valuesAsInt64(c), (std::vector<int64_t>{1, 2, 3, 1, 2, 3}));
}

TEST(TensorTest, CloneNeverSharesStorage) {
  Tensor t = tensor(std::vector<double>{1, 2, 3});
  Tensor c = t.clone();
  EXPECT_FALSE(c.is_same(t));
  EXPECT_NE(c.impl()->storage, t.impl()->storage);
  EXPECT_EQ(c.dtype(), kFloat64);
  c.data_ptr<double>()[0] = 9;
  EXPECT_EQ(t.data_ptr<double>()[0], 1.0);
}

TEST(TensorTest, CloneOfAViewIsContiguous) {
  Tensor t = tensor(std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7}, Shape{2, 4});
  Tensor c = t.slice(1, 1, 4, 2).clone();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.storage_offset(), 0);
  EXPECT_EQ(valuesAsInt64(c), (std::vector<int64_t>{1, 3, 5, 7}));
}

TEST(TensorTest, ToConverts) {
  Tensor t = tensor(std::vector<float>{-1.5f, 2.7f});
  EXPECT_TRUE(t.to(kFloat32).is_same(t));
  Tensor i = t.to(kInt32);
  EXPECT_EQ(i.dtype(), kInt32);
  EXPECT_EQ(valuesAsInt64(i), (std::vector<int64_t>{-1, 2}));
}

TEST(TensorTest, DetachSharesDataWithoutHistory) {
  Tensor x = tensor(std::vector<double>{1, 2});
  x.requires_grad_();
  Tensor y = mul(x, 3.0);
  Tensor d = y.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_leaf());
  EXPECT_EQ(d.grad_fn(), nullptr);
  EXPECT_EQ(d.impl()->storage, y.impl()->storage);
  EXPECT_TRUE(y.requires_grad());  // the original keeps its history
  d.data_ptr<double>()[1] = 0;
  EXPECT_EQ(valuesAsDouble(y), (std::vector<double>{3, 0}));
}

// ---- factories -----------------------------------------------------------------------

TEST(TensorTest, FullZerosOnesAndLikes) {
  EXPECT_EQ(valuesAsDouble(full({2, 2}, 1.5)), (std::vector<double>{1.5, 1.5, 1.5, 1.5}));
  EXPECT_EQ(valuesAsInt64(full({3}, 7, kInt32)), (std::vector<int64_t>{7, 7, 7}));
  EXPECT_EQ(valuesAsDouble(zeros({3}, kFloat64)), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(valuesAsDouble(ones({2}, kBFloat16)), (std::vector<double>{1, 1}));
  EXPECT_EQ(valuesAsInt64(ones({2}, kBool)), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(valuesAsDouble(empty({2})), (std::vector<double>{0, 0}));  // kiln: zero-filled

  Tensor like = zeros({2, 3}, kInt64);
  EXPECT_EQ(zeros_like(like).dtype(), kInt64);
  EXPECT_THAT(ones_like(like).sizes(), ElementsAre(2, 3));
  EXPECT_EQ(valuesAsInt64(ones_like(like)), std::vector<int64_t>(6, 1));
  EXPECT_EQ(valuesAsInt64(full_like(like, -4)), std::vector<int64_t>(6, -4));
}

TEST(TensorTest, ZerosLikeOfAViewIsContiguous) {
  Tensor t = zeros({3, 4}).t();
  Tensor z = zeros_like(t);
  EXPECT_THAT(z.sizes(), ElementsAre(4, 3));
  EXPECT_TRUE(z.is_contiguous());
}

TEST(TensorTest, ScalarTensorTakesTheDType) {
  EXPECT_EQ(scalar_tensor(1.0).dtype(), kFloat32);
  EXPECT_EQ(scalar_tensor(1.0, kInt64).dtype(), kInt64);
  EXPECT_EQ(scalar_tensor(-3.9, kInt64).item<int64_t>(), -3);
}

TEST(TensorTest, NegativeShapeIsShapeError) {
  EXPECT_KILN_ERROR_HAS(zeros({2, -1}), ShapeError, "shape [2, -1] has negative dimension -1");
  EXPECT_KILN_ERROR_HAS(full({-3}, 1.0), ShapeError, "negative dimension -3");
}

// tensor({...}) keeps the C++ element type: float, double, int32, int64, bool. (LibTorch's
// torch::tensor gives int64 for int and float32 for double, as Python does; kiln keeps the
// type the caller wrote.)
TEST(TensorTest, TensorFromValues) {
  Tensor f = tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_THAT(f.sizes(), ElementsAre(2, 3));
  EXPECT_TRUE(f.is_contiguous());
  EXPECT_EQ(valuesAsDouble(f), (std::vector<double>{1, 2, 3, 4, 5, 6}));

  EXPECT_EQ(tensor(std::vector<double>{0.1}).dtype(), kFloat64);
  EXPECT_EQ(tensor(std::vector<double>{0.1}).item<double>(), 0.1);
  EXPECT_EQ(tensor(std::vector<int32_t>{1}).dtype(), kInt32);
  EXPECT_EQ(tensor(std::vector<int64_t>{1}).dtype(), kInt64);
  Tensor b = tensor(std::vector<bool>{true, false});
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(valuesAsInt64(b), (std::vector<int64_t>{1, 0}));
}

TEST(TensorTest, TensorFromValuesDefaultsTo1D) {
  Tensor t = tensor(std::vector<int64_t>{4, 5, 6});
  EXPECT_THAT(t.sizes(), ElementsAre(3));
  Tensor e = tensor(std::vector<float>{});
  EXPECT_THAT(e.sizes(), ElementsAre(0));
  Tensor s = tensor(std::vector<float>{2.5f}, Shape{});
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<float>(), 2.5f);
}

TEST(TensorTest, TensorFromValuesShapeMismatchIsShapeError) {
  std::vector<float> five{1, 2, 3, 4, 5};
  EXPECT_KILN_ERROR(tensor(five, Shape{2, 3}), ShapeError,
                    "kiln::tensor: 5 values do not fill shape [2, 3]" + at());
  EXPECT_KILN_ERROR(tensor(five, Shape{}), ShapeError,
                    "kiln::tensor: 5 values do not fill shape []" + at());
}

TEST(TensorTest, TensorFromValuesRejectsNegativeShapes) {
  // [-1, -5] has numel 5 by plain multiplication; the shape is still invalid.
  std::vector<float> five{1, 2, 3, 4, 5};
  EXPECT_THROW(tensor(five, Shape{-1, -5}), ShapeError);
}

TEST(TensorTest, FromBlobSharesTheCallersMemory) {
  std::vector<float> data{1, 2, 3, 4, 5, 6};
  Tensor t = from_blob(data.data(), {2, 3});
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_THAT(t.sizes(), ElementsAre(2, 3));
  EXPECT_THAT(t.strides(), ElementsAre(3, 1));
  EXPECT_EQ(t.data_ptr<float>(), data.data());
  data[4] = 50;
  EXPECT_EQ(t.slice(0, 1, 2).slice(1, 1, 2).item<float>(), 50.0f);
  t.data_ptr<float>()[0] = -1;
  EXPECT_EQ(data[0], -1.0f);
}

TEST(TensorTest, FromBlobWithADType) {
  std::vector<int64_t> data{7, 8, 9};
  Tensor t = from_blob(data.data(), {3}, kInt64);
  EXPECT_EQ(t.dtype(), kInt64);
  EXPECT_EQ(valuesAsInt64(t), data);
  EXPECT_EQ(t.device(), kCPU);
}

TEST(TensorTest, FromBlobOpsReadIt) {
  std::vector<double> data{1, 4, 9};
  Tensor t = from_blob(data.data(), {3}, kFloat64);
  EXPECT_EQ(valuesAsDouble(sqrt(t)), (std::vector<double>{1, 2, 3}));
}

TEST(TensorTest, FromBlobNegativeShapeIsShapeError) {
  float x = 0;
  EXPECT_KILN_ERROR(from_blob(&x, {2, -1}), ShapeError,
                    "kiln::from_blob: shape [2, -1] has negative dimension -1 at index 1" + at());
}

}  // namespace
}  // namespace kiln
