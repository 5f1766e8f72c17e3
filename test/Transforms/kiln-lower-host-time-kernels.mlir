// RUN: kiln-opt %s --kiln-lower-host=time-kernels=true | FileCheck %s

// kiln-lower-host with time-kernels (the profiler's hooks): each fusion kernel call is
// bracketed by kiln_rt_kernel_begin/end(%runtime, <n>), kernel calls numbered in block
// order from 0; host ops (the matmul) are not, the runtime times those itself.
// CHECK:       llvm.func @kiln_rt_kernel_begin(!llvm.ptr, i64)
// CHECK:       llvm.func @kiln_rt_kernel_end(!llvm.ptr, i64)
// CHECK-LABEL: llvm.func @kiln_schedule(
// CHECK-SAME:    %[[RT:[^:]*]]: !llvm.ptr)
// CHECK:         llvm.call @kiln_rt_host_op(%[[RT]]
// CHECK-NOT:     kiln_rt_kernel
// CHECK:         %[[K0:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT:    llvm.call @kiln_rt_kernel_begin(%[[RT]], %[[K0]]) : (!llvm.ptr, i64) -> ()
// CHECK-NEXT:    llvm.call @schedule_kernel_1(
// CHECK-NEXT:    llvm.call @kiln_rt_kernel_end(%[[RT]], %[[K0]]) : (!llvm.ptr, i64) -> ()
// CHECK:         %[[K1:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT:    llvm.call @kiln_rt_kernel_begin(%[[RT]], %[[K1]])
// CHECK-NEXT:    llvm.call @schedule_kernel_2(
// CHECK-NEXT:    llvm.call @kiln_rt_kernel_end(%[[RT]], %[[K1]])
// CHECK-NEXT:    llvm.return
func.func @schedule(%x: tensor<4x8xf32> {kiln.input = 0 : i64}, %w: tensor<8x4xf32> {kiln.state = "w"})
    -> (tensor<4x4xf32> {kiln.output = 0 : i64})
    attributes {kiln.arena_bytes = 128 : i64, kiln.naive_bytes = 128 : i64} {
  %mm = call @schedule_kernel_0(%x, %w) {kiln.offsets = array<i64: 0>}
      : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %e = call @schedule_kernel_1(%mm) {kiln.offsets = array<i64: 64>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = call @schedule_kernel_2(%e) {kiln.offsets = array<i64: -1>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
func.func private @schedule_kernel_0(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32>
    attributes {kiln.kernel = "library"} {
  %0 = kiln.matmul %a, %b : tensor<4x8xf32>, tensor<8x4xf32>
  return %0 : tensor<4x4xf32>
}
func.func private @schedule_kernel_1(%a: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {kiln.kernel = "fusion"} {
  %0 = kiln.exp %a : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
func.func private @schedule_kernel_2(%a: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {kiln.kernel = "fusion"} {
  %0 = kiln.neg %a : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
