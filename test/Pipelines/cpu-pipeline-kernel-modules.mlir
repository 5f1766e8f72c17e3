// RUN: kiln-opt %s --kiln-cpu-pipeline | FileCheck %s
// RUN: kiln-opt %s --kiln-cpu-pipeline | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM

// Each kernel is lowered in a module of its own (on several threads), then the modules
// are joined: what two kernels declare alike (kiln_rt_parallel_for, malloc) or define
// alike (math-to-funcs' integer power, which both kernels use) is there once, and the
// joined module still translates to LLVM IR.

// CHECK:       module {
// CHECK-NOT:   module
// CHECK:       llvm.func @kiln_main(
// CHECK:       llvm.func @main_kernel_0(
// CHECK:       llvm.func linkonce_odr @__mlir_math_ipowi_i32(
// CHECK:       llvm.func @main_kernel_1(
// CHECK:         llvm.call @__mlir_math_ipowi_i32(
// CHECK-NOT:   @__mlir_math_ipowi_i32(%{{.*}}: i32

// LLVM:     define void @kiln_main(
// LLVM:     define linkonce_odr i32 @__mlir_math_ipowi_i32(
// LLVM-NOT: define {{.*}} @__mlir_math_ipowi_i32

func.func @main(%a: tensor<1024xi32> {kiln.input = 0 : i64},
                %b: tensor<1024xi32> {kiln.input = 1 : i64},
                %c: tensor<2048xi32> {kiln.input = 2 : i64},
                %d: tensor<2048xi32> {kiln.input = 3 : i64})
    -> (tensor<1024xi32> {kiln.output = 0 : i64}, tensor<2048xi32> {kiln.output = 1 : i64}) {
  %p = kiln.pow %a, %b : tensor<1024xi32>
  %q = kiln.pow %c, %d : tensor<2048xi32>
  return %p, %q : tensor<1024xi32>, tensor<2048xi32>
}
