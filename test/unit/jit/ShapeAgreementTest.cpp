// The frontend's shape rules and the kiln dialect's type inference agree: for every op the
// bridge records and many calls of it (rank 0, size-1 and size-0 dims, every dtype, and
// calls one side should reject), the op table's shape rule and the recorded kiln op's
// inference plus verifier either both accept with the same result types or both reject.
// A traced program therefore verifies exactly when it ran eagerly, and verified IR that
// the interpreter maps back through tableCallFor passes the shape rules it runs.
#include <array>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <variant>

#include <gtest/gtest.h>

#include "bridge/OpBridge.h"
#include "dialect/KilnDialect.h"
#include "frontend/core/ops/OpTable.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

namespace kiln::bridge {
namespace {

// One call of an op: its operands' metas and its Attrs.
struct Case {
  std::vector<TensorMeta> inputs;
  Attrs attrs;
};
using Cases = std::vector<Case>;

TensorMeta meta(Shape shape, DType dtype = kFloat32) { return TensorMeta{std::move(shape), dtype}; }

const std::array kDTypes{kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kBool};
const std::array kIndexDTypes{kInt32, kInt64, kFloat32};  // the last one is rejected

// Operand shapes of the elementwise ops: rank 0 to 3, size-1 and size-0 dims.
const std::vector<Shape> kShapes{{}, {1}, {5}, {0}, {4, 3}, {1, 3}, {4, 1}, {2, 1, 3}, {2, 0, 3}};

// `make(dtype)` for every dtype.
Cases forEachDType(const std::function<Case(DType)>& make) {
  Cases cases;
  for (DType dtype : kDTypes) cases.push_back(make(dtype));
  return cases;
}

void append(Cases& to, const Cases& more) { to.insert(to.end(), more.begin(), more.end()); }

// ---- calls per op family ----------------------------------------------------------------

Cases unaryCalls() {
  Cases cases;
  for (const Shape& s : kShapes) append(cases, forEachDType([&](DType d) { return Case{{meta(s, d)}, {}}; }));
  return cases;
}

// `n` operands of one shape and dtype; then operands that differ in shape (primitive ops
// never broadcast) or in dtype.
Cases sameShapeCalls(size_t n, const Attrs& attrs = {}) {
  Cases cases;
  for (const Shape& s : kShapes)
    append(cases, forEachDType([&](DType d) { return Case{std::vector(n, meta(s, d)), attrs}; }));
  const std::pair<Shape, Shape> mismatched[] = {
      {{4, 3}, {1, 3}}, {{4, 3}, {3}}, {{}, {1}}, {{2, 0, 3}, {2, 1, 3}}};
  for (const auto& [first, last] : mismatched) {
    std::vector<TensorMeta> inputs(n, meta(first));
    inputs.back() = meta(last);
    cases.push_back({inputs, attrs});
  }
  std::vector<TensorMeta> mixed(n, meta({4, 3}));
  mixed.back() = meta({4, 3}, kInt32);
  cases.push_back({mixed, attrs});
  return cases;
}

Cases binaryCalls() { return sameShapeCalls(2); }

Cases compareCalls() {
  Cases cases = sameShapeCalls(2, {{"direction", std::string("lt")}});
  append(cases, sameShapeCalls(2, {{"direction", std::string("eq")}}));
  return cases;
}

Cases selectCalls() {
  Cases cases;
  for (const Shape& s : kShapes)
    append(cases, forEachDType([&](DType d) { return Case{{meta(s, kBool), meta(s, d), meta(s, d)}, {}}; }));
  cases.push_back({{meta({4, 1}, kBool), meta({4, 3}), meta({4, 3})}, {}});
  cases.push_back({{meta({4, 3}, kBool), meta({4, 3}), meta({1, 3})}, {}});
  cases.push_back({{meta({4, 3}, kFloat32), meta({4, 3}), meta({4, 3})}, {}});
  cases.push_back({{meta({4, 3}, kBool), meta({4, 3}), meta({4, 3}, kFloat64)}, {}});
  return cases;
}

Cases convertCalls() {
  Cases cases;
  for (const Shape& s : {Shape{}, Shape{4, 3}, Shape{2, 0, 3}})
    for (DType to : kDTypes)
      append(cases, forEachDType([&](DType d) { return Case{{meta(s, d)}, {{"dtype", to}}}; }));
  return cases;
}

Cases reshapeCalls() {
  const std::pair<Shape, Shape> shapes[] = {
      {{4, 3}, {12}},  {{4, 3}, {3, 1, 4}}, {{}, {1, 1}},  {{1}, {}},          {{2, 0, 3}, {0, 7}},
      {{5}, {5}},      {{4, 3}, {5}},       {{}, {0}},     {{4, 3}, {-1, -12}}, {{0}, {-1, 0}}};
  Cases cases;
  for (const auto& [from, to] : shapes)
    append(cases, forEachDType([&](DType d) { return Case{{meta(from, d)}, {{"shape", to}}}; }));
  return cases;
}

Cases cloneCalls() {
  Cases cases;
  for (const Shape& s : kShapes)
    append(cases, forEachDType([&](DType d) { return Case{{meta(s, d)}, {{"shape", s}}}; }));
  return cases;
}

Cases permuteCalls() {
  const std::pair<Shape, Shape> calls[] = {
      {{}, {}},          {{5}, {0}},         {{4, 3}, {1, 0}},    {{4, 3}, {0, 1}},
      {{2, 1, 3}, {2, 0, 1}}, {{2, 0, 3}, {1, 2, 0}}, {{4, 3}, {0, 0}}, {{4, 3}, {0}},
      {{4, 3}, {0, 2}},  {{4, 3}, {1, 0, 2}}, {{4, 3}, {-1, 0}}};
  Cases cases;
  for (const auto& [shape, perm] : calls)
    append(cases, forEachDType([&](DType d) { return Case{{meta(shape, d)}, {{"permutation", perm}}}; }));
  return cases;
}

Cases expandCalls() {
  struct Call { Shape from, dims, to; };
  const Call calls[] = {
      {{3}, {1}, {4, 3}},          {{1}, {0}, {5}},       {{}, {}, {2, 3}},   {{3, 1}, {0, 2}, {3, 5, 2}},
      {{1, 3}, {0, 1}, {0, 3}},    {{4, 3}, {0, 1}, {4, 3}}, {{1}, {0}, {0}}, {{3}, {0}, {4, 3}},
      {{3, 1}, {2, 0}, {1, 5, 3}}, {{3}, {2}, {4, 3}},    {{3}, {}, {3}},     {{1}, {0}, {-3}},
      {{3}, {1}, {-2, 3}}};
  Cases cases;
  for (const Call& c : calls)
    append(cases, forEachDType([&](DType d) {
             return Case{{meta(c.from, d)}, {{"dims", c.dims}, {"shape", c.to}}};
           }));
  return cases;
}

Cases sliceCalls() {
  struct Call { Shape shape, start, limit, stride; };
  const Call calls[] = {
      {{4, 3}, {0, 1}, {4, 3}, {2, 1}}, {{4, 3}, {1, 0}, {1, 3}, {1, 2}}, {{}, {}, {}, {}},
      {{2, 0, 3}, {0, 0, 1}, {2, 0, 3}, {1, 1, 5}}, {{5}, {1}, {5}, {3}}, {{1}, {0}, {1}, {1}},
      {{5}, {3}, {2}, {1}},  {{5}, {0}, {6}, {1}},  {{5}, {0}, {5}, {0}}, {{5}, {-1}, {5}, {1}},
      {{4, 3}, {0}, {4}, {1}}, {{5}, {0, 0}, {5, 1}, {1, 1}}};
  Cases cases;
  for (const Call& c : calls)
    append(cases, forEachDType([&](DType d) {
             return Case{{meta(c.shape, d)}, {{"start", c.start}, {"limit", c.limit}, {"stride", c.stride}}};
           }));
  return cases;
}

Cases catCalls() {
  const std::pair<std::vector<Shape>, int64_t> calls[] = {
      {{{4, 3}, {2, 3}}, 0}, {{{4, 3}, {4, 0}}, 1}, {{{5}}, 0},           {{{1}, {0}, {2}}, 0},
      {{{2, 1, 3}, {2, 2, 3}, {2, 1, 3}}, 1},      {{{4, 3}, {4, 2}}, 0}, {{{4, 3}, {4}}, 0},
      {{{4, 3}, {2, 3}}, 2}, {{{4, 3}, {2, 3}}, -1}, {{{}}, 0}};
  Cases cases;
  for (const auto& [shapes, dim] : calls)
    append(cases, forEachDType([&](DType d) {
             Case c{{}, {{"dim", dim}}};
             for (const Shape& s : shapes) c.inputs.push_back(meta(s, d));
             return c;
           }));
  cases.push_back({{meta({4, 3}), meta({2, 3}, kInt32)}, {{"dim", int64_t(0)}}});
  return cases;
}

Cases reduceCalls() {
  const std::pair<Shape, Shape> calls[] = {
      {{4, 3}, {}},  {{4, 3}, {0}},  {{4, 3}, {1}},    {{4, 3}, {0, 1}}, {{}, {}},      {{1, 3}, {0}},
      {{2, 0, 3}, {0, 2}}, {{2, 0, 3}, {1}}, {{0}, {0}}, {{4, 3}, {1, 0}}, {{4, 3}, {2}}, {{4, 3}, {1, 1}},
      {{}, {0}},     {{4, 3}, {-1}}};
  Cases cases;
  for (const char* kind : {"sum", "mean", "max", "min", "prod"})
    for (bool keep : {false, true})
      for (const auto& [shape, dims] : calls)
        append(cases, forEachDType([&](DType d) {
                 return Case{{meta(shape, d)}, {{"kind", std::string(kind)}, {"dims", dims}, {"keep_dims", keep}}};
               }));
  return cases;
}

Cases allReduceCalls() {
  Cases cases;
  for (const char* kind : {"sum", "mean", "max"})
    for (const Shape& s : kShapes)
      append(cases, forEachDType([&](DType d) { return Case{{meta(s, d)}, {{"kind", std::string(kind)}}}; }));
  return cases;
}

Cases rngCalls() {
  struct Params { const char* distribution; double a, b; };
  const Params params[] = {{"uniform", -1.0, 2.0}, {"normal", 0.5, 2.0}, {"bernoulli", 0.25, 0.0},
                           {"uniform", 2.0, 1.0},  {"normal", 0.0, -1.0}, {"bernoulli", 1.5, 0.0}};
  Cases cases;
  for (const Params& p : params)
    for (const Shape& shape : {Shape{}, Shape{4, 4}, Shape{0, 3}, Shape{-1}})
      append(cases, forEachDType([&](DType d) {
               return Case{{meta({2}, kInt64)},
                           {{"distribution", std::string(p.distribution)}, {"shape", shape},
                            {"dtype", d}, {"a", p.a}, {"b", p.b}}};
             }));
  for (const TensorMeta& key : {meta({3}, kInt64), meta({2}, kInt32), meta({}, kInt64)})
    cases.push_back({{key},
                     {{"distribution", std::string("normal")}, {"shape", Shape{2}}, {"dtype", kFloat32},
                      {"a", 0.0}, {"b", 1.0}}});
  return cases;
}

Cases takeCalls() {
  struct Call { Shape x, indices; int64_t dim; };
  const Call calls[] = {{{10, 4}, {2, 3}, 0}, {{10, 4}, {}, 1}, {{5}, {}, 0}, {{2, 3, 4}, {0}, 1},
                        {{2, 3, 4}, {5}, 2},  {{10, 4}, {3}, 2}, {{10, 4}, {3}, -1}, {{}, {1}, 0}};
  Cases cases;
  for (const Call& c : calls)
    for (DType index : kIndexDTypes)
      append(cases, forEachDType([&](DType d) {
               return Case{{meta(c.x, d), meta(c.indices, index)}, {{"dim", c.dim}}};
             }));
  return cases;
}

Cases scatterAddCalls() {
  struct Call { Shape updates, indices; int64_t dim, size; };
  const Call calls[] = {{{2, 3, 4}, {2, 3}, 0, 10}, {{4, 5}, {5}, 1, 7},      {{3}, {}, 0, 4},
                        {{0, 4}, {0}, 0, 3},       {{2, 3}, {3}, 1, 0},      {{2, 3, 4}, {2, 4}, 0, 10},
                        {{2, 3, 4}, {2, 3}, 0, -1}, {{2, 3, 4}, {2, 3}, 2, 10}, {{4}, {4}, -1, 2}};
  Cases cases;
  for (const Call& c : calls)
    for (DType index : kIndexDTypes)
      append(cases, forEachDType([&](DType d) {
               return Case{{meta(c.updates, d), meta(c.indices, index)}, {{"dim", c.dim}, {"size", c.size}}};
             }));
  return cases;
}

Cases matmulCalls() {
  struct Call { Shape a, b; bool ta, tb; };
  const Call calls[] = {{{8, 3}, {3, 5}, false, false}, {{3, 8}, {3, 5}, true, false},
                        {{8, 3}, {5, 3}, false, true},  {{3, 8}, {5, 3}, true, true},
                        {{2, 4, 3}, {2, 3, 5}, false, false}, {{1, 0, 3}, {1, 3, 2}, false, false},
                        {{1, 1}, {1, 1}, false, false}, {{4, 0}, {0, 2}, false, false},
                        {{8, 3}, {4, 5}, false, false}, {{2, 4, 3}, {3, 3, 5}, false, false},
                        {{3}, {3}, false, false},       {{4, 3}, {2, 3, 5}, false, false},
                        {{8, 3}, {3, 5}, true, false}};
  Cases cases;
  for (const Call& c : calls)
    append(cases, forEachDType([&](DType d) {
             return Case{{meta(c.a, d), meta(c.b, d)}, {{"transpose_a", c.ta}, {"transpose_b", c.tb}}};
           }));
  cases.push_back({{meta({8, 3}), meta({3, 5}, kFloat64)}, {{"transpose_a", false}, {"transpose_b", false}}});
  return cases;
}

Cases addmmCalls() {
  struct Call { Shape a, b, bias; bool ta, tb, relu; };
  const Call calls[] = {{{8, 3}, {3, 5}, {5}, false, false, false}, {{3, 8}, {5, 3}, {5}, true, true, true},
                        {{8, 3}, {5, 3}, {5}, false, true, true},   {{0, 3}, {3, 2}, {2}, false, false, false},
                        {{2, 0}, {0, 3}, {3}, false, false, true},  {{8, 3}, {3, 5}, {4}, false, false, false},
                        {{8, 3}, {3, 5}, {1, 5}, false, false, false}, {{2, 8, 3}, {2, 3, 5}, {5}, false, false, false}};
  Cases cases;
  for (const Call& c : calls)
    append(cases, forEachDType([&](DType d) {
             return Case{{meta(c.a, d), meta(c.b, d), meta(c.bias, d)},
                         {{"transpose_a", c.ta}, {"transpose_b", c.tb}, {"relu", c.relu}}};
           }));
  return cases;
}

Cases conv2dCalls() {
  struct Call { Shape x, w, bias; int64_t groups; Shape stride, padding, dilation; };
  const Call calls[] = {
      {{1, 4, 8, 8}, {6, 2, 3, 3}, {6}, 2, {2, 1}, {1, 0, 1, 1}, {1, 2}},
      {{2, 3, 5, 5}, {4, 3, 1, 1}, {}, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}},
      {{1, 2, 3, 3}, {2, 1, 3, 3}, {2}, 2, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      {{1, 1, 4, 4}, {1, 1, 2, 2}, {}, 1, {1, 1}, {0, 0, 0, 0}, {}},  // no dilation attribute
      {{1, 1, 5, 5}, {1, 1, 3, 3}, {}, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}},
      {{1, 1, 2, 2}, {1, 1, 3, 3}, {}, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}},  // the window never fits
      {{1, 1, 2, 2}, {1, 1, 3, 3}, {}, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}},
      {{1, 3, 8, 8}, {4, 2, 3, 3}, {}, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}},
      {{1, 4, 8, 8}, {3, 2, 3, 3}, {}, 2, {1, 1}, {0, 0, 0, 0}, {1, 1}},
      {{1, 1, 4, 4}, {1, 1, 2, 2}, {}, 1, {1, 1}, {-1, 0, 0, 0}, {1, 1}},
      {{1, 1, 4, 4}, {1, 1, 2, 2}, {}, 1, {0, 1}, {0, 0, 0, 0}, {1, 1}},
      {{1, 4, 8, 8}, {6, 2, 3, 3}, {4}, 2, {1, 1}, {0, 0, 0, 0}, {1, 1}},
      {{4, 8, 8}, {6, 4, 3, 3}, {}, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}}};
  Cases cases;
  for (const Call& c : calls)
    for (bool relu : {false, true})
      append(cases, forEachDType([&](DType d) {
               Case call{{meta(c.x, d), meta(c.w, d)},
                         {{"stride", c.stride}, {"padding", c.padding}, {"groups", c.groups}, {"relu", relu}}};
               if (!c.bias.empty()) call.inputs.push_back(meta(c.bias, d));
               if (!c.dilation.empty()) call.attrs.set("dilation", c.dilation);
               return call;
             }));
  return cases;
}

Cases pool2dCalls() {
  struct Call { Shape x, window, stride, padding; };
  const Call calls[] = {{{1, 3, 8, 8}, {2, 2}, {2, 2}, {0, 0, 0, 0}}, {{2, 1, 5, 5}, {3, 3}, {1, 1}, {1, 1, 1, 1}},
                        {{1, 1, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}}, {{1, 1, 5, 4}, {3, 2}, {2, 3}, {0, 1, 1, 0}},
                        {{1, 1, 2, 2}, {3, 3}, {2, 2}, {0, 0, 0, 0}}, {{1, 1, 4, 4}, {0, 2}, {1, 1}, {0, 0, 0, 0}},
                        {{3, 8, 8}, {2, 2}, {2, 2}, {0, 0, 0, 0}},    {{1, 1, 4, 4}, {2, 2}, {0, 1}, {0, 0, 0, 0}},
                        {{1, 1, 4, 4}, {2, 2}, {1, 1}, {0, 0, -1, 0}}};
  Cases cases;
  for (const char* kind : {"max", "avg"})
    for (const Call& c : calls)
      append(cases, forEachDType([&](DType d) {
               return Case{{meta(c.x, d)},
                           {{"kind", std::string(kind)}, {"window", c.window}, {"stride", c.stride},
                            {"padding", c.padding}}};
             }));
  return cases;
}

// Every op the bridge records, with its calls. A new op of the table needs an entry here
// (CoversEveryRecordedOp says so by name).
const std::vector<std::pair<const OpDef*, Cases (*)()>>& callsByOp() {
  static const std::vector<std::pair<const OpDef*, Cases (*)()>> kCalls = {
      {&ops::kNeg, unaryCalls},       {&ops::kAbs, unaryCalls},      {&ops::kExp, unaryCalls},
      {&ops::kLog, unaryCalls},       {&ops::kSqrt, unaryCalls},     {&ops::kRsqrt, unaryCalls},
      {&ops::kTanh, unaryCalls},      {&ops::kSigmoid, unaryCalls},  {&ops::kRelu, unaryCalls},
      {&ops::kSin, unaryCalls},       {&ops::kCos, unaryCalls},      {&ops::kFloor, unaryCalls},
      {&ops::kNot, unaryCalls},       {&ops::kGelu, unaryCalls},     {&ops::kAdd, binaryCalls},
      {&ops::kSub, binaryCalls},      {&ops::kMul, binaryCalls},     {&ops::kDiv, binaryCalls},
      {&ops::kPow, binaryCalls},      {&ops::kMax, binaryCalls},     {&ops::kMin, binaryCalls},
      {&ops::kAnd, binaryCalls},      {&ops::kOr, binaryCalls},      {&ops::kCompare, compareCalls},
      {&ops::kSelect, selectCalls},   {&ops::kConvert, convertCalls}, {&ops::kReshape, reshapeCalls},
      {&ops::kCopy, cloneCalls},      {&ops::kTranspose, permuteCalls}, {&ops::kExpand, expandCalls},
      {&ops::kSlice, sliceCalls},     {&ops::kConcat, catCalls},     {&ops::kReduce, reduceCalls},
      {&ops::kRng, rngCalls},         {&ops::kGather, takeCalls},    {&ops::kScatterAdd, scatterAddCalls},
      {&ops::kMatmul, matmulCalls},   {&ops::kAddmm, addmmCalls},    {&ops::kConv2d, conv2dCalls},
      {&ops::kPool2d, pool2dCalls},   {&ops::kAllReduce, allReduceCalls},
      {&ops::kAllReduceStart, allReduceCalls}, {&ops::kWait, unaryCalls}};
  return kCalls;
}

// The ops of the table the bridge does not record: factories, recorded as kiln.constant
// through buildConstant (OpBridge.h).
const std::set<const OpDef*> kNotRecorded{&ops::kFull, &ops::kIota};

// Ops whose kiln op takes element types the frontend's primitive refuses with TypeError:
// kiln.not, kiln.and and kiln.or are bitwise on integers, kiln.div divides integers; the
// table keeps them to bools and floats (the public div promotes integers first).
const std::set<const OpDef*> kDialectTakesMoreElementTypes{&ops::kNot, &ops::kAnd, &ops::kOr, &ops::kDiv};

// ---- the two verdicts -------------------------------------------------------------------

std::string describeValue(const AttrValue& value) {
  std::ostringstream os;
  std::visit([&](const auto& v) {
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, bool>) os << (v ? "true" : "false");
    else os << v;
  }, value);
  return os.str();
}

std::string describeCall(const OpDef& op, const Case& c) {
  std::ostringstream os;
  os << op.name << "(";
  for (size_t i = 0; i < c.inputs.size(); ++i) os << (i ? ", " : "") << c.inputs[i].dtype << c.inputs[i].shape;
  for (const auto& [name, value] : c.attrs.items()) os << ", " << name << "=" << describeValue(value);
  os << ")";
  return os.str();
}

std::string describeMetas(std::span<const TensorMeta> metas) {
  std::ostringstream os;
  for (size_t i = 0; i < metas.size(); ++i) os << (i ? ", " : "") << metas[i].dtype << metas[i].shape;
  return os.str();
}

// A side's answer for one call: the output metas, or why it rejects the call.
struct Verdict {
  bool accepted = false;
  std::vector<TensorMeta> outputs;
  std::string why;
  bool typeError = false;  // the frontend rejected the call with a TypeError
};

Verdict frontendVerdict(const OpDef& op, const Case& c) {
  try {
    return {true, op.shape(op, c.inputs, c.attrs, SourceLoc::current()), "", false};
  } catch (const TypeError& e) {
    return {false, {}, e.what(), true};
  } catch (const Error& e) {
    return {false, {}, e.what(), false};
  }
}

class ShapeAgreementTest : public ::testing::Test {
 protected:
  ShapeAgreementTest() : builder(&context) {
    context.loadDialect<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
    loc = builder.getUnknownLoc();
    module = mlir::ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
    auto function = mlir::func::FuncOp::create(builder, loc, "calls", builder.getFunctionType({}, {}));
    entry = function.addEntryBlock();
    builder.setInsertionPointToEnd(entry);
  }

  // Records the call with `outputs` as its result types; null (and `why` set) when the
  // bridge refuses it.
  mlir::Operation* record(const OpDef& op, const Case& c, std::span<const TensorMeta> outputs,
                          std::string& why) {
    std::vector<mlir::Value> operands;
    for (const TensorMeta& m : c.inputs) operands.push_back(entry->addArgument(tensorTypeFor(&context, m), loc));
    try {
      return buildKilnOp(builder, loc, op, operands, c.attrs, outputs);
    } catch (const Error& e) {
      why = std::string("the bridge refuses it: ") + e.what();
      return nullptr;
    }
  }

  // The dialect's answer: the result types its inference gives, if the op recorded with
  // them also passes the verifier (operand element types are ODS constraints, checked there).
  // `outputs` are the frontend's, or any placeholder when the frontend rejected the call.
  Verdict dialectVerdict(const OpDef& op, const Case& c, std::span<const TensorMeta> outputs) {
    Verdict verdict;
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic& d) {
      verdict.why += d.str() + "; ";
      return mlir::success();
    });
    mlir::Operation* recorded = record(op, c, outputs, verdict.why);
    if (!recorded) return verdict;
    auto inference = llvm::dyn_cast<mlir::InferTypeOpInterface>(recorded);
    if (!inference) {
      verdict.why += recorded->getName().getStringRef().str() + " does not infer its result types";
      return verdict;
    }
    llvm::SmallVector<mlir::Type> types;
    if (mlir::failed(inference.inferReturnTypes(&context, loc, recorded->getOperands(),
                                                recorded->getRawDictionaryAttrs(),
                                                recorded->getPropertiesStorage(),
                                                recorded->getRegions(), types))) {
      erase(recorded);
      return verdict;
    }
    for (mlir::Type type : types) verdict.outputs.push_back(metaFor(type));
    if (!std::equal(types.begin(), types.end(), recorded->getResultTypes().begin(),
                    recorded->getResultTypes().end())) {
      erase(recorded);
      recorded = record(op, c, verdict.outputs, verdict.why);
      if (!recorded) return verdict;
    }
    verdict.accepted = mlir::succeeded(mlir::verify(recorded));
    erase(recorded);
    return verdict;
  }

  void erase(mlir::Operation* op) {
    op->erase();
    entry->eraseArguments(0, entry->getNumArguments());
  }

  mlir::MLIRContext context;
  mlir::OpBuilder builder;
  mlir::Location loc = builder.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::Block* entry = nullptr;
};

bool sameMetas(std::span<const TensorMeta> a, std::span<const TensorMeta> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const TensorMeta& x, const TensorMeta& y) {
    return x.shape == y.shape && x.dtype == y.dtype;
  });
}

bool hasNegativeDim(std::span<const TensorMeta> metas) {
  for (const TensorMeta& m : metas)
    for (int64_t d : m.shape)
      if (d < 0) return true;
  return false;
}

TEST_F(ShapeAgreementTest, CoversEveryRecordedOp) {
  std::set<const OpDef*> covered;
  for (const auto& [op, calls] : callsByOp()) {
    EXPECT_TRUE(covered.insert(op).second) << op->name << " is listed twice";
    EXPECT_FALSE(kNotRecorded.count(op)) << op->name << " is not recorded but has calls";
  }
  // The skipped ops are exactly the factories.
  for (const OpDef* op : ops::allOps()) {
    EXPECT_EQ(kNotRecorded.count(op) == 1, op->kilnOp == "kiln.constant") << op->name;
    if (!kNotRecorded.count(op)) {
      EXPECT_TRUE(covered.count(op)) << "no calls for '" << op->name
                                     << "': add them to callsByOp() in ShapeAgreementTest.cpp";
    }
  }
}

// Both directions: what the frontend accepts the dialect accepts with the same result
// types, and what the frontend rejects the dialect rejects (but for the element types of
// kDialectTakesMoreElementTypes).
TEST_F(ShapeAgreementTest, ShapeRulesAndTypeInferenceAgreeOnEveryCall) {
  size_t calls = 0, accepted = 0;
  for (const auto& [op, makeCalls] : callsByOp()) {
    for (const Case& c : makeCalls()) {
      ++calls;
      const Verdict frontend = frontendVerdict(*op, c);
      if (frontend.accepted && hasNegativeDim(frontend.outputs)) {
        ADD_FAILURE() << describeCall(*op, c) << ": the frontend gives a negative size, "
                      << describeMetas(frontend.outputs);
        continue;
      }
      // A rejected call is recorded with its first operand's type as a placeholder result.
      const std::vector<TensorMeta> placeholder{c.inputs[0]};
      const Verdict dialect = dialectVerdict(*op, c, frontend.accepted ? frontend.outputs : placeholder);
      if (frontend.accepted) {
        ++accepted;
        if (!dialect.accepted)
          ADD_FAILURE() << describeCall(*op, c) << ": the frontend gives " << describeMetas(frontend.outputs)
                        << " but the dialect rejects it: " << dialect.why;
        else if (!sameMetas(frontend.outputs, dialect.outputs))
          ADD_FAILURE() << describeCall(*op, c) << ": the frontend gives " << describeMetas(frontend.outputs)
                        << " but the dialect infers " << describeMetas(dialect.outputs);
      } else if (dialect.accepted && !(frontend.typeError && kDialectTakesMoreElementTypes.count(op))) {
        ADD_FAILURE() << describeCall(*op, c) << ": the frontend rejects it (" << frontend.why
                      << ") but the dialect accepts it, giving " << describeMetas(dialect.outputs);
      }
    }
  }
  std::cout << callsByOp().size() << " ops, " << calls << " calls, " << accepted
            << " accepted by both sides\n";
  EXPECT_GT(accepted, calls / 3);  // most calls are legal, not only rejections
}

}  // namespace
}  // namespace kiln::bridge
