// RUN: kiln-opt %s -canonicalize -split-input-file | FileCheck %s

// Folders and canonicalization patterns of the kiln dialect (docs/ARCHITECTURE.md, "Folding
// and canonicalization"), each followed by the rewrites that must not happen. Exact constant
// values are checked in folding.mlir.

//===----------------------------------------------------------------------===//
// Algebraic identity folders
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @add_zero(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<3xi32>)
// CHECK-NOT:     kiln.
// CHECK:         return %[[X]], %[[I]] : tensor<4xf32>, tensor<3xi32>
func.func @add_zero(%x: tensor<4xf32>, %i: tensor<3xi32>) -> (tensor<4xf32>, tensor<3xi32>) {
  %z = kiln.constant dense<0.0> : tensor<4xf32>
  %0 = kiln.add %x, %z : tensor<4xf32>
  %zi = kiln.constant dense<0> : tensor<3xi32>
  %1 = kiln.add %i, %zi : tensor<3xi32>
  return %0, %1 : tensor<4xf32>, tensor<3xi32>
}

// -----

// Identities are not constant folding: the element limit does not apply.
// CHECK-LABEL: func.func @add_zero_large(
// CHECK-SAME:    %[[X:.*]]: tensor<64x64xf32>)
// CHECK-NOT:     kiln.
// CHECK:         return %[[X]] : tensor<64x64xf32>
func.func @add_zero_large(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %z = kiln.constant dense<0.0> : tensor<64x64xf32>
  %0 = kiln.add %x, %z : tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// CHECK-LABEL: func.func @sub_zero(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xf64>)
// CHECK-NOT:     kiln.
// CHECK:         return %[[X]] : tensor<2x3xf64>
func.func @sub_zero(%x: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %z = kiln.constant dense<0.0> : tensor<2x3xf64>
  %0 = kiln.sub %x, %z : tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}

// -----

// CHECK-LABEL: func.func @mul_one(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf16>, %[[I:.*]]: tensor<3xi64>)
// CHECK-NOT:     kiln.
// CHECK:         return %[[X]], %[[I]] : tensor<4xf16>, tensor<3xi64>
func.func @mul_one(%x: tensor<4xf16>, %i: tensor<3xi64>) -> (tensor<4xf16>, tensor<3xi64>) {
  %one = kiln.constant dense<1.0> : tensor<4xf16>
  %0 = kiln.mul %x, %one : tensor<4xf16>
  %onei = kiln.constant dense<1> : tensor<3xi64>
  %1 = kiln.mul %i, %onei : tensor<3xi64>
  return %0, %1 : tensor<4xf16>, tensor<3xi64>
}

// -----

// CHECK-LABEL: func.func @div_one(
// CHECK-SAME:    %[[X:.*]]: tensor<4xbf16>)
// CHECK-NOT:     kiln.
// CHECK:         return %[[X]] : tensor<4xbf16>
func.func @div_one(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %one = kiln.constant dense<1.0> : tensor<4xbf16>
  %0 = kiln.div %x, %one : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// x * 0 is NaN for x = NaN or inf: not folded.
// CHECK-LABEL: func.func @mul_zero_not_folded(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[Z:.*]] = kiln.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.mul %[[X]], %[[Z]] : tensor<4xf32>
// CHECK-NEXT:    return %[[R]] : tensor<4xf32>
func.func @mul_zero_not_folded(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = kiln.constant dense<0.0> : tensor<4xf32>
  %0 = kiln.mul %x, %z : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// x - x is NaN for x = NaN or inf: not folded.
// CHECK-LABEL: func.func @sub_self_not_folded(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[R:.*]] = kiln.sub %[[X]], %[[X]] : tensor<4xf32>
// CHECK-NEXT:    return %[[R]] : tensor<4xf32>
func.func @sub_self_not_folded(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.sub %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// x / x is NaN for x = 0, NaN or inf: not folded.
// CHECK-LABEL: func.func @div_self_not_folded(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[R:.*]] = kiln.div %[[X]], %[[X]] : tensor<4xf32>
// CHECK-NEXT:    return %[[R]] : tensor<4xf32>
func.func @div_self_not_folded(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.div %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Only a splat 1 is the identity of mul: [1, 2] is not.
// CHECK-LABEL: func.func @mul_non_identity_not_folded(
// CHECK-SAME:    %[[X:.*]]: tensor<2xf32>)
// CHECK:         %[[C:.*]] = kiln.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.mul %[[X]], %[[C]] : tensor<2xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2xf32>
func.func @mul_non_identity_not_folded(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = kiln.mul %x, %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// neg
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @neg_neg(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>)
// CHECK-NOT:     kiln.
// CHECK:         return %[[X]] : tensor<4x3xf32>
func.func @neg_neg(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.neg %x : tensor<4x3xf32>
  %1 = kiln.neg %0 : tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @neg_neg_neg(
// CHECK-SAME:    %[[X:.*]]: tensor<4xi32>)
// CHECK-NEXT:    %[[R:.*]] = kiln.neg %[[X]] : tensor<4xi32>
// CHECK-NEXT:    return %[[R]] : tensor<4xi32>
func.func @neg_neg_neg(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = kiln.neg %x : tensor<4xi32>
  %1 = kiln.neg %0 : tensor<4xi32>
  %2 = kiln.neg %1 : tensor<4xi32>
  return %2 : tensor<4xi32>
}

// -----

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reshape_same_type(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>)
// CHECK-NOT:     kiln.
// CHECK:         return %[[X]] : tensor<4x3xf32>
func.func @reshape_same_type(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.reshape %x, shape = [4, 3] : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_reshape(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>)
// CHECK-NEXT:    %[[R:.*]] = kiln.reshape %[[X]], shape = [12] : tensor<4x3xf32>
// CHECK-NEXT:    return %[[R]] : tensor<12xf32>
func.func @reshape_reshape(%x: tensor<4x3xf32>) -> tensor<12xf32> {
  %0 = kiln.reshape %x, shape = [2, 6] : tensor<4x3xf32>
  %1 = kiln.reshape %0, shape = [12] : tensor<2x6xf32>
  return %1 : tensor<12xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_reshape_back(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>)
// CHECK-NOT:     kiln.
// CHECK:         return %[[X]] : tensor<4x3xf32>
func.func @reshape_reshape_back(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.reshape %x, shape = [2, 6] : tensor<4x3xf32>
  %1 = kiln.reshape %0, shape = [4, 3] : tensor<2x6xf32>
  return %1 : tensor<4x3xf32>
}

// -----

// The pattern works at any size (4096 elements, above the constant-folding limit).
// CHECK-LABEL: func.func @reshape_splat_constant(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<2.000000e+00> : tensor<4096xf32>
// CHECK-NEXT:    return %[[C]] : tensor<4096xf32>
func.func @reshape_splat_constant() -> tensor<4096xf32> {
  %c = kiln.constant dense<2.0> : tensor<64x64xf32>
  %0 = kiln.reshape %c, shape = [4096] : tensor<64x64xf32>
  return %0 : tensor<4096xf32>
}

// -----

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @transpose_identity(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>)
// CHECK-NOT:     kiln.
// CHECK:         return %[[X]] : tensor<4x3xf32>
func.func @transpose_identity(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.transpose %x, permutation = [0, 1] : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_transpose_identity(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NOT:     kiln.
// CHECK:         return %[[X]] : tensor<2x3x4xf32>
func.func @transpose_transpose_identity(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = kiln.transpose %x, permutation = [1, 2, 0] : tensor<2x3x4xf32>
  %1 = kiln.transpose %0, permutation = [2, 0, 1] : tensor<3x4x2xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// result dim i of transpose(transpose(x, p1), p2) is x's dim p1[p2[i]]:
// [1, 0, 2] then [0, 2, 1] is [1, 2, 0].
// CHECK-LABEL: func.func @transpose_transpose_compose(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:    %[[R:.*]] = kiln.transpose %[[X]], permutation = [1, 2, 0] : tensor<2x3x4xf32>
// CHECK-NEXT:    return %[[R]] : tensor<3x4x2xf32>
func.func @transpose_transpose_compose(%x: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
  %0 = kiln.transpose %x, permutation = [1, 0, 2] : tensor<2x3x4xf32>
  %1 = kiln.transpose %0, permutation = [0, 2, 1] : tensor<3x2x4xf32>
  return %1 : tensor<3x4x2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// broadcast_in_dim
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @broadcast_identity(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>)
// CHECK-NOT:     kiln.
// CHECK:         return %[[X]] : tensor<4x3xf32>
func.func @broadcast_identity(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.broadcast_in_dim %x, dims = [0, 1], shape = [4, 3] : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Same rank, but a size-1 dim is expanded: not an identity.
// CHECK-LABEL: func.func @broadcast_expand_not_identity(
// CHECK-SAME:    %[[X:.*]]: tensor<1x3xf32>)
// CHECK-NEXT:    %[[R:.*]] = kiln.broadcast_in_dim %[[X]], dims = [0, 1], shape = [4, 3] : tensor<1x3xf32>
// CHECK-NEXT:    return %[[R]] : tensor<4x3xf32>
func.func @broadcast_expand_not_identity(%x: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.broadcast_in_dim %x, dims = [0, 1], shape = [4, 3] : tensor<1x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// x's dim 0 goes to dim 1 of the inner result, which goes to dim 2 of the outer one.
// CHECK-LABEL: func.func @broadcast_broadcast_compose(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[R:.*]] = kiln.broadcast_in_dim %[[X]], dims = [2], shape = [4, 5, 3] : tensor<3xf32>
// CHECK-NEXT:    return %[[R]] : tensor<4x5x3xf32>
func.func @broadcast_broadcast_compose(%x: tensor<3xf32>) -> tensor<4x5x3xf32> {
  %0 = kiln.broadcast_in_dim %x, dims = [1], shape = [4, 3] : tensor<3xf32>
  %1 = kiln.broadcast_in_dim %0, dims = [0, 2], shape = [4, 5, 3] : tensor<4x3xf32>
  return %1 : tensor<4x5x3xf32>
}

// -----

//===----------------------------------------------------------------------===//
// select
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @select_splat_condition(
// CHECK-SAME:    %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK-NOT:     kiln.
// CHECK:         return %[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>
func.func @select_splat_condition(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %t = kiln.constant dense<true> : tensor<4xi1>
  %f = kiln.constant dense<false> : tensor<4xi1>
  %0 = kiln.select %t, %a, %b : tensor<4xi1>, tensor<4xf32>
  %1 = kiln.select %f, %a, %b : tensor<4xi1>, tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A mixed condition with non-constant branches stays.
// CHECK-LABEL: func.func @select_mixed_condition_not_folded(
// CHECK-SAME:    %[[A:.*]]: tensor<2xf32>, %[[B:.*]]: tensor<2xf32>)
// CHECK:         %[[M:.*]] = kiln.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NEXT:    %[[R:.*]] = kiln.select %[[M]], %[[A]], %[[B]] : tensor<2xi1>, tensor<2xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2xf32>
func.func @select_mixed_condition_not_folded(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %m = kiln.constant dense<[true, false]> : tensor<2xi1>
  %0 = kiln.select %m, %a, %b : tensor<2xi1>, tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// convert
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @convert_same_type(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK-NOT:     kiln.
// CHECK:         return %[[X]] : tensor<4xf32>
func.func @convert_same_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.convert %x : tensor<4xf32> to f32
  return %0 : tensor<4xf32>
}

// -----

// The middle type holds every value of the source exactly, so one convert does the same.
// CHECK-LABEL: func.func @convert_convert_widening(
// CHECK-SAME:    %[[H:.*]]: tensor<4xf16>, %[[I:.*]]: tensor<4xi32>)
// CHECK-NEXT:    %[[R0:.*]] = kiln.convert %[[H]] : tensor<4xf16> to f64
// CHECK-NEXT:    %[[R1:.*]] = kiln.convert %[[I]] : tensor<4xi32> to f64
// CHECK-NEXT:    return %[[R0]], %[[R1]] : tensor<4xf64>, tensor<4xf64>
func.func @convert_convert_widening(%h: tensor<4xf16>, %i: tensor<4xi32>) -> (tensor<4xf64>, tensor<4xf64>) {
  %0 = kiln.convert %h : tensor<4xf16> to f32
  %1 = kiln.convert %0 : tensor<4xf32> to f64
  %2 = kiln.convert %i : tensor<4xi32> to i64
  %3 = kiln.convert %2 : tensor<4xi64> to f64
  return %1, %3 : tensor<4xf64>, tensor<4xf64>
}

// -----

// f32 -> f64 -> f32 collapses to a convert to its own type, which folds away.
// CHECK-LABEL: func.func @convert_widen_and_back(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK-NOT:     kiln.
// CHECK:         return %[[X]] : tensor<4xf32>
func.func @convert_widen_and_back(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.convert %x : tensor<4xf32> to f64
  %1 = kiln.convert %0 : tensor<4xf64> to f32
  return %1 : tensor<4xf32>
}

// -----

// The middle type loses information (f16 range and precision, f32's 24-bit significand for
// i32, truncation to i32): both converts stay.
// CHECK-LABEL: func.func @convert_convert_narrowing_not_collapsed(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK-NEXT:    %[[A0:.*]] = kiln.convert %[[X]] : tensor<4xf32> to f16
// CHECK-NEXT:    %[[A1:.*]] = kiln.convert %[[A0]] : tensor<4xf16> to f32
// CHECK-NEXT:    %[[B0:.*]] = kiln.convert %[[I]] : tensor<4xi32> to f32
// CHECK-NEXT:    %[[B1:.*]] = kiln.convert %[[B0]] : tensor<4xf32> to f64
// CHECK-NEXT:    %[[C0:.*]] = kiln.convert %[[X]] : tensor<4xf32> to i32
// CHECK-NEXT:    %[[C1:.*]] = kiln.convert %[[C0]] : tensor<4xi32> to f32
// CHECK-NEXT:    return %[[A1]], %[[B1]], %[[C1]] : tensor<4xf32>, tensor<4xf64>, tensor<4xf32>
func.func @convert_convert_narrowing_not_collapsed(%x: tensor<4xf32>, %i: tensor<4xi32>)
    -> (tensor<4xf32>, tensor<4xf64>, tensor<4xf32>) {
  %0 = kiln.convert %x : tensor<4xf32> to f16
  %1 = kiln.convert %0 : tensor<4xf16> to f32
  %2 = kiln.convert %i : tensor<4xi32> to f32
  %3 = kiln.convert %2 : tensor<4xf32> to f64
  %4 = kiln.convert %x : tensor<4xf32> to i32
  %5 = kiln.convert %4 : tensor<4xi32> to f32
  return %1, %3, %5 : tensor<4xf32>, tensor<4xf64>, tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Constant folding and its element limit (kFoldElementLimit = 1024)
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @fold_constants(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[4.000000e+00, 6.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    return %[[C]] : tensor<2xf32>
func.func @fold_constants() -> tensor<2xf32> {
  %a = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = kiln.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %0 = kiln.add %a, %b : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// 2 x 512 = 1024 elements: at the limit, folded (printed as hex: 512 x 1.0, then 512 x 2.0).
// CHECK-LABEL: func.func @fold_at_limit(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<{{"0x((0000803F){128}){4}((00000040){128}){4}"}}> : tensor<2x512xf32>
// CHECK-NEXT:    return %[[C]] : tensor<2x512xf32>
func.func @fold_at_limit() -> tensor<2x512xf32> {
  %c = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = kiln.broadcast_in_dim %c, dims = [0], shape = [2, 512] : tensor<2xf32>
  return %0 : tensor<2x512xf32>
}

// -----

// 2 x 513 = 1026 elements from a non-splat operand: not folded.
// CHECK-LABEL: func.func @no_fold_above_limit(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.broadcast_in_dim %[[C]], dims = [0], shape = [2, 513] : tensor<2xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x513xf32>
func.func @no_fold_above_limit() -> tensor<2x513xf32> {
  %c = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = kiln.broadcast_in_dim %c, dims = [0], shape = [2, 513] : tensor<2xf32>
  return %0 : tensor<2x513xf32>
}

// -----

// Elementwise ops on a 1025-element non-splat constant (1024 zeros, then 1.0), alone and
// with a splat operand: not folded.
// CHECK-LABEL: func.func @no_fold_elementwise_above_limit(
// CHECK-DAG:     %[[TWO:.*]] = kiln.constant dense<2.000000e+00> : tensor<1025xf16>
// CHECK-DAG:     %[[BIG:.*]] = kiln.constant dense<{{.+}}> : tensor<1025xf16>
// CHECK:         %[[A:.*]] = kiln.add %[[BIG]], %[[BIG]] : tensor<1025xf16>
// CHECK-NEXT:    %[[M:.*]] = kiln.mul %[[BIG]], %[[TWO]] : tensor<1025xf16>
// CHECK-NEXT:    %[[E:.*]] = kiln.exp %[[BIG]] : tensor<1025xf16>
// CHECK-NEXT:    return %[[A]], %[[M]], %[[E]]
func.func @no_fold_elementwise_above_limit() -> (tensor<1025xf16>, tensor<1025xf16>, tensor<1025xf16>) {
  %big = kiln.constant dense<"0x0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000003C"> : tensor<1025xf16>
  %two = kiln.constant dense<2.0> : tensor<1025xf16>
  %0 = kiln.add %big, %big : tensor<1025xf16>
  %1 = kiln.mul %big, %two : tensor<1025xf16>
  %2 = kiln.exp %big : tensor<1025xf16>
  return %0, %1, %2 : tensor<1025xf16>, tensor<1025xf16>, tensor<1025xf16>
}
