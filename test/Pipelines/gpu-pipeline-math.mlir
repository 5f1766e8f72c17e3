// RUN: kiln-opt %s --kiln-gpu-pipeline | FileCheck %s
// RUN: not kiln-opt %s --kiln-gpu-pipeline="cuda-home=%t.no-cuda" 2>&1 | FileCheck %s --check-prefix=NOLIB

// kiln-gpu-pipeline on the math that NVVM lowers by other routes than the f32 chain of
// gpu-pipeline-elementwise.mlir: |x| of an i64 tensor (convert-gpu-to-nvvm leaves
// math.absi as it is; kiln-gpu-math-intrinsics makes it llvm.intr.abs, PTX abs.s64) and
// exp of an f64 tensor (a libdevice call, __nv_exp, that gpu-module-to-binary links from
// the CUDA toolkit's nvvm/libdevice/libdevice.10.bc and LLVM inlines: libdevice's fma
// polynomial, no call, no .extern). abs_i64 of test/gpu:GpuPipelineAssembleTest failed
// in gpu-module-to-binary before kiln-gpu-math-intrinsics lowered math.absi.

// Without libdevice the pipeline fails on the kernel that needs it, rather than leave
// PTX with an unresolved .extern __nv_exp that ptxas rejects.
// NOLIB: error: kiln-gpu-pipeline: __nv_exp needs CUDA's libdevice

// CHECK:       module @kiln_kernels attributes {gpu.container_module}
// CHECK:         gpu.binary @main_kernel_0_kernel
// CHECK-SAME:      .entry main_kernel_0_kernel(
// CHECK-SAME:      abs.s64
// CHECK:         gpu.binary @main_kernel_1_kernel
// CHECK-SAME:      .entry main_kernel_1_kernel(
// CHECK-SAME:      fma.rn.f64 {{.*}}, 0d3FF71547652B82FE,
// CHECK-NOT:     __nv_
// CHECK-NOT:     .extern
// CHECK-NOT:     gpu.module

func.func @main(%x: tensor<1000xi64> {kiln.input = 0 : i64},
                %y: tensor<1000xf64> {kiln.input = 1 : i64})
    -> (tensor<1000xi64> {kiln.output = 0 : i64}, tensor<1000xf64> {kiln.output = 1 : i64}) {
  %a = kiln.abs %x : tensor<1000xi64>
  %e = kiln.exp %y : tensor<1000xf64>
  return %a, %e : tensor<1000xi64>, tensor<1000xf64>
}
