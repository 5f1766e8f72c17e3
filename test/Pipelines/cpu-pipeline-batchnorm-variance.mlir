// RUN: kiln-opt %s --kiln-cpu-pipeline | mlir-translate --mlir-to-llvmir \
// RUN:   | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S | FileCheck %s

// BatchNorm's training variance on NCHW 16x16 planes: sum over N, H and W of
// (x - mean)^2 in the eager kernels' float32 pairs. The blocks of 32 read two rows of a
// plane where they lie (no reshape of the squares), and the squares are fused into the
// sum's 32 operands, so they are computed in the sum's loop: no scratch of the input's
// size is stored and read back (it had been, 6 MB per call at MobileNetV2's sizes).

// CHECK-LABEL: define void @main_kernel_0(
// CHECK-NOT:     @malloc(i64 262{{[0-9]*}})
// CHECK:         %[[MEAN:.*]] = shufflevector <16 x float> %{{.*}}, <16 x float> poison, <16 x i32> zeroinitializer
// CHECK:         %[[A:.*]] = load <16 x float>
// CHECK:         %[[B:.*]] = load <16 x float>
// CHECK-DAG:     %[[DA:.*]] = fsub <16 x float> %[[A]], %[[MEAN]]
// CHECK-DAG:     %[[DB:.*]] = fsub <16 x float> %[[B]], %[[MEAN]]
// CHECK-DAG:     %[[SA:.*]] = fmul <16 x float> %[[DA]], %[[DA]]
// CHECK-DAG:     %[[SB:.*]] = fmul <16 x float> %[[DB]], %[[DB]]
// CHECK:         %[[P:.*]] = fadd <16 x float> %{{.*}}, %{{.*}}
// CHECK:         fpext <16 x float> %[[P]] to <16 x double>
// CHECK:         ret void
func.func @main(%x: tensor<8x32x16x16xf32> {kiln.input = 0 : i64}, %m: tensor<1x32x1x1xf32> {kiln.input = 1 : i64}) -> (tensor<1x32x1x1xf32> {kiln.output = 0 : i64}) {
  %b = kiln.broadcast_in_dim %m, dims = [0, 1, 2, 3], shape = [8, 32, 16, 16] : tensor<1x32x1x1xf32>
  %d = kiln.sub %x, %b : tensor<8x32x16x16xf32>
  %q = kiln.mul %d, %d : tensor<8x32x16x16xf32>
  %s = kiln.reduce sum %q, dims = [0, 2, 3] keep_dims : tensor<8x32x16x16xf32>
  return %s : tensor<1x32x1x1xf32>
}
