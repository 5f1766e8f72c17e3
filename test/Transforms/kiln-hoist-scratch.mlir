// RUN: kiln-opt %s --split-input-file --kiln-hoist-scratch | FileCheck %s

// kiln-hoist-scratch: a static alloc freed in its own loop body moves before the loop and
// its dealloc after it, outward through every serial loop; the iterations reuse it.

// CHECK-LABEL: func.func @tile_scratch(
// CHECK:         %[[TILE:.*]] = memref.alloc() : memref<32x1024xf32>
// CHECK-NEXT:    %[[ACC:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32xf64>
// CHECK-NEXT:    scf.for
// CHECK-NOT:       memref.alloc
// CHECK-NOT:       memref.dealloc
// CHECK:           scf.parallel
// CHECK-NOT:         memref.alloc
// CHECK-NOT:         memref.dealloc
// CHECK:         }
// CHECK:         memref.dealloc %[[ACC]]
// CHECK-NEXT:    memref.dealloc %[[TILE]]
// CHECK-NEXT:    return
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
// (a conditional free), one allocated under an scf.if, and one that is never freed
// there (it outlives the iteration).
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

// A chunk function's loop: the buffer moves to the chunk's entry, never out of it (each
// thread's call has its own).
// CHECK-LABEL: func.func private @kernel_chunk_0(
// CHECK:         %[[S:.*]] = memref.alloc() : memref<1024xf32>
// CHECK:         scf.for
// CHECK-NOT:       memref.alloc
// CHECK:         }
// CHECK-NEXT:    memref.dealloc %[[S]]
// CHECK-NEXT:    return
func.func private @kernel_chunk_0(%captures: !llvm.ptr, %begin: index, %end: index) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  scf.for %k = %begin to %end step %c1 {
    %s = memref.alloc() : memref<1024xf32>
    memref.store %z, %s[%c0] : memref<1024xf32>
    memref.dealloc %s : memref<1024xf32>
  }
  return
}
