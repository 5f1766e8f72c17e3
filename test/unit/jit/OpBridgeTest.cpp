// The op bridge: every op of the table records as a kiln op that verifies and maps back to
// the same OpDef and Attrs; constants, dtypes and locations convert both ways.
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dialect/KilnDialect.h"
#include "dialect/KilnOps.h"
#include "frontend/core/ops/OpTable.h"
#include "bridge/OpBridge.h"
#include "kiln/core/Ops.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "test/unit/frontend/core/ExpectError.h"

namespace kiln::bridge {
namespace {

using ::testing::HasSubstr;

TensorMeta meta(Shape shape, DType dtype = kFloat32) { return TensorMeta{std::move(shape), dtype}; }

// A representative call of every op in the table: its operands' metas and its Attrs.
// A new op needs an entry here (the coverage test below says so by name).
struct Case {
  std::vector<TensorMeta> inputs;
  Attrs attrs;
};

const std::map<std::string_view, Case>& cases() {
  static const std::map<std::string_view, Case> kCases = [] {
    std::map<std::string_view, Case> c;
    for (std::string_view name : {"neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid",
                                  "relu", "sin", "cos", "floor", "gelu"})
      c[name] = {{meta({4, 3})}, {}};
    c["logical_not"] = {{meta({4, 3}, kBool)}, {}};
    for (std::string_view name : {"add", "sub", "mul", "div", "pow", "maximum", "minimum"})
      c[name] = {{meta({4, 3}), meta({4, 3})}, {}};
    for (std::string_view name : {"logical_and", "logical_or"})
      c[name] = {{meta({4, 3}, kBool), meta({4, 3}, kBool)}, {}};
    c["compare"] = {{meta({4, 3}), meta({4, 3})}, {{"direction", std::string("le")}}};
    c["where"] = {{meta({4, 3}, kBool), meta({4, 3}), meta({4, 3})}, {}};
    c["convert"] = {{meta({4, 3})}, {{"dtype", kBFloat16}}};
    c["reshape"] = {{meta({4, 3})}, {{"shape", Shape{2, 6}}}};
    c["clone"] = {{meta({4, 3})}, {{"shape", Shape{4, 3}}}};
    c["permute"] = {{meta({4, 3, 2})}, {{"permutation", Shape{2, 0, 1}}}};
    c["expand"] = {{meta({3})}, {{"dims", Shape{1}}, {"shape", Shape{4, 3}}}};
    c["slice"] = {{meta({4, 3})},
                  {{"start", Shape{0, 1}}, {"limit", Shape{4, 3}}, {"stride", Shape{2, 1}}}};
    c["cat"] = {{meta({4, 3}), meta({2, 3})}, {{"dim", int64_t(0)}}};
    c["reduce"] = {{meta({4, 3})},
                   {{"kind", std::string("mean")}, {"dims", Shape{1}}, {"keep_dims", true}}};
    c["rng"] = {{meta({2}, kInt64)},
                {{"distribution", std::string("normal")}, {"shape", Shape{4, 4}},
                 {"dtype", kFloat64}, {"a", 0.5}, {"b", 2.0}}};
    c["take"] = {{meta({10, 4}), meta({2, 3}, kInt64)}, {{"dim", int64_t(0)}}};
    c["scatter_add"] = {{meta({2, 3, 4}), meta({2, 3}, kInt64)},
                        {{"dim", int64_t(0)}, {"size", int64_t(10)}}};
    c["all_reduce"] = {{meta({4, 3})}, {{"kind", std::string("mean")}}};
    c["all_reduce_start"] = {{meta({4, 3})}, {{"kind", std::string("max")}}};
    c["wait"] = {{meta({4, 3})}, {}};
    c["matmul"] = {{meta({8, 3}), meta({5, 3})}, {{"transpose_a", false}, {"transpose_b", true}}};
    c["addmm"] = {{meta({3, 8}), meta({5, 3}), meta({5})},
                  {{"transpose_a", true}, {"transpose_b", true}, {"relu", true}}};
    c["conv2d"] = {{meta({1, 4, 8, 8}), meta({6, 2, 3, 3}), meta({6})},
                   {{"stride", Shape{2, 1}}, {"padding", Shape{1, 0, 1, 1}},
                    {"dilation", Shape{1, 2}}, {"groups", int64_t(2)}, {"relu", true}}};
    c["pool2d"] = {{meta({1, 3, 8, 8})},
                   {{"kind", std::string("avg")}, {"window", Shape{2, 3}}, {"stride", Shape{2, 2}},
                    {"padding", Shape{0, 0, 1, 1}}}};
    return c;
  }();
  return kCases;
}

bool isFactory(const OpDef& op) { return &op == &ops::kFull || &op == &ops::kIota; }

// Same entries, in any order.
void expectSameAttrs(const Attrs& got, const Attrs& want) {
  EXPECT_EQ(got.items().size(), want.items().size());
  for (const auto& [name, value] : want.items()) {
    SCOPED_TRACE(std::string(name));
    ASSERT_TRUE(got.has(name));
    const AttrValue* gotValue = nullptr;
    for (const auto& [n, v] : got.items())
      if (n == name) gotValue = &v;
    EXPECT_TRUE(*gotValue == value);
  }
}

class OpBridgeTest : public ::testing::Test {
 protected:
  OpBridgeTest() : builder(&context) {
    context.loadDialect<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
    loc = mlir::FileLineColLoc::get(&context, "model.cpp", 12, 7);
    module = mlir::ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
    function = mlir::func::FuncOp::create(builder, loc, "main", builder.getFunctionType({}, {}));
    builder.setInsertionPointToEnd(function.addEntryBlock());
  }

  std::vector<mlir::Value> arguments(std::span<const TensorMeta> metas) {
    std::vector<mlir::Value> values;
    mlir::Block& entry = function.getBody().front();
    for (const TensorMeta& m : metas) values.push_back(entry.addArgument(tensorTypeFor(&context, m), loc));
    return values;
  }

  // Returns `results` from @main and verifies the module; "" or the diagnostics.
  std::string finishAndVerify(mlir::ValueRange results) {
    mlir::func::ReturnOp::create(builder, loc, results);
    mlir::Block& entry = function.getBody().front();
    function.setFunctionType(builder.getFunctionType(entry.getArgumentTypes(), results.getTypes()));
    std::string diagnostics;
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic& d) {
      diagnostics += d.str() + "\n";
      return mlir::success();
    });
    if (mlir::failed(mlir::verify(*module)) && diagnostics.empty()) diagnostics = "failed";
    return diagnostics;
  }

  mlir::Operation* build(const OpDef& op, const Case& c, std::vector<TensorMeta>* outputs = nullptr) {
    std::vector<TensorMeta> outs = op.shape(op, c.inputs, c.attrs, SourceLoc::current());
    if (outputs) *outputs = outs;
    return buildKilnOp(builder, loc, op, arguments(c.inputs), c.attrs, outs);
  }

  mlir::MLIRContext context;
  mlir::OpBuilder builder;
  mlir::Location loc = builder.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp function;
};

TEST_F(OpBridgeTest, EveryTableOpRecordsVerifiesAndMapsBack) {
  for (const OpDef* op : ops::allOps()) {
    SCOPED_TRACE(std::string(op->name));
    if (isFactory(*op)) continue;  // see FactoriesAreRejectedTowardBuildConstant
    auto found = cases().find(op->name);
    ASSERT_NE(found, cases().end()) << "no representative call for '" << op->name
                                    << "': add one to cases() in OpBridgeTest.cpp";
    // One function per op, so a failure names the op.
    module = mlir::ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
    function = mlir::func::FuncOp::create(builder, loc, "main", builder.getFunctionType({}, {}));
    builder.setInsertionPointToEnd(function.addEntryBlock());

    std::vector<TensorMeta> outputs;
    mlir::Operation* recorded = build(*op, found->second, &outputs);
    EXPECT_EQ(recorded->getName().getStringRef().str(), std::string(op->kilnOp));
    ASSERT_EQ(recorded->getNumResults(), outputs.size());
    EXPECT_EQ(finishAndVerify(recorded->getResults()), "");

    TableCall call = tableCallFor(recorded);
    EXPECT_EQ(call.op, op) << "maps back to '" << call.op->name << "'";
    expectSameAttrs(call.attrs, found->second.attrs);
  }
}

TEST_F(OpBridgeTest, FactoriesAreRejectedTowardBuildConstant) {
  for (const OpDef* op : {&ops::kFull, &ops::kIota}) {
    Attrs attrs{{"shape", Shape{2}}, {"value", 1.0}, {"dtype", kFloat32}};
    EXPECT_KILN_ERROR_HAS(buildKilnOp(builder, loc, *op, {}, attrs, {}), TraceError,
                          std::string(op->name) + ": a factory is recorded as kiln.constant; "
                          "record its value with bridge::buildConstant");
  }
}

TEST_F(OpBridgeTest, FalseFlagsAreAbsentAndReadBackFalse) {
  Case c{{meta({4, 3})}, {{"kind", std::string("sum")}, {"dims", Shape{0, 1}}, {"keep_dims", false}}};
  mlir::Operation* op = build(ops::kReduce, c);
  EXPECT_FALSE(op->hasAttr("keep_dims"));
  EXPECT_EQ(finishAndVerify(op->getResults()), "");
  expectSameAttrs(tableCallFor(op).attrs, c.attrs);
}

TEST_F(OpBridgeTest, BernoulliHasOneParameter) {
  Case c{{meta({2}, kInt64)},
         {{"distribution", std::string("bernoulli")}, {"shape", Shape{3}}, {"dtype", kBool},
          {"a", 0.25}, {"b", 0.0}}};
  mlir::Operation* op = build(ops::kRng, c);
  EXPECT_EQ(llvm::cast<mlir::DenseF64ArrayAttr>(op->getAttr("params")).asArrayRef(),
            llvm::ArrayRef<double>({0.25}));
  EXPECT_EQ(finishAndVerify(op->getResults()), "");
  expectSameAttrs(tableCallFor(op).attrs, c.attrs);
}

TEST_F(OpBridgeTest, ConvWithoutDilationRecordsOnes) {
  Case c{{meta({1, 3, 8, 8}), meta({4, 3, 3, 3})},
         {{"stride", Shape{1, 1}}, {"padding", Shape{0, 0, 0, 0}}, {"groups", int64_t(1)}}};
  mlir::Operation* op = build(ops::kConv2d, c);
  EXPECT_EQ(llvm::cast<mlir::DenseI64ArrayAttr>(op->getAttr("dilation")).asArrayRef(),
            llvm::ArrayRef<int64_t>({1, 1}));
  EXPECT_EQ(finishAndVerify(op->getResults()), "");
}

TEST_F(OpBridgeTest, BoolArithmeticRecordsAsLogicalOps) {
  const Case c{{meta({4}, kBool), meta({4}, kBool)}, {}};
  std::vector<mlir::Value> results;
  for (auto [op, kiln, back] : {std::tuple{&ops::kAdd, "kiln.or", &ops::kOr},
                                std::tuple{&ops::kMax, "kiln.or", &ops::kOr},
                                std::tuple{&ops::kMul, "kiln.and", &ops::kAnd},
                                std::tuple{&ops::kMin, "kiln.and", &ops::kAnd}}) {
    mlir::Operation* recorded = build(*op, c);
    EXPECT_EQ(recorded->getName().getStringRef().str(), kiln);
    EXPECT_EQ(tableCallFor(recorded).op, back);
    results.push_back(recorded->getResult(0));
  }
  EXPECT_EQ(finishAndVerify(results), "");
}

TEST_F(OpBridgeTest, AnyBroadcastInDimMapsToExpand) {
  mlir::Value x = arguments(std::vector{meta({3, 1})})[0];
  auto op = mlir::kiln::BroadcastInDimOp::create(builder, loc, x, builder.getDenseI64ArrayAttr({0, 2}),
                                                 builder.getDenseI64ArrayAttr({3, 5, 2}));
  TableCall call = tableCallFor(op);
  EXPECT_EQ(call.op, &ops::kExpand);
  expectSameAttrs(call.attrs, {{"dims", Shape{0, 2}}, {"shape", Shape{3, 5, 2}}});
  // The eager expand accepts dims that are not the trailing alignment.
  EXPECT_EQ(ops::kExpand.shape(ops::kExpand, std::vector{meta({3, 1})}, call.attrs,
                               SourceLoc::current())[0].shape,
            (Shape{3, 5, 2}));
}

TEST_F(OpBridgeTest, ReshapeToANewShapeIsReshapeAndToItsOwnShapeIsClone) {
  mlir::Value x = arguments(std::vector{meta({4, 3})})[0];
  auto reshape = mlir::kiln::ReshapeOp::create(builder, loc, x, builder.getDenseI64ArrayAttr({12}));
  auto identity = mlir::kiln::ReshapeOp::create(builder, loc, x, builder.getDenseI64ArrayAttr({4, 3}));
  EXPECT_EQ(tableCallFor(reshape).op, &ops::kReshape);
  EXPECT_EQ(tableCallFor(identity).op, &ops::kCopy);
}

TEST_F(OpBridgeTest, UnknownAttributesAndBadEnumsAreTraceErrors) {
  // Outputs given directly: the shape rules would reject these Attrs first.
  auto record = [&](const OpDef& op, std::vector<TensorMeta> inputs, const Attrs& attrs) {
    return buildKilnOp(builder, loc, op, arguments(inputs), attrs, std::span(inputs).first(1));
  };
  EXPECT_KILN_ERROR_HAS(record(ops::kExp, {meta({2})}, {{"alpha", 1.0}}), TraceError,
                        "kiln::exp: attribute 'alpha' has no counterpart on kiln.exp");
  EXPECT_KILN_ERROR_HAS(
      record(ops::kCompare, {meta({2}), meta({2})}, {{"direction", std::string("below")}}),
      TraceError, "kiln::compare: 'below' is not a direction of kiln.compare");
  EXPECT_KILN_ERROR_HAS(record(ops::kConcat, {meta({2}), meta({2})}, {{"dim", 0.0}}), TraceError,
                        "kiln::cat: attribute 'dim' of kiln.concat is missing or not an int64");
}

TEST_F(OpBridgeTest, OpsWithoutATableEntryNameThemselvesAndTheirLocation) {
  mlir::Value c = buildConstant(builder, loc, ones({2}));
  EXPECT_KILN_ERROR_HAS(tableCallFor(c.getDefiningOp()), Error,
                        "kiln::jit: 'kiln.constant' at model.cpp:12:7: constants are not table calls");
  auto ret = mlir::func::ReturnOp::create(builder, mlir::NameLoc::get(builder.getStringAttr("step"), loc));
  EXPECT_KILN_ERROR_HAS(tableCallFor(ret), Error,
                        "kiln::jit: 'func.return' at model.cpp:12:7: no op of the table computes it");
}

TEST_F(OpBridgeTest, UnverifiedOpsReportMissingAttributes) {
  std::vector<mlir::Value> xs = arguments(std::vector{meta({2}), meta({2})});
  mlir::OperationState concat(loc, "kiln.concat");
  concat.addOperands(xs);
  concat.addTypes(tensorTypeFor(&context, meta({4})));
  EXPECT_KILN_ERROR_HAS(tableCallFor(builder.create(concat)), Error,
                        "kiln::jit: 'kiln.concat' at model.cpp:12:7: attribute 'dim' is missing");
  mlir::OperationState rng(loc, "kiln.rng");
  rng.addOperands(arguments(std::vector{meta({2}, kInt64)}));
  rng.addAttribute("distribution", mlir::kiln::RngDistributionAttr::get(
                                       &context, mlir::kiln::RngDistribution::uniform));
  rng.addAttribute("shape", builder.getDenseI64ArrayAttr({2}));
  rng.addAttribute("dtype", mlir::TypeAttr::get(builder.getF32Type()));
  rng.addAttribute("params", builder.getDenseF64ArrayAttr({}));
  rng.addTypes({tensorTypeFor(&context, meta({2})), tensorTypeFor(&context, meta({2}, kInt64))});
  EXPECT_KILN_ERROR_HAS(tableCallFor(builder.create(rng)), Error,
                        "kiln::jit: 'kiln.rng' at model.cpp:12:7: 'params' is empty");
}

TEST(OpBridge, RecordingNeedsTheKilnDialect) {
  mlir::MLIRContext bare;
  mlir::OpBuilder builder(&bare);
  EXPECT_KILN_ERROR_HAS(
      buildKilnOp(builder, builder.getUnknownLoc(), ops::kNeg, {}, {}, {}), TraceError,
      "kiln::neg: kiln.neg is not registered: load the kiln dialect into the builder's context");
}

TEST_F(OpBridgeTest, FormatsLocations) {
  EXPECT_EQ(formatLocation(loc), "model.cpp:12:7");
  EXPECT_EQ(formatLocation(mlir::NameLoc::get(builder.getStringAttr("relu"), loc)), "model.cpp:12:7");
  EXPECT_EQ(formatLocation(builder.getUnknownLoc()), "unknown location");
}

// ---- the op table, the schema and the dialect ------------------------------------------

// kiln ops the bridge neither records nor maps back (OpBridge.h): constants go through
// buildConstant and tensorFromElements, fusion bodies and their yield are made by the
// compiler, host callbacks by the tracer.
// kiln.iota exists only in dynamic programs, which run specialized (it becomes a constant).
const std::set<std::string> kNotBridged{"kiln.callback", "kiln.constant", "kiln.fusion", "kiln.iota",
                                        "kiln.yield"};

std::set<std::string> recordedKilnOps() {
  std::set<std::string> names;
  for (const OpDef* op : ops::allOps())
    if (!isFactory(*op)) names.insert(std::string(op->kilnOp));
  return names;
}

TEST_F(OpBridgeTest, EveryDialectOpIsRecordedOrKnownNotToBe) {
  std::set<std::string> dialectOps;
  for (mlir::RegisteredOperationName name : context.getRegisteredOperationsByDialect("kiln"))
    dialectOps.insert(name.getStringRef().str());
  std::set<std::string> accounted = recordedKilnOps();
  for (const std::string& name : kNotBridged)
    EXPECT_TRUE(accounted.insert(name).second) << name << " is recorded but listed in kNotBridged";
  EXPECT_EQ(dialectOps, accounted) << "every kiln op is recorded from the op table or in kNotBridged";
}

TEST_F(OpBridgeTest, SchemaMapsExactlyTheOdsAttributesOfEveryRecordedOp) {
  for (const std::string& name : recordedKilnOps()) {
    SCOPED_TRACE(name);
    std::optional<mlir::RegisteredOperationName> info = mlir::RegisteredOperationName::lookup(name, &context);
    ASSERT_TRUE(info.has_value());
    std::set<std::string> ods, mapped;
    for (mlir::StringAttr attr : info->getAttributeNames()) ods.insert(attr.str());
    for (std::string_view attr : mappedAttributes(name)) mapped.insert(std::string(attr));
    EXPECT_EQ(mapped, ods) << "the bridge's schema (OpBridge.cpp) and KilnOps.td disagree";
  }
}

// ---- types and constants --------------------------------------------------------------

TEST_F(OpBridgeTest, DTypesAndElementTypesCorrespond) {
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kBool})
    EXPECT_EQ(dtypeFor(elementTypeFor(&context, dtype)), dtype) << dtype;
  EXPECT_TRUE(elementTypeFor(&context, kBool).isSignlessInteger(1));
  EXPECT_KILN_ERROR_HAS(dtypeFor(builder.getI8Type()), TypeError,
                        "kiln::jit: element type i8 has no kiln dtype");
  auto type = tensorTypeFor(&context, meta({2, 3}, kFloat16));
  EXPECT_EQ(type, mlir::RankedTensorType::get({2, 3}, builder.getF16Type()));
  TensorMeta back = metaFor(type);
  EXPECT_EQ(back.shape, (Shape{2, 3}));
  EXPECT_EQ(back.dtype, kFloat16);
  EXPECT_KILN_ERROR_HAS(metaFor(builder.getF32Type()), TypeError,
                        "kiln::jit: type f32 is not a ranked tensor type");
}

void expectSameBits(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.sizes(), want.sizes());
  Tensor packed = want.contiguous();
  ASSERT_TRUE(got.is_contiguous());
  EXPECT_EQ(std::memcmp(got.rawData(), packed.rawData(), size_t(want.numel()) * want.element_size()), 0);
}

std::vector<Tensor> sampleTensors() {
  Tensor f = tensor(std::vector<float>{1.5f, -0.0f, 3.25f, 1e-30f, -7.0f, 0.1f}, Shape{2, 3});
  return {f,
          convert(f, kFloat64),
          convert(f, kFloat16),
          convert(f, kBFloat16),
          tensor(std::vector<int32_t>{1, -2, 3, 2147483647}),
          tensor(std::vector<int64_t>{int64_t(1) << 60, -5}),
          tensor(std::vector<bool>{true, false, false, true, true}),
          f.t(),                         // not contiguous
          full({3, 2}, 2.5),             // a splat
          full({2, 2}, 1.0, kBool),      // a bool splat
          zeros({0, 3})};                // no elements
}

TEST_F(OpBridgeTest, DenseConstantsRoundTripEveryDType) {
  std::vector<mlir::Value> results;
  for (const Tensor& value : sampleTensors()) {
    SCOPED_TRACE(::testing::PrintToString(value.dtype()));
    mlir::Value c = buildConstant(builder, loc, value);
    auto attr = llvm::cast<mlir::ElementsAttr>(c.getDefiningOp<mlir::kiln::ConstantOp>().getValue());
    EXPECT_TRUE(llvm::isa<mlir::DenseElementsAttr>(attr));
    expectSameBits(tensorFromElements(attr), value);
    results.push_back(c);
  }
  EXPECT_EQ(finishAndVerify(results), "");
}

TEST_F(OpBridgeTest, UniformTensorsBecomeSplats) {
  auto splatOf = [&](const Tensor& t) {
    return llvm::cast<mlir::DenseElementsAttr>(
               buildConstant(builder, loc, t).getDefiningOp<mlir::kiln::ConstantOp>().getValue())
        .isSplat();
  };
  EXPECT_TRUE(splatOf(full({64, 64}, 0.5)));
  EXPECT_TRUE(splatOf(full({8}, 1.0, kBool)));
  EXPECT_FALSE(splatOf(tensor(std::vector<float>{0.0f, -0.0f})));  // different bits
}

TEST_F(OpBridgeTest, ResourceConstantsRoundTripEveryDType) {
  std::vector<mlir::Value> results;
  for (const Tensor& value : sampleTensors()) {
    SCOPED_TRACE(::testing::PrintToString(value.dtype()));
    mlir::Value c = buildResourceConstant(builder, loc, value, "weight");
    auto attr = llvm::cast<mlir::ElementsAttr>(c.getDefiningOp<mlir::kiln::ConstantOp>().getValue());
    EXPECT_TRUE(llvm::isa<mlir::DenseResourceElementsAttr>(attr));
    expectSameBits(tensorFromElements(attr), value);
    results.push_back(c);
  }
  EXPECT_EQ(finishAndVerify(results), "");
}

TEST_F(OpBridgeTest, OtherElementsAttributesAreRejected) {
  auto type = mlir::RankedTensorType::get({2}, builder.getF32Type());
  auto sparse = mlir::SparseElementsAttr::get(
      type, mlir::DenseElementsAttr::get(mlir::RankedTensorType::get({1, 1}, builder.getI64Type()), int64_t(0)),
      mlir::DenseElementsAttr::get(mlir::RankedTensorType::get({1}, builder.getF32Type()), 1.0f));
  EXPECT_KILN_ERROR_HAS(tensorFromElements(sparse), Error, "is neither dense nor dense_resource");
}

}  // namespace
}  // namespace kiln::bridge
