// RUN: kiln-opt %s --kiln-cpu-pipeline | FileCheck %s --check-prefix=MLIR
// RUN: kiln-opt %s --kiln-cpu-pipeline | mlir-translate --mlir-to-llvmir \
// RUN:   | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S | FileCheck %s

// kiln-cpu-pipeline on a row sum: the f64 accumulators are scratch the kernel allocates
// and frees before it returns (no leak per call). The float32 pairs' 16 lanes of each row
// stay in registers across the row (kiln-promote-accumulators) and LLVM vectorizes them
// across the lanes: per block of 32, the two contiguous halves loaded as 16 floats each,
// added in float32, converted and added to the 16 double lanes (no gather, no mask, no
// reassociation: the eager order).

// MLIR:       llvm.func @main_kernel_0(
// MLIR:         llvm.call @malloc(
// MLIR:         llvm.call @kiln_rt_parallel_for(
// MLIR:         llvm.call @free(
// MLIR:         llvm.return

// CHECK-LABEL: define void @main_kernel_0_chunk_
// CHECK:         %[[LANES:.*]] = phi <16 x double>
// CHECK:         %[[A:.*]] = load <16 x float>
// CHECK:         %[[B:.*]] = load <16 x float>
// CHECK:         %[[P:.*]] = fadd <16 x float> %[[A]], %[[B]]
// CHECK:         %[[W:.*]] = fpext <16 x float> %[[P]] to <16 x double>
// CHECK:         fadd <16 x double> %[[LANES]], %[[W]]
// CHECK-NOT:     gather
func.func @main(%x: tensor<2048x1024xf32> {kiln.input = 0 : i64}) -> (tensor<2048xf32> {kiln.output = 0 : i64}) {
  %s = kiln.reduce sum %x, dims = [1] : tensor<2048x1024xf32>
  return %s : tensor<2048xf32>
}
