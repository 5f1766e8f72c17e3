// RUN: kiln-opt %s --kiln-gpu-pipeline | FileCheck %s

// kiln-gpu-pipeline on softmax over rows of 1024: kiln-fuse makes one row fusion, but
// the GPU path does not tile rows yet (kiln-tile-rows' per-tile scratch would be
// allocated inside the device kernel), so each of the kernel's linalg ops is a launch
// of its own, in order on the stream: the row max and the row sum one thread per row
// (64 threads, each looping over its row; the sum in f64 over the float32 pairs, as
// on the CPU: 16 lanes, one buffer each, then one launch combining them), the exp and
// the division one thread per element. The row maxima, the exps, the lanes and the f64
// sums are scratch the host-side kernel function allocates (memref.alloc, to become the
// device arena in the host slice) and frees.

// CHECK:       module @kiln_kernels attributes {gpu.container_module}
// CHECK:         func.func @main_kernel_0(%[[X:.*]]: memref<64x1024xf32>, %[[OUT:.*]]: memref<64x1024xf32>) attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64
// CHECK:           %[[MAX:.*]] = memref.alloc() {{.*}} : memref<64x1xf32>
// CHECK:           gpu.launch_func @main_kernel_0_kernel::@main_kernel_0_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%[[MAX]] : memref<64x1xf32>)
// CHECK:           gpu.launch_func @main_kernel_0_kernel_0::@main_kernel_0_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%[[MAX]] : memref<64x1xf32>, %[[X]] : memref<64x1024xf32>)
// CHECK:           %[[EXP:.*]] = memref.alloc() {{.*}} : memref<64x1024xf32>
// CHECK:           gpu.launch_func @main_kernel_0_kernel_1::@main_kernel_0_kernel blocks in (%c256, %c1, %c1) threads in (%c256, %c1, %c1) args(%[[X]] : memref<64x1024xf32>, %[[MAX]] : memref<64x1xf32>, %[[EXP]] : memref<64x1024xf32>)
// CHECK:           %[[LANE0:.*]] = memref.alloc() {{.*}} : memref<64x1xf64>
// CHECK-COUNT-15:  memref.alloc() {{.*}} : memref<64x1xf64>
// CHECK-NEXT:      gpu.launch_func @main_kernel_0_kernel_2::@main_kernel_0_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%[[LANE0]] : memref<64x1xf64>, {{.*}}, %[[EXP]] : memref<64x1024xf32>)
// CHECK:           %[[SUM:.*]] = memref.alloc() {{.*}} : memref<64x1xf64>
// CHECK:           gpu.launch_func @main_kernel_0_kernel_3::@main_kernel_0_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%[[LANE0]] : memref<64x1xf64>, {{.*}}, %[[SUM]] : memref<64x1xf64>)
// CHECK:           gpu.launch_func @main_kernel_0_kernel_4::@main_kernel_0_kernel blocks in (%c256, %c1, %c1) threads in (%c256, %c1, %c1) args(%[[EXP]] : memref<64x1024xf32>, %[[SUM]] : memref<64x1xf64>, %[[OUT]] : memref<64x1024xf32>)
// CHECK:           memref.dealloc %[[MAX]]
// CHECK:           memref.dealloc %[[EXP]]
// CHECK:           memref.dealloc %[[LANE0]]
// CHECK:           memref.dealloc %[[SUM]]
// CHECK-NEXT:      return
// CHECK-COUNT-6: gpu.binary @main_kernel_0_kernel{{.*}}chip = "sm_90"{{.*}}.target sm_90{{.*}}.entry main_kernel_0_kernel(
// CHECK-NOT:     gpu.binary
// CHECK-NOT:     __nv_

func.func @main(%x: tensor<64x1024xf32> {kiln.input = 0 : i64}) -> (tensor<64x1024xf32> {kiln.output = 0 : i64}) {
  %m = kiln.reduce max %x, dims = [1] keep_dims : tensor<64x1024xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [64, 1024] : tensor<64x1xf32>
  %s = kiln.sub %x, %mb : tensor<64x1024xf32>
  %e = kiln.exp %s : tensor<64x1024xf32>
  %t = kiln.reduce sum %e, dims = [1] keep_dims : tensor<64x1024xf32>
  %tb = kiln.broadcast_in_dim %t, dims = [0, 1], shape = [64, 1024] : tensor<64x1xf32>
  %r = kiln.div %e, %tb : tensor<64x1024xf32>
  return %r : tensor<64x1024xf32>
}
