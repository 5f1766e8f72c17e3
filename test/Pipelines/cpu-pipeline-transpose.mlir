// RUN: kiln-opt %s --kiln-cpu-pipeline | FileCheck %s

// kiln-cpu-pipeline on a transpose between elementwise ops: kiln-fuse puts it in the
// consumer's kernel, and generalized to a linalg.generic with a permuted map it merges
// with its neighbours into one loop nest reading %x in permuted order: no scratch buffer,
// no copy, one parallel loop.

// CHECK:       llvm.func @main_kernel_0(
// CHECK-NOT:     llvm.call @malloc
// CHECK-NOT:     memcpy
// CHECK:         llvm.call @kiln_rt_parallel_for(
// CHECK-NOT:     llvm.call @kiln_rt_parallel_for(
// CHECK:         llvm.return
func.func @main(%x: tensor<512x256xf32> {kiln.input = 0 : i64}, %y: tensor<256x512xf32> {kiln.input = 1 : i64})
    -> (tensor<256x512xf32> {kiln.output = 0 : i64}) {
  %n = kiln.neg %x : tensor<512x256xf32>
  %t = kiln.transpose %n, permutation = [1, 0] : tensor<512x256xf32>
  %s = kiln.add %t, %y : tensor<256x512xf32>
  return %s : tensor<256x512xf32>
}
