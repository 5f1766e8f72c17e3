// The op table's integrity, and the ops written last (dropout, stack, random factories).
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "frontend/core/ops/OpTable.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"

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

}  // namespace
}  // namespace kiln
