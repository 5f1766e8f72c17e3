// RUN: kiln-opt %s --kiln-gpu-block-reductions --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-block-reductions="block-size=128 few-outputs=64" --split-input-file \
// RUN:   | FileCheck %s --check-prefix=SMALL

// A row max: one block per row, 256 threads folding the row's elements t, t + 256, ...
// from -inf, the block's threads combined by gpu.all_reduce, then thread 0 combines the
// total with the output's value (the fill before) in the body's own operand order.

// CHECK-LABEL: func.func @row_max
// CHECK-SAME:    (%[[X:.*]]: memref<64x1024xf32>, %[[OUT:.*]]: memref<64xf32>)
// CHECK:         scf.parallel (%[[ROW:.*]]) = (%{{.*}}) to (%c64)
// CHECK:           scf.parallel (%[[T:.*]]) = (%[[C0:.*]]) to (%c256)
// CHECK:             %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:             %[[PART:.*]] = scf.for %[[K:.*]] = %[[T]] to %c1024{{(_[0-9]+)?}} step %c256{{(_[0-9]+)?}} iter_args(%[[ACC:.*]] = %[[NINF]]) -> (f32)
// CHECK:               %[[V:.*]] = memref.load %[[X]]
// CHECK:               %[[M:.*]] = arith.maximumf %[[ACC]], %[[V]] : f32
// CHECK:               scf.yield %[[M]]
// CHECK:             %[[TOTAL:.*]] = gpu.all_reduce maximumf %[[PART]] uniform
// CHECK:             %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %c0
// CHECK:             scf.if %[[FIRST]]
// CHECK:               %[[OLD:.*]] = memref.load %[[OUT]]
// CHECK:               %[[NEW:.*]] = arith.maximumf %[[OLD]], %[[TOTAL]] : f32
// CHECK:               memref.store %[[NEW]], %[[OUT]]
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NOT:     linalg.generic
// SMALL-LABEL: func.func @row_max
// SMALL:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c128{{(_[0-9]+)?}}
func.func @row_max(%x: memref<64x1024xf32>, %out: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x1024xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// The f32 sums' form: the body restarts the output at reduced index 0, so the old value
// is never read: each thread starts from that constant (0.0, not the identity -0.0: a
// sum of -0.0s stays 0.0 as in the loop) and thread 0 stores the total. 64 elements: 64
// threads.

// CHECK-LABEL: func.func @restarted_sum
// CHECK-SAME:    (%[[X:.*]]: memref<8x64xf32>, %[[OUT:.*]]: memref<8xf64>)
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%c8)
// CHECK:           scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%c64)
// CHECK:             %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:             %[[PART:.*]] = scf.for %[[K:.*]] = %[[T]] to %c64{{(_[0-9]+)?}} step %c64{{(_[0-9]+)?}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f64)
// CHECK:               %[[AT0:.*]] = arith.cmpi eq, %[[K]]
// CHECK:               arith.select %[[AT0]], %{{.*}}, %[[ACC]] : f64
// CHECK:             %[[TOTAL:.*]] = gpu.all_reduce add %[[PART]] uniform
// CHECK:             scf.if
// CHECK-NEXT:          %[[I:.*]] = affine.apply
// CHECK-NEXT:          memref.store %[[TOTAL]], %[[OUT]][%[[I]]]
// CHECK-NEXT:        }
func.func @restarted_sum(%x: memref<8x64xf32>, %out: memref<8xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%out : memref<8xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %c0 = arith.constant 0 : index
    %k = linalg.index 1 : index
    %first = arith.cmpi eq, %k, %c0 : index
    %zero = arith.constant 0.0 : f64
    %e = arith.extf %in : f32 to f64
    %running = arith.select %first, %zero, %acc : f64
    %s = arith.addf %running, %e : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// A full reduction over two dims: one block; the 1280 elements linearized, each
// thread's k split back into (k / 10, k % 10); the sum starts from -0.0, the identity.

// CHECK-LABEL: func.func @full_sum
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{(_[0-9]+)?}})
// CHECK:           scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%c256)
// CHECK:             %[[NZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK:             scf.for %[[K:.*]] = %[[T]] to %c1280{{(_[0-9]+)?}} step %c256{{(_[0-9]+)?}} iter_args(%{{.*}} = %[[NZERO]])
// CHECK:               %[[C10:.*]] = arith.constant 10 : index
// CHECK:               arith.remui %[[K]], %[[C10]]
// CHECK:               arith.divui %[[K]], %[[C10]]
// CHECK:             gpu.all_reduce add
// CHECK:               memref.load %{{.*}}[] : memref<f32>
func.func @full_sum(%x: memref<128x10xf32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<128x10xf32>) outs(%out : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A column reduction of 96 columns (fewer than few-outputs): a block per column, int64
// max from INT64_MIN. With few-outputs=64 it stays a linalg.generic (96 columns keep one
// thread each, whose loads coalesce across columns).

// CHECK-LABEL: func.func @few_columns
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%c96)
// CHECK:           arith.constant -9223372036854775808 : i64
// CHECK:           gpu.all_reduce maxsi
// SMALL-LABEL: func.func @few_columns
// SMALL:         linalg.generic
func.func @few_columns(%x: memref<1000x96xi64>, %out: memref<96xi64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<1000x96xi64>) outs(%out : memref<96xi64>) {
  ^bb0(%in: i64, %acc: i64):
    %s = arith.maxsi %acc, %in : i64
    linalg.yield %s : i64
  }
  return
}

// -----

// Left as they are: a column reduction of 2048 columns, a row of 16 elements (under a
// warp), an f16 sum (no all-reduce width for it), a dynamic row, an output read twice
// (not a fold), a combiner whose result is read beside the yield.

// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-6: linalg.generic
// CHECK-NOT:     gpu.all_reduce
func.func @left_alone(%cols: memref<64x2048xf32>, %colsOut: memref<2048xf32>,
                      %short: memref<64x16xf32>, %shortOut: memref<64xf32>,
                      %half: memref<64x1024xf16>, %halfOut: memref<64xf16>,
                      %dyn: memref<64x?xf32>, %dynOut: memref<64xf32>,
                      %x: memref<64x1024xf32>, %out: memref<64xf32>, %out2: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%cols : memref<64x2048xf32>) outs(%colsOut : memref<2048xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%short : memref<64x16xf32>) outs(%shortOut : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%half : memref<64x1024xf16>) outs(%halfOut : memref<64xf16>) {
  ^bb0(%in: f16, %acc: f16):
    %s = arith.addf %acc, %in : f16
    linalg.yield %s : f16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%dyn : memref<64x?xf32>) outs(%dynOut : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x1024xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %p = arith.mulf %acc, %in : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x1024xf32>) outs(%out, %out2 : memref<64xf32>, memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32, %acc2: f32):
    %s = arith.addf %acc, %in : f32
    %t = arith.addf %acc2, %s : f32
    linalg.yield %s, %t : f32, f32
  }
  return
}
