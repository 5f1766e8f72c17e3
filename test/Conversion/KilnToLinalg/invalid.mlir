// RUN: kiln-opt %s --kiln-convert-to-linalg -split-input-file -verify-diagnostics

// Ops kiln-convert-to-linalg cannot lower fail the pass with an error naming
// them, never a crash: scatter_add has no pattern (the host runs it with the
// eager kernel; kiln-fuse never puts it in a kernel), static or not.

func.func @scatter_add(%u: tensor<4x3xf32>, %i: tensor<4xi64>) -> tensor<10x3xf32> {
  // expected-error@+1 {{failed to legalize operation 'kiln.scatter_add'}}
  %0 = kiln.scatter_add %u[%i], dim = 0, size = 10 : tensor<4x3xf32>, tensor<4xi64>
  return %0 : tensor<10x3xf32>
}

// -----

func.func @scatter_add_dynamic(%u: tensor<?xf32>, %i: tensor<?xi64>, %n: index) -> tensor<?xf32> {
  // expected-error@+1 {{failed to legalize operation 'kiln.scatter_add'}}
  %0 = kiln.scatter_add %u[%i], dim = 0, size = %n : tensor<?xf32>, tensor<?xi64>
  return %0 : tensor<?xf32>
}
