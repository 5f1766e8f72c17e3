// Builds every kiln op with its C++ builder, without result types, checks the
// inferred types and verifies the module; folds a few ops with createOrFold.

#include "dialect/KilnDialect.h"
#include "dialect/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;
using namespace mlir::kiln;

namespace {

class BuildersTest : public ::testing::Test {
protected:
  BuildersTest() : builder(&context), loc(builder.getUnknownLoc()) {
    context.loadDialect<KilnDialect, func::FuncDialect>();
    module = ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
    function = func::FuncOp::create(builder, loc, "main",
                                    builder.getFunctionType({}, {}));
    builder.setInsertionPointToEnd(function.addEntryBlock());
  }

  // A new function argument of type tensor<shape x element> (f32 default).
  Value arg(ArrayRef<int64_t> shape, Type element = {}) {
    Type type = RankedTensorType::get(shape, element ? element : f32());
    Block &entry = function.getBody().front();
    Value value = entry.addArgument(type, loc);
    function.setFunctionType(
        builder.getFunctionType(entry.getArgumentTypes(), {}));
    return value;
  }

  Value splat(ArrayRef<int64_t> shape, float value) {
    auto type = RankedTensorType::get(shape, f32());
    return ConstantOp::create(builder, loc,
                              DenseElementsAttr::get(type, value));
  }

  // Ends the function and verifies the module.
  bool verifies() {
    func::ReturnOp::create(builder, loc);
    return succeeded(verify(*module));
  }

  static Type tensor(ArrayRef<int64_t> shape, Type element) {
    return RankedTensorType::get(shape, element);
  }
  Type f32() { return builder.getF32Type(); }
  Type i1() { return builder.getI1Type(); }
  Type i64() { return builder.getI64Type(); }

  MLIRContext context;
  OpBuilder builder;
  Location loc;
  OwningOpRef<ModuleOp> module;
  func::FuncOp function;
};

template <typename... Ops>
void expectUnaryOpsKeepType(OpBuilder &builder, Location loc, Value x) {
  ([&] { EXPECT_EQ(Ops::create(builder, loc, x).getType(), x.getType()); }(),
   ...);
}

template <typename... Ops>
void expectBinaryOpsKeepType(OpBuilder &builder, Location loc, Value x) {
  ([&] { EXPECT_EQ(Ops::create(builder, loc, x, x).getType(), x.getType()); }(),
   ...);
}

TEST_F(BuildersTest, ElementwiseOps) {
  Value x = arg({4, 3});
  Value b = arg({4, 3}, i1());
  expectUnaryOpsKeepType<NegOp, AbsOp, ExpOp, LogOp, SqrtOp, RsqrtOp, TanhOp,
                         SigmoidOp, ReluOp, GeluOp, SinOp, CosOp, FloorOp>(
      builder, loc, x);
  expectUnaryOpsKeepType<NotOp>(builder, loc, b);
  expectBinaryOpsKeepType<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp>(
      builder, loc, x);
  expectBinaryOpsKeepType<AndOp, OrOp>(builder, loc, b);
  EXPECT_EQ(CompareOp::create(builder, loc, CompareDirection::lt, x, x)
                .getType(),
            tensor({4, 3}, i1()));
  EXPECT_EQ(SelectOp::create(builder, loc, b, x, x).getType(), x.getType());
  EXPECT_EQ(ConvertOp::create(builder, loc, x, builder.getF16Type()).getType(),
            tensor({4, 3}, builder.getF16Type()));
  EXPECT_TRUE(verifies());
}

TEST_F(BuildersTest, ElementwiseOpsTakeStaticDims) {
  Value x = arg({ShapedType::kDynamic, 3});
  Value y = arg({4, ShapedType::kDynamic});
  EXPECT_EQ(AddOp::create(builder, loc, x, y).getType(), tensor({4, 3}, f32()));
  EXPECT_TRUE(verifies());
}

TEST_F(BuildersTest, ConstantTakesTheAttributeType) {
  auto type = RankedTensorType::get({2, 2}, i64());
  auto op = ConstantOp::create(builder, loc,
                               DenseElementsAttr::get(type, int64_t(7)));
  EXPECT_EQ(op.getType(), type);
  EXPECT_TRUE(verifies());
}

TEST_F(BuildersTest, ShapeOps) {
  Value x = arg({4, 3});
  Value r = arg({3});
  EXPECT_EQ(BroadcastInDimOp::create(builder, loc, r, {1}, {4, 3}).getType(),
            tensor({4, 3}, f32()));
  EXPECT_EQ(ReshapeOp::create(builder, loc, x, {2, 6}).getType(),
            tensor({2, 6}, f32()));
  EXPECT_EQ(TransposeOp::create(builder, loc, x, {1, 0}).getType(),
            tensor({3, 4}, f32()));
  EXPECT_EQ(SliceOp::create(builder, loc, x, {0, 1}, {4, 3}, {2, 1}).getType(),
            tensor({2, 2}, f32()));
  EXPECT_EQ(ConcatOp::create(builder, loc, ValueRange{x, x}, 1).getType(),
            tensor({4, 6}, f32()));
  EXPECT_TRUE(verifies());
}

TEST_F(BuildersTest, ReductionsAndContractions) {
  Value x = arg({4, 3});
  Value w = arg({5, 3});
  Value img = arg({1, 3, 8, 8});
  Value kernel = arg({16, 3, 3, 3});
  EXPECT_EQ(ReduceOp::create(builder, loc, ReduceKind::sum, x, {1}).getType(),
            tensor({4}, f32()));
  EXPECT_EQ(ReduceOp::create(builder, loc, ReduceKind::mean, x, {1},
                             /*keep_dims=*/true)
                .getType(),
            tensor({4, 1}, f32()));
  EXPECT_EQ(MatmulOp::create(builder, loc, x, w, /*transpose_a=*/false,
                             /*transpose_b=*/true)
                .getType(),
            tensor({4, 5}, f32()));
  EXPECT_EQ(Conv2dOp::create(builder, loc, img, kernel, /*bias=*/Value(), {2, 2},
                             {1, 1, 1, 1}, {1, 1}, 1)
                .getType(),
            tensor({1, 16, 4, 4}, f32()));
  EXPECT_EQ(Pool2dOp::create(builder, loc, PoolKind::max, img, {2, 2}, {2, 2},
                             {0, 0, 0, 0})
                .getType(),
            tensor({1, 3, 4, 4}, f32()));
  EXPECT_TRUE(verifies());
}

TEST_F(BuildersTest, GatherTakesAlongOneDim) {
  Value table = arg({10, 4});
  Value ids = arg({2, 3}, i64());
  EXPECT_EQ(GatherOp::create(builder, loc, table, ids, 0).getType(),
            tensor({2, 3, 4}, f32()));
  EXPECT_TRUE(verifies());
}

TEST_F(BuildersTest, RngReturnsSampleAndKey) {
  Value key = arg({2}, i64());
  auto rng = RngOp::create(builder, loc, RngDistribution::normal, key, {4, 4},
                           f32(), {0.0, 1.0});
  EXPECT_EQ(rng.getSample().getType(), tensor({4, 4}, f32()));
  EXPECT_EQ(rng.getNewKey().getType(), key.getType());
  EXPECT_TRUE(verifies());
}

TEST_F(BuildersTest, FusionResultsAreTheYieldTypes) {
  Value x = arg({4, 3});
  Value y = arg({4, 3});
  auto fusion = FusionOp::create(
      builder, loc, ValueRange{x, y},
      [](OpBuilder &b, Location l, ValueRange args) {
        Value product = MulOp::create(b, l, args[0], args[1]);
        Value mask = CompareOp::create(b, l, CompareDirection::gt, product,
                                       args[0]);
        YieldOp::create(b, l, ValueRange{product, mask});
      });
  ASSERT_EQ(fusion.getNumResults(), 2u);
  EXPECT_EQ(fusion.getResult(0).getType(), tensor({4, 3}, f32()));
  EXPECT_EQ(fusion.getResult(1).getType(), tensor({4, 3}, i1()));
  EXPECT_TRUE(verifies());
}

TEST_F(BuildersTest, CallbackTakesResultTypes) {
  Value x = arg({4, 3});
  Type result = tensor({2}, i64());
  auto callback = CallbackOp::create(builder, loc, TypeRange{result},
                                     ValueRange{x}, 3);
  EXPECT_EQ(callback.getResult(0).getType(), result);
  EXPECT_TRUE(verifies());
}

TEST_F(BuildersTest, InferenceReportsBothShapes) {
  Value x = arg({4, 3});
  Value y = arg({4, 2});
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  SmallVector<Type> types;
  EXPECT_TRUE(failed(AddOp::inferReturnTypes(
      &context, loc, AddOp::Adaptor(ValueRange{x, y}), types)));
  EXPECT_EQ(message, "'kiln.add' op operand 'rhs' has shape [4, 2] but operand "
                     "'lhs' has shape [4, 3]");
}

TEST_F(BuildersTest, CreateOrFoldAppliesIdentities) {
  Value x = arg({4, 3});
  Value zero = splat({4, 3}, 0.0f);
  EXPECT_EQ(builder.createOrFold<AddOp>(loc, x, zero), x);
  Value t = builder.createOrFold<TransposeOp>(loc, x, ArrayRef<int64_t>{1, 0});
  EXPECT_EQ(builder.createOrFold<TransposeOp>(loc, t, ArrayRef<int64_t>{1, 0}),
            x);
  EXPECT_TRUE(verifies());
}

TEST_F(BuildersTest, CreateOrFoldFoldsConstants) {
  Value sum = builder.createOrFold<AddOp>(loc, splat({2048}, 1.5f),
                                          splat({2048}, 2.0f));
  auto constant = sum.getDefiningOp<ConstantOp>();
  ASSERT_TRUE(constant);
  auto value = cast<DenseElementsAttr>(constant.getValue());
  EXPECT_TRUE(value.isSplat());
  EXPECT_EQ(value.getSplatValue<float>(), 3.5f);
  EXPECT_TRUE(verifies());
}

} // namespace
