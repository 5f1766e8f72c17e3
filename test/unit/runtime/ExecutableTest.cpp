// Executable: traced programs compiled for the CPU agree with the interpreter (the oracle).
#include "runtime/Executable.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "dialect/KilnDialect.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "runtime/interp/Interpreter.h"

namespace kiln::runtime {
namespace {

// Whether a and b have the same shape and |a - b| <= atol + rtol |b| everywhere (NaNs
// match NaNs); rtol = atol = 0 asks for equality.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 0, double atol = 0) {
  if (a.sizes() != b.sizes()) return false;
  Tensor x = a.to(kFloat64).contiguous(), y = b.to(kFloat64).contiguous();
  const double* p = x.data_ptr<double>();
  const double* q = y.data_ptr<double>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (std::isnan(p[i]) && std::isnan(q[i])) continue;
    if (!(std::abs(p[i] - q[i]) <= atol + rtol * std::abs(q[i]))) return false;
  }
  return true;
}
bool equal(const Tensor& a, const Tensor& b) { return allclose(a, b); }

class ExecutableTest : public ::testing::Test {
 protected:
  ExecutableTest() { context.loadDialect<mlir::kiln::KilnDialect, mlir::func::FuncDialect>(); }

  mlir::func::FuncOp parse(const char* source) {
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    return *module->getOps<mlir::func::FuncOp>().begin();
  }

  // Runs `source` compiled and interpreted on `arguments`; results must agree to 1e-5.
  std::vector<Tensor> expectAgrees(const char* source, const std::vector<Tensor>& arguments) {
    mlir::func::FuncOp main = parse(source);
    auto executable = Executable::compile(main, &callbacks, "test", SourceLoc::current());
    std::vector<Tensor> copies;
    for (const Tensor& a : arguments) copies.push_back(a.clone());
    std::vector<Tensor> expected = interp::interpret(main, arguments, &callbacks);
    std::vector<Tensor> compiled = executable->run(copies);
    EXPECT_EQ(compiled.size(), expected.size());
    for (size_t k = 0; k < expected.size() && k < compiled.size(); ++k) {
      EXPECT_EQ(compiled[k].sizes(), expected[k].sizes()) << "result " << k;
      EXPECT_TRUE(allclose(compiled[k], expected[k], 1e-5, 1e-6)) << "result " << k << "\ncompiled "
                                                                  << compiled[k] << "\nexpected "
                                                                  << expected[k];
    }
    return compiled;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  interp::CallbackTable callbacks;
};

constexpr const char* kLinearRelu = R"mlir(
func.func @main(%x: tensor<8x4xf32> {kiln.input = 0 : i64},
                %w: tensor<4x3xf32> {kiln.state = "fc.weight"},
                %b: tensor<3xf32> {kiln.state = "fc.bias"})
    -> (tensor<8x3xf32> {kiln.output = 0 : i64}, tensor<24xf32> {kiln.output = 1 : i64}) {
  %mm = kiln.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1], shape = [8, 3] : tensor<3xf32>
  %add = kiln.add %mm, %bb : tensor<8x3xf32>
  %relu = kiln.relu %add : tensor<8x3xf32>
  %flat = kiln.reshape %relu, shape = [24] : tensor<8x3xf32>
  return %relu, %flat : tensor<8x3xf32>, tensor<24xf32>
}
)mlir";

TEST_F(ExecutableTest, LinearReluAgreesWithTheInterpreter) {
  manual_seed(1);
  expectAgrees(kLinearRelu, {randn({8, 4}), randn({4, 3}), randn({3})});
}

TEST_F(ExecutableTest, CallsFromSeveralThreadsAreSafe) {
  auto executable = Executable::compile(parse(kLinearRelu), nullptr, "test", SourceLoc::current());
  manual_seed(2);
  std::vector<Tensor> a{randn({8, 4}), randn({4, 3}), randn({3})};
  std::vector<Tensor> b{randn({8, 4}), randn({4, 3}), randn({3})};
  Tensor wantA = executable->run(a)[0], wantB = executable->run(b)[0];
  auto hammer = [&](const std::vector<Tensor>& args, const Tensor& want, bool* ok) {
    for (int i = 0; i < 200; ++i) *ok = *ok && equal(executable->run(args)[0], want);
  };
  bool okA = true, okB = true;
  std::thread t1(hammer, std::cref(a), std::cref(wantA), &okA);
  std::thread t2(hammer, std::cref(b), std::cref(wantB), &okB);
  t1.join();
  t2.join();
  EXPECT_TRUE(okA);
  EXPECT_TRUE(okB);
}

TEST_F(ExecutableTest, StateUpdatesAreWrittenInPlace) {
  constexpr const char* kSgd = R"mlir(
func.func @main(%g: tensor<16xf32> {kiln.input = 0 : i64},
                %w: tensor<16xf32> {kiln.state = "w"})
    -> (tensor<16xf32> {kiln.state_update = "w"}) {
  %lr = kiln.constant dense<0.5> : tensor<16xf32>
  %step = kiln.mul %g, %lr : tensor<16xf32>
  %new = kiln.sub %w, %step : tensor<16xf32>
  return %new : tensor<16xf32>
}
)mlir";
  auto executable = Executable::compile(parse(kSgd), nullptr, "test", SourceLoc::current());
  Tensor g = ones({16}), w = full({16}, 3.0);
  std::vector<Tensor> results = executable->run(std::vector<Tensor>{g, w});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].rawData(), w.rawData()) << "the update should be the state itself";
  EXPECT_TRUE(equal(w, full({16}, 2.5)));
}

TEST_F(ExecutableTest, HostOpsConstantsAndCallbacksRunThroughTheRuntime) {
  callbacks.add([](std::span<const Tensor> in) { return std::vector<Tensor>{in[0] * 2.0}; });
  manual_seed(3);
  expectAgrees(R"mlir(
func.func @main(%x: tensor<2x3xf32> {kiln.input = 0 : i64})
    -> (tensor<3x4xf32> {kiln.output = 0 : i64}) {
  %c = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %s = kiln.add %x, %c : tensor<2x3xf32>
  %cb = kiln.callback(%s) callee = 0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = kiln.transpose %cb, permutation = [1, 0] : tensor<2x3xf32>
  %cat = kiln.concat(%t, %t) dim = 1 : tensor<3x2xf32>, tensor<3x2xf32>
  %e = kiln.exp %cat : tensor<3x4xf32>
  return %e : tensor<3x4xf32>
}
)mlir", {randn({2, 3})});
}

TEST_F(ExecutableTest, ReductionsAgreeWithTheInterpreter) {
  manual_seed(4);
  expectAgrees(R"mlir(
func.func @main(%x: tensor<4x8xf32> {kiln.input = 0 : i64}) -> (tensor<4x8xf32> {kiln.output = 0 : i64}) {
  %m = kiln.reduce max %x, dims = [1] : tensor<4x8xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0], shape = [4, 8] : tensor<4xf32>
  %s = kiln.sub %x, %mb : tensor<4x8xf32>
  %e = kiln.exp %s : tensor<4x8xf32>
  %t = kiln.reduce sum %e, dims = [1] : tensor<4x8xf32>
  %tb = kiln.broadcast_in_dim %t, dims = [0], shape = [4, 8] : tensor<4xf32>
  %r = kiln.div %e, %tb : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
)mlir", {randn({4, 8})});
}

TEST_F(ExecutableTest, WrongArgumentsAreErrors) {
  auto executable = Executable::compile(parse(kLinearRelu), nullptr, "test", SourceLoc::current());
  EXPECT_THROW(executable->run(std::vector<Tensor>{randn({8, 4})}), Error);
  try {
    executable->run(std::vector<Tensor>{randn({8, 5}), randn({4, 3}), randn({3})});
    FAIL() << "a wrong shape ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("argument 0"), std::string::npos) << e.what();
  }
}

TEST_F(ExecutableTest, AFailingHostOpIsRethrown) {
  callbacks.add([](std::span<const Tensor>) -> std::vector<Tensor> { throw Error("user", "boom", SourceLoc::current()); });
  auto executable = Executable::compile(parse(R"mlir(
func.func @main(%x: tensor<2xf32> {kiln.input = 0 : i64}) -> (tensor<2xf32> {kiln.output = 0 : i64}) {
  %cb = kiln.callback(%x) callee = 0 : (tensor<2xf32>) -> tensor<2xf32>
  %e = kiln.exp %cb : tensor<2xf32>
  return %e : tensor<2xf32>
}
)mlir"), &callbacks, "test", SourceLoc::current());
  EXPECT_THROW(executable->run(std::vector<Tensor>{ones({2})}), Error);
}

}  // namespace
}  // namespace kiln::runtime
