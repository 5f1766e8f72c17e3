// RUN: kiln-opt %s --kiln-cpu-pipeline | FileCheck %s --check-prefix=MLIR
// RUN: kiln-opt %s --kiln-cpu-pipeline | mlir-translate --mlir-to-llvmir \
// RUN:   | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S | FileCheck %s

// kiln-cpu-pipeline on a row sum: the f64 accumulators are scratch the kernel allocates
// and frees before it returns (no leak per call); the accumulator of each row stays in a
// register across the row (kiln-promote-accumulators) and, reassociable, the row loop
// vectorizes to 4 doubles a step on an AVX2 machine.

// MLIR:       llvm.func @main_kernel_0(
// MLIR:         llvm.call @malloc(
// MLIR:         llvm.call @kiln_rt_parallel_for(
// MLIR:         llvm.call @free(
// MLIR:         llvm.return

// CHECK-LABEL: define void @main_kernel_0_chunk_
// CHECK:         fpext <{{[0-9]+}} x float> %{{.*}} to <{{[0-9]+}} x double>
// CHECK:         fadd reassoc <{{[0-9]+}} x double>
func.func @main(%x: tensor<256x1024xf32> {kiln.input = 0 : i64}) -> (tensor<256xf32> {kiln.output = 0 : i64}) {
  %s = kiln.reduce sum %x, dims = [1] : tensor<256x1024xf32>
  return %s : tensor<256xf32>
}
