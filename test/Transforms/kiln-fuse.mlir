// kiln-fuse: which ops form kiln.fusion groups, what each group reads and yields.
// RUN: kiln-opt %s --kiln-fuse --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-fuse=max-inputs=2 --split-input-file | FileCheck %s --check-prefix=BOUND

// Softmax is one row fusion: both reductions reduce the trailing dim of the division's
// shape and every user of theirs is in the group, so they join it as producers and the
// fusion is marked for kiln-tile-rows (row_dims = 1: the rows are dim 0). exp is owned
// once, read by the sum and by the division.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>
// CHECK-NEXT:    %[[F:.*]] = kiln.fusion(%[[X]]) {kiln.row_dims = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<4x8xf32>):
// CHECK-NEXT:      %[[M:.*]] = kiln.reduce max %[[A]], dims = [1]
// CHECK-NEXT:      %[[MB:.*]] = kiln.broadcast_in_dim %[[M]]
// CHECK-NEXT:      %[[S:.*]] = kiln.sub %[[A]], %[[MB]]
// CHECK-NEXT:      %[[E:.*]] = kiln.exp %[[S]]
// CHECK-NEXT:      %[[T:.*]] = kiln.reduce sum %[[E]], dims = [1]
// CHECK-NEXT:      %[[TB:.*]] = kiln.broadcast_in_dim %[[T]]
// CHECK-NEXT:      %[[D:.*]] = kiln.div %[[E]], %[[TB]]
// CHECK-NEXT:      kiln.yield %[[D]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[F]]
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

// When the softmax's exp is also returned, a row group would have two results, which
// kiln-tile-rows does not tile: the group grows again without row reductions, giving
// the max, sub+exp with the sum (exp is its second result, as it must be written
// anyway) and the division.
// CHECK-LABEL: func.func @softmax_returning_exp(
// CHECK-NOT:     kiln.row_dims
// CHECK:         kiln.reduce max
// CHECK:         kiln.yield
// CHECK:         %[[SUM:.*]]:2 = kiln.fusion
// CHECK:           kiln.exp
// CHECK:           kiln.reduce sum
// CHECK:           kiln.yield
// CHECK:         %[[DIV:.*]] = kiln.fusion(%[[SUM]]#1, %[[SUM]]#0)
// CHECK:           kiln.div
// CHECK:         return %[[SUM]]#0, %[[DIV]]
func.func @softmax_returning_exp(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %m = kiln.reduce max %x, dims = [1] : tensor<4x8xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0], shape = [4, 8] : tensor<4xf32>
  %s = kiln.sub %x, %mb : tensor<4x8xf32>
  %e = kiln.exp %s : tensor<4x8xf32>
  %t = kiln.reduce sum %e, dims = [1] : tensor<4x8xf32>
  %tb = kiln.broadcast_in_dim %t, dims = [0], shape = [4, 8] : tensor<4xf32>
  %r = kiln.div %e, %tb : tensor<4x8xf32>
  return %e, %r : tensor<4x8xf32>, tensor<4x8xf32>
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

// -----

// A collective is a barrier: the gradient's scaling and the update that reads the reduced
// gradient are two groups, with the all_reduce between them, never inside one.
// CHECK-LABEL: func.func @all_reduce_barrier(
// CHECK-SAME:      %[[G:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>
// CHECK-NEXT:    %[[S:.*]] = kiln.fusion(%[[G]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         %[[R:.*]] = kiln.all_reduce mean %[[S]] : tensor<4xf32>
// CHECK-NEXT:    kiln.fusion(%[[W]], %[[R]])
// CHECK-NOT:       kiln.all_reduce
// CHECK:         return
func.func @all_reduce_barrier(%g: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %two = kiln.constant dense<2.0> : tensor<4xf32>
  %s = kiln.mul %g, %two : tensor<4xf32>
  %e = kiln.exp %s : tensor<4xf32>
  %r = kiln.all_reduce mean %e : tensor<4xf32>
  %n = kiln.sub %w, %r : tensor<4xf32>
  return %n : tensor<4xf32>
}
