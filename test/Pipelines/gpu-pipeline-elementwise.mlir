// RUN: kiln-opt %s --kiln-gpu-pipeline | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-pipeline --mlir-print-ir-after=convert-gpu-to-nvvm 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=NVVM
// RUN: kiln-opt %s --kiln-gpu-pipeline="chip=sm_80" | FileCheck %s --check-prefix=SM80

// kiln-gpu-pipeline on the elementwise chain of cpu-pipeline.mlir (bias + scale + GELU
// in its tanh form + scale): one fused kernel, one launch, one thread per element of
// the [256, 1024] result (the two dims collapsed: 1024 blocks of 256 threads), the
// host schedule left as planning left it, the kernel's PTX embedded in a gpu.binary.
// tanh is a polynomial and its fma/fabs are PTX instructions, not libdevice calls; the
// division of its rational form is div.approx.f32 (kiln-approximate-math's
// approximate-division), not the IEEE div.rn.f32 sequence.

// CHECK-LABEL: func.func @main(
// CHECK:         call @main_kernel_0(%{{.*}}, %{{.*}}) {kiln.offsets = array<i64: -1>} : (tensor<1024xf32>, tensor<256x1024xf32>) -> tensor<256x1024xf32>
// CHECK:       func.func private @main_kernel_0(tensor<1024xf32>, tensor<256x1024xf32>) -> tensor<256x1024xf32> attributes {kiln.kernel = "fusion"
// CHECK:       module @kiln_kernels attributes {gpu.container_module}
// CHECK:         func.func @main_kernel_0(%[[B:.*]]: memref<1024xf32>, %[[X:.*]]: memref<256x1024xf32>, %[[OUT:.*]]: memref<256x1024xf32>) attributes {kiln.kernel = "fusion"
// CHECK-NOT:       memref.alloc
// CHECK:           gpu.launch_func @main_kernel_0_kernel::@main_kernel_0_kernel blocks in (%c1024, %c1, %c1) threads in (%c256, %c1, %c1) args(%[[X]] : memref<256x1024xf32>, %[[B]] : memref<1024xf32>, %[[OUT]] : memref<256x1024xf32>)
// CHECK-NEXT:      return
// CHECK:         gpu.binary @main_kernel_0_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">
// CHECK-SAME:      .version 8.0
// CHECK-SAME:      .target sm_90
// CHECK-SAME:      .entry main_kernel_0_kernel(
// CHECK-SAME:      %ctaid.x
// CHECK-SAME:      %tid.x
// CHECK-SAME:      fma.rn.f32
// CHECK-SAME:      div.approx.f32
// CHECK-NOT:     div.rn.f32
// CHECK-NOT:     __nv_
// CHECK-NOT:     gpu.module

// NVVM:      gpu.module @main_kernel_0_kernel
// NVVM:        llvm.func @main_kernel_0_kernel(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>, gpu.known_grid_size = array<i32: 1024, 1, 1>, nvvm.kernel
// NVVM:          nvvm.read.ptx.sreg.ctaid.x
// NVVM:          nvvm.read.ptx.sreg.tid.x

// SM80:      gpu.binary @main_kernel_0_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">
// SM80-SAME:   .target sm_80
// SM80-SAME:   .entry main_kernel_0_kernel(

func.func @main(%x: tensor<256x1024xf32> {kiln.input = 0 : i64},
                %bias: tensor<1024xf32> {kiln.state = "bias"})
    -> (tensor<256x1024xf32> {kiln.output = 0 : i64}) {
  %bb = kiln.broadcast_in_dim %bias, dims = [1], shape = [256, 1024] : tensor<1024xf32>
  %biased = kiln.add %x, %bb : tensor<256x1024xf32>
  %scale = kiln.constant dense<1.5> : tensor<256x1024xf32>
  %v = kiln.mul %biased, %scale : tensor<256x1024xf32>
  %half = kiln.constant dense<0.5> : tensor<256x1024xf32>
  %one = kiln.constant dense<1.0> : tensor<256x1024xf32>
  %k = kiln.constant dense<0.0447149985> : tensor<256x1024xf32>
  %c = kiln.constant dense<0.797884583> : tensor<256x1024xf32>
  %v2 = kiln.mul %v, %v : tensor<256x1024xf32>
  %v3 = kiln.mul %v2, %v : tensor<256x1024xf32>
  %kv3 = kiln.mul %v3, %k : tensor<256x1024xf32>
  %inner = kiln.add %v, %kv3 : tensor<256x1024xf32>
  %scaled = kiln.mul %inner, %c : tensor<256x1024xf32>
  %th = kiln.tanh %scaled : tensor<256x1024xf32>
  %th1 = kiln.add %th, %one : tensor<256x1024xf32>
  %hv = kiln.mul %v, %half : tensor<256x1024xf32>
  %gelu = kiln.mul %hv, %th1 : tensor<256x1024xf32>
  %out = kiln.mul %gelu, %scale : tensor<256x1024xf32>
  return %out : tensor<256x1024xf32>
}
