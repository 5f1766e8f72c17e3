// Executable: traced programs compiled for the CPU agree with the interpreter (the oracle).
#include "runtime/Executable.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "dialect/KilnDialect.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/core/Storage.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "runtime/interp/Interpreter.h"
#include "test/unit/runtime/RuntimeTestSupport.h"

namespace kiln::runtime {
namespace {


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
  runtime::CallbackTable callbacks;
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

// Values spread evenly over [-10, 10] in a tensor of `shape`.
Tensor sweep(Shape shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return linspace(-10.0, 10.0, n).reshape(shape);
}

// kiln-approximate-math's polynomials stay within the test's 1e-5 of the eager kernels.
// 64x256 stays serial, 64x1024 runs through kiln_rt_parallel_for.
constexpr const char* kTranscendentals = R"mlir(
func.func @main(%x: tensor<64x{N}xf32> {kiln.input = 0 : i64})
    -> (tensor<64x{N}xf32> {kiln.output = 0 : i64}, tensor<64x{N}xf32> {kiln.output = 1 : i64},
        tensor<64x{N}xf32> {kiln.output = 2 : i64}, tensor<64x{N}xf32> {kiln.output = 3 : i64},
        tensor<64x{N}xf32> {kiln.output = 4 : i64}, tensor<64x{N}xf32> {kiln.output = 5 : i64},
        tensor<64x{N}xf32> {kiln.output = 6 : i64}) {
  %e = kiln.exp %x : tensor<64x{N}xf32>
  %t = kiln.tanh %x : tensor<64x{N}xf32>
  %a = kiln.abs %x : tensor<64x{N}xf32>
  %l = kiln.log %a : tensor<64x{N}xf32>
  %g = kiln.gelu %x : tensor<64x{N}xf32>
  %s = kiln.sigmoid %x : tensor<64x{N}xf32>
  %sin = kiln.sin %x : tensor<64x{N}xf32>
  %cos = kiln.cos %x : tensor<64x{N}xf32>
  return %e, %t, %l, %g, %s, %sin, %cos : tensor<64x{N}xf32>, tensor<64x{N}xf32>, tensor<64x{N}xf32>,
      tensor<64x{N}xf32>, tensor<64x{N}xf32>, tensor<64x{N}xf32>, tensor<64x{N}xf32>
}
)mlir";

std::string withColumns(const char* source, int64_t columns) {
  std::string text = source;
  for (size_t at; (at = text.find("{N}")) != std::string::npos;) text.replace(at, 3, std::to_string(columns));
  return text;
}

TEST_F(ExecutableTest, ApproximatedMathAgreesWithTheEagerKernels) {
  expectAgrees(withColumns(kTranscendentals, 256).c_str(), {sweep({64, 256})});
}

TEST_F(ExecutableTest, ApproximatedMathAgreesInParallelKernels) {
  expectAgrees(withColumns(kTranscendentals, 1024).c_str(), {sweep({64, 1024})});
}

// bias + scale + tanh-GELU + scale: the elementwise chain of BENCHMARKS.md, one fused
// kernel split across the thread pool.
constexpr const char* kGeluChain = R"mlir(
func.func @main(%x: tensor<512x1024xf32> {kiln.input = 0 : i64},
                %b: tensor<1024xf32> {kiln.state = "bias"})
    -> (tensor<512x1024xf32> {kiln.output = 0 : i64}) {
  %bb = kiln.broadcast_in_dim %b, dims = [1], shape = [512, 1024] : tensor<1024xf32>
  %biased = kiln.add %x, %bb : tensor<512x1024xf32>
  %scale = kiln.constant dense<1.5> : tensor<512x1024xf32>
  %v = kiln.mul %biased, %scale : tensor<512x1024xf32>
  %half = kiln.constant dense<0.5> : tensor<512x1024xf32>
  %one = kiln.constant dense<1.0> : tensor<512x1024xf32>
  %k = kiln.constant dense<0.0447149985> : tensor<512x1024xf32>
  %c = kiln.constant dense<0.797884583> : tensor<512x1024xf32>
  %v2 = kiln.mul %v, %v : tensor<512x1024xf32>
  %v3 = kiln.mul %v2, %v : tensor<512x1024xf32>
  %kv3 = kiln.mul %v3, %k : tensor<512x1024xf32>
  %inner = kiln.add %v, %kv3 : tensor<512x1024xf32>
  %scaled = kiln.mul %inner, %c : tensor<512x1024xf32>
  %th = kiln.tanh %scaled : tensor<512x1024xf32>
  %th1 = kiln.add %th, %one : tensor<512x1024xf32>
  %hv = kiln.mul %v, %half : tensor<512x1024xf32>
  %gelu = kiln.mul %hv, %th1 : tensor<512x1024xf32>
  %out = kiln.mul %gelu, %scale : tensor<512x1024xf32>
  return %out : tensor<512x1024xf32>
}
)mlir";

TEST_F(ExecutableTest, LargeFusedChainsRunInParallelAndAgree) {
  manual_seed(5);
  expectAgrees(kGeluChain, {sweep({512, 1024}), randn({1024})});
}

// Rows reduced in parallel: each row's sum stays in one chunk, in order.
TEST_F(ExecutableTest, LargeRowReductionsAgreeWithTheInterpreter) {
  manual_seed(6);
  expectAgrees(R"mlir(
func.func @main(%x: tensor<512x1024xf32> {kiln.input = 0 : i64})
    -> (tensor<512x1024xf32> {kiln.output = 0 : i64}, tensor<512xf32> {kiln.output = 1 : i64}) {
  %m = kiln.reduce max %x, dims = [1] : tensor<512x1024xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0], shape = [512, 1024] : tensor<512xf32>
  %s = kiln.sub %x, %mb : tensor<512x1024xf32>
  %e = kiln.exp %s : tensor<512x1024xf32>
  %t = kiln.reduce sum %e, dims = [1] : tensor<512x1024xf32>
  %tb = kiln.broadcast_in_dim %t, dims = [0], shape = [512, 1024] : tensor<512xf32>
  %r = kiln.div %e, %tb : tensor<512x1024xf32>
  %mean = kiln.reduce mean %x, dims = [1] : tensor<512x1024xf32>
  return %r, %mean : tensor<512x1024xf32>, tensor<512xf32>
}
)mlir", {randn({512, 1024}) * 4.0});
}

// A one-dimensional tensor splits too, and a column reduction keeps its rows in order.
TEST_F(ExecutableTest, FlatTensorsAndColumnReductionsAgree) {
  manual_seed(7);
  expectAgrees(R"mlir(
func.func @main(%x: tensor<262144xf32> {kiln.input = 0 : i64}, %y: tensor<256x1024xf32> {kiln.input = 1 : i64})
    -> (tensor<262144xf32> {kiln.output = 0 : i64}, tensor<1024xf32> {kiln.output = 1 : i64}) {
  %e = kiln.exp %x : tensor<262144xf32>
  %t = kiln.tanh %e : tensor<262144xf32>
  %c = kiln.reduce sum %y, dims = [0] : tensor<256x1024xf32>
  return %t, %c : tensor<262144xf32>, tensor<1024xf32>
}
)mlir", {randn({262144}), randn({256, 1024})});
}

// A library op whose result is the program's result is computed straight into the
// caller's buffer: no storage beyond the result is allocated during the call.
TEST_F(ExecutableTest, LibraryOpsComputeIntoTheirResultBuffers) {
  auto executable = Executable::compile(parse(R"mlir(
func.func @main(%x: tensor<128x256xf32> {kiln.input = 0 : i64},
                %w: tensor<256x512xf32> {kiln.state = "fc.weight"})
    -> (tensor<128x512xf32> {kiln.output = 0 : i64}) {
  %mm = kiln.matmul %x, %w : tensor<128x256xf32>, tensor<256x512xf32>
  return %mm : tensor<128x512xf32>
}
)mlir"), nullptr, "test", SourceLoc::current());
  manual_seed(8);
  std::vector<Tensor> arguments{randn({128, 256}), randn({256, 512})};
  Tensor want = matmul(arguments[0], arguments[1]);
  executable->run(arguments);  // warms oneDNN's caches
  const size_t before = Storage::allocatedBytes();
  Storage::resetPeakAllocatedBytes();
  Tensor got = executable->run(arguments)[0];
  EXPECT_LE(Storage::peakAllocatedBytes() - before, size_t(128 * 512 * 4));
  EXPECT_TRUE(allclose(got, want, 1e-5, 1e-6));
}

// A transpose only a library op reads is a strided view of its operand: no arena bytes
// and no copy, and the matmul still agrees with the interpreter (also for a transposed
// value computed in the program).
TEST_F(ExecutableTest, TransposesReadByLibraryOpsAreViews) {
  const char* source = R"mlir(
func.func @main(%x: tensor<16x32xf32> {kiln.input = 0 : i64},
                %w: tensor<8x32xf32> {kiln.state = "fc.weight"})
    -> (tensor<16x8xf32> {kiln.output = 0 : i64}, tensor<8x8xf32> {kiln.output = 1 : i64}) {
  %wt = kiln.transpose %w, permutation = [1, 0] : tensor<8x32xf32>
  %y = kiln.matmul %x, %wt : tensor<16x32xf32>, tensor<32x8xf32>
  %yt = kiln.transpose %y, permutation = [1, 0] : tensor<16x8xf32>
  %g = kiln.matmul %yt, %y : tensor<8x16xf32>, tensor<16x8xf32>
  return %y, %g : tensor<16x8xf32>, tensor<8x8xf32>
}
)mlir";
  manual_seed(9);
  expectAgrees(source, {randn({16, 32}), randn({8, 32})});
  auto executable = Executable::compile(parse(source), nullptr, "test", SourceLoc::current());
  EXPECT_EQ(executable->arenaBytes(), 0);
}

}  // namespace
}  // namespace kiln::runtime
