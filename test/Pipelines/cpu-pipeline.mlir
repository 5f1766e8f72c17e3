// RUN: kiln-opt %s --kiln-cpu-pipeline | FileCheck %s --check-prefix=MLIR
// RUN: kiln-opt %s --kiln-cpu-pipeline | mlir-translate --mlir-to-llvmir \
// RUN:   | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S | FileCheck %s

// kiln-cpu-pipeline end to end on BENCHMARKS.md's elementwise chain: bias + scale +
// GELU (tanh form) + scale fuse into one kernel; its 256 rows run through
// kiln_rt_parallel_for (one chunk function), tanh is a polynomial (no libm call), and
// LLVM's O3 for an AVX2 machine vectorizes the chunk's row loop to 8 floats a step.

// MLIR-NOT:   math.
// MLIR-NOT:   llvm.call @tanhf
// MLIR:       llvm.func @kiln_main(
// MLIR:         llvm.call @main_kernel_0(
// MLIR:       llvm.func @kiln_rt_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64)
// MLIR:       llvm.func @main_kernel_0(
// MLIR:         %[[FN:.*]] = llvm.mlir.addressof @main_kernel_0_chunk_0 : !llvm.ptr
// MLIR:         llvm.call @kiln_rt_parallel_for(%[[FN]], %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
// MLIR:       llvm.func @main_kernel_0_chunk_0(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64)
// MLIR-NOT:   llvm.call

// CHECK-LABEL: define void @kiln_main(
// CHECK:         call void @kiln_rt_parallel_for(ptr nonnull @main_kernel_0_chunk_0, ptr nonnull %{{.*}}, i64 0, i64 256)
// CHECK-LABEL: define void @main_kernel_0_chunk_0(
// CHECK-NOT:     call
// CHECK:         load <8 x float>
// CHECK:         fadd <8 x float>
// CHECK:         fmul <8 x float>
// CHECK:         call <8 x float> @llvm.fma.v8f32(
// CHECK:         store <8 x float>
// CHECK-NOT:     call {{.*}}@tanhf
// CHECK:         ret void

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
