// LibTorch's indexing on top of the op table: x.index({...}) with integers, Slice, None,
// Ellipsis, position tensors and masks; index_put_; nonzero; their gradients and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "test/unit/frontend/GradCheck.h"
#include "test/unit/frontend/Golden.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/core/TestTensors.h"

namespace kiln {
namespace {

using golden::valuesAsDouble;
using golden::valuesAsInt64;
using indexing::Ellipsis;
using indexing::None;
using indexing::Slice;
using testing::at;
using testing::gradcheck;
using testing::ramp;
using testing::spreadTensor;
using ::testing::ElementsAre;

// ---- integers, Slice, None, Ellipsis: views ------------------------------------------------

TEST(TensorIndexTest, IntegersAndSlicesAreTheViewsTheyName) {
  Tensor x = ramp({3, 4});  // 0..11
  Tensor column = x.index({Slice(), 1});
  EXPECT_EQ(column.sizes(), (Shape{3}));
  EXPECT_THAT(valuesAsDouble(column), ElementsAre(1, 5, 9));
  EXPECT_EQ(x.index({1, Slice(1, 3)}).impl()->storage, x.impl()->storage);  // a view
  EXPECT_THAT(valuesAsDouble(x.index({-1, Slice(None, None, 2)})), ElementsAre(8, 10));
  EXPECT_THAT(valuesAsDouble(x.index({Slice(1, None), Slice(-2)})), ElementsAre(6, 7, 10, 11));
  EXPECT_THAT(valuesAsDouble(x.index({Slice(0, 100), 3})), ElementsAre(3, 7, 11));  // clamps
  EXPECT_THAT(valuesAsDouble(x.index({1, 2})), ElementsAre(6));
  EXPECT_EQ(x.index({1, 2}).dim(), 0);
  EXPECT_TRUE(x.index({}).is_same(x));
}

// An integer into an inner dim is a view too (select is narrow + squeeze, and squeeze of the
// strided narrow is a view), so a write through it reaches the indexed tensor, as in LibTorch.
TEST(TensorIndexTest, AnIntegerIntoAnInnerDimIsAViewAWriteReaches) {
  Tensor x = ramp({2, 3});
  Tensor column = x.index({Slice(), 1});
  EXPECT_EQ(column.strides(), (Strides{3}));
  column.fill_(7.0);
  EXPECT_EQ(valuesAsDouble(x), (std::vector<double>{0, 7, 2, 3, 7, 5}));
}

TEST(TensorIndexTest, NoneAddsADimAndEllipsisStandsForTheRest) {
  Tensor x = ramp({2, 3, 4});
  EXPECT_EQ(x.index({None}).sizes(), (Shape{1, 2, 3, 4}));
  EXPECT_EQ(x.index({Ellipsis, None}).sizes(), (Shape{2, 3, 4, 1}));
  EXPECT_EQ(x.index({"...", None}).sizes(), (Shape{2, 3, 4, 1}));
  EXPECT_EQ(x.index({Slice(), None, 0}).sizes(), (Shape{2, 1, 4}));
  Tensor last = x.index({Ellipsis, 3});
  EXPECT_EQ(last.sizes(), (Shape{2, 3}));
  EXPECT_THAT(valuesAsDouble(last), ElementsAre(3, 7, 11, 15, 19, 23));
  EXPECT_THAT(valuesAsDouble(x.index({1, Ellipsis, 2})), ElementsAre(14, 18, 22));
  EXPECT_EQ(x.index({0, 0, 0, Ellipsis}).dim(), 0);
}

// ---- tensor indices: copies ----------------------------------------------------------------

TEST(TensorIndexTest, APositionTensorSelectsAlongItsDim) {
  Tensor x = ramp({3, 4});
  Tensor rows = tensor({2, 0, 2});
  Tensor picked = x.index({rows});
  EXPECT_EQ(picked.sizes(), (Shape{3, 4}));
  EXPECT_THAT(valuesAsDouble(picked), ::testing::ContainerEq(valuesAsDouble(x.index_select(0, rows))));
  Tensor cols = tensor({{-1, 0}}, kInt32);  // negative positions count from the end
  Tensor grid = x.index({Slice(), cols});
  EXPECT_EQ(grid.sizes(), (Shape{3, 1, 2}));
  EXPECT_THAT(valuesAsDouble(grid), ElementsAre(3, 0, 7, 4, 11, 8));
}

TEST(TensorIndexTest, SeveralPositionTensorsBroadcastAndPickElements) {
  Tensor x = ramp({3, 4});
  Tensor points = x.index({tensor({0, 2, 1}), tensor({3, 1, 0})});
  EXPECT_EQ(points.sizes(), (Shape{3}));
  EXPECT_THAT(valuesAsDouble(points), ElementsAre(3, 9, 4));
  // rows [[0], [2]] against cols [1, 3]: a 2 x 2 block.
  Tensor block = x.index({tensor({{0}, {2}}), tensor({1, 3})});
  EXPECT_EQ(block.sizes(), (Shape{2, 2}));
  EXPECT_THAT(valuesAsDouble(block), ElementsAre(1, 3, 9, 11));
}

TEST(TensorIndexTest, SeparatedPositionTensorsPutTheirDimsFirst) {
  Tensor x = ramp({2, 3, 4});
  Tensor picked = x.index({tensor({1, 0}), Slice(), tensor({3, 2})});
  EXPECT_EQ(picked.sizes(), (Shape{2, 3}));  // PyTorch: the broadcast dims, then the slice
  EXPECT_THAT(valuesAsDouble(picked), ElementsAre(15, 19, 23, 2, 6, 10));
}

TEST(TensorIndexTest, AMaskSelectsTheElementsWhereItIsTrue) {
  Tensor x = tensor({{1.0, -2.0, 3.0}, {-4.0, 5.0, -6.0}});
  Tensor positive = x.index({x > 0});
  EXPECT_EQ(positive.sizes(), (Shape{3}));
  EXPECT_THAT(valuesAsDouble(positive), ElementsAre(1, 3, 5));
  Tensor rowMask = tensor({false, true});
  EXPECT_THAT(valuesAsDouble(x.index({rowMask})), ElementsAre(-4, 5, -6));
  Tensor colMask = tensor({true, false, true});
  EXPECT_EQ(x.index({Slice(), colMask}).sizes(), (Shape{2, 2}));
  EXPECT_THAT(valuesAsDouble(x.index({Slice(), colMask})), ElementsAre(1, 3, -4, -6));
  EXPECT_EQ(x.index({x > 100}).sizes(), (Shape{0}));
}

TEST(TensorIndexTest, NonzeroListsPositionsInRowMajorOrder) {
  Tensor x = tensor({{0, 3, 0}, {7, 0, 1}});
  Tensor positions = x.nonzero();
  EXPECT_EQ(positions.sizes(), (Shape{3, 2}));
  EXPECT_EQ(positions.dtype(), kInt64);
  EXPECT_THAT(valuesAsInt64(positions), ElementsAre(0, 1, 1, 0, 1, 2));
  EXPECT_EQ(nonzero(zeros({4})).sizes(), (Shape{0, 1}));
}

// ---- gradients -----------------------------------------------------------------------------

TEST(TensorIndexTest, GradientsFlowBackToTheIndexedElements) {
  Tensor x = ones({2, 3}, requires_grad());
  // Repeated positions accumulate, as LibTorch's IndexBackward.
  x.index({Slice(), tensor({0, 0, 2})}).sum().backward();
  EXPECT_THAT(valuesAsDouble(x.grad()), ElementsAre(2, 0, 1, 2, 0, 1));
  Tensor y = ones({2, 3}, requires_grad());
  y.index({y.detach() > 0}).sum().backward();
  EXPECT_THAT(valuesAsDouble(y.grad()), ElementsAre(1, 1, 1, 1, 1, 1));
  Tensor ids = tensor({2, 0});
  EXPECT_TRUE(gradcheck([&](auto& v) { return v[0].index({ids, Slice(1, None), None}); },
                        {spreadTensor({3, 4}, 7, -2, 2, kFloat64)}));
  EXPECT_TRUE(gradcheck([&](auto& v) { return v[0].index({Ellipsis, tensor({1, 1}), 0}); },
                        {spreadTensor({2, 3, 2}, 8, -2, 2, kFloat64)}));
}

// ---- index_put_ ------------------------------------------------------------------------------

TEST(TensorIndexTest, IndexPutWritesScalarsAndTensorsInPlace) {
  Tensor x = tensor({{1.0, -2.0, 3.0}, {-4.0, 5.0, -6.0}});
  Tensor handle = x;
  x.index_put_({x < 0}, 0);
  EXPECT_TRUE(handle.is_same(x));
  EXPECT_THAT(valuesAsDouble(x), ElementsAre(1, 0, 3, 0, 5, 0));
  x.index_put_({Slice(), 1}, tensor({7.0f, 8.0f}));
  EXPECT_THAT(valuesAsDouble(x), ElementsAre(1, 7, 3, 0, 8, 0));
  x.index_put_({1}, tensor({9.0f}));  // broadcast to the row
  EXPECT_THAT(valuesAsDouble(x), ElementsAre(1, 7, 3, 9, 9, 9));
  x.index_put_({tensor({0, 1}), tensor({2, 0})}, tensor({-1.0f, -2.0f}));
  EXPECT_THAT(valuesAsDouble(x), ElementsAre(1, 7, -1, -2, 9, 9));
  x.index_put_({tensor({0, 0}), 0}, 5);  // a repeated position still gets the scalar
  EXPECT_THAT(valuesAsDouble(x), ElementsAre(5, 7, -1, -2, 9, 9));
  Tensor ints = tensor({1, 2, 3});
  ints.index_put_({Slice(1)}, 2.9);  // a Scalar takes the tensor's dtype, as fill_
  EXPECT_THAT(valuesAsInt64(ints), ElementsAre(1, 2, 2));
}

TEST(TensorIndexTest, IndexPutIsDifferentiable) {
  Tensor w = ones({2}, requires_grad());
  Tensor x = ramp({2, 3}) * 1.0;
  x.index_put_({Slice(), 0}, w * 3.0);
  EXPECT_TRUE(x.requires_grad());
  (x * ramp({2, 3}, kFloat32, 1)).sum().backward();  // weights 1..6
  EXPECT_THAT(valuesAsDouble(w.grad()), ElementsAre(3, 12));
  Tensor a = ones({2, 3}, requires_grad());
  Tensor b = a * 2.0;
  b.index_put_({0}, 0);
  b.sum().backward();
  EXPECT_THAT(valuesAsDouble(a.grad()), ElementsAre(0, 0, 0, 2, 2, 2));  // overwritten: no gradient
  Tensor rows = tensor({1});
  EXPECT_TRUE(gradcheck([&](auto& v) { return (v[0] * 1.0).index_put_({rows}, v[1]); },
                        {spreadTensor({2, 3}, 3, -2, 2, kFloat64), spreadTensor({3}, 4, -2, 2, kFloat64)}));
}

TEST(TensorIndexTest, IndexPutFollowsTheInPlaceRules) {
  Tensor leaf = ones({2, 3}, requires_grad());
  EXPECT_KILN_ERROR(leaf.index_put_({0}, 1), Error,
                    "kiln::index_put_: a leaf tensor that requires grad (shape [2, 3]) cannot be "
                    "modified in place; wrap the update in NoGradGuard" + at());
  {
    NoGradGuard noGrad;
    leaf.index_put_({0}, 4);
  }
  EXPECT_THAT(valuesAsDouble(leaf), ElementsAre(4, 4, 4, 1, 1, 1));
  Tensor x = zeros({2, 3});
  EXPECT_KILN_ERROR(x.index_put_({0}, tensor({1, 2, 3})), TypeError,
                    "kiln::index_put_: values of dtype int64 must have the dtype of the tensor of "
                    "shape [2, 3], float32" + at());
  EXPECT_KILN_ERROR(x.index_put_({0}, ones({2})), ShapeError,
                    "kiln::index_put_: values of shape [2] cannot be broadcast to the indexed shape "
                    "[3] of a tensor of shape [2, 3]" + at());
  EXPECT_KILN_ERROR(x.index_put_({Slice(), 5}, 1), ShapeError,
                    "kiln::index_put_: index 5 is out of range for dim 1 of size 3 (tensor of shape "
                    "[2, 3])" + at());
}

// ---- errors ----------------------------------------------------------------------------------

TEST(TensorIndexTest, BadIndicesNameTheOpTheShapesAndTheLine) {
  Tensor x = ramp({2, 3});
  EXPECT_KILN_ERROR(x.index({2}), ShapeError,
                    "kiln::index: index 2 is out of range for dim 0 of size 2 (tensor of shape [2, 3])" + at());
  EXPECT_KILN_ERROR(x.index({0, 0, 0}), ShapeError,
                    "kiln::index: too many indices for a tensor of shape [2, 3]: 3 dims indexed" + at());
  EXPECT_KILN_ERROR(x.index({Ellipsis, "..."}), ShapeError,
                    "kiln::index: an index can only have a single ellipsis, got 2 (tensor of shape "
                    "[2, 3])" + at());
  EXPECT_KILN_ERROR(x.index({Slice(None, None, -1)}), ShapeError,
                    "kiln::index: slice step must be positive, got -1 (dim 0 of a tensor of shape [2, 3])" + at());
  EXPECT_KILN_ERROR(x.index({Slice(), tensor({0, 3})}), ShapeError,
                    "kiln::index: index 3 is out of range for a dim of size 3 (index tensor of shape "
                    "[2] into a tensor of shape [2, 3])" + at());
  EXPECT_KILN_ERROR(x.index({tensor({true, false, true})}), ShapeError,
                    "kiln::index: a mask of shape [3] does not match shape [2] at dim 0 of a tensor "
                    "of shape [2, 3]" + at());
  EXPECT_KILN_ERROR(x.index({tensor({0.5})}), TypeError,
                    "kiln::index: tensors used as indices must be int64, int32 or bool, got float32 "
                    "(index of shape [1] into a tensor of shape [2, 3])" + at());
  EXPECT_KILN_ERROR(x.index({"::"}), Error,
                    "kiln::index: the only string index is \"...\", got \"::\"" + at());
  EXPECT_KILN_ERROR_HAS(x.index({tensor({0, 1}), tensor({0, 1, 2})}), ShapeError, "kiln::index:");
}

}  // namespace
}  // namespace kiln
