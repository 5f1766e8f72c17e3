// RUN: kiln-opt %s --kiln-convert-to-linalg -split-input-file | FileCheck %s

// kiln-convert-to-linalg on elementwise ops, convert and constants: one
// linalg.generic per op (identity maps, parallel iterators) whose body computes
// what the eager kernel does; f16 and bf16 are computed in f32.

// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @add(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>, %[[Y:.*]]: tensor<4x3xf32>)
// CHECK:         %[[INIT:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:      ins(%[[X]], %[[Y]] : tensor<4x3xf32>, tensor<4x3xf32>) outs(%[[INIT]] : tensor<4x3xf32>)
// CHECK:         ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK:           linalg.yield %[[S]] : f32
// CHECK:         return %[[R]]
func.func @add(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.add %x, %y : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @float_unary(
// CHECK:         math.exp
// CHECK:         math.log
// CHECK:         math.sqrt
// CHECK:         %[[ROOT:.*]] = math.sqrt
// CHECK:         arith.divf %{{.*}}, %[[ROOT]]
// CHECK:         math.tanh
// CHECK:         %[[NEG:.*]] = arith.negf
// CHECK:         %[[E:.*]] = math.exp %[[NEG]]
// CHECK:         %[[D:.*]] = arith.addf %{{.*}}, %[[E]]
// CHECK:         arith.divf %{{.*}}, %[[D]]
// CHECK:         math.sin
// CHECK:         math.cos
// CHECK:         math.floor
// CHECK:         math.absf
// CHECK:         arith.negf
// CHECK-NOT:     kiln.
func.func @float_unary(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = kiln.exp %x : tensor<8xf32>
  %1 = kiln.log %0 : tensor<8xf32>
  %2 = kiln.sqrt %1 : tensor<8xf32>
  %3 = kiln.rsqrt %2 : tensor<8xf32>
  %4 = kiln.tanh %3 : tensor<8xf32>
  %5 = kiln.sigmoid %4 : tensor<8xf32>
  %6 = kiln.sin %5 : tensor<8xf32>
  %7 = kiln.cos %6 : tensor<8xf32>
  %8 = kiln.floor %7 : tensor<8xf32>
  %9 = kiln.abs %8 : tensor<8xf32>
  %10 = kiln.neg %9 : tensor<8xf32>
  return %10 : tensor<8xf32>
}

// -----

// The exact (erf) gelu, in f32 for f16: (0.5 * x) * (1 + erf(x * sqrt(2)/2)).
// CHECK-LABEL: func.func @gelu_f16(
// CHECK:         ^bb0(%[[IN:.*]]: f16, %{{.*}}: f16):
// CHECK:           %[[X:.*]] = arith.extf %[[IN]] : f16 to f32
// CHECK-DAG:       %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG:       %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:       %[[C:.*]] = arith.constant 0.707106769 : f32
// CHECK:           %[[XC:.*]] = arith.mulf %[[X]], %[[C]] : f32
// CHECK:           %[[ERF:.*]] = math.erf %[[XC]] : f32
// CHECK:           %[[SUM:.*]] = arith.addf %[[ONE]], %[[ERF]] : f32
// CHECK:           %[[HX:.*]] = arith.mulf %[[HALF]], %[[X]] : f32
// CHECK:           %[[G:.*]] = arith.mulf %[[HX]], %[[SUM]] : f32
// CHECK:           %[[R:.*]] = arith.truncf %[[G]] : f32 to f16
// CHECK:           linalg.yield %[[R]] : f16
func.func @gelu_f16(%x: tensor<8xf16>) -> tensor<8xf16> {
  %0 = kiln.gelu %x : tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

// bf16 arithmetic rounds once, from f32.
// CHECK-LABEL: func.func @mul_bf16(
// CHECK:         ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %{{.*}}: bf16):
// CHECK:           %[[A32:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK:           %[[B32:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK:           %[[P:.*]] = arith.mulf %[[A32]], %[[B32]] : f32
// CHECK:           arith.truncf %[[P]] : f32 to bf16
func.func @mul_bf16(%x: tensor<8xbf16>, %y: tensor<8xbf16>) -> tensor<8xbf16> {
  %0 = kiln.mul %x, %y : tensor<8xbf16>
  return %0 : tensor<8xbf16>
}

// -----

// relu keeps NaN (`ugt` is true for unordered); max and min return a NaN
// operand, else the better one (so max(+0, -0) is -0, as the eager kernel).
// CHECK-LABEL: func.func @relu_max_min_f32(
// CHECK:         ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           %[[KEEP:.*]] = arith.cmpf ugt, %[[V]], %[[Z]] : f32
// CHECK:           arith.select %[[KEEP]], %[[V]], %[[Z]] : f32
// CHECK:         ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[GT:.*]] = arith.cmpf ogt, %[[A]], %[[B]] : f32
// CHECK:           %[[BEST:.*]] = arith.select %[[GT]], %[[A]], %[[B]] : f32
// CHECK:           %[[BNAN:.*]] = arith.cmpf uno, %[[B]], %[[B]] : f32
// CHECK:           %[[T:.*]] = arith.select %[[BNAN]], %[[B]], %[[BEST]] : f32
// CHECK:           %[[ANAN:.*]] = arith.cmpf uno, %[[A]], %[[A]] : f32
// CHECK:           arith.select %[[ANAN]], %[[A]], %[[T]] : f32
// CHECK:         arith.cmpf olt
func.func @relu_max_min_f32(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %0 = kiln.relu %x : tensor<8xf32>
  %1 = kiln.max %0, %y : tensor<8xf32>
  %2 = kiln.min %1, %y : tensor<8xf32>
  return %2 : tensor<8xf32>
}

// -----

// Integers: negation as 0 - x, division truncating, max/min signed, relu as
// max with 0, not as xor with all ones.
// CHECK-LABEL: func.func @integer_ops(
// CHECK:         %[[Z:.*]] = arith.constant 0 : i32
// CHECK:         arith.subi %[[Z]], %{{.*}} : i32
// CHECK:         math.absi
// CHECK:         arith.divsi
// CHECK:         arith.maxsi
// CHECK:         arith.minsi
// CHECK:         arith.constant 0 : i32
// CHECK:         arith.maxsi
// CHECK:         %[[ONES:.*]] = arith.constant -1 : i32
// CHECK:         arith.xori %{{.*}}, %[[ONES]] : i32
// CHECK:         arith.andi
// CHECK:         arith.ori
func.func @integer_ops(%x: tensor<8xi32>, %y: tensor<8xi32>) -> tensor<8xi32> {
  %0 = kiln.neg %x : tensor<8xi32>
  %1 = kiln.abs %0 : tensor<8xi32>
  %2 = kiln.div %1, %y : tensor<8xi32>
  %3 = kiln.max %2, %y : tensor<8xi32>
  %4 = kiln.min %3, %y : tensor<8xi32>
  %5 = kiln.relu %4 : tensor<8xi32>
  %6 = kiln.not %5 : tensor<8xi32>
  %7 = kiln.and %6, %y : tensor<8xi32>
  %8 = kiln.or %7, %y : tensor<8xi32>
  return %8 : tensor<8xi32>
}

// -----

// Integer pow: ipowi for exponents >= 0 (never given a negative one), and for
// negative exponents 1 for base 1, +-1 for base -1, else 0. Float pow is powf.
// CHECK-LABEL: func.func @pow(
// CHECK:         ^bb0(%[[A:.*]]: i64, %[[B:.*]]: i64, %{{.*}}: i64):
// CHECK-DAG:       %[[Z:.*]] = arith.constant 0 : i64
// CHECK-DAG:       %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:       %[[M1:.*]] = arith.constant -1 : i64
// CHECK:           %[[E:.*]] = arith.maxsi %[[B]], %[[Z]] : i64
// CHECK:           %[[P:.*]] = math.ipowi %[[A]], %[[E]] : i64
// CHECK:           %[[NEGATIVE:.*]] = arith.cmpi slt, %[[B]], %[[Z]] : i64
// CHECK:           %[[R:.*]] = arith.select %[[NEGATIVE]], %{{.*}}, %[[P]] : i64
// CHECK:           linalg.yield %[[R]] : i64
// CHECK:         math.powf %{{.*}}, %{{.*}} : f32
func.func @pow(%x: tensor<8xi64>, %y: tensor<8xi64>, %f: tensor<8xf16>)
    -> (tensor<8xi64>, tensor<8xf16>) {
  %0 = kiln.pow %x, %y : tensor<8xi64>
  %1 = kiln.pow %f, %f : tensor<8xf16>
  return %0, %1 : tensor<8xi64>, tensor<8xf16>
}

// -----

// Floats compare ordered except `ne`, integers signed, i1 unsigned.
// CHECK-LABEL: func.func @compare(
// CHECK:         arith.cmpf oeq
// CHECK:         arith.cmpf une
// CHECK:         arith.cmpf ole
// CHECK:         arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK:         arith.cmpi sge, %{{.*}}, %{{.*}} : i32
// CHECK:         arith.cmpi ugt, %{{.*}}, %{{.*}} : i1
// CHECK:         ^bb0(%[[C:.*]]: i1, %[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK:           arith.select %[[C]], %[[A]], %[[B]] : f32
func.func @compare(%x: tensor<8xf32>, %y: tensor<8xf32>, %i: tensor<8xi32>,
                   %b: tensor<8xi1>)
    -> (tensor<8xi1>, tensor<8xi1>, tensor<8xi1>, tensor<8xi1>, tensor<8xi1>,
        tensor<8xi1>, tensor<8xf32>) {
  %0 = kiln.compare eq, %x, %y : tensor<8xf32>
  %1 = kiln.compare ne, %x, %y : tensor<8xf32>
  %2 = kiln.compare le, %x, %y : tensor<8xf32>
  %3 = kiln.compare lt, %i, %i : tensor<8xi32>
  %4 = kiln.compare ge, %i, %i : tensor<8xi32>
  %5 = kiln.compare gt, %b, %b : tensor<8xi1>
  %6 = kiln.select %0, %x, %y : tensor<8xi1>, tensor<8xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<8xi1>, tensor<8xi1>, tensor<8xi1>,
      tensor<8xi1>, tensor<8xi1>, tensor<8xi1>, tensor<8xf32>
}

// -----

// convert as the eager kernel: f64 to f16 through f32, bf16 to f16 through
// f32, floats to integers truncating, anything to i1 as `!= 0`, i1 unsigned.
// CHECK-LABEL: func.func @convert(
// CHECK:         ^bb0(%[[D:.*]]: f64, %{{.*}}: f16):
// CHECK:           %[[F:.*]] = arith.truncf %[[D]] : f64 to f32
// CHECK:           arith.truncf %[[F]] : f32 to f16
// CHECK:         ^bb0(%[[BF:.*]]: bf16, %{{.*}}: f16):
// CHECK:           %[[W:.*]] = arith.extf %[[BF]] : bf16 to f32
// CHECK:           arith.truncf %[[W]] : f32 to f16
// CHECK:         arith.fptosi %{{.*}} : f32 to i32
// CHECK:         arith.cmpf une, %{{.*}}, %{{.*}} : f32
// CHECK:         arith.cmpi ne, %{{.*}}, %{{.*}} : i64
// CHECK:         arith.uitofp %{{.*}} : i1 to f32
// CHECK:         arith.extui %{{.*}} : i1 to i64
// CHECK:         arith.sitofp %{{.*}} : i64 to f32
// CHECK:         arith.trunci %{{.*}} : i64 to i32
// CHECK:         arith.extsi %{{.*}} : i32 to i64
func.func @convert(%d: tensor<4xf64>, %h: tensor<4xbf16>, %f: tensor<4xf32>,
                   %i: tensor<4xi64>, %b: tensor<4xi1>, %j: tensor<4xi32>)
    -> (tensor<4xf16>, tensor<4xf16>, tensor<4xi32>, tensor<4xi1>, tensor<4xi1>,
        tensor<4xf32>, tensor<4xi64>, tensor<4xf32>, tensor<4xi32>, tensor<4xi64>) {
  %0 = kiln.convert %d : tensor<4xf64> to f16
  %1 = kiln.convert %h : tensor<4xbf16> to f16
  %2 = kiln.convert %f : tensor<4xf32> to i32
  %3 = kiln.convert %f : tensor<4xf32> to i1
  %4 = kiln.convert %i : tensor<4xi64> to i1
  %5 = kiln.convert %b : tensor<4xi1> to f32
  %6 = kiln.convert %b : tensor<4xi1> to i64
  %7 = kiln.convert %i : tensor<4xi64> to f32
  %8 = kiln.convert %i : tensor<4xi64> to i32
  %9 = kiln.convert %j : tensor<4xi32> to i64
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<4xf16>, tensor<4xf16>,
      tensor<4xi32>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xi64>,
      tensor<4xf32>, tensor<4xi32>, tensor<4xi64>
}

// -----

// CHECK-LABEL: func.func @constants(
// CHECK-DAG:     %[[A:.*]] = arith.constant dense<1.500000e+00> : tensor<4x3xf32>
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<[1, 2, 3]> : tensor<3xi64>
// CHECK:         return %[[A]], %[[B]]
func.func @constants() -> (tensor<4x3xf32>, tensor<3xi64>) {
  %0 = kiln.constant dense<1.5> : tensor<4x3xf32>
  %1 = kiln.constant dense<[1, 2, 3]> : tensor<3xi64>
  return %0, %1 : tensor<4x3xf32>, tensor<3xi64>
}

// -----

// `?` dims: the result takes its size from the operand.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME:    %[[X:.*]]: tensor<?x3xf32>
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x3xf32>
// CHECK:         %[[INIT:.*]] = tensor.empty(%[[N]]) : tensor<?x3xf32>
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%[[INIT]] : tensor<?x3xf32>)
// CHECK:           math.exp
func.func @dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = kiln.exp %x : tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// Library ops, rng, callbacks and fusions stay; fusion bodies are converted.
// CHECK-LABEL: func.func @unconverted(
// CHECK:         %[[F:.*]] = kiln.fusion(%{{.*}}) : (tensor<4x3xf32>) -> tensor<4x3xf32> {
// CHECK:           %[[G:.*]] = linalg.generic
// CHECK:             arith.cmpf ugt
// CHECK:           kiln.yield %[[G]] : tensor<4x3xf32>
// CHECK:         %[[M:.*]] = kiln.matmul %[[F]], %{{.*}} : tensor<4x3xf32>, tensor<3x5xf32>
// CHECK:         %[[S:.*]], %{{.*}} = kiln.rng uniform
// CHECK:         kiln.callback(%[[M]]) callee = 0
func.func @unconverted(%x: tensor<4x3xf32>, %w: tensor<3x5xf32>, %key: tensor<2xi64>)
    -> (tensor<4x5xf32>, tensor<4x4xf32>) {
  %f = kiln.fusion(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32> {
  ^bb0(%a: tensor<4x3xf32>):
    %0 = kiln.relu %a : tensor<4x3xf32>
    kiln.yield %0 : tensor<4x3xf32>
  }
  %m = kiln.matmul %f, %w : tensor<4x3xf32>, tensor<3x5xf32>
  %s, %k = kiln.rng uniform %key, shape = [4, 4], dtype = f32, params = [0.0, 1.0] : tensor<2xi64>
  %c = kiln.callback(%m) callee = 0 : (tensor<4x5xf32>) -> tensor<4x5xf32>
  return %c, %s : tensor<4x5xf32>, tensor<4x4xf32>
}

// -----

// A `?` size read from another converted op's result (tensor.dim of the exp) is
// resolved to the size that op was made with, so the exp keeps one use and
// linalg's elementwise fusion can merge the two.
// CHECK-LABEL: func.func @dynamic_chain(
// CHECK-SAME:    %[[X:.*]]: tensor<?x3xf32>
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x3xf32>
// CHECK:         %[[INIT:.*]] = tensor.empty(%[[N]]) : tensor<?x3xf32>
// CHECK:         %[[E:.*]] = linalg.generic {{.*}} outs(%[[INIT]] : tensor<?x3xf32>)
// CHECK-NOT:     tensor.dim %[[E]]
// CHECK:         %[[INIT2:.*]] = tensor.empty(%[[N]]) : tensor<?x3xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[E]] : tensor<?x3xf32>) outs(%[[INIT2]] : tensor<?x3xf32>)
func.func @dynamic_chain(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = kiln.exp %x : tensor<?x3xf32>
  %1 = kiln.neg %0 : tensor<?x3xf32>
  return %1 : tensor<?x3xf32>
}
