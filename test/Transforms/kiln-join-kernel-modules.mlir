// RUN: kiln-opt %s --kiln-join-kernel-modules | FileCheck %s

// Kernels lowered each in a module of their own join into one: a declaration both have is
// kept once, a private constant whose name the other module took for another value is
// renamed (with its uses), and each kernel keeps its own constant.

// CHECK-LABEL: module {
// CHECK-NOT:   module
// CHECK:       llvm.func @malloc(i64) -> !llvm.ptr
// CHECK:       llvm.mlir.global private constant @__constant_2xf32(dense<[1.000000e+00, 2.000000e+00]>
// CHECK:       llvm.func @main_kernel_0(
// CHECK:         llvm.mlir.addressof @__constant_2xf32 :
// CHECK-NOT:   llvm.func @malloc
// CHECK:       llvm.mlir.global private constant @[[RENAMED:__constant_2xf32_[0-9]+]](dense<[5.000000e+00, 6.000000e+00]>
// CHECK:       llvm.func @main_kernel_1(
// CHECK:         llvm.mlir.addressof @[[RENAMED]] :
// CHECK-NOT:   llvm.func @malloc

module {
  module {
    llvm.func @malloc(i64) -> !llvm.ptr
    llvm.mlir.global private constant @__constant_2xf32(dense<[1.0, 2.0]> : tensor<2xf32>) : !llvm.array<2 x f32>
    llvm.func @main_kernel_0(%out: !llvm.ptr) {
      %c = llvm.mlir.addressof @__constant_2xf32 : !llvm.ptr
      %v = llvm.load %c : !llvm.ptr -> f32
      llvm.store %v, %out : f32, !llvm.ptr
      llvm.return
    }
  }
  module {
    llvm.func @malloc(i64) -> !llvm.ptr
    llvm.mlir.global private constant @__constant_2xf32(dense<[5.0, 6.0]> : tensor<2xf32>) : !llvm.array<2 x f32>
    llvm.func @main_kernel_1(%out: !llvm.ptr) {
      %c = llvm.mlir.addressof @__constant_2xf32 : !llvm.ptr
      %v = llvm.load %c : !llvm.ptr -> f32
      llvm.store %v, %out : f32, !llvm.ptr
      llvm.return
    }
  }
}
