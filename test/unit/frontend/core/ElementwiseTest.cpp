// Elementwise ops: every unary, binary, compare and logical op, where and convert;
// broadcasting; PyTorch's type promotion (tensors, 0-d tensors, scalars); NaN handling;
// non-contiguous and stride-0 inputs; tensors large enough to be split across the pool.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
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

using D = std::vector<double>;
using I = std::vector<int64_t>;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// 1-d unless a shape is given (0-d tensors come from scalar_tensor).
Tensor f32(const D& v, std::optional<Shape> shape = std::nullopt) {
  return tensor(std::vector<float>(v.begin(), v.end()), shape);
}
Tensor f64(const D& v, std::optional<Shape> shape = std::nullopt) { return tensor(v, shape); }
Tensor i32(const I& v) { return tensor(std::vector<int32_t>(v.begin(), v.end())); }
Tensor i64(const I& v) { return tensor(v); }
Tensor b8(const std::vector<bool>& v) { return tensor(v); }

// Elementwise within a relative tolerance; NaN must match NaN.
::testing::AssertionResult near(const Tensor& t, const D& expected, double rtol) {
  std::vector<double> got = valuesAsDouble(t);
  if (got.size() != expected.size())
    return ::testing::AssertionFailure() << got.size() << " values, expected " << expected.size();
  for (size_t i = 0; i < got.size(); ++i) {
    bool ok = std::isnan(expected[i]) ? std::isnan(got[i])
              : std::isinf(expected[i]) ? got[i] == expected[i]
                                        : std::fabs(got[i] - expected[i]) <= rtol * std::fabs(expected[i]) + 1e-300;
    if (!ok)
      return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", expected "
                                           << expected[i];
  }
  return ::testing::AssertionSuccess();
}

// ---- unary ---------------------------------------------------------------------------------

struct UnaryCase {
  const char* name;
  Tensor (*op)(const Tensor&, const SourceLoc&);
  double (*reference)(double);
  D inputs;
};

const std::vector<UnaryCase>& unaryCases() {
  static const std::vector<UnaryCase> cases = {
      {"neg", neg, [](double x) { return -x; }, {-1.5, 0.0, 2.25, 3}},
      {"abs", abs, [](double x) { return std::fabs(x); }, {-1.5, 0.0, 2.25, -3}},
      {"exp", exp, [](double x) { return std::exp(x); }, {-1.5, 0.0, 2.25, 10}},
      {"log", log, [](double x) { return std::log(x); }, {0.5, 1.0, 2.25, 1e6}},
      {"sqrt", sqrt, [](double x) { return std::sqrt(x); }, {0.0, 0.25, 2.0, 1e6}},
      {"rsqrt", rsqrt, [](double x) { return 1 / std::sqrt(x); }, {0.25, 1.0, 2.0, 1e6}},
      {"tanh", tanh, [](double x) { return std::tanh(x); }, {-3.0, 0.0, 0.5, 20}},
      {"sigmoid", sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, {-5.0, 0.0, 0.5, 30}},
      {"relu", relu, [](double x) { return x > 0 ? x : 0.0; }, {-1.5, 0.0, 2.25, -0.0}},
      {"sin", sin, [](double x) { return std::sin(x); }, {-2.0, 0.0, 0.5, 100}},
      {"cos", cos, [](double x) { return std::cos(x); }, {-2.0, 0.0, 0.5, 100}},
      {"floor", floor, [](double x) { return std::floor(x); }, {-1.5, -0.5, 2.25, 3}},
  };
  return cases;
}

TEST(ElementwiseTest, UnaryOpsOnFloat32AndFloat64) {
  for (const UnaryCase& c : unaryCases()) {
    SCOPED_TRACE(c.name);
    D expected;
    for (double x : c.inputs) expected.push_back(c.reference(x));
    Tensor y64 = c.op(f64(c.inputs), SourceLoc::current());
    EXPECT_EQ(y64.dtype(), kFloat64);
    EXPECT_TRUE(near(y64, expected, 1e-14));
    D expected32;
    for (double x : c.inputs) expected32.push_back(double(float(c.reference(double(float(x))))));
    Tensor y32 = c.op(f32(c.inputs), SourceLoc::current());
    EXPECT_EQ(y32.dtype(), kFloat32);
    EXPECT_TRUE(near(y32, expected32, 5e-7));
  }
}

TEST(ElementwiseTest, UnaryOpsOn16BitFloatsKeepTheDType) {
  for (const UnaryCase& c : unaryCases()) {
    SCOPED_TRACE(c.name);
    Tensor x = f32(c.inputs).to(kBFloat16);
    Tensor y = c.op(x, SourceLoc::current());
    EXPECT_EQ(y.dtype(), kBFloat16);
    D expected;
    for (double v : valuesAsDouble(x)) expected.push_back(c.reference(v));
    EXPECT_TRUE(near(y, expected, 1e-2));
    EXPECT_EQ(c.op(x.to(kFloat16), SourceLoc::current()).dtype(), kFloat16);
  }
}

TEST(ElementwiseTest, UnaryOpsKeepTheShapeAndReadViews) {
  Tensor x = ramp({3, 4}, kFloat64, 0.5).t();  // non-contiguous
  for (const UnaryCase& c : unaryCases()) {
    SCOPED_TRACE(c.name);
    Tensor y = c.op(x, SourceLoc::current());
    EXPECT_THAT(y.sizes(), ElementsAre(4, 3));
    EXPECT_TRUE(y.is_contiguous());
    D expected;
    for (double v : valuesAsDouble(x)) expected.push_back(c.reference(v));
    EXPECT_TRUE(near(y, expected, 1e-14));
  }
}

TEST(ElementwiseTest, NegAbsReluKeepIntegerDTypes) {
  Tensor x = i32({-3, 0, 4});
  EXPECT_EQ(neg(x).dtype(), kInt32);
  EXPECT_EQ(valuesAsInt64(neg(x)), (I{3, 0, -4}));
  EXPECT_EQ(valuesAsInt64(abs(x)), (I{3, 0, 4}));
  EXPECT_EQ(valuesAsInt64(relu(x)), (I{0, 0, 4}));
  Tensor l = i64({-(int64_t(1) << 40), 5});
  EXPECT_EQ(abs(l).dtype(), kInt64);
  EXPECT_EQ(valuesAsInt64(abs(l)), (I{int64_t(1) << 40, 5}));
}

TEST(ElementwiseTest, FloatingUnaryOpsOfIntegersAndBoolsComputeInFloat32) {
  Tensor x = i64({1, 4});
  EXPECT_EQ(sqrt(x).dtype(), kFloat32);
  EXPECT_EQ(valuesAsDouble(sqrt(x)), (D{1, 2}));
  EXPECT_EQ(exp(i32({0})).dtype(), kFloat32);
  EXPECT_EQ(log(b8({true})).dtype(), kFloat32);
  EXPECT_EQ(valuesAsDouble(sigmoid(b8({false}))), (D{0.5}));
  for (auto op : {exp, log, sqrt, rsqrt, tanh, sigmoid, sin, cos})
    EXPECT_EQ(op(i32({1, 2}), SourceLoc::current()).dtype(), kFloat32);
}

// torch.floor of an integer tensor returns it unchanged, in its dtype.
TEST(ElementwiseTest, FloorOfIntegersKeepsTheDType) {
  Tensor x = i64({-3, 7, (int64_t(1) << 40) + 1});
  Tensor y = floor(x);
  EXPECT_EQ(y.dtype(), kInt64);
  EXPECT_EQ(valuesAsInt64(y), valuesAsInt64(x));
  EXPECT_EQ(floor(i32({2})).dtype(), kInt32);
}

TEST(ElementwiseTest, NegOfBoolIsTypeError) {
  EXPECT_KILN_ERROR(neg(b8({true, false})), TypeError,
                    "kiln::neg: expected a numeric (non-bool) tensor, got bool tensor of shape [2]" +
                        at());
  EXPECT_KILN_ERROR_HAS(abs(b8({true})), TypeError, "kiln::abs: expected a numeric");
  EXPECT_KILN_ERROR_HAS(relu(b8({true})), TypeError, "kiln::relu: expected a numeric");
}

TEST(ElementwiseTest, UnarySpecialValues) {
  Tensor x = f32({kNaN, kInf, -kInf, -0.0, 0.0});
  EXPECT_TRUE(near(neg(x), {kNaN, -kInf, kInf, 0.0, -0.0}, 0));
  EXPECT_TRUE(near(abs(x), {kNaN, kInf, kInf, 0.0, 0.0}, 0));
  EXPECT_TRUE(near(exp(x), {kNaN, kInf, 0.0, 1.0, 1.0}, 0));
  EXPECT_TRUE(near(tanh(x), {kNaN, 1.0, -1.0, 0.0, 0.0}, 0));
  EXPECT_TRUE(near(sigmoid(x), {kNaN, 1.0, 0.0, 0.5, 0.5}, 0));
  EXPECT_TRUE(near(floor(x), {kNaN, kInf, -kInf, 0.0, 0.0}, 0));
  EXPECT_TRUE(near(log(f32({-1.0, 0.0})), {kNaN, -kInf}, 0));
  EXPECT_TRUE(near(sqrt(f32({-1.0})), {kNaN}, 0));
  EXPECT_TRUE(near(rsqrt(f32({0.0})), {kInf}, 0));
  EXPECT_TRUE(near(sigmoid(f64({-800.0, 800.0})), {0.0, 1.0}, 0));
}

// torch.relu(nan) is nan (relu is clamp_min(x, 0), which propagates NaN).
TEST(ElementwiseTest, ReluPropagatesNaN) {
  EXPECT_TRUE(std::isnan(relu(f32({kNaN})).item<float>()));
  EXPECT_TRUE(std::isnan(relu(f64({kNaN})).item<double>()));
}

// torch.abs(-0.0) is +0.0 (the sign bit is cleared, as std::fabs).
TEST(ElementwiseTest, AbsClearsTheSignOfZero) {
  EXPECT_FALSE(std::signbit(abs(f32({-0.0})).item<float>()));
  EXPECT_FALSE(std::signbit(abs(f64({-0.0})).item<double>()));
}

TEST(ElementwiseTest, LogicalNot) {
  EXPECT_EQ(valuesAsInt64(logical_not(b8({true, false}))), (I{0, 1}));
  Tensor f = logical_not(f32({0.0, -0.0, 2.5, kNaN}));
  EXPECT_EQ(f.dtype(), kBool);
  EXPECT_EQ(valuesAsInt64(f), (I{1, 1, 0, 0}));
  EXPECT_EQ(valuesAsInt64(logical_not(i32({0, -3}))), (I{1, 0}));
}

// ---- binary --------------------------------------------------------------------------------

TEST(ElementwiseTest, ArithmeticOnFloats) {
  Tensor a = f64({1.5, -2.0, 3.0, 0.5}), b = f64({0.5, 4.0, -1.5, 2.0});
  EXPECT_EQ(valuesAsDouble(add(a, b)), (D{2.0, 2.0, 1.5, 2.5}));
  EXPECT_EQ(valuesAsDouble(sub(a, b)), (D{1.0, -6.0, 4.5, -1.5}));
  EXPECT_EQ(valuesAsDouble(mul(a, b)), (D{0.75, -8.0, -4.5, 1.0}));
  EXPECT_EQ(valuesAsDouble(div(a, b)), (D{3.0, -0.5, -2.0, 0.25}));
  EXPECT_EQ(valuesAsDouble(maximum(a, b)), (D{1.5, 4.0, 3.0, 2.0}));
  EXPECT_EQ(valuesAsDouble(minimum(a, b)), (D{0.5, -2.0, -1.5, 0.5}));
  EXPECT_TRUE(near(pow(f64({2.0, 9.0, 0.5}), f64({3.0, 0.5, -1.0})), {8.0, 3.0, 2.0}, 1e-15));
  EXPECT_EQ(add(a, b).dtype(), kFloat64);
  EXPECT_EQ(add(f32({1}), f32({2})).dtype(), kFloat32);
}

TEST(ElementwiseTest, DivisionByZero) {
  EXPECT_TRUE(near(div(f32({1.0, -1.0, 0.0}), f32({0.0, 0.0, 0.0})), {kInf, -kInf, kNaN}, 0));
  EXPECT_TRUE(near(div(i64({1, 0}), i64({0, 0})), {kInf, kNaN}, 0));
}

TEST(ElementwiseTest, ArithmeticOnIntegersStaysInteger) {
  Tensor a = i32({7, -7, 3}), b = i32({2, 2, -4});
  EXPECT_EQ(add(a, b).dtype(), kInt32);
  EXPECT_EQ(valuesAsInt64(add(a, b)), (I{9, -5, -1}));
  EXPECT_EQ(valuesAsInt64(sub(a, b)), (I{5, -9, 7}));
  EXPECT_EQ(valuesAsInt64(mul(a, b)), (I{14, -14, -12}));
  EXPECT_EQ(valuesAsInt64(maximum(a, b)), (I{7, 2, 3}));
  EXPECT_EQ(valuesAsInt64(minimum(a, b)), (I{2, -7, -4}));
  EXPECT_EQ(valuesAsInt64(pow(i32({2, -3, 5}), i32({10, 3, 0}))), (I{1024, -27, 1}));
  EXPECT_EQ(pow(i32({2}), i32({3})).dtype(), kInt32);
}

// int / int is true division in the default float dtype (torch.div).
TEST(ElementwiseTest, IntegerDivisionIsTrueDivisionInFloat32) {
  Tensor q = div(i64({7, -7, 1}), i64({2, 2, 3}));
  EXPECT_EQ(q.dtype(), kFloat32);
  EXPECT_TRUE(near(q, {3.5, -3.5, 1.0 / 3}, 1e-7));
  EXPECT_EQ(div(i32({1}), i32({2})).dtype(), kFloat32);
  EXPECT_EQ(div(b8({true}), b8({true})).dtype(), kFloat32);
  Tensor s = div(i32({7, 8}), 2);
  EXPECT_EQ(s.dtype(), kFloat32);
  EXPECT_EQ(valuesAsDouble(s), (D{3.5, 4.0}));
  EXPECT_EQ(div(i32({7}), i64({2})).dtype(), kFloat32);
}

// Integer pow is exact in PyTorch (repeated multiplication), beyond double's 53 bits.
TEST(ElementwiseTest, IntegerPowIsExact) {
  Tensor p = pow(i64({3, -3, 7}), i64({39, 39, 22}));
  EXPECT_EQ(valuesAsInt64(p), (I{4052555153018976267, -4052555153018976267, 3909821048582988049}));
}

// A large int64 scalar keeps all its bits: torch.tensor([0]) + (2**53 + 1) == 2**53 + 1.
TEST(ElementwiseTest, Int64ScalarOperandsAreExact) {
  const int64_t big = (int64_t(1) << 53) + 1;
  EXPECT_EQ(valuesAsInt64(add(i64({0}), big)), (I{big}));
  EXPECT_EQ(valuesAsInt64(mul(i64({1}), big)), (I{big}));
  EXPECT_EQ(valuesAsInt64(eq(i64({big}), big)), (I{1}));
  const int64_t huge = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(valuesAsInt64(sub(i64({0}), huge)), (I{-huge}));
}

TEST(ElementwiseTest, Int64TensorOperandsAreExact) {
  const int64_t big = (int64_t(1) << 62) + 1;
  EXPECT_EQ(valuesAsInt64(add(i64({big}), i64({2}))), (I{big + 2}));
  EXPECT_EQ(valuesAsInt64(maximum(i64({big}), i64({big - 1}))), (I{big}));
}

// ---- broadcasting --------------------------------------------------------------------------

TEST(ElementwiseTest, BroadcastColumnByRow) {
  Tensor a = f32({0, 10, 20}, Shape{3, 1}), b = f32({1, 2, 3, 4}, Shape{1, 4});
  Tensor c = add(a, b);
  EXPECT_THAT(c.sizes(), ElementsAre(3, 4));
  EXPECT_EQ(valuesAsDouble(c), (D{1, 2, 3, 4, 11, 12, 13, 14, 21, 22, 23, 24}));
}

TEST(ElementwiseTest, BroadcastAddsLeadingDims) {
  Tensor a = ramp({4}), b = ramp({2, 3, 4}, kFloat32, 0, 100);
  Tensor c = mul(a, b);
  EXPECT_THAT(c.sizes(), ElementsAre(2, 3, 4));
  std::vector<double> v = valuesAsDouble(c);
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(v[i], double(i % 4) * double(i * 100));
  EXPECT_THAT(sub(b, a).sizes(), ElementsAre(2, 3, 4));
}

TEST(ElementwiseTest, BroadcastWithScalarsAndEmptyDims) {
  Tensor s = scalar_tensor(2.0);
  EXPECT_THAT(add(s, ramp({2, 3})).sizes(), ElementsAre(2, 3));
  EXPECT_THAT(add(ramp({2, 3}), s).sizes(), ElementsAre(2, 3));
  EXPECT_EQ(add(s, s).dim(), 0);
  EXPECT_THAT(add(ramp({0, 3}), ramp({1, 3})).sizes(), ElementsAre(0, 3));
  EXPECT_THAT(add(ramp({2, 1}), ramp({0})).sizes(), ElementsAre(2, 0));
}

TEST(ElementwiseTest, BroadcastErrorNamesShapesAndLine) {
  EXPECT_KILN_ERROR(add(ramp({2, 3}), ramp({4})), ShapeError,
                    "kiln::add: operands have shapes [2, 3] and [4], which cannot be broadcast" +
                        at());
  EXPECT_KILN_ERROR(maximum(ramp({3}), ramp({2, 2})), ShapeError,
                    "kiln::maximum: operands have shapes [3] and [2, 2], which cannot be "
                    "broadcast" + at());
  EXPECT_KILN_ERROR(lt(ramp({3}), ramp({2})), ShapeError,
                    "kiln::lt: operands have shapes [3] and [2], which cannot be broadcast" + at());
  EXPECT_KILN_ERROR_HAS(where(b8({true, false}), ramp({3}), ramp({3})), ShapeError,
                        "kiln::where: operands have shapes [2] and [3]");
}

// ---- type promotion ------------------------------------------------------------------------

struct PromotionCase {
  Tensor a, b;
  DType expected;
};

TEST(ElementwiseTest, TensorTensorPromotion) {
  std::vector<PromotionCase> cases = {
      {i32({1}), f32({1}), kFloat32},           {f32({1}), i64({1}), kFloat32},
      {i32({1}), i64({1}), kInt64},             {b8({true}), i32({1}), kInt32},
      {f32({1}), f64({1}), kFloat64},           {f32({1}).to(kFloat16), f32({1}), kFloat32},
      {f32({1}).to(kFloat16), f32({1}).to(kBFloat16), kFloat32},
      {i64({1}), f32({1}).to(kFloat16), kFloat16},
      {b8({true}), f32({1}).to(kBFloat16), kBFloat16},
  };
  for (const PromotionCase& c : cases) {
    SCOPED_TRACE(std::string(name(c.a.dtype())) + " with " + std::string(name(c.b.dtype())));
    EXPECT_EQ(add(c.a, c.b).dtype(), c.expected);
    EXPECT_EQ(mul(c.b, c.a).dtype(), c.expected);
    EXPECT_EQ(maximum(c.a, c.b).dtype(), c.expected);
  }
  EXPECT_EQ(valuesAsDouble(add(i32({3}), f32({0.5}))), (D{3.5}));
}

// A 0-d tensor only changes a dimensioned operand's dtype when its category
// (bool < integral < floating) is higher.
TEST(ElementwiseTest, ZeroDimTensorPromotion) {
  Tensor zF64 = scalar_tensor(1.25, kFloat64), zI64 = scalar_tensor(7, kInt64);
  EXPECT_EQ(add(i32({1, 2}), zF64).dtype(), kFloat64);
  EXPECT_EQ(add(zF64, i32({1, 2})).dtype(), kFloat64);
  EXPECT_EQ(add(f32({1, 2}), zF64).dtype(), kFloat32);
  EXPECT_EQ(add(f32({1, 2}).to(kFloat16), zF64).dtype(), kFloat16);
  EXPECT_EQ(add(i32({1, 2}), zI64).dtype(), kInt32);
  EXPECT_EQ(add(b8({true, false}), zI64).dtype(), kInt64);
  EXPECT_EQ(add(b8({true, false}), scalar_tensor(1.0, kFloat64)).dtype(), kFloat64);
  // Two 0-d tensors promote normally.
  EXPECT_EQ(add(zF64, scalar_tensor(3, kInt32)).dtype(), kFloat64);
  EXPECT_EQ(add(scalar_tensor(1, kInt32), zI64).dtype(), kInt64);
  EXPECT_EQ(add(scalar_tensor(1.0), zF64).dtype(), kFloat64);
  EXPECT_EQ(valuesAsDouble(add(i32({1, 2}), zF64)), (D{2.25, 3.25}));
}

// A scalar takes the tensor's dtype unless its kind is higher; then it gives that kind's
// default (int64 for integers, float32 for floats).
TEST(ElementwiseTest, ScalarPromotion) {
  EXPECT_EQ(mul(i32({1}), 0.5).dtype(), kFloat32);
  EXPECT_EQ(valuesAsDouble(mul(i32({3, 5}), 0.5)), (D{1.5, 2.5}));
  EXPECT_EQ(mul(i64({1}), 0.5).dtype(), kFloat32);
  EXPECT_EQ(add(i32({1}), 2).dtype(), kInt32);
  EXPECT_EQ(add(i32({1}), int64_t(2)).dtype(), kInt32);
  EXPECT_EQ(add(f32({1}).to(kFloat16), 2.5).dtype(), kFloat16);
  EXPECT_EQ(add(f32({1}), 2.5).dtype(), kFloat32);
  EXPECT_EQ(add(f64({1}), 2.5f).dtype(), kFloat64);
  EXPECT_EQ(add(b8({true}), 1).dtype(), kInt64);
  EXPECT_EQ(add(b8({true}), 1.5).dtype(), kFloat32);
  EXPECT_EQ(add(i32({1}), true).dtype(), kInt32);
  EXPECT_EQ(mul(f32({2}), true).dtype(), kFloat32);
  EXPECT_EQ(sub(2.5, i64({1})).dtype(), kFloat32);
  EXPECT_EQ(valuesAsDouble(sub(2.5, i64({1}))), (D{1.5}));
  EXPECT_EQ(div(1, i32({4})).dtype(), kFloat32);
  EXPECT_EQ(valuesAsDouble(div(1, i32({4}))), (D{0.25}));
  EXPECT_EQ(pow(i32({2}), 0.5).dtype(), kFloat32);
  EXPECT_EQ(pow(2, i32({3})).dtype(), kInt32);
  EXPECT_EQ(valuesAsInt64(pow(2, i32({3}))), (I{8}));
  // A 0-d tensor with a scalar: the scalar still only wins by kind.
  EXPECT_EQ(mul(scalar_tensor(3, kInt32), 2.5).dtype(), kFloat32);
  EXPECT_EQ(mul(scalar_tensor(3, kFloat64), 2).dtype(), kFloat64);
}

// ---- NaN in maximum / minimum ---------------------------------------------------------------

TEST(ElementwiseTest, MaximumAndMinimumPropagateNaNFromEitherSide) {
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    SCOPED_TRACE(std::string(name(dtype)));
    Tensor a = f64({1.0, kNaN, kNaN, 3.0}).to(dtype), b = f64({kNaN, 2.0, kNaN, -1.0}).to(dtype);
    EXPECT_TRUE(near(maximum(a, b), {kNaN, kNaN, kNaN, 3.0}, 0));
    EXPECT_TRUE(near(minimum(a, b), {kNaN, kNaN, kNaN, -1.0}, 0));
    EXPECT_TRUE(near(maximum(b, a), {kNaN, kNaN, kNaN, 3.0}, 0));
    EXPECT_TRUE(near(minimum(b, a), {kNaN, kNaN, kNaN, -1.0}, 0));
  }
  EXPECT_TRUE(near(maximum(f32({kNaN, 1.0}), 5.0), {kNaN, 5.0}, 0));
  EXPECT_TRUE(near(maximum(f32({kInf, -kInf}), f32({1.0, 1.0})), {kInf, 1.0}, 0));
}

// ---- comparisons and logical ops ------------------------------------------------------------

TEST(ElementwiseTest, Comparisons) {
  Tensor a = f32({1, 2, 3, kNaN}), b = f32({2, 2, 2, kNaN});
  EXPECT_EQ(eq(a, b).dtype(), kBool);
  EXPECT_EQ(valuesAsInt64(eq(a, b)), (I{0, 1, 0, 0}));
  EXPECT_EQ(valuesAsInt64(ne(a, b)), (I{1, 0, 1, 1}));
  EXPECT_EQ(valuesAsInt64(lt(a, b)), (I{1, 0, 0, 0}));
  EXPECT_EQ(valuesAsInt64(le(a, b)), (I{1, 1, 0, 0}));
  EXPECT_EQ(valuesAsInt64(gt(a, b)), (I{0, 0, 1, 0}));
  EXPECT_EQ(valuesAsInt64(ge(a, b)), (I{0, 1, 1, 0}));
}

TEST(ElementwiseTest, ComparisonsPromoteTheirOperands) {
  // int 2 vs float 2.5: compared as floats, not after truncating 2.5.
  EXPECT_EQ(valuesAsInt64(lt(i32({2, 3}), f32({2.5, 2.5}))), (I{1, 0}));
  EXPECT_EQ(valuesAsInt64(lt(i32({2, 3}), 2.5)), (I{1, 0}));
  EXPECT_EQ(valuesAsInt64(gt(2.5, i64({2, 3}))), (I{1, 0}));
  EXPECT_EQ(valuesAsInt64(eq(i64({1}), f64({1.0}))), (I{1}));
  EXPECT_EQ(valuesAsInt64(eq(b8({true, false}), 1)), (I{1, 0}));
  // Broadcast.
  Tensor c = ge(f32({0, 1, 2}, Shape{3, 1}), f32({1, 2}, Shape{1, 2}));
  EXPECT_THAT(c.sizes(), ElementsAre(3, 2));
  EXPECT_EQ(valuesAsInt64(c), (I{0, 0, 1, 0, 1, 1}));
}

TEST(ElementwiseTest, LogicalAndOr) {
  Tensor a = b8({true, true, false, false}), b = b8({true, false, true, false});
  EXPECT_EQ(valuesAsInt64(logical_and(a, b)), (I{1, 0, 0, 0}));
  EXPECT_EQ(valuesAsInt64(logical_or(a, b)), (I{1, 1, 1, 0}));
  Tensor f = logical_and(f32({0.0, 2.0, kNaN}), i32({1, 1, 3}));
  EXPECT_EQ(f.dtype(), kBool);
  EXPECT_EQ(valuesAsInt64(f), (I{0, 1, 1}));
}

// ---- where and convert ----------------------------------------------------------------------

TEST(ElementwiseTest, WhereSelectsWithBroadcasting) {
  Tensor cond = b8({true, false, true});
  EXPECT_EQ(valuesAsDouble(where(cond, f64({1, 2, 3}), f64({-1, -2, -3}))), (D{1, -2, 3}));
  Tensor c = where(tensor(std::vector<bool>{true, false}, Shape{2, 1}), f32({1, 2, 3}),
                   scalar_tensor(0.0));
  EXPECT_THAT(c.sizes(), ElementsAre(2, 3));
  EXPECT_EQ(valuesAsDouble(c), (D{1, 2, 3, 0, 0, 0}));
}

TEST(ElementwiseTest, WherePromotesTheValues) {
  Tensor cond = b8({true, false});
  Tensor m = where(cond, i32({1, 2}), f64({0.5, 0.25}));
  EXPECT_EQ(m.dtype(), kFloat64);
  EXPECT_EQ(valuesAsDouble(m), (D{1.0, 0.25}));
  EXPECT_EQ(where(cond, f32({1, 2}), scalar_tensor(0.0, kFloat64)).dtype(), kFloat32);
  EXPECT_EQ(where(cond, i32({1, 2}), i64({3, 4})).dtype(), kInt64);
}

TEST(ElementwiseTest, ConvertFloatToIntegerTruncatesTowardZero) {
  Tensor x = f32({-2.7, -1.5, -0.5, 0.5, 1.5, 2.99});
  EXPECT_EQ(valuesAsInt64(convert(x, kInt32)), (I{-2, -1, 0, 0, 1, 2}));
  EXPECT_EQ(valuesAsInt64(convert(x, kInt64)), (I{-2, -1, 0, 0, 1, 2}));
  EXPECT_EQ(convert(x, kInt64).dtype(), kInt64);
}

TEST(ElementwiseTest, ConvertToAndFromBool) {
  Tensor b = convert(f32({0.0, -0.0, 0.5, -3, kNaN, kInf}), kBool);
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(valuesAsInt64(b), (I{0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(valuesAsInt64(convert(i64({0, 7, -1}), kBool)), (I{0, 1, 1}));
  EXPECT_EQ(valuesAsDouble(convert(b8({true, false}), kFloat32)), (D{1, 0}));
  EXPECT_EQ(valuesAsInt64(convert(b8({true, false}), kInt64)), (I{1, 0}));
}

TEST(ElementwiseTest, ConvertBetweenFloatsRoundsToNearest) {
  Tensor third = convert(f64({1.0 / 3}), kFloat32);
  EXPECT_EQ(third.item<float>(), float(1.0 / 3));
  EXPECT_EQ(convert(f32({1.0 / 3}), kFloat16).item<float>(), float(Half(1.0f / 3)));
  EXPECT_EQ(convert(f32({1.0 / 3}), kBFloat16).item<float>(), float(BFloat16(1.0f / 3)));
  EXPECT_EQ(convert(f32({65520.0}), kFloat16).item<float>(), INFINITY);
  EXPECT_EQ(convert(f32({0.1}), kFloat64).item<double>(), double(0.1f));
}

TEST(ElementwiseTest, ConvertBetweenIntegersWraps) {
  Tensor x = i64({(int64_t(1) << 33) + 5, -(int64_t(1) << 32) - 7});
  EXPECT_EQ(valuesAsInt64(convert(x, kInt32)), (I{5, -7}));
  EXPECT_EQ(valuesAsInt64(convert(i32({-5}), kInt64)), (I{-5}));
}

TEST(ElementwiseTest, ConvertToTheSameDTypeIsItself) {
  Tensor x = f32({1});
  EXPECT_TRUE(convert(x, kFloat32).is_same(x));
}

// ---- operators --------------------------------------------------------------------------------

TEST(ElementwiseTest, Operators) {
  Tensor a = f64({1, 2, 3}), b = f64({4, 5, 6});
  EXPECT_EQ(valuesAsDouble(a + b), (D{5, 7, 9}));
  EXPECT_EQ(valuesAsDouble(a - b), (D{-3, -3, -3}));
  EXPECT_EQ(valuesAsDouble(a * b), (D{4, 10, 18}));
  EXPECT_EQ(valuesAsDouble(b / a), (D{4, 2.5, 2}));
  EXPECT_EQ(valuesAsDouble(-a), (D{-1, -2, -3}));
  EXPECT_EQ(valuesAsDouble(a + 1), (D{2, 3, 4}));
  EXPECT_EQ(valuesAsDouble(10.0 - a), (D{9, 8, 7}));
  EXPECT_EQ(valuesAsDouble(2 * a), (D{2, 4, 6}));
  EXPECT_EQ(valuesAsDouble(a / 2), (D{0.5, 1, 1.5}));
  EXPECT_EQ(valuesAsDouble(3.0 / a), (D{3, 1.5, 1}));
  EXPECT_EQ(valuesAsInt64(a == f64({1, 0, 3})), (I{1, 0, 1}));
  EXPECT_EQ(valuesAsInt64(a != 2), (I{1, 0, 1}));
  EXPECT_EQ(valuesAsInt64(a < 2), (I{1, 0, 0}));
  EXPECT_EQ(valuesAsInt64(a <= 2), (I{1, 1, 0}));
  EXPECT_EQ(valuesAsInt64(a > b), (I{0, 0, 0}));
  EXPECT_EQ(valuesAsInt64(2 >= a), (I{1, 1, 0}));
  EXPECT_EQ(valuesAsDouble((a + b) * (a - 1)), (D{0, 7, 18}));
}

// ---- non-contiguous, stride-0 and overlapping inputs ------------------------------------------

TEST(ElementwiseTest, TransposedAndSlicedInputs) {
  Tensor x = ramp({3, 4}, kFloat64);                 // x[i][j] = 4i + j
  Tensor y = ramp({4, 3}, kFloat64, 0, 100).t();     // y[i][j] = 100 (3j + i)
  Tensor z = add(x, y);
  std::vector<double> v = valuesAsDouble(z);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(v[i * 4 + j], double(4 * i + j + 100 * (3 * j + i)));
  Tensor s = ramp({4, 8}, kFloat64).slice(1, 1, 8, 3);  // columns 1, 4, 7
  EXPECT_EQ(valuesAsDouble(mul(s, 2.0)), (D{2, 8, 14, 18, 24, 30, 34, 40, 46, 50, 56, 62}));
}

TEST(ElementwiseTest, StrideZeroInputs) {
  Tensor row = ramp({4}, kFloat64).expand({3, 4});
  Tensor col = ramp({3, 1}, kFloat64, 0, 10).expand({3, 4});
  ASSERT_EQ(row.strides()[0], 0);
  Tensor z = sub(row, col);
  std::vector<double> v = valuesAsDouble(z);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(v[i * 4 + j], double(j - 10 * i));
  Tensor allZero = scalar_tensor(5.0, kFloat64).expand({2, 3});
  EXPECT_EQ(valuesAsDouble(neg(allZero)), D(6, -5.0));
}

TEST(ElementwiseTest, OverlappingOperands) {
  Tensor x = ramp({3, 3}, kFloat64);
  std::vector<double> v = valuesAsDouble(add(x, x.t()));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(v[i * 3 + j], double(3 * i + j + 3 * j + i));
}

// ---- large tensors (split across the thread pool) ---------------------------------------------

constexpr int64_t kLarge = (int64_t(1) << 20) + 7;  // not a multiple of any grain

TEST(ElementwiseTest, LargeContiguousBinary) {
  Tensor a = ramp({kLarge}), b = ramp({kLarge}, kFloat32, 1, -1);  // b[i] = 1 - i
  std::vector<double> v = valuesAsDouble(add(a, b));
  int64_t wrong = 0;
  for (double x : v) wrong += x != 1.0;
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(int64_t(v.size()), kLarge);
}

TEST(ElementwiseTest, LargeTransposedAndBroadcastInputs) {
  const int64_t rows = 1031, cols = 1029;
  Tensor x = ramp({cols, rows}, kInt64).t();           // x[i][j] = j * rows + i
  Tensor col = ramp({rows, 1}, kInt64, 0, 1000000);    // broadcast along columns
  std::vector<int64_t> v = valuesAsInt64(add(x, col));
  int64_t wrong = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) wrong += v[i * cols + j] != j * rows + i + 1000000 * i;
  EXPECT_EQ(wrong, 0);
}

TEST(ElementwiseTest, LargeUnaryCompareAndWhere) {
  Tensor x = ramp({kLarge}, kFloat64, -double(kLarge) / 2);
  std::vector<double> r = valuesAsDouble(relu(x));
  std::vector<int64_t> positive = valuesAsInt64(gt(x, 0.0));
  std::vector<double> w = valuesAsDouble(where(lt(x, 0.0), neg(x), x));
  int64_t wrong = 0;
  for (int64_t i = 0; i < kLarge; ++i) {
    double xi = -double(kLarge) / 2 + double(i);
    wrong += r[i] != std::max(xi, 0.0);
    wrong += positive[i] != (xi > 0);
    wrong += w[i] != std::fabs(xi);
  }
  EXPECT_EQ(wrong, 0);
}

TEST(ElementwiseTest, LargeConvert) {
  Tensor x = ramp({kLarge}, kFloat32, 0.5);
  std::vector<int64_t> v = valuesAsInt64(convert(x, kInt32));
  int64_t wrong = 0;
  for (int64_t i = 0; i < kLarge; ++i) wrong += v[i] != i;
  EXPECT_EQ(wrong, 0);
}

TEST(ElementwiseTest, ThePoolHasMoreThanOneThread) {
  // KILN_NUM_THREADS is set for this test in BUILD.bazel so the large tests run split.
  EXPECT_GT(ThreadPool::global().numThreads(), 1);
}

}  // namespace
}  // namespace kiln
