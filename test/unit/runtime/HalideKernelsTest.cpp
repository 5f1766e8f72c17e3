// HALIDE's kernel generator on its own: fused kernels compiled by Halide and run on raw
// buffers give the eager kernels' values (NaN rules included), and what it does not
// translate it declines with a reason, so that MLIR compiles it instead.
#include "runtime/halide/HalideKernels.h"

#include <gtest/gtest.h>

#include <Halide.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "dialect/KilnDialect.h"
#include "kiln/core/Cuda.h"
#include "kiln/core/Error.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/core/Tensor.h"
#include "kiln/core/ThreadPool.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "runtime/CompileThreads.h"
#include "runtime/JitEngine.h"

namespace kiln::runtime::halide {
namespace {

class HalideKernelsTest : public ::testing::Test {
 protected:
  HalideKernelsTest() { context.loadDialect<mlir::kiln::KilnDialect, mlir::func::FuncDialect>(); }

  mlir::func::FuncOp parse(const char* source) {
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    return *module->getOps<mlir::func::FuncOp>().begin();
  }

  // `kernel` compiled under KILN_HALIDE_SCHEDULE=schedule and run on `input`: its one
  // result (`count` floats, -1 where it did not compile) and how it describes itself.
  std::pair<std::vector<float>, std::string> runScheduled(const char* schedule, mlir::func::FuncOp kernel,
                                                          std::vector<float>& input, size_t count) {
    setenv("KILN_HALIDE_SCHEDULE", schedule, 1);
    std::string why;
    auto compiled = halideKernels().compile(kernel, false, cache, why);
    unsetenv("KILN_HALIDE_SCHEDULE");
    EXPECT_TRUE(compiled) << schedule << ": " << why;
    std::vector<float> out(count, -1);
    if (!compiled) return {out, ""};
    void* operands[] = {input.data()};
    void* results[] = {out.data()};
    compiled->run(operands, results);
    return {out, compiled->describe()};
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  // Kernels go through the disk cache, as HALIDE compiles them by default: compiled to
  // objects and linked beside Halide's standalone runtime.
  DiskCache cache{std::string(::testing::TempDir()) + "/halide-kernels"};
};

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// tanh(a + b), b broadcast along rows: the elementwise kernel of the CUDA cases.
constexpr const char* kBiasTanh = R"mlir(
    func.func private @ew(%a: tensor<64x70xf32>, %b: tensor<70xf32>) -> tensor<64x70xf32> attributes {kiln.kernel = "fusion"} {
      %bb = kiln.broadcast_in_dim %b, dims = [1], shape = [64, 70] : tensor<70xf32>
      %s = kiln.add %a, %bb : tensor<64x70xf32>
      %t = kiln.tanh %s : tensor<64x70xf32>
      return %t : tensor<64x70xf32>
    })mlir";

// Softmax over the rows of a [rows, cols] float32 tensor, as kiln-fuse makes it one kernel.
std::string softmaxSource(int rows, int cols) {
  const std::string t = "tensor<" + std::to_string(rows) + "x" + std::to_string(cols) + "xf32>";
  const std::string r = "tensor<" + std::to_string(rows) + "x1xf32>";
  const std::string shape = "shape = [" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
  return "func.func private @softmax(%x: " + t + ") -> " + t + " attributes {kiln.kernel = \"fusion\"} {\n" +
         "  %m = kiln.reduce max %x, dims = [1] keep_dims : " + t + "\n" +
         "  %mb = kiln.broadcast_in_dim %m, dims = [0, 1], " + shape + " : " + r + "\n" +
         "  %d = kiln.sub %x, %mb : " + t + "\n" +
         "  %e = kiln.exp %d : " + t + "\n" +
         "  %s = kiln.reduce sum %e, dims = [1] keep_dims : " + t + "\n" +
         "  %sb = kiln.broadcast_in_dim %s, dims = [0, 1], " + shape + " : " + r + "\n" +
         "  %y = kiln.div %e, %sb : " + t + "\n" +
         "  return %y : " + t + "\n}";
}

TEST_F(HalideKernelsTest, ElementwiseKernelsFollowTheEagerNaNRules) {
  auto kernel = parse(R"mlir(
    func.func private @k(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
        attributes {kiln.kernel = "fusion"} {
      %m = kiln.max %a, %b : tensor<2x3xf32>
      %e = kiln.compare eq, %a, %a : tensor<2x3xf32>
      return %m, %e : tensor<2x3xf32>, tensor<2x3xi1>
    })mlir");
  std::string why;
  auto compiled = halideKernels().compile(kernel, /*inPlace=*/false, cache, why);
  ASSERT_TRUE(compiled) << why;
  std::vector<float> a = {1, kNaN, 3, -0.0f, 5, 2}, b = {2, 1, kNaN, 0.0f, 4, 2}, max(6);
  std::vector<uint8_t> eq(6, 7);
  void* operands[] = {a.data(), b.data()};
  void* results[] = {max.data(), eq.data()};
  compiled->run(operands, results);
  EXPECT_EQ(max[0], 2.0f);
  EXPECT_TRUE(std::isnan(max[1]));  // a NaN operand is the result
  EXPECT_TRUE(std::isnan(max[2]));
  EXPECT_EQ(max[4], 5.0f);
  EXPECT_EQ(eq, (std::vector<uint8_t>{1, 0, 1, 1, 1, 1}));  // NaN == NaN is false
}

// Rows of 128 floats or more are computed eight AVX-512 vectors (128 lanes) at a time,
// with a guarded tail: each lane, in the wide part and in the tail, gives the eager
// kernels' values, IEEE special values (inf, -inf, NaN, -0) included.
TEST_F(HalideKernelsTest, WideVectorsAndTheirTailKeepIeeeValues) {
  auto kernel = parse(R"mlir(
    func.func private @k(%a: tensor<2x133xf32>) -> (tensor<2x133xf32>, tensor<2x133xf32>, tensor<2x133xf32>, tensor<2x133xf32>)
        attributes {kiln.kernel = "fusion"} {
      %e = kiln.exp %a : tensor<2x133xf32>
      %t = kiln.tanh %a : tensor<2x133xf32>
      %s = kiln.sigmoid %a : tensor<2x133xf32>
      %r = kiln.sqrt %a : tensor<2x133xf32>
      return %e, %t, %s, %r : tensor<2x133xf32>, tensor<2x133xf32>, tensor<2x133xf32>, tensor<2x133xf32>
    })mlir");
  std::string why;
  auto compiled = halideKernels().compile(kernel, false, cache, why);
  ASSERT_TRUE(compiled) << why;
  EXPECT_NE(compiled->lowered().find("float32x128"), std::string::npos) << compiled->lowered();
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float special[] = {kInf, -kInf, kNaN, -0.0f, 0.0f, 1e-40f, -100.0f, 100.0f, -3.5f};
  const int n = 2 * 133;
  std::vector<float> a(n), e(n), t(n), s(n), r(n);
  for (int i = 0; i < n; ++i) a[size_t(i)] = float(i % 37) * 0.37f - 6.0f;
  for (int at : {0, 60, 124, 128}) {  // in the wide vectors and in the tail (128..132) of each row
    for (size_t k = 0; k < std::size(special); ++k) a[size_t(at + 133 * int(k % 2)) + k / 2] = special[k];
  }
  void* operands[] = {a.data()};
  void* results[] = {e.data(), t.data(), s.data(), r.data()};
  compiled->run(operands, results);
  // The float32 formulas of the eager kernels, with libm's exp and tanh: within a few ulp
  // (a few of the smallest subnormal apart below FLT_MIN), exact where 0, inf or NaN.
  auto same = [](float got, float want) {
    if (std::isnan(want)) return std::isnan(got);
    if (want == 0 || std::isinf(want)) return got == want && std::signbit(got) == std::signbit(want);
    return std::abs(got - want) <= 4e-7f * std::abs(want) + 8 * std::numeric_limits<float>::denorm_min();
  };
  for (int i = 0; i < n; ++i) {
    const float x = a[size_t(i)];
    EXPECT_PRED2(same, e[size_t(i)], std::exp(x)) << "exp at " << i << " of " << x;
    EXPECT_PRED2(same, t[size_t(i)], std::tanh(x)) << "tanh at " << i << " of " << x;
    EXPECT_PRED2(same, s[size_t(i)], 1.0f / (1.0f + std::exp(-x))) << "sigmoid at " << i << " of " << x;
    EXPECT_PRED2(same, r[size_t(i)], std::sqrt(x)) << "sqrt at " << i << " of " << x;
  }
}

// Softmax's exp is read by the row sum and by the output: computed once per row beside the
// row's reductions ("row-operand"), with the values of an autoscheduled pipeline and the
// IEEE rules of softmax: an inf in a row makes it NaN, as a NaN does; -inf gives 0.
TEST_F(HalideKernelsTest, SoftmaxComputesItsExpOncePerRow) {
  auto kernel = parse(softmaxSource(3, 133).c_str());
  std::vector<float> a(3 * 133);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 23) / 4.0f - 3.0f;
  a[5] = -std::numeric_limits<float>::infinity();
  a[130] = -0.0f;                                       // row 0's tail
  a[133 + 131] = std::numeric_limits<float>::infinity();  // row 1's tail
  a[2 * 133 + 7] = kNaN;
  const auto [hand, described] = runScheduled("hand", kernel, a, a.size());
  EXPECT_NE(described.find("row-operand"), std::string::npos) << described;
  const std::vector<float> automatic = runScheduled("Mullapudi2016", kernel, a, a.size()).first;
  ASSERT_EQ(hand.size(), automatic.size());
  for (size_t i = 0; i < hand.size(); ++i)
    EXPECT_TRUE(hand[i] == automatic[i] || (std::isnan(hand[i]) && std::isnan(automatic[i]))) << i;
  double sum = 0, max = 0;
  for (size_t i = 0; i < 133; ++i) max = std::max(max, double(a[i]));
  for (size_t i = 0; i < 133; ++i) sum += std::exp(double(a[i]) - max);
  for (size_t i = 0; i < 133; ++i)
    EXPECT_NEAR(hand[i], std::exp(double(a[i]) - max) / sum, 1e-7) << i;
  EXPECT_EQ(hand[5], 0.0f);
  for (size_t i = 133; i < hand.size(); ++i) EXPECT_TRUE(std::isnan(hand[i])) << i;
}

// KILN_DUMP_IR writes what lowered() gives: Halide's loop nest of the kernel.
TEST_F(HalideKernelsTest, LoweredIsHalidesStatement) {
  auto kernel = parse(R"mlir(
    func.func private @dumped(%a: tensor<64x64xf32>) -> tensor<64x64xf32> attributes {kiln.kernel = "fusion"} {
      %e = kiln.exp %a : tensor<64x64xf32>
      return %e : tensor<64x64xf32>
    })mlir");
  std::string why;
  auto compiled = halideKernels().compile(kernel, false, cache, why);
  ASSERT_TRUE(compiled) << why;
  const std::string stmt = compiled->lowered();
  EXPECT_NE(stmt.find("kiln_halide_dumped"), std::string::npos) << stmt;
  EXPECT_NE(stmt.find("for ("), std::string::npos) << stmt;
  EXPECT_NE(compiled->describe().find("@dumped"), std::string::npos);
}

// A float32 row sum adds float32 pairs (element 32k + l with 32k + 16 + l) before the
// double accumulator, as the eager kernels: 1e8 + 1 + (-1e8) pairs to 0 + 0 in float32.
TEST_F(HalideKernelsTest, Float32SumsPairAsTheEagerKernels) {
  auto kernel = parse(R"mlir(
    func.func private @k(%a: tensor<40xf32>) -> tensor<f32> attributes {kiln.kernel = "fusion"} {
      %s = kiln.reduce sum %a, dims = [0] : tensor<40xf32>
      return %s : tensor<f32>
    })mlir");
  std::string why;
  auto compiled = halideKernels().compile(kernel, false, cache, why);
  ASSERT_TRUE(compiled) << why;
  std::vector<float> a(40, 0.0f);
  a[0] = 1e8f;   // pairs with a[16]
  a[16] = 1.0f;  // 1e8 + 1 rounds to 1e8 in float32
  a[1] = -1e8f;  // pairs with a[17] = 0
  a[36] = 0.5f;  // partner 52 is past the end: added alone
  float sum = -1;
  void* operands[] = {a.data()};
  void* results[] = {&sum};
  compiled->run(operands, results);
  EXPECT_EQ(sum, 0.5f);  // in index order, in double, it would be 1.5
}

TEST_F(HalideKernelsTest, WhatItDoesNotTranslateItDeclinesWithAReason) {
  auto gelu64 = parse(R"mlir(
    func.func private @k(%a: tensor<4xf64>) -> tensor<4xf64> attributes {kiln.kernel = "fusion"} {
      %g = kiln.gelu %a : tensor<4xf64>
      return %g : tensor<4xf64>
    })mlir");
  std::string why;
  EXPECT_FALSE(halideKernels().compile(gelu64, false, cache, why));
  EXPECT_EQ(why, "kiln.gelu on other than f32 math");

  // Several results with one written over an operand: Halide takes buffers not to alias,
  // so it may read the operand again after storing a result over it (here a second loop
  // nest; OnlyAKernelOfOneResultIsWrittenOverItsOperand below for one shape).
  auto twoShapes = parse(R"mlir(
    func.func private @k(%a: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4xf32>)
        attributes {kiln.kernel = "fusion"} {
      %n = kiln.neg %a : tensor<4x3xf32>
      %s = kiln.reduce sum %a, dims = [1] : tensor<4x3xf32>
      return %n, %s : tensor<4x3xf32>, tensor<4xf32>
    })mlir");
  EXPECT_TRUE(halideKernels().compile(twoShapes, /*inPlace=*/false, cache, why));
  EXPECT_FALSE(halideKernels().compile(twoShapes, /*inPlace=*/true, cache, why));
  EXPECT_EQ(why, "several results with one written over an operand (Halide takes buffers not to alias)");
}

// Executable::takeKernels and the GPU host schedule compile a program's kernels on several
// threads at once. Two kernels asked for by 12 tasks on 6 threads: each compiled once (the
// tasks that ask while another compiles it wait for that compile), every task gets the
// same kernel, and both give their values; a kernel it declines is declined with its
// reason for every task.
TEST_F(HalideKernelsTest, KernelsAskedForFromSeveralThreadsCompileOnceEach) {
  module = mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
    func.func private @scale(%a: tensor<40x33xf32>) -> tensor<40x33xf32> attributes {kiln.kernel = "fusion"} {
      %c = kiln.constant dense<0.3125> : tensor<40x33xf32>
      %m = kiln.mul %a, %c : tensor<40x33xf32>
      return %m : tensor<40x33xf32>
    }
    func.func private @expneg(%a: tensor<40x33xf32>) -> tensor<40x33xf32> attributes {kiln.kernel = "fusion"} {
      %n = kiln.neg %a : tensor<40x33xf32>
      %e = kiln.exp %n : tensor<40x33xf32>
      return %e : tensor<40x33xf32>
    }
    func.func private @gelu64(%a: tensor<4xf64>) -> tensor<4xf64> attributes {kiln.kernel = "fusion"} {
      %g = kiln.gelu %a : tensor<4xf64>
      return %g : tensor<4xf64>
    })mlir", &context);
  ASSERT_TRUE(module);
  std::vector<mlir::func::FuncOp> kernels(module->getOps<mlir::func::FuncOp>().begin(),
                                          module->getOps<mlir::func::FuncOp>().end());
  ASSERT_EQ(kernels.size(), 3u);
  DiskCache off("");
  const HalideCounts before = halideCounts();
  constexpr size_t kTasks = 12;
  std::vector<std::shared_ptr<const ExternalKernel>> compiled(kTasks);
  std::vector<std::string> why(kTasks);
  forEachOnThreads(kTasks, 6, [&](size_t i) {
    compiled[i] = halideKernels().compile(kernels[i % 3], false, off, why[i]);
  });
  EXPECT_EQ(halideCounts().compiled, before.compiled + 2);
  for (size_t i = 0; i < kTasks; ++i) {
    if (i % 3 == 2) {
      EXPECT_FALSE(compiled[i]) << "task " << i;
      EXPECT_EQ(why[i], "kiln.gelu on other than f32 math") << "task " << i;
      continue;
    }
    ASSERT_TRUE(compiled[i]) << "task " << i << ": " << why[i];
    EXPECT_EQ(compiled[i], compiled[i % 3]) << "task " << i;
  }
  std::vector<float> a(40 * 33), scaled(a.size()), expneg(a.size());
  for (size_t k = 0; k < a.size(); ++k) a[k] = float(int(k % 37) - 18) / 8.0f;
  void* operands[] = {a.data()};
  void* scaledOut[] = {scaled.data()};
  void* expnegOut[] = {expneg.data()};
  compiled[0]->run(operands, scaledOut);
  compiled[1]->run(operands, expnegOut);
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(scaled[k], a[k] * 0.3125f) << k;
    EXPECT_NEAR(expneg[k], std::exp(-a[k]), 2e-7 * std::exp(-a[k])) << k;
  }
}

// KILN_HALIDE_SCHEDULE puts one of Halide's autoschedulers in place of the hand schedule
// (to measure one against the other); the values are the same, and a name Halide does not
// have is declined with the list.
TEST_F(HalideKernelsTest, AnAutoschedulerGivesTheSameValues) {
  auto kernel = parse(R"mlir(
    func.func private @k(%a: tensor<8x40xf32>) -> tensor<8x1xf32> attributes {kiln.kernel = "fusion"} {
      %e = kiln.exp %a : tensor<8x40xf32>
      %s = kiln.reduce sum %e, dims = [1] keep_dims : tensor<8x40xf32>
      return %s : tensor<8x1xf32>
    })mlir");
  std::vector<float> a(320);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 17) / 8.0f - 1.0f;
  const auto [hand, described] = runScheduled("hand", kernel, a, 8);
  EXPECT_NE(described.find("vector-lanes"), std::string::npos) << described;
  const auto [automatic, describedAuto] = runScheduled("Mullapudi2016", kernel, a, 8);
  EXPECT_NE(describedAuto.find("Mullapudi2016"), std::string::npos) << describedAuto;
  EXPECT_EQ(automatic, hand);

  setenv("KILN_HALIDE_SCHEDULE", "Fastest", 1);
  std::string why;
  EXPECT_FALSE(halideKernels().compile(kernel, false, cache, why));
  unsetenv("KILN_HALIDE_SCHEDULE");
  EXPECT_EQ(why, "KILN_HALIDE_SCHEDULE must be hand, Mullapudi2016, Adams2019 or Li2018, not "
                 "'Fastest'");
}

// An autoscheduler's schedule depends on the thread count it is told, so a kernel cached
// under one count is not reused under another (in memory or on disk).
TEST_F(HalideKernelsTest, AutoscheduledKernelsAreCachedPerThreadCount) {
  auto kernel = parse(R"mlir(
    func.func private @k(%a: tensor<8x24xf32>) -> tensor<8x24xf32> attributes {kiln.kernel = "fusion"} {
      %e = kiln.exp %a : tensor<8x24xf32>
      return %e : tensor<8x24xf32>
    })mlir");
  const int threads = kiln::get_num_threads();
  setenv("KILN_HALIDE_SCHEDULE", "Mullapudi2016", 1);
  std::string why;
  kiln::set_num_threads(1);
  EXPECT_TRUE(halideKernels().compile(kernel, false, cache, why)) << why;
  const int64_t compiled = halideCounts().compiled + halideCounts().loaded;
  EXPECT_TRUE(halideKernels().compile(kernel, false, cache, why)) << why;
  EXPECT_EQ(halideCounts().compiled + halideCounts().loaded, compiled) << "the same count: cached";
  kiln::set_num_threads(2);
  EXPECT_TRUE(halideKernels().compile(kernel, false, cache, why)) << why;
  EXPECT_EQ(halideCounts().compiled + halideCounts().loaded, compiled + 1) << "another count: not";
  kiln::set_num_threads(threads);
  unsetenv("KILN_HALIDE_SCHEDULE");
}

// A kernel of several results with one written over an operand is declined: Halide takes
// buffers not to alias, and its vector tail reads an operand again after storing a result
// over it (kiln-fuzz seed 800031), so MLIR compiles it. One result written over its operand
// is taken, and each element is stored after its loads: at 16 lanes (37 elements), at eight
// vectors with a tail (133) and at 1020 (seven steps of 128 and a tail of 124).
TEST_F(HalideKernelsTest, OnlyAKernelOfOneResultIsWrittenOverItsOperand) {
  for (int n : {37, 133, 1020}) {
    auto sized = [&](std::string source) {
      for (size_t at = source.find("<N"); at != std::string::npos; at = source.find("<N"))
        source.replace(at + 1, 1, std::to_string(n));
      return parse(source.c_str());
    };
    auto two = sized(R"mlir(
      func.func private @k(%s: tensor<Nxf32>, %x: tensor<Nxf32>) -> (tensor<Nxf32>, tensor<Nxf32>)
          attributes {kiln.kernel = "fusion"} {
        %u = kiln.add %s, %x : tensor<Nxf32>
        %c = kiln.constant dense<2.0> : tensor<Nxf32>
        %o = kiln.mul %u, %c : tensor<Nxf32>
        return %o, %u : tensor<Nxf32>, tensor<Nxf32>
      })mlir");
    std::string why;
    EXPECT_FALSE(halideKernels().compile(two, /*inPlace=*/true, cache, why)) << n;
    EXPECT_EQ(why, "several results with one written over an operand (Halide takes buffers not to alias)");
    auto one = sized(R"mlir(
      func.func private @k(%s: tensor<Nxf32>, %x: tensor<Nxf32>) -> tensor<Nxf32>
          attributes {kiln.kernel = "fusion"} {
        %u = kiln.add %s, %x : tensor<Nxf32>
        %t = kiln.tanh %u : tensor<Nxf32>
        return %t : tensor<Nxf32>
      })mlir");
    auto compiled = halideKernels().compile(one, /*inPlace=*/true, cache, why);
    ASSERT_TRUE(compiled) << why;
    std::vector<float> s(static_cast<size_t>(n)), x(static_cast<size_t>(n), 0.25f), want(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) s[size_t(i)] = float(i % 7) * 0.125f;
    for (int i = 0; i < n; ++i) want[size_t(i)] = std::tanh(s[size_t(i)] + 0.25f);
    void* operands[] = {s.data(), x.data()};
    void* results[] = {s.data()};  // written over operand 0
    compiled->run(operands, results);
    for (int i = 0; i < n; ++i) EXPECT_NEAR(s[size_t(i)], want[size_t(i)], 1e-6) << n << ": " << i;
  }
}

// HALIDE on CUDA: the same Funcs scheduled for the GPU and compiled ahead of time to PTX
// without a device (test/gpu:HalideCudaAssembleTest assembles every e2e graph's kernels).
TEST_F(HalideKernelsTest, CudaScheduleGivesPtxWithoutAGpu) {
  auto kernel = parse(kBiasTanh);
  std::string why;
  auto compiled = compileForCuda(kernel, /*inPlace=*/false, why);
  ASSERT_TRUE(compiled) << why;
  EXPECT_EQ(compiled->name, "kiln_halide_ew");
  EXPECT_EQ(compiled->schedule, "cuda-elementwise ");
  EXPECT_NE(compiled->ptx.find(".target sm_80"), std::string::npos) << compiled->ptx;
  ASSERT_EQ(compiled->entries.size(), 1u) << compiled->ptx;
  EXPECT_NE(compiled->ptx.find("%ctaid.x"), std::string::npos);
  EXPECT_NE(compiled->ptx.find("%tid.x"), std::string::npos);
  EXPECT_EQ(compiled->ptx.find('\0'), std::string::npos);
}

TEST_F(HalideKernelsTest, CudaSoftmaxIsOneBlockPerRow) {
  auto kernel = parse(softmaxSource(8, 100).c_str());
  std::string why;
  auto compiled = compileForCuda(kernel, false, why);
  ASSERT_TRUE(compiled) << why;
  EXPECT_NE(compiled->schedule.find("cuda-row-blocks"), std::string::npos) << compiled->schedule;
  EXPECT_NE(compiled->schedule.find("cuda-row-reduction"), std::string::npos) << compiled->schedule;
  EXPECT_EQ(compiled->schedule.find("cuda-root-reduction"), std::string::npos) << compiled->schedule;
  // Each row of 100 is split among the block's threads for the three accumulators: max's
  // value and NaN count (32 wide) and the sum's pairs (16 lanes x 16 blocks of 32).
  EXPECT_EQ(compiled->schedule,
            "cuda-row-blocks cuda-row-reduction-threads cuda-row-reduction-threads cuda-row-reduction-threads ");
  EXPECT_EQ(compiled->entries.size(), 1u) << compiled->ptx;
  // The row's statistics live in shared memory between the block's threads.
  EXPECT_NE(compiled->ptx.find(".shared"), std::string::npos) << compiled->ptx;
  EXPECT_NE(compiled->ptx.find("bar.sync"), std::string::npos) << compiled->ptx;
}

// A block's threads are the largest extent of each GPU thread loop in it: for rows of 1000,
// the output's 256 lanes, max's 32 partials and the float32 sum's 256 pairs (16 lanes x 16
// blocks of 32) must share x. The pairs on x and y made a block of 256 x 16 = 4096
// threads, which cuLaunchKernel refuses (CUDA_ERROR_INVALID_VALUE: softmax_log_softmax_rows
// of CudaTraceTest under HALIDE, the first GPU run of HALIDE, 2026-11-28).
TEST_F(HalideKernelsTest, CudaRowBlocksFitABlockAndStoreTheirOutput) {
  for (int cols : {100, 1000, 3000}) {
    auto kernel = parse(softmaxSource(64, cols).c_str());
    std::string why;
    auto compiled = cudaKernel(kernel, /*inPlace=*/false, Device(kCUDA, 0), cache, why);
    ASSERT_TRUE(compiled) << why;
    // Halide's host code (the lowered statement) launches each GPU loop nest with
    // halide_cuda_run(state, entry, blocks x, y, z, threads x, y, z, ...).
    const std::string lowered = compiled->lowered();
    const std::regex launch(R"re(halide_cuda_run\([^,]+, "[^"]+", [^,]+, [^,]+, [^,]+, (\d+), (\d+), (\d+),)re");
    int launches = 0;
    for (auto it = std::sregex_iterator(lowered.begin(), lowered.end(), launch); it != std::sregex_iterator(); ++it) {
      ++launches;
      const int64_t x = std::stoll((*it)[1].str()), y = std::stoll((*it)[2].str()), z = std::stoll((*it)[3].str());
      EXPECT_LE(x * y * z, 1024) << cols << " columns: a block of " << x << " x " << y << " x " << z << " threads";
      EXPECT_EQ(x, 256) << cols << " columns";
    }
    EXPECT_EQ(launches, 1) << lowered;
    // The kernel stores its output: Halide 14's simplifier dropped every statement that read
    // the uint8 NaN count of max from the block's shared memory (one allocation of mixed
    // types), the output's store among them, so the kernel wrote nothing (the same GPU run).
    const std::string ptx = lowered.substr(lowered.find("// PTX"));
    EXPECT_NE(ptx.find("st.global"), std::string::npos) << cols << " columns: " << ptx;
  }
}

// Statistics of one row of different widths (an int32 sum beside a float max, which CUDA
// computes 8 bytes wide) are not row-blocked: Halide 14 would size their shared memory a
// slot short. Each is computed at the root instead, and the kernel still stores its output.
TEST_F(HalideKernelsTest, CudaRowStatisticsOfMixedWidthsAreComputedAtTheRoot) {
  auto kernel = parse(R"mlir(
    func.func private @mixed(%a: tensor<8x100xi32>, %b: tensor<8x100xf32>) -> tensor<8x100xf32> attributes {kiln.kernel = "fusion"} {
      %s = kiln.reduce sum %a, dims = [1] keep_dims : tensor<8x100xi32>
      %m = kiln.reduce max %b, dims = [1] keep_dims : tensor<8x100xf32>
      %sf = kiln.convert %s : tensor<8x1xi32> to f32
      %t = kiln.add %sf, %m : tensor<8x1xf32>
      %tb = kiln.broadcast_in_dim %t, dims = [0, 1], shape = [8, 100] : tensor<8x1xf32>
      %y = kiln.sub %b, %tb : tensor<8x100xf32>
      return %y : tensor<8x100xf32>
    })mlir");
  std::string why;
  auto compiled = compileForCuda(kernel, false, why);
  ASSERT_TRUE(compiled) << why;
  EXPECT_NE(compiled->schedule.find("(statistics of mixed widths: no row blocks)"), std::string::npos)
      << compiled->schedule;
  EXPECT_EQ(compiled->schedule.find("cuda-row-blocks"), std::string::npos) << compiled->schedule;
  EXPECT_NE(compiled->schedule.find("cuda-root-reduction"), std::string::npos) << compiled->schedule;
  EXPECT_NE(compiled->ptx.find("st.global"), std::string::npos) << compiled->ptx;
}

// A full reduction: its accumulator computed at the root on one GPU thread, then the output.
TEST_F(HalideKernelsTest, CudaRootReductionAndDeclines) {
  auto sum = parse(R"mlir(
    func.func private @k(%a: tensor<40xf32>) -> tensor<f32> attributes {kiln.kernel = "fusion"} {
      %s = kiln.reduce sum %a, dims = [0] : tensor<40xf32>
      return %s : tensor<f32>
    })mlir");
  std::string why;
  auto compiled = compileForCuda(sum, false, why);
  ASSERT_TRUE(compiled) << why;
  EXPECT_NE(compiled->schedule.find("cuda-root-reduction"), std::string::npos) << compiled->schedule;
  EXPECT_GE(compiled->entries.size(), 2u) << compiled->ptx;

  auto gelu64 = parse(R"mlir(
    func.func private @g(%a: tensor<4xf64>) -> tensor<4xf64> attributes {kiln.kernel = "fusion"} {
      %g = kiln.gelu %a : tensor<4xf64>
      return %g : tensor<4xf64>
    })mlir");
  EXPECT_FALSE(compileForCuda(gelu64, false, why));
  EXPECT_EQ(why, "kiln.gelu on other than f32 math");
}

// HALIDE on CUDA as the GPU host schedule runs it: the CUDA pipeline compiled to a host
// object, linked beside Halide's standalone CUDA runtime (every symbol resolved, Kiln's
// context and stream handlers set) with no device in sight, kept in the disk cache like a
// CPU kernel; running it needs the device and says so where there is none.
TEST_F(HalideKernelsTest, CudaKernelsLinkWithoutAGpuAndLoadFromTheDiskCache) {
  auto kernel = parse(kBiasTanh);
  DiskCache fresh(std::string(::testing::TempDir()) + "/halide-cuda-kernels");
  forgetHalideKernels();
  const HalideCounts before = halideCounts();
  std::string why;
  auto compiled = cudaKernel(kernel, /*inPlace=*/false, Device(kCUDA, 0), fresh, why);
  ASSERT_TRUE(compiled) << why;
  EXPECT_EQ(compiled->describe(), "@ew: cuda-elementwise ");
  EXPECT_NE(compiled->lowered().find(".target sm_80"), std::string::npos) << compiled->lowered();
  EXPECT_EQ(halideCounts().compiled, before.compiled + 1);
  EXPECT_EQ(halideCounts().runtimesCompiled, before.runtimesCompiled + 1);  // the CUDA runtime
  // The same kernel again is this process's; on another device, the same object.
  EXPECT_EQ(cudaKernel(kernel, false, Device(kCUDA, 0), fresh, why), compiled);
  auto other = cudaKernel(kernel, false, Device(kCUDA, 1), fresh, why);
  ASSERT_TRUE(other) << why;
  EXPECT_NE(other, compiled);
  EXPECT_EQ(halideCounts().compiled, before.compiled + 1);
  EXPECT_EQ(halideCounts().loaded, before.loaded + 1);
  // A new process loads the kernel and the CUDA runtime from the disk cache.
  forgetHalideKernels();
  auto loaded = cudaKernel(kernel, false, Device(kCUDA, 0), fresh, why);
  ASSERT_TRUE(loaded) << why;
  EXPECT_EQ(loaded->describe(), "@ew: cuda-elementwise  (object from the disk cache)");
  EXPECT_EQ(halideCounts().compiled, before.compiled + 1);
  EXPECT_EQ(halideCounts().runtimesCompiled, before.runtimesCompiled + 1);
  // The CPU's kernel of the same text is its own.
  ASSERT_TRUE(halideKernels().compile(kernel, false, fresh, why)) << why;
  EXPECT_EQ(halideCounts().compiled, before.compiled + 2);
  if (cuda::is_available()) return;  // test/gpu:CudaTraceTest runs HALIDE's kernels on a GPU
  std::vector<float> a(64 * 70), b(70), out(64 * 70);
  void* operands[] = {a.data(), b.data()};
  void* results[] = {out.data()};
  try {
    loaded->run(operands, results);
    ADD_FAILURE() << "ran without a CUDA device";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("no CUDA device"), std::string::npos) << error.what();
  }
}

// Halide's CUDA runtime builds its compilation cache in a static initializer (the cache's
// first module id, 2, is set there): JitEngine::link runs it, or else every launch on a GPU
// aborted in halide_cuda_run ("found && mod != nullptr": the loaded module had been filed
// under id 0, an empty slot). The initializer's guard variable says whether it ran.
TEST_F(HalideKernelsTest, TheCudaRuntimesStaticInitializersRunWhenItIsLinked) {
  const std::string path = std::string(::testing::TempDir()) + "/halide-cuda-runtime.o";
  Halide::compile_standalone_runtime(path, Halide::get_host_target()
                                               .with_feature(Halide::Target::CUDA)
                                               .with_feature(Halide::Target::CUDACapability80)
                                               .with_feature(Halide::Target::NoRuntime));
  std::ifstream file(path, std::ios::binary);
  const std::string object((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(object.empty());
  auto runtime = JitEngine::link(object, {}, "test", SourceLoc::current());
  const auto* guard =
      static_cast<const uint8_t*>(runtime->find("_ZGVN6Halide7Runtime8Internal4Cuda17compilation_cacheE"));
  ASSERT_NE(guard, nullptr) << "Halide 14's CUDA runtime names its compilation cache's guard so";
  EXPECT_NE(*guard, 0) << "the compilation cache's initializer did not run";
}

// On a device: HALIDE's CUDA kernel, compiled and then loaded from the disk cache, reads
// and writes Kiln's device memory on Kiln's stream (tanh(a + b) against the CPU's).
TEST_F(HalideKernelsTest, CudaKernelsRunOnTheDevice) {
  if (!cuda::is_available()) GTEST_SKIP() << "SKIPPED: no CUDA device: " << cuda::unavailable_reason();
  auto kernel = parse(kBiasTanh);
  DiskCache fresh(std::string(::testing::TempDir()) + "/halide-cuda-run");
  forgetHalideKernels();
  manual_seed(3);
  const Tensor a = randn({64, 70}), b = randn({70});
  const Tensor want = a.add(b).tanh();
  for (const char* from : {"compiled", "loaded from the disk cache"}) {
    if (std::string(from) != "compiled") forgetHalideKernels();
    std::string why;
    auto compiled = cudaKernel(kernel, /*inPlace=*/false, Device(kCUDA, 0), fresh, why);
    ASSERT_TRUE(compiled) << why;
    const Tensor da = a.to(kCUDA), db = b.to(kCUDA), out = zeros({64, 70}, kCUDA);
    void* operands[] = {da.rawData(), db.rawData()};
    void* results[] = {out.rawData()};
    compiled->run(operands, results);
    cuda::synchronize();
    const Tensor got = out.to(kCPU);
    EXPECT_LE(got.sub(want).abs().max().item<float>(), 1e-6f) << from;
  }
}

TEST_F(HalideKernelsTest, CudaDeclinesBf16BeforeHalideSeesIt) {
  auto kernel = parse(R"mlir(
    func.func private @b(%a: tensor<8xbf16>) -> tensor<8xbf16> attributes {kiln.kernel = "fusion"} {
      %s = kiln.add %a, %a : tensor<8xbf16>
      return %s : tensor<8xbf16>
    })mlir");
  std::string why;
  EXPECT_FALSE(cudaKernel(kernel, false, Device(kCUDA, 0), cache, why));
  EXPECT_EQ(why, "bf16 on Halide 14's CUDA target (LLVM 14's NVPTX backend aborts on it)");
}

}  // namespace
}  // namespace kiln::runtime::halide
