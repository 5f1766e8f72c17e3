// Autograd: backward() and its errors, accumulation, retain_graph, NoGradGuard, detach,
// in-place rules, and a finite-difference gradcheck of every differentiable op.
#include "kiln/core/Autograd.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "frontend/core/ops/OpTable.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Tensor.h"
#include "test/unit/frontend/GradCheck.h"
#include "test/unit/frontend/Golden.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/core/TestTensors.h"

// The op table's add, for in-place updates through dispatchInPlace until the public
// add_ exists. Declared here rather than by including the core's private OpTable.h.
namespace kiln::ops {
extern const OpDef kAdd;
}  // namespace kiln::ops

namespace kiln {
namespace {

using golden::valuesAsDouble;
using kiln::testing::at;
using kiln::testing::gradcheck;
using kiln::testing::ramp;
using kiln::testing::signedAwayFromZero;
using kiln::testing::spreadTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using D = std::vector<double>;
using Inputs = std::vector<Tensor>;

Tensor leaf(const D& values, Shape shape = {}) {
  if (shape.empty()) shape = {int64_t(values.size())};
  Tensor t = tensor(values, shape);
  t.requires_grad_();
  return t;
}

// ---- backward --------------------------------------------------------------------------------

TEST(AutogradTest, BackwardOfAScalar) {
  Tensor x = leaf({1, 2, 3});
  Tensor y = sum(mul(x, x));
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  y.backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().dtype(), kFloat64);
  EXPECT_THAT(x.grad().sizes(), ElementsAre(3));
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{2, 4, 6}));
}

TEST(AutogradTest, BackwardOfANonScalarTakesAGradient) {
  Tensor x = leaf({1, 2, 3});
  Tensor y = mul(x, x);
  y.backward(tensor(D{1, 0.5, 2}));
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{2, 2, 12}));
}

TEST(AutogradTest, BackwardOfAOneElementNonScalarNeedsNoGradient) {
  Tensor x = leaf({3});
  Tensor y = mul(x, 2.0).reshape({1, 1});
  y.backward();
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{2}));
}

TEST(AutogradTest, BackwardOfALeaf) {
  Tensor x = leaf({1, 2});
  x.backward(tensor(D{3, 4}));
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{3, 4}));
  Tensor s = scalar_tensor(5.0, kFloat64);
  s.requires_grad_();
  s.backward();
  EXPECT_EQ(s.grad().item<double>(), 1.0);
}

TEST(AutogradTest, NonScalarWithoutGradientIsShapeError) {
  Tensor y = mul(leaf({1, 2, 3}), 2.0);
  EXPECT_KILN_ERROR(y.backward(), ShapeError,
                    "kiln::backward: a gradient must be given for a non-scalar tensor of shape "
                    "[3]" + at());
}

TEST(AutogradTest, GradientOfTheWrongShapeIsShapeError) {
  Tensor y = mul(leaf({1, 2, 3}), 2.0);
  EXPECT_KILN_ERROR(y.backward(tensor(D{1, 2})), ShapeError,
                    "kiln::backward: gradient of shape [2] does not match the tensor's shape [3]" +
                        at());
}

TEST(AutogradTest, BackwardOfATensorWithoutGradIsAnError) {
  Tensor x = tensor(D{1, 2, 3});
  EXPECT_KILN_ERROR(sum(x).backward(), Error,
                    "kiln::backward: the tensor (shape []) does not require grad and has no "
                    "grad_fn" + at());
  EXPECT_KILN_ERROR(x.backward(x), Error,
                    "kiln::backward: the tensor (shape [3]) does not require grad and has no "
                    "grad_fn" + at());
}

TEST(AutogradTest, SecondBackwardWithoutRetainGraphIsAnError) {
  Tensor x = leaf({1, 2});
  Tensor y = sum(exp(x));
  y.backward();
  try {
    y.backward();
    ADD_FAILURE() << "expected an error from the second backward";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("backward through this part of the graph a second time; "
                                    "pass retain_graph = true to the first backward()"));
  }
}

TEST(AutogradTest, RetainGraphAllowsASecondBackwardThatAccumulates) {
  Tensor x = leaf({1, 2});
  Tensor y = sum(mul(x, x));
  y.backward(Tensor(), /*retainGraph=*/true);
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{2, 4}));
  y.backward();
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{4, 8}));
}

TEST(AutogradTest, GradientsAccumulateAcrossGraphs) {
  Tensor x = leaf({1, 2});
  sum(mul(x, 3.0)).backward();
  sum(mul(x, x)).backward();
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{5, 7}));
}

TEST(AutogradTest, ATensorUsedTwiceGetsBothContributions) {
  Tensor x = leaf({1, 2});
  sum(add(x, x)).backward();
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{2, 2}));
  Tensor z = leaf({3});
  Tensor a = mul(z, 2.0);
  sum(add(a, mul(a, a))).backward();  // d/dz (a + a^2) = 2 + 8z
  EXPECT_EQ(valuesAsDouble(z.grad()), (D{26}));
}

TEST(AutogradTest, LeavesThatDoNotRequireGradGetNone) {
  Tensor x = leaf({1, 2});
  Tensor c = tensor(D{3, 4});
  sum(mul(x, c)).backward();
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{3, 4}));
  EXPECT_FALSE(c.grad().defined());
}

TEST(AutogradTest, NonLeavesKeepNoGrad) {
  Tensor x = leaf({1, 2});
  Tensor y = mul(x, 2.0);
  sum(y).backward();
  EXPECT_FALSE(y.grad().defined());
}

// PyTorch casts each gradient to its input's dtype (validate_outputs): a float64 gradient
// for a float32 tensor accumulates a float32 .grad.
TEST(AutogradTest, LeafGradHasTheLeafsDType) {
  Tensor x = tensor(std::vector<float>{1, 2, 3});
  x.requires_grad_();
  Tensor y = mul(x, 2.0);
  y.backward(ones({3}, kFloat64));
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().dtype(), kFloat32);
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{2, 2, 2}));
}

TEST(AutogradTest, GradientThroughDTypeConversions) {
  Tensor x = tensor(std::vector<float>{1, 2});
  x.requires_grad_();
  Tensor y = sum(mul(convert(x, kFloat64), 3.0));
  EXPECT_EQ(y.dtype(), kFloat64);
  y.backward();
  EXPECT_EQ(x.grad().dtype(), kFloat32);
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{3, 3}));
}

// PyTorch gives each leaf its own .grad; an alias of another leaf's grad (or of the
// caller's gradient) would be corrupted by the first in-place update, e.g. an optimizer's.
TEST(AutogradTest, LeafGradsDoNotAliasEachOtherOrTheCallersGradient) {
  Tensor a = leaf({1, 2}), b = leaf({3, 4});
  Tensor g = tensor(D{1, 1});
  add(a, b).backward(g);
  {
    NoGradGuard noGrad;
    dispatchInPlace(ops::kAdd, a.grad(), {a.grad(), tensor(D{10, 10})}, {}, SourceLoc::current());
  }
  EXPECT_EQ(valuesAsDouble(a.grad()), (D{11, 11}));
  EXPECT_EQ(valuesAsDouble(b.grad()), (D{1, 1}));
  EXPECT_EQ(valuesAsDouble(g), (D{1, 1}));
}


// ---- mutable_grad -------------------------------------------------------------------------------

// LibTorch's mutable_grad() is the .grad slot itself: assigning sets it, assigning an
// undefined tensor clears it, a reference taken once sees what backward() leaves later.
TEST(AutogradTest, MutableGradAssignsTheGradSlot) {
  Tensor x = leaf({1, 2});
  x.mutable_grad() = full({2}, 10.0, kFloat64);
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{10, 10}));
  sum(mul(x, 3.0)).backward();  // backward adds to what was assigned
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{13, 13}));

  Tensor& slot = x.mutable_grad();
  slot = Tensor();
  EXPECT_FALSE(x.grad().defined());
  sum(mul(x, x)).backward();  // a fresh gradient, 2x, seen through the same reference
  ASSERT_TRUE(slot.defined());
  EXPECT_EQ(valuesAsDouble(slot), (D{2, 4}));
  EXPECT_TRUE(slot.is_same(x.mutable_grad()));
}

TEST(AutogradTest, MutableGradModifiesTheGradInPlace) {
  Tensor x = leaf({1, 2});
  sum(mul(x, 3.0)).backward();
  Tensor before = x.grad();
  x.mutable_grad().zero_();
  EXPECT_TRUE(x.grad().is_same(before));  // the same tensor, zeroed
  EXPECT_EQ(valuesAsDouble(before), (D{0, 0}));
  x.mutable_grad().add_(tensor(D{1, 5}));
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{1, 5}));
}

// The slot belongs to the tensor's autograd identity: detach() starts without a .grad,
// and a copied handle shares the slot.
TEST(AutogradTest, MutableGradBelongsToTheTensor) {
  Tensor x = leaf({1, 2});
  Tensor sameTensor = x;
  sameTensor.mutable_grad() = ones({2}, kFloat64);
  EXPECT_TRUE(x.grad().defined());
  EXPECT_FALSE(x.detach().grad().defined());
  Tensor d = x.detach();
  d.mutable_grad() = zeros({2}, kFloat64);
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{1, 1}));
}
// ---- requires_grad ------------------------------------------------------------------------------

TEST(AutogradTest, RequiresGradOnIntegersIsTypeError) {
  Tensor i = tensor(std::vector<int64_t>{1, 2, 3});
  EXPECT_KILN_ERROR(i.requires_grad_(), TypeError,
                    "kiln::requires_grad_: only floating-point tensors can require gradients, "
                    "got a int64 tensor of shape [3]" + at());
  Tensor b = tensor(std::vector<bool>{true});
  EXPECT_THROW(b.requires_grad_(), TypeError);
  i.requires_grad_(false);  // turning it off is always fine on a leaf
  EXPECT_FALSE(i.requires_grad());
}

TEST(AutogradTest, RequiresGradOffOnANonLeafIsAnError) {
  Tensor y = mul(leaf({1}), 2.0);
  EXPECT_KILN_ERROR(y.requires_grad_(false), Error,
                    "kiln::requires_grad_: cannot turn off requires_grad of a non-leaf tensor; "
                    "use detach()" + at());
}

TEST(AutogradTest, SixteenBitFloatsCanRequireGrad) {
  Tensor h = ones({2}, kFloat16);
  h.requires_grad_();
  sum(mul(h, 3.0)).backward();
  EXPECT_EQ(h.grad().dtype(), kFloat16);
  EXPECT_EQ(valuesAsDouble(h.grad()), (D{3, 3}));
}

TEST(AutogradTest, GraphStructure) {
  Tensor x = leaf({1, 2});
  EXPECT_TRUE(x.is_leaf());
  EXPECT_EQ(x.grad_fn(), nullptr);
  Tensor y = exp(x);
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "ExpBackward0");  // as LibTorch names its nodes
  EXPECT_EQ(x.view({2, 1}).t().grad_fn()->name(), "PermuteBackward0");
  EXPECT_EQ(y.grad_fn()->next().size(), 1u);
  EXPECT_EQ(y.grad_fn()->next()[0].leaf, x.implPtr());
  Tensor z = add(y, x);
  EXPECT_EQ(z.grad_fn()->next()[0].node, y.grad_fn());
}

TEST(AutogradTest, NonFloatingResultsDoNotRequireGrad) {
  Tensor x = leaf({-1, 2});
  EXPECT_FALSE(gt(x, 0.0).requires_grad());
  EXPECT_FALSE(convert(x, kInt64).requires_grad());
  EXPECT_FALSE(eq(x, x).requires_grad());
}

TEST(AutogradTest, OpsOfTensorsWithoutGradRecordNothing) {
  Tensor y = exp(tensor(D{1, 2}));
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(y.grad_fn(), nullptr);
}

// ---- NoGradGuard and detach ----------------------------------------------------------------------

TEST(AutogradTest, NoGradGuardStopsRecording) {
  Tensor x = leaf({1, 2});
  EXPECT_TRUE(isGradEnabled());
  {
    NoGradGuard noGrad;
    EXPECT_FALSE(isGradEnabled());
    Tensor y = mul(x, 2.0);
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
    {
      NoGradGuard nested;
      EXPECT_FALSE(isGradEnabled());
    }
    EXPECT_FALSE(isGradEnabled());
  }
  EXPECT_TRUE(isGradEnabled());
  EXPECT_TRUE(mul(x, 2.0).requires_grad());
}

TEST(AutogradTest, NoGradGuardIsPerThread) {
  NoGradGuard noGrad;
  bool otherThread = false;
  std::thread([&] { otherThread = isGradEnabled(); }).join();
  EXPECT_TRUE(otherThread);
}

// LibTorch's spellings of the switch: GradMode and AutoGradMode.
TEST(AutogradTest, GradModeAndAutoGradMode) {
  Tensor x = leaf({2, 3});
  autograd::GradMode::set_enabled(false);
  EXPECT_FALSE(autograd::GradMode::is_enabled());
  EXPECT_FALSE(mul(x, 2.0).requires_grad());
  {
    AutoGradMode enabled(true);
    EXPECT_TRUE(isGradEnabled());
    EXPECT_TRUE(mul(x, 2.0).requires_grad());
  }
  EXPECT_FALSE(isGradEnabled());
  autograd::GradMode::set_enabled(true);
  EXPECT_TRUE(mul(x, 2.0).requires_grad());
}

TEST(AutogradTest, DetachCutsTheGraph) {
  Tensor x = leaf({2, 3});
  Tensor d = x.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_FALSE(mul(d, 2.0).requires_grad());
  sum(mul(x, x.detach())).backward();  // only the first factor carries a gradient
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{2, 3}));
}

// ---- in-place ---------------------------------------------------------------------------------------

TEST(AutogradTest, InPlaceOnALeafThatRequiresGradIsRejected) {
  Tensor w = leaf({1, 2, 3});
  EXPECT_KILN_ERROR(dispatchInPlace(ops::kAdd, w, {w, ones({3}, kFloat64)}, {}, SourceLoc::current()),
                    Error,
                    "kiln::add: a leaf tensor that requires grad (shape [3]) cannot be modified in "
                    "place; wrap the update in NoGradGuard" + at());
  EXPECT_EQ(valuesAsDouble(w), (D{1, 2, 3}));
}

// PyTorch rejects any in-place write to a leaf that requires grad while grad mode is on
// ("a leaf Variable that requires grad is being used in an in-place operation"), also when
// the leaf is not an operand: w.copy_(src).
TEST(AutogradTest, InPlaceWriteOfOtherValuesIntoALeafThatRequiresGradIsRejected) {
  Tensor w = leaf({1, 2, 3});
  Tensor a = tensor(D{1, 1, 1}), b = tensor(D{2, 2, 2});
  EXPECT_THROW(dispatchInPlace(ops::kAdd, w, {a, b}, {}, SourceLoc::current()), Error);
  EXPECT_EQ(valuesAsDouble(w), (D{1, 2, 3}));
  EXPECT_TRUE(w.is_leaf());
}

TEST(AutogradTest, InPlaceOnALeafUnderNoGradGuardIsAllowed) {
  Tensor w = leaf({1, 2, 3});
  const uint64_t before = w.impl()->version;
  {
    NoGradGuard noGrad;
    dispatchInPlace(ops::kAdd, w, {w, ones({3}, kFloat64)}, {}, SourceLoc::current());
  }
  EXPECT_EQ(valuesAsDouble(w), (D{2, 3, 4}));
  EXPECT_TRUE(w.is_leaf());
  EXPECT_TRUE(w.requires_grad());
  EXPECT_EQ(w.impl()->version, before + 1);
}

TEST(AutogradTest, InPlaceShapeOrDTypeMismatchIsShapeError) {
  Tensor t = zeros({3}, kFloat64);
  EXPECT_KILN_ERROR(dispatchInPlace(ops::kAdd, t, {ones({2}, kFloat64), ones({2}, kFloat64)}, {},
                                    SourceLoc::current()),
                    ShapeError,
                    "kiln::add: the result (float64, shape [2]) cannot be written in place into a "
                    "float64 tensor of shape [3]" + at());
  EXPECT_THROW(dispatchInPlace(ops::kAdd, t, {ones({3}), ones({3})}, {}, SourceLoc::current()),
               ShapeError);
}

TEST(AutogradTest, InPlaceOnANonLeafIsRecorded) {
  Tensor x = leaf({1, 2});
  Tensor y = mul(x, 3.0);
  dispatchInPlace(ops::kAdd, y, {y, y}, {}, SourceLoc::current());  // y = 2 * 3x
  EXPECT_EQ(valuesAsDouble(y), (D{6, 12}));
  EXPECT_EQ(y.grad_fn()->name(), "AddBackward0");
  sum(y).backward();
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{6, 6}));
}

TEST(AutogradTest, InPlaceIntoAViewWritesTheBase) {
  Tensor base = zeros({2, 3}, kFloat64);
  Tensor row = base.slice(0, 1, 2);
  dispatchInPlace(ops::kAdd, row, {row, ones({1, 3}, kFloat64)}, {}, SourceLoc::current());
  EXPECT_EQ(valuesAsDouble(base), (D{0, 0, 0, 1, 1, 1}));
}

// exp saves its output for backward; overwriting that output in place must not silently
// change the gradient. PyTorch raises ("one of the variables needed for gradient computation
// has been modified by an inplace operation"); either that error or the right gradient is
// acceptable here, a wrong gradient is not.
TEST(AutogradTest, InPlaceWriteToASavedTensorIsDetectedOrHarmless) {
  Tensor x = leaf({0.5, 1.0});
  Tensor y = exp(x);
  dispatchInPlace(ops::kAdd, y, {y, ones({2}, kFloat64)}, {}, SourceLoc::current());
  try {
    sum(y).backward();
  } catch (const Error&) {
    return;  // detected, as PyTorch
  }
  ASSERT_TRUE(x.grad().defined());
  std::vector<double> g = valuesAsDouble(x.grad());
  EXPECT_NEAR(g[0], std::exp(0.5), 1e-12) << "d/dx (exp(x) + 1) is exp(x)";
  EXPECT_NEAR(g[1], std::exp(1.0), 1e-12);
}

// ---- gradcheck: every differentiable op -----------------------------------------------------------

using Fn = std::function<Tensor(const Inputs&)>;

Tensor positive(const Shape& shape, uint64_t seed) { return spreadTensor(shape, seed, 0.5, 2.0); }
Tensor anyValues(const Shape& shape, uint64_t seed) { return spreadTensor(shape, seed, -2.0, 2.0); }

struct UnaryGrad {
  const char* name;
  Tensor (*op)(const Tensor&, const SourceLoc&);
  Tensor input;
};

TEST(AutogradTest, GradcheckUnaryOps) {
  const Shape s{3, 4};
  std::vector<UnaryGrad> cases = {
      {"neg", neg, anyValues(s, 1)},
      {"abs", abs, signedAwayFromZero(s, 2)},
      {"exp", exp, anyValues(s, 3)},
      {"log", log, positive(s, 4)},
      {"sqrt", sqrt, positive(s, 5)},
      {"rsqrt", rsqrt, positive(s, 6)},
      {"tanh", tanh, anyValues(s, 7)},
      {"sigmoid", sigmoid, anyValues(s, 8)},
      {"relu", relu, signedAwayFromZero(s, 9)},
      {"sin", sin, anyValues(s, 10)},
      {"cos", cos, anyValues(s, 11)},
      {"floor", floor, ramp(s, kFloat64, -2.75, 0.37)},  // no value within eps of an integer
  };
  for (const UnaryGrad& c : cases) {
    SCOPED_TRACE(c.name);
    auto op = c.op;
    EXPECT_TRUE(gradcheck([op](const Inputs& x) { return op(x[0], SourceLoc::current()); },
                          {c.input}));
    // The same on a non-contiguous view of the input.
    EXPECT_TRUE(gradcheck([op](const Inputs& x) { return op(x[0].t(), SourceLoc::current()); },
                          {c.input}));
  }
}

struct BinaryGrad {
  const char* name;
  Tensor (*op)(const Tensor&, const Tensor&, const SourceLoc&);
};

const std::vector<BinaryGrad> kBinaryOps = {
    {"add", add}, {"sub", sub}, {"mul", mul}, {"div", div},
    {"pow", pow}, {"maximum", maximum}, {"minimum", minimum},
};

// Operands for `name`: a positive base for pow, a divisor away from zero for div.
Inputs binaryInputs(const std::string& name, const Shape& a, const Shape& b, uint64_t seed) {
  if (name == "pow") return {positive(a, seed), anyValues(b, seed + 1)};
  if (name == "div") return {anyValues(a, seed), signedAwayFromZero(b, seed + 1)};
  return {anyValues(a, seed), anyValues(b, seed + 1)};
}

// addmm, with and without relu and transposed operands (relu's inputs kept away from 0).
TEST(AutogradTest, GradcheckAddmm) {
  for (bool relu : {false, true})
    for (bool tb : {false, true}) {
      SCOPED_TRACE(std::string(relu ? "relu" : "no relu") + (tb ? ", transpose_b" : ""));
      Tensor a = signedAwayFromZero({4, 3}, 1), b = signedAwayFromZero(tb ? Shape{5, 3} : Shape{3, 5}, 2);
      Tensor bias = signedAwayFromZero({5}, 3);
      EXPECT_TRUE(gradcheck(
          [relu, tb](const Inputs& x) {
            return dispatch1(ops::kAddmm, {x[0], x[1], x[2]},
                             {{"transpose_a", false}, {"transpose_b", tb}, {"relu", relu}}, SourceLoc::current());
          },
          {a, b, bias}));
    }
  EXPECT_TRUE(gradcheck([](const Inputs& x) { return addmm(x[0], x[1], x[2]); },
                        {signedAwayFromZero({5}, 4), signedAwayFromZero({4, 3}, 5), signedAwayFromZero({3, 5}, 6)}));
}

TEST(AutogradTest, GradcheckBinaryOpsWithBroadcasting) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4}, {3, 4}}, {{3, 1}, {1, 4}}, {{4}, {2, 3, 4}}, {{2, 3, 4}, {4}}, {{2, 3}, {}}};
  uint64_t seed = 100;
  for (const BinaryGrad& c : kBinaryOps)
    for (const auto& [a, b] : shapes) {
      SCOPED_TRACE(std::string(c.name) + " " + formatShape(a) + " x " + formatShape(b));
      auto op = c.op;
      EXPECT_TRUE(gradcheck([op](const Inputs& x) { return op(x[0], x[1], SourceLoc::current()); },
                            binaryInputs(c.name, a, b, seed += 2)));
    }
}

TEST(AutogradTest, GradcheckBinaryOpsWithScalars) {
  Tensor x = positive({2, 3}, 200);
  std::vector<std::pair<const char*, Fn>> cases = {
      {"add", [](const Inputs& v) { return add(v[0], 1.5); }},
      {"rsub", [](const Inputs& v) { return sub(1.5, v[0]); }},
      {"mul", [](const Inputs& v) { return mul(v[0], -2.5); }},
      {"div", [](const Inputs& v) { return div(v[0], 4.0); }},
      {"rdiv", [](const Inputs& v) { return div(3.0, v[0]); }},
      {"pow", [](const Inputs& v) { return pow(v[0], 3.0); }},
      {"pow_fractional", [](const Inputs& v) { return pow(v[0], 0.5); }},
      {"rpow", [](const Inputs& v) { return pow(2.0, v[0]); }},
      {"maximum", [](const Inputs& v) { return maximum(v[0], 1.0); }},
      {"minimum", [](const Inputs& v) { return minimum(v[0], 1.0); }},
      {"pow_int_exponent", [](const Inputs& v) { return pow(v[0], 2); }},
  };
  for (const auto& [name, fn] : cases) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(gradcheck(fn, {x}));
  }
}

TEST(AutogradTest, GradcheckOneTensorOnBothSides) {
  for (const BinaryGrad& c : kBinaryOps) {
    if (std::string(c.name) == "maximum" || std::string(c.name) == "minimum") continue;  // ties
    SCOPED_TRACE(c.name);
    auto op = c.op;
    EXPECT_TRUE(gradcheck([op](const Inputs& x) { return op(x[0], x[0], SourceLoc::current()); },
                          {positive({2, 3}, 300)}));
  }
}

TEST(AutogradTest, GradcheckWhere) {
  Tensor cond = tensor(std::vector<bool>{true, false, false, true, true, false, true, false, false,
                                         true, false, true},
                       Shape{3, 4});
  EXPECT_TRUE(gradcheck([](const Inputs& x) { return where(x[0], x[1], x[2]); },
                        {cond, anyValues({3, 4}, 400), anyValues({3, 4}, 401)}));
  Tensor column = tensor(std::vector<bool>{true, false, true}, Shape{3, 1});
  EXPECT_TRUE(gradcheck([](const Inputs& x) { return where(x[0], x[1], x[2]); },
                        {column, anyValues({1, 4}, 402), anyValues({4}, 403)}));
  // A condition computed from the differentiated input.
  EXPECT_TRUE(gradcheck(
      [](const Inputs& x) { return where(gt(x[0], 0.0), mul(x[0], x[0]), exp(x[0])); },
      {signedAwayFromZero({3, 4}, 404)}));
}

TEST(AutogradTest, GradcheckConvert) {
  // float64 -> float32 -> float64: the float32 rounding is ~1e-7 relative, so a larger step.
  EXPECT_TRUE(gradcheck([](const Inputs& x) { return convert(convert(x[0], kFloat32), kFloat64); },
                        {anyValues({3, 4}, 500)}, /*eps=*/1e-3, /*atol=*/1e-3));
  EXPECT_TRUE(gradcheck([](const Inputs& x) { return mul(convert(x[0], kFloat64), 2.0); },
                        {anyValues({3}, 501)}));
  // An integer detour carries no gradient.
  EXPECT_TRUE(gradcheck(
      [](const Inputs& x) { return add(x[0], convert(convert(mul(x[0], 10.0), kInt64), kFloat64)); },
      {ramp({4}, kFloat64, 0.05, 0.31)}));
}

TEST(AutogradTest, GradcheckViews) {
  Tensor x = anyValues({2, 3, 4}, 600);
  std::vector<std::pair<const char*, Fn>> cases = {
      {"reshape", [](const Inputs& v) { return v[0].reshape({4, 6}); }},
      {"reshape_noncontiguous", [](const Inputs& v) { return v[0].transpose(0, 2).reshape({-1}); }},
      {"view", [](const Inputs& v) { return v[0].view({6, 4}); }},
      {"flatten", [](const Inputs& v) { return v[0].flatten(1); }},
      {"squeeze_unsqueeze", [](const Inputs& v) { return v[0].unsqueeze(1).squeeze(1); }},
      {"permute", [](const Inputs& v) { return v[0].permute({2, 0, 1}); }},
      {"transpose", [](const Inputs& v) { return v[0].transpose(-1, 0); }},
      {"t", [](const Inputs& v) { return v[0].reshape({6, 4}).t(); }},
      {"expand", [](const Inputs& v) { return v[0].slice(2, 0, 1).expand({3, 2, 3, 5}); }},
      {"expand_scalar", [](const Inputs& v) { return sum(v[0]).expand({2, 2}); }},
      {"slice_step2", [](const Inputs& v) { return v[0].slice(2, 1, 4, 2); }},
      {"slice_step3", [](const Inputs& v) { return v[0].slice(-1, 0, 4, 3); }},
      {"slice_negative", [](const Inputs& v) { return v[0].slice(1, -2, 3); }},
      {"slice_two_dims", [](const Inputs& v) { return v[0].slice(0, 1, 2).slice(2, 0, 3, 2); }},
      {"slice_empty", [](const Inputs& v) { return add(v[0].slice(1, 2, 1), 1.0); }},
      {"narrow", [](const Inputs& v) { return v[0].narrow(1, 1, 2); }},
      {"contiguous", [](const Inputs& v) { return v[0].permute({1, 2, 0}).contiguous(); }},
      {"clone", [](const Inputs& v) { return v[0].clone(); }},
  };
  for (const auto& [name, fn] : cases) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(gradcheck(fn, {x}));
  }
  EXPECT_TRUE(gradcheck([](const Inputs& v) { return v[0].slice(1, 1, 7, 2); },
                        {anyValues({3, 8}, 601)}));
}

TEST(AutogradTest, GradcheckCat) {
  EXPECT_TRUE(gradcheck([](const Inputs& v) { return cat({v[0], v[1], v[2]}, 0); },
                        {anyValues({2, 3}, 700), anyValues({1, 3}, 701), anyValues({3, 3}, 702)}));
  EXPECT_TRUE(gradcheck([](const Inputs& v) { return cat({v[0], v[1]}, -1); },
                        {anyValues({2, 3, 2}, 703), anyValues({2, 3, 1}, 704)}));
  EXPECT_TRUE(gradcheck([](const Inputs& v) { return cat({v[0].t(), v[1], v[0].t()}, 1); },
                        {anyValues({2, 3}, 705), anyValues({3, 1}, 706)}));
  // An integer operand is promoted and gets no gradient.
  EXPECT_TRUE(gradcheck([](const Inputs& v) { return cat({v[0], v[1]}); },
                        {anyValues({2}, 707), tensor(std::vector<int32_t>{4, 5})}));
}

TEST(AutogradTest, GradcheckReductions) {
  Tensor x = anyValues({2, 3, 4}, 800);  // distinct values: no max/min ties
  struct Reduction {
    const char* name;
    Tensor (*op)(const Tensor&, Dims, bool, const SourceLoc&);
  };
  const std::vector<Reduction> reductions = {
      {"sum", sum}, {"mean", mean}, {"amax", amax}, {"amin", amin}};
  const std::vector<std::pair<Shape, bool>> dimSets = {
      {{}, false}, {{}, true}, {{1}, false}, {{1}, true}, {{0, 2}, false}, {{-1}, true},
      {{2, 0, 1}, false}};
  for (const Reduction& r : reductions)
    for (const auto& [dims, keep] : dimSets) {
      SCOPED_TRACE(std::string(r.name) + " dims " + formatShape(dims) + (keep ? " keepdim" : ""));
      auto op = r.op;
      Shape d = dims;
      bool k = keep;
      EXPECT_TRUE(gradcheck([op, d, k](const Inputs& v) { return op(v[0], d, k, SourceLoc::current()); },
                            {x}));
    }
  EXPECT_TRUE(gradcheck([](const Inputs& v) { return sum(v[0].t(), {0}); }, {anyValues({3, 5}, 801)}));
  EXPECT_TRUE(gradcheck([](const Inputs& v) { return sum_to(v[0], {3, 1}); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& v) { return mean(v[0]); },
                        {scalar_tensor(0.7, kFloat64)}));
}

// prod's gradient divides out/x only where that is exact; at zeros it multiplies the
// other elements (PyTorch 1.13: [2, 0, 3] -> [0, 6, 0]).
TEST(AutogradTest, ProdGradientAtAZeroIsTheProductOfTheOthers) {
  Tensor x = leaf({2, 0, 3});
  prod(x).backward();
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{0, 6, 0}));
}

// A chain through most op families, with broadcasting, views, a data-dependent where and
// reductions feeding each other.
TEST(AutogradTest, GradcheckCompositeChain) {
  Fn chain = [](const Inputs& v) {
    const Tensor &x = v[0], &w = v[1], &b = v[2];
    Tensor h = tanh(add(mul(x, w), b));                           // [4, 3]
    Tensor g = sigmoid(x).t().reshape({4, 3});                    // a permuted copy
    Tensor s = where(gt(x, 0.0), h, g);
    Tensor p = pow(add(s, 2.0), 1.5);
    Tensor top = amax(h, {0}, true);                              // [1, 3]
    Tensor every = sum(s.slice(0, 0, 4, 2), {0});                 // [3]
    Tensor mixed = div(sub(p, top), add(sqrt(add(mul(x, x), 1.0)), mul(every, every)));
    Tensor rotated = cat({every.slice(0, 1, 3), top.reshape({3}).slice(0, 0, 1)});  // [3]
    return add(mean(mixed, {0}), minimum(exp(neg(every)), rotated));
  };
  EXPECT_TRUE(gradcheck(chain, {signedAwayFromZero({4, 3}, 900), anyValues({3}, 901),
                                anyValues({4, 1}, 902)}));
}

// gradcheck itself: a wrong gradient is caught and the worst element named.
TEST(AutogradTest, GradcheckReportsAWrongGradient) {
  // floor's gradient is zero, but across an integer the function jumps.
  ::testing::AssertionResult r =
      gradcheck([](const Inputs& v) { return floor(v[0]); }, {tensor(D{0.5, 2.0 - 1e-7})});
  EXPECT_FALSE(r);
  EXPECT_THAT(r.message(), HasSubstr("d out[1] / d input 0[1]"));
  EXPECT_THAT(r.message(), HasSubstr("1 Jacobian entries differ"));
}

}  // namespace
}  // namespace kiln
