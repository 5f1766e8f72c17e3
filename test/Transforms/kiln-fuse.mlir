// kiln-fuse: which ops form kiln.fusion groups, what each group reads and yields.
// RUN: kiln-opt %s --kiln-fuse --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-fuse=max-inputs=2 --split-input-file | FileCheck %s --check-prefix=BOUND

// Softmax: the max, then sub+exp with the sum as epilogue, then the division, which
// recomputes sub+exp from x rather than have the sum's group write exp out (every user of
// exp is fused, so recomputing it saves a store and a load of the whole tensor).
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>
// CHECK:         %[[MAX:.*]] = kiln.fusion(%[[X]]) : (tensor<4x8xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<4x8xf32>):
// CHECK-NEXT:      %[[M:.*]] = kiln.reduce max %[[A]], dims = [1]
// CHECK-NEXT:      kiln.yield %[[M]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[SUM:.*]] = kiln.fusion(%[[MAX]], %[[X]]) : (tensor<4xf32>, tensor<4x8xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[M:.*]]: tensor<4xf32>, %[[A:.*]]: tensor<4x8xf32>):
// CHECK-NEXT:      %[[B:.*]] = kiln.broadcast_in_dim %[[M]]
// CHECK-NEXT:      %[[S:.*]] = kiln.sub %[[A]], %[[B]]
// CHECK-NEXT:      %[[E:.*]] = kiln.exp %[[S]]
// CHECK-NEXT:      %[[T:.*]] = kiln.reduce sum %[[E]], dims = [1]
// CHECK-NEXT:      kiln.yield %[[T]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[DIV:.*]] = kiln.fusion(%[[MAX]], %[[X]], %[[SUM]])
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      kiln.broadcast_in_dim
// CHECK-NEXT:      kiln.sub
// CHECK-NEXT:      kiln.exp
// CHECK-NEXT:      kiln.broadcast_in_dim
// CHECK-NEXT:      kiln.div
// CHECK-NEXT:      kiln.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[DIV]]
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = kiln.reduce max %x, dims = [1] : tensor<4x8xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0], shape = [4, 8] : tensor<4xf32>
  %s = kiln.sub %x, %mb : tensor<4x8xf32>
  %e = kiln.exp %s : tensor<4x8xf32>
  %t = kiln.reduce sum %e, dims = [1] : tensor<4x8xf32>
  %tb = kiln.broadcast_in_dim %t, dims = [0], shape = [4, 8] : tensor<4xf32>
  %r = kiln.div %e, %tb : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A library op is never fused: bias + relu after a matmul form their own group, and a
// splat constant is copied into it rather than read.
// CHECK-LABEL: func.func @linear_relu(
// CHECK-SAME:      %[[X:.*]]: tensor<8x4xf32>, %[[W:.*]]: tensor<4x3xf32>, %[[BIAS:.*]]: tensor<3xf32>
// CHECK-NEXT:    %[[MM:.*]] = kiln.matmul %[[X]], %[[W]]
// CHECK-NEXT:    %[[F:.*]] = kiln.fusion(%[[BIAS]], %[[MM]]) : (tensor<3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32> {
// CHECK-NEXT:    ^bb0(%[[B:.*]]: tensor<3xf32>, %[[M:.*]]: tensor<8x3xf32>):
// CHECK-NEXT:      %[[TWO:.*]] = kiln.constant dense<2.000000e+00> : tensor<8x3xf32>
// CHECK-NEXT:      %[[BB:.*]] = kiln.broadcast_in_dim %[[B]]
// CHECK-NEXT:      %[[ADD:.*]] = kiln.add %[[M]], %[[BB]]
// CHECK-NEXT:      %[[RELU:.*]] = kiln.relu %[[ADD]]
// CHECK-NEXT:      %[[MUL:.*]] = kiln.mul %[[RELU]], %[[TWO]]
// CHECK-NEXT:      kiln.yield %[[MUL]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[F]]
func.func @linear_relu(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %bias: tensor<3xf32>)
    -> tensor<8x3xf32> {
  %two = kiln.constant dense<2.0> : tensor<8x3xf32>
  %mm = kiln.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32>
  %bb = kiln.broadcast_in_dim %bias, dims = [1], shape = [8, 3] : tensor<3xf32>
  %add = kiln.add %mm, %bb : tensor<8x3xf32>
  %relu = kiln.relu %add : tensor<8x3xf32>
  %r = kiln.mul %relu, %two : tensor<8x3xf32>
  return %r : tensor<8x3xf32>
}

// -----

// A cheap producer needed on both sides of a library op is computed in both groups; exp,
// whose other user comes after the first group's root, is that group's extra result.
// CHECK-LABEL: func.func @duplicate_cheap(
// CHECK-SAME:      %[[X:.*]]: tensor<4x4xf32>, %[[V:.*]]: tensor<4xf32>
// CHECK-NEXT:    %[[FIRST:.*]]:2 = kiln.fusion(%[[X]], %[[V]]) : (tensor<4x4xf32>, tensor<4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %[[E:.*]] = kiln.exp
// CHECK-NEXT:      kiln.broadcast_in_dim
// CHECK-NEXT:      %[[A:.*]] = kiln.add
// CHECK-NEXT:      kiln.yield %[[E]], %[[A]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[MM:.*]] = kiln.matmul %[[FIRST]]#1, %[[FIRST]]#0
// CHECK-NEXT:    %[[SECOND:.*]] = kiln.fusion(%[[V]], %[[MM]])
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      kiln.broadcast_in_dim
// CHECK-NEXT:      kiln.mul
// CHECK-NEXT:      kiln.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[SECOND]]
func.func @duplicate_cheap(%x: tensor<4x4xf32>, %v: tensor<4xf32>) -> tensor<4x4xf32> {
  %e = kiln.exp %x : tensor<4x4xf32>
  %b = kiln.broadcast_in_dim %v, dims = [1], shape = [4, 4] : tensor<4xf32>
  %a = kiln.add %e, %b : tensor<4x4xf32>
  %m = kiln.matmul %a, %e : tensor<4x4xf32>, tensor<4x4xf32>
  %r = kiln.mul %m, %b : tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// An expensive producer (exp) that a library op needs before the group's root is computed
// once in its own group and read, not recomputed.
// CHECK-LABEL: func.func @expensive_not_duplicated(
// CHECK-SAME:      %[[X:.*]]: tensor<4x4xf32>
// CHECK-NEXT:    %[[E:.*]] = kiln.fusion(%[[X]])
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      kiln.exp
// CHECK-NEXT:      kiln.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[MM:.*]] = kiln.matmul %[[E]], %[[E]]
// CHECK-NEXT:    %[[R:.*]] = kiln.fusion(%[[MM]], %[[E]])
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      kiln.add
// CHECK-NEXT:      kiln.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]
func.func @expensive_not_duplicated(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = kiln.exp %x : tensor<4x4xf32>
  %m = kiln.matmul %e, %e : tensor<4x4xf32>, tensor<4x4xf32>
  %r = kiln.add %m, %e : tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// A non-splat constant is an input; an op whose result is also returned becomes an extra
// result of its group; a reduction in the middle of a chain ends the group before it.
// CHECK-LABEL: func.func @inputs_and_results(
// CHECK-SAME:      %[[X:.*]]: tensor<2x2xf32>
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]>
// CHECK-NEXT:    %[[F:.*]]:2 = kiln.fusion(%[[X]], %[[C]]) : (tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>)
// CHECK:           kiln.mul
// CHECK-NEXT:      kiln.reduce sum
// CHECK-NEXT:      kiln.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[G:.*]] = kiln.fusion(%[[F]]#1)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      kiln.sqrt
// CHECK-NEXT:      kiln.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[F]]#0, %[[G]]
func.func @inputs_and_results(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>) {
  %c = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %m = kiln.mul %x, %c : tensor<2x2xf32>
  %s = kiln.reduce sum %m, dims = [1] : tensor<2x2xf32>
  %r = kiln.sqrt %s : tensor<2xf32>
  return %m, %r : tensor<2x2xf32>, tensor<2xf32>
}

// -----

// A group stops before it would read more than max-inputs values (16 by default).
// CHECK-LABEL: func.func @bounded(
// CHECK-NEXT:    kiln.fusion(%{{.*}}, %{{.*}}, %{{.*}}) :
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      kiln.add
// CHECK-NEXT:      kiln.mul
// CHECK-NEXT:      kiln.yield
// BOUND-LABEL: func.func @bounded(
// BOUND-SAME:      %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<4xf32>
// BOUND-NEXT:    %[[S:.*]] = kiln.fusion(%[[A]], %[[B]])
// BOUND-NEXT:    ^bb0
// BOUND-NEXT:      kiln.add
// BOUND-NEXT:      kiln.yield
// BOUND-NEXT:    }
// BOUND-NEXT:    %[[P:.*]] = kiln.fusion(%[[S]], %[[C]])
// BOUND-NEXT:    ^bb0
// BOUND-NEXT:      kiln.mul
// BOUND-NEXT:      kiln.yield
// BOUND-NEXT:    }
// BOUND-NEXT:    return %[[P]]
func.func @bounded(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.add %a, %b : tensor<4xf32>
  %1 = kiln.mul %0, %c : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// A transpose joins its consumer's group, which reads the transpose's operand in permuted
// order (the one-hot of a gather's gradient, built transposed in one kernel). A transpose
// only a library op reads starts no group: it stays outside, for kiln-plan-memory to make
// a view.
// CHECK-LABEL: func.func @transpose_producer(
// CHECK-SAME:      %[[I:.*]]: tensor<4x1xi64>, %[[C:.*]]: tensor<6xi64>, %[[W:.*]]: tensor<3x4xf32>
// CHECK-NEXT:    %[[HOT:.*]] = kiln.fusion(%[[I]], %[[C]]) : (tensor<4x1xi64>, tensor<6xi64>) -> tensor<6x4xf32>
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      kiln.broadcast_in_dim
// CHECK-NEXT:      kiln.broadcast_in_dim
// CHECK-NEXT:      kiln.compare eq
// CHECK-NEXT:      kiln.convert
// CHECK-NEXT:      kiln.transpose
// CHECK-NEXT:      kiln.neg
// CHECK-NEXT:      kiln.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[WT:.*]] = kiln.transpose %[[W]], permutation = [1, 0]
// CHECK-NEXT:    kiln.matmul %[[HOT]], %{{.*}}
func.func @transpose_producer(%i: tensor<4x1xi64>, %c: tensor<6xi64>, %w: tensor<3x4xf32>)
    -> tensor<6x4xf32> {
  %ib = kiln.broadcast_in_dim %i, dims = [0, 1], shape = [4, 6] : tensor<4x1xi64>
  %cb = kiln.broadcast_in_dim %c, dims = [1], shape = [4, 6] : tensor<6xi64>
  %eq = kiln.compare eq, %ib, %cb : tensor<4x6xi64>
  %hot = kiln.convert %eq : tensor<4x6xi1> to f32
  %t = kiln.transpose %hot, permutation = [1, 0] : tensor<4x6xf32>
  %n = kiln.neg %t : tensor<6x4xf32>
  %wt = kiln.transpose %w, permutation = [1, 0] : tensor<3x4xf32>
  %mm = kiln.matmul %n, %wt : tensor<6x4xf32>, tensor<4x3xf32>
  %r = kiln.matmul %mm, %w : tensor<6x3xf32>, tensor<3x4xf32>
  return %r : tensor<6x4xf32>
}
