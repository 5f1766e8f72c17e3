// RUN: kiln-opt %s --kiln-cpu-pipeline | FileCheck %s

// kiln-cpu-pipeline on a softmax: one row kernel tiled by rows (kiln-tile-rows, 4 KiB
// tiles: one row of 1024 floats). Its chunk's scratch is allocated once per call,
// before the loop over the tiles (kiln-hoist-scratch): the row's max and the 17 f64
// accumulators of its sum on the stack, its 4 KiB of exp values on the heap. No malloc
// or free per buffer and tile.

// CHECK-LABEL: llvm.func @main_kernel_0(
// CHECK-NOT:     llvm.call @malloc(
// CHECK:         llvm.call @kiln_rt_parallel_for(
// CHECK-NOT:     llvm.call @free(
// CHECK:         llvm.return
// CHECK-LABEL: llvm.func @main_kernel_0_chunk_0(
// CHECK:         llvm.alloca %{{.*}} x f64 {alignment = 64 : i64}
// CHECK:         llvm.alloca %{{.*}} x f32 {alignment = 64 : i64}
// CHECK:         llvm.call @malloc(
// CHECK:         llvm.br ^bb1
// CHECK-NOT:     llvm.call @malloc(
// CHECK-NOT:     llvm.alloca
// CHECK:         llvm.call @free(
// CHECK-NOT:     llvm.call @malloc(
// CHECK:         llvm.return
func.func @main(%x: tensor<64x1024xf32> {kiln.input = 0 : i64}) -> (tensor<64x1024xf32> {kiln.output = 0 : i64}) {
  %m = kiln.reduce max %x, dims = [1] keep_dims : tensor<64x1024xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [64, 1024] : tensor<64x1xf32>
  %d = kiln.sub %x, %mb : tensor<64x1024xf32>
  %e = kiln.exp %d : tensor<64x1024xf32>
  %s = kiln.reduce sum %e, dims = [1] keep_dims : tensor<64x1024xf32>
  %sb = kiln.broadcast_in_dim %s, dims = [0, 1], shape = [64, 1024] : tensor<64x1xf32>
  %y = kiln.div %e, %sb : tensor<64x1024xf32>
  return %y : tensor<64x1024xf32>
}
