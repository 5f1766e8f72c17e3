// RUN: kiln-opt %s --kiln-convert-to-linalg -split-input-file | FileCheck %s

// kiln-convert-to-linalg on kiln.reduce: linalg.fill of the neutral element, a
// linalg.generic with reduction iterators over `dims`, then the rounding to the
// element type (float sums and products accumulate in f64, as the eager
// kernels) and mean's division by the count. With keep_dims the generic writes
// the kept shape itself (one unit loop per reduced dim), with no reshape.

// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[KEPT:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @sum_f32(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK:         %[[INIT:.*]] = tensor.empty() : tensor<3xf64>
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f64) outs(%[[INIT]] : tensor<3xf64>) -> tensor<3xf64>
// CHECK:         %[[ACC:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[KEPT]]], iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK-SAME:      ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[FILL]] : tensor<3xf64>)
// CHECK:         ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f64):
// CHECK:           %[[W:.*]] = arith.extf %[[IN]] : f32 to f64
// CHECK:           %[[S:.*]] = arith.addf %[[OUT]], %[[W]] fastmath<reassoc> : f64
// CHECK:           linalg.yield %[[S]] : f64
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[ACC]] : tensor<3xf64>)
// CHECK:           arith.truncf %{{.*}} : f64 to f32
// CHECK:         return %[[R]] : tensor<3xf32>
func.func @sum_f32(%x: tensor<2x3x4xf32>) -> tensor<3xf32> {
  %0 = kiln.reduce sum %x, dims = [0, 2] : tensor<2x3x4xf32>
  return %0 : tensor<3xf32>
}

// -----

// mean divides the f64 sum by the count, rounds to f16 through f32, and keeps
// the reduced dim as size 1: loop d0 is the kept unit dim, d2 the reduced one.
// CHECK-DAG:   #[[XMAP:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG:   #[[KMAP:.*]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-LABEL: func.func @mean_keep_dims_f16(
// CHECK:         linalg.fill {{.*}} -> tensor<4x1xf64>
// CHECK:         linalg.generic {indexing_maps = [#[[XMAP]], #[[KMAP]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:      outs(%{{.*}} : tensor<4x1xf64>)
// CHECK:         ^bb0(%[[IN:.*]]: f16, %[[OUT:.*]]: f64):
// CHECK:           %[[W:.*]] = arith.extf %[[IN]] : f16 to f32
// CHECK:           %[[WW:.*]] = arith.extf %[[W]] : f32 to f64
// CHECK:           arith.addf %[[OUT]], %[[WW]] fastmath<reassoc> : f64
// CHECK:         ^bb0(%[[SUM:.*]]: f64, %{{.*}}: f16):
// CHECK:           %[[N:.*]] = arith.constant 3.000000e+00 : f64
// CHECK:           %[[M:.*]] = arith.divf %[[SUM]], %[[N]] : f64
// CHECK:           %[[F:.*]] = arith.truncf %[[M]] : f64 to f32
// CHECK:           arith.truncf %[[F]] : f32 to f16
// CHECK:         } -> tensor<4x1xf16>
// CHECK-NOT:     tensor.expand_shape
// CHECK:         return
func.func @mean_keep_dims_f16(%x: tensor<4x3xf16>) -> tensor<4x1xf16> {
  %0 = kiln.reduce mean %x, dims = [1] keep_dims : tensor<4x3xf16>
  return %0 : tensor<4x1xf16>
}

// -----

// Float max starts at -inf and takes a NaN (maximumf propagates it); no rounding step.
// All dims reduced with keep_dims: two unit loops, two reduction loops.
// CHECK-LABEL: func.func @max_all_keep_dims(
// CHECK:         %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[FILL:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<1x1xf32>) -> tensor<1x1xf32>
// CHECK:         %[[ACC:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK:         ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK:           %[[R:.*]] = arith.maximumf %[[OUT]], %[[IN]] : f32
// CHECK:           linalg.yield %[[R]] : f32
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     tensor.expand_shape
// CHECK:         return %[[ACC]] : tensor<1x1xf32>
func.func @max_all_keep_dims(%x: tensor<4x3xf32>) -> tensor<1x1xf32> {
  %0 = kiln.reduce max %x, dims = [0, 1] keep_dims : tensor<4x3xf32>
  return %0 : tensor<1x1xf32>
}

// -----

// Integers reduce in their own width: neutral elements 1, INT_MAX and INT_MIN.
// CHECK-LABEL: func.func @integers(
// CHECK:         arith.constant 1 : i64
// CHECK:         arith.muli %{{.*}}, %{{.*}} : i64
// CHECK:         arith.constant 2147483647 : i32
// CHECK:         arith.minsi %{{.*}}, %{{.*}} : i32
// CHECK:         arith.constant -2147483648 : i32
// CHECK:         arith.maxsi %{{.*}}, %{{.*}} : i32
// CHECK:         arith.constant 0 : i32
// CHECK:         arith.addi %{{.*}}, %{{.*}} : i32
// CHECK-NOT:     linalg.generic
func.func @integers(%x: tensor<4x3xi64>, %y: tensor<4x3xi32>)
    -> (tensor<4xi64>, tensor<3xi32>, tensor<4xi32>, tensor<i32>) {
  %0 = kiln.reduce prod %x, dims = [1] : tensor<4x3xi64>
  %1 = kiln.reduce min %y, dims = [0] : tensor<4x3xi32>
  %2 = kiln.reduce max %y, dims = [1] : tensor<4x3xi32>
  %3 = kiln.reduce sum %y, dims = [0, 1] : tensor<4x3xi32>
  return %0, %1, %2, %3 : tensor<4xi64>, tensor<3xi32>, tensor<4xi32>, tensor<i32>
}

// -----

// Reductions inside a fusion body are converted with it.
// CHECK-LABEL: func.func @in_fusion(
// CHECK:         kiln.fusion
// CHECK:           linalg.fill
// CHECK:           linalg.generic
// CHECK:           kiln.yield
func.func @in_fusion(%x: tensor<4x3xf64>) -> tensor<4xf64> {
  %f = kiln.fusion(%x) : (tensor<4x3xf64>) -> tensor<4xf64> {
  ^bb0(%a: tensor<4x3xf64>):
    %0 = kiln.reduce sum %a, dims = [1] : tensor<4x3xf64>
    kiln.yield %0 : tensor<4xf64>
  }
  return %f : tensor<4xf64>
}
