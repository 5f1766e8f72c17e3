// The op table's integrity, and the ops written last (dropout, stack, random factories).
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "frontend/core/ops/OpTable.h"
#include "kiln/core/Collective.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "test/unit/frontend/GradCheck.h"
#include "test/unit/frontend/core/ExpectError.h"

namespace kiln {
namespace {

TEST(OpTable, EveryOpHasAUniqueNameAKilnOpAShapeRuleAndOneImplementation) {
  std::set<std::string> names;
  for (const OpDef* op : ops::allOps()) {
    SCOPED_TRACE(std::string(op->name));
    EXPECT_TRUE(names.insert(std::string(op->name)).second);
    EXPECT_EQ(op->kilnOp.substr(0, 5), "kiln.");
    EXPECT_NE(op->shape, nullptr);
    EXPECT_NE(op->kernel == nullptr, op->view == nullptr);
  }
  EXPECT_GE(names.size(), 38u);
}

// The primitives' shape rules check what the public functions check before dispatching,
// so that they reject what the kiln dialect rejects (test/unit/jit/ShapeAgreementTest).
TEST(OpTable, ShapeRulesRejectWhatTheDialectRejects) {
  auto shapeOf = [](const OpDef& op, std::vector<TensorMeta> inputs, const Attrs& attrs) {
    return op.shape(op, inputs, attrs, SourceLoc::current());
  };
  const TensorMeta x{{4, 3}};
  EXPECT_KILN_ERROR_HAS(shapeOf(ops::kReshape, {x}, {{"shape", Shape{-1, -12}}}), ShapeError,
                        "kiln::reshape: shape [-1, -12] has negative dimension -1 at index 0");
  EXPECT_KILN_ERROR_HAS(shapeOf(ops::kExpand, {TensorMeta{{1}}}, {{"dims", Shape{0}}, {"shape", Shape{-3}}}),
                        ShapeError, "kiln::expand: shape [-3] has negative dimension -3 at index 0");
  EXPECT_KILN_ERROR_HAS(
      shapeOf(ops::kSlice, {x}, {{"start", Shape{0}}, {"limit", Shape{4}}, {"stride", Shape{1}}}), ShapeError,
      "kiln::slice: start [0], limit [4] and stride [1] need one entry per dim of a tensor of shape [4, 3]");
  EXPECT_KILN_ERROR_HAS(shapeOf(ops::kConcat, {x, x}, {{"dim", int64_t(2)}}), ShapeError,
                        "kiln::cat: dim 2 is out of range for tensor 0's shape [4, 3]");
  EXPECT_KILN_ERROR_HAS(
      shapeOf(ops::kReduce, {TensorMeta{{}}}, {{"kind", std::string("sum")}, {"dims", Shape{0}}, {"keep_dims", false}}),
      ShapeError, "kiln::sum: dims [0] must be increasing and within the dims of a tensor of shape []");
  const TensorMeta key{{2}, kInt64};
  Attrs normal{{"distribution", std::string("normal")}, {"shape", Shape{2}}, {"dtype", kInt32}, {"a", 0.0}, {"b", 1.0}};
  EXPECT_KILN_ERROR_HAS(shapeOf(ops::kRng, {key}, normal), TypeError,
                        "kiln::rng: distribution 'normal' needs a floating-point dtype, got int32");
  normal.set("dtype", kFloat32).set("b", -1.0);
  EXPECT_KILN_ERROR_HAS(shapeOf(ops::kRng, {key}, normal), Error,
                        "kiln::rng: parameters a = 0, b = -1 are out of range for distribution 'normal'");
}

TEST(Dropout, KeepsAboutOneMinusPAndScalesTheKeptValues) {
  manual_seed(7);
  Tensor y = dropout(ones({100000}), 0.25, true);
  Tensor kept = sum(gt(y, 0.0));
  EXPECT_NEAR(kept.item<double>() / 100000.0, 0.75, 0.01);
  EXPECT_FLOAT_EQ(amax(y).item<float>(), float(1.0 / 0.75));
  EXPECT_FLOAT_EQ(amin(y).item<float>(), 0.0f);
}

TEST(Dropout, IsReproducibleFromTheSeedAndTheIdentityInEval) {
  Tensor x = arange(0.0, 64.0, 1.0, kFloat32);
  manual_seed(3);
  Tensor a = dropout(x, 0.5, true);
  manual_seed(3);
  Tensor b = dropout(x, 0.5, true);
  EXPECT_TRUE(sum(eq(a, b).to(kInt64)).item<int64_t>() == 64);
  EXPECT_TRUE(dropout(x, 0.5, false).is_same(x));
}

TEST(Dropout, GradientFlowsThroughTheKeptElementsOnly) {
  manual_seed(11);
  Tensor x = ones({1000}, kFloat64).requires_grad_();
  Tensor y = dropout(x, 0.5, true);
  sum(y).backward();
  EXPECT_TRUE(sum(eq(x.grad(), y.detach()).to(kInt64)).item<int64_t>() == 1000);
}

TEST(Dropout, RejectsABadProbabilityAndIntegerInputs) {
  EXPECT_THROW(dropout(ones({2}), 1.5), Error);
  EXPECT_THROW(dropout(ones({2}, kInt64), 0.5), TypeError);
}

TEST(Stack, JoinsAlongANewDim) {
  Tensor a = tensor(std::vector<float>{1, 2, 3}), b = tensor(std::vector<float>{4, 5, 6});
  Tensor s = stack({a, b}, 1);
  EXPECT_EQ(s.sizes(), (Shape{3, 2}));
  EXPECT_FLOAT_EQ(s.narrow(0, 2, 1).narrow(1, 1, 1).item<float>(), 6.0f);
  EXPECT_EQ(stack({a, b}, -1).sizes(), (Shape{3, 2}));
  EXPECT_EQ(stack({a, b}).sizes(), (Shape{2, 3}));
}

TEST(Stack, RejectsDifferentShapes) {
  try {
    stack({ones({3}), ones({2})});
    FAIL() << "stack of different shapes did not throw";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 1 has shape [2] but tensor 0 has shape [3]"),
              std::string::npos)
        << e.what();
  }
}

TEST(Random, SameSeedSameStreamAndDrawsAdvanceTheGenerator) {
  manual_seed(42);
  Tensor a = randn({5});
  Tensor b = randn({5});
  manual_seed(42);
  Tensor c = randn({5});
  EXPECT_EQ(sum(eq(a, c).to(kInt64)).item<int64_t>(), 5);
  EXPECT_LT(sum(eq(a, b).to(kInt64)).item<int64_t>(), 5);
  Tensor r = randint(3, 7, {1000});
  EXPECT_EQ(r.dtype(), kInt64);
  EXPECT_EQ(amin(r).item<int64_t>(), 3);
  EXPECT_EQ(amax(r).item<int64_t>(), 6);
}

std::vector<double> values(const Tensor& t) {
  Tensor c = t.to(kFloat64).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

// PyTorch 1.13: torch.tensor(v).prod().backward() for each v.
TEST(Prod, GradientIsExactAroundZeros) {
  const std::vector<std::pair<std::vector<double>, std::vector<double>>> cases = {
      {{2, 0, 3}, {0, 6, 0}}, {{0, 0, 3}, {0, 0, 0}}, {{2, 5, 3}, {15, 6, 10}}};
  for (const auto& [in, expected] : cases) {
    Tensor x = tensor(in).requires_grad_();
    prod(x).backward();
    EXPECT_EQ(values(x.grad()), expected);
  }
  Tensor m = tensor(std::vector<double>{1, 0, 2, 3, 4, 0.5}, Shape{2, 3}).requires_grad_();
  sum(prod(m, {1})).backward();
  EXPECT_EQ(values(m.grad()), (std::vector<double>{0, 2, 0, 2, 1.5, 12}));
}

TEST(Prod, GradientMatchesFiniteDifferences) {
  manual_seed(4);
  EXPECT_TRUE(kiln::testing::gradcheck(
      [](const std::vector<Tensor>& in) { return prod(in[0], {1}, true); }, {randn({3, 4}, kFloat64)}));
}

// Contiguous inputs with consecutive reduced dims reduce in place; other layouts are
// packed first. Both paths must agree, on shapes that span several column chunks.
TEST(Reduce, InPlaceAndPackedPathsAgree) {
  manual_seed(8);
  Tensor x = randn({7, 1300, 3}, kFloat64);
  Tensor y = x.permute({2, 0, 1}).contiguous().permute({1, 2, 0});  // same values, other strides
  ASSERT_FALSE(y.is_contiguous());
  for (const Shape& dims : std::vector<Shape>{{0}, {1}, {2}, {0, 1}, {1, 2}, {0, 2}, {}}) {
    SCOPED_TRACE(formatShape(dims));
    EXPECT_LT(amax(abs(sub(sum(x, dims), sum(y, dims)))).item<double>(), 1e-9);
    EXPECT_EQ(amax(abs(sub(amax(x, dims), amax(y, dims)))).item<double>(), 0.0);
    EXPECT_EQ(amax(abs(sub(amin(x, dims, true), amin(y, dims, true)))).item<double>(), 0.0);
  }
}

TEST(MaxMin, LibTorchOverloads) {
  Tensor x = tensor(std::vector<float>{1, 5, 5, 7, 2, 0}, Shape{2, 3});
  auto [v, i] = max(x, 1);
  EXPECT_EQ(values(v), (std::vector<double>{5, 7}));
  EXPECT_EQ(values(i), (std::vector<double>{1, 0}));
  EXPECT_EQ(i.dtype(), kInt64);
  auto [mv, mi] = min(x, 0, true);
  EXPECT_EQ(mv.sizes(), (Shape{1, 3}));
  EXPECT_EQ(values(mi), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(max(x).item<float>(), 7.0f);
  EXPECT_EQ(values(min(x, full({3}, 3.0))), (std::vector<double>{1, 3, 3, 3, 2, 0}));
}

// kiln.all_reduce runs over MPI, which the core does not link: without kiln::distributed
// initialized its kernel says so (the MPI runs are in test/unit/frontend/distributed).
TEST(OpTable, AllReduceNeedsDistributedInit) {
  EXPECT_KILN_ERROR_HAS(all_reduce_op(ones({4}), "sum"), Error,
                        "all_reduce: a float32 [4] tensor cannot be reduced over the ranks of an "
                        "MPI job before kiln::distributed::init()");
  EXPECT_KILN_ERROR_HAS(all_reduce_op(ones({4}, kInt64), "mean"), TypeError, "all_reduce");
  EXPECT_KILN_ERROR_HAS(all_reduce_op(ones({4}), "min"), Error, "kind must be sum, mean or max");
}

}  // namespace
}  // namespace kiln
