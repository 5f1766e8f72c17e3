// kiln-tile-rows: a kernel marked kiln.row_dims (a row fusion of kiln-fuse) becomes one
// scf.forall over tiles of rows, with its reductions fused into the loop.
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-convert-to-linalg,linalg-fuse-elementwise-ops,kiln-tile-rows{tile-bytes=32768}))' | FileCheck %s

// Softmax over rows of 1024 floats: 32 KiB tiles are 8 rows. Inside the loop: the max;
// then exp, stored once to a tile-sized scratch; then the f64 sum, which reads the scratch
// through slices at 32k + e (e < 32) for its float32 pairs, x[32k + c] + x[32k + 16 + c]
// into 16 lanes (the slices are parts of the one exp tile, not exps of their own), and
// combines the lanes; then the division written into the tile of the result. No tensor.empty of the full shape is left but the loop's shared
// output.
// CHECK-LABEL: func.func private @softmax(
// CHECK-SAME:      %[[X:.*]]: tensor<64x1024xf32>
// CHECK:         %[[OUT:.*]] = tensor.empty() : tensor<64x1024xf32>
// CHECK-NOT:     tensor.empty() : tensor<64x
// CHECK:         %[[R:.*]] = scf.forall (%[[I:.*]]) = (0) to (64) step (8) shared_outs(%[[ACC:.*]] = %[[OUT]]) -> (tensor<64x1024xf32>) {
// CHECK:           %[[XT:.*]] = tensor.extract_slice %[[X]][%[[I]], 0] [8, 1024] [1, 1]
// CHECK:           %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[XT]] : tensor<8x1024xf32>)
// CHECK:             arith.maximumf
// CHECK:           %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[XT]], %[[MAX]] : tensor<8x1024xf32>, tensor<8x1xf32>) outs(%{{.*}} : tensor<8x1024xf32>)
// CHECK:             math.exp
// CHECK-NOT:         math.exp
// CHECK:           %[[FIRST:.*]] = tensor.extract_slice %[[EXP]][0, 0] [8, 993] [1, 1]
// CHECK:           %[[LAST:.*]] = tensor.extract_slice %[[EXP]][0, 0] [8, 1023] [1, 1]
// CHECK:           %[[LANES:.*]]:16 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[FIRST]], {{.*}}, %[[LAST]], %[[EXP]], %{{.*}} : tensor<8x993xf32>, {{.*}}, tensor<8x1023xf32>, tensor<8x1024xf32>, tensor<32xi8>) outs(%{{.*}} : tensor<8x1xf64>,
// CHECK:             arith.addf %{{.*}}, %{{.*}} : f32
// CHECK:             arith.extf
// CHECK:             arith.addf %{{.*}}, %{{.*}} : f64
// CHECK-NOT:         math.exp
// CHECK:           %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[LANES]]#0, {{.*}}, %[[LANES]]#15, %{{.*}} : {{.*}}) outs(%{{.*}} : tensor<8x1xf64>)
// CHECK-NOT:         math.exp
// CHECK:           %[[OT:.*]] = tensor.extract_slice %[[ACC]][%[[I]], 0] [8, 1024] [1, 1]
// CHECK:           %[[DIV:.*]] = linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] : tensor<8x1024xf32>, tensor<8x1xf64>) outs(%[[OT]] : tensor<8x1024xf32>)
// CHECK:             arith.divf
// CHECK:           scf.forall.in_parallel {
// CHECK-NEXT:        tensor.parallel_insert_slice %[[DIV]] into %[[ACC]][%[[I]], 0] [8, 1024] [1, 1]
// CHECK:         return %[[R]]
func.func private @softmax(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64} {
  %m = kiln.reduce max %x, dims = [1] keep_dims : tensor<64x1024xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [64, 1024] : tensor<64x1xf32>
  %s = kiln.sub %x, %mb : tensor<64x1024xf32>
  %e = kiln.exp %s : tensor<64x1024xf32>
  %t = kiln.reduce sum %e, dims = [1] keep_dims : tensor<64x1024xf32>
  %tb = kiln.broadcast_in_dim %t, dims = [0, 1], shape = [64, 1024] : tensor<64x1xf32>
  %r = kiln.div %e, %tb : tensor<64x1024xf32>
  return %r : tensor<64x1024xf32>
}

// -----

// Two row dims ([batch, seq, hidden], normalized over hidden): one row of the batch
// dim and as many of the seq dim as fit (32 KiB / 256 B = 128, so all 16 here); the
// scale vector is read whole.
// CHECK-LABEL: func.func private @two_row_dims(
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (3, 16) step (1, 16)
// CHECK:           linalg.generic {{.*}}"reduction"
// CHECK:         scf.forall.in_parallel
func.func private @two_row_dims(%x: tensor<3x16x64xf32>, %g: tensor<64xf32>) -> tensor<3x16x64xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 2 : i64} {
  %m = kiln.reduce mean %x, dims = [2] keep_dims : tensor<3x16x64xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0, 1, 2], shape = [3, 16, 64] : tensor<3x16x1xf32>
  %c = kiln.sub %x, %mb : tensor<3x16x64xf32>
  %gb = kiln.broadcast_in_dim %g, dims = [2], shape = [3, 16, 64] : tensor<64xf32>
  %r = kiln.mul %c, %gb : tensor<3x16x64xf32>
  return %r : tensor<3x16x64xf32>
}

// -----

// Without kiln.row_dims, or with more than one result, a kernel is left alone.
// CHECK-LABEL: func.func private @unmarked(
// CHECK-NOT:     scf.forall
// CHECK-LABEL: func.func private @two_results(
// CHECK-NOT:     scf.forall
func.func private @unmarked(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> attributes {kiln.kernel = "fusion"} {
  %m = kiln.reduce max %x, dims = [1] keep_dims : tensor<64x1024xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [64, 1024] : tensor<64x1xf32>
  %s = kiln.sub %x, %mb : tensor<64x1024xf32>
  return %s : tensor<64x1024xf32>
}
func.func private @two_results(%x: tensor<64x1024xf32>) -> (tensor<64x1024xf32>, tensor<64x1xf32>) attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64} {
  %m = kiln.reduce max %x, dims = [1] keep_dims : tensor<64x1024xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [64, 1024] : tensor<64x1xf32>
  %s = kiln.sub %x, %mb : tensor<64x1024xf32>
  return %s, %m : tensor<64x1024xf32>, tensor<64x1xf32>
}

// -----

// layer_norm: the centred values x - mean feed both the variance and the result. A
// producer that cheap is computed again in each of its users rather than stored to a
// tile-sized scratch and read back: the tile holds two row reductions and the result,
// each reading the tile of x, and nothing of the tile's size but the result is written.
// The variance reads (x - mean)^2 through slices for its pairs: computed on slices of x
// instead, it is computed in the variance's loop for each.
// (The exp of softmax above is not cheap: it is stored, once.)
// CHECK-LABEL: func.func private @layer_norm(
// CHECK-SAME:      %[[X:.*]]: tensor<64x1024xf32>
// CHECK:         scf.forall (%[[I:.*]]) = (0) to (64) step (8)
// CHECK:           %[[XT:.*]] = tensor.extract_slice %[[X]][%[[I]], 0] [8, 1024] [1, 1]
// CHECK:           %[[X0:.*]] = tensor.extract_slice %[[X]][%[[I]], 0] [8, 993] [1, 1]
// CHECK:           %[[LANES:.*]]:16 = linalg.generic {{.*}}"reduction"]} ins(%[[X0]], {{.*}} : tensor<8x993xf32>, {{.*}}, tensor<32xi8>) outs(%{{.*}} : tensor<8x1xf64>,
// CHECK-NOT:       tensor.empty() : tensor<8x1024xf32>
// CHECK-NOT:       tensor.empty() : tensor<8x993xf32>
// CHECK:           %[[SUM:.*]] = linalg.generic {{.*}}"reduction"]} ins(%[[LANES]]#0,
// CHECK-NOT:       tensor.empty() : tensor<8x1024xf32>
// CHECK-NOT:       tensor.empty() : tensor<8x993xf32>
// CHECK:           %[[VLANES:.*]]:16 = linalg.generic {{.*}}"reduction"]} ins(%[[X0]], %[[SUM]], {{.*}}, tensor<32xi8>) outs(%{{.*}} : tensor<8x1xf64>,
// CHECK:             arith.subf
// CHECK:             arith.mulf
// CHECK:             arith.subf
// CHECK:             arith.mulf
// CHECK:             arith.addf {{.*}} : f32
// CHECK:           %[[VAR:.*]] = linalg.generic {{.*}}"reduction"]} ins(%[[VLANES]]#0,
// CHECK:           linalg.generic {{.*}} ins(%[[XT]], %[[SUM]], %[[VAR]]
// CHECK:             arith.subf
// CHECK:             math.sqrt
// CHECK:         scf.forall.in_parallel
func.func private @layer_norm(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64} {
  %m = kiln.reduce mean %x, dims = [1] keep_dims : tensor<64x1024xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [64, 1024] : tensor<64x1xf32>
  %c = kiln.sub %x, %mb : tensor<64x1024xf32>
  %sq = kiln.mul %c, %c : tensor<64x1024xf32>
  %v = kiln.reduce mean %sq, dims = [1] keep_dims : tensor<64x1024xf32>
  %eps = kiln.constant dense<1.0e-5> : tensor<64x1xf32>
  %ve = kiln.add %v, %eps : tensor<64x1xf32>
  %r = kiln.rsqrt %ve : tensor<64x1xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0, 1], shape = [64, 1024] : tensor<64x1xf32>
  %y = kiln.mul %c, %rb : tensor<64x1024xf32>
  return %y : tensor<64x1024xf32>
}

// -----

// layer_norm of a chain, rows of 20: the centred row (x - mean, six arith ops with the
// chain recomputed in it, so not cheap) feeds the variance and the normalisation. The
// variance's float32 pairs read columns 0-3 and 16-19 and its unpaired middle, columns
// 4-15, through window maps. Fused into that middle reduction, the
// centred values would be yielded for columns 4-15 only and the normalisation would read
// the rest uninitialized (issue 19, case 1). So the centred row is computed whole, inside
// the loop, and both the variance and the normalisation read it there.
// CHECK-LABEL: func.func private @layer_norm_of_chain_short_rows(
// CHECK:         scf.forall
// CHECK:           %[[CENTRED:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins({{.*}} : tensor<5x20xf32>, tensor<5x20xf32>, tensor<5x1xf64>) outs({{.*}} : tensor<5x20xf32>)
// CHECK:             arith.subf
// CHECK-NEXT:        linalg.yield {{.*}} : f32
// CHECK:           %[[C4:.*]] = tensor.extract_slice %[[CENTRED]][0, 0] [5, 4]
// CHECK:           linalg.generic {{.*}} ins(%[[C4]], %[[CENTRED]], %{{.*}} : tensor<5x4xf32>, tensor<5x20xf32>, tensor<1x4xi8>)
// CHECK:           %[[C16:.*]] = tensor.extract_slice %[[CENTRED]][0, 0] [5, 16]
// CHECK:           linalg.generic {{.*}} ins(%[[C16]], %{{.*}} : tensor<5x16xf32>, tensor<1x12xi8>)
// CHECK:           linalg.generic {{.*}} ins(%[[CENTRED]], %{{.*}} : tensor<5x20xf32>, tensor<5x1xf64>)
// CHECK:             math.sqrt
// CHECK:           scf.forall.in_parallel
func.func private @layer_norm_of_chain_short_rows(%arg0: tensor<5x20xf32>, %arg1: tensor<5x20xf32>) -> tensor<5x20xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64} {
  %0 = kiln.constant dense<9.99999974E-6> : tensor<5x1xf32>
  %1 = kiln.constant dense<2.500000e-01> : tensor<5x20xf32>
  %2 = kiln.constant dense<-1.500000e+00> : tensor<5x20xf32>
  %3 = kiln.mul %arg0, %2 : tensor<5x20xf32>
  %4 = kiln.add %3, %1 : tensor<5x20xf32>
  %5 = kiln.add %arg1, %4 : tensor<5x20xf32>
  %6 = kiln.reduce mean %5, dims = [1] keep_dims : tensor<5x20xf32>
  %7 = kiln.broadcast_in_dim %6, dims = [0, 1], shape = [5, 20] : tensor<5x1xf32>
  %8 = kiln.sub %5, %7 : tensor<5x20xf32>
  %9 = kiln.mul %8, %8 : tensor<5x20xf32>
  %10 = kiln.reduce mean %9, dims = [1] keep_dims : tensor<5x20xf32>
  %11 = kiln.add %10, %0 : tensor<5x1xf32>
  %12 = kiln.rsqrt %11 : tensor<5x1xf32>
  %13 = kiln.broadcast_in_dim %12, dims = [0, 1], shape = [5, 20] : tensor<5x1xf32>
  %14 = kiln.mul %8, %13 : tensor<5x20xf32>
  return %14 : tensor<5x20xf32>
}

// -----

// layer_norm's backward as kiln-fuzz found it (seed 2444): two costly producers feed
// one chain of reductions, so fusing the first into its reduction erased the op the
// second's fusion then used (a crash in linalg::fuseElementwiseOps). Each fusion now
// finds its candidate afresh: the kernel tiles into one loop holding both reductions.
// CHECK-LABEL: func.func private @layer_norm_backward(
// CHECK:         scf.forall
// CHECK-COUNT-2:   iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:           scf.forall.in_parallel
func.func private @layer_norm_backward(%arg0: tensor<6x6xf32>, %arg1: tensor<6x1xf32>, %arg2: tensor<6x1xf32>, %arg3: tensor<6xf32>, %arg4: tensor<1xf32>, %arg5: tensor<6xf32>, %arg6: tensor<6x6xf32>, %arg7: tensor<6x6xf32>) -> tensor<6x6xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64} {
  %0 = kiln.constant dense<0.000000e+00> : tensor<6x6xf32>
  %1 = kiln.constant dense<0.166666672> : tensor<6x1xf32>
  %2 = kiln.constant dense<-5.000000e-01> : tensor<6x1xf32>
  %3 = kiln.constant dense<1.000000e+00> : tensor<6xf32>
  %4 = kiln.constant dense<5.000000e-01> : tensor<6xf32>
  %5 = kiln.constant dense<9.99999974E-6> : tensor<6x1xf32>
  %6 = kiln.constant dense<5.000000e-01> : tensor<6x6xf32>
  %7 = kiln.abs %arg0 : tensor<6x6xf32>
  %8 = kiln.add %7, %6 : tensor<6x6xf32>
  %9 = kiln.broadcast_in_dim %arg1, dims = [0, 1], shape = [6, 6] : tensor<6x1xf32>
  %10 = kiln.sub %8, %9 : tensor<6x6xf32>
  %11 = kiln.add %arg2, %5 : tensor<6x1xf32>
  %12 = kiln.rsqrt %11 : tensor<6x1xf32>
  %13 = kiln.broadcast_in_dim %12, dims = [0, 1], shape = [6, 6] : tensor<6x1xf32>
  %14 = kiln.broadcast_in_dim %arg3, dims = [1], shape = [6, 6] : tensor<6xf32>
  %15 = kiln.broadcast_in_dim %arg4, dims = [1], shape = [6, 6] : tensor<1xf32>
  %16 = kiln.abs %arg5 : tensor<6xf32>
  %17 = kiln.add %16, %4 : tensor<6xf32>
  %18 = kiln.div %3, %17 : tensor<6xf32>
  %19 = kiln.broadcast_in_dim %18, dims = [1], shape = [6, 6] : tensor<6xf32>
  %20 = kiln.mul %arg6, %15 : tensor<6x6xf32>
  %21 = kiln.mul %arg7, %19 : tensor<6x6xf32>
  %22 = kiln.add %20, %21 : tensor<6x6xf32>
  %23 = kiln.mul %22, %6 : tensor<6x6xf32>
  %24 = kiln.mul %23, %14 : tensor<6x6xf32>
  %25 = kiln.mul %24, %13 : tensor<6x6xf32>
  %26 = kiln.mul %24, %10 : tensor<6x6xf32>
  %27 = kiln.reduce sum %26, dims = [1] keep_dims : tensor<6x6xf32>
  %28 = kiln.mul %12, %12 : tensor<6x1xf32>
  %29 = kiln.mul %28, %12 : tensor<6x1xf32>
  %30 = kiln.mul %29, %2 : tensor<6x1xf32>
  %31 = kiln.mul %27, %30 : tensor<6x1xf32>
  %32 = kiln.mul %31, %1 : tensor<6x1xf32>
  %33 = kiln.broadcast_in_dim %32, dims = [0, 1], shape = [6, 6] : tensor<6x1xf32>
  %34 = kiln.mul %33, %10 : tensor<6x6xf32>
  %35 = kiln.add %25, %34 : tensor<6x6xf32>
  %36 = kiln.add %35, %34 : tensor<6x6xf32>
  %37 = kiln.neg %36 : tensor<6x6xf32>
  %38 = kiln.reduce sum %37, dims = [1] keep_dims : tensor<6x6xf32>
  %39 = kiln.mul %38, %1 : tensor<6x1xf32>
  %40 = kiln.broadcast_in_dim %39, dims = [0, 1], shape = [6, 6] : tensor<6x1xf32>
  %41 = kiln.add %36, %40 : tensor<6x6xf32>
  %42 = kiln.compare lt, %arg0, %0 : tensor<6x6xf32>
  %43 = kiln.convert %42 : tensor<6x6xi1> to f32
  %44 = kiln.compare gt, %arg0, %0 : tensor<6x6xf32>
  %45 = kiln.convert %44 : tensor<6x6xi1> to f32
  %46 = kiln.sub %45, %43 : tensor<6x6xf32>
  %47 = kiln.mul %41, %46 : tensor<6x6xf32>
  return %47 : tensor<6x6xf32>
}

// -----

// Softmax over `?` rows of 1024 floats: the same 8-row tiles, over a run-time row count
// (the loop's bound is the size the kernel's tensors were made with, not a tensor.dim
// of an untiled producer, which would stay alive); the last tile is cut short by
// affine.min and every per-tile tensor is sized by it. exp is computed once per tile.
// CHECK-LABEL: func.func private @softmax_dynamic(
// CHECK-SAME:      %[[X:.*]]: tensor<?x1024xf32>
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x1024xf32>
// CHECK:         %[[OUT:.*]] = tensor.empty(%[[N]]) : tensor<?x1024xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         %[[R:.*]] = scf.forall (%[[I:.*]]) = (0) to (%[[N]]) step (8) shared_outs(%[[ACC:.*]] = %[[OUT]]) -> (tensor<?x1024xf32>) {
// CHECK:           %[[ROWS:.*]] = affine.min #{{.*}}(%[[I]])[%[[N]]]
// CHECK:           %[[XT:.*]] = tensor.extract_slice %[[X]][%[[I]], 0] {{\[}}%[[ROWS]], 1024] [1, 1]
// CHECK:           arith.maximumf
// CHECK:           %[[EXP:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x1024xf32>)
// CHECK:             math.exp
// CHECK-NOT:         math.exp
// CHECK:           tensor.extract_slice %[[EXP]][0, 0] {{\[}}%[[ROWS]], 993] [1, 1]
// CHECK:           tensor.extract_slice %[[EXP]][0, 0] {{\[}}%[[ROWS]], 1023] [1, 1]
// CHECK-NOT:         math.exp
// CHECK:           %[[OT:.*]] = tensor.extract_slice %[[ACC]][%[[I]], 0] {{\[}}%[[ROWS]], 1024] [1, 1]
// CHECK:           %[[DIV:.*]] = linalg.generic {{.*}} outs(%[[OT]] : tensor<?x1024xf32>)
// CHECK:             arith.divf
// CHECK:           scf.forall.in_parallel {
// CHECK-NEXT:        tensor.parallel_insert_slice %[[DIV]] into %[[ACC]][%[[I]], 0] {{\[}}%[[ROWS]], 1024] [1, 1]
// CHECK:         return %[[R]]
func.func private @softmax_dynamic(%x: tensor<?x1024xf32>) -> tensor<?x1024xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64} {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x1024xf32>
  %m = kiln.reduce max %x, dims = [1] keep_dims : tensor<?x1024xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [%n, 1024] : tensor<?x1xf32>
  %s = kiln.sub %x, %mb : tensor<?x1024xf32>
  %e = kiln.exp %s : tensor<?x1024xf32>
  %t = kiln.reduce sum %e, dims = [1] keep_dims : tensor<?x1024xf32>
  %tb = kiln.broadcast_in_dim %t, dims = [0, 1], shape = [%n, 1024] : tensor<?x1xf32>
  %r = kiln.div %e, %tb : tensor<?x1024xf32>
  return %r : tensor<?x1024xf32>
}

// -----

// A row kernel whose values reach the root along very many paths (layer_norm over [7, 8]
// of a broadcast chain, kiln-fuzz seed 9): tile-and-fuse would fuse a producer once per path
// (over 100,000 copies, 50 s in this pass), so it is left untiled, computed whole.
// CHECK-LABEL: func.func private @many_paths(
// CHECK-NOT:     scf.forall
// CHECK:         return
func.func private @many_paths(%arg0: tensor<8xf32>, %arg1: tensor<3x8x7x8xf32>) -> tensor<3x8x7x8xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 2 : i64} {
  %0 = kiln.constant dense<9.99999974E-6> : tensor<3x8x1x1xf32>
  %1 = kiln.constant dense<5.000000e-01> : tensor<3x8x7x8xf32>
  %2 = kiln.constant dense<1.000000e+00> : tensor<8xf32>
  %3 = kiln.constant dense<5.000000e-01> : tensor<8xf32>
  %4 = kiln.abs %arg0 : tensor<8xf32>
  %5 = kiln.add %4, %3 : tensor<8xf32>
  %6 = kiln.div %2, %5 : tensor<8xf32>
  %7 = kiln.broadcast_in_dim %6, dims = [3], shape = [3, 8, 7, 8] : tensor<8xf32>
  %8 = kiln.mul %arg1, %7 : tensor<3x8x7x8xf32>
  %9 = kiln.mul %8, %1 : tensor<3x8x7x8xf32>
  %10 = kiln.reduce mean %9, dims = [2, 3] keep_dims : tensor<3x8x7x8xf32>
  %11 = kiln.broadcast_in_dim %10, dims = [0, 1, 2, 3], shape = [3, 8, 7, 8] : tensor<3x8x1x1xf32>
  %12 = kiln.sub %9, %11 : tensor<3x8x7x8xf32>
  %13 = kiln.mul %12, %12 : tensor<3x8x7x8xf32>
  %14 = kiln.reduce mean %13, dims = [2, 3] keep_dims : tensor<3x8x7x8xf32>
  %15 = kiln.add %14, %0 : tensor<3x8x1x1xf32>
  %16 = kiln.rsqrt %15 : tensor<3x8x1x1xf32>
  %17 = kiln.broadcast_in_dim %16, dims = [0, 1, 2, 3], shape = [3, 8, 7, 8] : tensor<3x8x1x1xf32>
  %18 = kiln.mul %12, %17 : tensor<3x8x7x8xf32>
  return %18 : tensor<3x8x7x8xf32>
}
