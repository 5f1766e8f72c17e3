// RUN: kiln-opt %s --kiln-gpu-pipeline | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-pipeline --mlir-print-ir-before=convert-parallel-loops-to-gpu 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=LOOPS

// gpu-pipeline-elementwise.mlir's chain on [1024, 1024]: 2^20 elements, a multiple of 4
// blocks of 256, so each thread takes 4 elements at a stride of the block size (1024
// blocks of 256 threads, not 4096), cloned in straight-line code with the stores after all
// the loads, so the thread's 8 loads are in flight together. (256x1024 in
// gpu-pipeline-elementwise.mlir stays one element a thread.)

// LOOPS:       scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%c1048576) step (%c1024{{.*}}) {
// LOOPS-NEXT:    scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%c256) step (%{{.*}}) {
// LOOPS-NEXT:      %[[I0:.*]] = arith.addi %[[B]], %[[T]] : index
// LOOPS-NOT:       memref.store
// LOOPS:           memref.load
// LOOPS-NOT:       memref.store
// LOOPS:           arith.addi %[[I0]], %c256{{.*}} : index
// LOOPS-NOT:       memref.store
// LOOPS:           arith.addi %[[I0]], %c512{{.*}} : index
// LOOPS-NOT:       memref.store
// LOOPS:           arith.addi %[[I0]], %c768{{.*}} : index
// LOOPS-NOT:       memref.store
// LOOPS:           memref.load
// LOOPS-NEXT:      memref.load
// LOOPS-NOT:       memref.load
// LOOPS:           memref.store
// LOOPS-NEXT:      memref.store
// LOOPS-NEXT:      memref.store
// LOOPS-NEXT:      memref.store
// LOOPS-NEXT:      scf.reduce
// LOOPS-NEXT:    } {mapping = [#gpu.loop_dim_map<processor = thread_x
// LOOPS-NEXT:    scf.reduce
// LOOPS-NEXT:  } {mapping = [#gpu.loop_dim_map<processor = block_x

// The PTX: 1024 blocks, and in the thread the 8 loads (x and the bias, 4 each) before
// the 4 stores.
// CHECK:       gpu.launch_func @main_kernel_0_kernel::@main_kernel_0_kernel blocks in (%c1024, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK:       gpu.binary @main_kernel_0_kernel
// CHECK-SAME:    .entry main_kernel_0_kernel(
// CHECK-NOT:     st.global
// CHECK-SAME:    ld.global
// CHECK-SAME:    ld.global
// CHECK-SAME:    ld.global
// CHECK-SAME:    ld.global
// CHECK-SAME:    ld.global
// CHECK-SAME:    ld.global
// CHECK-SAME:    ld.global
// CHECK-SAME:    ld.global
// CHECK-SAME:    st.global
// CHECK-SAME:    st.global
// CHECK-SAME:    st.global
// CHECK-SAME:    st.global

func.func @main(%x: tensor<1024x1024xf32> {kiln.input = 0 : i64},
                %bias: tensor<1024xf32> {kiln.state = "bias"})
    -> (tensor<1024x1024xf32> {kiln.output = 0 : i64}) {
  %bb = kiln.broadcast_in_dim %bias, dims = [1], shape = [1024, 1024] : tensor<1024xf32>
  %biased = kiln.add %x, %bb : tensor<1024x1024xf32>
  %scale = kiln.constant dense<1.5> : tensor<1024x1024xf32>
  %v = kiln.mul %biased, %scale : tensor<1024x1024xf32>
  %half = kiln.constant dense<0.5> : tensor<1024x1024xf32>
  %one = kiln.constant dense<1.0> : tensor<1024x1024xf32>
  %k = kiln.constant dense<0.0447149985> : tensor<1024x1024xf32>
  %c = kiln.constant dense<0.797884583> : tensor<1024x1024xf32>
  %v2 = kiln.mul %v, %v : tensor<1024x1024xf32>
  %v3 = kiln.mul %v2, %v : tensor<1024x1024xf32>
  %kv3 = kiln.mul %v3, %k : tensor<1024x1024xf32>
  %inner = kiln.add %v, %kv3 : tensor<1024x1024xf32>
  %scaled = kiln.mul %inner, %c : tensor<1024x1024xf32>
  %th = kiln.tanh %scaled : tensor<1024x1024xf32>
  %th1 = kiln.add %th, %one : tensor<1024x1024xf32>
  %hv = kiln.mul %v, %half : tensor<1024x1024xf32>
  %gelu = kiln.mul %hv, %th1 : tensor<1024x1024xf32>
  %out = kiln.mul %gelu, %scale : tensor<1024x1024xf32>
  return %out : tensor<1024x1024xf32>
}
