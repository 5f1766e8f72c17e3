// RUN: kiln-opt %s --kiln-collapse-dims -split-input-file | FileCheck %s

// kiln-collapse-dims on bufferized kernels: an input read through a broadcast's
// constant-0 indices becomes a view of the dims it names, then adjacent loops that every
// map names together, in order, become one loop over views of the same buffers. An NCHW
// per-channel kernel on 3x3 planes gets an innermost loop of 9 instead of 3.

// CHECK-DAG:   #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[CH:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @per_channel(
// CHECK-SAME:      %[[X:.*]]: memref<2x4x3x3xf32>, %[[S:.*]]: memref<1x4x1x1xf32>, %[[OUT:.*]]: memref<2x4x3x3xf32>
// CHECK-DAG:     %[[SV:.*]] = memref.collapse_shape %[[S]] {{\[}}[0, 1, 2, 3]] : memref<1x4x1x1xf32> into memref<4xf32>
// CHECK-DAG:     %[[XV:.*]] = memref.collapse_shape %[[X]] {{\[}}[0], [1], [2, 3]] : memref<2x4x3x3xf32> into memref<2x4x9xf32>
// CHECK-DAG:     %[[OV:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0], [1], [2, 3]] : memref<2x4x3x3xf32> into memref<2x4x9xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[ID3]], #[[CH]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[XV]], %[[SV]] : memref<2x4x9xf32>, memref<4xf32>) outs(%[[OV]] : memref<2x4x9xf32>)
// CHECK:           arith.mulf
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bc4 = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
func.func @per_channel(%x: memref<2x4x3x3xf32>, %s: memref<1x4x1x1xf32>, %out: memref<2x4x3x3xf32>) {
  linalg.generic {indexing_maps = [#id4, #bc4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : memref<2x4x3x3xf32>, memref<1x4x1x1xf32>) outs(%out : memref<2x4x3x3xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %p = arith.mulf %a, %c : f32
    linalg.yield %p : f32
  }
  return
}

// -----

// A scalar broadcast becomes a 0-d view and the whole kernel one loop.
// CHECK-DAG:   #[[ID1:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG:   #[[SC:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @scalar(
// CHECK-DAG:     %[[SV:.*]] = memref.collapse_shape %{{.*}} [] : memref<1x1xf32> into memref<f32>
// CHECK-DAG:     %[[XV:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0, 1]] : memref<4x8xf32> into memref<32xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[ID1]], #[[SC]], #[[ID1]]], iterator_types = ["parallel"]} ins(%[[XV]], %[[SV]] : memref<32xf32>, memref<f32>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#sc2 = affine_map<(d0, d1) -> (0, 0)>
func.func @scalar(%x: memref<4x8xf32>, %s: memref<1x1xf32>, %out: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id2, #sc2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<4x8xf32>, memref<1x1xf32>) outs(%out : memref<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %p = arith.addf %a, %c : f32
    linalg.yield %p : f32
  }
  return
}

// -----

// A transposed read keeps its two outer loops apart; the planes still merge.
// CHECK-DAG:   #[[TR:.*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// CHECK-LABEL: func.func @transposed(
// CHECK:         memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : memref<4x2x3x3xf32> into memref<4x2x9xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[TR]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]}
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#tr4 = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
func.func @transposed(%x: memref<4x2x3x3xf32>, %out: memref<2x4x3x3xf32>) {
  linalg.generic {indexing_maps = [#tr4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<4x2x3x3xf32>) outs(%out : memref<2x4x3x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// Left alone: a buffer with a strided layout (rows 16 apart, 8 used), and any function
// with a reduction (row kernels are tiled by shape later).
// CHECK-LABEL: func.func @strided(
// CHECK-NOT:     memref.collapse_shape
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @strided(%x: memref<4x8xf32, strided<[16, 1]>>, %out: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32, strided<[16, 1]>>) outs(%out : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @with_reduction(
// CHECK-NOT:     memref.collapse_shape
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @with_reduction(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %acc: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<4x8xf32>) outs(%acc : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A constant index into a dim longer than 1 (row 0 of a [4, 8] buffer) is no broadcast:
// that input keeps its shape and map, so the loops stay apart; the broadcast input beside
// it still becomes a view of the dims it names.
// CHECK-DAG:   #[[ROW0:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG:   #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @row_zero(
// CHECK-SAME:      %[[T:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<1x8xf32>
// CHECK:         %[[BV:.*]] = memref.collapse_shape %[[B]] {{\[}}[0, 1]] : memref<1x8xf32> into memref<8xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[ROW0]], #[[COL]], #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[T]], %[[BV]] : memref<4x8xf32>, memref<8xf32>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row0 = affine_map<(d0, d1) -> (0, d1)>
func.func @row_zero(%t: memref<4x8xf32>, %b: memref<1x8xf32>, %out: memref<2x8xf32>) {
  linalg.generic {indexing_maps = [#row0, #row0, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t, %b : memref<4x8xf32>, memref<1x8xf32>) outs(%out : memref<2x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %p = arith.addf %a, %c : f32
    linalg.yield %p : f32
  }
  return
}
