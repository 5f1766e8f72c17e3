// RUN: kiln-opt %s --split-input-file --kiln-hoist-scratch | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-hoist-scratch=stack-bytes=0 | FileCheck %s --check-prefix=HEAP
// RUN: kiln-opt %s --split-input-file --kiln-hoist-scratch=stack-budget=1024 | FileCheck %s --check-prefix=BUDGET

// kiln-hoist-scratch: a static alloc freed in its own loop body moves before the loop and
// its dealloc after it, outward through every serial loop; the iterations reuse it. Out
// of every loop, a buffer of at most `stack-bytes` (1 KiB by default) becomes a
// memref.alloca at the function's entry, with no dealloc, while the function's stack
// scratch stays within `stack-budget` (16 KiB).

// CHECK-LABEL: func.func @tile_scratch(
// CHECK-NEXT:    %[[ACC:.*]] = memref.alloca() {alignment = 64 : i64} : memref<32xf64>
// CHECK:         %[[TILE:.*]] = memref.alloc() : memref<32x1024xf32>
// CHECK-NEXT:    scf.for
// CHECK-NOT:       memref.alloc
// CHECK-NOT:       memref.dealloc
// CHECK:           scf.parallel
// CHECK-NOT:         memref.alloc
// CHECK-NOT:         memref.dealloc
// CHECK:             memref.store %{{.*}}, %[[ACC]]
// CHECK-NOT:     memref.dealloc
// CHECK:         memref.dealloc %[[TILE]]
// CHECK-NEXT:    return
// HEAP-LABEL: func.func @tile_scratch(
// HEAP:         %[[TILE:.*]] = memref.alloc() : memref<32x1024xf32>
// HEAP-NEXT:    %[[ACC:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32xf64>
// HEAP-NEXT:    scf.for
// HEAP-NOT:       memref.alloc
// HEAP-NOT:       memref.dealloc
// HEAP:         memref.dealloc %[[ACC]]
// HEAP-NEXT:    memref.dealloc %[[TILE]]
// HEAP-NEXT:    return
func.func @tile_scratch(%out: memref<128x32xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %f = arith.constant 1.0 : f64
  scf.for %t = %c0 to %n step %c1 {
    %tile = memref.alloc() : memref<32x1024xf32>
    scf.parallel (%r) = (%c0) to (%c32) step (%c1) {
      %acc = memref.alloc() {alignment = 64 : i64} : memref<32xf64>
      memref.store %f, %acc[%r] : memref<32xf64>
      %v = memref.load %acc[%r] : memref<32xf64>
      memref.store %v, %out[%t, %r] : memref<128x32xf64>
      memref.dealloc %acc : memref<32xf64>
      scf.reduce
    }
    memref.dealloc %tile : memref<32x1024xf32>
  }
  return
}

// -----

// Left where they are: a size known only in the loop, a buffer freed in another block
// (a conditional free), one allocated under an scf.if (it stays in the loop, so on the
// heap: a stack buffer there would grow the stack each iteration), and one that is
// never freed there (it outlives the iteration).
// CHECK-LABEL: func.func @stays(
// CHECK:         scf.for
// CHECK-NEXT:      %[[DYN:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK-NEXT:      %[[COND:.*]] = memref.alloc() : memref<8xf32>
// CHECK:           scf.if
// CHECK-NEXT:        %[[IF:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:        memref.dealloc %[[IF]]
// CHECK:           scf.if
// CHECK-NEXT:        memref.dealloc %[[COND]]
// CHECK:           %[[KEPT:.*]] = memref.alloc() : memref<2xf32>
// CHECK:           memref.dealloc %[[DYN]]
// CHECK:         }
// CHECK-NEXT:    return
func.func @stays(%n: index, %c: i1, %sink: memref<memref<2xf32>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %dyn = memref.alloc(%i) : memref<?xf32>
    %cond = memref.alloc() : memref<8xf32>
    scf.if %c {
      %if = memref.alloc() : memref<4xf32>
      memref.dealloc %if : memref<4xf32>
    }
    scf.if %c {
      memref.dealloc %cond : memref<8xf32>
    }
    %kept = memref.alloc() : memref<2xf32>
    memref.store %kept, %sink[] : memref<memref<2xf32>>
    memref.dealloc %dyn : memref<?xf32>
  }
  return
}

// -----

// A chunk function's loop: the buffers move to the chunk's entry, never out of it (each
// thread's call has its own). 512 B and 1 KiB go on the stack; 4 KiB stays on the heap,
// hoisted. With a budget of 1 KiB, the second small buffer stays on the heap too.
// CHECK-LABEL: func.func private @kernel_chunk_0(
// CHECK-DAG:     %[[S:.*]] = memref.alloca() : memref<128xf32>
// CHECK-DAG:     %[[T:.*]] = memref.alloca() : memref<128xf64>
// CHECK:         %[[U:.*]] = memref.alloc() : memref<1024xf32>
// CHECK:         scf.for
// CHECK-NOT:       memref.alloc
// CHECK:           memref.store %{{.*}}, %[[S]]
// CHECK:           memref.store %{{.*}}, %[[T]]
// CHECK:           memref.store %{{.*}}, %[[U]]
// CHECK-NOT:       memref.dealloc
// CHECK:         }
// CHECK-NEXT:    memref.dealloc %[[U]]
// CHECK-NEXT:    return
// BUDGET-LABEL: func.func private @kernel_chunk_0(
// BUDGET-NEXT:    %[[S:.*]] = memref.alloca() : memref<128xf32>
// BUDGET:         %[[T:.*]] = memref.alloc() : memref<128xf64>
// BUDGET-NEXT:    %[[U:.*]] = memref.alloc() : memref<1024xf32>
// BUDGET-NEXT:    scf.for
// BUDGET:         memref.dealloc %[[U]]
// BUDGET-NEXT:    memref.dealloc %[[T]]
// BUDGET-NEXT:    return
func.func private @kernel_chunk_0(%captures: !llvm.ptr, %begin: index, %end: index) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %zd = arith.constant 0.0 : f64
  scf.for %k = %begin to %end step %c1 {
    %s = memref.alloc() : memref<128xf32>
    %t = memref.alloc() : memref<128xf64>
    %u = memref.alloc() : memref<1024xf32>
    memref.store %z, %s[%c0] : memref<128xf32>
    memref.store %zd, %t[%c0] : memref<128xf64>
    memref.store %z, %u[%c0] : memref<1024xf32>
    memref.dealloc %u : memref<1024xf32>
    memref.dealloc %t : memref<128xf64>
    memref.dealloc %s : memref<128xf32>
  }
  return
}

// -----

// Scratch of a function's own body, in no loop (a kernel's buffer its chunks share
// while the kernel waits for them): small, on the stack; large, on the heap as it was.
// CHECK-LABEL: func.func @kernel(
// CHECK-NEXT:    %[[SMALL:.*]] = memref.alloca() : memref<16xf64>
// CHECK-NEXT:    %[[LARGE:.*]] = memref.alloc() : memref<65536xf32>
// CHECK-NOT:     memref.dealloc %[[SMALL]]
// CHECK:         memref.dealloc %[[LARGE]]
// CHECK-NEXT:    return
func.func @kernel(%x: memref<16xf64>) {
  %small = memref.alloc() : memref<16xf64>
  %large = memref.alloc() : memref<65536xf32>
  memref.copy %x, %small : memref<16xf64> to memref<16xf64>
  memref.dealloc %large : memref<65536xf32>
  memref.dealloc %small : memref<16xf64>
  return
}
