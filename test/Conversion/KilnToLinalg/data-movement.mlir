// RUN: kiln-opt %s --kiln-convert-to-linalg -split-input-file | FileCheck %s

// kiln-convert-to-linalg on data movement: broadcast_in_dim (a linalg.generic
// with a projected input map), reshape, transpose, slice, concat, gather and
// iota; with `?` dims, sized by tensor.dim or by the ops' dynamic size operands.

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

// -----

// `?` sizes: a broadcast's from its shape operand (the batch dim of the operand is
// read along it), a transpose's from tensor.dim of the dim it moves.
// CHECK-DAG:   #[[B:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[R:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @broadcast_transpose_dynamic(
// CHECK-SAME:    %[[X:.*]]: tensor<?xf32>, %[[ROW:.*]]: tensor<4xf32>, %[[M:.*]]: tensor<?x3xf32>, %[[N:.*]]: index)
// CHECK:         %[[E0:.*]] = tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[B]], #{{.*}}], {{.*}} ins(%[[X]] : tensor<?xf32>) outs(%[[E0]] : tensor<?x4xf32>)
// CHECK:         %[[E1:.*]] = tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[R]], #{{.*}}], {{.*}} ins(%[[ROW]] : tensor<4xf32>) outs(%[[E1]] : tensor<?x4xf32>)
// CHECK:         %[[D:.*]] = tensor.dim %[[M]], %{{.*}} : tensor<?x3xf32>
// CHECK:         %[[E2:.*]] = tensor.empty(%[[D]]) : tensor<3x?xf32>
// CHECK:         linalg.transpose ins(%[[M]] : tensor<?x3xf32>) outs(%[[E2]] : tensor<3x?xf32>) permutation = [1, 0]
func.func @broadcast_transpose_dynamic(%x: tensor<?xf32>, %row: tensor<4xf32>, %m: tensor<?x3xf32>, %n: index)
    -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<3x?xf32>) {
  %0 = kiln.broadcast_in_dim %x, dims = [0], shape = [%n, 4] : tensor<?xf32>
  %1 = kiln.broadcast_in_dim %row, dims = [1], shape = [%n, 4] : tensor<4xf32>
  %2 = kiln.transpose %m, permutation = [1, 0] : tensor<?x3xf32>
  return %0, %1, %2 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<3x?xf32>
}

// -----

// Reshapes with one `?` dim a side regroup as static ones (expand_shape takes its
// sizes from the shape operands); otherwise, or with two `?` dims (the types cannot
// tell which dims regroup, even between equal types), through rank 1.
// CHECK-LABEL: func.func @reshape_dynamic(
// CHECK-SAME:    %[[X:.*]]: tensor<?x3xf32>, %[[F:.*]]: tensor<?xf32>, %[[Y:.*]]: tensor<?x6xf32>, %[[Z:.*]]: tensor<?x?xf32>, %[[N:.*]]: index, %[[M:.*]]: index)
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<?x3xf32> into tensor<?xf32>
// CHECK:         %[[ROWS:.*]] = tensor.expand_shape %[[F]] {{\[}}[0, 1]] output_shape [%[[N]], 3] : tensor<?xf32> into tensor<?x3xf32>
// CHECK:         %[[Y1:.*]] = tensor.collapse_shape %[[Y]] {{\[}}[0, 1]] : tensor<?x6xf32> into tensor<?xf32>
// CHECK:         %[[Y2:.*]] = tensor.expand_shape %[[Y1]] {{\[}}[0, 1]] output_shape [%[[N]], 4] : tensor<?xf32> into tensor<?x4xf32>
// CHECK:         %[[Z1:.*]] = tensor.collapse_shape %[[Z]] {{\[}}[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
// CHECK:         %[[Z2:.*]] = tensor.expand_shape %[[Z1]] {{\[}}[0, 1]] output_shape [%[[N]], %[[M]]] : tensor<?xf32> into tensor<?x?xf32>
// CHECK:         return %[[FLAT]], %[[ROWS]], %[[Y2]], %[[Z2]]
func.func @reshape_dynamic(%x: tensor<?x3xf32>, %f: tensor<?xf32>, %y: tensor<?x6xf32>, %z: tensor<?x?xf32>, %n: index, %m: index)
    -> (tensor<?xf32>, tensor<?x3xf32>, tensor<?x4xf32>, tensor<?x?xf32>) {
  %0 = kiln.reshape %x, shape = [%n] : tensor<?x3xf32>
  %1 = kiln.reshape %f, shape = [%n, 3] : tensor<?xf32>
  %2 = kiln.reshape %y, shape = [%n, 4] : tensor<?x6xf32>
  %3 = kiln.reshape %z, shape = [%n, %m] : tensor<?x?xf32>
  return %0, %1, %2, %3 : tensor<?xf32>, tensor<?x3xf32>, tensor<?x4xf32>, tensor<?x?xf32>
}

// -----

// A dynamic slice limit: ceil((limit - start) / stride) elements, at run time.
// concat along a `?` dim is tensor.concat as with static sizes.
// CHECK-LABEL: func.func @slice_concat_dynamic(
// CHECK-SAME:    %[[X:.*]]: tensor<?x3xf32>, %[[Y:.*]]: tensor<?x3xf32>, %[[N:.*]]: index)
// CHECK:         %[[SPAN:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK:         %[[UP:.*]] = arith.addi %[[SPAN]], %{{.*}} : index
// CHECK:         %[[SIZE:.*]] = arith.divui %[[UP]], %{{.*}} : index
// CHECK:         tensor.extract_slice %[[X]][1, 1] {{\[}}%[[SIZE]], 2] [2, 1] : tensor<?x3xf32> to tensor<?x2xf32>
// CHECK:         tensor.concat dim(0) %[[X]], %[[Y]] : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
func.func @slice_concat_dynamic(%x: tensor<?x3xf32>, %y: tensor<?x3xf32>, %n: index)
    -> (tensor<?x2xf32>, tensor<?x3xf32>) {
  %0 = kiln.slice %x, start = [1, 1], limit = [%n, 3], stride = [2, 1] : tensor<?x3xf32>
  %1 = kiln.concat(%x, %y) dim = 0 : tensor<?x3xf32>, tensor<?x3xf32>
  return %0, %1 : tensor<?x2xf32>, tensor<?x3xf32>
}

// -----

// A gather from `?` rows clamps its index into [0, rows - 1] computed at run time; its
// result takes the `?` dim of the indices. iota yields its loop index.
// CHECK-LABEL: func.func @gather_iota_dynamic(
// CHECK-SAME:    %[[X:.*]]: tensor<?x4xf32>, %[[I:.*]]: tensor<?xi64>, %[[N:.*]]: index)
// CHECK:         %[[K:.*]] = tensor.dim %[[I]], %{{.*}} : tensor<?xi64>
// CHECK:         %[[ROWS:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4xf32>
// CHECK:         %[[LAST:.*]] = arith.subi %[[ROWS]], %{{.*}} : index
// CHECK:         %[[CLAMP:.*]] = arith.maxsi %[[LAST]], %{{.*}} : index
// CHECK:         %[[E:.*]] = tensor.empty(%[[K]]) : tensor<?x4xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[I]] : tensor<?xi64>) outs(%[[E]] : tensor<?x4xf32>)
// CHECK:           arith.minsi %{{.*}}, %[[CLAMP]] : index
// CHECK:           tensor.extract %[[X]]
// CHECK:         %[[E2:.*]] = tensor.empty(%[[N]]) : tensor<?x2xf32>
// CHECK:         linalg.generic {{.*}} outs(%[[E2]] : tensor<?x2xf32>)
// CHECK:           %[[IDX:.*]] = linalg.index 0 : index
// CHECK:           %[[I64:.*]] = arith.index_cast %[[IDX]] : index to i64
// CHECK:           arith.sitofp %[[I64]] : i64 to f32
func.func @gather_iota_dynamic(%x: tensor<?x4xf32>, %i: tensor<?xi64>, %n: index)
    -> (tensor<?x4xf32>, tensor<?x2xf32>) {
  %0 = kiln.gather %x[%i], dim = 0 : tensor<?x4xf32>, tensor<?xi64>
  %1 = kiln.iota dim = 0, shape = [%n, 2], dtype = f32
  return %0, %1 : tensor<?x4xf32>, tensor<?x2xf32>
}

// -----

// scatter_add: zeros, then one step per index in order (the eager kernel's order of
// adds into each destination): the slice of the updates at k added into the result's
// slice at indices[k], clamped into [0, size - 1]. 2-d indices are walked row-major.
// CHECK-LABEL: func.func @scatter_add(
// CHECK-SAME:    %[[U:.*]]: tensor<2x?x3xf32>, %[[I:.*]]: tensor<?x3xi64>, %[[N:.*]]: index)
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<2x?xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<2x?xf32>)
// CHECK:         %[[ROWS:.*]] = tensor.dim %[[I]], %{{.*}} : tensor<?x3xi64>
// CHECK:         %[[K:.*]] = arith.muli %[[ROWS]], %{{.*}} : index
// CHECK:         %[[LAST:.*]] = arith.maxsi
// CHECK:         scf.for %[[J:.*]] = %{{.*}} to %[[K]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[Z]]) -> (tensor<2x?xf32>) {
// CHECK:           %[[COL:.*]] = arith.remui %[[J]], %{{.*}} : index
// CHECK:           %[[ROW:.*]] = arith.divui %[[J]], %{{.*}} : index
// CHECK:           %[[IDX:.*]] = tensor.extract %[[I]][%[[ROW]], %[[COL]]] : tensor<?x3xi64>
// CHECK:           %[[CLAMPED:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
// CHECK:           %[[DST:.*]] = tensor.extract_slice %[[ACC]][0, %[[CLAMPED]]] [2, 1] [1, 1]
// CHECK:           %[[SRC:.*]] = tensor.extract_slice %[[U]][0, %[[ROW]], %[[COL]]] [2, 1, 1] [1, 1, 1] : tensor<2x?x3xf32> to tensor<2x1xf32>
// CHECK:           %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[SRC]] : tensor<2x1xf32>) outs(%[[DST]] : tensor<2x1xf32>)
// CHECK:             arith.addf
// CHECK:           %[[NEXT:.*]] = tensor.insert_slice %[[SUM]] into %[[ACC]][0, %[[CLAMPED]]] [2, 1] [1, 1]
// CHECK:           scf.yield %[[NEXT]]
func.func @scatter_add(%u: tensor<2x?x3xf32>, %i: tensor<?x3xi64>, %n: index) -> tensor<2x?xf32> {
  %0 = kiln.scatter_add %u[%i], dim = 1, size = %n : tensor<2x?x3xf32>, tensor<?x3xi64>
  return %0 : tensor<2x?xf32>
}
