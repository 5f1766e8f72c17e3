// Higher-order gradients: autograd::grad and backward with create_graph record the
// backward pass, so gradients have a grad_fn and differentiate again. Second derivatives
// are checked against analytic formulas and, for every op family, against central
// differences of the first derivatives (gradgradcheck, float64).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "frontend/core/ops/OpTable.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Tensor.h"
#include "test/unit/frontend/GradCheck.h"
#include "test/unit/frontend/Golden.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/core/TestTensors.h"

namespace kiln {
namespace {

using golden::valuesAsDouble;
using kiln::testing::at;
using kiln::testing::gradcheck;
using kiln::testing::gradgradcheck;
using kiln::testing::signedAwayFromZero;
using kiln::testing::spreadTensor;
using ::testing::HasSubstr;

using D = std::vector<double>;
using Inputs = std::vector<Tensor>;
using Fn = std::function<Tensor(const Inputs&)>;

Tensor leaf(const Tensor& values) { return values.detach().clone().requires_grad_(true); }
Tensor positive(const Shape& shape, uint64_t seed) { return spreadTensor(shape, seed, 0.5, 2.0); }
Tensor anyValues(const Shape& shape, uint64_t seed) { return spreadTensor(shape, seed, -2.0, 2.0); }

void expectNear(const Tensor& actual, const Tensor& expected, double tolerance = 1e-10) {
  ASSERT_EQ(actual.sizes(), expected.sizes());
  D a = valuesAsDouble(actual), e = valuesAsDouble(expected);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], e[i], tolerance) << "element " << i;
}

Tensor identity(int64_t n) {
  D values(size_t(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) values[size_t(i * n + i)] = 1;
  return tensor(values, Shape{n, n});
}

// The Hessian of scalar f at x, [n, n] for x of n elements: row i is the gradient of
// (df/dx)[i], which autograd::grad can only take because the first pass had create_graph.
Tensor hessian(const std::function<Tensor(const Tensor&)>& f, const Tensor& values) {
  Tensor x = leaf(values);
  Tensor first = autograd::grad({f(x)}, {x}, {}, true, true)[0].reshape({-1});
  EXPECT_NE(first.grad_fn(), nullptr);
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < x.numel(); ++i)
    rows.push_back(autograd::grad({first[i]}, {x}, {}, true, false, true)[0].reshape({1, -1}));
  return cat(rows);
}

// ---- the two spellings -------------------------------------------------------------------

TEST(CreateGraphTest, SecondDerivativeOfACubeByGrad) {
  Tensor x = leaf(tensor(D{-1.5, 0.5, 2}));
  Tensor y = pow(x, 3.0);
  Tensor dy = autograd::grad({y}, {x}, {ones_like(y)}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  ASSERT_NE(dy.grad_fn(), nullptr);
  expectNear(dy, tensor(D{6.75, 0.75, 12}));  // 3x^2
  Tensor d2y = autograd::grad({dy}, {x}, {ones_like(dy)})[0];
  expectNear(d2y, tensor(D{-9, 3, 12}));  // 6x
  EXPECT_EQ(d2y.grad_fn(), nullptr);      // no create_graph the second time
  EXPECT_FALSE(x.grad().defined());       // grad() returns, it does not accumulate
}

TEST(CreateGraphTest, SecondDerivativeOfACubeByBackward) {
  Tensor x = leaf(tensor(D{-1.5, 0.5, 2}));
  pow(x, 3.0).sum().backward({}, /*retain_graph=*/{}, /*create_graph=*/true);
  Tensor dx = x.grad();
  ASSERT_NE(dx.grad_fn(), nullptr);
  expectNear(dx, tensor(D{6.75, 0.75, 12}));
  x.set_grad(Tensor());
  dx.sum().backward();
  expectNear(x.grad(), tensor(D{-9, 3, 12}));
}

TEST(CreateGraphTest, WithoutCreateGraphGradientsHaveNoHistory) {
  Tensor x = leaf(tensor(D{1, 2}));
  Tensor dy = autograd::grad({exp(x).sum()}, {x})[0];
  EXPECT_EQ(dy.grad_fn(), nullptr);
  EXPECT_FALSE(dy.requires_grad());
}

TEST(CreateGraphTest, RetainGraphDefaultsToCreateGraph) {
  Tensor x = leaf(tensor(D{1, 2}));
  Tensor y = exp(x).sum();
  y.backward({}, {}, /*create_graph=*/true);
  y.backward();  // the graph was kept
  expectNear(x.grad().detach(), mul(exp(x), 2.0).detach());
  Tensor z = exp(x).sum();
  autograd::grad({z}, {x});
  EXPECT_KILN_ERROR_HAS(autograd::grad({z}, {x}), Error,
                        "backward through this part of the graph a second time");
}

TEST(CreateGraphTest, GradWithRespectToANonLeafAndSeveralOutputs) {
  Tensor x = leaf(tensor(D{0.5, -1}));
  Tensor h = tanh(x);
  Tensor a = mul(h, h).sum(), b = mul(h, 3.0).sum();
  std::vector<Tensor> g = autograd::grad({a, b}, {h, x}, {}, true, true);
  expectNear(g[0].detach(), add(mul(h, 2.0), 3.0).detach());  // 2h + 3
  Tensor dh = sub(1.0, mul(h, h));
  expectNear(g[1].detach(), mul(add(mul(h, 2.0), 3.0), dh).detach());
  // d/dx of sum(dL/dh) = d/dx sum(2 tanh x + 3) = 2 (1 - tanh^2 x)
  expectNear(autograd::grad({g[0].sum()}, {x})[0], mul(dh, 2.0).detach());
}

// autograd::backward over several tensors at once, as torch::autograd::backward.
TEST(CreateGraphTest, BackwardOfSeveralTensors) {
  Tensor x = leaf(tensor(D{1, 2}));
  autograd::backward({mul(x, x).sum(), mul(x, 3.0)}, {Tensor(), tensor(D{1, 2})});
  expectNear(x.grad(), tensor(D{5, 10}));  // 2x + 3 [1, 2]
}

// ---- analytic second derivatives ----------------------------------------------------------

struct Elementwise {
  const char* name;
  std::function<Tensor(const Tensor&)> f;
  std::function<Tensor(const Tensor&)> secondDerivative;  // of f, elementwise
  Tensor at;
};

// For an elementwise f, d/dx sum(f'(x)) is f''(x).
TEST(CreateGraphTest, AnalyticSecondDerivativesOfElementwiseOps) {
  const Shape s{2, 3};
  std::vector<Elementwise> cases = {
      {"mul", [](const Tensor& x) { return mul(mul(x, x), x); }, [](const Tensor& x) { return mul(x, 6.0); },
       anyValues(s, 1)},
      {"div", [](const Tensor& x) { return div(1.0, x); },
       [](const Tensor& x) { return div(2.0, pow(x, 3.0)); }, signedAwayFromZero(s, 2)},
      {"pow", [](const Tensor& x) { return pow(x, 2.5); },
       [](const Tensor& x) { return mul(pow(x, 0.5), 3.75); }, positive(s, 3)},
      {"pow_tensor_exponent", [](const Tensor& x) { return pow(2.0, x); },
       [](const Tensor& x) { return mul(pow(2.0, x), std::log(2.0) * std::log(2.0)); },
       anyValues(s, 4)},
      {"exp", [](const Tensor& x) { return exp(x); }, [](const Tensor& x) { return exp(x); }, anyValues(s, 5)},
      {"log", [](const Tensor& x) { return log(x); },
       [](const Tensor& x) { return neg(div(1.0, mul(x, x))); }, positive(s, 6)},
      {"tanh", [](const Tensor& x) { return tanh(x); },
       [](const Tensor& x) { return mul(mul(tanh(x), -2.0), sub(1.0, mul(tanh(x), tanh(x)))); },
       anyValues(s, 7)},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); },
       [](const Tensor& x) {
         Tensor p = sigmoid(x);
         return mul(mul(p, sub(1.0, p)), sub(1.0, mul(p, 2.0)));
       },
       anyValues(s, 8)},
      {"relu", [](const Tensor& x) { return mul(relu(x), x); },  // x^2 for x > 0, else 0
       [](const Tensor& x) { return mul(convert(gt(x, 0.0), kFloat64), 2.0); }, signedAwayFromZero(s, 9)},
      {"sqrt", [](const Tensor& x) { return sqrt(x); },
       [](const Tensor& x) { return mul(pow(x, -1.5), -0.25); }, positive(s, 10)},
      {"sin", [](const Tensor& x) { return sin(x); }, [](const Tensor& x) { return neg(sin(x)); },
       anyValues(s, 11)},
  };
  for (const Elementwise& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor x = leaf(c.at);
    Tensor first = autograd::grad({c.f(x).sum()}, {x}, {}, true, true)[0];
    Tensor second = autograd::grad({first.sum()}, {x})[0];
    NoGradGuard noGrad;
    expectNear(second, c.secondDerivative(c.at));
  }
}

// x^T M x has the Hessian M + M^T.
TEST(CreateGraphTest, HessianOfAQuadraticFormThroughMatmul) {
  Tensor m = anyValues({3, 3}, 20);
  auto quadratic = [&](const Tensor& x) {
    return matmul(matmul(x.reshape({1, 3}), m), x.reshape({3, 1})).sum();
  };
  Tensor h = hessian(quadratic, anyValues({3}, 21));
  expectNear(h, add(m, m.t()));
}

// The Hessian of sum(w * log_softmax(x)) is -sum(w) (diag(p) - p p^T), p = softmax(x).
TEST(CreateGraphTest, HessianOfLogSoftmax) {
  Tensor x = anyValues({4}, 30), w = positive({4}, 31);
  Tensor h = hessian([&](const Tensor& v) { return mul(log_softmax(v, 0), w).sum(); }, x);
  Tensor p = softmax(x, 0);
  Tensor diagP = mul(identity(4), p.reshape({1, 4}));
  Tensor expected = mul(sub(diagP, matmul(p.reshape({4, 1}), p.reshape({1, 4}))), -sum(w).item<double>());
  expectNear(h, expected);
}

// mean((x - t)^2) has the Hessian 2/n I; sum(x)^3 has 6 sum(x) everywhere; mean(x)^2 2/n^2.
TEST(CreateGraphTest, HessiansOfMseLossAndReductions) {
  Tensor x = anyValues({4}, 40), t = anyValues({4}, 41);
  expectNear(hessian([&](const Tensor& v) { return mse_loss(v, t); }, x), mul(identity(4), 0.5));
  expectNear(hessian([](const Tensor& v) { return pow(sum(v), 3.0); }, x),
             full({4, 4}, 6 * sum(x).item<double>(), kFloat64));
  expectNear(hessian([](const Tensor& v) { return pow(mean(v), 2.0); }, x), full({4, 4}, 0.125, kFloat64));
}

// ---- gradgradcheck: second derivatives of every op family ---------------------------------

TEST(CreateGraphTest, GradgradcheckElementwise) {
  const Shape s{2, 3};
  std::vector<std::pair<const char*, Fn>> unary = {
      {"neg", [](const Inputs& v) { return neg(v[0]); }},
      {"abs", [](const Inputs& v) { return mul(abs(v[0]), v[0]); }},
      {"exp", [](const Inputs& v) { return exp(v[0]); }},
      {"tanh", [](const Inputs& v) { return tanh(v[0]); }},
      {"sigmoid", [](const Inputs& v) { return sigmoid(v[0]); }},
      {"relu", [](const Inputs& v) { return mul(relu(v[0]), v[0]); }},
      {"sin", [](const Inputs& v) { return sin(v[0]); }},
      {"cos", [](const Inputs& v) { return cos(v[0]); }},
      {"gelu", [](const Inputs& v) { return gelu(v[0]); }},
      {"gelu_tanh", [](const Inputs& v) { return gelu(v[0], "tanh"); }},
      {"silu", [](const Inputs& v) { return silu(v[0]); }},
      {"leaky_relu", [](const Inputs& v) { return mul(leaky_relu(v[0], 0.2), v[0]); }},
      {"clamp", [](const Inputs& v) { return mul(clamp(v[0], -1.0, 1.0), v[0]); }},
      {"floor", [](const Inputs& v) { return mul(floor(v[0]), v[0]); }},
  };
  for (const auto& [name, fn] : unary) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(gradgradcheck(fn, {signedAwayFromZero(s, 50)}));
  }
  std::vector<std::pair<const char*, Fn>> positiveUnary = {
      {"log", [](const Inputs& v) { return log(v[0]); }},
      {"sqrt", [](const Inputs& v) { return sqrt(v[0]); }},
      {"rsqrt", [](const Inputs& v) { return rsqrt(v[0]); }},
  };
  for (const auto& [name, fn] : positiveUnary) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(gradgradcheck(fn, {positive(s, 51)}));
  }
  std::vector<std::pair<const char*, Fn>> binary = {
      {"add", [](const Inputs& v) { return mul(add(v[0], v[1]), v[0]); }},
      {"sub", [](const Inputs& v) { return mul(sub(v[0], v[1]), v[1]); }},
      {"mul", [](const Inputs& v) { return mul(v[0], v[1]); }},
      {"mul_broadcast", [](const Inputs& v) { return mul(v[0], v[1].slice(0, 0, 1)); }},
      {"div", [](const Inputs& v) { return div(v[0], v[1]); }},
      {"pow", [](const Inputs& v) { return pow(v[0], v[1]); }},
      {"maximum", [](const Inputs& v) { return mul(maximum(v[0], v[1]), v[0]); }},
      {"minimum", [](const Inputs& v) { return mul(minimum(v[0], v[1]), v[1]); }},
      {"where", [](const Inputs& v) { return where(gt(v[0], v[1]), mul(v[0], v[1]), exp(v[1])); }},
  };
  for (const auto& [name, fn] : binary) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(gradgradcheck(fn, {positive(s, 52), signedAwayFromZero(s, 53)}));
  }
}

TEST(CreateGraphTest, GradgradcheckLinearAlgebraAndReductions) {
  std::vector<std::pair<const char*, Fn>> cases = {
      {"matmul", [](const Inputs& v) { return matmul(v[0], v[1]); }},
      {"matmul_squared", [](const Inputs& v) { return pow(matmul(v[0], v[1]), 2.0); }},
      {"addmm", [](const Inputs& v) { return tanh(addmm(v[1].sum({0}), v[0], v[1])); }},
      {"bmm", [](const Inputs& v) { return bmm(v[0].unsqueeze(0), mul(v[1], v[1]).unsqueeze(0)); }},
      {"sum", [](const Inputs& v) { return pow(sum(matmul(v[0], v[1]), {1}), 2.0); }},
      {"mean", [](const Inputs& v) { return mul(mean(v[0], {0}, true), v[0]); }},
      {"prod", [](const Inputs& v) { return prod(v[1], {0}); }},
      {"amax", [](const Inputs& v) { return mul(amax(v[0], {1}), sum(v[0], {1})); }},
      {"var", [](const Inputs& v) { return var(v[0], {1}); }},
      {"norm", [](const Inputs& v) { return norm(v[0], 2, {1}); }},
  };
  for (const auto& [name, fn] : cases) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(gradgradcheck(fn, {signedAwayFromZero({2, 3}, 60), signedAwayFromZero({3, 2}, 61)}));
  }
}

TEST(CreateGraphTest, GradgradcheckSoftmaxAndLosses) {
  Tensor x = anyValues({3, 4}, 70), t = anyValues({3, 4}, 71);
  Tensor labels = tensor(std::vector<int64_t>{1, 3, 0});
  Tensor probs = spreadTensor({3, 4}, 72, 0.1, 0.9), targets = spreadTensor({3, 4}, 73, 0.0, 1.0);
  std::vector<std::tuple<const char*, Fn, Inputs>> cases = {
      {"softmax", [](const Inputs& v) { return softmax(v[0], 1); }, {x}},
      {"log_softmax", [](const Inputs& v) { return log_softmax(v[0], 0); }, {x}},
      {"mse_loss", [](const Inputs& v) { return mse_loss(v[0], v[1]); }, {x, t}},
      {"mse_loss_sum", [](const Inputs& v) { return mse_loss(v[0], v[1], Reduction::Sum); }, {x, t}},
      {"cross_entropy", [](const Inputs& v) { return cross_entropy(v[0], v[1]); }, {x, labels}},
      {"nll_loss", [](const Inputs& v) { return nll_loss(log_softmax(v[0], 1), v[1]); }, {x, labels}},
      {"binary_cross_entropy", [](const Inputs& v) { return binary_cross_entropy(v[0], v[1]); },
       {probs, targets}},
      {"binary_cross_entropy_with_logits",
       [](const Inputs& v) { return binary_cross_entropy_with_logits(v[0], v[1]); }, {x, targets}},
      {"smooth_l1_loss", [](const Inputs& v) { return smooth_l1_loss(v[0], v[1]); }, {x, t}},
      {"layer_norm", [](const Inputs& v) { return layer_norm(v[0], {4}); }, {x}},
  };
  for (const auto& [name, fn, inputs] : cases) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(gradgradcheck(fn, inputs));
  }
}

TEST(CreateGraphTest, GradgradcheckViewsAndIndexing) {
  Tensor x = anyValues({2, 3, 2}, 80);
  Tensor index = tensor(std::vector<int64_t>{2, 0, 2});
  Tensor positions = tensor(std::vector<int64_t>{0, 2, 1, 1, 0, 2, 2, 2, 1, 0, 0, 1}, Shape{2, 3, 2});
  std::vector<std::pair<const char*, Fn>> cases = {
      {"reshape_permute", [](const Inputs& v) { return pow(v[0].permute({2, 0, 1}).reshape({4, 3}), 2.0); }},
      {"expand", [](const Inputs& v) { return mul(v[0].slice(2, 0, 1).expand({2, 3, 4}), v[0].sum()); }},
      {"slice_step", [](const Inputs& v) { return exp(v[0].slice(1, 0, 3, 2)); }},
      {"contiguous_clone", [](const Inputs& v) { return exp(v[0].transpose(0, 2).contiguous().clone()); }},
      {"cat", [](const Inputs& v) { return mul(cat({v[0], v[0]}, 1), cat({v[0], exp(v[0])}, 1)); }},
      {"index_select", [index](const Inputs& v) { return pow(v[0].index_select(1, index), 3.0); }},
      {"gather", [positions](const Inputs& v) { return exp(v[0].gather(1, positions)); }},
  };
  for (const auto& [name, fn] : cases) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(gradgradcheck(fn, {x}));
  }
}

// float64 -> float32 -> float64: float32's rounding needs a larger step.
TEST(CreateGraphTest, GradgradcheckConvert) {
  EXPECT_TRUE(gradgradcheck([](const Inputs& v) { return exp(convert(convert(v[0], kFloat32), kFloat64)); },
                            {anyValues({3}, 85)}, /*eps=*/1e-3, /*atol=*/1e-3, /*rtol=*/1e-2));
}

TEST(CreateGraphTest, GradgradcheckConvolutionAndPooling) {
  Tensor x = anyValues({1, 1, 4, 4}, 90), w = anyValues({2, 1, 2, 2}, 91), b = anyValues({2}, 92);
  EXPECT_TRUE(gradgradcheck([](const Inputs& v) { return tanh(conv2d(v[0], v[1], v[2], {2, 1}, {1, 0})); },
                            {x, w, b}));
  EXPECT_TRUE(gradgradcheck([](const Inputs& v) { return pow(max_pool2d(v[0], {2, 2}), 2.0); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const Inputs& v) { return exp(avg_pool2d(v[0], {3, 3}, {1, 1})); }, {x}));
  EXPECT_TRUE(gradgradcheck(
      [](const Inputs& v) { return tanh(conv_transpose2d(v[0], v[1], Tensor(), {2, 2})); },
      {x, anyValues({1, 2, 2, 2}, 93)}));
}

// gradgradcheck itself: x * detach(x) has the first derivative detach(x), whose recorded
// derivative is 0 while the finite differences see 1.
TEST(CreateGraphTest, GradgradcheckReportsAWrongSecondDerivative) {
  ::testing::AssertionResult r =
      gradgradcheck([](const Inputs& v) { return mul(v[0], v[0].detach()); }, {anyValues({2}, 94)});
  EXPECT_FALSE(r);
  EXPECT_THAT(r.message(), HasSubstr("2 Jacobian entries differ"));
}

// A WGAN-GP style penalty: the gradient of (|d D(x) / dx| - 1)^2 with respect to the
// discriminator's weights is itself checked against central differences.
TEST(CreateGraphTest, GradientPenaltyGradcheck) {
  Fn penalty = [](const Inputs& v) {
    AutoGradMode gradMode(true);  // gradcheck's finite differences run without grad
    const Tensor x = v[0].requires_grad() ? v[0] : leaf(v[0]);
    const Tensor &w = v[1], &b = v[2];
    Tensor d = sigmoid(addmm(b, tanh(x), w));  // [3, 1]
    Tensor dx = autograd::grad({d}, {x}, {ones_like(d)}, true, true)[0];
    return pow(sub(norm(dx, 2, {1}), 1.0), 2.0).mean();
  };
  EXPECT_TRUE(gradcheck(penalty, {anyValues({3, 4}, 100), anyValues({4, 1}, 101), anyValues({1}, 102)}));
}

// Every op of the table with a gradient formula has its formula differentiated by a
// gradgradcheck above (kToDevice, which needs a GPU, by test/gpu). A formula must be written
// with ops of the table, never on raw buffers, for create_graph to record it: a new op
// adds its gradgradcheck case, then its name here.
TEST(CreateGraphTest, EveryDifferentiableOpHasASecondDerivativeCheck) {
  const std::set<std::string> covered = {
      "abs",     "add",     "addmm",    "cat",     "clone", "conv2d", "convert", "cos",     "div",
      "exp",     "expand",  "floor",    "gelu",    "log",   "matmul", "maximum", "minimum", "mul",
      "neg",     "permute", "pool2d",   "pow",     "reduce", "relu",  "reshape", "rsqrt",   "scatter_add",
      "sigmoid", "sin",     "slice",    "sqrt",    "sub",   "take",   "tanh",    "where"};
  for (const OpDef* op : ops::allOps())
    if (op->grad) EXPECT_TRUE(covered.count(std::string(op->name))) << op->name;
}

// ---- errors -------------------------------------------------------------------------------

TEST(CreateGraphTest, GradOfAnUnusedInputIsAnErrorUnlessAllowed) {
  Tensor x = leaf(tensor(D{1, 2})), unused = leaf(tensor(D{3}));
  EXPECT_KILN_ERROR(autograd::grad({exp(x).sum()}, {x, unused}), Error,
                    "kiln::grad: input 1 (shape [1]) was not used to compute the outputs; pass "
                    "allow_unused = true to get an undefined gradient for it" + at());
  std::vector<Tensor> g = autograd::grad({exp(x).sum()}, {x, unused}, {}, std::nullopt, false, true);
  EXPECT_TRUE(g[0].defined());
  EXPECT_FALSE(g[1].defined());
}

TEST(CreateGraphTest, GradOfAnInputWithoutGradIsAnError) {
  Tensor x = leaf(tensor(D{1, 2}));
  EXPECT_KILN_ERROR(autograd::grad({exp(x).sum()}, {tensor(D{1})}), Error,
                    "kiln::grad: input 0 (shape [1]) does not require grad, so it has no gradient" + at());
}

TEST(CreateGraphTest, GradOutputsMustMatchTheOutputs) {
  Tensor x = leaf(tensor(D{1, 2}));
  Tensor y = exp(x);
  EXPECT_KILN_ERROR(autograd::grad({y}, {x}, {ones_like(y), ones_like(y)}), Error,
                    "kiln::grad: got 2 gradients for 1 tensors" + at());
  EXPECT_KILN_ERROR(autograd::grad({y}, {x}), ShapeError,
                    "kiln::grad: a gradient must be given for a non-scalar tensor of shape [2]" + at());
  EXPECT_KILN_ERROR(autograd::grad({tensor(D{1})}, {x}), Error,
                    "kiln::grad: the tensor (shape [1]) does not require grad and has no grad_fn" + at());
}

}  // namespace
}  // namespace kiln
