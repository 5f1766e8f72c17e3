// kiln-fuse's report (kiln-opt --kiln-fuse-report): one remark per group, on its root,
// and a note on each producer the group left out saying why.
// RUN: kiln-opt %s --kiln-fuse-report -verify-diagnostics

func.func @reasons(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-remark@+2 {{fusion of 1 ops (0 duplicated), 0 producer(s) left out}}
  // expected-note@+1 {{not fused: kiln.exp has a user before the group's root and is too costly to recompute}}
  %e = kiln.exp %x : tensor<4x4xf32>
  // expected-note@+1 {{not fused: kiln.matmul is not fusible}}
  %m = kiln.matmul %e, %w : tensor<4x4xf32>, tensor<4x4xf32>
  // expected-remark@+2 {{fusion of 1 ops (0 duplicated), 0 producer(s) left out}}
  // expected-note@+1 {{not fused: kiln.reduce is a reduction that does not reduce trailing dims of the root's shape}}
  %s = kiln.reduce sum %x, dims = [0] : tensor<4x4xf32>
  %b = kiln.broadcast_in_dim %s, dims = [1], shape = [4, 4] : tensor<4xf32>
  %a = kiln.add %m, %b : tensor<4x4xf32>
  // expected-remark@+1 {{fusion of 3 ops (0 duplicated), 3 producer(s) left out}}
  %r = kiln.mul %a, %e : tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// A row reduction joins its consumer's group, which says so.
func.func @rows(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %s = kiln.reduce sum %x, dims = [1] : tensor<4x4xf32>
  %b = kiln.broadcast_in_dim %s, dims = [0], shape = [4, 4] : tensor<4xf32>
  // expected-remark@+1 {{fusion of 3 ops (0 duplicated), 0 producer(s) left out, row fusion over 1 leading dim(s)}}
  %r = kiln.sub %x, %b : tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// A row reduction whose value is also returned would give the row group two results:
// the group grows again without row reductions, and the reduction is a group of its own.
func.func @reduction_returned(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>) {
  // expected-remark@+2 {{fusion of 1 ops (0 duplicated), 0 producer(s) left out}}
  // expected-note@+1 {{not fused: kiln.reduce is a reduction and row fusion is off for this group}}
  %s = kiln.reduce sum %x, dims = [1] : tensor<4x4xf32>
  %b = kiln.broadcast_in_dim %s, dims = [0], shape = [4, 4] : tensor<4xf32>
  // expected-remark@+1 {{fusion of 2 ops (0 duplicated), 1 producer(s) left out, row fusion abandoned: the group would have 2 results}}
  %r = kiln.sub %x, %b : tensor<4x4xf32>
  return %r, %s : tensor<4x4xf32>, tensor<4xf32>
}
