// Custom autograd functions (autograd::Function<T>, kiln/core/CustomFunction.h): analytic
// backward passes against finite differences, several outputs, non-tensor arguments, the
// context's saved tensors and data, second derivatives, and the errors of a wrong backward.
#include "kiln/core/CustomFunction.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/core/IValue.h"
#include "kiln/core/Ops.h"
#include "test/unit/frontend/GradCheck.h"
#include "test/unit/frontend/Golden.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/core/TestTensors.h"

namespace kiln {
namespace {

using autograd::AutogradContext;
using autograd::tensor_list;
using autograd::variable_list;
using golden::valuesAsDouble;
using kiln::testing::at;
using kiln::testing::gradcheck;
using kiln::testing::gradgradcheck;
using kiln::testing::signedAwayFromZero;
using kiln::testing::spreadTensor;
using ::testing::HasSubstr;
using D = std::vector<double>;

Tensor leaf(const D& values) { return tensor(values).requires_grad_(); }

// y = c·x³, with c a double passed through saved_data and x saved as an input.
struct ScaledCube : public autograd::Function<ScaledCube> {
  static Tensor forward(AutogradContext* ctx, Tensor x, double c) {
    ctx->save_for_backward({x});
    ctx->saved_data["c"] = c;
    return mul(mul(mul(x, x), x), c);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    Tensor x = ctx->get_saved_variables()[0];
    double c = ctx->saved_data["c"].toDouble();
    return {mul(mul(mul(x, x), 3.0 * c), grad_outputs[0]), Tensor()};
  }
};

// y = exp(x), saving its output as LibTorch's tutorial does: backward reads y.
struct Exp : public autograd::Function<Exp> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    Tensor y = exp(x);
    ctx->save_for_backward({y});
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    return {mul(grad_outputs[0], ctx->get_saved_variables()[0])};
  }
};

// Two outputs of two inputs: (a·b, a + b).
struct ProductAndSum : public autograd::Function<ProductAndSum> {
  static variable_list forward(AutogradContext* ctx, Tensor a, Tensor b) {
    ctx->save_for_backward({a, b});
    return {mul(a, b), add(a, b)};
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    variable_list saved = ctx->get_saved_variables();
    return {add(mul(g[0], saved[1]), g[1]), add(mul(g[0], saved[0]), g[1])};
  }
};

// A backward with a mistake, for gradcheck to find: d/dx x² taken as x.
struct WrongSquare : public autograd::Function<WrongSquare> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    ctx->save_for_backward({x});
    return mul(x, x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {mul(g[0], ctx->get_saved_variables()[0])};
  }
};

TEST(CustomFunctionTest, GradcheckAgainstFiniteDifferences) {
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return ScaledCube::apply(x[0], 1.5); },
                        {spreadTensor({3, 4}, 1)}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return Exp::apply(x[0]); },
                        {spreadTensor({5}, 2)}));
  // Composed with table ops on both sides.
  EXPECT_TRUE(gradcheck(
      [](const std::vector<Tensor>& x) { return sum(tanh(Exp::apply(mul(x[0], 0.5))), {1}); },
      {spreadTensor({2, 3}, 3)}));
}

TEST(CustomFunctionTest, GradcheckFindsAWrongBackward) {
  EXPECT_FALSE(gradcheck([](const std::vector<Tensor>& x) { return WrongSquare::apply(x[0]); },
                         {spreadTensor({3}, 4)}));
}

TEST(CustomFunctionTest, TwoOutputs) {
  for (int weighting = 0; weighting < 3; ++weighting) {
    // Both outputs, then only the first or only the second (the other's gradient is zero).
    auto fn = [weighting](const std::vector<Tensor>& x) {
      variable_list out = ProductAndSum::apply(x[0], x[1]);
      if (weighting == 1) return out[0];
      if (weighting == 2) return out[1];
      return add(mul(out[0], 2.0), mul(out[1], 3.0));
    };
    EXPECT_TRUE(gradcheck(fn, {spreadTensor({4}, 5), spreadTensor({4}, 6)})) << weighting;
  }
  Tensor a = leaf({1, 2}), b = leaf({3, 4});
  variable_list out = ProductAndSum::apply(a, b);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].grad_fn(), out[1].grad_fn());
  EXPECT_EQ(out[1].impl()->outputNr, 1);
  sum(out[1]).backward();  // backward sees zeros for out[0]
  EXPECT_EQ(valuesAsDouble(a.grad()), (D{1, 1}));
  EXPECT_EQ(valuesAsDouble(b.grad()), (D{1, 1}));
}

// Every kind of argument LibTorch's functions take; only the tensors get gradients.
struct Mixed : public autograd::Function<Mixed> {
  static Tensor forward(AutogradContext* ctx, Tensor x, int64_t power, double scale, bool negate,
                        const std::string& label, Tensor weight) {
    ctx->saved_data["power"] = power;
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["negate"] = negate;
    ctx->saved_data["label"] = label;
    ctx->saved_data["x"] = x;
    ctx->save_for_backward({weight});
    Tensor y = mul(mul(pow(x, double(power)), weight), scale);
    return negate ? neg(y) : y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    EXPECT_EQ(ctx->saved_data["label"].toStringRef(), "mixed");
    const int64_t power = ctx->saved_data["power"].toInt();
    const double sign = ctx->saved_data["negate"].toBool() ? -1.0 : 1.0;
    const double scale = ctx->saved_data["scale"].toDouble() * sign;
    Tensor x = ctx->saved_data["x"].toTensor();
    Tensor w = ctx->get_saved_variables()[0];
    Tensor dx = mul(mul(mul(pow(x, double(power - 1)), double(power)), w), scale);
    Tensor dw = mul(pow(x, double(power)), scale);
    return {mul(g[0], dx), Tensor(), Tensor(), Tensor(), Tensor(), mul(g[0], dw)};
  }
};

TEST(CustomFunctionTest, NonTensorArgumentsPassThroughAndGetNoGradient) {
  auto fn = [](const std::vector<Tensor>& x) {
    return Mixed::apply(x[0], int64_t(3), 0.5, true, std::string("mixed"), x[1]);
  };
  EXPECT_TRUE(gradcheck(fn, {spreadTensor({3}, 7), spreadTensor({3}, 8)}));
  Tensor x = leaf({1, 2}), w = leaf({1, 1});
  // d/dx -(0.5 x³ w) = -1.5 x² w, d/dw = -0.5 x³
  sum(Mixed::apply(x, 3, 0.5f, true, "mixed", w)).backward();
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{-1.5, -6}));
  EXPECT_EQ(valuesAsDouble(w.grad()), (D{-0.5, -4}));
}

// needs_input_grad counts tensor arguments; a backward may skip what nobody needs.
struct RecordsNeeds : public autograd::Function<RecordsNeeds> {
  static Tensor forward(AutogradContext* ctx, Tensor a, double unused, Tensor b) {
    ctx->saved_data["a"] = ctx->needs_input_grad(0);
    ctx->saved_data["b"] = ctx->needs_input_grad(1);
    return mul(a, b);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    EXPECT_EQ(ctx->needs_input_grad(0), ctx->saved_data["a"].toBool());
    EXPECT_EQ(ctx->needs_input_grad(1), ctx->saved_data["b"].toBool());
    return {ctx->needs_input_grad(0) ? g[0] : Tensor(), Tensor(),
            ctx->needs_input_grad(1) ? g[0] : Tensor()};
  }
};

TEST(CustomFunctionTest, NeedsInputGradCountsTensorArguments) {
  Tensor a = leaf({1, 2}), b = tensor(D{3, 4});
  Tensor y = RecordsNeeds::apply(a, 1.0, b);
  ASSERT_TRUE(y.grad_fn());
  EXPECT_TRUE(y.grad_fn()->next()[0].leaf);
  EXPECT_FALSE(y.grad_fn()->next()[1].leaf);
  sum(y).backward();
  EXPECT_EQ(valuesAsDouble(a.grad()), (D{1, 1}));
  EXPECT_FALSE(b.grad().defined());
}

TEST(CustomFunctionTest, NeedsInputGradOutOfRangeIsAnError) {
  struct Probe : public autograd::Function<Probe> {
    static Tensor forward(AutogradContext* ctx, Tensor x) {
      ctx->needs_input_grad(1);
      return x;
    }
    static variable_list backward(AutogradContext*, variable_list g) { return g; }
  };
  EXPECT_KILN_ERROR_HAS(Probe::apply(leaf({1})), Error,
                        "needs_input_grad(1): forward has 1 tensor arguments");
}

// Without grad mode, or with no input that requires grad, a call records nothing.
TEST(CustomFunctionTest, RecordsNothingWithoutGrad) {
  Tensor y = ScaledCube::apply(tensor(D{2}), 1.0);
  EXPECT_FALSE(y.requires_grad());
  EXPECT_FALSE(y.grad_fn());
  NoGradGuard noGrad;
  Tensor z = ScaledCube::apply(leaf({2}), 1.0);
  EXPECT_FALSE(z.grad_fn());
  EXPECT_EQ(valuesAsDouble(z), (D{8}));
}

// forward runs without recording: only the function's own node is in the graph.
TEST(CustomFunctionTest, ForwardRecordsNoHistoryOfItsOwn) {
  Tensor x = leaf({1, 2});
  Tensor y = Exp::apply(x);
  ASSERT_TRUE(y.grad_fn());
  EXPECT_EQ(y.grad_fn()->name(), "kiln::autograd::CppNode<kiln::(anonymous namespace)::Exp>");
  ASSERT_EQ(y.grad_fn()->next().size(), 1u);
  EXPECT_EQ(y.grad_fn()->next()[0].leaf, x.implPtr());
}

struct MaxWithIndex : public autograd::Function<MaxWithIndex> {
  static variable_list forward(AutogradContext* ctx, Tensor x) {
    auto [values, indices] = x.max(0);
    Tensor mask = eq(x, values).to(x.dtype());  // a float output that is not differentiable
    ctx->save_for_backward({mask});
    ctx->mark_non_differentiable({mask, indices});
    return {values, mask, indices};
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    EXPECT_FALSE(g[1].defined() && sum(abs(g[1])).item<double>() != 0);
    return {mul(g[0], ctx->get_saved_variables()[0])};
  }
};

TEST(CustomFunctionTest, MarkNonDifferentiable) {
  Tensor x = leaf({1, 5, 2});
  variable_list out = MaxWithIndex::apply(x);
  EXPECT_TRUE(out[0].requires_grad());
  EXPECT_FALSE(out[1].requires_grad());
  EXPECT_FALSE(out[2].requires_grad());
  EXPECT_EQ(out[2].item<int64_t>(), 1);
  out[0].backward();
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{0, 1, 0}));
}

// An output that is an input is a new tensor with the function's history; the input keeps
// its own (LibTorch does the same).
TEST(CustomFunctionTest, ReturningAnInputGivesANewTensor) {
  struct Identity : public autograd::Function<Identity> {
    static Tensor forward(AutogradContext*, Tensor x) { return x; }
    static variable_list backward(AutogradContext*, variable_list g) { return {mul(g[0], 2.0)}; }
  };
  Tensor x = leaf({1, 2});
  Tensor y = Identity::apply(x);
  EXPECT_FALSE(y.is_same(x));
  EXPECT_TRUE(x.is_leaf());
  EXPECT_FALSE(y.is_leaf());
  sum(y).backward();
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{2, 2}));
}

// ---- create_graph ----------------------------------------------------------------------------

TEST(CustomFunctionTest, SecondDerivativesThroughADifferentiableBackward) {
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& x) { return ScaledCube::apply(x[0], 0.7); },
                            {signedAwayFromZero({4}, 9)}));
  // The saved output comes back with its history: d²/dx² exp(x) = exp(x).
  EXPECT_TRUE(gradgradcheck([](const std::vector<Tensor>& x) { return Exp::apply(x[0]); },
                            {spreadTensor({4}, 10)}));
  EXPECT_TRUE(gradgradcheck(
      [](const std::vector<Tensor>& x) {
        variable_list out = ProductAndSum::apply(x[0], x[1]);
        return mul(out[0], out[1]);
      },
      {spreadTensor({3}, 11), spreadTensor({3}, 12)}));
  Tensor x = leaf({2});
  Tensor dy = autograd::grad({ScaledCube::apply(x, 1.0)}, {x}, {}, true, true)[0];  // 3x² = 12
  Tensor d2y = autograd::grad({dy}, {x})[0];                                       // 6x = 12
  EXPECT_EQ(valuesAsDouble(dy), (D{12}));
  EXPECT_EQ(valuesAsDouble(d2y), (D{12}));
}

// ---- errors ----------------------------------------------------------------------------------

struct TooFewGradients : public autograd::Function<TooFewGradients> {
  static Tensor forward(AutogradContext*, Tensor x, double c) { return mul(x, c); }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
};

struct WrongShape : public autograd::Function<WrongShape> {
  static Tensor forward(AutogradContext*, Tensor x) { return sum(x); }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
};

struct GradientForADouble : public autograd::Function<GradientForADouble> {
  static Tensor forward(AutogradContext*, Tensor x, double c) { return mul(x, c); }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0], g[0]}; }
};

TEST(CustomFunctionTest, WrongNumberOfGradientsIsAnError) {
  Tensor y = sum(TooFewGradients::apply(leaf({1, 2}), 2.0));
  EXPECT_KILN_ERROR(y.backward(), Error,
                    "kiln::autograd::Function<kiln::(anonymous namespace)::TooFewGradients>: "
                    "backward returned 1 gradients, but forward took 2 arguments; return one per "
                    "argument (an undefined Tensor for an argument that is not a tensor)" + at());
}

TEST(CustomFunctionTest, GradientOfTheWrongShapeIsShapeError) {
  Tensor y = WrongShape::apply(leaf({1, 2}));
  EXPECT_KILN_ERROR(y.backward(), ShapeError,
                    "kiln::autograd::Function<kiln::(anonymous namespace)::WrongShape>: backward "
                    "returned a gradient of shape [] for argument 0, which has shape [2]" + at());
}

TEST(CustomFunctionTest, GradientForANonTensorArgumentIsAnError) {
  Tensor y = sum(GradientForADouble::apply(leaf({1, 2}), 2.0));
  EXPECT_KILN_ERROR_HAS(y.backward(), Error,
                        "backward returned a gradient (shape [2]) for argument 1, which is not a "
                        "tensor; return an undefined Tensor there");
}

TEST(CustomFunctionTest, ExtraUndefinedGradientsAreDropped) {
  struct Extra : public autograd::Function<Extra> {
    static Tensor forward(AutogradContext*, Tensor x) { return mul(x, 2.0); }
    static variable_list backward(AutogradContext*, variable_list g) {
      return {mul(g[0], 2.0), Tensor(), Tensor()};
    }
  };
  Tensor x = leaf({1});
  Extra::apply(x).backward();
  EXPECT_EQ(valuesAsDouble(x.grad()), (D{2}));
}

TEST(CustomFunctionTest, SavedOutputModifiedInPlaceIsAnError) {
  Tensor y = Exp::apply(leaf({0, 1}));
  {
    NoGradGuard noGrad;
    y.add_(1.0);
  }
  EXPECT_KILN_ERROR_HAS(y.backward(ones({2}, kFloat64)), Error,
                        "saved tensor 0 (shape [2]), which backward needs, was modified in place "
                        "after forward saved it");
}

TEST(CustomFunctionTest, SecondBackwardWithoutRetainGraphIsAnError) {
  Tensor x = leaf({1});
  Tensor y = Exp::apply(x);
  y.backward(Tensor(), /*retainGraph=*/true);
  y.backward();
  EXPECT_NEAR(valuesAsDouble(x.grad())[0], 2 * std::exp(1.0), 1e-12);
  EXPECT_KILN_ERROR_HAS(y.backward(), Error, "backward through this part of the graph a second time");
}

// ---- IValue ----------------------------------------------------------------------------------

TEST(CustomFunctionTest, IValueHoldsWhatSavedDataNeeds) {
  IValue none, flag(true), count(3), big(int64_t(1) << 40), real(0.25f), text("a"),
      values(tensor(D{1, 2})), ints(std::vector<int64_t>{1, 2}), reals(std::vector<double>{0.5});
  EXPECT_TRUE(none.isNone());
  EXPECT_TRUE(flag.toBool());
  EXPECT_EQ(count.toInt(), 3);
  EXPECT_EQ(big.toInt(), int64_t(1) << 40);
  EXPECT_EQ(real.toDouble(), 0.25);
  EXPECT_EQ(count.toDouble(), 3.0);  // a number, as in Python
  EXPECT_EQ(text.toStringRef(), "a");  // not a bool
  EXPECT_EQ(valuesAsDouble(values.toTensor()), (D{1, 2}));
  EXPECT_EQ(ints.toIntVector(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(reals.toDoubleVector(), (std::vector<double>{0.5}));
  EXPECT_KILN_ERROR(real.toInt(), TypeError,
                    "kiln::IValue::toInt: expected an IValue holding Int, but it holds Double" + at());
  EXPECT_KILN_ERROR(none.toTensor(), TypeError,
                    "kiln::IValue::toTensor: expected an IValue holding Tensor, but it holds None" + at());
}

}  // namespace
}  // namespace kiln
