// The reference interpreter: handwritten kiln functions give the bits of the same
// computation done eagerly with the public API, and every error names the op and line.
#include <cstring>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dialect/KilnDialect.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "runtime/interp/Interpreter.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/core/TestTensors.h"

namespace kiln::interp {
namespace {

using kiln::runtime::CallbackTable;
using kiln::testing::at;
using kiln::testing::spreadTensor;

Tensor f32(const Shape& shape, uint64_t seed) { return spreadTensor(shape, seed, -2, 2, kFloat32); }

void expectSameBits(const Tensor& got, const Tensor& want) {
  ASSERT_TRUE(got.defined());
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.sizes(), want.sizes());
  Tensor a = got.contiguous(), b = want.contiguous();
  EXPECT_EQ(std::memcmp(a.rawData(), b.rawData(), size_t(b.numel()) * b.element_size()), 0)
      << "got " << got << "\nwant " << want;
}

class InterpreterTest : public ::testing::Test {
 protected:
  InterpreterTest() {
    context.loadDialect<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
  }

  // Parses `source` as model.mlir (so locations read model.mlir:line:col) and returns @main.
  mlir::func::FuncOp parse(const std::string& source, bool verify = true) {
    mlir::ParserConfig config(&context, verify);
    module = mlir::parseSourceString<mlir::ModuleOp>(source, config, "model.mlir");
    if (!module) {
      ADD_FAILURE() << "does not parse:\n" << source;
      return {};
    }
    return module->lookupSymbol<mlir::func::FuncOp>("main");
  }

  std::vector<Tensor> run(const std::string& source, std::vector<Tensor> arguments,
                          const CallbackTable* callbacks = nullptr,
                          const SourceLoc& loc = SourceLoc::current()) {
    mlir::func::FuncOp main = parse(source);
    if (!main) return {};
    return interpret(main, arguments, callbacks, loc);
  }

  Tensor run1(const std::string& source, std::vector<Tensor> arguments) {
    std::vector<Tensor> results = run(source, std::move(arguments));
    EXPECT_EQ(results.size(), 1u);
    return results.empty() ? Tensor() : results[0];
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

// ---- computations ---------------------------------------------------------------------

TEST_F(InterpreterTest, ElementwiseWithBroadcast) {
  Tensor x = f32({4, 3}, 1), b = f32({3}, 2);
  Tensor got = run1(R"mlir(
    func.func @main(%x: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
      %bb = kiln.broadcast_in_dim %b, dims = [1], shape = [4, 3] : tensor<3xf32>
      %s = kiln.add %x, %bb : tensor<4x3xf32>
      %e = kiln.exp %s : tensor<4x3xf32>
      %m = kiln.mul %e, %x : tensor<4x3xf32>
      %t = kiln.tanh %m : tensor<4x3xf32>
      return %t : tensor<4x3xf32>
    })mlir", {x, b});
  expectSameBits(got, tanh(mul(exp(add(x, b)), x)));
}

TEST_F(InterpreterTest, BroadcastInDimAlongLeadingDims) {
  Tensor b = f32({3}, 3);
  Tensor got = run1(R"mlir(
    func.func @main(%b: tensor<3xf32>) -> tensor<3x4x2xf32> {
      %bb = kiln.broadcast_in_dim %b, dims = [0], shape = [3, 4, 2] : tensor<3xf32>
      return %bb : tensor<3x4x2xf32>
    })mlir", {b});
  expectSameBits(got, b.reshape({3, 1, 1}).expand({3, 4, 2}));
}

TEST_F(InterpreterTest, Reductions) {
  Tensor x = f32({4, 3, 5}, 4);
  std::vector<Tensor> got = run(R"mlir(
    func.func @main(%x: tensor<4x3x5xf32>) -> (tensor<4xf32>, tensor<4x1x5xf32>, tensor<3x5xf32>) {
      %s = kiln.reduce sum %x, dims = [1, 2] : tensor<4x3x5xf32>
      %m = kiln.reduce mean %x, dims = [1] keep_dims : tensor<4x3x5xf32>
      %a = kiln.reduce max %x, dims = [0] : tensor<4x3x5xf32>
      return %s, %m, %a : tensor<4xf32>, tensor<4x1x5xf32>, tensor<3x5xf32>
    })mlir", {x});
  ASSERT_EQ(got.size(), 3u);
  expectSameBits(got[0], sum(x, {1, 2}));
  expectSameBits(got[1], mean(x, {1}, true));
  expectSameBits(got[2], amax(x, {0}));
}

TEST_F(InterpreterTest, Matmul) {
  Tensor a = f32({2, 4, 3}, 5), b = f32({2, 3, 5}, 6), x = f32({8, 3}, 7), w = f32({5, 3}, 8);
  std::vector<Tensor> got = run(R"mlir(
    func.func @main(%a: tensor<2x4x3xf32>, %b: tensor<2x3x5xf32>, %x: tensor<8x3xf32>,
                    %w: tensor<5x3xf32>) -> (tensor<2x4x5xf32>, tensor<8x5xf32>) {
      %mm = kiln.matmul %a, %b : tensor<2x4x3xf32>, tensor<2x3x5xf32>
      %mt = kiln.matmul %x, %w transpose_b : tensor<8x3xf32>, tensor<5x3xf32>
      return %mm, %mt : tensor<2x4x5xf32>, tensor<8x5xf32>
    })mlir", {a, b, x, w});
  ASSERT_EQ(got.size(), 2u);
  expectSameBits(got[0], bmm(a, b));
  expectSameBits(got[1], mm(x, w.t()));
}

TEST_F(InterpreterTest, Conv2dAndPool2d) {
  Tensor img = f32({2, 4, 8, 8}, 9), w = f32({6, 2, 3, 3}, 10);
  std::vector<Tensor> got = run(R"mlir(
    func.func @main(%img: tensor<2x4x8x8xf32>, %w: tensor<6x2x3x3xf32>)
        -> (tensor<2x6x4x8xf32>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>) {
      %cv = kiln.conv2d %img, %w, stride = [2, 1], padding = [1, 1, 1, 1], dilation = [1, 1],
              groups = 2 : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>
      %mp = kiln.pool2d max %img, window = [2, 2], stride = [2, 2], padding = [0, 0, 0, 0]
              : tensor<2x4x8x8xf32>
      %ap = kiln.pool2d avg %img, window = [3, 3], stride = [2, 2], padding = [1, 1, 1, 1]
              : tensor<2x4x8x8xf32>
      return %cv, %mp, %ap : tensor<2x6x4x8xf32>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>
    })mlir", {img, w});
  ASSERT_EQ(got.size(), 3u);
  expectSameBits(got[0], conv2d(img, w, Tensor(), {2, 1}, {1}, {1}, 2));
  expectSameBits(got[1], max_pool2d(img, {2}));
  expectSameBits(got[2], avg_pool2d(img, {3}, {2}, {1}));
}

TEST_F(InterpreterTest, ConcatSliceTransposeReshape) {
  Tensor x = f32({4, 3}, 11), y = f32({2, 3}, 12);
  std::vector<Tensor> got = run(R"mlir(
    func.func @main(%x: tensor<4x3xf32>, %y: tensor<2x3xf32>)
        -> (tensor<6x3xf32>, tensor<2x2xf32>, tensor<3x4xf32>, tensor<2x6xf32>) {
      %cc = kiln.concat(%x, %y) dim = 0 : tensor<4x3xf32>, tensor<2x3xf32>
      %sl = kiln.slice %x, start = [0, 1], limit = [4, 3], stride = [2, 1] : tensor<4x3xf32>
      %t = kiln.transpose %x, permutation = [1, 0] : tensor<4x3xf32>
      %rs = kiln.reshape %x, shape = [2, 6] : tensor<4x3xf32>
      return %cc, %sl, %t, %rs : tensor<6x3xf32>, tensor<2x2xf32>, tensor<3x4xf32>, tensor<2x6xf32>
    })mlir", {x, y});
  ASSERT_EQ(got.size(), 4u);
  expectSameBits(got[0], cat({x, y}, 0));
  expectSameBits(got[1], x.slice(0, 0, 4, 2).slice(1, 1, 3));
  expectSameBits(got[2], x.t());
  expectSameBits(got[3], x.reshape({2, 6}));
}

TEST_F(InterpreterTest, SameShapeReshapeIsAFreshCopy) {
  Tensor x = f32({4, 3}, 13);
  Tensor got = run1(R"mlir(
    func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
      %c = kiln.reshape %x, shape = [4, 3] : tensor<4x3xf32>
      return %c : tensor<4x3xf32>
    })mlir", {x});
  expectSameBits(got, x);
  EXPECT_NE(got.impl()->storage, x.impl()->storage);
}

TEST_F(InterpreterTest, Gather) {
  Tensor table = f32({10, 4}, 14);
  Tensor ids = tensor(std::vector<int64_t>{3, 0, 9, 3, 7, 1}, Shape{2, 3});
  Tensor cols = tensor(std::vector<int32_t>{2, 0});
  std::vector<Tensor> got = run(R"mlir(
    func.func @main(%t: tensor<10x4xf32>, %ids: tensor<2x3xi64>, %cols: tensor<2xi32>)
        -> (tensor<2x3x4xf32>, tensor<10x2xf32>) {
      %g = kiln.gather %t[%ids], dim = 0 : tensor<10x4xf32>, tensor<2x3xi64>
      %c = kiln.gather %t[%cols], dim = 1 : tensor<10x4xf32>, tensor<2xi32>
      return %g, %c : tensor<2x3x4xf32>, tensor<10x2xf32>
    })mlir", {table, ids, cols});
  ASSERT_EQ(got.size(), 2u);
  expectSameBits(got[0], take(table, ids, 0));
  expectSameBits(got[1], index_select(table, 1, cols));
}

TEST_F(InterpreterTest, CompareSelectAndLogic) {
  Tensor x = f32({4, 3}, 15), y = f32({4, 3}, 16);
  std::vector<Tensor> got = run(R"mlir(
    func.func @main(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xi1>) {
      %lt = kiln.compare lt, %x, %y : tensor<4x3xf32>
      %ge = kiln.compare ge, %x, %y : tensor<4x3xf32>
      %v = kiln.select %lt, %x, %y : tensor<4x3xi1>, tensor<4x3xf32>
      %n = kiln.not %ge : tensor<4x3xi1>
      %o = kiln.or %n, %ge : tensor<4x3xi1>
      return %v, %o : tensor<4x3xf32>, tensor<4x3xi1>
    })mlir", {x, y});
  ASSERT_EQ(got.size(), 2u);
  expectSameBits(got[0], where(lt(x, y), x, y));
  expectSameBits(got[1], logical_or(logical_not(ge(x, y)), ge(x, y)));
}

TEST_F(InterpreterTest, Convert) {
  Tensor x = spreadTensor({4, 3}, 17, -300, 300, kFloat64);
  std::vector<Tensor> got = run(R"mlir(
    func.func @main(%x: tensor<4x3xf64>)
        -> (tensor<4x3xf16>, tensor<4x3xbf16>, tensor<4x3xi32>, tensor<4x3xi1>) {
      %h = kiln.convert %x : tensor<4x3xf64> to f16
      %b = kiln.convert %x : tensor<4x3xf64> to bf16
      %i = kiln.convert %x : tensor<4x3xf64> to i32
      %p = kiln.convert %i : tensor<4x3xi32> to i1
      return %h, %b, %i, %p : tensor<4x3xf16>, tensor<4x3xbf16>, tensor<4x3xi32>, tensor<4x3xi1>
    })mlir", {x});
  ASSERT_EQ(got.size(), 4u);
  expectSameBits(got[0], convert(x, kFloat16));
  expectSameBits(got[1], convert(x, kBFloat16));
  expectSameBits(got[2], convert(x, kInt32));
  expectSameBits(got[3], convert(convert(x, kInt32), kBool));
}

TEST_F(InterpreterTest, DenseConstants) {
  Tensor x = f32({2, 3}, 18);
  std::vector<Tensor> got = run(R"mlir(
    func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x2xbf16>, tensor<3xi1>) {
      %c = kiln.constant dense<[[1.0, 2.0, 3.0], [-4.0, 0.5, 0.25]]> : tensor<2x3xf32>
      %s = kiln.constant dense<2.5> : tensor<2x3xf32>
      %a = kiln.add %x, %c : tensor<2x3xf32>
      %m = kiln.mul %a, %s : tensor<2x3xf32>
      %h = kiln.constant dense<[[1.5, -2.0], [3.0, 0.1]]> : tensor<2x2xbf16>
      %b = kiln.constant dense<[true, false, true]> : tensor<3xi1>
      return %m, %h, %b : tensor<2x3xf32>, tensor<2x2xbf16>, tensor<3xi1>
    })mlir", {x});
  ASSERT_EQ(got.size(), 3u);
  Tensor c = tensor(std::vector<float>{1, 2, 3, -4, 0.5f, 0.25f}, Shape{2, 3});
  expectSameBits(got[0], mul(add(x, c), full({2, 3}, 2.5)));
  expectSameBits(got[1], convert(tensor(std::vector<float>{1.5f, -2.0f, 3.0f, 0.1f}, Shape{2, 2}), kBFloat16));
  expectSameBits(got[2], tensor(std::vector<bool>{true, false, true}));
}

TEST_F(InterpreterTest, DenseResourceConstants) {
  // 4-byte alignment header, then 1.0f 2.0f 3.0f little-endian; i64 7 and -1.
  Tensor x = f32({3}, 19);
  std::vector<Tensor> got = run(R"mlir(
    func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<2xi64>) {
      %w = kiln.constant dense_resource<weight> : tensor<3xf32>
      %y = kiln.mul %x, %w : tensor<3xf32>
      %i = kiln.constant dense_resource<ids> : tensor<2xi64>
      return %y, %i : tensor<3xf32>, tensor<2xi64>
    }
    {-#
      dialect_resources: {
        builtin: {
          weight: "0x040000000000803F0000004000004040",
          ids: "0x080000000700000000000000FFFFFFFFFFFFFFFF"
        }
      }
    #-})mlir", {x});
  ASSERT_EQ(got.size(), 2u);
  expectSameBits(got[0], mul(x, tensor(std::vector<float>{1, 2, 3})));
  expectSameBits(got[1], tensor(std::vector<int64_t>{7, -1}));
}

TEST_F(InterpreterTest, FusionRunsItsBody) {
  Tensor x = f32({4, 3}, 20), y = f32({4, 3}, 21);
  std::vector<Tensor> got = run(R"mlir(
    func.func @main(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4xf32>) {
      %f:2 = kiln.fusion(%x, %y) : (tensor<4x3xf32>, tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4xf32>) {
      ^bb0(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>):
        %0 = kiln.mul %a, %b : tensor<4x3xf32>
        %1 = kiln.sigmoid %0 : tensor<4x3xf32>
        %2 = kiln.reduce sum %1, dims = [1] : tensor<4x3xf32>
        kiln.yield %1, %2 : tensor<4x3xf32>, tensor<4xf32>
      }
      %r = kiln.relu %f#0 : tensor<4x3xf32>
      return %r, %f#1 : tensor<4x3xf32>, tensor<4xf32>
    })mlir", {x, y});
  ASSERT_EQ(got.size(), 2u);
  Tensor s = sigmoid(mul(x, y));
  expectSameBits(got[0], relu(s));
  expectSameBits(got[1], sum(s, {1}));
}

TEST_F(InterpreterTest, CallbackCallsTheHostFunction) {
  Tensor x = f32({4, 3}, 22);
  CallbackTable callbacks;
  int calls = 0;
  callbacks.add([&](std::span<const Tensor>) -> std::vector<Tensor> { return {}; });
  const int64_t id = callbacks.add([&](std::span<const Tensor> in) -> std::vector<Tensor> {
    ++calls;
    return {add(in[0], in[1]), sum(in[0])};
  });
  ASSERT_EQ(id, 1);
  std::vector<Tensor> got = run(R"mlir(
    func.func @main(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<f32>) {
      %e = kiln.exp %x : tensor<4x3xf32>
      %cb:2 = kiln.callback(%e, %x) callee = 1 : (tensor<4x3xf32>, tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<f32>)
      return %cb#0, %cb#1 : tensor<4x3xf32>, tensor<f32>
    })mlir", {x}, &callbacks);
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(got.size(), 2u);
  expectSameBits(got[0], add(exp(x), x));
  expectSameBits(got[1], sum(exp(x)));
}

// kiln.rng with the key eager draws take reproduces their bits and advances the key the
// same way (ceil(n / 4) blocks for f32, ceil(n / 2) for f64).
TEST_F(InterpreterTest, RngMatchesEagerDrawsFromTheSameKey) {
  manual_seed(1234);
  const Generator start = defaultGenerator();
  Tensor u = rand({5, 3});
  Tensor n = randn({3, 3}, kFloat64);
  Tensor m = bernoulli({7}, 0.3);
  const Generator end = defaultGenerator();
  Tensor key = tensor(std::vector<int64_t>{int64_t(start.seed), int64_t(start.offset)});
  std::vector<Tensor> got = run(R"mlir(
    func.func @main(%key: tensor<2xi64>)
        -> (tensor<5x3xf32>, tensor<3x3xf64>, tensor<7xf32>, tensor<2xi64>) {
      %u, %k1 = kiln.rng uniform %key, shape = [5, 3], dtype = f32, params = [0.0, 1.0] : tensor<2xi64>
      %n, %k2 = kiln.rng normal %k1, shape = [3, 3], dtype = f64, params = [0.0, 1.0] : tensor<2xi64>
      %m, %k3 = kiln.rng bernoulli %k2, shape = [7], dtype = f32, params = [0.3] : tensor<2xi64>
      return %u, %n, %m, %k3 : tensor<5x3xf32>, tensor<3x3xf64>, tensor<7xf32>, tensor<2xi64>
    })mlir", {key});
  ASSERT_EQ(got.size(), 4u);
  expectSameBits(got[0], u);
  expectSameBits(got[1], n);
  expectSameBits(got[2], m);
  expectSameBits(got[3], tensor(std::vector<int64_t>{int64_t(end.seed), int64_t(end.offset)}));
}

// ---- how it runs ----------------------------------------------------------------------

// Counts the ops a tracer would see.
struct CountingHook : DispatchHook {
  bool symbolic() const override { return false; }
  void onOp(const OpCall&) override { ++ops; }
  void onValueRead(const Tensor&, std::string_view, const SourceLoc&) override {}
  int ops = 0;
};

TEST_F(InterpreterTest, RunsWithoutHookOrHistory) {
  Tensor x = f32({3}, 23).requires_grad_();
  CountingHook hook;
  std::vector<Tensor> got;
  {
    DispatchHookGuard guard(&hook);
    got = run(R"mlir(
      func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
        %e = kiln.exp %x : tensor<3xf32>
        return %e : tensor<3xf32>
      })mlir", {x});
  }
  EXPECT_EQ(hook.ops, 0);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_FALSE(got[0].requires_grad());
  EXPECT_TRUE(isGradEnabled());
}

TEST_F(InterpreterTest, ReturnsArgumentsAndRepeatedValuesAndSkipsUnusedOnes) {
  Tensor x = f32({2}, 24);
  std::vector<Tensor> got = run(R"mlir(
    func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
      %n = kiln.neg %x : tensor<2xf32>
      %unused = kiln.exp %n : tensor<2xf32>
      return %x, %n, %n : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
    })mlir", {x});
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(got[0].is_same(x));
  expectSameBits(got[1], neg(x));
  expectSameBits(got[2], neg(x));
}

// ---- errors ---------------------------------------------------------------------------

const char* kExp = R"mlir(
func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %e = kiln.exp %x : tensor<4x3xf32>
  return %e : tensor<4x3xf32>
})mlir";

TEST_F(InterpreterTest, WrongArgumentsAreNamed) {
  EXPECT_KILN_ERROR(run(kExp, {}), Error,
                    "kiln::interpret: 'func.func @main' at model.mlir:2:1: takes 1 arguments but was "
                    "given 0" + at());
  EXPECT_KILN_ERROR(run(kExp, {f32({4, 2}, 1)}), Error,
                    "kiln::interpret: 'func.func @main' at model.mlir:2:1: argument 0 is float32 "
                    "[4, 2] but the function takes tensor<4x3xf32>" + at());
  EXPECT_KILN_ERROR(run(kExp, {zeros({4, 3}, kFloat64)}), Error,
                    "kiln::interpret: 'func.func @main' at model.mlir:2:1: argument 0 is float64 "
                    "[4, 3] but the function takes tensor<4x3xf32>" + at());
}

TEST_F(InterpreterTest, UnverifiedFunctionsAreRejected) {
  mlir::func::FuncOp main = parse(R"mlir(
    func.func @main(%x: tensor<4x3xf32>, %y: tensor<4x2xf32>) -> tensor<4x3xf32> {
      %s = "kiln.add"(%x, %y) : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x3xf32>
      return %s : tensor<4x3xf32>
    })mlir", /*verify=*/false);
  ASSERT_TRUE(main);
  EXPECT_KILN_ERROR(interpret(main, std::vector{f32({4, 3}, 1), f32({4, 2}, 2)}), Error,
                    "kiln::interpret: 'func.func @main' at model.mlir:2:5: does not verify: "
                    "model.mlir:3:12: 'kiln.add' op operand 'rhs' has shape [4, 2] but operand 'lhs' "
                    "has shape [4, 3]" + at());
}

TEST_F(InterpreterTest, OpsWithoutATableEntryAreNamed) {
  context.allowUnregisteredDialects();
  const std::string source = R"mlir(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = "foo.bar"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      return %y : tensor<2xf32>
    })mlir";
  EXPECT_KILN_ERROR(run(source, {f32({2}, 1)}), Error,
                    "kiln::interpret: 'foo.bar' at model.mlir:3:12: no op of the table computes it" + at());
}

TEST_F(InterpreterTest, EagerErrorsKeepTheirKindAndGainTheOp) {
  // The dialect divides integers; the eager table's div takes floats only.
  const std::string source = R"mlir(
    func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
      %y = kiln.div %x, %x : tensor<2xi32>
      return %y : tensor<2xi32>
    })mlir";
  EXPECT_KILN_ERROR_HAS(run(source, {tensor(std::vector<int32_t>{1, 2})}), TypeError,
                        "kiln::interpret: 'kiln.div' at model.mlir:3:12: div: ");
}

TEST_F(InterpreterTest, CallbackErrorsAreNamed) {
  const std::string source = R"mlir(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = kiln.callback(%x) callee = 1 : (tensor<2xf32>) -> tensor<2xf32>
      return %y : tensor<2xf32>
    })mlir";
  CallbackTable one;
  one.add([](std::span<const Tensor> in) { return std::vector<Tensor>{in[0]}; });
  EXPECT_KILN_ERROR(run(source, {f32({2}, 1)}, &one), Error,
                    "kiln::interpret: 'kiln.callback' at model.mlir:3:12: callee 1 is not in the "
                    "callback table (1 entries)" + at());
  EXPECT_KILN_ERROR(run(source, {f32({2}, 1)}), Error,
                    "kiln::interpret: 'kiln.callback' at model.mlir:3:12: callee 1 is not in the "
                    "callback table (0 entries)" + at());
  CallbackTable wrong;
  wrong.add([](std::span<const Tensor>) { return std::vector<Tensor>{}; });
  wrong.add([](std::span<const Tensor> in) { return std::vector<Tensor>{convert(in[0], kFloat64)}; });
  EXPECT_KILN_ERROR(run(source, {f32({2}, 1)}, &wrong), Error,
                    "kiln::interpret: 'kiln.callback' at model.mlir:3:12: result 0 is float64 [2] but "
                    "the op's type is tensor<2xf32>" + at());
  CallbackTable none;
  none.add([](std::span<const Tensor>) { return std::vector<Tensor>{}; });
  none.add([](std::span<const Tensor>) { return std::vector<Tensor>{}; });
  EXPECT_KILN_ERROR(run(source, {f32({2}, 1)}, &none), Error,
                    "kiln::interpret: 'kiln.callback' at model.mlir:3:12: callee 1 returned 0 tensors "
                    "but the op has 1 results" + at());
}

TEST_F(InterpreterTest, FunctionsWithoutOneBodyBlockAreRejected) {
  mlir::func::FuncOp external = parse(R"mlir(
    func.func private @main(%x: tensor<2xf32>) -> tensor<2xf32>)mlir");
  ASSERT_TRUE(external);
  EXPECT_KILN_ERROR(interpret(external, std::vector{f32({2}, 1)}), Error,
                    "kiln::interpret: 'func.func @main' at model.mlir:2:5: has no body" + at());
  context.allowUnregisteredDialects();
  mlir::func::FuncOp blocks = parse(R"mlir(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      "foo.br"()[^next] : () -> ()
    ^next:
      return %x : tensor<2xf32>
    })mlir");
  ASSERT_TRUE(blocks);
  EXPECT_KILN_ERROR(interpret(blocks, std::vector{f32({2}, 1)}), Error,
                    "kiln::interpret: 'func.func @main' at model.mlir:2:5: has 2 blocks; only "
                    "single-block functions run" + at());
}

TEST_F(InterpreterTest, UndefinedAndPlaceholderArgumentsAreRejected) {
  EXPECT_KILN_ERROR(run(kExp, {Tensor()}), Error,
                    "kiln::interpret: 'func.func @main' at model.mlir:2:1: argument 0 is an "
                    "undefined tensor" + at());
  Tensor placeholder = detail::emptyTensor({4, 3}, kFloat32, kCPU, /*placeholder=*/true, SourceLoc::current());
  EXPECT_KILN_ERROR(run(kExp, {placeholder}), TraceError,
                    "kiln::interpret: 'func.func @main' at model.mlir:2:1: argument 0 is a symbolic "
                    "trace placeholder" + at());
}

TEST_F(InterpreterTest, ElidedResourcesAreNamed) {
  const std::string source = R"mlir(
    func.func @main() -> tensor<3xf32> {
      %w = kiln.constant dense_resource<__elided__> : tensor<3xf32>
      return %w : tensor<3xf32>
    })mlir";
  EXPECT_KILN_ERROR_HAS(run(source, {}), Error,
                        "kiln::interpret: 'kiln.constant' at model.mlir:3:12: dense_resource '__elided__' "
                        "has no data (elided or never loaded)");
}

}  // namespace
}  // namespace kiln::interp
