// kiln-simplify: folds, algebraic identities, layout ops sunk below elementwise ops, CSE.
// RUN: kiln-opt %s --kiln-simplify --split-input-file | FileCheck %s

// Constants fold, and x + 0, x * 1 and dead ops disappear.
// CHECK-LABEL: func.func @fold_and_identities(
// CHECK-SAME:      %[[X:.*]]: tensor<4x3xf32>
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<3.000000e+00> : tensor<4x3xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.mul %[[X]], %[[C]] : tensor<4x3xf32>
// CHECK-NEXT:    return %[[R]]
func.func @fold_and_identities(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %one = kiln.constant dense<1.0> : tensor<f32>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %zero = kiln.constant dense<0.0> : tensor<4x3xf32>
  %three = kiln.add %one, %two : tensor<f32>
  %b = kiln.broadcast_in_dim %three, dims = [], shape = [4, 3] : tensor<f32>
  %ones = kiln.broadcast_in_dim %one, dims = [], shape = [4, 3] : tensor<f32>
  %0 = kiln.add %x, %zero : tensor<4x3xf32>
  %1 = kiln.mul %0, %ones : tensor<4x3xf32>
  %dead = kiln.exp %1 : tensor<4x3xf32>
  %2 = kiln.mul %1, %b : tensor<4x3xf32>
  return %2 : tensor<4x3xf32>
}

// -----

// Common subexpressions become one, which exposes x - neg(y) -> x + y.
// CHECK-LABEL: func.func @cse(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>
// CHECK-NEXT:    %[[E:.*]] = kiln.exp %[[X]]
// CHECK-NEXT:    %[[S:.*]] = kiln.add %[[E]], %[[Y]]
// CHECK-NEXT:    %[[D:.*]] = kiln.sub %[[S]], %[[E]]
// CHECK-NEXT:    return %[[D]]
func.func @cse(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %e0 = kiln.exp %x : tensor<4xf32>
  %e1 = kiln.exp %x : tensor<4xf32>
  %n0 = kiln.neg %y : tensor<4xf32>
  %0 = kiln.sub %e0, %n0 : tensor<4xf32>
  %n1 = kiln.neg %e1 : tensor<4xf32>
  %1 = kiln.add %0, %n1 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// A transpose sinks below the elementwise ops that use it and cancels with its inverse.
// CHECK-LABEL: func.func @transposes_cancel(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>
// CHECK-NEXT:    %[[E:.*]] = kiln.exp %[[X]] : tensor<2x3xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.relu %[[E]] : tensor<2x3xf32>
// CHECK-NEXT:    return %[[R]]
func.func @transposes_cancel(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %t = kiln.transpose %x, permutation = [1, 0] : tensor<2x3xf32>
  %e = kiln.exp %t : tensor<3x2xf32>
  %r = kiln.relu %e : tensor<3x2xf32>
  %u = kiln.transpose %r, permutation = [1, 0] : tensor<3x2xf32>
  return %u : tensor<2x3xf32>
}

// -----

// Binary ops sink a layout op both operands share; a convert keeps its element type.
// CHECK-LABEL: func.func @binary_and_convert(
// CHECK-SAME:      %[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x3xf32>
// CHECK-NEXT:    %[[S:.*]] = kiln.add %[[A]], %[[B]] : tensor<2x3xf32>
// CHECK-NEXT:    %[[C:.*]] = kiln.convert %[[S]] : tensor<2x3xf32> to f64
// CHECK-NEXT:    %[[T:.*]] = kiln.transpose %[[C]], permutation = [1, 0] : tensor<2x3xf64>
// CHECK-NEXT:    return %[[T]]
func.func @binary_and_convert(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<3x2xf64> {
  %ta = kiln.transpose %a, permutation = [1, 0] : tensor<2x3xf32>
  %tb = kiln.transpose %b, permutation = [1, 0] : tensor<2x3xf32>
  %s = kiln.add %ta, %tb : tensor<3x2xf32>
  %c = kiln.convert %s : tensor<3x2xf32> to f64
  return %c : tensor<3x2xf64>
}

// -----

// Reshapes sink too; a layout op with another user stays, and so do operands whose
// layouts differ.
// CHECK-LABEL: func.func @what_stays(
// CHECK-SAME:      %[[X:.*]]: tensor<6xf32>, %[[Y:.*]]: tensor<3x2xf32>
// CHECK-NEXT:    %[[A:.*]] = kiln.abs %[[X]] : tensor<6xf32>
// CHECK-NEXT:    %[[RA:.*]] = kiln.reshape %[[A]], shape = [2, 3] : tensor<6xf32>
// CHECK-NEXT:    %[[T:.*]] = kiln.transpose %[[Y]], permutation = [1, 0] : tensor<3x2xf32>
// CHECK-NEXT:    %[[N:.*]] = kiln.neg %[[T]] : tensor<2x3xf32>
// CHECK-NEXT:    %[[M:.*]] = kiln.mul %[[RA]], %[[T]] : tensor<2x3xf32>
// CHECK-NEXT:    return %[[N]], %[[M]]
func.func @what_stays(%x: tensor<6xf32>, %y: tensor<3x2xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %r = kiln.reshape %x, shape = [2, 3] : tensor<6xf32>
  %a = kiln.abs %r : tensor<2x3xf32>
  %t = kiln.transpose %y, permutation = [1, 0] : tensor<3x2xf32>
  %n = kiln.neg %t : tensor<2x3xf32>
  %m = kiln.mul %a, %t : tensor<2x3xf32>
  return %n, %m : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Transposes of the last two dims fold into matmul's transpose flags: the weight of a
// linear layer is read transposed, not copied, and a transposed product is computed as the
// product of the operands swapped ((AB)^T = B^T A^T), here a weight gradient dy^T x, with
// the two transposes around it gone.
// CHECK-LABEL: func.func @matmul_transposes(
// CHECK-SAME:      %[[X:.*]]: tensor<8x4xf32>, %[[W:.*]]: tensor<3x4xf32>, %[[DY:.*]]: tensor<8x3xf32>, %[[B:.*]]: tensor<2x5x4xf32>, %[[C:.*]]: tensor<5x3x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = kiln.matmul %[[X]], %[[W]] transpose_b : tensor<8x4xf32>, tensor<3x4xf32>
// CHECK-NEXT:    %[[G:.*]] = kiln.matmul %[[DY]], %[[X]] transpose_a : tensor<8x3xf32>, tensor<8x4xf32>
// CHECK-NEXT:    %[[BT:.*]] = kiln.transpose %[[B]], permutation = [1, 0, 2]
// CHECK-NEXT:    %[[P:.*]] = kiln.matmul %[[BT]], %[[C]] transpose_b
// CHECK-NEXT:    return %[[Y]], %[[G]], %[[P]]
func.func @matmul_transposes(%x: tensor<8x4xf32>, %w: tensor<3x4xf32>, %dy: tensor<8x3xf32>,
                             %b: tensor<2x5x4xf32>, %c: tensor<5x3x4xf32>)
    -> (tensor<8x3xf32>, tensor<3x4xf32>, tensor<5x2x3xf32>) {
  %wt = kiln.transpose %w, permutation = [1, 0] : tensor<3x4xf32>
  %y = kiln.matmul %x, %wt : tensor<8x4xf32>, tensor<4x3xf32>
  %xt = kiln.transpose %x, permutation = [1, 0] : tensor<8x4xf32>
  %g = kiln.matmul %xt, %dy : tensor<4x8xf32>, tensor<8x3xf32>
  %gt = kiln.transpose %g, permutation = [1, 0] : tensor<4x3xf32>
  // A transpose that moves a batch dim is no matmul flag and stays.
  %bt = kiln.transpose %b, permutation = [1, 0, 2] : tensor<2x5x4xf32>
  %ct = kiln.transpose %c, permutation = [0, 2, 1] : tensor<5x3x4xf32>
  %p = kiln.matmul %bt, %ct : tensor<5x2x4xf32>, tensor<5x4x3xf32>
  return %y, %gt, %p : tensor<8x3xf32>, tensor<3x4xf32>, tensor<5x2x3xf32>
}

// -----

// A linear layer's bias add (and its relu, when the relu is the add's only user) joins
// the matmul as kiln.addmm, whose library call applies them as epilogues; the weight's
// transpose becomes a flag first. A product with another user, a bias broadcast along the
// other dim, a batched product and an integer product keep their separate ops.
// CHECK-LABEL: func.func @addmm_epilogues(
// CHECK-SAME:      %[[X0:[^:]*]]: tensor<8x4xf32>, %[[X1:[^:]*]]: tensor<8x4xf32>, %[[X2:[^:]*]]: tensor<8x4xf32>, %[[W:[^:]*]]: tensor<3x4xf32>, %[[B:[^:]*]]: tensor<3xf32>, %[[R:[^:]*]]: tensor<8xf32>,
// CHECK-SAME:      %[[BX:[^:]*]]: tensor<2x8x4xf32>, %[[BW:[^:]*]]: tensor<2x4x3xf32>, %[[IX:[^:]*]]: tensor<8x4xi32>, %[[IW:[^:]*]]: tensor<4x3xi32>, %[[IB:[^:]*]]: tensor<3xi32>
// CHECK-DAG:     %[[Y:.*]] = kiln.addmm %[[X0]], %[[W]], %[[B]] transpose_b relu : tensor<8x4xf32>, tensor<3x4xf32>, tensor<3xf32>
// CHECK-DAG:     %[[Z:.*]] = kiln.addmm %[[X1]], %[[W]], %[[B]] transpose_b : tensor<8x4xf32>, tensor<3x4xf32>, tensor<3xf32>
// CHECK-DAG:     %[[P:.*]] = kiln.matmul %[[X2]], %[[W]] transpose_b
// CHECK-DAG:     %[[RB:.*]] = kiln.broadcast_in_dim %[[R]], dims = [0]
// CHECK-DAG:     %[[Q:.*]] = kiln.add %[[P]], %[[RB]]
// CHECK-DAG:     %[[BP:.*]] = kiln.matmul %[[BX]], %[[BW]]
// CHECK-DAG:     %[[IP:.*]] = kiln.matmul %[[IX]], %[[IW]]
// CHECK-NOT:     kiln.relu
// CHECK:         return %[[Y]], %[[Z]], %[[Q]], %[[P]],
func.func @addmm_epilogues(%x0: tensor<8x4xf32>, %x1: tensor<8x4xf32>, %x2: tensor<8x4xf32>,
                           %w: tensor<3x4xf32>, %b: tensor<3xf32>, %r: tensor<8xf32>,
                           %bx: tensor<2x8x4xf32>, %bw: tensor<2x4x3xf32>,
                           %ix: tensor<8x4xi32>, %iw: tensor<4x3xi32>, %ib: tensor<3xi32>)
    -> (tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<2x8x3xf32>,
        tensor<8x3xi32>) {
  %wt = kiln.transpose %w, permutation = [1, 0] : tensor<3x4xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1], shape = [8, 3] : tensor<3xf32>
  // matmul + bias + relu, the relu the add's only user.
  %m0 = kiln.matmul %x0, %wt : tensor<8x4xf32>, tensor<4x3xf32>
  %a0 = kiln.add %m0, %bb : tensor<8x3xf32>
  %y = kiln.relu %a0 : tensor<8x3xf32>
  // bias + matmul (operands either way round), no relu.
  %m1 = kiln.matmul %x1, %wt : tensor<8x4xf32>, tensor<4x3xf32>
  %z = kiln.add %bb, %m1 : tensor<8x3xf32>
  // A bias per row is not a bias per column; and this product is used twice.
  %m2 = kiln.matmul %x2, %wt : tensor<8x4xf32>, tensor<4x3xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0], shape = [8, 3] : tensor<8xf32>
  %q = kiln.add %m2, %rb : tensor<8x3xf32>
  // Batched and integer products stay matmuls.
  %bbb = kiln.broadcast_in_dim %b, dims = [2], shape = [2, 8, 3] : tensor<3xf32>
  %m3 = kiln.matmul %bx, %bw : tensor<2x8x4xf32>, tensor<2x4x3xf32>
  %bp = kiln.add %m3, %bbb : tensor<2x8x3xf32>
  %ibb = kiln.broadcast_in_dim %ib, dims = [1], shape = [8, 3] : tensor<3xi32>
  %m4 = kiln.matmul %ix, %iw : tensor<8x4xi32>, tensor<4x3xi32>
  %ip = kiln.add %m4, %ibb : tensor<8x3xi32>
  return %y, %z, %q, %m2, %bp, %ip : tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<2x8x3xf32>, tensor<8x3xi32>
}

// -----

// A bias of one value broadcast over every column is not one value per column: the
// product and the add stay (kiln-fuzz seed 217693 made an addmm its verifier rejects).
// CHECK-LABEL: func.func @addmm_needs_a_bias_per_column(
// CHECK:         kiln.matmul
// CHECK:         kiln.add
// CHECK-NOT:     kiln.addmm
func.func @addmm_needs_a_bias_per_column(%x: tensor<6x8xf64>, %w: tensor<8x33xf64>,
                                         %b: tensor<1xf64>) -> tensor<6x33xf64> {
  %m = kiln.matmul %x, %w : tensor<6x8xf64>, tensor<8x33xf64>
  %bb = kiln.broadcast_in_dim %b, dims = [1], shape = [6, 33] : tensor<1xf64>
  %y = kiln.add %m, %bb : tensor<6x33xf64>
  return %y : tensor<6x33xf64>
}

// -----

// A relu that is a convolution's only user joins it as its relu epilogue; one of two users
// does not.
// CHECK-LABEL: func.func @conv_relu(
// CHECK:         %[[C:.*]] = kiln.conv2d %{{.*}}, %{{.*}} bias(%{{.*}} : tensor<4xf32>), {{.*}} groups = 1 relu
// CHECK:         %[[D:.*]] = kiln.conv2d %{{.*}}, %{{.*}}, {{.*}} groups = 1 :
// CHECK-NEXT:    %[[R:.*]] = kiln.relu %[[D]]
// CHECK-NEXT:    return %[[C]], %[[R]], %[[D]]
func.func @conv_relu(%x: tensor<1x2x6x6xf32>, %y: tensor<1x2x6x6xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>)
    -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %c = kiln.conv2d %x, %w bias(%b : tensor<4xf32>), stride = [1, 1], padding = [1, 1, 1, 1],
         dilation = [1, 1], groups = 1 : tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>
  %rc = kiln.relu %c : tensor<1x4x6x6xf32>
  %d = kiln.conv2d %y, %w, stride = [1, 1], padding = [1, 1, 1, 1], dilation = [1, 1],
         groups = 1 : tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>
  %rd = kiln.relu %d : tensor<1x4x6x6xf32>
  return %rc, %rd, %d : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

// -----

// Dividing by a broadcast row value divides once per row: x / broadcast(s) becomes
// x * broadcast(1 / s). Integers and f16 keep their division, as does a divisor that is
// not broadcast.
// CHECK-LABEL: func.func @div_by_broadcast(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[S:.*]]: tensor<4x1xf32>, %[[Y:.*]]: tensor<4x8xf32>,
// CHECK-SAME:      %[[I:.*]]: tensor<4x8xi32>, %[[J:.*]]: tensor<4x1xi32>,
// CHECK-SAME:      %[[H:.*]]: tensor<4x8xf16>, %[[HS:.*]]: tensor<4x1xf16>
// CHECK-DAG:     %[[ONE:.*]] = kiln.constant dense<1.000000e+00> : tensor<4x1xf32>
// CHECK-DAG:     %[[R:.*]] = kiln.div %[[ONE]], %[[S]] : tensor<4x1xf32>
// CHECK:         %[[RB:.*]] = kiln.broadcast_in_dim %[[R]], dims = [0, 1], shape = [4, 8]
// CHECK:         %[[Q:.*]] = kiln.mul %[[X]], %[[RB]] : tensor<4x8xf32>
// CHECK:         %[[Z:.*]] = kiln.div %[[Q]], %[[Y]] : tensor<4x8xf32>
// CHECK:         %[[JB:.*]] = kiln.broadcast_in_dim %[[J]], dims = [0, 1], shape = [4, 8]
// CHECK:         %[[K:.*]] = kiln.div %[[I]], %[[JB]] : tensor<4x8xi32>
// CHECK:         %[[HB:.*]] = kiln.broadcast_in_dim %[[HS]], dims = [0, 1], shape = [4, 8]
// CHECK:         %[[HQ:.*]] = kiln.div %[[H]], %[[HB]] : tensor<4x8xf16>
// CHECK:         return %[[Z]], %[[K]], %[[HQ]]
func.func @div_by_broadcast(%x: tensor<4x8xf32>, %s: tensor<4x1xf32>, %y: tensor<4x8xf32>,
                            %i: tensor<4x8xi32>, %j: tensor<4x1xi32>,
                            %h: tensor<4x8xf16>, %hs: tensor<4x1xf16>)
    -> (tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xf16>) {
  %b = kiln.broadcast_in_dim %s, dims = [0, 1], shape = [4, 8] : tensor<4x1xf32>
  %q = kiln.div %x, %b : tensor<4x8xf32>
  %z = kiln.div %q, %y : tensor<4x8xf32>
  %jb = kiln.broadcast_in_dim %j, dims = [0, 1], shape = [4, 8] : tensor<4x1xi32>
  %k = kiln.div %i, %jb : tensor<4x8xi32>
  %hb = kiln.broadcast_in_dim %hs, dims = [0, 1], shape = [4, 8] : tensor<4x1xf16>
  %hq = kiln.div %h, %hb : tensor<4x8xf16>
  return %z, %k, %hq : tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xf16>
}

// -----

// A count (a sum of ones, as ops::countOver records it) folds to the number; a mean or max
// of a splat to its value; a sum whose product is not exact in f32 stays.
// CHECK-LABEL: func.func @reduce_of_splats(
// CHECK-DAG:     %[[N:.*]] = kiln.constant dense<1.200000e+01> : tensor<f32>
// CHECK-DAG:     %[[M:.*]] = kiln.constant dense<2.500000e+00> : tensor<3xf32>
// CHECK-DAG:     %[[T:.*]] = kiln.constant dense<1.000000e-01> : tensor<4x3xf32>
// CHECK:         %[[S:.*]] = kiln.reduce sum %[[T]], dims = [0, 1] : tensor<4x3xf32>
// CHECK:         return %[[N]], %[[M]], %[[M]], %[[S]]
func.func @reduce_of_splats() -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>, tensor<f32>) {
  %ones = kiln.constant dense<1.0> : tensor<4x3xf32>
  %n = kiln.reduce sum %ones, dims = [0, 1] : tensor<4x3xf32>
  %half = kiln.constant dense<2.5> : tensor<4x3xf32>
  %m = kiln.reduce mean %half, dims = [0] : tensor<4x3xf32>
  %x = kiln.reduce max %half, dims = [0] : tensor<4x3xf32>
  %tenth = kiln.constant dense<0.1> : tensor<4x3xf32>
  %s = kiln.reduce sum %tenth, dims = [0, 1] : tensor<4x3xf32>
  return %n, %m, %x, %s : tensor<f32>, tensor<3xf32>, tensor<3xf32>, tensor<f32>
}
