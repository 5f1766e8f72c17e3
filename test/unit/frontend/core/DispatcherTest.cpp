// The dispatcher's hook, as the tracer will use it: every dispatched op with its kiln op
// name, attributes, shapes and the user's source line; explicit broadcast_in_dim and
// convert ops; symbolic placeholders and value reads.
#include "kiln/core/Dispatcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Tensor.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/core/TestTensors.h"

// The op table's add, for dispatchInPlace (declared here rather than by including the
// core's private OpTable.h).
namespace kiln::ops {
extern const OpDef kAdd;
}  // namespace kiln::ops

namespace kiln {
namespace {

using kiln::testing::at;
using kiln::testing::ramp;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string attrText(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) return std::to_string(x);
        else if constexpr (std::is_same_v<T, double>) {
          std::ostringstream os;
          os << x;
          return os.str();
        } else if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>) return formatShape(x);
        else if constexpr (std::is_same_v<T, DType>) return std::string(name(x));
        else return x;
      },
      v);
}

// What the hook saw of one op, copied (OpCall's spans die with the call).
struct Recorded {
  std::string name;
  std::string kilnOp;
  std::vector<Shape> inputShapes, outputShapes;
  std::vector<DType> inputDTypes, outputDTypes;
  std::vector<std::pair<std::string, std::string>> attrs;
  std::vector<bool> outputIsPlaceholder;
  std::string file;
  unsigned line = 0;
  bool inPlace = false;
  const TensorImpl* firstOutput = nullptr;

  std::string attr(const std::string& key) const {
    for (const auto& [k, v] : attrs)
      if (k == key) return v;
    return "<missing>";
  }
};

struct Read {
  std::string what;
  unsigned line;
  const TensorImpl* tensor;
};

// A fake tracer: records ops and value reads; in symbolic mode a value read is a
// TraceError, as a symbolic trace will raise.
class RecordingHook : public DispatchHook {
 public:
  explicit RecordingHook(bool symbolic = false, bool throwOnRead = true)
      : symbolic_(symbolic), throwOnRead_(throwOnRead) {}

  bool symbolic() const override { return symbolic_; }

  void onOp(const OpCall& call) override {
    Recorded r;
    r.name = std::string(call.op.name);
    r.kilnOp = std::string(call.op.kilnOp);
    for (const Tensor& x : call.inputs) {
      r.inputShapes.push_back(x.sizes());
      r.inputDTypes.push_back(x.dtype());
    }
    for (const Tensor& y : call.outputs) {
      r.outputShapes.push_back(y.sizes());
      r.outputDTypes.push_back(y.dtype());
      r.outputIsPlaceholder.push_back(y.is_placeholder());
    }
    for (const auto& [key, value] : call.attrs.items()) r.attrs.emplace_back(key, attrText(value));
    r.file = call.loc.file_name();
    r.line = call.loc.line();
    r.inPlace = call.inPlace;
    r.firstOutput = call.outputs.empty() ? nullptr : call.outputs[0].impl();
    ops.push_back(std::move(r));
  }

  void onValueRead(const Tensor& tensor, std::string_view what, const SourceLoc& loc) override {
    reads.push_back({std::string(what), loc.line(), tensor.impl()});
    if (symbolic_ && throwOnRead_)
      throw TraceError::make(loc, what, "a symbolic trace cannot read the values of a tensor of "
                             "shape ", tensor.sizes());
  }

  std::vector<std::string> kilnOps() const {
    std::vector<std::string> names;
    for (const Recorded& r : ops) names.push_back(r.kilnOp);
    return names;
  }

  std::vector<Recorded> ops;
  std::vector<Read> reads;

 private:
  bool symbolic_;
  bool throwOnRead_;
};

// ---- recording -------------------------------------------------------------------------------

TEST(DispatcherTest, RecordsEachOpWithShapesAndLine) {
  Tensor a = ramp({2, 3});
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  Tensor c = exp(a); const unsigned line = __LINE__;
  ASSERT_EQ(hook.ops.size(), 1u);
  const Recorded& r = hook.ops[0];
  EXPECT_EQ(r.name, "exp");
  EXPECT_EQ(r.kilnOp, "kiln.exp");
  EXPECT_THAT(r.inputShapes, ElementsAre(Shape{2, 3}));
  EXPECT_THAT(r.outputShapes, ElementsAre(Shape{2, 3}));
  EXPECT_THAT(r.outputDTypes, ElementsAre(kFloat32));
  EXPECT_EQ(r.line, line);
  EXPECT_EQ(r.file, __FILE__);
  EXPECT_FALSE(r.inPlace);
  EXPECT_EQ(r.firstOutput, c.impl());
  EXPECT_FALSE(c.is_placeholder());  // not symbolic: values are computed
}

TEST(DispatcherTest, RecordsAttributes) {
  Tensor x = ramp({2, 3, 4});
  RecordingHook hook;
  DispatchHookGuard guard(&hook);

  sum(x, {-1, 0}, true);
  ASSERT_EQ(hook.ops.size(), 1u);
  EXPECT_EQ(hook.ops[0].kilnOp, "kiln.reduce");
  EXPECT_EQ(hook.ops[0].attr("kind"), "sum");
  EXPECT_EQ(hook.ops[0].attr("dims"), "[0, 2]");
  EXPECT_EQ(hook.ops[0].attr("keep_dims"), "true");
  EXPECT_THAT(hook.ops[0].outputShapes, ElementsAre(Shape{1, 3, 1}));

  hook.ops.clear();
  x.permute({2, 0, 1});
  ASSERT_EQ(hook.ops.size(), 1u);
  EXPECT_EQ(hook.ops[0].kilnOp, "kiln.transpose");
  EXPECT_EQ(hook.ops[0].attr("permutation"), "[2, 0, 1]");

  hook.ops.clear();
  x.slice(2, 1, 4, 2);
  ASSERT_EQ(hook.ops.size(), 1u);
  EXPECT_EQ(hook.ops[0].kilnOp, "kiln.slice");
  EXPECT_EQ(hook.ops[0].attr("start"), "[0, 0, 1]");
  EXPECT_EQ(hook.ops[0].attr("limit"), "[2, 3, 4]");
  EXPECT_EQ(hook.ops[0].attr("stride"), "[1, 1, 2]");
  EXPECT_THAT(hook.ops[0].outputShapes, ElementsAre(Shape{2, 3, 2}));

  hook.ops.clear();
  x.reshape({6, -1});
  ASSERT_EQ(hook.ops.size(), 1u);
  EXPECT_EQ(hook.ops[0].kilnOp, "kiln.reshape");
  EXPECT_EQ(hook.ops[0].attr("shape"), "[6, 4]");

  hook.ops.clear();
  cat({x, x}, 1);
  ASSERT_EQ(hook.ops.size(), 1u);
  EXPECT_EQ(hook.ops[0].kilnOp, "kiln.concat");
  EXPECT_EQ(hook.ops[0].attr("dim"), "1");
  EXPECT_THAT(hook.ops[0].inputShapes, ElementsAre(Shape{2, 3, 4}, Shape{2, 3, 4}));

  hook.ops.clear();
  convert(x, kFloat16);
  ASSERT_EQ(hook.ops.size(), 1u);
  EXPECT_EQ(hook.ops[0].kilnOp, "kiln.convert");
  EXPECT_EQ(hook.ops[0].attr("dtype"), "float16");

  hook.ops.clear();
  full({2}, 1.5, kFloat64);
  ASSERT_EQ(hook.ops.size(), 1u);
  EXPECT_EQ(hook.ops[0].kilnOp, "kiln.constant");
  EXPECT_EQ(hook.ops[0].attr("shape"), "[2]");
  EXPECT_EQ(hook.ops[0].attr("value"), "1.5");
  EXPECT_EQ(hook.ops[0].attr("dtype"), "float64");
  EXPECT_TRUE(hook.ops[0].inputShapes.empty());

  hook.ops.clear();
  le(x, x);
  ASSERT_EQ(hook.ops.size(), 1u);
  EXPECT_EQ(hook.ops[0].kilnOp, "kiln.compare");
  EXPECT_EQ(hook.ops[0].attr("direction"), "le");
  EXPECT_THAT(hook.ops[0].outputDTypes, ElementsAre(kBool));
}

TEST(DispatcherTest, BroadcastingShowsAsBroadcastInDimThenTheOp) {
  Tensor a = ramp({3, 1}), b = ramp({1, 4});
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  add(a, b);
  EXPECT_THAT(hook.kilnOps(), ElementsAre("kiln.broadcast_in_dim", "kiln.broadcast_in_dim", "kiln.add"));
  ASSERT_EQ(hook.ops.size(), 3u);
  EXPECT_EQ(hook.ops[0].attr("dims"), "[0, 1]");
  EXPECT_EQ(hook.ops[0].attr("shape"), "[3, 4]");
  EXPECT_THAT(hook.ops[0].inputShapes, ElementsAre(Shape{3, 1}));
  EXPECT_THAT(hook.ops[1].inputShapes, ElementsAre(Shape{1, 4}));
  // The primitive sees equal shapes only (the dialect has no implicit broadcasting).
  EXPECT_THAT(hook.ops[2].inputShapes, ElementsAre(Shape{3, 4}, Shape{3, 4}));
}

TEST(DispatcherTest, BroadcastingALowerRankOperandMapsItsDims) {
  Tensor a = ramp({4}), b = ramp({2, 3, 4});
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  mul(a, b);
  EXPECT_THAT(hook.kilnOps(), ElementsAre("kiln.broadcast_in_dim", "kiln.mul"));
  EXPECT_EQ(hook.ops[0].attr("dims"), "[2]");
  EXPECT_EQ(hook.ops[0].attr("shape"), "[2, 3, 4]");
  EXPECT_THAT(hook.ops[1].inputShapes, ElementsAre(Shape{2, 3, 4}, Shape{2, 3, 4}));
}

TEST(DispatcherTest, EqualShapesNeedNoBroadcast) {
  Tensor a = ramp({2, 3});
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  sub(a, a);
  EXPECT_THAT(hook.kilnOps(), ElementsAre("kiln.sub"));
}

TEST(DispatcherTest, MixedDTypesShowAsConvertThenTheOp) {
  Tensor i = ramp({3}, kInt32), f = ramp({3});
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  add(i, f);
  EXPECT_THAT(hook.kilnOps(), ElementsAre("kiln.convert", "kiln.add"));
  EXPECT_EQ(hook.ops[0].attr("dtype"), "float32");
  EXPECT_THAT(hook.ops[0].inputDTypes, ElementsAre(kInt32));
  EXPECT_THAT(hook.ops[1].inputDTypes, ElementsAre(kFloat32, kFloat32));
}

TEST(DispatcherTest, ScalarOperandsAreConstantsBroadcastToTheTensor) {
  Tensor x = ramp({2, 3}, kInt32);
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  mul(x, 0.5);
  // 0.5 becomes a float32 0-d constant; the int32 tensor converts; the constant broadcasts.
  EXPECT_THAT(hook.kilnOps(), Contains("kiln.constant"));
  EXPECT_THAT(hook.kilnOps(), Contains("kiln.convert"));
  EXPECT_EQ(hook.kilnOps().back(), "kiln.mul");
  EXPECT_THAT(hook.ops.back().inputShapes, ElementsAre(Shape{2, 3}, Shape{2, 3}));
  EXPECT_THAT(hook.ops.back().inputDTypes, ElementsAre(kFloat32, kFloat32));
}

TEST(DispatcherTest, ViewsAreRecordedThoughEagerViewsCopyNothing) {
  Tensor x = ramp({2, 3});
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  x.t();
  x.expand({4, 2, 3});
  x.unsqueeze(0);
  x.narrow(1, 0, 2);
  EXPECT_THAT(hook.kilnOps(), ElementsAre("kiln.transpose", "kiln.broadcast_in_dim", "kiln.reshape",
                                          "kiln.slice"));
}

TEST(DispatcherTest, NoOpsRecordNothing) {
  Tensor x = ramp({2, 3});
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  x.reshape({2, 3});
  x.contiguous();
  convert(x, kFloat32);
  x.permute({0, 1});
  x.expand({2, 3});
  x.slice(0, 0, 2);
  EXPECT_TRUE(hook.ops.empty());
}

// Every kiln op the frontend records exists in the dialect (docs/ARCHITECTURE.md).
TEST(DispatcherTest, RecordedNamesAreDialectOps) {
  const std::set<std::string> dialect = {
      "kiln.constant", "kiln.neg", "kiln.abs", "kiln.exp", "kiln.log", "kiln.sqrt", "kiln.rsqrt",
      "kiln.tanh", "kiln.sigmoid", "kiln.relu", "kiln.gelu", "kiln.sin", "kiln.cos", "kiln.floor",
      "kiln.not", "kiln.add", "kiln.sub", "kiln.mul", "kiln.div", "kiln.pow", "kiln.max",
      "kiln.min", "kiln.and", "kiln.or", "kiln.compare", "kiln.select", "kiln.convert",
      "kiln.broadcast_in_dim", "kiln.reshape", "kiln.transpose", "kiln.slice", "kiln.concat",
      "kiln.reduce", "kiln.matmul", "kiln.conv2d", "kiln.pool2d", "kiln.gather", "kiln.rng"};
  Tensor x = ramp({2, 3}, kFloat32, 0.5);
  Tensor b = gt(x, 1.0);
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  for (auto op : {neg, abs, exp, log, sqrt, rsqrt, tanh, sigmoid, relu, sin, cos, floor})
    op(x, SourceLoc::current());
  logical_not(b);
  using Binary = Tensor (*)(const Tensor&, const Tensor&, const SourceLoc&);
  for (Binary op : std::initializer_list<Binary>{add, sub, mul, div, pow, maximum, minimum, eq, ne,
                                                 lt, le, gt, ge})
    op(x, x, SourceLoc::current());
  logical_and(b, b);
  logical_or(b, b);
  where(b, x, x);
  cat({x, x});
  x.t().contiguous();
  x.clone();
  sum(x);
  mean(x, {0});
  amax(x);
  amin(x);
  prod(x);
  for (const Recorded& r : hook.ops) EXPECT_TRUE(dialect.count(r.kilnOp)) << r.name << " -> " << r.kilnOp;
  EXPECT_GT(hook.ops.size(), 35u);
}

// ---- source locations ------------------------------------------------------------------------

TEST(DispatcherTest, OperatorsRecordTheCallersLine) {
  Tensor a = ramp({3, 1}), b = ramp({1, 4}), i = ramp({3, 1}, kInt32);
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  std::vector<std::pair<const char*, unsigned>> expressions;
  Tensor r1 = a + b; expressions.push_back({"a + b", __LINE__});
  Tensor r2 = a * 2.0; expressions.push_back({"a * 2.0", __LINE__});
  Tensor r3 = 2.0 - a; expressions.push_back({"2.0 - a", __LINE__});
  Tensor r4 = -a; expressions.push_back({"-a", __LINE__});
  Tensor r5 = i / b; expressions.push_back({"i / b", __LINE__});
  Tensor r6 = a < b; expressions.push_back({"a < b", __LINE__});
  Tensor r7 = (a + 1) * (b - 1); expressions.push_back({"(a + 1) * (b - 1)", __LINE__});
  std::set<unsigned> seen;
  for (const Recorded& r : hook.ops) {
    EXPECT_EQ(r.file, __FILE__) << r.kilnOp << " recorded at " << r.file << ":" << r.line;
    seen.insert(r.line);
  }
  for (const auto& [text, line] : expressions) EXPECT_TRUE(seen.count(line)) << text;
  EXPECT_EQ(seen.size(), expressions.size()) << "every op carries one of the expressions' lines";
}

TEST(DispatcherTest, FunctionsRecordTheCallersLine) {
  Tensor a = ramp({2, 3}), b = ramp({3});
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  add(a, b); const unsigned line = __LINE__;
  a.t().reshape({6}).slice(0, 1, 5, 2); const unsigned viewLine = __LINE__;
  ASSERT_EQ(hook.ops.size(), 5u);  // broadcast, add; transpose, reshape (a copy), slice
  for (size_t i = 0; i < hook.ops.size(); ++i) {
    EXPECT_EQ(hook.ops[i].file, __FILE__);
    EXPECT_EQ(hook.ops[i].line, i < 2 ? line : viewLine) << hook.ops[i].kilnOp;
  }
}

TEST(DispatcherTest, ErrorsCarryTheCallersLocation) {
  Tensor a = ramp({2, 3}), b = ramp({4});
  unsigned line = 0;
  try {
    line = __LINE__; Tensor c = a + b; (void)c;
    ADD_FAILURE() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.op(), "add");
    EXPECT_EQ(e.location().line(), line);
    EXPECT_STREQ(e.location().file_name(), __FILE__);
  }
}

// ---- symbolic mode ---------------------------------------------------------------------------

TEST(DispatcherTest, SymbolicModeYieldsPlaceholders) {
  Tensor x = ramp({2, 3});
  RecordingHook hook(/*symbolic=*/true);
  DispatchHookGuard guard(&hook);
  Tensor y = exp(x);
  EXPECT_TRUE(y.is_placeholder());
  EXPECT_EQ(y.impl()->storage, nullptr);
  EXPECT_EQ(y.rawData(), nullptr);
  EXPECT_THAT(y.sizes(), ElementsAre(2, 3));
  EXPECT_EQ(y.dtype(), kFloat32);
  // Placeholders flow into further ops, with broadcasting and promotion worked out.
  Tensor z = add(y, ramp({3}, kFloat64));
  EXPECT_TRUE(z.is_placeholder());
  EXPECT_THAT(z.sizes(), ElementsAre(2, 3));
  EXPECT_EQ(z.dtype(), kFloat64);
  Tensor s = sum(z.t().reshape({6}), {0});
  EXPECT_TRUE(s.is_placeholder());
  EXPECT_EQ(s.dim(), 0);
  for (const Recorded& r : hook.ops)
    for (bool placeholder : r.outputIsPlaceholder) EXPECT_TRUE(placeholder) << r.kilnOp;
  EXPECT_THAT(hook.kilnOps(), Contains("kiln.exp"));
  EXPECT_THAT(hook.kilnOps(), Contains("kiln.reduce"));
}

// Ops without tensor operands (factories) compute even in a symbolic trace, so the
// tracer can record their values as constants (docs/ARCHITECTURE.md, Dispatch).
TEST(DispatcherTest, SymbolicModeComputesFactories) {
  RecordingHook hook(/*symbolic=*/true);
  DispatchHookGuard guard(&hook);
  Tensor f = full({2, 2}, 1.5);
  EXPECT_FALSE(f.is_placeholder());
  ASSERT_EQ(hook.ops.size(), 1u);
  EXPECT_EQ(hook.ops[0].kilnOp, "kiln.constant");
  EXPECT_THAT(hook.ops[0].outputIsPlaceholder, ElementsAre(false));
  // ... and whatever takes an operand is a placeholder again.
  EXPECT_TRUE(neg(f).is_placeholder());
}

TEST(DispatcherTest, SymbolicModeStillChecksShapes) {
  RecordingHook hook(/*symbolic=*/true);
  DispatchHookGuard guard(&hook);
  Tensor y = exp(ramp({2, 3}));
  EXPECT_KILN_ERROR(add(y, ramp({4})), ShapeError,
                    "kiln::add: operands have shapes [2, 3] and [4], which cannot be broadcast" +
                        at());
  EXPECT_THROW(y.reshape({5}), ShapeError);
}

TEST(DispatcherTest, ItemOfAPlaceholderThrowsTraceErrorThroughOnValueRead) {
  RecordingHook hook(/*symbolic=*/true);
  DispatchHookGuard guard(&hook);
  Tensor y = sum(exp(ramp({2, 3})));
  EXPECT_KILN_ERROR(y.item<float>(), TraceError,
                    "kiln::item: a symbolic trace cannot read the values of a tensor of shape []" +
                        at());
  ASSERT_EQ(hook.reads.size(), 1u);
  EXPECT_EQ(hook.reads[0].what, "item");
  EXPECT_EQ(hook.reads[0].tensor, y.impl());
  EXPECT_THROW(y.data_ptr<float>(), TraceError);
  EXPECT_EQ(hook.reads.back().what, "data_ptr");
}

// A hook that lets reads through (a by-value trace) cannot make a placeholder readable.
TEST(DispatcherTest, APlaceholderHasNoValuesEvenIfTheHookAllowsTheRead) {
  RecordingHook hook(/*symbolic=*/true, /*throwOnRead=*/false);
  DispatchHookGuard guard(&hook);
  Tensor y = exp(ramp({2, 3}));
  EXPECT_KILN_ERROR(y.data_ptr<float>(), TraceError,
                    "kiln::data_ptr: a symbolic trace placeholder of shape [2, 3] has no values "
                    "outside its trace" + at());
}

TEST(DispatcherTest, PlaceholderUsedOutsideTheTraceIsTraceError) {
  Tensor p;
  {
    RecordingHook hook(/*symbolic=*/true);
    DispatchHookGuard guard(&hook);
    p = exp(ramp({2, 3}));
  }
  ASSERT_TRUE(p.is_placeholder());
  EXPECT_KILN_ERROR(exp(p), TraceError,
                    "kiln::exp: operand 0 (shape [2, 3]) is a symbolic trace placeholder used "
                    "outside its trace" + at());
  EXPECT_KILN_ERROR_HAS(add(ramp({2, 3}), p), TraceError, "operand 1 (shape [2, 3]) is a symbolic");
  EXPECT_KILN_ERROR(p.item<float>(), TraceError,
                    "kiln::item: a symbolic trace placeholder of shape [2, 3] has no values "
                    "outside its trace" + at());
  // Under a non-symbolic hook too.
  RecordingHook eager;
  DispatchHookGuard guard(&eager);
  EXPECT_THROW(neg(p), TraceError);
}

// ---- value reads -----------------------------------------------------------------------------

TEST(DispatcherTest, ValueReadsOfRealTensorsAreReported) {
  Tensor x = ramp({1});
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  x.item<float>(); const unsigned line = __LINE__;
  x.data_ptr<float>();
  ASSERT_EQ(hook.reads.size(), 2u);
  EXPECT_EQ(hook.reads[0].what, "item");
  EXPECT_EQ(hook.reads[0].line, line);
  EXPECT_EQ(hook.reads[1].what, "data_ptr");
}

// Dispatcher.h: printing is a value read (a by-value trace bakes the value in and warns; a
// symbolic trace throws).
TEST(DispatcherTest, PrintingIsAValueRead) {
  Tensor x = ramp({3});
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  std::ostringstream os;
  os << x;
  EXPECT_EQ(hook.reads.size(), 1u);
}

// ---- in-place, guards, threads, autograd -------------------------------------------------------

TEST(DispatcherTest, InPlaceOpsAreMarked) {
  Tensor x = ramp({3}), one = ones({3});
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  dispatchInPlace(ops::kAdd, x, {x, one}, {}, SourceLoc::current()); const unsigned line = __LINE__;
  ASSERT_EQ(hook.ops.size(), 1u);
  EXPECT_TRUE(hook.ops[0].inPlace);
  EXPECT_EQ(hook.ops[0].kilnOp, "kiln.add");
  EXPECT_EQ(hook.ops[0].firstOutput, x.impl());
  EXPECT_EQ(hook.ops[0].line, line);
  EXPECT_EQ(x.data_ptr<float>()[0], 1.0f);
  EXPECT_EQ(x.data_ptr<float>()[2], 3.0f);
}

TEST(DispatcherTest, GuardsNestAndRestore) {
  EXPECT_EQ(currentDispatchHook(), nullptr);
  RecordingHook outer, inner;
  {
    DispatchHookGuard g1(&outer);
    EXPECT_EQ(currentDispatchHook(), &outer);
    {
      DispatchHookGuard g2(&inner);
      EXPECT_EQ(currentDispatchHook(), &inner);
      neg(ramp({1}));
    }
    EXPECT_EQ(currentDispatchHook(), &outer);
    {
      DispatchHookGuard off(nullptr);
      neg(ramp({1}));
    }
    neg(ramp({1}));
  }
  EXPECT_EQ(currentDispatchHook(), nullptr);
  EXPECT_THAT(inner.kilnOps(), Contains("kiln.neg"));
  std::vector<std::string> outerOps = outer.kilnOps();
  EXPECT_EQ(std::count(outerOps.begin(), outerOps.end(), "kiln.neg"), 1);
}

TEST(DispatcherTest, HooksArePerThread) {
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  Tensor x = ramp({4});
  hook.ops.clear();
  std::thread([&] { exp(x); }).join();
  EXPECT_TRUE(hook.ops.empty());
}

// Gradients are written with frontend ops, so a traced backward() records ordinary ops.
TEST(DispatcherTest, BackwardIsRecordedAsOrdinaryOps) {
  Tensor x = ramp({3}, kFloat64, 1);
  x.requires_grad_();
  Tensor y = sum(mul(x, x));
  RecordingHook hook;
  DispatchHookGuard guard(&hook);
  y.backward();
  std::vector<std::string> names = hook.kilnOps();
  EXPECT_THAT(names, Contains("kiln.constant"));          // the seed
  EXPECT_THAT(names, Contains("kiln.broadcast_in_dim"));  // sum's gradient
  EXPECT_GE(std::count(names.begin(), names.end(), "kiln.mul"), 2);
  EXPECT_THAT(names, Contains("kiln.add"));  // x's two contributions
}

TEST(DispatcherTest, SymbolicBackwardProducesPlaceholderGradients) {
  Tensor x = ramp({3}, kFloat64, 1);
  x.requires_grad_();
  RecordingHook hook(/*symbolic=*/true);
  DispatchHookGuard guard(&hook);
  Tensor y = sum(exp(x));
  y.backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_TRUE(x.grad().is_placeholder());
  EXPECT_THAT(x.grad().sizes(), ElementsAre(3));
}

}  // namespace
}  // namespace kiln
