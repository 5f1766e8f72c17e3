// NVRTC's kernel generator on hand-written fused kernels: the CUDA C it writes (checked as
// text, FileCheck-like), what it declines and why, and (where NVRTC is installed) that the
// source compiles to PTX. test/gpu/NvrtcKernelsAssembleTest does every e2e graph's kernels.
#include "runtime/nvrtc/NvrtcKernels.h"

#include <gtest/gtest.h>

#include "dialect/KilnDialect.h"
#include "frontend/core/cuda/Nvrtc.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

namespace kiln::runtime::nvrtc {
namespace {

class NvrtcKernelsTest : public ::testing::Test {
 protected:
  NvrtcKernelsTest() { context.loadDialect<mlir::kiln::KilnDialect, mlir::func::FuncDialect>(); }

  mlir::func::FuncOp parse(const char* source) {
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    return *module->getOps<mlir::func::FuncOp>().begin();
  }

  // `kernel` generated (failing the test where declined) and, with NVRTC, compiled to PTX
  // for compute_80 with its entry point in it.
  CudaKernel generated(mlir::func::FuncOp kernel, bool inPlace = false) {
    std::string why;
    std::optional<CudaKernel> k = generate(kernel, inPlace, why);
    EXPECT_TRUE(k) << why;
    if (!k) return {};
    if (cuda::nvrtcUnavailableReason().empty()) {
      std::string ptx;
      EXPECT_NO_THROW(ptx = compileToPtx(*k, "compute_80")) << k->source;
      EXPECT_NE(ptx.find(".entry " + k->name), std::string::npos) << ptx.substr(0, 2000);
    }
    return *k;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

// `needles` appear in `text` in order (a CHECK line each).
void expectInOrder(const std::string& text, std::initializer_list<std::string> needles) {
  size_t at = 0;
  for (const std::string& needle : needles) {
    const size_t found = text.find(needle, at);
    ASSERT_NE(found, std::string::npos) << "'" << needle << "' not found after offset " << at << " in:\n" << text;
    at = found + needle.size();
  }
}

TEST_F(NvrtcKernelsTest, ElementwiseChainsIndexBroadcastsAndTransposes) {
  auto kernel = parse(R"mlir(
    func.func private @chain(%a: tensor<4x3xf32>, %b: tensor<3xf32>, %t: tensor<3x4xf16>) -> tensor<4x3xf16>
        attributes {kiln.kernel = "fusion"} {
      %bb = kiln.broadcast_in_dim %b, dims = [1], shape = [4, 3] : tensor<3xf32>
      %s = kiln.add %a, %bb : tensor<4x3xf32>
      %e = kiln.exp %s : tensor<4x3xf32>
      %h = kiln.convert %e : tensor<4x3xf32> to f16
      %tt = kiln.transpose %t, permutation = [1, 0] : tensor<3x4xf16>
      %m = kiln.mul %h, %tt : tensor<4x3xf16>
      return %m : tensor<4x3xf16>
    })mlir");
  const CudaKernel k = generated(kernel);
  EXPECT_FALSE(k.rows);
  EXPECT_EQ(k.elements, 12);
  EXPECT_EQ(k.name, "kiln_nvrtc_chain");
  expectInOrder(k.source, {
      "extern \"C\" __global__ void __launch_bounds__(256) kiln_nvrtc_chain(const float* __restrict__ in0, "
      "const float* __restrict__ in1, const u16* __restrict__ in2, u16* __restrict__ out0)",
      "typedef int ix;",
      "for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < 12; i += (i64)gridDim.x * blockDim.x)",
      "const ix o0 = ((f) / 3);",
      "const ix o1 = ((f) % 3);",
      "= (in0[o0 * (ix)3 + o1]);",
      "= (in1[o1]);",        // the broadcast operand, by the dim it keeps
      "a + b",
      "exp(a)",
      "h2f(f2h((float)(",    // every f16 value rounded as the eager kernels store it
      "= h2f(in2[o1 * (ix)4 + o0]);",  // the transpose: operand dim 0 is result dim 1
      "a * b",
      "out0[f] = f2h((float)(",
  });
}

TEST_F(NvrtcKernelsTest, SoftmaxIsOneBlockPerRowWithTwoBlockReductions) {
  auto kernel = parse(R"mlir(
    func.func private @softmax(%x: tensor<8x100xf32>) -> tensor<8x100xf32> attributes {kiln.kernel = "fusion"} {
      %m = kiln.reduce max %x, dims = [1] keep_dims : tensor<8x100xf32>
      %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [8, 100] : tensor<8x1xf32>
      %d = kiln.sub %x, %mb : tensor<8x100xf32>
      %e = kiln.exp %d : tensor<8x100xf32>
      %s = kiln.reduce sum %e, dims = [1] keep_dims : tensor<8x100xf32>
      %sb = kiln.broadcast_in_dim %s, dims = [0, 1], shape = [8, 100] : tensor<8x1xf32>
      %y = kiln.div %e, %sb : tensor<8x100xf32>
      return %y : tensor<8x100xf32>
    })mlir");
  const CudaKernel k = generated(kernel);
  EXPECT_TRUE(k.rows);
  EXPECT_EQ(k.rowCount, 8);
  EXPECT_EQ(k.rowLength, 100);
  EXPECT_EQ(k.reductions, 2);
  EXPECT_EQ(k.describe(), "@kiln_nvrtc_softmax: rows (8 rows of 100, 2 reductions per row), 256 threads per block");
  expectInOrder(k.source, {
      "__shared__ float scratch_f32[32];",
      "for (i64 row = blockIdx.x; row < 8; row += gridDim.x)",
      // the max first (the sum reads it), in float with NaN kept
      "float acc", "__int_as_float((int)0xff800000u)",
      "__shfl_down_sync(0xffffffffu",
      "__syncthreads();",
      // the sum: float32 pairs, then double
      "double acc", "/ 16 * 32 +", "+= (double)(float)(",
      "__shfl_down_sync(0xffffffffu",
      // then the row's elements
      "for (ix j = threadIdx.x; j < 100; j += blockDim.x)",
      "a / b",
      "out0[(ix)r * (ix)100 + j] = (float)(",
  });
}

TEST_F(NvrtcKernelsTest, PlainReductionsAreRowsOfOneElement) {
  auto kernel = parse(R"mlir(
    func.func private @colsum(%x: tensor<16x5xf64>) -> tensor<5xf64> attributes {kiln.kernel = "fusion"} {
      %n = kiln.neg %x : tensor<16x5xf64>
      %s = kiln.reduce mean %n, dims = [0] : tensor<16x5xf64>
      return %s : tensor<5xf64>
    })mlir");
  const CudaKernel k = generated(kernel);
  EXPECT_TRUE(k.rows);
  EXPECT_EQ(k.rowCount, 5);
  EXPECT_EQ(k.rowLength, 1);
  expectInOrder(k.source, {
      "for (i64 row = blockIdx.x; row < 5; row += gridDim.x)",
      "const ix o0 = (r);",
      "double acc",
      "= (in0[",  // column o0 of row q: the reduced dim is the outer one
      "* (ix)5 + o0]);",
      "/ (double)16)",
  });

  auto integers = parse(R"mlir(
    func.func private @isum(%x: tensor<3x7xi32>) -> tensor<i32> attributes {kiln.kernel = "fusion"} {
      %s = kiln.reduce sum %x, dims = [0, 1] : tensor<3x7xi32>
      return %s : tensor<i32>
    })mlir");
  const CudaKernel i = generated(integers);
  EXPECT_EQ(i.rowCount, 1);
  expectInOrder(i.source, {"__shared__ int red", "i64 acc", "(unsigned long long)"});
}

// A result of one value per row (the sum beside the elementwise result it sums) is written
// by thread 0 after the row's reductions.
TEST_F(NvrtcKernelsTest, ResultsOfOneValuePerRowBesideTheRowsElements) {
  auto kernel = parse(R"mlir(
    func.func private @k(%a: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<f32>)
        attributes {kiln.kernel = "fusion"} {
      %c = kiln.constant dense<3.0> : tensor<3x4xf32>
      %m = kiln.mul %a, %c : tensor<3x4xf32>
      %d = kiln.sub %b, %m : tensor<3x4xf32>
      %s = kiln.reduce sum %d, dims = [0, 1] : tensor<3x4xf32>
      return %d, %s : tensor<3x4xf32>, tensor<f32>
    })mlir");
  const CudaKernel k = generated(kernel);
  EXPECT_EQ(k.rowCount, 1);
  EXPECT_EQ(k.rowLength, 12);
  expectInOrder(k.source, {"__syncthreads();", "if (threadIdx.x == 0) {", "out1[r] = (float)(red",
                           "for (ix j = threadIdx.x; j < 12; j += blockDim.x)", "out0[(ix)r * (ix)12 + j]"});

  // No results (every value of the group went elsewhere): an empty kernel.
  auto empty = parse(R"mlir(
    func.func private @k() attributes {kiln.kernel = "fusion"} {
      return
    })mlir");
  EXPECT_NE(generated(empty).source.find("kiln_nvrtc_k() {"), std::string::npos);
}

// layer_norm of a log_softmax: the means over the last two dims are the block's, the max
// and sum over the last dim inside their loops each thread's own.
TEST_F(NvrtcKernelsTest, ReductionsInsideAnotherReductionsLoopArePerThread) {
  auto kernel = parse(R"mlir(
    func.func private @k(%x: tensor<4x8x7xf32>) -> tensor<4x8x7xf32> attributes {kiln.kernel = "fusion"} {
      %1 = kiln.reduce max %x, dims = [2] keep_dims : tensor<4x8x7xf32>
      %2 = kiln.broadcast_in_dim %1, dims = [0, 1, 2], shape = [4, 8, 7] : tensor<4x8x1xf32>
      %3 = kiln.sub %x, %2 : tensor<4x8x7xf32>
      %9 = kiln.reduce mean %3, dims = [1, 2] keep_dims : tensor<4x8x7xf32>
      %10 = kiln.broadcast_in_dim %9, dims = [0, 1, 2], shape = [4, 8, 7] : tensor<4x1x1xf32>
      %11 = kiln.sub %3, %10 : tensor<4x8x7xf32>
      return %11 : tensor<4x8x7xf32>
    })mlir");
  const CudaKernel k = generated(kernel);
  EXPECT_EQ(k.rowCount, 32);
  EXPECT_EQ(k.reductions, 2);
  EXPECT_EQ(k.serialReductions, 2);  // the max, for each element of a float32 pair of the mean
  expectInOrder(k.source, {"for (ix q", "= threadIdx.x;", "for (ix q", "= 0;", "+= 1)"});
}

TEST_F(NvrtcKernelsTest, WhatItDoesNotTakeItDeclinesWithAReason) {
  std::string why;
  auto constant = parse(R"mlir(
    func.func private @k(%a: tensor<2xf32>) -> tensor<2xf32> attributes {kiln.kernel = "fusion"} {
      %c = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
      %s = kiln.add %a, %c : tensor<2xf32>
      return %s : tensor<2xf32>
    })mlir");
  EXPECT_FALSE(generate(constant, false, why));
  EXPECT_EQ(why, "a constant that is not a splat");

  // Written over its operand in place, a transpose would read elements other threads write.
  auto transposed = parse(R"mlir(
    func.func private @k(%a: tensor<3x3xf32>) -> tensor<3x3xf32> attributes {kiln.kernel = "fusion"} {
      %t = kiln.transpose %a, permutation = [1, 0] : tensor<3x3xf32>
      %s = kiln.add %a, %t : tensor<3x3xf32>
      return %s : tensor<3x3xf32>
    })mlir");
  EXPECT_TRUE(generate(transposed, /*inPlace=*/false, why));
  EXPECT_FALSE(generate(transposed, /*inPlace=*/true, why));
  EXPECT_EQ(why, "a result written over an operand that is also read at other elements (operand 0)");

  // In place, results of one shape read every operand before any is stored.
  auto update = parse(R"mlir(
    func.func private @k(%s: tensor<37xf32>, %x: tensor<37xf32>) -> (tensor<37xf32>, tensor<37xf32>)
        attributes {kiln.kernel = "fusion"} {
      %u = kiln.add %s, %x : tensor<37xf32>
      %c = kiln.constant dense<2.0> : tensor<37xf32>
      %o = kiln.mul %u, %c : tensor<37xf32>
      return %o, %u : tensor<37xf32>, tensor<37xf32>
    })mlir");
  const CudaKernel k = generated(update, /*inPlace=*/true);
  EXPECT_EQ(k.source.find("__restrict__"), std::string::npos);
  expectInOrder(k.source, {"in0[o0]", "in1[o0]", "__int_as_float((int)0x40000000u)", "out0[f] =", "out1[f] ="});
}

}  // namespace
}  // namespace kiln::runtime::nvrtc
