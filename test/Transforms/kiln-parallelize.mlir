// RUN: kiln-opt %s --kiln-parallelize | FileCheck %s
// RUN: kiln-opt %s --kiln-parallelize=min-elements=100000000 | FileCheck %s --check-prefix=SERIAL

// kiln-parallelize: each outermost scf.parallel with at least `min-elements` iterations
// (all loop levels together) runs its first dimension through kiln_rt_parallel_for: the
// body moves into @<function>_chunk_<n>(captures, begin, end); memrefs and indices travel
// in a stack struct, constants are cloned. Smaller loops stay serial.

// With a higher bar, the static loops below stay serial (dynamic ones decide at run time).
// SERIAL-LABEL: func.func @elementwise(
// SERIAL-NOT:     kiln_rt_parallel_for
// SERIAL:         scf.parallel
// SERIAL-LABEL: func.func @rows(
// SERIAL-NOT:     kiln_rt_parallel_for
// SERIAL:         scf.parallel
// SERIAL:         scf.parallel
// SERIAL-NOT:     kiln_rt_parallel_for
// SERIAL:         return

// CHECK: func.func private @kiln_rt_parallel_for((!llvm.ptr, index, index) -> (), !llvm.ptr, i64, i64)

// 512 rows of 1024: the rows are split, each row stays a parallel loop inside its chunk.
// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: memref<512x1024xf32>, %[[B:[a-z0-9_]+]]: memref<1024xf32>, %[[OUT:[a-z0-9_]+]]: memref<512x1024xf32>)
// CHECK:         %[[CAPTURES:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>)>
// CHECK:         %[[XD:.*]] = builtin.unrealized_conversion_cast %[[X]] : memref<512x1024xf32> to !llvm.struct
// CHECK:         %[[SLOT0:.*]] = llvm.getelementptr %[[CAPTURES]][0, 0]
// CHECK:         llvm.store %[[XD]], %[[SLOT0]]
// CHECK:         builtin.unrealized_conversion_cast %[[B]]
// CHECK:         llvm.getelementptr %[[CAPTURES]][0, 1]
// CHECK:         builtin.unrealized_conversion_cast %[[OUT]]
// CHECK:         llvm.getelementptr %[[CAPTURES]][0, 2]
// CHECK-NOT:     scf.parallel
// CHECK:         %[[FN:.*]] = constant @elementwise_chunk_0 : (!llvm.ptr, index, index) -> ()
// CHECK:         call @kiln_rt_parallel_for(%[[FN]], %[[CAPTURES]], %{{.*}}, %{{.*}}) : ((!llvm.ptr, index, index) -> (), !llvm.ptr, i64, i64) -> ()
// CHECK-NEXT:    return

// CHECK-LABEL: func.func private @elementwise_chunk_0(
// CHECK-SAME:      %[[C:[a-z0-9_]+]]: !llvm.ptr, %[[BEGIN:[a-z0-9_]+]]: index, %[[END:[a-z0-9_]+]]: index)
// CHECK-DAG:     %[[SCALE:.*]] = arith.constant 2.000000e+00 : f32
// CHECK:         %[[XS:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK:         %[[XM:.*]] = builtin.unrealized_conversion_cast %[[XS]] : {{.*}} to memref<512x1024xf32>
// CHECK:         scf.for %[[K:.*]] = %[[BEGIN]] to %[[END]]
// CHECK:           %[[I:.*]] = arith.addi
// CHECK:           scf.parallel (%[[J:.*]]) =
// CHECK:             memref.load %[[XM]][%[[I]], %[[J]]]
// CHECK:             arith.mulf %{{.*}}, %[[SCALE]]
// CHECK:             memref.store
func.func @elementwise(%x: memref<512x1024xf32>, %b: memref<1024xf32>, %out: memref<512x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %c1024 = arith.constant 1024 : index
  %scale = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c512, %c1024) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<512x1024xf32>
    %w = memref.load %b[%j] : memref<1024xf32>
    %s = arith.addf %v, %w : f32
    %r = arith.mulf %s, %scale : f32
    memref.store %r, %out[%i, %j] : memref<512x1024xf32>
    scf.reduce
  }
  return
}

// The fill (512 iterations) stays serial. The row sums run in parallel over rows; the
// reduction loop over a row stays whole inside the chunk, never split.
// CHECK-LABEL: func.func @rows(
// CHECK:         scf.parallel
// CHECK:           memref.store
// CHECK:         %[[FN:.*]] = constant @rows_chunk_0
// CHECK:         call @kiln_rt_parallel_for(%[[FN]],
// CHECK-LABEL: func.func private @rows_chunk_0(
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK:             memref.load
// CHECK:             arith.addf
// CHECK:             memref.store
// CHECK-NOT:     scf.parallel
// CHECK:         return
func.func @rows(%x: memref<512x1024xf32>, %out: memref<512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c512) step (%c1) {
    memref.store %zero, %out[%i] : memref<512xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c512) step (%c1) {
    scf.for %j = %c0 to %c1024 step %c1 {
      %v = memref.load %x[%i, %j] : memref<512x1024xf32>
      %a = memref.load %out[%i] : memref<512xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %out[%i] : memref<512xf32>
    }
    scf.reduce
  }
  return
}

// Dynamic bounds: the work is computed at run time, and the loop runs through
// kiln_rt_parallel_for only when it is at least min-elements (scf.if; else the same
// chunk runs all iterations on the calling thread: no second copy of the loop). The
// chunk runs iterations k of [begin, end) at lb + k * step; lb comes through the
// captures as i64.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME:      %[[N:[a-z0-9_]+]]: index, %[[LB:[a-z0-9_]+]]: index)
// CHECK:         %[[WSPAN:.*]] = arith.subi %[[N]], %[[LB]] : index
// CHECK:         %[[WTRIPS:.*]] = arith.ceildivsi %[[WSPAN]], %{{.*}} : index
// CHECK:         %[[WORK:.*]] = arith.maxsi %[[WTRIPS]], %{{.*}} : index
// CHECK:         %[[MIN:.*]] = arith.constant 32768 : index
// CHECK:         %[[LARGE:.*]] = arith.cmpi sge, %[[WORK]], %[[MIN]] : index
// CHECK:         %[[LB64:.*]] = arith.index_cast %[[LB]] : index to i64
// CHECK:         llvm.store %[[LB64]]
// CHECK:         %[[SPAN:.*]] = arith.subi %[[N]], %[[LB]] : index
// CHECK:         %[[TRIPS:.*]] = arith.ceildivsi %[[SPAN]], %{{.*}} : index
// CHECK:         %[[CLAMPED:.*]] = arith.maxsi %[[TRIPS]]
// CHECK:         scf.if %[[LARGE]] {
// CHECK:           %[[END:.*]] = arith.index_cast %[[CLAMPED]] : index to i64
// CHECK:           call @kiln_rt_parallel_for(%{{.*}}, %{{.*}}, %{{.*}}, %[[END]])
// CHECK:         } else {
// CHECK-NEXT:      call @dynamic_chunk_0(%{{.*}}, %{{.*}}, %[[CLAMPED]]) : (!llvm.ptr, index, index) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    return
// CHECK-LABEL: func.func private @dynamic_chunk_0(
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK:         %[[LBI:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK:         %[[LBX:.*]] = arith.index_cast %[[LBI]] : i64 to index
// CHECK:         scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           %[[SCALED:.*]] = arith.muli %[[K]], %[[C3]] : index
// CHECK:           %[[I:.*]] = arith.addi %[[LBX]], %[[SCALED]] : index
// CHECK:           memref.store %{{.*}}, %{{.*}}[%[[I]]] : memref<?xf32>
// SERIAL-LABEL: func.func @dynamic(
// SERIAL:         arith.cmpi sge, %{{.*}}, %{{.*}} : index
// SERIAL:         scf.if
func.func @dynamic(%x: memref<?xf32>, %n: index, %lb: index) {
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%lb) to (%n) step (%c3) {
    memref.store %one, %x[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// Row sums of `?` rows: the work is rows times the row's 1024 (the loop nest inside),
// so 32 rows or more go parallel.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: memref<?x1024xf32>
// CHECK:         %[[ROWS:.*]] = memref.dim %[[X]]
// CHECK:         %[[SPAN:.*]] = arith.subi %[[ROWS]], %{{.*}} : index
// CHECK:         %[[TRIPS:.*]] = arith.ceildivsi %[[SPAN]], %{{.*}} : index
// CHECK:         %[[N:.*]] = arith.maxsi %[[TRIPS]], %{{.*}} : index
// CHECK:         %[[ROW:.*]] = arith.constant 1024 : index
// CHECK:         %[[INNER:.*]] = arith.maxsi %[[ROW]], %{{.*}} : index
// CHECK:         %[[BODY:.*]] = arith.maxsi %{{.*}}, %[[INNER]] : index
// CHECK:         %[[WORK:.*]] = arith.muli %[[N]], %[[BODY]] : index
// CHECK:         arith.cmpi sge, %[[WORK]], %{{.*}} : index
// CHECK:         scf.if
// CHECK:           call @kiln_rt_parallel_for(
// CHECK:         } else {
// CHECK-NEXT:      call @dynamic_rows_chunk_0(
// CHECK-NOT:     scf.parallel
// CHECK-LABEL: func.func private @dynamic_rows_chunk_0(
func.func @dynamic_rows(%x: memref<?x1024xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %rows = memref.dim %x, %c0 : memref<?x1024xf32>
  scf.parallel (%i) = (%c0) to (%rows) step (%c1) {
    scf.for %j = %c0 to %c1024 step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x1024xf32>
      %a = memref.load %out[%i] : memref<?xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %out[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return
}

// A trip count computed inside the loop (kiln-tile-rows' tile of rows, cut short at
// the end by affine.min) counts at its largest, the tile size: 64 per tile.
// CHECK-LABEL: func.func @dynamic_tiles(
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: memref<?xf32>, %[[N:[a-z0-9_]+]]: index)
// CHECK:         %[[SPAN:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK:         %[[TRIPS:.*]] = arith.ceildivsi %[[SPAN]], %{{.*}} : index
// CHECK:         %[[TILES:.*]] = arith.maxsi %[[TRIPS]], %{{.*}} : index
// CHECK:         %[[TILE:.*]] = arith.constant 64 : index
// CHECK:         %[[WORK:.*]] = arith.muli %[[TILES]], %{{.*}} : index
// CHECK:         arith.cmpi sge, %[[WORK]], %{{.*}} : index
// CHECK:         scf.if
// CHECK:           call @kiln_rt_parallel_for(
// CHECK:         } else {
// CHECK-NEXT:      call @dynamic_tiles_chunk_0(
func.func @dynamic_tiles(%x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%t) = (%c0) to (%n) step (%c64) {
    %size = affine.min affine_map<(d0)[s0] -> (64, s0 - d0)>(%t)[%n]
    scf.for %j = %c0 to %size step %c1 {
      %i = arith.addi %t, %j : index
      memref.store %one, %x[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return
}

// A trip count computed inside the loop with no constant bound cannot be known
// before the loop runs: the loop counts as large and goes parallel unconditionally,
// and nothing of the attempt to count it is left.
// CHECK-LABEL: func.func @dynamic_unbounded(
// CHECK:         llvm.alloca
// CHECK-NOT:     arith.ceildivsi
// CHECK:         llvm.store
// CHECK-NOT:     scf.if
// CHECK:         arith.ceildivsi
// CHECK-NOT:     scf.if
// CHECK:         call @kiln_rt_parallel_for(
func.func @dynamic_unbounded(%x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%t) = (%c0) to (%n) step (%c64) {
    %left = arith.subi %n, %t : index
    %size = arith.minsi %left, %c64 : index
    scf.for %j = %c0 to %size step %c1 {
      %i = arith.addi %t, %j : index
      memref.store %one, %x[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return
}

// A leading dimension of extent 1 is not worth splitting: the next one is.
// CHECK-LABEL: func.func @leading_unit(
// CHECK:         %[[SPAN:.*]] = arith.subi %[[C65536:.*]], %{{.*}} : index
// CHECK:         call @kiln_rt_parallel_for(
// CHECK-LABEL: func.func private @leading_unit_chunk_0(
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK:         scf.for
// CHECK:           %[[J:.*]] = arith.addi
// CHECK:           memref.store %{{.*}}, %{{.*}}[%[[C0]], %[[J]]] : memref<1x65536xf32>
func.func @leading_unit(%x: memref<1x65536xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c65536 = arith.constant 65536 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1, %c65536) step (%c1, %c1) {
    memref.store %one, %x[%i, %j] : memref<1x65536xf32>
    scf.reduce
  }
  return
}

// Small loops (here 64 x 256 = 16384 iterations) stay as they are.
// CHECK-LABEL: func.func @small(
// CHECK-NOT:     kiln_rt_parallel_for
// CHECK:         scf.parallel
// CHECK-NOT:     kiln_rt_parallel_for
// CHECK:         return
func.func @small(%x: memref<64x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c256) step (%c1, %c1) {
    memref.store %one, %x[%i, %j] : memref<64x256xf32>
    scf.reduce
  }
  return
}
