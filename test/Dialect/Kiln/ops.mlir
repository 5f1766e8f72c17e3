// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// Round trip of every kiln op in its custom form (and through the generic form). Result types
// the custom form does not print are pinned through the function's return.

// CHECK-LABEL: func.func @constant()
// CHECK-SAME:    -> (tensor<4x3xf32>, tensor<2x2xf32>, tensor<f32>, tensor<3xf64>, tensor<2xf16>, tensor<2xbf16>, tensor<3xi1>, tensor<2xi32>, tensor<2xi64>)
// CHECK:         %[[F32:.*]] = kiln.constant dense<1.000000e+00> : tensor<4x3xf32>
// CHECK-NEXT:    %[[F32_2D:.*]] = kiln.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    %[[SCALAR:.*]] = kiln.constant dense<-5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %[[F64:.*]] = kiln.constant dense<[2.500000e+00, -1.000000e+00, 0.000000e+00]> : tensor<3xf64>
// CHECK-NEXT:    %[[F16:.*]] = kiln.constant dense<[1.500000e+00, 2.000000e+00]> : tensor<2xf16>
// CHECK-NEXT:    %[[BF16:.*]] = kiln.constant dense<1.500000e+00> : tensor<2xbf16>
// CHECK-NEXT:    %[[I1:.*]] = kiln.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK-NEXT:    %[[I32:.*]] = kiln.constant dense<[1, -2]> : tensor<2xi32>
// CHECK-NEXT:    %[[I64:.*]] = kiln.constant dense<7> : tensor<2xi64>
// CHECK-NEXT:    return %[[F32]], %[[F32_2D]], %[[SCALAR]], %[[F64]], %[[F16]], %[[BF16]], %[[I1]], %[[I32]], %[[I64]]
func.func @constant() -> (tensor<4x3xf32>, tensor<2x2xf32>, tensor<f32>, tensor<3xf64>,
                          tensor<2xf16>, tensor<2xbf16>, tensor<3xi1>, tensor<2xi32>,
                          tensor<2xi64>) {
  %0 = kiln.constant dense<1.0> : tensor<4x3xf32>
  %1 = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %2 = kiln.constant dense<-0.5> : tensor<f32>
  %3 = kiln.constant dense<[2.5, -1.0, 0.0]> : tensor<3xf64>
  %4 = kiln.constant dense<[1.5, 2.0]> : tensor<2xf16>
  %5 = kiln.constant dense<1.5> : tensor<2xbf16>
  %6 = kiln.constant dense<[true, false, true]> : tensor<3xi1>
  %7 = kiln.constant dense<[1, -2]> : tensor<2xi32>
  %8 = kiln.constant dense<7> : tensor<2xi64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8
      : tensor<4x3xf32>, tensor<2x2xf32>, tensor<f32>, tensor<3xf64>, tensor<2xf16>,
        tensor<2xbf16>, tensor<3xi1>, tensor<2xi32>, tensor<2xi64>
}

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @neg(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.neg %[[X]] : tensor<4x3xf32>
// CHECK-NEXT:    return %[[R]] : tensor<4x3xf32>
func.func @neg(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.neg %x : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @neg_int(
// CHECK-SAME:    %[[X:.*]]: tensor<5xi32>) -> tensor<5xi32>
// CHECK-NEXT:    %[[R:.*]] = kiln.neg %[[X]] : tensor<5xi32>
// CHECK-NEXT:    return %[[R]] : tensor<5xi32>
func.func @neg_int(%x: tensor<5xi32>) -> tensor<5xi32> {
  %0 = kiln.neg %x : tensor<5xi32>
  return %0 : tensor<5xi32>
}

// CHECK-LABEL: func.func @abs(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xi64>) -> tensor<2x3xi64>
// CHECK-NEXT:    %[[R:.*]] = kiln.abs %[[X]] : tensor<2x3xi64>
// CHECK-NEXT:    return %[[R]] : tensor<2x3xi64>
func.func @abs(%x: tensor<2x3xi64>) -> tensor<2x3xi64> {
  %0 = kiln.abs %x : tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// CHECK-LABEL: func.func @exp(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf64>) -> tensor<4x3xf64>
// CHECK-NEXT:    %[[R:.*]] = kiln.exp %[[X]] : tensor<4x3xf64>
// CHECK-NEXT:    return %[[R]] : tensor<4x3xf64>
func.func @exp(%x: tensor<4x3xf64>) -> tensor<4x3xf64> {
  %0 = kiln.exp %x : tensor<4x3xf64>
  return %0 : tensor<4x3xf64>
}

// CHECK-LABEL: func.func @log(
// CHECK-SAME:    %[[X:.*]]: tensor<8xf16>) -> tensor<8xf16>
// CHECK-NEXT:    %[[R:.*]] = kiln.log %[[X]] : tensor<8xf16>
// CHECK-NEXT:    return %[[R]] : tensor<8xf16>
func.func @log(%x: tensor<8xf16>) -> tensor<8xf16> {
  %0 = kiln.log %x : tensor<8xf16>
  return %0 : tensor<8xf16>
}

// CHECK-LABEL: func.func @sqrt(
// CHECK-SAME:    %[[X:.*]]: tensor<2x2xbf16>) -> tensor<2x2xbf16>
// CHECK-NEXT:    %[[R:.*]] = kiln.sqrt %[[X]] : tensor<2x2xbf16>
// CHECK-NEXT:    return %[[R]] : tensor<2x2xbf16>
func.func @sqrt(%x: tensor<2x2xbf16>) -> tensor<2x2xbf16> {
  %0 = kiln.sqrt %x : tensor<2x2xbf16>
  return %0 : tensor<2x2xbf16>
}

// CHECK-LABEL: func.func @rsqrt(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.rsqrt %[[X]] : tensor<4x3xf32>
// CHECK-NEXT:    return %[[R]] : tensor<4x3xf32>
func.func @rsqrt(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.rsqrt %x : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @tanh(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.tanh %[[X]] : tensor<4x3xf32>
// CHECK-NEXT:    return %[[R]] : tensor<4x3xf32>
func.func @tanh(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.tanh %x : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @sigmoid(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf16>) -> tensor<4x3xf16>
// CHECK-NEXT:    %[[R:.*]] = kiln.sigmoid %[[X]] : tensor<4x3xf16>
// CHECK-NEXT:    return %[[R]] : tensor<4x3xf16>
func.func @sigmoid(%x: tensor<4x3xf16>) -> tensor<4x3xf16> {
  %0 = kiln.sigmoid %x : tensor<4x3xf16>
  return %0 : tensor<4x3xf16>
}

// CHECK-LABEL: func.func @relu(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>, %[[Y:.*]]: tensor<6xi32>) -> (tensor<4x3xf32>, tensor<6xi32>)
// CHECK-NEXT:    %[[R0:.*]] = kiln.relu %[[X]] : tensor<4x3xf32>
// CHECK-NEXT:    %[[R1:.*]] = kiln.relu %[[Y]] : tensor<6xi32>
// CHECK-NEXT:    return %[[R0]], %[[R1]] : tensor<4x3xf32>, tensor<6xi32>
func.func @relu(%x: tensor<4x3xf32>, %y: tensor<6xi32>) -> (tensor<4x3xf32>, tensor<6xi32>) {
  %0 = kiln.relu %x : tensor<4x3xf32>
  %1 = kiln.relu %y : tensor<6xi32>
  return %0, %1 : tensor<4x3xf32>, tensor<6xi32>
}

// CHECK-LABEL: func.func @gelu(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xbf16>) -> tensor<4x3xbf16>
// CHECK-NEXT:    %[[R:.*]] = kiln.gelu %[[X]] : tensor<4x3xbf16>
// CHECK-NEXT:    return %[[R]] : tensor<4x3xbf16>
func.func @gelu(%x: tensor<4x3xbf16>) -> tensor<4x3xbf16> {
  %0 = kiln.gelu %x : tensor<4x3xbf16>
  return %0 : tensor<4x3xbf16>
}

// CHECK-LABEL: func.func @sin(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf64>) -> tensor<3xf64>
// CHECK-NEXT:    %[[R:.*]] = kiln.sin %[[X]] : tensor<3xf64>
// CHECK-NEXT:    return %[[R]] : tensor<3xf64>
func.func @sin(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = kiln.sin %x : tensor<3xf64>
  return %0 : tensor<3xf64>
}

// CHECK-LABEL: func.func @cos(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.cos %[[X]] : tensor<4x3xf32>
// CHECK-NEXT:    return %[[R]] : tensor<4x3xf32>
func.func @cos(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.cos %x : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @floor(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.floor %[[X]] : tensor<4x3xf32>
// CHECK-NEXT:    return %[[R]] : tensor<4x3xf32>
func.func @floor(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.floor %x : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @not(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xi1>, %[[Y:.*]]: tensor<4xi32>) -> (tensor<4x3xi1>, tensor<4xi32>)
// CHECK-NEXT:    %[[R0:.*]] = kiln.not %[[X]] : tensor<4x3xi1>
// CHECK-NEXT:    %[[R1:.*]] = kiln.not %[[Y]] : tensor<4xi32>
// CHECK-NEXT:    return %[[R0]], %[[R1]] : tensor<4x3xi1>, tensor<4xi32>
func.func @not(%x: tensor<4x3xi1>, %y: tensor<4xi32>) -> (tensor<4x3xi1>, tensor<4xi32>) {
  %0 = kiln.not %x : tensor<4x3xi1>
  %1 = kiln.not %y : tensor<4xi32>
  return %0, %1 : tensor<4x3xi1>, tensor<4xi32>
}

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @add(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>, %[[Y:.*]]: tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.add %[[X]], %[[Y]] : tensor<4x3xf32>
// CHECK-NEXT:    return %[[R]] : tensor<4x3xf32>
func.func @add(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.add %x, %y : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @sub(
// CHECK-SAME:    %[[X:.*]]: tensor<2x5xf64>, %[[Y:.*]]: tensor<2x5xf64>) -> tensor<2x5xf64>
// CHECK-NEXT:    %[[R:.*]] = kiln.sub %[[X]], %[[Y]] : tensor<2x5xf64>
// CHECK-NEXT:    return %[[R]] : tensor<2x5xf64>
func.func @sub(%x: tensor<2x5xf64>, %y: tensor<2x5xf64>) -> tensor<2x5xf64> {
  %0 = kiln.sub %x, %y : tensor<2x5xf64>
  return %0 : tensor<2x5xf64>
}

// CHECK-LABEL: func.func @mul(
// CHECK-SAME:    %[[X:.*]]: tensor<7xi32>, %[[Y:.*]]: tensor<7xi32>) -> tensor<7xi32>
// CHECK-NEXT:    %[[R:.*]] = kiln.mul %[[X]], %[[Y]] : tensor<7xi32>
// CHECK-NEXT:    return %[[R]] : tensor<7xi32>
func.func @mul(%x: tensor<7xi32>, %y: tensor<7xi32>) -> tensor<7xi32> {
  %0 = kiln.mul %x, %y : tensor<7xi32>
  return %0 : tensor<7xi32>
}

// CHECK-LABEL: func.func @div(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf16>, %[[Y:.*]]: tensor<4x3xf16>) -> tensor<4x3xf16>
// CHECK-NEXT:    %[[R:.*]] = kiln.div %[[X]], %[[Y]] : tensor<4x3xf16>
// CHECK-NEXT:    return %[[R]] : tensor<4x3xf16>
func.func @div(%x: tensor<4x3xf16>, %y: tensor<4x3xf16>) -> tensor<4x3xf16> {
  %0 = kiln.div %x, %y : tensor<4x3xf16>
  return %0 : tensor<4x3xf16>
}

// CHECK-LABEL: func.func @pow(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>, %[[Y:.*]]: tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.pow %[[X]], %[[Y]] : tensor<4x3xf32>
// CHECK-NEXT:    return %[[R]] : tensor<4x3xf32>
func.func @pow(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.pow %x, %y : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @max(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xbf16>, %[[Y:.*]]: tensor<4x3xbf16>) -> tensor<4x3xbf16>
// CHECK-NEXT:    %[[R:.*]] = kiln.max %[[X]], %[[Y]] : tensor<4x3xbf16>
// CHECK-NEXT:    return %[[R]] : tensor<4x3xbf16>
func.func @max(%x: tensor<4x3xbf16>, %y: tensor<4x3xbf16>) -> tensor<4x3xbf16> {
  %0 = kiln.max %x, %y : tensor<4x3xbf16>
  return %0 : tensor<4x3xbf16>
}

// CHECK-LABEL: func.func @min(
// CHECK-SAME:    %[[X:.*]]: tensor<3xi64>, %[[Y:.*]]: tensor<3xi64>) -> tensor<3xi64>
// CHECK-NEXT:    %[[R:.*]] = kiln.min %[[X]], %[[Y]] : tensor<3xi64>
// CHECK-NEXT:    return %[[R]] : tensor<3xi64>
func.func @min(%x: tensor<3xi64>, %y: tensor<3xi64>) -> tensor<3xi64> {
  %0 = kiln.min %x, %y : tensor<3xi64>
  return %0 : tensor<3xi64>
}

// CHECK-LABEL: func.func @and(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xi1>, %[[Y:.*]]: tensor<4x3xi1>) -> tensor<4x3xi1>
// CHECK-NEXT:    %[[R:.*]] = kiln.and %[[X]], %[[Y]] : tensor<4x3xi1>
// CHECK-NEXT:    return %[[R]] : tensor<4x3xi1>
func.func @and(%x: tensor<4x3xi1>, %y: tensor<4x3xi1>) -> tensor<4x3xi1> {
  %0 = kiln.and %x, %y : tensor<4x3xi1>
  return %0 : tensor<4x3xi1>
}

// CHECK-LABEL: func.func @or(
// CHECK-SAME:    %[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    %[[R:.*]] = kiln.or %[[X]], %[[Y]] : tensor<4xi32>
// CHECK-NEXT:    return %[[R]] : tensor<4xi32>
func.func @or(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = kiln.or %x, %y : tensor<4xi32>
  return %0 : tensor<4xi32>
}

//===----------------------------------------------------------------------===//
// Compare, select, convert
//===----------------------------------------------------------------------===//

// The result is i1 of the operand shape; the format prints only the operand type.
// CHECK-LABEL: func.func @compare(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>, %[[Y:.*]]: tensor<4x3xf32>, %[[I:.*]]: tensor<5xi32>, %[[J:.*]]: tensor<5xi32>)
// CHECK-SAME:    -> (tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>, tensor<5xi1>, tensor<5xi1>)
// CHECK-NEXT:    %[[EQ:.*]] = kiln.compare eq, %[[X]], %[[Y]] : tensor<4x3xf32>
// CHECK-NEXT:    %[[NE:.*]] = kiln.compare ne, %[[X]], %[[Y]] : tensor<4x3xf32>
// CHECK-NEXT:    %[[LT:.*]] = kiln.compare lt, %[[X]], %[[Y]] : tensor<4x3xf32>
// CHECK-NEXT:    %[[LE:.*]] = kiln.compare le, %[[X]], %[[Y]] : tensor<4x3xf32>
// CHECK-NEXT:    %[[GT:.*]] = kiln.compare gt, %[[I]], %[[J]] : tensor<5xi32>
// CHECK-NEXT:    %[[GE:.*]] = kiln.compare ge, %[[I]], %[[J]] : tensor<5xi32>
// CHECK-NEXT:    return %[[EQ]], %[[NE]], %[[LT]], %[[LE]], %[[GT]], %[[GE]] : tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>, tensor<5xi1>, tensor<5xi1>
func.func @compare(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>, %i: tensor<5xi32>, %j: tensor<5xi32>)
    -> (tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>, tensor<5xi1>,
        tensor<5xi1>) {
  %0 = kiln.compare eq, %x, %y : tensor<4x3xf32>
  %1 = kiln.compare ne, %x, %y : tensor<4x3xf32>
  %2 = kiln.compare lt, %x, %y : tensor<4x3xf32>
  %3 = kiln.compare le, %x, %y : tensor<4x3xf32>
  %4 = kiln.compare gt, %i, %j : tensor<5xi32>
  %5 = kiln.compare ge, %i, %j : tensor<5xi32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>,
      tensor<4x3xi1>, tensor<5xi1>, tensor<5xi1>
}

// CHECK-LABEL: func.func @select(
// CHECK-SAME:    %[[M:.*]]: tensor<4x3xi1>, %[[X:.*]]: tensor<4x3xf32>, %[[Y:.*]]: tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.select %[[M]], %[[X]], %[[Y]] : tensor<4x3xi1>, tensor<4x3xf32>
// CHECK-NEXT:    return %[[R]] : tensor<4x3xf32>
func.func @select(%m: tensor<4x3xi1>, %x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.select %m, %x, %y : tensor<4x3xi1>, tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @convert(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK-SAME:    -> (tensor<4x3xf16>, tensor<4x3xbf16>, tensor<4x3xf64>, tensor<4x3xi32>, tensor<4xf32>, tensor<4xi64>, tensor<4xi1>)
// CHECK-NEXT:    %[[F16:.*]] = kiln.convert %[[X]] : tensor<4x3xf32> to f16
// CHECK-NEXT:    %[[BF16:.*]] = kiln.convert %[[X]] : tensor<4x3xf32> to bf16
// CHECK-NEXT:    %[[F64:.*]] = kiln.convert %[[X]] : tensor<4x3xf32> to f64
// CHECK-NEXT:    %[[TOI32:.*]] = kiln.convert %[[X]] : tensor<4x3xf32> to i32
// CHECK-NEXT:    %[[TOF32:.*]] = kiln.convert %[[I]] : tensor<4xi32> to f32
// CHECK-NEXT:    %[[I64:.*]] = kiln.convert %[[I]] : tensor<4xi32> to i64
// CHECK-NEXT:    %[[I1:.*]] = kiln.convert %[[I]] : tensor<4xi32> to i1
// CHECK-NEXT:    return %[[F16]], %[[BF16]], %[[F64]], %[[TOI32]], %[[TOF32]], %[[I64]], %[[I1]]
func.func @convert(%x: tensor<4x3xf32>, %i: tensor<4xi32>)
    -> (tensor<4x3xf16>, tensor<4x3xbf16>, tensor<4x3xf64>, tensor<4x3xi32>, tensor<4xf32>,
        tensor<4xi64>, tensor<4xi1>) {
  %0 = kiln.convert %x : tensor<4x3xf32> to f16
  %1 = kiln.convert %x : tensor<4x3xf32> to bf16
  %2 = kiln.convert %x : tensor<4x3xf32> to f64
  %3 = kiln.convert %x : tensor<4x3xf32> to i32
  %4 = kiln.convert %i : tensor<4xi32> to f32
  %5 = kiln.convert %i : tensor<4xi32> to i64
  %6 = kiln.convert %i : tensor<4xi32> to i1
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4x3xf16>, tensor<4x3xbf16>, tensor<4x3xf64>,
      tensor<4x3xi32>, tensor<4xf32>, tensor<4xi64>, tensor<4xi1>
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @broadcast_in_dim(
// CHECK-SAME:    %[[R:.*]]: tensor<3xf32>, %[[S:.*]]: tensor<f64>) -> (tensor<4x3xf32>, tensor<3x2x4xf32>, tensor<2x2xf64>)
// CHECK-NEXT:    %[[B0:.*]] = kiln.broadcast_in_dim %[[R]], dims = [1], shape = [4, 3] : tensor<3xf32>
// CHECK-NEXT:    %[[B1:.*]] = kiln.broadcast_in_dim %[[R]], dims = [0], shape = [3, 2, 4] : tensor<3xf32>
// CHECK-NEXT:    %[[B2:.*]] = kiln.broadcast_in_dim %[[S]], dims = [], shape = [2, 2] : tensor<f64>
// CHECK-NEXT:    return %[[B0]], %[[B1]], %[[B2]] : tensor<4x3xf32>, tensor<3x2x4xf32>, tensor<2x2xf64>
func.func @broadcast_in_dim(%r: tensor<3xf32>, %s: tensor<f64>)
    -> (tensor<4x3xf32>, tensor<3x2x4xf32>, tensor<2x2xf64>) {
  %0 = kiln.broadcast_in_dim %r, dims = [1], shape = [4, 3] : tensor<3xf32>
  %1 = kiln.broadcast_in_dim %r, dims = [0], shape = [3, 2, 4] : tensor<3xf32>
  %2 = kiln.broadcast_in_dim %s, dims = [], shape = [2, 2] : tensor<f64>
  return %0, %1, %2 : tensor<4x3xf32>, tensor<3x2x4xf32>, tensor<2x2xf64>
}

// CHECK-LABEL: func.func @reshape(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>) -> (tensor<2x6xf32>, tensor<12xf32>, tensor<1x4x3x1xf32>)
// CHECK-NEXT:    %[[R0:.*]] = kiln.reshape %[[X]], shape = [2, 6] : tensor<4x3xf32>
// CHECK-NEXT:    %[[R1:.*]] = kiln.reshape %[[X]], shape = [12] : tensor<4x3xf32>
// CHECK-NEXT:    %[[R2:.*]] = kiln.reshape %[[X]], shape = [1, 4, 3, 1] : tensor<4x3xf32>
// CHECK-NEXT:    return %[[R0]], %[[R1]], %[[R2]] : tensor<2x6xf32>, tensor<12xf32>, tensor<1x4x3x1xf32>
func.func @reshape(%x: tensor<4x3xf32>) -> (tensor<2x6xf32>, tensor<12xf32>, tensor<1x4x3x1xf32>) {
  %0 = kiln.reshape %x, shape = [2, 6] : tensor<4x3xf32>
  %1 = kiln.reshape %x, shape = [12] : tensor<4x3xf32>
  %2 = kiln.reshape %x, shape = [1, 4, 3, 1] : tensor<4x3xf32>
  return %0, %1, %2 : tensor<2x6xf32>, tensor<12xf32>, tensor<1x4x3x1xf32>
}

// CHECK-LABEL: func.func @transpose(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>, %[[Y:.*]]: tensor<2x3x4xi64>) -> (tensor<3x4xf32>, tensor<4x2x3xi64>)
// CHECK-NEXT:    %[[T0:.*]] = kiln.transpose %[[X]], permutation = [1, 0] : tensor<4x3xf32>
// CHECK-NEXT:    %[[T1:.*]] = kiln.transpose %[[Y]], permutation = [2, 0, 1] : tensor<2x3x4xi64>
// CHECK-NEXT:    return %[[T0]], %[[T1]] : tensor<3x4xf32>, tensor<4x2x3xi64>
func.func @transpose(%x: tensor<4x3xf32>, %y: tensor<2x3x4xi64>) -> (tensor<3x4xf32>, tensor<4x2x3xi64>) {
  %0 = kiln.transpose %x, permutation = [1, 0] : tensor<4x3xf32>
  %1 = kiln.transpose %y, permutation = [2, 0, 1] : tensor<2x3x4xi64>
  return %0, %1 : tensor<3x4xf32>, tensor<4x2x3xi64>
}

// Result extent per dim: ceil((limit - start) / stride).
// CHECK-LABEL: func.func @slice(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>, %[[Y:.*]]: tensor<10xi32>) -> (tensor<2x2xf32>, tensor<3xi32>)
// CHECK-NEXT:    %[[S0:.*]] = kiln.slice %[[X]], start = [0, 1], limit = [4, 3], stride = [2, 1] : tensor<4x3xf32>
// CHECK-NEXT:    %[[S1:.*]] = kiln.slice %[[Y]], start = [1], limit = [8], stride = [3] : tensor<10xi32>
// CHECK-NEXT:    return %[[S0]], %[[S1]] : tensor<2x2xf32>, tensor<3xi32>
func.func @slice(%x: tensor<4x3xf32>, %y: tensor<10xi32>) -> (tensor<2x2xf32>, tensor<3xi32>) {
  %0 = kiln.slice %x, start = [0, 1], limit = [4, 3], stride = [2, 1] : tensor<4x3xf32>
  %1 = kiln.slice %y, start = [1], limit = [8], stride = [3] : tensor<10xi32>
  return %0, %1 : tensor<2x2xf32>, tensor<3xi32>
}

// CHECK-LABEL: func.func @concat(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>, %[[Y:.*]]: tensor<4x3xf32>, %[[A:.*]]: tensor<2x1xi64>, %[[B:.*]]: tensor<2x2xi64>, %[[C:.*]]: tensor<2x3xi64>)
// CHECK-SAME:    -> (tensor<8x3xf32>, tensor<2x6xi64>)
// CHECK-NEXT:    %[[C0:.*]] = kiln.concat(%[[X]], %[[Y]]) dim = 0 : tensor<4x3xf32>, tensor<4x3xf32>
// CHECK-NEXT:    %[[C1:.*]] = kiln.concat(%[[A]], %[[B]], %[[C]]) dim = 1 : tensor<2x1xi64>, tensor<2x2xi64>, tensor<2x3xi64>
// CHECK-NEXT:    return %[[C0]], %[[C1]] : tensor<8x3xf32>, tensor<2x6xi64>
func.func @concat(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>, %a: tensor<2x1xi64>, %b: tensor<2x2xi64>,
                  %c: tensor<2x3xi64>) -> (tensor<8x3xf32>, tensor<2x6xi64>) {
  %0 = kiln.concat(%x, %y) dim = 0 : tensor<4x3xf32>, tensor<4x3xf32>
  %1 = kiln.concat(%a, %b, %c) dim = 1 : tensor<2x1xi64>, tensor<2x2xi64>, tensor<2x3xi64>
  return %0, %1 : tensor<8x3xf32>, tensor<2x6xi64>
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reduce_sum(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>, %[[I:.*]]: tensor<2x3x4xi32>) -> (tensor<4xf32>, tensor<3xi32>)
// CHECK-NEXT:    %[[R0:.*]] = kiln.reduce sum %[[X]], dims = [1] : tensor<4x3xf32>
// CHECK-NEXT:    %[[R1:.*]] = kiln.reduce sum %[[I]], dims = [0, 2] : tensor<2x3x4xi32>
// CHECK-NEXT:    return %[[R0]], %[[R1]] : tensor<4xf32>, tensor<3xi32>
func.func @reduce_sum(%x: tensor<4x3xf32>, %i: tensor<2x3x4xi32>) -> (tensor<4xf32>, tensor<3xi32>) {
  %0 = kiln.reduce sum %x, dims = [1] : tensor<4x3xf32>
  %1 = kiln.reduce sum %i, dims = [0, 2] : tensor<2x3x4xi32>
  return %0, %1 : tensor<4xf32>, tensor<3xi32>
}

// CHECK-LABEL: func.func @reduce_max(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf64>) -> tensor<3xf64>
// CHECK-NEXT:    %[[R:.*]] = kiln.reduce max %[[X]], dims = [0] : tensor<4x3xf64>
// CHECK-NEXT:    return %[[R]] : tensor<3xf64>
func.func @reduce_max(%x: tensor<4x3xf64>) -> tensor<3xf64> {
  %0 = kiln.reduce max %x, dims = [0] : tensor<4x3xf64>
  return %0 : tensor<3xf64>
}

// Reducing every dim gives a rank-0 tensor.
// CHECK-LABEL: func.func @reduce_min(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf16>) -> tensor<f16>
// CHECK-NEXT:    %[[R:.*]] = kiln.reduce min %[[X]], dims = [0, 1] : tensor<4x3xf16>
// CHECK-NEXT:    return %[[R]] : tensor<f16>
func.func @reduce_min(%x: tensor<4x3xf16>) -> tensor<f16> {
  %0 = kiln.reduce min %x, dims = [0, 1] : tensor<4x3xf16>
  return %0 : tensor<f16>
}

// CHECK-LABEL: func.func @reduce_prod(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xi64>) -> tensor<4x1xi64>
// CHECK-NEXT:    %[[R:.*]] = kiln.reduce prod %[[X]], dims = [1] keep_dims : tensor<4x3xi64>
// CHECK-NEXT:    return %[[R]] : tensor<4x1xi64>
func.func @reduce_prod(%x: tensor<4x3xi64>) -> tensor<4x1xi64> {
  %0 = kiln.reduce prod %x, dims = [1] keep_dims : tensor<4x3xi64>
  return %0 : tensor<4x1xi64>
}

// CHECK-LABEL: func.func @reduce_mean(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>, %[[Y:.*]]: tensor<2x3x4xbf16>) -> (tensor<4x1xf32>, tensor<1x3x1xbf16>)
// CHECK-NEXT:    %[[R0:.*]] = kiln.reduce mean %[[X]], dims = [1] keep_dims : tensor<4x3xf32>
// CHECK-NEXT:    %[[R1:.*]] = kiln.reduce mean %[[Y]], dims = [0, 2] keep_dims : tensor<2x3x4xbf16>
// CHECK-NEXT:    return %[[R0]], %[[R1]] : tensor<4x1xf32>, tensor<1x3x1xbf16>
func.func @reduce_mean(%x: tensor<4x3xf32>, %y: tensor<2x3x4xbf16>) -> (tensor<4x1xf32>, tensor<1x3x1xbf16>) {
  %0 = kiln.reduce mean %x, dims = [1] keep_dims : tensor<4x3xf32>
  %1 = kiln.reduce mean %y, dims = [0, 2] keep_dims : tensor<2x3x4xbf16>
  return %0, %1 : tensor<4x1xf32>, tensor<1x3x1xbf16>
}

//===----------------------------------------------------------------------===//
// Matmul, convolution, pooling
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:    %[[A:.*]]: tensor<8x3xf32>, %[[B:.*]]: tensor<3x5xf32>) -> tensor<8x5xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.matmul %[[A]], %[[B]] : tensor<8x3xf32>, tensor<3x5xf32>
// CHECK-NEXT:    return %[[R]] : tensor<8x5xf32>
func.func @matmul(%a: tensor<8x3xf32>, %b: tensor<3x5xf32>) -> tensor<8x5xf32> {
  %0 = kiln.matmul %a, %b : tensor<8x3xf32>, tensor<3x5xf32>
  return %0 : tensor<8x5xf32>
}

// CHECK-LABEL: func.func @matmul_batched(
// CHECK-SAME:    %[[A:.*]]: tensor<2x4x3xbf16>, %[[B:.*]]: tensor<2x3x5xbf16>) -> tensor<2x4x5xbf16>
// CHECK-NEXT:    %[[R:.*]] = kiln.matmul %[[A]], %[[B]] : tensor<2x4x3xbf16>, tensor<2x3x5xbf16>
// CHECK-NEXT:    return %[[R]] : tensor<2x4x5xbf16>
func.func @matmul_batched(%a: tensor<2x4x3xbf16>, %b: tensor<2x3x5xbf16>) -> tensor<2x4x5xbf16> {
  %0 = kiln.matmul %a, %b : tensor<2x4x3xbf16>, tensor<2x3x5xbf16>
  return %0 : tensor<2x4x5xbf16>
}

// CHECK-LABEL: func.func @conv2d_bias_relu(
// CHECK-NEXT:    kiln.conv2d %{{.*}}, %{{.*}} bias(%{{.*}} : tensor<16xf32>), stride = [1, 1], padding = [1, 1, 1, 1], dilation = [1, 1], groups = 1 relu : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>
func.func @conv2d_bias_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x8x8xf32> {
  %0 = kiln.conv2d %x, %w bias(%b : tensor<16xf32>), stride = [1, 1], padding = [1, 1, 1, 1],
         dilation = [1, 1], groups = 1 relu : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// CHECK-LABEL: func.func @addmm(
// CHECK-SAME:    %[[A:.*]]: tensor<8x3xf32>, %[[W:.*]]: tensor<5x3xf32>, %[[C:.*]]: tensor<5xf32>) -> tensor<8x5xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.addmm %[[A]], %[[W]], %[[C]] transpose_b relu : tensor<8x3xf32>, tensor<5x3xf32>, tensor<5xf32>
// CHECK-NEXT:    %[[S:.*]] = kiln.addmm %[[A]], %[[W]], %[[C]] transpose_b : tensor<8x3xf32>, tensor<5x3xf32>, tensor<5xf32>
// CHECK-NEXT:    return %[[R]] : tensor<8x5xf32>
func.func @addmm(%a: tensor<8x3xf32>, %w: tensor<5x3xf32>, %c: tensor<5xf32>) -> tensor<8x5xf32> {
  %0 = kiln.addmm %a, %w, %c transpose_b relu : tensor<8x3xf32>, tensor<5x3xf32>, tensor<5xf32>
  %1 = kiln.addmm %a, %w, %c transpose_b : tensor<8x3xf32>, tensor<5x3xf32>, tensor<5xf32>
  return %0 : tensor<8x5xf32>
}

// CHECK-LABEL: func.func @matmul_transpose_a(
// CHECK-SAME:    %[[A:.*]]: tensor<3x8xf16>, %[[B:.*]]: tensor<3x5xf16>) -> tensor<8x5xf16>
// CHECK-NEXT:    %[[R:.*]] = kiln.matmul %[[A]], %[[B]] transpose_a : tensor<3x8xf16>, tensor<3x5xf16>
// CHECK-NEXT:    return %[[R]] : tensor<8x5xf16>
func.func @matmul_transpose_a(%a: tensor<3x8xf16>, %b: tensor<3x5xf16>) -> tensor<8x5xf16> {
  %0 = kiln.matmul %a, %b transpose_a : tensor<3x8xf16>, tensor<3x5xf16>
  return %0 : tensor<8x5xf16>
}

// CHECK-LABEL: func.func @matmul_transpose_b(
// CHECK-SAME:    %[[A:.*]]: tensor<8x3xf32>, %[[W:.*]]: tensor<5x3xf32>) -> tensor<8x5xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.matmul %[[A]], %[[W]] transpose_b : tensor<8x3xf32>, tensor<5x3xf32>
// CHECK-NEXT:    return %[[R]] : tensor<8x5xf32>
func.func @matmul_transpose_b(%a: tensor<8x3xf32>, %w: tensor<5x3xf32>) -> tensor<8x5xf32> {
  %0 = kiln.matmul %a, %w transpose_b : tensor<8x3xf32>, tensor<5x3xf32>
  return %0 : tensor<8x5xf32>
}

// Output extent: (in + pad_low + pad_high - dilation * (k - 1) - 1) / stride + 1.
// CHECK-LABEL: func.func @conv2d(
// CHECK-SAME:    %[[IMG:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<16x3x3x3xf32>) -> (tensor<1x16x8x8xf32>, tensor<1x16x4x4xf32>)
// CHECK-NEXT:    %[[C0:.*]] = kiln.conv2d %[[IMG]], %[[W]], stride = [1, 1], padding = [1, 1, 1, 1], dilation = [1, 1], groups = 1 : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>
// CHECK-NEXT:    %[[C1:.*]] = kiln.conv2d %[[IMG]], %[[W]], stride = [2, 2], padding = [0, 1, 0, 1], dilation = [1, 1], groups = 1 : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>
// CHECK-NEXT:    return %[[C0]], %[[C1]] : tensor<1x16x8x8xf32>, tensor<1x16x4x4xf32>
func.func @conv2d(%img: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>)
    -> (tensor<1x16x8x8xf32>, tensor<1x16x4x4xf32>) {
  %0 = kiln.conv2d %img, %w, stride = [1, 1], padding = [1, 1, 1, 1], dilation = [1, 1],
         groups = 1 : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>
  // Asymmetric ("same"-style) padding with stride 2.
  %1 = kiln.conv2d %img, %w, stride = [2, 2], padding = [0, 1, 0, 1], dilation = [1, 1],
         groups = 1 : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>
  return %0, %1 : tensor<1x16x8x8xf32>, tensor<1x16x4x4xf32>
}

// Weight is [out_channels, in_channels / groups, kh, kw].
// CHECK-LABEL: func.func @conv2d_groups(
// CHECK-SAME:    %[[IMG:.*]]: tensor<2x4x8x8xf16>, %[[W:.*]]: tensor<6x2x3x3xf16>) -> tensor<2x6x6x6xf16>
// CHECK-NEXT:    %[[R:.*]] = kiln.conv2d %[[IMG]], %[[W]], stride = [1, 1], padding = [0, 0, 0, 0], dilation = [1, 1], groups = 2 : tensor<2x4x8x8xf16>, tensor<6x2x3x3xf16>
// CHECK-NEXT:    return %[[R]] : tensor<2x6x6x6xf16>
func.func @conv2d_groups(%img: tensor<2x4x8x8xf16>, %w: tensor<6x2x3x3xf16>) -> tensor<2x6x6x6xf16> {
  %0 = kiln.conv2d %img, %w, stride = [1, 1], padding = [0, 0, 0, 0], dilation = [1, 1],
         groups = 2 : tensor<2x4x8x8xf16>, tensor<6x2x3x3xf16>
  return %0 : tensor<2x6x6x6xf16>
}

// CHECK-LABEL: func.func @conv2d_depthwise(
// CHECK-SAME:    %[[IMG:.*]]: tensor<1x8x8x8xf32>, %[[W:.*]]: tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.conv2d %[[IMG]], %[[W]], stride = [1, 1], padding = [1, 1, 1, 1], dilation = [1, 1], groups = 8 : tensor<1x8x8x8xf32>, tensor<8x1x3x3xf32>
// CHECK-NEXT:    return %[[R]] : tensor<1x8x8x8xf32>
func.func @conv2d_depthwise(%img: tensor<1x8x8x8xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %0 = kiln.conv2d %img, %w, stride = [1, 1], padding = [1, 1, 1, 1], dilation = [1, 1],
         groups = 8 : tensor<1x8x8x8xf32>, tensor<8x1x3x3xf32>
  return %0 : tensor<1x8x8x8xf32>
}

// Dilation 2 on H makes the 3x3 kernel span 5 rows: 8 - 5 + 1 = 4; W keeps dilation 1.
// CHECK-LABEL: func.func @conv2d_dilation(
// CHECK-SAME:    %[[IMG:.*]]: tensor<1x3x8x8xf64>, %[[W:.*]]: tensor<4x3x3x3xf64>) -> tensor<1x4x4x6xf64>
// CHECK-NEXT:    %[[R:.*]] = kiln.conv2d %[[IMG]], %[[W]], stride = [1, 1], padding = [0, 0, 0, 0], dilation = [2, 1], groups = 1 : tensor<1x3x8x8xf64>, tensor<4x3x3x3xf64>
// CHECK-NEXT:    return %[[R]] : tensor<1x4x4x6xf64>
func.func @conv2d_dilation(%img: tensor<1x3x8x8xf64>, %w: tensor<4x3x3x3xf64>) -> tensor<1x4x4x6xf64> {
  %0 = kiln.conv2d %img, %w, stride = [1, 1], padding = [0, 0, 0, 0], dilation = [2, 1],
         groups = 1 : tensor<1x3x8x8xf64>, tensor<4x3x3x3xf64>
  return %0 : tensor<1x4x4x6xf64>
}

// CHECK-LABEL: func.func @pool2d(
// CHECK-SAME:    %[[IMG:.*]]: tensor<1x3x8x8xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x8x8xf32>)
// CHECK-NEXT:    %[[P0:.*]] = kiln.pool2d max %[[IMG]], window = [2, 2], stride = [2, 2], padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32>
// CHECK-NEXT:    %[[P1:.*]] = kiln.pool2d avg %[[IMG]], window = [3, 3], stride = [1, 1], padding = [1, 1, 1, 1] : tensor<1x3x8x8xf32>
// CHECK-NEXT:    return %[[P0]], %[[P1]] : tensor<1x3x4x4xf32>, tensor<1x3x8x8xf32>
func.func @pool2d(%img: tensor<1x3x8x8xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x8x8xf32>) {
  %0 = kiln.pool2d max %img, window = [2, 2], stride = [2, 2], padding = [0, 0, 0, 0]
         : tensor<1x3x8x8xf32>
  %1 = kiln.pool2d avg %img, window = [3, 3], stride = [1, 1], padding = [1, 1, 1, 1]
         : tensor<1x3x8x8xf32>
  return %0, %1 : tensor<1x3x4x4xf32>, tensor<1x3x8x8xf32>
}

//===----------------------------------------------------------------------===//
// Gather, rng
//===----------------------------------------------------------------------===//

// take semantics: result = x.shape[:d] ++ indices.shape ++ x.shape[d+1:].
// CHECK-LABEL: func.func @gather(
// CHECK-SAME:    %[[X:.*]]: tensor<4x6xf32>, %[[IDX:.*]]: tensor<5xi32>) -> tensor<4x5xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.gather %[[X]][%[[IDX]]], dim = 1 : tensor<4x6xf32>, tensor<5xi32>
// CHECK-NEXT:    return %[[R]] : tensor<4x5xf32>
func.func @gather(%x: tensor<4x6xf32>, %idx: tensor<5xi32>) -> tensor<4x5xf32> {
  %0 = kiln.gather %x[%idx], dim = 1 : tensor<4x6xf32>, tensor<5xi32>
  return %0 : tensor<4x5xf32>
}

// Embedding lookup: [V, D] table, [B, T] ids.
// CHECK-LABEL: func.func @gather_2d_indices(
// CHECK-SAME:    %[[TABLE:.*]]: tensor<10x4xf32>, %[[IDS:.*]]: tensor<2x3xi64>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.gather %[[TABLE]][%[[IDS]]], dim = 0 : tensor<10x4xf32>, tensor<2x3xi64>
// CHECK-NEXT:    return %[[R]] : tensor<2x3x4xf32>
func.func @gather_2d_indices(%table: tensor<10x4xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %0 = kiln.gather %table[%ids], dim = 0 : tensor<10x4xf32>, tensor<2x3xi64>
  return %0 : tensor<2x3x4xf32>
}

// gather's adjoint: the [2, 3] index dims of the updates become one dim of size 10.
// CHECK-LABEL: func.func @scatter_add(
// CHECK-SAME:    %[[G:.*]]: tensor<2x3x4xf32>, %[[IDS:.*]]: tensor<2x3xi64>) -> tensor<10x4xf32>
// CHECK-NEXT:    %[[R:.*]] = kiln.scatter_add %[[G]][%[[IDS]]], dim = 0, size = 10 : tensor<2x3x4xf32>, tensor<2x3xi64>
// CHECK-NEXT:    return %[[R]] : tensor<10x4xf32>
func.func @scatter_add(%g: tensor<2x3x4xf32>, %ids: tensor<2x3xi64>) -> tensor<10x4xf32> {
  %0 = kiln.scatter_add %g[%ids], dim = 0, size = 10 : tensor<2x3x4xf32>, tensor<2x3xi64>
  return %0 : tensor<10x4xf32>
}

// CHECK-LABEL: func.func @scatter_add_inner_dim(
// CHECK:         kiln.scatter_add %{{.*}}[%{{.*}}], dim = 1, size = 6 : tensor<4x5xi32>, tensor<5xi32>
// CHECK-NEXT:    return %{{.*}} : tensor<4x6xi32>
func.func @scatter_add_inner_dim(%g: tensor<4x5xi32>, %ids: tensor<5xi32>) -> tensor<4x6xi32> {
  %0 = kiln.scatter_add %g[%ids], dim = 1, size = 6 : tensor<4x5xi32>, tensor<5xi32>
  return %0 : tensor<4x6xi32>
}

// A collective: the result has the operand's type; sum and max take any element type.
// CHECK-LABEL: func.func @all_reduce(
// CHECK-SAME:    %[[G:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<2xi1>, %[[I:.*]]: tensor<i64>)
// CHECK-NEXT:    %[[M:.*]] = kiln.all_reduce mean %[[G]] : tensor<4x3xf32>
// CHECK-NEXT:    %[[S:.*]] = kiln.all_reduce sum %[[B]] : tensor<2xi1>
// CHECK-NEXT:    %[[X:.*]] = kiln.all_reduce max %[[I]] : tensor<i64>
// CHECK-NEXT:    return %[[M]], %[[S]], %[[X]] : tensor<4x3xf32>, tensor<2xi1>, tensor<i64>
func.func @all_reduce(%g: tensor<4x3xf32>, %b: tensor<2xi1>, %i: tensor<i64>)
    -> (tensor<4x3xf32>, tensor<2xi1>, tensor<i64>) {
  %0 = kiln.all_reduce mean %g : tensor<4x3xf32>
  %1 = kiln.all_reduce sum %b : tensor<2xi1>
  %2 = kiln.all_reduce max %i : tensor<i64>
  return %0, %1, %2 : tensor<4x3xf32>, tensor<2xi1>, tensor<i64>
}

// Non-blocking: the start's result is read by its wait only.
// CHECK-LABEL: func.func @all_reduce_start_wait(
// CHECK-SAME:    %[[G:.*]]: tensor<4x3xf32>)
// CHECK-NEXT:    %[[R:.*]] = kiln.all_reduce_start mean %[[G]] : tensor<4x3xf32>
// CHECK-NEXT:    %[[W:.*]] = kiln.wait %[[R]] : tensor<4x3xf32>
// CHECK-NEXT:    return %[[W]] : tensor<4x3xf32>
func.func @all_reduce_start_wait(%g: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.all_reduce_start mean %g : tensor<4x3xf32>
  %1 = kiln.wait %0 : tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @rng_uniform(
// CHECK-SAME:    %[[KEY:.*]]: tensor<2xi64>) -> (tensor<2x3xf64>, tensor<2xi64>)
// CHECK-NEXT:    %[[S:.*]], %[[K:.*]] = kiln.rng uniform %[[KEY]], shape = [2, 3], dtype = f64, params = [-1.000000e+00, 1.000000e+00] : tensor<2xi64>
// CHECK-NEXT:    return %[[S]], %[[K]] : tensor<2x3xf64>, tensor<2xi64>
func.func @rng_uniform(%key: tensor<2xi64>) -> (tensor<2x3xf64>, tensor<2xi64>) {
  %sample, %key2 = kiln.rng uniform %key, shape = [2, 3], dtype = f64, params = [-1.0, 1.0]
      : tensor<2xi64>
  return %sample, %key2 : tensor<2x3xf64>, tensor<2xi64>
}

// CHECK-LABEL: func.func @rng_normal(
// CHECK-SAME:    %[[KEY:.*]]: tensor<2xi64>) -> (tensor<4x4xf32>, tensor<2xi64>)
// CHECK-NEXT:    %[[S:.*]], %[[K:.*]] = kiln.rng normal %[[KEY]], shape = [4, 4], dtype = f32, params = [0.000000e+00, 1.000000e+00] : tensor<2xi64>
// CHECK-NEXT:    return %[[S]], %[[K]] : tensor<4x4xf32>, tensor<2xi64>
func.func @rng_normal(%key: tensor<2xi64>) -> (tensor<4x4xf32>, tensor<2xi64>) {
  %sample, %key2 = kiln.rng normal %key, shape = [4, 4], dtype = f32, params = [0.0, 1.0]
      : tensor<2xi64>
  return %sample, %key2 : tensor<4x4xf32>, tensor<2xi64>
}

// CHECK-LABEL: func.func @rng_bernoulli(
// CHECK-SAME:    %[[KEY:.*]]: tensor<2xi64>) -> (tensor<8xf32>, tensor<2xi64>)
// CHECK-NEXT:    %[[S:.*]], %[[K:.*]] = kiln.rng bernoulli %[[KEY]], shape = [8], dtype = f32, params = [2.500000e-01] : tensor<2xi64>
// CHECK-NEXT:    return %[[S]], %[[K]] : tensor<8xf32>, tensor<2xi64>
func.func @rng_bernoulli(%key: tensor<2xi64>) -> (tensor<8xf32>, tensor<2xi64>) {
  %sample, %key2 = kiln.rng bernoulli %key, shape = [8], dtype = f32, params = [0.25]
      : tensor<2xi64>
  return %sample, %key2 : tensor<8xf32>, tensor<2xi64>
}

//===----------------------------------------------------------------------===//
// Fusion, yield, callback
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @fusion(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>, %[[Y:.*]]: tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[F:.*]] = kiln.fusion(%[[X]], %[[Y]]) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4x3xf32>):
// CHECK-NEXT:      %[[ONE:.*]] = kiln.constant dense<1.000000e+00> : tensor<4x3xf32>
// CHECK-NEXT:      %[[MUL:.*]] = kiln.mul %[[A]], %[[B]] : tensor<4x3xf32>
// CHECK-NEXT:      %[[ADD:.*]] = kiln.add %[[MUL]], %[[ONE]] : tensor<4x3xf32>
// CHECK-NEXT:      %[[EXP:.*]] = kiln.exp %[[ADD]] : tensor<4x3xf32>
// CHECK-NEXT:      kiln.yield %[[EXP]] : tensor<4x3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[F]] : tensor<4x3xf32>
func.func @fusion(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %f = kiln.fusion(%x, %y) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32> {
  ^bb0(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>):
    %one = kiln.constant dense<1.0> : tensor<4x3xf32>
    %0 = kiln.mul %a, %b : tensor<4x3xf32>
    %1 = kiln.add %0, %one : tensor<4x3xf32>
    %2 = kiln.exp %1 : tensor<4x3xf32>
    kiln.yield %2 : tensor<4x3xf32>
  }
  return %f : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @callback(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>, %[[I:.*]]: tensor<3xi32>) -> (tensor<4x3xf32>, tensor<i64>)
// CHECK-NEXT:    kiln.callback(%[[X]]) callee = 0 : (tensor<4x3xf32>) -> (){{$}}
// CHECK-NEXT:    %[[R:.*]]:2 = kiln.callback(%[[X]], %[[I]]) callee = 7 : (tensor<4x3xf32>, tensor<3xi32>) -> (tensor<4x3xf32>, tensor<i64>)
// CHECK-NEXT:    return %[[R]]#0, %[[R]]#1 : tensor<4x3xf32>, tensor<i64>
func.func @callback(%x: tensor<4x3xf32>, %i: tensor<3xi32>) -> (tensor<4x3xf32>, tensor<i64>) {
  kiln.callback(%x) callee = 0 : (tensor<4x3xf32>) -> ()
  %0:2 = kiln.callback(%x, %i) callee = 7 : (tensor<4x3xf32>, tensor<3xi32>) -> (tensor<4x3xf32>, tensor<i64>)
  return %0#0, %0#1 : tensor<4x3xf32>, tensor<i64>
}

//===----------------------------------------------------------------------===//
// Dynamic dims
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @dynamic_elementwise(
// CHECK-SAME:    %[[X:.*]]: tensor<?x3xf32>, %[[Y:.*]]: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xi1>)
// CHECK-NEXT:    %[[E:.*]] = kiln.exp %[[X]] : tensor<?x3xf32>
// CHECK-NEXT:    %[[S:.*]] = kiln.add %[[E]], %[[Y]] : tensor<?x3xf32>
// CHECK-NEXT:    %[[M:.*]] = kiln.compare gt, %[[S]], %[[Y]] : tensor<?x3xf32>
// CHECK-NEXT:    %[[V:.*]] = kiln.select %[[M]], %[[S]], %[[Y]] : tensor<?x3xi1>, tensor<?x3xf32>
// CHECK-NEXT:    return %[[V]], %[[M]] : tensor<?x3xf32>, tensor<?x3xi1>
func.func @dynamic_elementwise(%x: tensor<?x3xf32>, %y: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xi1>) {
  %0 = kiln.exp %x : tensor<?x3xf32>
  %1 = kiln.add %0, %y : tensor<?x3xf32>
  %2 = kiln.compare gt, %1, %y : tensor<?x3xf32>
  %3 = kiln.select %2, %1, %y : tensor<?x3xi1>, tensor<?x3xf32>
  return %3, %2 : tensor<?x3xf32>, tensor<?x3xi1>
}

// -----

// Dynamic sizes: index operands for the `?` entries of shape lists (issue 23).
// CHECK-LABEL: func.func @dynamic_sizes
// CHECK:         %[[N:.*]] = tensor.dim
// CHECK:         kiln.reshape %{{.*}}, shape = [%[[N]], 3, 2] : tensor<?x6xf32>
// CHECK:         kiln.broadcast_in_dim %{{.*}}, dims = [], shape = [%[[N]], 6] : tensor<f32>
// CHECK:         kiln.rng normal %{{.*}}, shape = [%[[N]], 2], dtype = f32, params = [0.000000e+00, 1.000000e+00] : tensor<2xi64>
// CHECK:         kiln.scatter_add %{{.*}}[%{{.*}}], dim = 0, size = %[[N]] : tensor<?x6xf32>, tensor<?xi64>
// CHECK:         kiln.iota dim = 0, shape = [%[[N]]], dtype = i64
// CHECK:         kiln.slice %{{.*}}, start = [0, 1], limit = [%[[N]], 4], stride = [1, 2] : tensor<?x6xf32>
func.func @dynamic_sizes(%x: tensor<?x6xf32>, %i: tensor<?xi64>, %key: tensor<2xi64>)
    -> (tensor<?x3x2xf32>, tensor<?x6xf32>, tensor<?x2xf32>, tensor<?x6xf32>, tensor<?xi64>, tensor<?x2xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x6xf32>
  %r = kiln.reshape %x, shape = [%n, 3, 2] : tensor<?x6xf32>
  %z = kiln.constant dense<0.0> : tensor<f32>
  %b = kiln.broadcast_in_dim %z, dims = [], shape = [%n, 6] : tensor<f32>
  %s, %k = kiln.rng normal %key, shape = [%n, 2], dtype = f32, params = [0.0, 1.0] : tensor<2xi64>
  %a = kiln.scatter_add %x[%i], dim = 0, size = %n : tensor<?x6xf32>, tensor<?xi64>
  %o = kiln.iota dim = 0, shape = [%n], dtype = i64
  %l = kiln.slice %x, start = [0, 1], limit = [%n, 4], stride = [1, 2] : tensor<?x6xf32>
  return %r, %b, %s, %a, %o, %l : tensor<?x3x2xf32>, tensor<?x6xf32>, tensor<?x2xf32>, tensor<?x6xf32>, tensor<?xi64>, tensor<?x2xf32>
}
