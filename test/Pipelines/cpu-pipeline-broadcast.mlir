// RUN: kiln-opt %s --kiln-cpu-pipeline | mlir-translate --mlir-to-llvmir \
// RUN:   | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S | FileCheck %s

// A BatchNorm-and-ReLU6 kernel on NCHW 8x8 planes (MobileNetV2's): the per-channel scale
// rsqrt(var * c + eps) * gamma is computed once per channel (kiln-fuse-generics; it had
// been a square root and a division per pixel), and the per-pixel loop runs over each
// whole 8x8 plane (kiln-collapse-dims; an innermost loop of 8 had been unrolled and left
// scalar), so LLVM vectorizes it with the channel's values splatted.

// CHECK-LABEL: define void @main_kernel_0(
// The per-channel loop: the only square roots in the kernel.
// CHECK:         call <8 x float> @llvm.sqrt.v8f32
// The per-pixel loop: vectors of a plane's pixels against the channel's splats.
// CHECK:       vector.body{{[0-9]+}}:
// CHECK:         %[[MEAN:.*]] = shufflevector <8 x float> %{{.*}}, <8 x float> poison, <8 x i32> zeroinitializer
// CHECK:         %[[X:.*]] = load <8 x float>
// CHECK:         fsub <8 x float> %[[X]], %[[MEAN]]
// CHECK-NOT:     sqrt
// CHECK:       middle.block{{[0-9]+}}:
func.func @main(%arg0: tensor<1x32x1x1xf32> {kiln.input = 0 : i64}, %arg1: tensor<2x32x8x8xf32> {kiln.input = 1 : i64}, %arg2: tensor<1x32x1x1xf32> {kiln.input = 2 : i64}, %arg3: tensor<1x32x1x1xf32> {kiln.input = 3 : i64}, %arg4: tensor<1x32x1x1xf32> {kiln.input = 4 : i64}) -> (tensor<2x32x8x8xf32> {kiln.output = 0 : i64}) {
    %0 = kiln.constant dense<6.000000e+00> : tensor<2x32x8x8xf32>
    %1 = kiln.constant dense<9.99999974E-6> : tensor<1x32x1x1xf32>
    %2 = kiln.constant dense<2.44140625E-4> : tensor<1x32x1x1xf32>
    %3 = kiln.broadcast_in_dim %arg0, dims = [0, 1, 2, 3], shape = [2, 32, 8, 8] : tensor<1x32x1x1xf32>
    %4 = kiln.sub %arg1, %3 : tensor<2x32x8x8xf32>
    %5 = kiln.mul %arg2, %2 : tensor<1x32x1x1xf32>
    %6 = kiln.add %5, %1 : tensor<1x32x1x1xf32>
    %7 = kiln.rsqrt %6 : tensor<1x32x1x1xf32>
    %8 = kiln.mul %7, %arg3 : tensor<1x32x1x1xf32>
    %9 = kiln.broadcast_in_dim %8, dims = [0, 1, 2, 3], shape = [2, 32, 8, 8] : tensor<1x32x1x1xf32>
    %10 = kiln.mul %4, %9 : tensor<2x32x8x8xf32>
    %11 = kiln.broadcast_in_dim %arg4, dims = [0, 1, 2, 3], shape = [2, 32, 8, 8] : tensor<1x32x1x1xf32>
    %12 = kiln.add %10, %11 : tensor<2x32x8x8xf32>
    %13 = kiln.relu %12 : tensor<2x32x8x8xf32>
    %14 = kiln.compare ge, %12, %0 : tensor<2x32x8x8xf32>
    %15 = kiln.select %14, %0, %13 : tensor<2x32x8x8xi1>, tensor<2x32x8x8xf32>
    return %15 : tensor<2x32x8x8xf32>
}
