// RUN: kiln-opt %s --kiln-convert-to-linalg -split-input-file | FileCheck %s

// kiln-convert-to-linalg on data movement: broadcast_in_dim (a linalg.generic
// with a projected input map), reshape, transpose, slice, concat and gather.

// A new dim is not read; a size-1 dim is read at index 0.
// CHECK-DAG:   #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @broadcast(
// CHECK-SAME:    %[[R:.*]]: tensor<3xf32>, %[[C:.*]]: tensor<4x1xf32>)
// CHECK:         %[[INIT:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK:         %[[B0:.*]] = linalg.generic {indexing_maps = [#[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:      ins(%[[R]] : tensor<3xf32>) outs(%[[INIT]] : tensor<4x3xf32>)
// CHECK:         ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK:           linalg.yield %[[IN]] : f32
// CHECK:         %[[B1:.*]] = linalg.generic {indexing_maps = [#[[COL]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:      ins(%[[C]] : tensor<4x1xf32>)
// CHECK:         return %[[B0]], %[[B1]]
func.func @broadcast(%r: tensor<3xf32>, %c: tensor<4x1xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = kiln.broadcast_in_dim %r, dims = [1], shape = [4, 3] : tensor<3xf32>
  %1 = kiln.broadcast_in_dim %c, dims = [0, 1], shape = [4, 3] : tensor<4x1xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// A scalar broadcast reads nothing but the scalar.
// CHECK-DAG:   #[[SCALAR:.*]] = affine_map<(d0, d1, d2) -> ()>
// CHECK-LABEL: func.func @broadcast_scalar(
// CHECK:         linalg.generic {indexing_maps = [#[[SCALAR]], #{{.*}}]
// CHECK-SAME:      ins(%{{.*}} : tensor<i32>) outs(%{{.*}} : tensor<2x3x4xi32>)
func.func @broadcast_scalar(%s: tensor<i32>) -> tensor<2x3x4xi32> {
  %0 = kiln.broadcast_in_dim %s, dims = [], shape = [2, 3, 4] : tensor<i32>
  return %0 : tensor<2x3x4xi32>
}

// -----

// CHECK-LABEL: func.func @reshape(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x4xf32>, %[[S:.*]]: tensor<f32>)
// CHECK:         %[[COLLAPSED:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK:         %[[EXPANDED:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [2, 3, 2, 2] : tensor<2x3x4xf32> into tensor<2x3x2x2xf32>
// No direct regrouping of 2x3x4 into 4x6: through rank 1.
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK:         %[[THROUGH:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
// CHECK:         %[[ONES:.*]] = tensor.expand_shape %[[S]] [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
// CHECK:         %[[SCALAR:.*]] = tensor.collapse_shape %[[ONES]] [] : tensor<1x1xf32> into tensor<f32>
// A reshape to the same shape (clone) is its operand.
// CHECK:         return %[[COLLAPSED]], %[[EXPANDED]], %[[THROUGH]], %[[SCALAR]], %[[X]]
func.func @reshape(%x: tensor<2x3x4xf32>, %s: tensor<f32>)
    -> (tensor<6x4xf32>, tensor<2x3x2x2xf32>, tensor<4x6xf32>, tensor<f32>, tensor<2x3x4xf32>) {
  %0 = kiln.reshape %x, shape = [6, 4] : tensor<2x3x4xf32>
  %1 = kiln.reshape %x, shape = [2, 3, 2, 2] : tensor<2x3x4xf32>
  %2 = kiln.reshape %x, shape = [4, 6] : tensor<2x3x4xf32>
  %3 = kiln.reshape %s, shape = [1, 1] : tensor<f32>
  %4 = kiln.reshape %3, shape = [] : tensor<1x1xf32>
  %5 = kiln.reshape %x, shape = [2, 3, 4] : tensor<2x3x4xf32>
  return %0, %1, %2, %4, %5 : tensor<6x4xf32>, tensor<2x3x2x2xf32>, tensor<4x6xf32>, tensor<f32>, tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @transpose(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK:         %[[INIT:.*]] = tensor.empty() : tensor<4x2x3xf32>
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[INIT]] : tensor<4x2x3xf32>) permutation = [2, 0, 1]
// CHECK:         return %[[T]]
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = kiln.transpose %x, permutation = [2, 0, 1] : tensor<2x3x4xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @slice(
// CHECK-SAME:    %[[X:.*]]: tensor<5x6xf32>)
// CHECK:         %[[S:.*]] = tensor.extract_slice %[[X]][1, 0] [2, 3] [2, 2] : tensor<5x6xf32> to tensor<2x3xf32>
// CHECK:         return %[[S]]
func.func @slice(%x: tensor<5x6xf32>) -> tensor<2x3xf32> {
  %0 = kiln.slice %x, start = [1, 0], limit = [5, 6], stride = [2, 2] : tensor<5x6xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @concat(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>, %[[Y:.*]]: tensor<4x2xf32>)
// CHECK:         %[[C:.*]] = tensor.concat dim(1) %[[X]], %[[Y]], %[[X]] : (tensor<4x3xf32>, tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x8xf32>
// CHECK:         return %[[C]], %[[X]]
func.func @concat(%x: tensor<4x3xf32>, %y: tensor<4x2xf32>) -> (tensor<4x8xf32>, tensor<4x3xf32>) {
  %0 = kiln.concat(%x, %y, %x) dim = 1 : tensor<4x3xf32>, tensor<4x2xf32>, tensor<4x3xf32>
  %1 = kiln.concat(%x) dim = 0 : tensor<4x3xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x3xf32>
}

// -----

// The index is read at the result dims it fills, clamped into x, and the
// other result dims index x around it.
// CHECK-DAG:   #[[IDX:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
// CHECK-LABEL: func.func @gather(
// CHECK-SAME:    %[[X:.*]]: tensor<5x10x4xf32>, %[[IDS:.*]]: tensor<2x3xi32>)
// CHECK:         %[[INIT:.*]] = tensor.empty() : tensor<5x2x3x4xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[IDX]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME:      ins(%[[IDS]] : tensor<2x3xi32>) outs(%[[INIT]] : tensor<5x2x3x4xf32>)
// CHECK:         ^bb0(%[[ID:.*]]: i32, %{{.*}}: f32):
// CHECK:           %[[I:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK:           %[[C0:.*]] = arith.constant 0 : index
// CHECK:           %[[LO:.*]] = arith.maxsi %[[I]], %[[C0]] : index
// CHECK:           %[[C9:.*]] = arith.constant 9 : index
// CHECK:           %[[IN:.*]] = arith.minsi %[[LO]], %[[C9]] : index
// CHECK:           %[[D0:.*]] = linalg.index 0 : index
// CHECK:           %[[D3:.*]] = linalg.index 3 : index
// CHECK:           %[[E:.*]] = tensor.extract %[[X]][%[[D0]], %[[IN]], %[[D3]]] : tensor<5x10x4xf32>
// CHECK:           linalg.yield %[[E]] : f32
func.func @gather(%x: tensor<5x10x4xf32>, %ids: tensor<2x3xi32>) -> tensor<5x2x3x4xf32> {
  %0 = kiln.gather %x[%ids], dim = 1 : tensor<5x10x4xf32>, tensor<2x3xi32>
  return %0 : tensor<5x2x3x4xf32>
}
