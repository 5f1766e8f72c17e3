// LibTorch's spellings on top of the op table: Tensor methods with their overloads, Scalar
// and item(), compound assignment, tensor() from nested lists, options(), x[i].
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "test/unit/frontend/Golden.h"
#include "test/unit/frontend/core/ExpectError.h"

namespace kiln {
namespace {

using golden::valuesAsDouble;
using golden::valuesAsInt64;
using kiln::testing::at;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Pointwise;

// [[1, -2, 3], [-4, 5, -6]]
Tensor matrix() { return tensor({{1.0, -2.0, 3.0}, {-4.0, 5.0, -6.0}}); }

// ---- tensor() from braced lists -----------------------------------------------------------

TEST(TensorMethodsTest, TensorFromNestedListsTakesTheNestingAsShape) {
  Tensor x = matrix();
  EXPECT_EQ(x.sizes(), (Shape{2, 3}));
  EXPECT_EQ(x.dtype(), kFloat32);  // floating literals give the default dtype, as LibTorch
  EXPECT_THAT(valuesAsDouble(x), ElementsAre(1, -2, 3, -4, 5, -6));
  Tensor cube = tensor({{{1, 2}}, {{3, 4}}});
  EXPECT_EQ(cube.sizes(), (Shape{2, 1, 2}));
  EXPECT_EQ(cube.dtype(), kInt64);
  EXPECT_THAT(valuesAsInt64(cube), ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(tensor({true, false}).dtype(), kBool);
  EXPECT_EQ(tensor(2.5).dim(), 0);
  EXPECT_EQ(tensor({}).sizes(), (Shape{0}));
}

TEST(TensorMethodsTest, TensorFromListsTakesOptions) {
  Tensor x = tensor({1, 2}, kFloat64);
  EXPECT_EQ(x.dtype(), kFloat64);
  EXPECT_THAT(valuesAsDouble(x), ElementsAre(1, 2));
  Tensor mixed = tensor({1, 2.5});  // the highest kind wins
  EXPECT_EQ(mixed.dtype(), kFloat32);
  Tensor leaf = tensor({1.0, 2.0}, TensorOptions().dtype(kFloat64).requires_grad(true));
  EXPECT_TRUE(leaf.requires_grad());
  EXPECT_TRUE(ones({2}, requires_grad()).requires_grad());
  EXPECT_TRUE(randn({2}, requires_grad()).requires_grad());
  EXPECT_FALSE(zeros({2}).requires_grad());
}

TEST(TensorMethodsTest, ARaggedListIsAnError) {
  EXPECT_KILN_ERROR(tensor({{1.0, 2.0}, {3.0}}), ShapeError,
                    "kiln::tensor: a nested list is ragged: an element of shape [1] beside one of "
                    "shape [2]" + at());
  EXPECT_KILN_ERROR_HAS(tensor({{1, 2}, 3}), ShapeError, "ragged");
}

TEST(TensorMethodsTest, OptionsDescribeTheTensor) {
  Tensor x = tensor({1, 2}, kInt32);
  TensorOptions o = x.options();
  EXPECT_EQ(o.dtype_or(kFloat32), kInt32);
  EXPECT_EQ(o.device(), Device(kCPU));
  EXPECT_EQ(zeros({3}, x.options()).dtype(), kInt32);
}

// ---- Scalar and item() ---------------------------------------------------------------

TEST(TensorMethodsTest, ItemReturnsAScalarOfTheDtypesKind) {
  Scalar f = tensor(2.5).item();
  EXPECT_TRUE(f.isFloatingPoint());
  EXPECT_EQ(f.toDouble(), 2.5);
  EXPECT_EQ(f.to<int64_t>(), 2);
  Scalar big = full({}, int64_t(9007199254740993)).item();  // 2^53 + 1 keeps its last bit
  EXPECT_TRUE(big.isIntegral(false));
  EXPECT_EQ(big.toLong(), 9007199254740993);
  Scalar flag = tensor(true).item();
  EXPECT_TRUE(flag.isBoolean());
  EXPECT_TRUE(flag.isIntegral(true));
  EXPECT_FALSE(flag.isIntegral(false));
  EXPECT_EQ(tensor(3.0).item<float>(), 3.0f);  // item<T>() is still there
  std::ostringstream os;
  os << f << " " << big << " " << flag;
  EXPECT_EQ(os.str(), "2.5 9007199254740993 true");
  EXPECT_KILN_ERROR(matrix().item(), ShapeError,
                    "kiln::item: a tensor with 6 elements cannot be converted to a scalar "
                    "(shape [2, 3])" + at());
}

TEST(TensorMethodsTest, AScalarOperandKeepsPyTorchsPromotion) {
  Tensor ints = tensor({1, 2});
  EXPECT_EQ((ints + 1).dtype(), kInt64);
  EXPECT_EQ((ints * 0.5).dtype(), kFloat32);
  Scalar s = tensor(2.0).item();
  EXPECT_THAT(valuesAsDouble(ints * s), ElementsAre(2, 4));
  EXPECT_THAT(valuesAsDouble(s - ints), ElementsAre(1, 0));
  EXPECT_THAT(valuesAsDouble(matrix().mm(tensor({{1.0}, {1.0}, {1.0}})) + s), ElementsAre(4, -3));
}

// ---- method forms --------------------------------------------------------------------

TEST(TensorMethodsTest, ReductionsTakeLibTorchsOverloads) {
  Tensor x = matrix();
  EXPECT_EQ(x.sum().item<double>(), -3);
  EXPECT_THAT(valuesAsDouble(x.sum(1)), ElementsAre(2, -5));
  EXPECT_EQ(x.sum(1, /*keepdim=*/true).sizes(), (Shape{2, 1}));
  EXPECT_THAT(valuesAsDouble(x.sum({0, 1})), ElementsAre(-3));
  EXPECT_THAT(valuesAsDouble(sum(x, 0)), ElementsAre(-3, 3, -3));  // and the free function
  EXPECT_THAT(valuesAsDouble(x.mean(0)), ElementsAre(-1.5, 1.5, -1.5));
  EXPECT_THAT(valuesAsDouble(x.prod(1)), ElementsAre(-6, 120));
  EXPECT_THAT(valuesAsDouble(x.amax(1)), ElementsAre(3, 5));
  EXPECT_THAT(valuesAsDouble(x.amin(0)), ElementsAre(-4, -2, -6));
  EXPECT_THAT(valuesAsDouble(x.var(1)), Pointwise(DoubleNear(1e-5), {6.3333333, 34.3333333}));
  EXPECT_THAT(valuesAsDouble(x.var(1, /*unbiased=*/false)),
              Pointwise(DoubleNear(1e-5), {4.2222222, 22.888889}));
  EXPECT_NEAR(x.std().item<double>(), 4.2308, 1e-4);
}

TEST(TensorMethodsTest, MaxMinAndArgmaxTakeLibTorchsOverloads) {
  Tensor x = matrix();
  EXPECT_EQ(x.max().item<double>(), 5);
  EXPECT_EQ(x.abs().max().item<double>(), 6);
  EXPECT_EQ(x.min().item<double>(), -6);
  auto [values, indices] = x.max(1);
  EXPECT_THAT(valuesAsDouble(values), ElementsAre(3, 5));
  EXPECT_THAT(valuesAsInt64(indices), ElementsAre(2, 1));
  auto [low, where] = x.min(0, /*keepdim=*/true);
  EXPECT_EQ(low.sizes(), (Shape{1, 3}));
  EXPECT_THAT(valuesAsInt64(where), ElementsAre(1, 0, 1));
  EXPECT_THAT(valuesAsDouble(x.max(zeros({3}))), ElementsAre(1, 0, 3, 0, 5, 0));
  EXPECT_THAT(valuesAsDouble(x.min(zeros({3}))), ElementsAre(0, -2, 0, -4, 0, -6));
  EXPECT_EQ(x.argmax().item<int64_t>(), 4);  // in the flattened tensor
  EXPECT_EQ(x.argmin().item<int64_t>(), 5);
  EXPECT_EQ(argmax(x).dim(), 0);
  EXPECT_THAT(valuesAsInt64(x.argmax(0)), ElementsAre(0, 1, 0));
  EXPECT_THAT(valuesAsInt64(x.argmin(1, true)), ElementsAre(1, 2));
}

TEST(TensorMethodsTest, ElementwiseMethodsMatchTheFreeFunctions) {
  Tensor x = matrix();
  EXPECT_THAT(valuesAsDouble(x.pow(2)), ElementsAre(1, 4, 9, 16, 25, 36));
  EXPECT_THAT(valuesAsDouble(x.abs().sqrt().pow(2)), Pointwise(DoubleNear(1e-5), {1, 2, 3, 4, 5, 6}));
  EXPECT_THAT(valuesAsDouble(x.neg()), ElementsAre(-1, 2, -3, 4, -5, 6));
  EXPECT_THAT(valuesAsDouble(x.relu()), ElementsAre(1, 0, 3, 0, 5, 0));
  EXPECT_THAT(valuesAsDouble(x.clamp(-1, 2)), ElementsAre(1, -1, 2, -1, 2, -1));
  EXPECT_THAT(valuesAsDouble(x.clamp_min(0)), ElementsAre(1, 0, 3, 0, 5, 0));
  EXPECT_THAT(valuesAsDouble(x.clamp_max(0)), ElementsAre(0, -2, 0, -4, 0, -6));
  EXPECT_THAT(valuesAsDouble(x.add(x, 2)), ElementsAre(3, -6, 9, -12, 15, -18));
  EXPECT_THAT(valuesAsDouble(x.sub(1, 3)), ElementsAre(-2, -5, 0, -7, 2, -9));
  EXPECT_THAT(valuesAsDouble(x.mul(x)), ElementsAre(1, 4, 9, 16, 25, 36));
  EXPECT_THAT(valuesAsDouble(x.div(2)), ElementsAre(0.5, -1, 1.5, -2, 2.5, -3));
  EXPECT_THAT(valuesAsInt64(x.gt(0)), ElementsAre(1, 0, 1, 0, 1, 0));
  EXPECT_THAT(valuesAsDouble(x.where(x.gt(0), zeros({1}))), ElementsAre(1, 0, 3, 0, 5, 0));
  EXPECT_THAT(valuesAsDouble(x.exp().log()), Pointwise(DoubleNear(1e-5), valuesAsDouble(x)));
  EXPECT_THAT(valuesAsDouble(x.sigmoid()), Pointwise(DoubleNear(1e-6), valuesAsDouble(sigmoid(x))));
  EXPECT_THAT(valuesAsDouble(x.softmax(1).sum(1)), Pointwise(DoubleNear(1e-6), {1.0, 1.0}));
  EXPECT_THAT(valuesAsDouble(x.log_softmax(1).exp().sum(1)), Pointwise(DoubleNear(1e-6), {1.0, 1.0}));
  EXPECT_EQ(x.type_as(tensor({1})).dtype(), kInt64);
}

TEST(TensorMethodsTest, LinearAlgebraMethods) {
  Tensor x = matrix();
  EXPECT_THAT(valuesAsDouble(x.mm(x.t())), ElementsAre(14, -32, -32, 77));
  EXPECT_THAT(valuesAsDouble(x.matmul(tensor({1.0, 1.0, 1.0}))), ElementsAre(2, -5));
  EXPECT_THAT(valuesAsDouble(tensor({10.0, 20.0, 30.0}).addmm(x.t(), x)),  // bias + xᵀ·x
              ElementsAre(27, -2, 57, -12, 49, -6, 37, -16, 75));
  EXPECT_KILN_ERROR(x.mm(x), ShapeError,
                    "kiln::matmul: cannot multiply shapes [2, 3] and [2, 3]: 3 != 2" + at());
}

TEST(TensorMethodsTest, IndexingByIntegers) {
  Tensor x = matrix();
  EXPECT_THAT(valuesAsDouble(x[1]), ElementsAre(-4, 5, -6));
  EXPECT_EQ(x[0][2].item<double>(), 3);
  EXPECT_EQ(x[-1][-3].item<double>(), -4);
  EXPECT_THAT(valuesAsDouble(x.select(1, 1)), ElementsAre(-2, 5));
  EXPECT_THAT(valuesAsDouble(x.index_select(1, tensor({2, 0}))), ElementsAre(3, 1, -6, -4));
  EXPECT_THAT(valuesAsDouble(x.gather(1, tensor({{0}, {2}}))), ElementsAre(1, -6));
  EXPECT_THAT(valuesAsDouble(x.index_add(0, tensor({0}), ones({1, 3}))), ElementsAre(2, -1, 4, -4, 5, -6));
  EXPECT_KILN_ERROR(x[2], ShapeError,
                    "kiln::select: index 2 is out of range for dim 0 of size 2 (shape [2, 3])" + at());
  EXPECT_KILN_ERROR(tensor(1.0)[0], ShapeError,
                    "kiln::select: index 0 into a 0-d tensor, which has no dims" + at());
}

// ---- compound assignment -------------------------------------------------------------

TEST(TensorMethodsTest, CompoundAssignmentWritesInPlace) {
  Tensor x = tensor({1.0, 2.0});
  Tensor alias = x;
  x += tensor({10.0, 20.0});
  x -= 1;
  x *= tensor({2.0, 3.0});
  x /= 2;
  EXPECT_THAT(valuesAsDouble(alias), ElementsAre(10, 31.5));
  Tensor n = tensor({7, 9});
  n += 1;
  EXPECT_THAT(valuesAsInt64(n), ElementsAre(8, 10));
  EXPECT_KILN_ERROR_HAS(n *= 0.5, TypeError, "can't be cast to the desired output type int64");
}

TEST(TensorMethodsTest, CompoundAssignmentOnALeafThatRequiresGradIsAnError) {
  Tensor w = ones({2}).requires_grad_();
  EXPECT_KILN_ERROR(w += 1, Error,
                    "kiln::add: a leaf tensor that requires grad (shape [2]) cannot be modified in "
                    "place; wrap the update in NoGradGuard" + at());
  EXPECT_KILN_ERROR(w -= ones({2}), Error,
                    "kiln::sub: a leaf tensor that requires grad (shape [2]) cannot be modified in "
                    "place; wrap the update in NoGradGuard" + at());
  {
    NoGradGuard noGrad;
    w -= 0.5;
  }
  EXPECT_THAT(valuesAsDouble(w), ElementsAre(0.5, 0.5));
  // Not a leaf: recorded, so the gradient flows through the update.
  Tensor y = w * 3;
  y += 1;
  y.sum().backward();
  EXPECT_THAT(valuesAsDouble(w.grad()), ElementsAre(3, 3));
}

}  // namespace
}  // namespace kiln
