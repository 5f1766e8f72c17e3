// RUN: kiln-opt %s --kiln-convert-to-linalg -split-input-file -verify-diagnostics

// Ops kiln-convert-to-linalg cannot lower fail the pass with an error naming
// them, never a crash.

// scatter_add with 0-d indices (one slice added at one index): no pattern.
func.func @scatter_add_scalar_index(%u: tensor<3xf32>, %i: tensor<i64>) -> tensor<10x3xf32> {
  // expected-error@+2 {{'kiln.scatter_add' op cannot be converted to linalg: 0-d indices}}
  // expected-error@+1 {{failed to legalize operation 'kiln.scatter_add'}}
  %0 = kiln.scatter_add %u[%i], dim = 0, size = 10 : tensor<3xf32>, tensor<i64>
  return %0 : tensor<10x3xf32>
}
