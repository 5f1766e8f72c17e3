// RUN: kiln-opt %s -canonicalize | FileCheck %s

// Constant folding of kiln ops: the exact folded values. Inputs are chosen so that every
// result is exactly representable; the element limit itself is tested in canonicalize.mlir.

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @add_f32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[1.100000e+01, 2.200000e+01, 3.300000e+01, 4.400000e+01]> : tensor<4xf32>
// CHECK-NEXT:    return %[[C]] : tensor<4xf32>
func.func @add_f32() -> tensor<4xf32> {
  %a = kiln.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = kiln.constant dense<[10.0, 20.0, 30.0, 40.0]> : tensor<4xf32>
  %0 = kiln.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @add_i64(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[5000000000, -1]> : tensor<2xi64>
// CHECK-NEXT:    return %[[C]] : tensor<2xi64>
func.func @add_i64() -> tensor<2xi64> {
  %a = kiln.constant dense<[4000000000, 2]> : tensor<2xi64>
  %b = kiln.constant dense<[1000000000, -3]> : tensor<2xi64>
  %0 = kiln.add %a, %b : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// CHECK-LABEL: func.func @add_bf16(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[4.000000e+00, -1.000000e+00]> : tensor<2xbf16>
// CHECK-NEXT:    return %[[C]] : tensor<2xbf16>
func.func @add_bf16() -> tensor<2xbf16> {
  %a = kiln.constant dense<[1.5, 0.5]> : tensor<2xbf16>
  %b = kiln.constant dense<[2.5, -1.5]> : tensor<2xbf16>
  %0 = kiln.add %a, %b : tensor<2xbf16>
  return %0 : tensor<2xbf16>
}

// CHECK-LABEL: func.func @sub_f64(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[5.000000e+00, -2.000000e+00]> : tensor<2xf64>
// CHECK-NEXT:    return %[[C]] : tensor<2xf64>
func.func @sub_f64() -> tensor<2xf64> {
  %a = kiln.constant dense<[5.5, 1.0]> : tensor<2xf64>
  %b = kiln.constant dense<[0.5, 3.0]> : tensor<2xf64>
  %0 = kiln.sub %a, %b : tensor<2xf64>
  return %0 : tensor<2xf64>
}

// CHECK-LABEL: func.func @mul_i32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[10, -18, -28]> : tensor<3xi32>
// CHECK-NEXT:    return %[[C]] : tensor<3xi32>
func.func @mul_i32() -> tensor<3xi32> {
  %a = kiln.constant dense<[2, -3, 4]> : tensor<3xi32>
  %b = kiln.constant dense<[5, 6, -7]> : tensor<3xi32>
  %0 = kiln.mul %a, %b : tensor<3xi32>
  return %0 : tensor<3xi32>
}

// CHECK-LABEL: func.func @div_f32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[2.500000e-01, 1.500000e+00]> : tensor<2xf32>
// CHECK-NEXT:    return %[[C]] : tensor<2xf32>
func.func @div_f32() -> tensor<2xf32> {
  %a = kiln.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %b = kiln.constant dense<[4.0, 2.0]> : tensor<2xf32>
  %0 = kiln.div %a, %b : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @div_i64(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[3, 4]> : tensor<2xi64>
// CHECK-NEXT:    return %[[C]] : tensor<2xi64>
func.func @div_i64() -> tensor<2xi64> {
  %a = kiln.constant dense<[7, 12]> : tensor<2xi64>
  %b = kiln.constant dense<[2, 3]> : tensor<2xi64>
  %0 = kiln.div %a, %b : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// CHECK-LABEL: func.func @pow_f32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[8.000000e+00, 2.000000e+00, 1.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    return %[[C]] : tensor<3xf32>
func.func @pow_f32() -> tensor<3xf32> {
  %a = kiln.constant dense<[2.0, 4.0, 5.0]> : tensor<3xf32>
  %b = kiln.constant dense<[3.0, 0.5, 0.0]> : tensor<3xf32>
  %0 = kiln.pow %a, %b : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @max_f16(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[1.000000e+00, 0.000000e+00, 5.000000e+00]> : tensor<3xf16>
// CHECK-NEXT:    return %[[C]] : tensor<3xf16>
func.func @max_f16() -> tensor<3xf16> {
  %a = kiln.constant dense<[1.0, -2.0, 3.0]> : tensor<3xf16>
  %b = kiln.constant dense<[0.0, 0.0, 5.0]> : tensor<3xf16>
  %0 = kiln.max %a, %b : tensor<3xf16>
  return %0 : tensor<3xf16>
}

// CHECK-LABEL: func.func @min_i32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[-5, 0, 3]> : tensor<3xi32>
// CHECK-NEXT:    return %[[C]] : tensor<3xi32>
func.func @min_i32() -> tensor<3xi32> {
  %a = kiln.constant dense<[-5, 7, 3]> : tensor<3xi32>
  %b = kiln.constant dense<[4, 0, 9]> : tensor<3xi32>
  %0 = kiln.min %a, %b : tensor<3xi32>
  return %0 : tensor<3xi32>
}

// CHECK-LABEL: func.func @and_i1(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[true, false, false, false]> : tensor<4xi1>
// CHECK-NEXT:    return %[[C]] : tensor<4xi1>
func.func @and_i1() -> tensor<4xi1> {
  %a = kiln.constant dense<[true, true, false, false]> : tensor<4xi1>
  %b = kiln.constant dense<[true, false, true, false]> : tensor<4xi1>
  %0 = kiln.and %a, %b : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// CHECK-LABEL: func.func @or_i1(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[true, true, true, false]> : tensor<4xi1>
// CHECK-NEXT:    return %[[C]] : tensor<4xi1>
func.func @or_i1() -> tensor<4xi1> {
  %a = kiln.constant dense<[true, true, false, false]> : tensor<4xi1>
  %b = kiln.constant dense<[true, false, true, false]> : tensor<4xi1>
  %0 = kiln.or %a, %b : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// 12 = 0b1100, 10 = 0b1010.
// CHECK-LABEL: func.func @and_or_i32(
// CHECK-DAG:     %[[AND:.*]] = kiln.constant dense<[8, 0]> : tensor<2xi32>
// CHECK-DAG:     %[[OR:.*]] = kiln.constant dense<[14, -1]> : tensor<2xi32>
// CHECK:         return %[[AND]], %[[OR]] : tensor<2xi32>, tensor<2xi32>
func.func @and_or_i32() -> (tensor<2xi32>, tensor<2xi32>) {
  %a = kiln.constant dense<[12, -1]> : tensor<2xi32>
  %b = kiln.constant dense<[10, 0]> : tensor<2xi32>
  %0 = kiln.and %a, %b : tensor<2xi32>
  %1 = kiln.or %a, %b : tensor<2xi32>
  return %0, %1 : tensor<2xi32>, tensor<2xi32>
}

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @neg_f32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[-1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    return %[[C]] : tensor<2xf32>
func.func @neg_f32() -> tensor<2xf32> {
  %a = kiln.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %0 = kiln.neg %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @neg_i32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[-7, 3]> : tensor<2xi32>
// CHECK-NEXT:    return %[[C]] : tensor<2xi32>
func.func @neg_i32() -> tensor<2xi32> {
  %a = kiln.constant dense<[7, -3]> : tensor<2xi32>
  %0 = kiln.neg %a : tensor<2xi32>
  return %0 : tensor<2xi32>
}

// CHECK-LABEL: func.func @abs_i64(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[3, 4, 0]> : tensor<3xi64>
// CHECK-NEXT:    return %[[C]] : tensor<3xi64>
func.func @abs_i64() -> tensor<3xi64> {
  %a = kiln.constant dense<[-3, 4, 0]> : tensor<3xi64>
  %0 = kiln.abs %a : tensor<3xi64>
  return %0 : tensor<3xi64>
}

// CHECK-LABEL: func.func @abs_f32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[2.500000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    return %[[C]] : tensor<2xf32>
func.func @abs_f32() -> tensor<2xf32> {
  %a = kiln.constant dense<[-2.5, 1.0]> : tensor<2xf32>
  %0 = kiln.abs %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// exp(-inf) = 0.
// CHECK-LABEL: func.func @exp_f32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    return %[[C]] : tensor<2xf32>
func.func @exp_f32() -> tensor<2xf32> {
  %a = kiln.constant dense<[0.0, 0xFF800000]> : tensor<2xf32>
  %0 = kiln.exp %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// log(0) = -inf.
// CHECK-LABEL: func.func @log_f64(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[0.000000e+00, 0xFFF0000000000000]> : tensor<2xf64>
// CHECK-NEXT:    return %[[C]] : tensor<2xf64>
func.func @log_f64() -> tensor<2xf64> {
  %a = kiln.constant dense<[1.0, 0.0]> : tensor<2xf64>
  %0 = kiln.log %a : tensor<2xf64>
  return %0 : tensor<2xf64>
}

// CHECK-LABEL: func.func @sqrt_f32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[2.000000e+00, 3.000000e+00, 5.000000e-01]> : tensor<3xf32>
// CHECK-NEXT:    return %[[C]] : tensor<3xf32>
func.func @sqrt_f32() -> tensor<3xf32> {
  %a = kiln.constant dense<[4.0, 9.0, 0.25]> : tensor<3xf32>
  %0 = kiln.sqrt %a : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @rsqrt_f32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[5.000000e-01, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    return %[[C]] : tensor<2xf32>
func.func @rsqrt_f32() -> tensor<2xf32> {
  %a = kiln.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %0 = kiln.rsqrt %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @tanh_f32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[0.000000e+00, 1.000000e+00, -1.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    return %[[C]] : tensor<3xf32>
func.func @tanh_f32() -> tensor<3xf32> {
  %a = kiln.constant dense<[0.0, 0x7F800000, 0xFF800000]> : tensor<3xf32>
  %0 = kiln.tanh %a : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @sigmoid_f32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[5.000000e-01, 1.000000e+00, 0.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    return %[[C]] : tensor<3xf32>
func.func @sigmoid_f32() -> tensor<3xf32> {
  %a = kiln.constant dense<[0.0, 0x7F800000, 0xFF800000]> : tensor<3xf32>
  %0 = kiln.sigmoid %a : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @relu(
// CHECK-DAG:     %[[F:.*]] = kiln.constant dense<[0.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG:     %[[I:.*]] = kiln.constant dense<[0, 5]> : tensor<2xi32>
// CHECK:         return %[[F]], %[[I]] : tensor<2xf32>, tensor<2xi32>
func.func @relu() -> (tensor<2xf32>, tensor<2xi32>) {
  %a = kiln.constant dense<[-1.0, 2.0]> : tensor<2xf32>
  %0 = kiln.relu %a : tensor<2xf32>
  %b = kiln.constant dense<[-5, 5]> : tensor<2xi32>
  %1 = kiln.relu %b : tensor<2xi32>
  return %0, %1 : tensor<2xf32>, tensor<2xi32>
}

// gelu(0) = 0; gelu(10) = 10 * Phi(10) rounds to 10 in f32 (exact erf or tanh form).
// CHECK-LABEL: func.func @gelu_f32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[0.000000e+00, 1.000000e+01]> : tensor<2xf32>
// CHECK-NEXT:    return %[[C]] : tensor<2xf32>
func.func @gelu_f32() -> tensor<2xf32> {
  %a = kiln.constant dense<[0.0, 10.0]> : tensor<2xf32>
  %0 = kiln.gelu %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @sin_cos_f64(
// CHECK-DAG:     %[[SIN:.*]] = kiln.constant dense<0.000000e+00> : tensor<3xf64>
// CHECK-DAG:     %[[COS:.*]] = kiln.constant dense<1.000000e+00> : tensor<3xf64>
// CHECK:         return %[[SIN]], %[[COS]] : tensor<3xf64>, tensor<3xf64>
func.func @sin_cos_f64() -> (tensor<3xf64>, tensor<3xf64>) {
  %a = kiln.constant dense<0.0> : tensor<3xf64>
  %0 = kiln.sin %a : tensor<3xf64>
  %1 = kiln.cos %a : tensor<3xf64>
  return %0, %1 : tensor<3xf64>, tensor<3xf64>
}

// CHECK-LABEL: func.func @floor_f32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[-2.000000e+00, 1.000000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    return %[[C]] : tensor<3xf32>
func.func @floor_f32() -> tensor<3xf32> {
  %a = kiln.constant dense<[-1.5, 1.5, 2.0]> : tensor<3xf32>
  %0 = kiln.floor %a : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @not(
// CHECK-DAG:     %[[B:.*]] = kiln.constant dense<[false, true]> : tensor<2xi1>
// CHECK-DAG:     %[[I:.*]] = kiln.constant dense<[-1, -6]> : tensor<2xi32>
// CHECK:         return %[[B]], %[[I]] : tensor<2xi1>, tensor<2xi32>
func.func @not() -> (tensor<2xi1>, tensor<2xi32>) {
  %a = kiln.constant dense<[true, false]> : tensor<2xi1>
  %0 = kiln.not %a : tensor<2xi1>
  %b = kiln.constant dense<[0, 5]> : tensor<2xi32>
  %1 = kiln.not %b : tensor<2xi32>
  return %0, %1 : tensor<2xi1>, tensor<2xi32>
}

// Folds through a chain: (a * b) + a, then neg.
// CHECK-LABEL: func.func @chain(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[-3.000000e+00, -1.000000e+01]> : tensor<2xf32>
// CHECK-NEXT:    return %[[C]] : tensor<2xf32>
func.func @chain() -> tensor<2xf32> {
  %a = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = kiln.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %0 = kiln.mul %a, %b : tensor<2xf32>
  %1 = kiln.add %0, %a : tensor<2xf32>
  %2 = kiln.neg %1 : tensor<2xf32>
  return %2 : tensor<2xf32>
}

//===----------------------------------------------------------------------===//
// compare, select, convert
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @compare_f32(
// CHECK-DAG:     %[[EQ:.*]] = kiln.constant dense<[false, true, false]> : tensor<3xi1>
// CHECK-DAG:     %[[NE:.*]] = kiln.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK-DAG:     %[[LT:.*]] = kiln.constant dense<[true, false, false]> : tensor<3xi1>
// CHECK-DAG:     %[[LE:.*]] = kiln.constant dense<[true, true, false]> : tensor<3xi1>
// CHECK-DAG:     %[[GT:.*]] = kiln.constant dense<[false, false, true]> : tensor<3xi1>
// CHECK-DAG:     %[[GE:.*]] = kiln.constant dense<[false, true, true]> : tensor<3xi1>
// CHECK-NOT:     kiln.compare
// CHECK:         return %[[EQ]], %[[NE]], %[[LT]], %[[LE]], %[[GT]], %[[GE]]
func.func @compare_f32() -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  %a = kiln.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = kiln.constant dense<[2.0, 2.0, 2.0]> : tensor<3xf32>
  %0 = kiln.compare eq, %a, %b : tensor<3xf32>
  %1 = kiln.compare ne, %a, %b : tensor<3xf32>
  %2 = kiln.compare lt, %a, %b : tensor<3xf32>
  %3 = kiln.compare le, %a, %b : tensor<3xf32>
  %4 = kiln.compare gt, %a, %b : tensor<3xf32>
  %5 = kiln.compare ge, %a, %b : tensor<3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>,
      tensor<3xi1>, tensor<3xi1>
}

// Integers compare signed.
// CHECK-LABEL: func.func @compare_i32_signed(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NEXT:    return %[[C]] : tensor<2xi1>
func.func @compare_i32_signed() -> tensor<2xi1> {
  %a = kiln.constant dense<[-1, 1]> : tensor<2xi32>
  %b = kiln.constant dense<[0, 0]> : tensor<2xi32>
  %0 = kiln.compare lt, %a, %b : tensor<2xi32>
  return %0 : tensor<2xi1>
}

// CHECK-LABEL: func.func @select(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[1.000000e+00, 2.000000e+01, 3.000000e+00, 4.000000e+01]> : tensor<4xf32>
// CHECK-NEXT:    return %[[C]] : tensor<4xf32>
func.func @select() -> tensor<4xf32> {
  %m = kiln.constant dense<[true, false, true, false]> : tensor<4xi1>
  %a = kiln.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = kiln.constant dense<[10.0, 20.0, 30.0, 40.0]> : tensor<4xf32>
  %0 = kiln.select %m, %a, %b : tensor<4xi1>, tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Float to integer truncates toward zero.
// CHECK-LABEL: func.func @convert_f32_to_i32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[1, -1, 2, 0]> : tensor<4xi32>
// CHECK-NEXT:    return %[[C]] : tensor<4xi32>
func.func @convert_f32_to_i32() -> tensor<4xi32> {
  %a = kiln.constant dense<[1.7, -1.7, 2.5, -0.5]> : tensor<4xf32>
  %0 = kiln.convert %a : tensor<4xf32> to i32
  return %0 : tensor<4xi32>
}

// CHECK-LABEL: func.func @convert_i32_to_f32(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[1.000000e+00, -2.000000e+00, 7.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    return %[[C]] : tensor<3xf32>
func.func @convert_i32_to_f32() -> tensor<3xf32> {
  %a = kiln.constant dense<[1, -2, 7]> : tensor<3xi32>
  %0 = kiln.convert %a : tensor<3xi32> to f32
  return %0 : tensor<3xf32>
}

// Integer widening sign-extends.
// CHECK-LABEL: func.func @convert_i32_to_i64(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<[-1, 2]> : tensor<2xi64>
// CHECK-NEXT:    return %[[C]] : tensor<2xi64>
func.func @convert_i32_to_i64() -> tensor<2xi64> {
  %a = kiln.constant dense<[-1, 2]> : tensor<2xi32>
  %0 = kiln.convert %a : tensor<2xi32> to i64
  return %0 : tensor<2xi64>
}

// CHECK-LABEL: func.func @convert_floats(
// CHECK-DAG:     %[[F16:.*]] = kiln.constant dense<[1.500000e+00, -2.500000e-01]> : tensor<2xf16>
// CHECK-DAG:     %[[BF16:.*]] = kiln.constant dense<[1.500000e+00, -2.500000e-01]> : tensor<2xbf16>
// CHECK-DAG:     %[[F32:.*]] = kiln.constant dense<[5.000000e-01, -3.250000e+00]> : tensor<2xf32>
// CHECK-NOT:     kiln.convert
// CHECK:         return %[[F16]], %[[BF16]], %[[F32]] : tensor<2xf16>, tensor<2xbf16>, tensor<2xf32>
func.func @convert_floats() -> (tensor<2xf16>, tensor<2xbf16>, tensor<2xf32>) {
  %a = kiln.constant dense<[1.5, -0.25]> : tensor<2xf32>
  %0 = kiln.convert %a : tensor<2xf32> to f16
  %1 = kiln.convert %a : tensor<2xf32> to bf16
  %b = kiln.constant dense<[0.5, -3.25]> : tensor<2xf64>
  %2 = kiln.convert %b : tensor<2xf64> to f32
  return %0, %1, %2 : tensor<2xf16>, tensor<2xbf16>, tensor<2xf32>
}

//===----------------------------------------------------------------------===//
// reshape, transpose, broadcast_in_dim
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reshape(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<{{\[\[}}1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
// CHECK-NEXT:    return %[[C]] : tensor<2x3xi32>
func.func @reshape() -> tensor<2x3xi32> {
  %a = kiln.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi32>
  %0 = kiln.reshape %a, shape = [2, 3] : tensor<6xi32>
  return %0 : tensor<2x3xi32>
}

// CHECK-LABEL: func.func @transpose(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<{{\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT:    return %[[C]] : tensor<3x2xf32>
func.func @transpose() -> tensor<3x2xf32> {
  %a = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = kiln.transpose %a, permutation = [1, 0] : tensor<2x3xf32>
  return %0 : tensor<3x2xf32>
}

// result[i][j][k] = a[k][i][j] for permutation [1, 2, 0] of a 2x1x3 input.
// CHECK-LABEL: func.func @transpose_3d(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<{{\[\[\[}}1, 4], [2, 5], [3, 6]]]> : tensor<1x3x2xi64>
// CHECK-NEXT:    return %[[C]] : tensor<1x3x2xi64>
func.func @transpose_3d() -> tensor<1x3x2xi64> {
  %a = kiln.constant dense<[[[1, 2, 3]], [[4, 5, 6]]]> : tensor<2x1x3xi64>
  %0 = kiln.transpose %a, permutation = [1, 2, 0] : tensor<2x1x3xi64>
  return %0 : tensor<1x3x2xi64>
}

// CHECK-LABEL: func.func @broadcast_in_dim(
// CHECK-DAG:     %[[ROWS:.*]] = kiln.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [1.000000e+00, 2.000000e+00, 3.000000e+00]]> : tensor<2x3xf32>
// CHECK-DAG:     %[[COLS:.*]] = kiln.constant dense<{{\[\[}}1.000000e+00, 1.000000e+00], [2.000000e+00, 2.000000e+00], [3.000000e+00, 3.000000e+00]]> : tensor<3x2xf32>
// CHECK-NOT:     kiln.broadcast_in_dim
// CHECK:         return %[[ROWS]], %[[COLS]] : tensor<2x3xf32>, tensor<3x2xf32>
func.func @broadcast_in_dim() -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %a = kiln.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %0 = kiln.broadcast_in_dim %a, dims = [1], shape = [2, 3] : tensor<3xf32>
  %1 = kiln.broadcast_in_dim %a, dims = [0], shape = [3, 2] : tensor<3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<3x2xf32>
}

//===----------------------------------------------------------------------===//
// Splat operands fold at any size (above kFoldElementLimit = 1024)
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @splat_add(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<3.000000e+00> : tensor<4096xf32>
// CHECK-NEXT:    return %[[C]] : tensor<4096xf32>
func.func @splat_add() -> tensor<4096xf32> {
  %a = kiln.constant dense<1.0> : tensor<4096xf32>
  %b = kiln.constant dense<2.0> : tensor<4096xf32>
  %0 = kiln.add %a, %b : tensor<4096xf32>
  return %0 : tensor<4096xf32>
}

// CHECK-LABEL: func.func @splat_unary(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<1.000000e+00> : tensor<64x64xf16>
// CHECK-NEXT:    return %[[C]] : tensor<64x64xf16>
func.func @splat_unary() -> tensor<64x64xf16> {
  %a = kiln.constant dense<0.0> : tensor<64x64xf16>
  %0 = kiln.exp %a : tensor<64x64xf16>
  return %0 : tensor<64x64xf16>
}

// CHECK-LABEL: func.func @splat_compare(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<true> : tensor<64x64xi1>
// CHECK-NEXT:    return %[[C]] : tensor<64x64xi1>
func.func @splat_compare() -> tensor<64x64xi1> {
  %a = kiln.constant dense<1> : tensor<64x64xi64>
  %b = kiln.constant dense<2> : tensor<64x64xi64>
  %0 = kiln.compare lt, %a, %b : tensor<64x64xi64>
  return %0 : tensor<64x64xi1>
}

// CHECK-LABEL: func.func @splat_convert(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<-2> : tensor<4096xi32>
// CHECK-NEXT:    return %[[C]] : tensor<4096xi32>
func.func @splat_convert() -> tensor<4096xi32> {
  %a = kiln.constant dense<-2.5> : tensor<4096xf32>
  %0 = kiln.convert %a : tensor<4096xf32> to i32
  return %0 : tensor<4096xi32>
}

// CHECK-LABEL: func.func @splat_select(
// CHECK-NEXT:    %[[C:.*]] = kiln.constant dense<7.000000e+00> : tensor<4096xbf16>
// CHECK-NEXT:    return %[[C]] : tensor<4096xbf16>
func.func @splat_select() -> tensor<4096xbf16> {
  %m = kiln.constant dense<false> : tensor<4096xi1>
  %a = kiln.constant dense<5.0> : tensor<4096xbf16>
  %b = kiln.constant dense<7.0> : tensor<4096xbf16>
  %0 = kiln.select %m, %a, %b : tensor<4096xi1>, tensor<4096xbf16>
  return %0 : tensor<4096xbf16>
}

// CHECK-LABEL: func.func @splat_shape_ops(
// CHECK-DAG:     %[[R:.*]] = kiln.constant dense<1.500000e+00> : tensor<8192xf32>
// CHECK-DAG:     %[[T:.*]] = kiln.constant dense<1.500000e+00> : tensor<128x64xf32>
// CHECK-DAG:     %[[B:.*]] = kiln.constant dense<1.500000e+00> : tensor<2x64x128xf32>
// CHECK-NOT:     kiln.reshape
// CHECK-NOT:     kiln.transpose
// CHECK-NOT:     kiln.broadcast_in_dim
// CHECK:         return %[[R]], %[[T]], %[[B]] : tensor<8192xf32>, tensor<128x64xf32>, tensor<2x64x128xf32>
func.func @splat_shape_ops() -> (tensor<8192xf32>, tensor<128x64xf32>, tensor<2x64x128xf32>) {
  %a = kiln.constant dense<1.5> : tensor<64x128xf32>
  %0 = kiln.reshape %a, shape = [8192] : tensor<64x128xf32>
  %1 = kiln.transpose %a, permutation = [1, 0] : tensor<64x128xf32>
  %2 = kiln.broadcast_in_dim %a, dims = [1, 2], shape = [2, 64, 128] : tensor<64x128xf32>
  return %0, %1, %2 : tensor<8192xf32>, tensor<128x64xf32>, tensor<2x64x128xf32>
}
