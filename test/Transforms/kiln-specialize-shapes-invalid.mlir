// RUN: kiln-opt %s --kiln-specialize-shapes="shapes=4x5" -split-input-file -verify-diagnostics

// expected-error@+1 {{'func.func' op argument 0 of type 'tensor<?x6xf32>' cannot have shape [4, 5]}}
func.func @static_dim_differs(%x: tensor<?x6xf32>) -> tensor<?x6xf32> {
  return %x : tensor<?x6xf32>
}

// -----

// A reshape whose element count does not fit the call's sizes is an error at the op.
func.func @reshape_count(%x: tensor<?x5xf32>) -> tensor<?x2xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x5xf32>
  // expected-error@+1 {{'kiln.reshape' op 'shape' [4, 2] has 8 elements but operand 'x' with shape [4, 5] has 20}}
  %r = kiln.reshape %x, shape = [%n, 2] : tensor<?x5xf32>
  return %r : tensor<?x2xf32>
}

// -----

func.func @negative_size(%x: tensor<?x5xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x5xf32>
  %c9 = arith.constant 9 : index
  %m = arith.subi %n, %c9 : index
  %z = kiln.constant dense<0.0> : tensor<f32>
  // expected-error@+1 {{'kiln.broadcast_in_dim' op has a negative size -5 at these shapes}}
  %b = kiln.broadcast_in_dim %z, dims = [], shape = [%m] : tensor<f32>
  return %b : tensor<?xf32>
}
