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

// -----

// A float32 sum of more than 16 elements pairs them as the eager kernels do: in each
// block of 32, element 32k + l with element 32k + 16 + l (l < 16), added in f32 before
// the f64 accumulator. Along a static row, as PairFold exactly: 16 f64 lanes, each
// element read once (no pair computed to be dropped). The whole blocks: one generic over
// the row and k (a window operand that is never read gives k its extent) reading x at
// 32k + e for e < 32 and writing 16 results, lane c adding x[32k + c] + x[32k + 16 + c]
// to 0 where k is 0 (a select: the lanes' buffers are not filled), else to itself. The last block (601 = 18 blocks + 25): its 9 pairs
// (576 + l with 592 + l) into lanes 0..8, its elements alone (585..591) into lanes
// 9..15; then one generic, with a unit reduction loop so that it is not fused into
// elementwise users, adds those to their lanes and combines the lanes by halving. No
// fast-math flags anywhere: the eager order.
// CHECK-DAG:   #[[E0:.*]] = affine_map<(d0, d1) -> (d0, d1 * 32)>
// CHECK-DAG:   #[[E16:.*]] = affine_map<(d0, d1) -> (d0, d1 * 32 + 16)>
// CHECK-DAG:   #[[E31:.*]] = affine_map<(d0, d1) -> (d0, d1 * 32 + 31)>
// CHECK-DAG:   #[[K:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG:   #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[TF:.*]] = affine_map<(d0, d1, d2) -> (d0, d1 * 32 + d2 + 576)>
// CHECK-DAG:   #[[TS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1 * 32 + d2 + 592)>
// CHECK-DAG:   #[[ALONE:.*]] = affine_map<(d0, d1, d2) -> (d0, d1 * 32 + d2 + 585)>
// CHECK-DAG:   #[[WINDOW:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG:   #[[LANE:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG:   #[[L0:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG:   #[[L8:.*]] = affine_map<(d0, d1) -> (d0, 8)>
// CHECK-LABEL: func.func @sum_pairs_f32(
// CHECK-SAME:    %[[X:.*]]: tensor<4x601xf32>)
// CHECK:         %[[FILL:.*]] = linalg.fill {{.*}} -> tensor<4xf64>
// CHECK-NOT:     arith.andi
// CHECK-NOT:     linalg.fill
// CHECK:         %[[LANES0:.*]] = tensor.empty() : tensor<4xf64>
// CHECK:         %[[W:.*]] = tensor.empty() : tensor<18xi8>
// CHECK:         %[[WHOLE:.*]]:16 = linalg.generic {indexing_maps = [#[[E0]], {{.*}}, #[[E16]], {{.*}}, #[[E31]], #[[K]], #[[ROW]], {{.*}}], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:      ins(%[[X]], {{.*}}, %[[W]] : tensor<4x601xf32>, {{.*}}, tensor<18xi8>) outs(%[[LANES0]], %[[LANES0]], {{.*}} : tensor<4xf64>,
// CHECK:         ^bb0(%in: f32, {{.*}}, %out: f64, %out_33: f64,
// CHECK:           %[[K0:.*]] = linalg.index 1 : index
// CHECK:           %[[FIRST:.*]] = arith.cmpi eq, %[[K0]], %{{.*}} : index
// CHECK:           %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:           %[[P0:.*]] = arith.addf %in, %in_16 : f32
// CHECK-NEXT:      %[[W0:.*]] = arith.extf %[[P0]] : f32 to f64
// CHECK-NEXT:      %[[A0:.*]] = arith.select %[[FIRST]], %[[ZERO]], %out : f64
// CHECK-NEXT:      %[[S0:.*]] = arith.addf %[[A0]], %[[W0]] : f64
// CHECK-NEXT:      %[[P1:.*]] = arith.addf %in_1, %in_17 : f32
// CHECK-NEXT:      %[[W1:.*]] = arith.extf %[[P1]] : f32 to f64
// CHECK-NEXT:      %[[A1:.*]] = arith.select %[[FIRST]], %[[ZERO]], %out_33 : f64
// CHECK-NEXT:      %[[S1:.*]] = arith.addf %[[A1]], %[[W1]] : f64
// CHECK:           %[[P15:.*]] = arith.addf %in_15, %in_31 : f32
// CHECK:           linalg.yield %[[S0]], %[[S1]],
// CHECK:         %[[PAIRS0:.*]] = linalg.fill {{.*}} -> tensor<4x9xf64>
// CHECK:         %[[PAIRS:.*]] = linalg.generic {indexing_maps = [#[[TF]], #[[TS]], #[[WINDOW]], #[[LANE]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[X]], %[[X]], %{{.*}} : tensor<4x601xf32>, tensor<4x601xf32>, tensor<1x9xi8>) outs(%[[PAIRS0]] : tensor<4x9xf64>)
// CHECK:         %[[LONE0:.*]] = linalg.fill {{.*}} -> tensor<4x7xf64>
// CHECK:         %[[LONE:.*]] = linalg.generic {indexing_maps = [#[[ALONE]], #[[WINDOW]], #[[LANE]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[X]], %{{.*}} : tensor<4x601xf32>, tensor<1x7xi8>) outs(%[[LONE0]] : tensor<4x7xf64>)
// CHECK:         %[[UW:.*]] = tensor.empty() : tensor<1xi8>
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ROW]], {{.*}}, #[[L0]], {{.*}}, #[[L8]], #[[L0]], {{.*}}, #[[K]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:      ins(%[[WHOLE]]#0, %[[WHOLE]]#1, {{.*}}, %[[WHOLE]]#15, %[[PAIRS]], {{.*}}, %[[LONE]], {{.*}}, %[[UW]] : {{.*}}) outs(%[[FILL]] : tensor<4xf64>)
// Lane c is input c, its last-block element input 16 + c: lane 0 with its pair, lane 8
// with the last pair, lane 9 with the first lone element; then the halving, 0 + 8 first.
// CHECK:           %[[A0:.*]] = arith.addf %in, %in_16 : f64
// CHECK:           %[[A8:.*]] = arith.addf %in_8, %in_24 : f64
// CHECK-NEXT:      %[[A9:.*]] = arith.addf %in_9, %in_25 : f64
// CHECK:           arith.addf %[[A0]], %[[A8]] : f64
// CHECK:           linalg.yield
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]] : tensor<4xf64>)
// CHECK:           arith.truncf
func.func @sum_pairs_f32(%x: tensor<4x601xf32>) -> tensor<4xf32> {
  %0 = kiln.reduce sum %x, dims = [1] : tensor<4x601xf32>
  return %0 : tensor<4xf32>
}

// -----

// Column pairs with keep_dims: rows 32k + l and 32k + 16 + l; 37 rows leave 5 alone.
// CHECK-DAG:   #[[CF:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 * 32 + d2, d3)>
// CHECK-DAG:   #[[CS:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 * 32 + d2 + 16, d3)>
// CHECK-DAG:   #[[CO:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-LABEL: func.func @mean_pairs_columns(
// CHECK:         linalg.generic {indexing_maps = [#[[CF]], #[[CS]], #{{.*}}, #[[CO]]], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
// CHECK-SAME:      tensor<1x16xi8>) outs(%{{.*}} : tensor<1x5xf64>)
// CHECK:         linalg.generic {{.*}} tensor<1x5xi8>) outs(%{{.*}} : tensor<1x5xf64>)
// CHECK:           arith.constant 3.700000e+01 : f64
func.func @mean_pairs_columns(%x: tensor<37x5xf32>) -> tensor<1x5xf32> {
  %0 = kiln.reduce mean %x, dims = [0] keep_dims : tensor<37x5xf32>
  return %0 : tensor<1x5xf32>
}

// -----

// Pairs are counted over the reduced dims together. batch_norm's [N, C, H, W] over
// 0, 2, 3 with H * W a multiple of 32: the blocks tile H and W taken as one dim, read
// where they lie (block k of an 8 x 8 plane is rows 4k to 4k + 3). With 4 x 4 the
// blocks tile N, H and W taken as one dim (block k is planes 2k and 2k + 1), read in
// place too: every block covers whole rows, so the maps stay linear. With 7 x 7 they
// cannot: the reduced dims move last first (a transpose) and collapse into one run of
// 196 (6 blocks and 4 alone). No reshape stands between the sum and a producer that
// the maps read in place, so elementwise fusion can compute it in the sum's loop.
// CHECK-DAG:   #[[HW0:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2 * 4, 0)>
// CHECK-DAG:   #[[HW31:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2 * 4 + 3, 7)>
// CHECK-DAG:   #[[NHW0:.*]] = affine_map<(d0, d1) -> (d1 * 2, d0, 0, 0)>
// CHECK-DAG:   #[[NHW31:.*]] = affine_map<(d0, d1) -> (d1 * 2 + 1, d0, 3, 3)>
// CHECK-LABEL: func.func @sum_pairs_bn(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x3x8x8xf32>, %[[Y:[^:]*]]: tensor<4x3x7x7xf32>, %[[Z:[^:]*]]: tensor<4x3x4x4xf32>)
// The lanes run on over N: loops (n, c, k), the eager order of the blocks, and the
// lanes start at 0 only where n and k are both 0.
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.generic {indexing_maps = [#[[HW0]], {{.*}}, #[[HW31]], {{.*}} iterator_types = ["reduction", "parallel", "reduction"]} ins(%[[X]], {{.*}}, %{{.*}} : tensor<4x3x8x8xf32>, {{.*}}, tensor<2xi8>)
// CHECK:           %[[N:.*]] = linalg.index 0 : index
// CHECK:           %[[N0:.*]] = arith.cmpi eq, %[[N]], %[[ORIGIN:.*]] : index
// CHECK:           %[[K:.*]] = linalg.index 2 : index
// CHECK:           %[[K0:.*]] = arith.cmpi eq, %[[K]], %[[ORIGIN]] : index
// CHECK:           %[[FIRST:.*]] = arith.andi %[[N0]], %[[K0]] : i1
// CHECK:           arith.select %[[FIRST]], %{{.*}}, %out : f64
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[Y]] : tensor<4x3x7x7xf32>) outs(%{{.*}} : tensor<3x4x7x7xf32>) permutation = [1, 0, 2, 3]
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[T]] {{\[}}[0], [1, 2, 3]] : tensor<3x4x7x7xf32> into tensor<3x196xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[FLAT]], {{.*}}, %{{.*}} : tensor<3x196xf32>, {{.*}}, tensor<6xi8>)
// CHECK:         linalg.generic {{.*}} ins(%[[FLAT]], %{{.*}} : tensor<3x196xf32>, tensor<1x4xi8>)
// CHECK-NOT:     linalg.transpose
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.generic {indexing_maps = [#[[NHW0]], {{.*}}, #[[NHW31]], {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[Z]], {{.*}}, %{{.*}} : tensor<4x3x4x4xf32>, {{.*}}, tensor<2xi8>)
// CHECK:         return
func.func @sum_pairs_bn(%x: tensor<4x3x8x8xf32>, %y: tensor<4x3x7x7xf32>, %z: tensor<4x3x4x4xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0 = kiln.reduce sum %x, dims = [0, 2, 3] : tensor<4x3x8x8xf32>
  %1 = kiln.reduce sum %y, dims = [0, 2, 3] : tensor<4x3x7x7xf32>
  %2 = kiln.reduce sum %z, dims = [0, 2, 3] : tensor<4x3x4x4xf32>
  return %0, %1, %2 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// A `?` reduced dim: the bias gradient, sum over the batch of a [?, C] tensor. Its
// blocks are counted at run time (size floordiv 32, size rem 32) and the three column
// generics of a static size are all built, with run-time extents: the whole blocks,
// the last block's pairs from a slice starting at 32 * blocks (max(rest - 16, 0)
// lanes) and its elements alone (min(rest, 16) - that many, from the lanes after).
// CHECK-DAG:   #[[F:.*]] = affine_map<(d0, d1, d2) -> (d0 * 32 + d1, d2)>
// CHECK-DAG:   #[[S:.*]] = affine_map<(d0, d1, d2) -> (d0 * 32 + d1 + 16, d2)>
// CHECK-LABEL: func.func @sum_batch(
// CHECK-SAME:    %[[X:.*]]: tensor<?x10xf32>)
// CHECK:         %[[FILL:.*]] = linalg.fill {{.*}} -> tensor<10xf64>
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x10xf32>
// CHECK:         %[[BLOCKS:.*]] = arith.divui %[[N]], %{{.*}} : index
// CHECK:         %[[REST:.*]] = arith.remui %[[N]], %{{.*}} : index
// CHECK:         %[[W:.*]] = tensor.empty(%[[BLOCKS]]) : tensor<?x16xi8>
// CHECK:         %[[WHOLE:.*]] = linalg.generic {indexing_maps = [#[[F]], #[[S]], #{{.*}}, #{{.*}}], iterator_types = ["reduction", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[X]], %[[X]], %[[W]] : {{.*}}) outs(%[[FILL]] : tensor<10xf64>)
// CHECK:         %[[TAIL:.*]] = arith.muli %[[BLOCKS]], %{{.*}} : index
// CHECK:         %[[OVER:.*]] = arith.subi %[[REST]], %{{.*}} : index
// CHECK:         %[[PAIRED:.*]] = arith.maxsi %[[OVER]], %{{.*}} : index
// CHECK:         %[[LAST:.*]] = tensor.extract_slice %[[X]][%[[TAIL]], 0]
// CHECK:         %[[W2:.*]] = tensor.empty(%[[PAIRED]]) : tensor<1x?xi8>
// CHECK:         %[[PAIRS:.*]] = linalg.generic {indexing_maps = [#[[F]], #[[S]], #{{.*}}, #{{.*}}]
// CHECK-SAME:      ins(%[[LAST]], %[[LAST]], %[[W2]] : {{.*}}) outs(%[[WHOLE]] : tensor<10xf64>)
// CHECK:         %[[UPTO:.*]] = arith.minsi %[[REST]], %{{.*}} : index
// CHECK:         %[[ALONE:.*]] = arith.subi %[[UPTO]], %[[PAIRED]] : index
// CHECK:         %[[START:.*]] = arith.addi %[[TAIL]], %[[PAIRED]] : index
// CHECK:         %[[LONE:.*]] = tensor.extract_slice %[[X]][%[[START]], 0]
// CHECK:         %[[W3:.*]] = tensor.empty(%[[ALONE]]) : tensor<1x?xi8>
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[F]], #{{.*}}, #{{.*}}]
// CHECK-SAME:      ins(%[[LONE]], %[[W3]] : {{.*}}) outs(%[[PAIRS]] : tensor<10xf64>)
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]] : tensor<10xf64>)
// CHECK:           arith.truncf
func.func @sum_batch(%x: tensor<?x10xf32>) -> tensor<10xf32> {
  %0 = kiln.reduce sum %x, dims = [0] : tensor<?x10xf32>
  return %0 : tensor<10xf32>
}

// -----

// The loss mean: all dims of [?, 10], whose run is not known to be whole blocks, so
// they collapse into one row of ? elements: pairs from two slices of max(n - 16, 0),
// then the elements alone. The count is converted once, outside the loops.
// CHECK-LABEL: func.func @mean_all_dynamic(
// CHECK-SAME:    %[[X:.*]]: tensor<?x10xf32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x10xf32>
// CHECK:         %[[COUNT:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<?x10xf32> into tensor<?xf32>
// CHECK:         %[[SIZE:.*]] = tensor.dim %[[FLAT]]
// CHECK:         %[[M16:.*]] = arith.subi %[[SIZE]], %{{.*}} : index
// CHECK:         %[[LEN:.*]] = arith.maxsi %[[M16]], %{{.*}} : index
// CHECK:         %[[A:.*]] = tensor.extract_slice %[[FLAT]][0] [%[[LEN]]] [1]
// CHECK:         %[[B:.*]] = tensor.extract_slice %[[FLAT]][16] [%[[LEN]]] [1]
// CHECK:         linalg.generic {{.*}} ins(%[[A]], %[[B]] : tensor<?xf32>, tensor<?xf32>)
// CHECK:           arith.andi
// CHECK:         tensor.empty(%{{.*}}) : tensor<1x?xi8>
// CHECK:         %[[I:.*]] = arith.index_castui %[[COUNT]] : index to i64
// CHECK:         %[[C:.*]] = arith.uitofp %[[I]] : i64 to f64
// CHECK:         linalg.generic
// CHECK:           arith.divf %{{.*}}, %[[C]] : f64
// CHECK:           arith.truncf
func.func @mean_all_dynamic(%x: tensor<?x10xf32>) -> tensor<f32> {
  %0 = kiln.reduce mean %x, dims = [0, 1] : tensor<?x10xf32>
  return %0 : tensor<f32>
}

// -----

// Row reductions of `?` rows (softmax, layer_norm): the static last dim decides the
// pairs and lanes as in a static kernel (100 = 3 blocks + 4 alone); the rows are sized
// by tensor.dim.
// CHECK-LABEL: func.func @rows_dynamic(
// CHECK-SAME:    %[[X:.*]]: tensor<?x100xf32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x100xf32>
// CHECK:         %[[MAXINIT:.*]] = tensor.empty(%[[N]]) : tensor<?x1xf32>
// CHECK:         linalg.fill {{.*}} outs(%[[MAXINIT]] : tensor<?x1xf32>)
// CHECK:         arith.maximumf
// CHECK:         tensor.empty(%{{.*}}) : tensor<?xf64>
// CHECK:         linalg.generic {{.*}} ins(%[[X]], {{.*}} : tensor<?x100xf32>, {{.*}}, tensor<3xi8>) outs({{.*}} : tensor<?xf64>,
// CHECK:         tensor.empty() : tensor<1x4xi8>
// CHECK:         tensor.empty(%{{.*}}) : tensor<?xf32>
func.func @rows_dynamic(%x: tensor<?x100xf32>) -> (tensor<?x1xf32>, tensor<?xf32>) {
  %0 = kiln.reduce max %x, dims = [1] keep_dims : tensor<?x100xf32>
  %1 = kiln.reduce sum %x, dims = [1] : tensor<?x100xf32>
  return %0, %1 : tensor<?x1xf32>, tensor<?xf32>
}

// -----

// Other kinds and types over a `?` dim accumulate as static ones: no pairs.
// CHECK-LABEL: func.func @prod_dynamic(
// CHECK:         linalg.fill {{.*}} -> tensor<3xi64>
// CHECK:         iterator_types = ["reduction", "parallel"]
// CHECK:           arith.muli
// CHECK-NOT:     arith.divui
func.func @prod_dynamic(%x: tensor<?x3xi64>) -> tensor<3xi64> {
  %0 = kiln.reduce prod %x, dims = [0] : tensor<?x3xi64>
  return %0 : tensor<3xi64>
}
