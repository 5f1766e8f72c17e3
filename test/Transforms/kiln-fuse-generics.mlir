// RUN: kiln-opt %s --kiln-fuse-generics | FileCheck %s
// RUN: kiln-opt %s --kiln-fuse-generics=broadcasts=true | FileCheck %s --check-prefix=GPU
// RUN: kiln-opt %s --kiln-fuse-generics=recompute=true --split-input-file | FileCheck %s --check-prefix=RECOMPUTE

// kiln-fuse-generics: upstream's elementwise fusion, except into a generic that reads
// the producer through a broadcast. BatchNorm's per-channel rsqrt stays a loop over the
// channels; the per-pixel generic reads its result with the broadcast's map (fused, the
// rsqrt would run once per pixel).

// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[BC:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
// CHECK-DAG:   #[[EVEN:.*]] = affine_map<(d0) -> (d0 * 2)>
// CHECK-DAG:   #[[ODD:.*]] = affine_map<(d0) -> (d0 * 2 + 1)>
// CHECK-LABEL: func.func @per_channel_scale(
// CHECK-SAME:      %[[X:.*]]: tensor<2x4x3x3xf32>, %[[VAR:.*]]: tensor<1x4x1x1xf32>
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[VAR]] : tensor<1x4x1x1xf32>)
// CHECK:           math.rsqrt
// CHECK:         } -> tensor<1x4x1x1xf32>
// CHECK:         %[[M:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[BC]], #[[ID]]], {{.*}} ins(%[[X]], %[[S]] : tensor<2x4x3x3xf32>, tensor<1x4x1x1xf32>)
// CHECK-NOT:       math.rsqrt
// CHECK:           arith.mulf
// CHECK:         return %[[M]]

// With broadcasts=true (the GPU pipeline's choice, upstream's rule) it is fused.
// GPU-LABEL: func.func @per_channel_scale(
// GPU:         linalg.generic
// GPU:           math.rsqrt
// GPU-NEXT:      arith.mulf
// GPU:         return

// Same element count (here through a transposed map): fused as upstream fuses it.
// CHECK-LABEL: func.func @same_size_chain(
// CHECK:         linalg.generic
// CHECK:           math.sqrt
// CHECK-NEXT:      arith.negf
// CHECK-NOT:     linalg.generic
// A producer read by one generic through several maps that together read each of its
// elements once (a float32 sum's pairs: BatchNorm's (x - mean)^2) is fused into each
// of them: the squares are computed in the sum's loop, not stored and read back.
// CHECK-LABEL: func.func @pairs_of_a_producer(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<8xf32>
// CHECK:         %[[S:.*]] = linalg.generic {indexing_maps = [#[[EVEN]], #[[ODD]], {{.*}} ins(%[[X]], %[[X]], %{{.*}} : tensor<8xf32>, tensor<8xf32>, tensor<4xi8>)
// CHECK:           arith.mulf
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         return %[[S]]

// Reads that overlap (elements 2 and 4 read twice) would compute the producer twice for
// them: it stays a loop of its own.
// CHECK-LABEL: func.func @overlapping_reads(
// CHECK:         %[[SQ:.*]] = linalg.generic
// CHECK:           arith.mulf
// CHECK:         linalg.generic {{.*}} ins(%[[SQ]], %[[SQ]], %[[SQ]], %{{.*}} : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<3xi8>)
// CHECK-NOT:       arith.mulf
// CHECK:         return
#id1 = affine_map<(d0) -> (d0)>
#even = affine_map<(d0) -> (d0 * 2)>
#odd = affine_map<(d0) -> (d0 * 2 + 1)>
#even2 = affine_map<(d0) -> (d0 * 2 + 2)>
#all = affine_map<(d0) -> ()>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bc4 = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr2 = affine_map<(d0, d1) -> (d1, d0)>

func.func @per_channel_scale(%x: tensor<2x4x3x3xf32>, %var: tensor<1x4x1x1xf32>) -> tensor<2x4x3x3xf32> {
  %e1 = tensor.empty() : tensor<1x4x1x1xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%var : tensor<1x4x1x1xf32>) outs(%e1 : tensor<1x4x1x1xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.rsqrt %v : f32
    linalg.yield %r : f32
  } -> tensor<1x4x1x1xf32>
  %e2 = tensor.empty() : tensor<2x4x3x3xf32>
  %b = linalg.generic {indexing_maps = [#bc4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x4x1x1xf32>) outs(%e2 : tensor<2x4x3x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<2x4x3x3xf32>
  %m = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %b : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) outs(%e2 : tensor<2x4x3x3xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %p = arith.mulf %a, %c : f32
    linalg.yield %p : f32
  } -> tensor<2x4x3x3xf32>
  return %m : tensor<2x4x3x3xf32>
}

func.func @same_size_chain(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.sqrt %v : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %t = linalg.generic {indexing_maps = [#tr2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e2 : tensor<8x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<8x4xf32>
  return %t : tensor<8x4xf32>
}

func.func @pairs_of_a_producer(%x: tensor<8xf32>, %acc: tensor<f32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<8xf32>
  %sq = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %w = tensor.empty() : tensor<4xi8>
  %s = linalg.generic {indexing_maps = [#even, #odd, #id1, #all], iterator_types = ["reduction"]}
      ins(%sq, %sq, %w : tensor<8xf32>, tensor<8xf32>, tensor<4xi8>) outs(%acc : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %unused: i8, %o: f32):
    %p = arith.addf %a, %b : f32
    %q = arith.addf %o, %p : f32
    linalg.yield %q : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

func.func @overlapping_reads(%x: tensor<8xf32>, %acc: tensor<f32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<8xf32>
  %sq = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %w = tensor.empty() : tensor<3xi8>
  %s = linalg.generic {indexing_maps = [#even, #odd, #even2, #id1, #all], iterator_types = ["reduction"]}
      ins(%sq, %sq, %sq, %w : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<3xi8>) outs(%acc : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %unused: i8, %o: f32):
    %p = arith.addf %a, %b : f32
    %p2 = arith.addf %p, %c : f32
    %q = arith.addf %o, %p2 : f32
    linalg.yield %q : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// With recompute, in a row kernel (kiln.row_dims), exp(x), read by the row sum and by
// the scaling, is copied so each fuses its own: no generic computes exp alone. Without
// it, exp keeps its own generic (two readers). A function without kiln.row_dims is left
// as it was either way.

// CHECK-LABEL:     func.func @exp_read_twice
// CHECK:             math.exp
// CHECK-NEXT:        linalg.yield
// RECOMPUTE-LABEL: func.func @exp_read_twice
// RECOMPUTE-COUNT-2: linalg.generic
// RECOMPUTE-NOT:     linalg.generic
// RECOMPUTE:       func.func @not_a_row_kernel
// RECOMPUTE:         math.exp
// RECOMPUTE-NEXT:    linalg.yield
func.func @exp_read_twice(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {kiln.row_dims = 1 : i64} {
  %e0 = tensor.empty() : tensor<4x8xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<4xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x8xf32>) outs(%sf : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %acc, %in : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %r0 = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<4x8xf32>, tensor<4xf32>) outs(%r0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %t: f32, %o: f32):
    %v = arith.divf %in, %t : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

func.func @not_a_row_kernel(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e0 = tensor.empty() : tensor<4x8xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %a0 = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%e : tensor<4x8xf32>) outs(%a0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.negf %in : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %b0 = tensor.empty() : tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%e : tensor<4x8xf32>) outs(%b0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.mulf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}
