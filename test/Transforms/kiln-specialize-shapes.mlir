// RUN: kiln-opt %s --kiln-specialize-shapes="shapes=4x6,24" | FileCheck %s
// RUN: kiln-opt %s --kiln-specialize-shapes="shapes=7x6,42" | FileCheck %s --check-prefix=SEVEN

// A program with a dynamic batch, as a trace of two sizes records it: sizes come from
// tensor.dim of the arguments and index arithmetic; iota and a spread splat are what
// constants of a dynamic length become (a splat is spread by a broadcast, which stays).
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<4x6xf32>, %[[T:.*]]: tensor<24xi64>)
// CHECK-SAME:    -> (tensor<4x3x2xf32>, tensor<4xi64>, tensor<4x6xf32>, tensor<4xf32>, tensor<4x4xf32>)
// CHECK-NOT:     tensor.dim
// CHECK-NOT:     arith.
// CHECK-NEXT:    %[[R:.*]] = kiln.reshape %[[X]], shape = [4, 3, 2] : tensor<4x6xf32>
// CHECK-NEXT:    %[[I:.*]] = kiln.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
// CHECK-NEXT:    %[[Z:.*]] = kiln.constant dense<1.500000e+00> : tensor<f32>
// CHECK-NEXT:    %[[B:.*]] = kiln.broadcast_in_dim %[[Z]], dims = [], shape = [4, 6] : tensor<f32>
// CHECK-NEXT:    %[[F:.*]] = kiln.reshape %[[X]], shape = [24] : tensor<4x6xf32>
// CHECK-NEXT:    %[[S:.*]] = kiln.scatter_add %[[F]][%[[T]]], dim = 0, size = 4 : tensor<24xf32>, tensor<24xi64>
// CHECK-NEXT:    %[[E:.*]] = kiln.exp %[[S]] : tensor<4xf32>
// CHECK-NEXT:    %[[L:.*]] = kiln.slice %[[X]], start = [0, 2], limit = [4, 6], stride = [1, 1] : tensor<4x6xf32>
// CHECK-NEXT:    return %[[R]], %[[I]], %[[B]], %[[E]], %[[L]]
// SEVEN:         kiln.constant dense<[0, 1, 2, 3, 4, 5, 6]> : tensor<7xi64>
// SEVEN:         kiln.scatter_add {{.*}} size = 7 : tensor<42xf32>, tensor<42xi64>
func.func @main(%x: tensor<?x6xf32>, %t: tensor<?xi64>) -> (tensor<?x3x2xf32>, tensor<?xi64>, tensor<?x6xf32>, tensor<?xf32>, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x6xf32>
  %c6 = arith.constant 6 : index
  %n6 = arith.muli %n, %c6 : index
  %r = kiln.reshape %x, shape = [%n, 3, 2] : tensor<?x6xf32>
  %i = kiln.iota dim = 0, shape = [%n], dtype = i64
  %z = kiln.constant dense<1.5> : tensor<f32>
  %b = kiln.broadcast_in_dim %z, dims = [], shape = [%n, 6] : tensor<f32>
  %f = kiln.reshape %x, shape = [%n6] : tensor<?x6xf32>
  %s = kiln.scatter_add %f[%t], dim = 0, size = %n : tensor<?xf32>, tensor<?xi64>
  %e = kiln.exp %s : tensor<?xf32>
  %l = kiln.slice %x, start = [0, 2], limit = [%n, 6], stride = [1, 1] : tensor<?x6xf32>
  return %r, %i, %b, %e, %l : tensor<?x3x2xf32>, tensor<?xi64>, tensor<?x6xf32>, tensor<?xf32>, tensor<?x4xf32>
}
