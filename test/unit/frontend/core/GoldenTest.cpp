// The eager core against PyTorch 1.13: every case of golden/core_ops.txt (written by
// scripts/golden/gen_core_goldens.py) runs through kiln, forward and, where the case has a
// gradient, backward. One gtest per case, named after it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kiln/core/Ops.h"
#include "kiln/core/Tensor.h"
#include "test/unit/frontend/Golden.h"

namespace kiln {
namespace {

using golden::GoldenCase;
using golden::GoldenTensor;
using golden::matchesGolden;

constexpr const char* kGoldenFile = "test/unit/frontend/golden/core_ops.txt";

using OpFn = std::function<Tensor(const GoldenCase&, const std::vector<Tensor>&)>;

template <class S>
Tensor withScalar(const std::string& op, const Tensor& x, S v, bool left) {
  static const std::map<std::string, std::function<Tensor(const Tensor&, S, bool)>> ops = {
      {"add", [](const Tensor& t, S s, bool l) { return l ? add(s, t) : add(t, s); }},
      {"sub", [](const Tensor& t, S s, bool l) { return l ? sub(s, t) : sub(t, s); }},
      {"mul", [](const Tensor& t, S s, bool l) { return l ? mul(s, t) : mul(t, s); }},
      {"div", [](const Tensor& t, S s, bool l) { return l ? div(s, t) : div(t, s); }},
      {"pow", [](const Tensor& t, S s, bool l) { return l ? pow(s, t) : pow(t, s); }},
      {"maximum", [](const Tensor& t, S s, bool l) { return l ? maximum(s, t) : maximum(t, s); }},
      {"minimum", [](const Tensor& t, S s, bool l) { return l ? minimum(s, t) : minimum(t, s); }},
      {"eq", [](const Tensor& t, S s, bool l) { return l ? eq(s, t) : eq(t, s); }},
      {"lt", [](const Tensor& t, S s, bool l) { return l ? lt(s, t) : lt(t, s); }},
      {"ge", [](const Tensor& t, S s, bool l) { return l ? ge(s, t) : ge(t, s); }},
  };
  return ops.at(op)(x, v, left);
}

// `tensor <op> scalar` or `scalar <op> tensor` with the scalar's C++ type from `kind`.
Tensor scalarCase(const std::string& op, const GoldenCase& c, const Tensor& x) {
  const bool left = c.attr("side") == "left";
  const std::string& kind = c.attr("kind");
  if (kind == "float") return withScalar<double>(op, x, c.floatAttr("value"), left);
  if (kind == "int") return withScalar<int64_t>(op, x, c.intAttr("value"), left);
  return withScalar<bool>(op, x, c.boolAttr("value"), left);
}

// The golden op name -> the kiln call. Inputs arrive already prepared (see prepare()).
const std::map<std::string, OpFn>& opTable() {
  static const std::map<std::string, OpFn> table = [] {
    std::map<std::string, OpFn> t;
    using Unary = Tensor (*)(const Tensor&, const SourceLoc&);
    for (auto [name, fn] : std::vector<std::pair<const char*, Unary>>{
             {"neg", neg}, {"abs", abs}, {"exp", exp}, {"log", log}, {"sqrt", sqrt},
             {"rsqrt", rsqrt}, {"tanh", tanh}, {"sigmoid", sigmoid}, {"relu", relu},
             {"sin", sin}, {"cos", cos}, {"floor", floor}, {"logical_not", logical_not}})
      t[name] = [fn](const GoldenCase&, const std::vector<Tensor>& x) {
        return fn(x[0], SourceLoc::current());
      };
    using Binary = Tensor (*)(const Tensor&, const Tensor&, const SourceLoc&);
    for (auto [name, fn] : std::vector<std::pair<const char*, Binary>>{
             {"add", add}, {"sub", sub}, {"mul", mul}, {"div", div}, {"pow", pow},
             {"maximum", maximum}, {"minimum", minimum}, {"eq", eq}, {"ne", ne}, {"lt", lt},
             {"le", le}, {"gt", gt}, {"ge", ge}, {"logical_and", logical_and},
             {"logical_or", logical_or}})
      t[name] = [fn](const GoldenCase&, const std::vector<Tensor>& x) {
        return fn(x[0], x[1], SourceLoc::current());
      };
    for (const char* name : {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "lt", "ge"})
      t[std::string(name) + "_scalar"] = [op = std::string(name)](const GoldenCase& c,
                                                                  const std::vector<Tensor>& x) {
        return scalarCase(op, c, x[0]);
      };
    t["where"] = [](const GoldenCase&, const std::vector<Tensor>& x) { return where(x[0], x[1], x[2]); };
    t["convert"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return convert(x[0], c.dtypeAttr("dtype"));
    };
    t["reshape"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return x[0].reshape(c.listAttr("shape"));
    };
    t["permute"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return x[0].permute(c.listAttr("dims"));
    };
    t["transpose"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return x[0].transpose(c.intAttr("dim0"), c.intAttr("dim1"));
    };
    t["t"] = [](const GoldenCase&, const std::vector<Tensor>& x) { return x[0].t(); };
    t["expand"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return x[0].expand(c.listAttr("shape"));
    };
    t["slice"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return x[0].slice(c.intAttr("dim"), c.intAttr("start"), c.intAttr("end"), c.intAttr("step"));
    };
    t["narrow"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return x[0].narrow(c.intAttr("dim"), c.intAttr("start"), c.intAttr("length"));
    };
    t["squeeze"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return c.has("dim") ? x[0].squeeze(c.intAttr("dim")) : x[0].squeeze();
    };
    t["unsqueeze"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return x[0].unsqueeze(c.intAttr("dim"));
    };
    t["flatten"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return x[0].flatten(c.intAttr("start"), c.intAttr("end"));
    };
    t["contiguous"] = [](const GoldenCase&, const std::vector<Tensor>& x) { return x[0].contiguous(); };
    t["cat"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      if (c.has("use") && c.attr("use") == "first_twice") return cat({x[0], x[0]}, c.intAttr("dim"));
      return cat(x, c.intAttr("dim"));
    };
    using Reduction = Tensor (*)(const Tensor&, Dims, bool, const SourceLoc&);
    for (auto [name, fn] : std::vector<std::pair<const char*, Reduction>>{
             {"sum", sum}, {"mean", mean}, {"amax", amax}, {"amin", amin}, {"prod", prod}})
      t[name] = [fn](const GoldenCase& c, const std::vector<Tensor>& x) {
        return fn(x[0], c.listAttr("dims"), c.boolAttr("keepdim"), SourceLoc::current());  // [] = all
      };
    t["sum_to"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return sum_to(x[0], c.listAttr("shape"));
    };
    t["stack"] = [](const GoldenCase& c, const std::vector<Tensor>& x) { return stack(x, c.intAttr("dim")); };
    // Indexing: the index tensor follows the input (index_add: then the source).
    t["take"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return take(x[0], x[1], c.intAttr("dim"));
    };
    t["index_select"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return index_select(x[0], c.intAttr("dim"), x[1]);
    };
    t["gather"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return gather(x[0], c.intAttr("dim"), x[1]);
    };
    t["index_add"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return index_add(x[0], c.intAttr("dim"), x[1], x[2]);
    };
    using ArgExtreme = Tensor (*)(const Tensor&, std::optional<int64_t>, bool, const SourceLoc&);
    for (auto [name, fn] : std::vector<std::pair<const char*, ArgExtreme>>{{"argmax", argmax}, {"argmin", argmin}})
      t[name] = [fn](const GoldenCase& c, const std::vector<Tensor>& x) {
        return fn(x[0], c.intAttr("dim"), c.boolAttr("keepdim"), SourceLoc::current());
      };
    // Factories (no inputs): arange(end) when only `end` is given, else
    // arange(start, end, step[, dtype]).
    t["arange"] = [](const GoldenCase& c, const std::vector<Tensor>&) {
      if (!c.has("start")) return arange(c.intAttr("end"));
      std::optional<DType> dtype;
      if (c.has("dtype")) dtype = c.dtypeAttr("dtype");
      // kind=int: the arguments are C++ integers (int64 result), as torch.arange(2, 11, 3).
      if (c.has("kind") && c.attr("kind") == "int")
        return arange(c.intAttr("start"), c.intAttr("end"), c.intAttr("step"), dtype);
      return arange(c.floatAttr("start"), c.floatAttr("end"), c.floatAttr("step"), dtype);
    };
    t["linspace"] = [](const GoldenCase& c, const std::vector<Tensor>&) {
      return linspace(c.floatAttr("start"), c.floatAttr("end"), c.intAttr("steps"), c.dtypeAttr("dtype"));
    };
    using Product = Tensor (*)(const Tensor&, const Tensor&, const SourceLoc&);
    for (auto [name, fn] : std::vector<std::pair<const char*, Product>>{{"matmul", matmul}, {"mm", mm}, {"bmm", bmm}})
      t[name] = [fn](const GoldenCase&, const std::vector<Tensor>& x) {
        return fn(x[0], x[1], SourceLoc::current());
      };
    // conv2d's inputs are x, weight and, when the case has one, bias.
    t["conv2d"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return conv2d(x[0], x[1], x.size() > 2 ? x[2] : Tensor(), c.listAttr("stride"), c.listAttr("padding"),
                    c.listAttr("dilation"), c.intAttr("groups"));
    };
    using Pool = Tensor (*)(const Tensor&, Dims, Dims, Dims, const SourceLoc&);
    for (auto [name, fn] : std::vector<std::pair<const char*, Pool>>{{"max_pool2d", max_pool2d},
                                                                   {"avg_pool2d", avg_pool2d}})
      t[name] = [fn](const GoldenCase& c, const std::vector<Tensor>& x) {  // stride= (empty): the kernel
        return fn(x[0], c.listAttr("kernel"), c.listAttr("stride"), c.listAttr("padding"), SourceLoc::current());
      };
    t["adaptive_avg_pool2d"] = [](const GoldenCase& c, const std::vector<Tensor>& x) {
      return adaptive_avg_pool2d(x[0], c.listAttr("output"));
    };
    return t;
  }();
  return table;
}

// Views the generator applied to the inputs before the op (attr `pre`), applied here too
// so non-contiguous inputs reach the kernels and their gradients flow back through views.
std::vector<Tensor> prepare(const GoldenCase& c, std::vector<Tensor> x) {
  if (!c.has("pre")) return x;
  const std::string& pre = c.attr("pre");
  if (pre == "t" || pre == "t_first") {
    x[0] = x[0].t();
  } else if (pre == "t_expand") {
    x[0] = x[0].t();
    x[1] = x[1].unsqueeze(1).expand({3, 4});
  } else if (pre == "transpose02") {
    x[0] = x[0].transpose(0, 2);
  } else if (pre == "permute120") {
    x[0] = x[0].permute({1, 2, 0});
  } else {
    throw std::runtime_error("unknown pre '" + pre + "'");
  }
  return x;
}

std::vector<GoldenCase> loadCases() {
  try {
    return golden::parseGoldenFile(golden::runfilePath(kGoldenFile));
  } catch (const std::exception&) {
    return {};  // GoldenFileTest.Loads reports why
  }
}

const std::vector<GoldenCase>& allCases() {
  static const std::vector<GoldenCase> cases = loadCases();
  return cases;
}

TEST(GoldenFileTest, Loads) {
  std::vector<GoldenCase> cases;
  ASSERT_NO_THROW(cases = golden::parseGoldenFile(golden::runfilePath(kGoldenFile)));
  EXPECT_GT(cases.size(), 500u);
  std::set<std::string> names;
  for (const GoldenCase& c : cases) EXPECT_TRUE(names.insert(c.name).second) << "duplicate " << c.name;
}

TEST(GoldenFileTest, EveryOpHasATableEntryAndEveryEntryIsTested) {
  std::set<std::string> used;
  for (const GoldenCase& c : allCases()) {
    used.insert(c.op);
    EXPECT_TRUE(opTable().count(c.op)) << c.name << ": no kiln mapping for op '" << c.op << "'";
  }
  for (const auto& [name, fn] : opTable()) EXPECT_TRUE(used.count(name)) << "no golden case for " << name;
}

class CoreOpGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(CoreOpGolden, MatchesPyTorch) {
  const GoldenCase& c = GetParam();
  SCOPED_TRACE(std::string(kGoldenFile) + ":" + std::to_string(c.line));
  auto op = opTable().find(c.op);
  ASSERT_NE(op, opTable().end()) << "no kiln mapping for op '" << c.op << "'";
  const bool backward = c.gradOutput.has_value();
  std::vector<Tensor> inputs;
  for (const GoldenTensor& g : c.inputs) {
    Tensor x = g.toTensor();
    if (backward && (x.dtype() == kFloat32 || x.dtype() == kFloat64)) x.requires_grad_();
    inputs.push_back(x);
  }
  Tensor out;
  try {
    out = op->second(c, prepare(c, inputs));
  } catch (const Error& e) {
    FAIL() << "kiln raised: " << e.what();
  }
  EXPECT_TRUE(matchesGolden(out, c.output)) << "forward";
  if (!backward) return;
  ASSERT_TRUE(out.requires_grad()) << "the result does not require grad";
  try {
    out.backward(c.gradOutput->toTensor());
  } catch (const Error& e) {
    FAIL() << "kiln raised in backward: " << e.what();
  }
  for (size_t i = 0; i < c.grads.size(); ++i) {
    if (!c.grads[i]) continue;
    Tensor g = inputs[i].grad();
    if (!g.defined()) g = zeros_like(inputs[i]);  // no gradient reached it: zero, as PyTorch's None
    EXPECT_TRUE(matchesGolden(g, *c.grads[i])) << "gradient of input " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(CoreOps, CoreOpGolden, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) { return info.param.name; });

// ---- the parser itself ----------------------------------------------------------------------

TEST(GoldenParserTest, ParsesAllFields) {
  GoldenCase c = golden::parseGoldenLine(
      "case x | op add | attrs dims=0,-1;keepdim=1;dtype=int32;empty= | in float32[2]=1.5,nan;"
      "int64[]=-9007199254740993 | out bool[2,0]= | gout float64[1]=inf | grads -;float32[1]=-inf",
      7);
  EXPECT_EQ(c.name, "x");
  EXPECT_EQ(c.op, "add");
  EXPECT_EQ(c.line, 7);
  EXPECT_EQ(c.listAttr("dims"), (Shape{0, -1}));
  EXPECT_TRUE(c.boolAttr("keepdim"));
  EXPECT_EQ(c.dtypeAttr("dtype"), kInt32);
  EXPECT_EQ(c.listAttr("empty"), Shape{});
  ASSERT_EQ(c.inputs.size(), 2u);
  EXPECT_EQ(c.inputs[0].dtype, kFloat32);
  EXPECT_EQ(c.inputs[0].floats[0], 1.5);
  EXPECT_TRUE(std::isnan(c.inputs[0].floats[1]));
  EXPECT_EQ(c.inputs[1].shape, Shape{});
  EXPECT_EQ(c.inputs[1].ints[0], -9007199254740993);  // exact beyond double
  EXPECT_EQ(c.output.shape, (Shape{2, 0}));
  ASSERT_TRUE(c.gradOutput.has_value());
  EXPECT_TRUE(std::isinf(c.gradOutput->floats[0]));
  ASSERT_EQ(c.grads.size(), 2u);
  EXPECT_FALSE(c.grads[0].has_value());
  EXPECT_EQ(c.grads[1]->floats[0], -INFINITY);
}

TEST(GoldenParserTest, RejectsMalformedLines) {
  EXPECT_THROW(golden::parseGoldenLine("case x | op add | attrs - | in - ", 3), std::runtime_error);
  EXPECT_THROW(golden::parseGoldenLine("case x | op add | attrs - | in float32[2]=1 | out bool[]=1", 3),
               std::runtime_error);
  EXPECT_THROW(golden::parseGoldenLine("case x | op add | attrs - | in float99[1]=1 | out bool[]=1", 3),
               std::runtime_error);
  EXPECT_THROW(golden::parseGoldenLine("case x | op add | attrs - | in int32[1]=1.5 | out bool[]=1", 3),
               std::runtime_error);
  try {
    golden::parseGoldenLine("case x | oops add | attrs - | in - | out bool[]=1", 12);
    ADD_FAILURE();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("golden line 12"));
  }
}

TEST(GoldenParserTest, ComparesWithTolerancesPerDType) {
  GoldenTensor e{kFloat32, {2}, {1.0, 0.0}, {}};
  EXPECT_TRUE(matchesGolden(tensor(std::vector<float>{1.000005f, 0.0000005f}), e));
  EXPECT_FALSE(matchesGolden(tensor(std::vector<float>{1.0001f, 0.0f}), e));
  EXPECT_FALSE(matchesGolden(tensor(std::vector<double>{1.0, 0.0}), e));  // dtype differs
  GoldenTensor i{kInt64, {1}, {}, {9007199254740993}};
  EXPECT_TRUE(matchesGolden(tensor(std::vector<int64_t>{9007199254740993}), i));
  EXPECT_FALSE(matchesGolden(tensor(std::vector<int64_t>{9007199254740992}), i));
  ::testing::AssertionResult r = matchesGolden(tensor(std::vector<float>{1.0f, 5.0f}), e);
  EXPECT_THAT(r.message(), ::testing::HasSubstr("element [1]"));
}

}  // namespace
}  // namespace kiln
