// RUN: kiln-opt %s --kiln-gpu-pipeline | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-pipeline --mlir-print-ir-after=convert-parallel-loops-to-gpu 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=LAUNCH

// kiln-gpu-pipeline on a column sum of exp(x) ([1000, 96] over dim 0): kiln→linalg's
// reduction generics iterate (reduced..., kept), which kiln-gpu-prepare-loops
// interchanges so the kept column is the outer, parallel loop: one thread per column
// (96 threads; consecutive threads read consecutive columns of a row, so loads
// coalesce), each summing its column in f64 over the float32 pairs in a register
// (kiln-promote-accumulators). A two-stage column reduction is a later slice.

// LAUNCH:      gpu.launch blocks
// LAUNCH:      gpu.launch blocks
// LAUNCH:      gpu.launch blocks
// LAUNCH:        %[[COL:.*]] = arith.addi
// LAUNCH-NEXT:   %[[ACC0:.*]] = memref.load %{{.*}}[%[[COL]]] : memref<96xf64>
// LAUNCH-NEXT:   scf.for %{{.*}} = %c0 to %c31 step %c1 iter_args(%{{.*}} = %[[ACC0]]) -> (f64)
// LAUNCH-NEXT:     scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args(%{{.*}}) -> (f64)
// LAUNCH:            memref.load %{{.*}}[%{{.*}}, %[[COL]]] : memref<1000x96xf32>
// LAUNCH:            arith.addf %{{.*}} fastmath<reassoc> : f64

// CHECK:       module @kiln_kernels attributes {gpu.container_module}
// CHECK:         func.func @main_kernel_0(%[[X:.*]]: memref<1000x96xf32>, %[[OUT:.*]]: memref<96xf32>)
// CHECK:           gpu.launch_func @main_kernel_0_kernel::@main_kernel_0_kernel blocks in (%c375, %c1, %c1) threads in (%c256, %c1, %c1) args(%[[X]] : memref<1000x96xf32>
// CHECK:           %[[ACC:.*]] = memref.alloc() {{.*}} : memref<96xf64>
// CHECK-COUNT-3:   gpu.launch_func @main_kernel_0_kernel_{{[0-2]}}::@main_kernel_0_kernel blocks in (%c1, %c1, %c1) threads in (%c96, %c1, %c1) args(%[[ACC]] : memref<96xf64>
// CHECK:           gpu.launch_func @main_kernel_0_kernel_3::@main_kernel_0_kernel blocks in (%c1, %c1, %c1) threads in (%c96, %c1, %c1) args(%[[ACC]] : memref<96xf64>, %[[OUT]] : memref<96xf32>)
// CHECK-COUNT-5: gpu.binary @main_kernel_0_kernel{{.*}}.target sm_90{{.*}}.entry main_kernel_0_kernel(
// CHECK-NOT:     gpu.binary

func.func @main(%x: tensor<1000x96xf32> {kiln.input = 0 : i64}) -> (tensor<96xf32> {kiln.output = 0 : i64}) {
  %e = kiln.exp %x : tensor<1000x96xf32>
  %s = kiln.reduce sum %e, dims = [0] : tensor<1000x96xf32>
  return %s : tensor<96xf32>
}
