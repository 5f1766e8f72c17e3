// RUN: kiln-opt %s --kiln-convert-to-linalg -split-input-file -verify-diagnostics

// Ops kiln-convert-to-linalg cannot lower fail the pass with an error naming
// them (here: data movement and reductions on `?` dims), never a crash.

func.func @transpose_dynamic(%x: tensor<?x3xf32>) -> tensor<3x?xf32> {
  // expected-error@+2 {{'kiln.transpose' op cannot be converted to linalg: 'tensor<?x3xf32>' has dynamic dimensions}}
  // expected-error@+1 {{failed to legalize operation 'kiln.transpose'}}
  %0 = kiln.transpose %x, permutation = [1, 0] : tensor<?x3xf32>
  return %0 : tensor<3x?xf32>
}

// -----

func.func @reduce_dynamic(%x: tensor<4x?xf32>) -> tensor<4xf32> {
  // expected-error@+2 {{'kiln.reduce' op cannot be converted to linalg: 'tensor<4x?xf32>' has dynamic dimensions}}
  // expected-error@+1 {{failed to legalize operation 'kiln.reduce'}}
  %0 = kiln.reduce sum %x, dims = [1] : tensor<4x?xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @broadcast_dynamic(%x: tensor<?xf32>) -> tensor<4x3xf32> {
  // expected-error@+2 {{'kiln.broadcast_in_dim' op cannot be converted to linalg: 'tensor<?xf32>' has dynamic dimensions}}
  // expected-error@+1 {{failed to legalize operation 'kiln.broadcast_in_dim'}}
  %0 = kiln.broadcast_in_dim %x, dims = [1], shape = [4, 3] : tensor<?xf32>
  return %0 : tensor<4x3xf32>
}
