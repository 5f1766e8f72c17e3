// RUN: kiln-opt %s --kiln-gpu-pipeline | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-pipeline --mlir-print-ir-after=convert-parallel-loops-to-gpu 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=LAUNCH

// kiln-gpu-pipeline on a column sum of exp(x) ([1000, 96] over dim 0): kiln→linalg sums
// float32 pairs in f64 (a zero fill, the 31 whole blocks of 32 rows, the 8 rows left, the
// cast). 96 columns are too few to fill the card one thread each, so
// kiln-gpu-block-reductions gives the whole blocks' generic one block of 256 threads per
// column, each thread summing every 256th pair in a register and gpu.all_reduce
// combining the block; the 8 rows left are too few for a block and stay one thread per
// column (96 threads; consecutive threads read consecutive columns of a row, so loads
// coalesce), in a register too (kiln-promote-accumulators).

// LAUNCH:      gpu.launch blocks
// LAUNCH:      gpu.launch blocks
// LAUNCH:      gpu.launch blocks
// LAUNCH:        %[[PART:.*]] = scf.for %{{.*}} = %{{.*}} to %c496 step %c256 iter_args(%{{.*}}) -> (f64)
// LAUNCH:          memref.load %{{.*}} : memref<1000x96xf32>
// LAUNCH:          memref.load %{{.*}} : memref<1000x96xf32>
// LAUNCH:          arith.addf %{{.*}} : f32
// LAUNCH:          arith.extf
// LAUNCH:        gpu.all_reduce add %[[PART]] uniform
// LAUNCH:      gpu.launch blocks
// LAUNCH:        %[[COL:.*]] = arith.addi
// LAUNCH-NEXT:   %[[ACC0:.*]] = memref.load %{{.*}}[%[[COL]]] : memref<96xf64>
// LAUNCH-NEXT:   scf.for %{{.*}} = %c0 to %c1 step %c1 iter_args(%{{.*}} = %[[ACC0]]) -> (f64)
// LAUNCH-NEXT:     scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args(%{{.*}}) -> (f64)
// LAUNCH:            memref.load %{{.*}}[%{{.*}}, %[[COL]]] : memref<1000x96xf32>
// LAUNCH:            arith.addf %{{.*}} fastmath<reassoc> : f64

// CHECK:       module @kiln_kernels attributes {gpu.container_module}
// CHECK:         func.func @main_kernel_0(%[[X:.*]]: memref<1000x96xf32>, %[[OUT:.*]]: memref<96xf32>)
// CHECK:           gpu.launch_func @main_kernel_0_kernel::@main_kernel_0_kernel blocks in (%c375, %c1, %c1) threads in (%c256, %c1, %c1) args(%[[X]] : memref<1000x96xf32>
// CHECK:           %[[ACC:.*]] = memref.alloc() {{.*}} : memref<96xf64>
// CHECK:           gpu.launch_func @main_kernel_0_kernel_0::@main_kernel_0_kernel blocks in (%c1, %c1, %c1) threads in (%c96, %c1, %c1) args(%[[ACC]] : memref<96xf64>)
// CHECK:           gpu.launch_func @main_kernel_0_kernel_1::@main_kernel_0_kernel blocks in (%c96, %c1, %c1) threads in (%c256, %c1, %c1) args(%{{.*}} : memref<1000x96xf32>, %[[ACC]] : memref<96xf64>)
// CHECK:           gpu.launch_func @main_kernel_0_kernel_2::@main_kernel_0_kernel blocks in (%c1, %c1, %c1) threads in (%c96, %c1, %c1) args(%[[ACC]] : memref<96xf64>, %{{.*}} : memref<1000x96xf32>)
// CHECK:           gpu.launch_func @main_kernel_0_kernel_3::@main_kernel_0_kernel blocks in (%c1, %c1, %c1) threads in (%c96, %c1, %c1) args(%[[ACC]] : memref<96xf64>, %[[OUT]] : memref<96xf32>)
// CHECK-COUNT-5: gpu.binary @main_kernel_0_kernel{{.*}}.target sm_90{{.*}}.entry main_kernel_0_kernel(
// CHECK-NOT:     gpu.binary

func.func @main(%x: tensor<1000x96xf32> {kiln.input = 0 : i64}) -> (tensor<96xf32> {kiln.output = 0 : i64}) {
  %e = kiln.exp %x : tensor<1000x96xf32>
  %s = kiln.reduce sum %e, dims = [0] : tensor<1000x96xf32>
  return %s : tensor<96xf32>
}
