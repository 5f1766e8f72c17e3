// RUN: kiln-opt %s --kiln-gpu-pipeline | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-pipeline | FileCheck %s --check-prefix=PTX
// RUN: kiln-opt %s --kiln-gpu-pipeline --mlir-print-ir-after=convert-parallel-loops-to-gpu 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=LAUNCH

// kiln-gpu-pipeline on softmax over rows of 1024: kiln-fuse makes one row fusion, and
// kiln-gpu-row-kernels runs it as one launch, a block of 256 threads per row doing the
// kernel's ops in order with a barrier between two: the max's fill, the row max (each
// thread folds every 256th element, gpu.all_reduce combines them: warp shuffles, then
// shared memory), the row sum in f64 over the float32 pairs as on the CPU (16 lanes, each
// reduced by the block), the lanes combined (thread 0), the division. exp(x - max) is read
// by the sum and by the division: kiln-fuse-generics{recompute} computes it in each, so
// no full-size scratch holds it. The row maxima and the lanes are scratch the host-side
// kernel function allocates (memref.alloc, to become the device arena in the host slice)
// before the launch and frees after it.

// CHECK:       module @kiln_kernels attributes {gpu.container_module}
// CHECK:         func.func @main_kernel_0(%[[X:.*]]: memref<64x1024xf32>, %[[OUT:.*]]: memref<64x1024xf32>) attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64
// CHECK:           %[[MAX:.*]] = memref.alloc() {{.*}} : memref<64x1xf32>
// CHECK-NOT:       memref<64x1024xf32>
// CHECK-COUNT-17:  memref.alloc() {{.*}} : memref<64x1xf64>
// CHECK-NEXT:      gpu.launch_func @main_kernel_0_kernel::@main_kernel_0_kernel blocks in (%c64, %c1, %c1) threads in (%c256, %c1, %c1) args(%[[MAX]] : memref<64x1xf32>, %[[X]] : memref<64x1024xf32>, {{.*}}, %[[OUT]] : memref<64x1024xf32>)
// CHECK-NOT:       gpu.launch_func
// CHECK:           memref.dealloc %[[MAX]]
// CHECK-COUNT-17:  memref.dealloc
// CHECK-NEXT:      return
// CHECK:         gpu.binary @main_kernel_0_kernel{{.*}}chip = "sm_90"{{.*}}.target sm_90{{.*}}.entry main_kernel_0_kernel(
// CHECK-NOT:     gpu.binary
// CHECK-NOT:     __nv_

// In the PTX, the block's partials are combined by butterfly shuffles within each warp,
// then across warps through shared memory after a barrier.
// PTX:           gpu.binary @main_kernel_0_kernel
// PTX-SAME:        .maxntid 256, 1, 1
// PTX-SAME:        max.NaN.f32
// PTX-SAME:        shfl.sync.bfly.b32
// PTX-SAME:        bar.sync

// LAUNCH:      gpu.launch blocks
// LAUNCH:        scf.for
// LAUNCH:          memref.store %{{.*}} : memref<64x1xf32>
// LAUNCH:        gpu.barrier
// LAUNCH:        gpu.all_reduce maximumf
// LAUNCH:        scf.if
// LAUNCH:          arith.maximumf
// LAUNCH:          memref.store %{{.*}} : memref<64x1xf32>
// LAUNCH:        gpu.barrier
// LAUNCH-NOT:      memref.store %{{.*}} : memref<64x1024xf32>
// LAUNCH-COUNT-16: gpu.all_reduce add %{{.*}} uniform
// LAUNCH:        gpu.barrier
// LAUNCH:          memref.store %{{.*}} : memref<64x1xf64>
// LAUNCH:        gpu.barrier
// LAUNCH:          memref.store %{{.*}} : memref<64x1024xf32>
// LAUNCH-NEXT:   }
// LAUNCH-NEXT:   gpu.terminator
// LAUNCH-NOT:  gpu.launch blocks

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
