// RUN: kiln-opt %s --kiln-merge-kernels --split-input-file | FileCheck %s

// kiln-merge-kernels: the ops of the lowered `module @kiln_kernels` move into the host
// module. A kernel's definition replaces the host's declaration of it; an external function
// both sides declare (malloc) is kept once; what only the kernels have (globals, libm
// declarations) moves as is. The nested module is gone.

// CHECK-LABEL: module {
// CHECK-NEXT:    llvm.func @kiln_rt_host_op(!llvm.ptr, i64, !llvm.ptr, !llvm.ptr)
// CHECK-NEXT:    llvm.func @kiln_main(%[[ARGS:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK:           llvm.call @main_kernel_0(%{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:      llvm.call @main_kernel_1(%{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:      llvm.return
// CHECK-NEXT:    }
// CHECK-NEXT:    llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-NEXT:    llvm.mlir.global private constant @half(5.000000e-01 : f32) {addr_space = 0 : i32} : f32
// CHECK-NEXT:    llvm.func @expf(f32) -> f32
// CHECK-NEXT:    llvm.func @main_kernel_0(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {kiln.kernel = "fusion"} {
// CHECK:           llvm.call @expf(
// CHECK:           llvm.return
// CHECK-NEXT:    }
// CHECK-NEXT:    llvm.func @main_kernel_1(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {kiln.kernel = "fusion"} {
// CHECK:           llvm.mlir.addressof @half : !llvm.ptr
// CHECK:           llvm.return
// CHECK-NEXT:    }
// CHECK-NEXT:  }
module {
  llvm.func @kiln_rt_host_op(!llvm.ptr, i64, !llvm.ptr, !llvm.ptr)
  llvm.func @kiln_main(%args: !llvm.ptr, %results: !llvm.ptr, %arena: !llvm.ptr, %constants: !llvm.ptr,
                       %runtime: !llvm.ptr) attributes {kiln.arena_bytes = 64 : i64} {
    %0 = llvm.getelementptr %args[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
    %x = llvm.load %0 : !llvm.ptr -> !llvm.ptr
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %e = llvm.getelementptr %arena[%c0] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %1 = llvm.getelementptr %results[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
    %y = llvm.load %1 : !llvm.ptr -> !llvm.ptr
    llvm.call @main_kernel_0(%x, %e) : (!llvm.ptr, !llvm.ptr) -> ()
    llvm.call @main_kernel_1(%e, %y) : (!llvm.ptr, !llvm.ptr) -> ()
    llvm.return
  }
  module @kiln_kernels {
    llvm.func @malloc(i64) -> !llvm.ptr
    llvm.mlir.global private constant @half(0.5 : f32) : f32
    llvm.func @expf(f32) -> f32
    llvm.func @main_kernel_0(%in: !llvm.ptr, %out: !llvm.ptr) attributes {kiln.kernel = "fusion"} {
      %v = llvm.load %in : !llvm.ptr -> f32
      %r = llvm.call @expf(%v) : (f32) -> f32
      llvm.store %r, %out : f32, !llvm.ptr
      llvm.return
    }
    llvm.func @main_kernel_1(%in: !llvm.ptr, %out: !llvm.ptr) attributes {kiln.kernel = "fusion"} {
      %h = llvm.mlir.addressof @half : !llvm.ptr
      %a = llvm.load %h : !llvm.ptr -> f32
      %v = llvm.load %in : !llvm.ptr -> f32
      %r = llvm.fmul %a, %v : f32
      llvm.store %r, %out : f32, !llvm.ptr
      llvm.return
    }
  }
  llvm.func @malloc(i64) -> !llvm.ptr
  llvm.func @main_kernel_0(!llvm.ptr, !llvm.ptr)
  llvm.func @main_kernel_1(!llvm.ptr, !llvm.ptr)
}

// -----

// Without a kernels module (a schedule of host ops only) nothing changes; other nested
// modules are not kernels.
// CHECK-LABEL: module {
// CHECK-NEXT:    llvm.func @kiln_rt_host_op(!llvm.ptr, i64, !llvm.ptr, !llvm.ptr)
// CHECK-NEXT:    module @other {
// CHECK-NEXT:      llvm.func @helper()
// CHECK-NEXT:    }
// CHECK-NEXT:  }
module {
  llvm.func @kiln_rt_host_op(!llvm.ptr, i64, !llvm.ptr, !llvm.ptr)
  module @other {
    llvm.func @helper()
  }
}
