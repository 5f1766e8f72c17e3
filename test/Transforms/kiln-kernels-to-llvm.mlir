// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-kernels-to-llvm{bare-pointers=true},reconcile-unrealized-casts)' | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-kernels-to-llvm,reconcile-unrealized-casts)' | FileCheck %s --check-prefix=DESC

// The CPU kernels' last conversion, one dialect conversion with upstream's patterns
// (passes/pipelines/KernelsToLLVM.cpp): memref, arith (ceildivsi expanded, as
// convert-arith-to-llvm does: dynamic kernels' tile counts), cf and func to LLVM; math to an
// LLVM intrinsic where there is one (exp), else a libm call (f64 erf), and integer powers
// to math-to-funcs' function, which runs first only where such an op is. With
// bare-pointers each buffer is one pointer; without, an MLIR memref descriptor.

// CHECK:       llvm.func @erf(f64) -> f64
// CHECK-LABEL: llvm.func @kernel(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK:         llvm.intr.exp
// CHECK:         llvm.call @erf(
// CHECK:         llvm.call @__mlir_math_ipowi_i32(
// CHECK:         llvm.sdiv
// CHECK:         llvm.cond_br
// CHECK:         llvm.return
// CHECK:       llvm.func linkonce_odr @__mlir_math_ipowi_i32(
// CHECK-NOT:   func.func
// CHECK-NOT:   memref.
// CHECK-NOT:   math.
// CHECK-NOT:   arith.
// CHECK-NOT:   cf.
// CHECK-NOT:   builtin.unrealized_conversion_cast

// DESC-LABEL: llvm.func @kernel(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64,
// DESC:         llvm.intr.exp
// DESC:         llvm.call @erf(
// DESC:         llvm.call @__mlir_math_ipowi_i32(
// DESC-NOT:   func.func
// DESC-NOT:   builtin.unrealized_conversion_cast

func.func @kernel(%x: memref<16xf32>, %y: memref<16xf64>, %n: memref<16xi32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<16xf32>
  %e = math.exp %v : f32
  memref.store %e, %x[%c0] : memref<16xf32>
  %w = memref.load %y[%c0] : memref<16xf64>
  %t = math.erf %w : f64
  memref.store %t, %y[%c0] : memref<16xf64>
  %i = memref.load %n[%c0] : memref<16xi32>
  %p = math.ipowi %i, %i : i32
  %zero = arith.constant 0 : i32
  %k = arith.ceildivsi %p, %i : i32
  %neg = arith.cmpi slt, %k, %zero : i32
  cf.cond_br %neg, ^bb1, ^bb2
^bb1:
  memref.store %zero, %n[%c0] : memref<16xi32>
  cf.br ^bb2
^bb2:
  memref.store %p, %n[%c0] : memref<16xi32>
  return
}
