// RUN: kiln-opt %s --kiln-gpu-row-kernels --split-input-file | FileCheck %s

// A row kernel (x - max(x) over rows of 1000): one launch's loops, a block per row (8),
// 256 threads (1000 elements a row, at most block-size), the ops in order with a barrier
// between two: the fill and the subtraction split the row's elements among the threads,
// the max is folded by the block. The scratch's allocation moves before the loops, its
// deallocation after them.

// CHECK-LABEL: func.func @max_shift
// CHECK-SAME:    (%[[X:.*]]: memref<8x1000xf32>, %[[OUT:.*]]: memref<8x1000xf32>)
// CHECK:         %[[MAX:.*]] = memref.alloc() : memref<8x1xf32>
// CHECK:         scf.parallel (%[[ROW:.*]]) = (%{{.*}}) to (%c8)
// CHECK:           scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%c256)
// CHECK:             scf.for %{{.*}} = %[[T]] to %c1{{(_[0-9]+)?}} step %c256
// CHECK:               memref.store %{{.*}}, %[[MAX]]
// CHECK:             gpu.barrier
// CHECK:             %[[PART:.*]] = scf.for %{{.*}} = %[[T]] to %c1000{{(_[0-9]+)?}} step %c256{{(_[0-9]+)?}} iter_args
// CHECK:               memref.load %[[X]]
// CHECK:               arith.maximumf
// CHECK:             gpu.all_reduce maximumf %[[PART]] uniform
// CHECK:             scf.if
// CHECK:               memref.store %{{.*}}, %[[MAX]]
// CHECK:             gpu.barrier
// CHECK:             scf.for %{{.*}} = %[[T]] to %c1000{{(_[0-9]+)?}} step %c256{{(_[0-9]+)?}}
// CHECK:               memref.load %[[X]]
// CHECK:               memref.load %[[MAX]]
// CHECK:               arith.subf
// CHECK:               memref.store %{{.*}}, %[[OUT]]
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NEXT:    memref.dealloc %[[MAX]]
// CHECK-NEXT:    return
// CHECK-NOT:     linalg.generic
func.func @max_shift(%x: memref<8x1000xf32>, %out: memref<8x1000xf32>) attributes {kiln.row_dims = 1 : i64} {
  %ninf = arith.constant 0xFF800000 : f32
  %max = memref.alloc() : memref<8x1xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      outs(%max : memref<8x1xf32>) {
  ^bb0(%o: f32):
    linalg.yield %ninf : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d0)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<8x1000xf32>) outs(%max : memref<8x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : memref<8x1000xf32>, memref<8x1xf32>) outs(%out : memref<8x1000xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %s = arith.subf %in, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %max : memref<8x1xf32>
  return
}

// -----

// Left as they are: a kernel without kiln.row_dims; one whose second op reads the scratch
// the first wrote at another row (a transpose: another block's row); one with a view.

// CHECK-LABEL: func.func @not_a_row_kernel
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT:     gpu.barrier
func.func @not_a_row_kernel(%x: memref<8x8xf32>, %out: memref<8x8xf32>) {
  %t = memref.alloc() : memref<8x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x8xf32>) outs(%t : memref<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<8x8xf32>) outs(%out : memref<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  memref.dealloc %t : memref<8x8xf32>
  return
}

// CHECK-LABEL: func.func @reads_another_row
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT:     gpu.barrier
func.func @reads_another_row(%x: memref<8x8xf32>, %out: memref<8x8xf32>) attributes {kiln.row_dims = 1 : i64} {
  %t = memref.alloc() : memref<8x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x8xf32>) outs(%t : memref<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<8x8xf32>) outs(%out : memref<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  memref.dealloc %t : memref<8x8xf32>
  return
}

// CHECK-LABEL: func.func @through_a_view
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT:     gpu.barrier
func.func @through_a_view(%x: memref<8x8xf32>, %out: memref<64xf32>) attributes {kiln.row_dims = 1 : i64} {
  %t = memref.alloc() : memref<8x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x8xf32>) outs(%t : memref<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  %flat = memref.collapse_shape %t [[0, 1]] : memref<8x8xf32> into memref<64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%flat : memref<64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  memref.dealloc %t : memref<8x8xf32>
  return
}
