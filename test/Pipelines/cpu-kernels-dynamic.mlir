// The CPU kernel lowering (kiln-cpu-pipeline's kernel half, composed from flags as
// passes/pipelines/CpuPipeline.cpp composes it, with small tiles and a low
// parallel bar so that these sizes reach the tail tiles and both sides of the
// run-time parallel choice) on kernels with `?` dims, against the same kernels
// with static shapes at 1, 17, 33 and 257 rows: the results agree bit for bit.
// The kernels live in the nested module @kiln_kernels and are lowered there, taking
// MLIR memref descriptors (no bare pointers: the sizes travel in them) with their
// results as out-parameters; main (the host) declares them so and is lowered
// apart; kiln-merge-kernels joins the two.
//
// DEFINE: %{kernels} = func.func(kiln-convert-to-linalg,linalg-generalize-named-ops,linalg-fuse-elementwise-ops,kiln-tile-rows{tile-bytes=1024}),one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(scf-forall-to-parallel),buffer-results-to-out-params{hoist-static-allocs hoist-dynamic-allocs modify-public-functions},buffer-deallocation-pipeline,func.func(convert-linalg-to-parallel-loops,kiln-promote-accumulators),kiln-parallelize{min-elements=256},func.func(kiln-hoist-scratch,kiln-approximate-math),convert-scf-to-cf,expand-strided-metadata,lower-affine,kiln-kernels-to-llvm,reconcile-unrealized-casts
// DEFINE: %{host} = func.func(kiln-convert-to-linalg),one-shot-bufferize{bufferize-function-boundaries},convert-linalg-to-loops,convert-scf-to-cf,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-math-to-funcs,convert-math-to-llvm,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts
//
// RUN: kiln-opt %s --pass-pipeline='builtin.module(builtin.module(%{kernels}))' \
// RUN:   | FileCheck %s --check-prefix=IR
// RUN: kiln-opt %s --pass-pipeline='builtin.module(builtin.module(%{kernels}),%{host},kiln-merge-kernels)' \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%shlibdir/libmlir_runner_utils.so,%shlibdir/libmlir_c_runner_utils.so \
// RUN:   | FileCheck %s

// The softmax of `?` rows: a memref descriptor per buffer; the tile loop goes through
// kiln_rt_parallel_for only when the run-time work is at least min-elements (the
// icmp), else runs inline; the result is written in place (no copy into the
// out-parameter, with buffer-results-to-out-params' hoist-dynamic-allocs).
// IR-LABEL:  llvm.func @softmax(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64,
// IR:          %[[LARGE:.*]] = llvm.icmp "sge" %{{.*}}, %{{.*}} : i64
// IR:          llvm.cond_br %[[LARGE]]
// IR:          llvm.call @kiln_rt_parallel_for(
// IR-NOT:      llvm.intr.memcpy
// IR:          llvm.return
// IR-LABEL:  llvm.func @softmax_chunk_

// Each line: elements compared, elements that differ.
// CHECK: {{^}}10, 0{{$}}
// CHECK-NEXT: {{^}}10, 0{{$}}
// CHECK-NEXT: {{^}}10, 0{{$}}
// CHECK-NEXT: {{^}}10, 0{{$}}
// CHECK-NEXT: {{^}}1, 0{{$}}
// CHECK-NEXT: {{^}}1, 0{{$}}
// CHECK-NEXT: {{^}}1, 0{{$}}
// CHECK-NEXT: {{^}}1, 0{{$}}
// CHECK-NEXT: {{^}}1, 0{{$}}
// CHECK-NEXT: {{^}}17, 0{{$}}
// CHECK-NEXT: {{^}}33, 0{{$}}
// CHECK-NEXT: {{^}}257, 0{{$}}
// CHECK-NEXT: {{^}}3, 0{{$}}
// CHECK-NEXT: {{^}}3, 0{{$}}
// CHECK-NEXT: {{^}}3, 0{{$}}
// CHECK-NEXT: {{^}}3, 0{{$}}
// CHECK-NEXT: {{^}}3, 0{{$}}
// CHECK-NEXT: {{^}}3, 0{{$}}
// CHECK-NEXT: {{^}}3, 0{{$}}
// CHECK-NEXT: {{^}}3, 0{{$}}
// CHECK-NEXT: {{^}}1, 0{{$}}
// CHECK-NEXT: {{^}}1, 0{{$}}
// CHECK-NEXT: {{^}}1, 0{{$}}
// CHECK-NEXT: {{^}}1, 0{{$}}
// CHECK-NEXT: {{^}}35, 0{{$}}
// CHECK-NEXT: {{^}}35, 0{{$}}
// CHECK-NEXT: {{^}}35, 0{{$}}
// CHECK-NEXT: {{^}}35, 0{{$}}
// CHECK-NEXT: {{^}}40, 0{{$}}
// CHECK-NEXT: {{^}}680, 0{{$}}
// CHECK-NEXT: {{^}}1320, 0{{$}}
// CHECK-NEXT: {{^}}10280, 0{{$}}
// CHECK-NEXT: {{^}}40, 0{{$}}
// CHECK-NEXT: {{^}}680, 0{{$}}
// CHECK-NEXT: {{^}}1320, 0{{$}}
// CHECK-NEXT: {{^}}10280, 0{{$}}
// CHECK-NEXT: {{^}}1, 0{{$}}
// CHECK-NEXT: {{^}}9, 0{{$}}
// CHECK-NEXT: {{^}}17, 0{{$}}
// CHECK-NEXT: {{^}}129, 0{{$}}

// The runtime's kiln_rt_parallel_for, serially: iterations [begin, end) in two chunks.
func.func @kiln_rt_parallel_for(%chunk: (!llvm.ptr, index, index) -> (), %captures: !llvm.ptr, %begin: i64, %end: i64) {
  %b = arith.index_cast %begin : i64 to index
  %e = arith.index_cast %end : i64 to index
  %c2 = arith.constant 2 : index
  %span = arith.subi %e, %b : index
  %half = arith.divui %span, %c2 : index
  %mid = arith.addi %b, %half : index
  call_indirect %chunk(%captures, %b, %mid) : (!llvm.ptr, index, index) -> ()
  call_indirect %chunk(%captures, %mid, %e) : (!llvm.ptr, index, index) -> ()
  return
}

// The test input: sin(0.37 i) * 100 + i / 1000 for i < n, whose float32 pair sums
// round.
func.func @input(%n: index) -> tensor<?xf32> {
  %i = kiln.iota dim = 0, shape = [%n], dtype = f32
  %k = kiln.constant dense<0.37> : tensor<f32>
  %kb = kiln.broadcast_in_dim %k, dims = [], shape = [%n] : tensor<f32>
  %a = kiln.mul %i, %kb : tensor<?xf32>
  %s = kiln.sin %a : tensor<?xf32>
  %h = kiln.constant dense<100.0> : tensor<f32>
  %hb = kiln.broadcast_in_dim %h, dims = [], shape = [%n] : tensor<f32>
  %big = kiln.mul %s, %hb : tensor<?xf32>
  %t = kiln.constant dense<1000.0> : tensor<f32>
  %tb = kiln.broadcast_in_dim %t, dims = [], shape = [%n] : tensor<f32>
  %small = kiln.div %i, %tb : tensor<?xf32>
  %x = kiln.add %big, %small : tensor<?xf32>
  return %x : tensor<?xf32>
}

// Prints the number of elements of %a and how many differ from %b's.
func.func @differences(%a: tensor<?xf32>, %b: tensor<?xf32>) {
  %ne = kiln.compare ne, %a, %b : tensor<?xf32>
  %ni = kiln.convert %ne : tensor<?xi1> to i64
  %count = kiln.reduce sum %ni, dims = [0] : tensor<?xi64>
  %c = tensor.extract %count[] : tensor<i64>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %ni64 = arith.index_cast %n : index to i64
  vector.print %ni64 : i64 punctuation <comma>
  vector.print %c : i64
  return
}

// The kernels, as the host declares them: results as out-parameters.
func.func private @sum_batch(memref<?x10xf32>, memref<10xf32>)
func.func private @sum_batch_1(memref<1x10xf32>, memref<10xf32>)
func.func private @sum_batch_17(memref<17x10xf32>, memref<10xf32>)
func.func private @sum_batch_33(memref<33x10xf32>, memref<10xf32>)
func.func private @sum_batch_257(memref<257x10xf32>, memref<10xf32>)
func.func private @mean_all(memref<?x10xf32>, memref<f32>)
func.func private @mean_all_1(memref<1x10xf32>, memref<f32>)
func.func private @mean_all_17(memref<17x10xf32>, memref<f32>)
func.func private @mean_all_33(memref<33x10xf32>, memref<f32>)
func.func private @mean_all_257(memref<257x10xf32>, memref<f32>)
func.func private @sum_rows(memref<?x100xf32>, memref<?xf32>)
func.func private @sum_rows_1(memref<1x100xf32>, memref<1xf32>)
func.func private @sum_rows_17(memref<17x100xf32>, memref<17xf32>)
func.func private @sum_rows_33(memref<33x100xf32>, memref<33xf32>)
func.func private @sum_rows_257(memref<257x100xf32>, memref<257xf32>)
func.func private @mean_row_length(memref<3x?xf32>, memref<3x1xf32>)
func.func private @mean_row_length_1(memref<3x1xf32>, memref<3x1xf32>)
func.func private @mean_row_length_17(memref<3x17xf32>, memref<3x1xf32>)
func.func private @mean_row_length_33(memref<3x33xf32>, memref<3x1xf32>)
func.func private @mean_row_length_257(memref<3x257xf32>, memref<3x1xf32>)
func.func private @sum_outer(memref<?x3x20xf32>, memref<3xf32>)
func.func private @sum_outer_1(memref<1x3x20xf32>, memref<3xf32>)
func.func private @sum_outer_17(memref<17x3x20xf32>, memref<3xf32>)
func.func private @sum_outer_33(memref<33x3x20xf32>, memref<3xf32>)
func.func private @sum_outer_257(memref<257x3x20xf32>, memref<3xf32>)
func.func private @sum_all_keep(memref<?x32xf32>, memref<1x1xf32>)
func.func private @sum_all_keep_1(memref<1x32xf32>, memref<1x1xf32>)
func.func private @sum_all_keep_17(memref<17x32xf32>, memref<1x1xf32>)
func.func private @sum_all_keep_33(memref<33x32xf32>, memref<1x1xf32>)
func.func private @sum_all_keep_257(memref<257x32xf32>, memref<1x1xf32>)
func.func private @mean_batch_keep(memref<?x5x7xf32>, memref<1x5x7xf32>)
func.func private @mean_batch_keep_1(memref<1x5x7xf32>, memref<1x5x7xf32>)
func.func private @mean_batch_keep_17(memref<17x5x7xf32>, memref<1x5x7xf32>)
func.func private @mean_batch_keep_33(memref<33x5x7xf32>, memref<1x5x7xf32>)
func.func private @mean_batch_keep_257(memref<257x5x7xf32>, memref<1x5x7xf32>)
func.func private @softmax(memref<?x40xf32>, memref<?x40xf32>)
func.func private @softmax_1(memref<1x40xf32>, memref<1x40xf32>)
func.func private @softmax_17(memref<17x40xf32>, memref<17x40xf32>)
func.func private @softmax_33(memref<33x40xf32>, memref<33x40xf32>)
func.func private @softmax_257(memref<257x40xf32>, memref<257x40xf32>)
func.func private @layer_norm(memref<?x40xf32>, memref<?x40xf32>)
func.func private @layer_norm_1(memref<1x40xf32>, memref<1x40xf32>)
func.func private @layer_norm_17(memref<17x40xf32>, memref<17x40xf32>)
func.func private @layer_norm_33(memref<33x40xf32>, memref<33x40xf32>)
func.func private @layer_norm_257(memref<257x40xf32>, memref<257x40xf32>)
func.func private @moves(memref<?x3xf32>, memref<?xf32>)
func.func private @moves_1(memref<1x3xf32>, memref<1xf32>)
func.func private @moves_17(memref<17x3xf32>, memref<9xf32>)
func.func private @moves_33(memref<33x3xf32>, memref<17xf32>)
func.func private @moves_257(memref<257x3xf32>, memref<129xf32>)

func.func @main() {
  // sum_batch
  %sum_batch_1_n = arith.constant 10 : index
  %sum_batch_1_x = call @input(%sum_batch_1_n) : (index) -> tensor<?xf32>
  %sum_batch_1_xs = tensor.cast %sum_batch_1_x : tensor<?xf32> to tensor<10xf32>
  %sum_batch_1_in = kiln.reshape %sum_batch_1_xs, shape = [1, 10] : tensor<10xf32>
  %sum_batch_1_xb = bufferization.to_buffer %sum_batch_1_in : tensor<1x10xf32> to memref<1x10xf32>
  %sum_batch_1_sb = memref.alloc() : memref<10xf32>
  call @sum_batch_1(%sum_batch_1_xb, %sum_batch_1_sb) : (memref<1x10xf32>, memref<10xf32>) -> ()
  %sum_batch_1_xd = memref.cast %sum_batch_1_xb : memref<1x10xf32> to memref<?x10xf32>
  %sum_batch_1_db = memref.alloc() : memref<10xf32>
  call @sum_batch(%sum_batch_1_xd, %sum_batch_1_db) : (memref<?x10xf32>, memref<10xf32>) -> ()
  %sum_batch_1_s = bufferization.to_tensor %sum_batch_1_sb restrict : memref<10xf32> to tensor<10xf32>
  %sum_batch_1_d = bufferization.to_tensor %sum_batch_1_db restrict : memref<10xf32> to tensor<10xf32>
  %sum_batch_1_a = tensor.cast %sum_batch_1_s : tensor<10xf32> to tensor<?xf32>
  %sum_batch_1_b = tensor.cast %sum_batch_1_d : tensor<10xf32> to tensor<?xf32>
  call @differences(%sum_batch_1_a, %sum_batch_1_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %sum_batch_1_sb : memref<10xf32>
  memref.dealloc %sum_batch_1_db : memref<10xf32>
  %sum_batch_17_n = arith.constant 170 : index
  %sum_batch_17_x = call @input(%sum_batch_17_n) : (index) -> tensor<?xf32>
  %sum_batch_17_xs = tensor.cast %sum_batch_17_x : tensor<?xf32> to tensor<170xf32>
  %sum_batch_17_in = kiln.reshape %sum_batch_17_xs, shape = [17, 10] : tensor<170xf32>
  %sum_batch_17_xb = bufferization.to_buffer %sum_batch_17_in : tensor<17x10xf32> to memref<17x10xf32>
  %sum_batch_17_sb = memref.alloc() : memref<10xf32>
  call @sum_batch_17(%sum_batch_17_xb, %sum_batch_17_sb) : (memref<17x10xf32>, memref<10xf32>) -> ()
  %sum_batch_17_xd = memref.cast %sum_batch_17_xb : memref<17x10xf32> to memref<?x10xf32>
  %sum_batch_17_db = memref.alloc() : memref<10xf32>
  call @sum_batch(%sum_batch_17_xd, %sum_batch_17_db) : (memref<?x10xf32>, memref<10xf32>) -> ()
  %sum_batch_17_s = bufferization.to_tensor %sum_batch_17_sb restrict : memref<10xf32> to tensor<10xf32>
  %sum_batch_17_d = bufferization.to_tensor %sum_batch_17_db restrict : memref<10xf32> to tensor<10xf32>
  %sum_batch_17_a = tensor.cast %sum_batch_17_s : tensor<10xf32> to tensor<?xf32>
  %sum_batch_17_b = tensor.cast %sum_batch_17_d : tensor<10xf32> to tensor<?xf32>
  call @differences(%sum_batch_17_a, %sum_batch_17_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %sum_batch_17_sb : memref<10xf32>
  memref.dealloc %sum_batch_17_db : memref<10xf32>
  %sum_batch_33_n = arith.constant 330 : index
  %sum_batch_33_x = call @input(%sum_batch_33_n) : (index) -> tensor<?xf32>
  %sum_batch_33_xs = tensor.cast %sum_batch_33_x : tensor<?xf32> to tensor<330xf32>
  %sum_batch_33_in = kiln.reshape %sum_batch_33_xs, shape = [33, 10] : tensor<330xf32>
  %sum_batch_33_xb = bufferization.to_buffer %sum_batch_33_in : tensor<33x10xf32> to memref<33x10xf32>
  %sum_batch_33_sb = memref.alloc() : memref<10xf32>
  call @sum_batch_33(%sum_batch_33_xb, %sum_batch_33_sb) : (memref<33x10xf32>, memref<10xf32>) -> ()
  %sum_batch_33_xd = memref.cast %sum_batch_33_xb : memref<33x10xf32> to memref<?x10xf32>
  %sum_batch_33_db = memref.alloc() : memref<10xf32>
  call @sum_batch(%sum_batch_33_xd, %sum_batch_33_db) : (memref<?x10xf32>, memref<10xf32>) -> ()
  %sum_batch_33_s = bufferization.to_tensor %sum_batch_33_sb restrict : memref<10xf32> to tensor<10xf32>
  %sum_batch_33_d = bufferization.to_tensor %sum_batch_33_db restrict : memref<10xf32> to tensor<10xf32>
  %sum_batch_33_a = tensor.cast %sum_batch_33_s : tensor<10xf32> to tensor<?xf32>
  %sum_batch_33_b = tensor.cast %sum_batch_33_d : tensor<10xf32> to tensor<?xf32>
  call @differences(%sum_batch_33_a, %sum_batch_33_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %sum_batch_33_sb : memref<10xf32>
  memref.dealloc %sum_batch_33_db : memref<10xf32>
  %sum_batch_257_n = arith.constant 2570 : index
  %sum_batch_257_x = call @input(%sum_batch_257_n) : (index) -> tensor<?xf32>
  %sum_batch_257_xs = tensor.cast %sum_batch_257_x : tensor<?xf32> to tensor<2570xf32>
  %sum_batch_257_in = kiln.reshape %sum_batch_257_xs, shape = [257, 10] : tensor<2570xf32>
  %sum_batch_257_xb = bufferization.to_buffer %sum_batch_257_in : tensor<257x10xf32> to memref<257x10xf32>
  %sum_batch_257_sb = memref.alloc() : memref<10xf32>
  call @sum_batch_257(%sum_batch_257_xb, %sum_batch_257_sb) : (memref<257x10xf32>, memref<10xf32>) -> ()
  %sum_batch_257_xd = memref.cast %sum_batch_257_xb : memref<257x10xf32> to memref<?x10xf32>
  %sum_batch_257_db = memref.alloc() : memref<10xf32>
  call @sum_batch(%sum_batch_257_xd, %sum_batch_257_db) : (memref<?x10xf32>, memref<10xf32>) -> ()
  %sum_batch_257_s = bufferization.to_tensor %sum_batch_257_sb restrict : memref<10xf32> to tensor<10xf32>
  %sum_batch_257_d = bufferization.to_tensor %sum_batch_257_db restrict : memref<10xf32> to tensor<10xf32>
  %sum_batch_257_a = tensor.cast %sum_batch_257_s : tensor<10xf32> to tensor<?xf32>
  %sum_batch_257_b = tensor.cast %sum_batch_257_d : tensor<10xf32> to tensor<?xf32>
  call @differences(%sum_batch_257_a, %sum_batch_257_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %sum_batch_257_sb : memref<10xf32>
  memref.dealloc %sum_batch_257_db : memref<10xf32>
  // mean_all
  %mean_all_1_n = arith.constant 10 : index
  %mean_all_1_x = call @input(%mean_all_1_n) : (index) -> tensor<?xf32>
  %mean_all_1_xs = tensor.cast %mean_all_1_x : tensor<?xf32> to tensor<10xf32>
  %mean_all_1_in = kiln.reshape %mean_all_1_xs, shape = [1, 10] : tensor<10xf32>
  %mean_all_1_xb = bufferization.to_buffer %mean_all_1_in : tensor<1x10xf32> to memref<1x10xf32>
  %mean_all_1_sb = memref.alloc() : memref<f32>
  call @mean_all_1(%mean_all_1_xb, %mean_all_1_sb) : (memref<1x10xf32>, memref<f32>) -> ()
  %mean_all_1_xd = memref.cast %mean_all_1_xb : memref<1x10xf32> to memref<?x10xf32>
  %mean_all_1_db = memref.alloc() : memref<f32>
  call @mean_all(%mean_all_1_xd, %mean_all_1_db) : (memref<?x10xf32>, memref<f32>) -> ()
  %mean_all_1_s = bufferization.to_tensor %mean_all_1_sb restrict : memref<f32> to tensor<f32>
  %mean_all_1_d = bufferization.to_tensor %mean_all_1_db restrict : memref<f32> to tensor<f32>
  %mean_all_1_af = kiln.reshape %mean_all_1_s, shape = [1] : tensor<f32>
  %mean_all_1_a = tensor.cast %mean_all_1_af : tensor<1xf32> to tensor<?xf32>
  %mean_all_1_bf = kiln.reshape %mean_all_1_d, shape = [1] : tensor<f32>
  %mean_all_1_b = tensor.cast %mean_all_1_bf : tensor<1xf32> to tensor<?xf32>
  call @differences(%mean_all_1_a, %mean_all_1_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %mean_all_1_sb : memref<f32>
  memref.dealloc %mean_all_1_db : memref<f32>
  %mean_all_17_n = arith.constant 170 : index
  %mean_all_17_x = call @input(%mean_all_17_n) : (index) -> tensor<?xf32>
  %mean_all_17_xs = tensor.cast %mean_all_17_x : tensor<?xf32> to tensor<170xf32>
  %mean_all_17_in = kiln.reshape %mean_all_17_xs, shape = [17, 10] : tensor<170xf32>
  %mean_all_17_xb = bufferization.to_buffer %mean_all_17_in : tensor<17x10xf32> to memref<17x10xf32>
  %mean_all_17_sb = memref.alloc() : memref<f32>
  call @mean_all_17(%mean_all_17_xb, %mean_all_17_sb) : (memref<17x10xf32>, memref<f32>) -> ()
  %mean_all_17_xd = memref.cast %mean_all_17_xb : memref<17x10xf32> to memref<?x10xf32>
  %mean_all_17_db = memref.alloc() : memref<f32>
  call @mean_all(%mean_all_17_xd, %mean_all_17_db) : (memref<?x10xf32>, memref<f32>) -> ()
  %mean_all_17_s = bufferization.to_tensor %mean_all_17_sb restrict : memref<f32> to tensor<f32>
  %mean_all_17_d = bufferization.to_tensor %mean_all_17_db restrict : memref<f32> to tensor<f32>
  %mean_all_17_af = kiln.reshape %mean_all_17_s, shape = [1] : tensor<f32>
  %mean_all_17_a = tensor.cast %mean_all_17_af : tensor<1xf32> to tensor<?xf32>
  %mean_all_17_bf = kiln.reshape %mean_all_17_d, shape = [1] : tensor<f32>
  %mean_all_17_b = tensor.cast %mean_all_17_bf : tensor<1xf32> to tensor<?xf32>
  call @differences(%mean_all_17_a, %mean_all_17_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %mean_all_17_sb : memref<f32>
  memref.dealloc %mean_all_17_db : memref<f32>
  %mean_all_33_n = arith.constant 330 : index
  %mean_all_33_x = call @input(%mean_all_33_n) : (index) -> tensor<?xf32>
  %mean_all_33_xs = tensor.cast %mean_all_33_x : tensor<?xf32> to tensor<330xf32>
  %mean_all_33_in = kiln.reshape %mean_all_33_xs, shape = [33, 10] : tensor<330xf32>
  %mean_all_33_xb = bufferization.to_buffer %mean_all_33_in : tensor<33x10xf32> to memref<33x10xf32>
  %mean_all_33_sb = memref.alloc() : memref<f32>
  call @mean_all_33(%mean_all_33_xb, %mean_all_33_sb) : (memref<33x10xf32>, memref<f32>) -> ()
  %mean_all_33_xd = memref.cast %mean_all_33_xb : memref<33x10xf32> to memref<?x10xf32>
  %mean_all_33_db = memref.alloc() : memref<f32>
  call @mean_all(%mean_all_33_xd, %mean_all_33_db) : (memref<?x10xf32>, memref<f32>) -> ()
  %mean_all_33_s = bufferization.to_tensor %mean_all_33_sb restrict : memref<f32> to tensor<f32>
  %mean_all_33_d = bufferization.to_tensor %mean_all_33_db restrict : memref<f32> to tensor<f32>
  %mean_all_33_af = kiln.reshape %mean_all_33_s, shape = [1] : tensor<f32>
  %mean_all_33_a = tensor.cast %mean_all_33_af : tensor<1xf32> to tensor<?xf32>
  %mean_all_33_bf = kiln.reshape %mean_all_33_d, shape = [1] : tensor<f32>
  %mean_all_33_b = tensor.cast %mean_all_33_bf : tensor<1xf32> to tensor<?xf32>
  call @differences(%mean_all_33_a, %mean_all_33_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %mean_all_33_sb : memref<f32>
  memref.dealloc %mean_all_33_db : memref<f32>
  %mean_all_257_n = arith.constant 2570 : index
  %mean_all_257_x = call @input(%mean_all_257_n) : (index) -> tensor<?xf32>
  %mean_all_257_xs = tensor.cast %mean_all_257_x : tensor<?xf32> to tensor<2570xf32>
  %mean_all_257_in = kiln.reshape %mean_all_257_xs, shape = [257, 10] : tensor<2570xf32>
  %mean_all_257_xb = bufferization.to_buffer %mean_all_257_in : tensor<257x10xf32> to memref<257x10xf32>
  %mean_all_257_sb = memref.alloc() : memref<f32>
  call @mean_all_257(%mean_all_257_xb, %mean_all_257_sb) : (memref<257x10xf32>, memref<f32>) -> ()
  %mean_all_257_xd = memref.cast %mean_all_257_xb : memref<257x10xf32> to memref<?x10xf32>
  %mean_all_257_db = memref.alloc() : memref<f32>
  call @mean_all(%mean_all_257_xd, %mean_all_257_db) : (memref<?x10xf32>, memref<f32>) -> ()
  %mean_all_257_s = bufferization.to_tensor %mean_all_257_sb restrict : memref<f32> to tensor<f32>
  %mean_all_257_d = bufferization.to_tensor %mean_all_257_db restrict : memref<f32> to tensor<f32>
  %mean_all_257_af = kiln.reshape %mean_all_257_s, shape = [1] : tensor<f32>
  %mean_all_257_a = tensor.cast %mean_all_257_af : tensor<1xf32> to tensor<?xf32>
  %mean_all_257_bf = kiln.reshape %mean_all_257_d, shape = [1] : tensor<f32>
  %mean_all_257_b = tensor.cast %mean_all_257_bf : tensor<1xf32> to tensor<?xf32>
  call @differences(%mean_all_257_a, %mean_all_257_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %mean_all_257_sb : memref<f32>
  memref.dealloc %mean_all_257_db : memref<f32>
  // sum_rows
  %sum_rows_1_n = arith.constant 100 : index
  %sum_rows_1_x = call @input(%sum_rows_1_n) : (index) -> tensor<?xf32>
  %sum_rows_1_xs = tensor.cast %sum_rows_1_x : tensor<?xf32> to tensor<100xf32>
  %sum_rows_1_in = kiln.reshape %sum_rows_1_xs, shape = [1, 100] : tensor<100xf32>
  %sum_rows_1_xb = bufferization.to_buffer %sum_rows_1_in : tensor<1x100xf32> to memref<1x100xf32>
  %sum_rows_1_sb = memref.alloc() : memref<1xf32>
  call @sum_rows_1(%sum_rows_1_xb, %sum_rows_1_sb) : (memref<1x100xf32>, memref<1xf32>) -> ()
  %sum_rows_1_xd = memref.cast %sum_rows_1_xb : memref<1x100xf32> to memref<?x100xf32>
  %sum_rows_1_z0 = arith.constant 1 : index
  %sum_rows_1_db = memref.alloc(%sum_rows_1_z0) : memref<?xf32>
  call @sum_rows(%sum_rows_1_xd, %sum_rows_1_db) : (memref<?x100xf32>, memref<?xf32>) -> ()
  %sum_rows_1_dc = memref.cast %sum_rows_1_db : memref<?xf32> to memref<1xf32>
  %sum_rows_1_s = bufferization.to_tensor %sum_rows_1_sb restrict : memref<1xf32> to tensor<1xf32>
  %sum_rows_1_d = bufferization.to_tensor %sum_rows_1_dc restrict : memref<1xf32> to tensor<1xf32>
  %sum_rows_1_a = tensor.cast %sum_rows_1_s : tensor<1xf32> to tensor<?xf32>
  %sum_rows_1_b = tensor.cast %sum_rows_1_d : tensor<1xf32> to tensor<?xf32>
  call @differences(%sum_rows_1_a, %sum_rows_1_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %sum_rows_1_sb : memref<1xf32>
  memref.dealloc %sum_rows_1_db : memref<?xf32>
  %sum_rows_17_n = arith.constant 1700 : index
  %sum_rows_17_x = call @input(%sum_rows_17_n) : (index) -> tensor<?xf32>
  %sum_rows_17_xs = tensor.cast %sum_rows_17_x : tensor<?xf32> to tensor<1700xf32>
  %sum_rows_17_in = kiln.reshape %sum_rows_17_xs, shape = [17, 100] : tensor<1700xf32>
  %sum_rows_17_xb = bufferization.to_buffer %sum_rows_17_in : tensor<17x100xf32> to memref<17x100xf32>
  %sum_rows_17_sb = memref.alloc() : memref<17xf32>
  call @sum_rows_17(%sum_rows_17_xb, %sum_rows_17_sb) : (memref<17x100xf32>, memref<17xf32>) -> ()
  %sum_rows_17_xd = memref.cast %sum_rows_17_xb : memref<17x100xf32> to memref<?x100xf32>
  %sum_rows_17_z0 = arith.constant 17 : index
  %sum_rows_17_db = memref.alloc(%sum_rows_17_z0) : memref<?xf32>
  call @sum_rows(%sum_rows_17_xd, %sum_rows_17_db) : (memref<?x100xf32>, memref<?xf32>) -> ()
  %sum_rows_17_dc = memref.cast %sum_rows_17_db : memref<?xf32> to memref<17xf32>
  %sum_rows_17_s = bufferization.to_tensor %sum_rows_17_sb restrict : memref<17xf32> to tensor<17xf32>
  %sum_rows_17_d = bufferization.to_tensor %sum_rows_17_dc restrict : memref<17xf32> to tensor<17xf32>
  %sum_rows_17_a = tensor.cast %sum_rows_17_s : tensor<17xf32> to tensor<?xf32>
  %sum_rows_17_b = tensor.cast %sum_rows_17_d : tensor<17xf32> to tensor<?xf32>
  call @differences(%sum_rows_17_a, %sum_rows_17_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %sum_rows_17_sb : memref<17xf32>
  memref.dealloc %sum_rows_17_db : memref<?xf32>
  %sum_rows_33_n = arith.constant 3300 : index
  %sum_rows_33_x = call @input(%sum_rows_33_n) : (index) -> tensor<?xf32>
  %sum_rows_33_xs = tensor.cast %sum_rows_33_x : tensor<?xf32> to tensor<3300xf32>
  %sum_rows_33_in = kiln.reshape %sum_rows_33_xs, shape = [33, 100] : tensor<3300xf32>
  %sum_rows_33_xb = bufferization.to_buffer %sum_rows_33_in : tensor<33x100xf32> to memref<33x100xf32>
  %sum_rows_33_sb = memref.alloc() : memref<33xf32>
  call @sum_rows_33(%sum_rows_33_xb, %sum_rows_33_sb) : (memref<33x100xf32>, memref<33xf32>) -> ()
  %sum_rows_33_xd = memref.cast %sum_rows_33_xb : memref<33x100xf32> to memref<?x100xf32>
  %sum_rows_33_z0 = arith.constant 33 : index
  %sum_rows_33_db = memref.alloc(%sum_rows_33_z0) : memref<?xf32>
  call @sum_rows(%sum_rows_33_xd, %sum_rows_33_db) : (memref<?x100xf32>, memref<?xf32>) -> ()
  %sum_rows_33_dc = memref.cast %sum_rows_33_db : memref<?xf32> to memref<33xf32>
  %sum_rows_33_s = bufferization.to_tensor %sum_rows_33_sb restrict : memref<33xf32> to tensor<33xf32>
  %sum_rows_33_d = bufferization.to_tensor %sum_rows_33_dc restrict : memref<33xf32> to tensor<33xf32>
  %sum_rows_33_a = tensor.cast %sum_rows_33_s : tensor<33xf32> to tensor<?xf32>
  %sum_rows_33_b = tensor.cast %sum_rows_33_d : tensor<33xf32> to tensor<?xf32>
  call @differences(%sum_rows_33_a, %sum_rows_33_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %sum_rows_33_sb : memref<33xf32>
  memref.dealloc %sum_rows_33_db : memref<?xf32>
  %sum_rows_257_n = arith.constant 25700 : index
  %sum_rows_257_x = call @input(%sum_rows_257_n) : (index) -> tensor<?xf32>
  %sum_rows_257_xs = tensor.cast %sum_rows_257_x : tensor<?xf32> to tensor<25700xf32>
  %sum_rows_257_in = kiln.reshape %sum_rows_257_xs, shape = [257, 100] : tensor<25700xf32>
  %sum_rows_257_xb = bufferization.to_buffer %sum_rows_257_in : tensor<257x100xf32> to memref<257x100xf32>
  %sum_rows_257_sb = memref.alloc() : memref<257xf32>
  call @sum_rows_257(%sum_rows_257_xb, %sum_rows_257_sb) : (memref<257x100xf32>, memref<257xf32>) -> ()
  %sum_rows_257_xd = memref.cast %sum_rows_257_xb : memref<257x100xf32> to memref<?x100xf32>
  %sum_rows_257_z0 = arith.constant 257 : index
  %sum_rows_257_db = memref.alloc(%sum_rows_257_z0) : memref<?xf32>
  call @sum_rows(%sum_rows_257_xd, %sum_rows_257_db) : (memref<?x100xf32>, memref<?xf32>) -> ()
  %sum_rows_257_dc = memref.cast %sum_rows_257_db : memref<?xf32> to memref<257xf32>
  %sum_rows_257_s = bufferization.to_tensor %sum_rows_257_sb restrict : memref<257xf32> to tensor<257xf32>
  %sum_rows_257_d = bufferization.to_tensor %sum_rows_257_dc restrict : memref<257xf32> to tensor<257xf32>
  %sum_rows_257_a = tensor.cast %sum_rows_257_s : tensor<257xf32> to tensor<?xf32>
  %sum_rows_257_b = tensor.cast %sum_rows_257_d : tensor<257xf32> to tensor<?xf32>
  call @differences(%sum_rows_257_a, %sum_rows_257_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %sum_rows_257_sb : memref<257xf32>
  memref.dealloc %sum_rows_257_db : memref<?xf32>
  // mean_row_length
  %mean_row_length_1_n = arith.constant 3 : index
  %mean_row_length_1_x = call @input(%mean_row_length_1_n) : (index) -> tensor<?xf32>
  %mean_row_length_1_xs = tensor.cast %mean_row_length_1_x : tensor<?xf32> to tensor<3xf32>
  %mean_row_length_1_in = kiln.reshape %mean_row_length_1_xs, shape = [3, 1] : tensor<3xf32>
  %mean_row_length_1_xb = bufferization.to_buffer %mean_row_length_1_in : tensor<3x1xf32> to memref<3x1xf32>
  %mean_row_length_1_sb = memref.alloc() : memref<3x1xf32>
  call @mean_row_length_1(%mean_row_length_1_xb, %mean_row_length_1_sb) : (memref<3x1xf32>, memref<3x1xf32>) -> ()
  %mean_row_length_1_xd = memref.cast %mean_row_length_1_xb : memref<3x1xf32> to memref<3x?xf32>
  %mean_row_length_1_db = memref.alloc() : memref<3x1xf32>
  call @mean_row_length(%mean_row_length_1_xd, %mean_row_length_1_db) : (memref<3x?xf32>, memref<3x1xf32>) -> ()
  %mean_row_length_1_s = bufferization.to_tensor %mean_row_length_1_sb restrict : memref<3x1xf32> to tensor<3x1xf32>
  %mean_row_length_1_d = bufferization.to_tensor %mean_row_length_1_db restrict : memref<3x1xf32> to tensor<3x1xf32>
  %mean_row_length_1_af = kiln.reshape %mean_row_length_1_s, shape = [3] : tensor<3x1xf32>
  %mean_row_length_1_a = tensor.cast %mean_row_length_1_af : tensor<3xf32> to tensor<?xf32>
  %mean_row_length_1_bf = kiln.reshape %mean_row_length_1_d, shape = [3] : tensor<3x1xf32>
  %mean_row_length_1_b = tensor.cast %mean_row_length_1_bf : tensor<3xf32> to tensor<?xf32>
  call @differences(%mean_row_length_1_a, %mean_row_length_1_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %mean_row_length_1_sb : memref<3x1xf32>
  memref.dealloc %mean_row_length_1_db : memref<3x1xf32>
  %mean_row_length_17_n = arith.constant 51 : index
  %mean_row_length_17_x = call @input(%mean_row_length_17_n) : (index) -> tensor<?xf32>
  %mean_row_length_17_xs = tensor.cast %mean_row_length_17_x : tensor<?xf32> to tensor<51xf32>
  %mean_row_length_17_in = kiln.reshape %mean_row_length_17_xs, shape = [3, 17] : tensor<51xf32>
  %mean_row_length_17_xb = bufferization.to_buffer %mean_row_length_17_in : tensor<3x17xf32> to memref<3x17xf32>
  %mean_row_length_17_sb = memref.alloc() : memref<3x1xf32>
  call @mean_row_length_17(%mean_row_length_17_xb, %mean_row_length_17_sb) : (memref<3x17xf32>, memref<3x1xf32>) -> ()
  %mean_row_length_17_xd = memref.cast %mean_row_length_17_xb : memref<3x17xf32> to memref<3x?xf32>
  %mean_row_length_17_db = memref.alloc() : memref<3x1xf32>
  call @mean_row_length(%mean_row_length_17_xd, %mean_row_length_17_db) : (memref<3x?xf32>, memref<3x1xf32>) -> ()
  %mean_row_length_17_s = bufferization.to_tensor %mean_row_length_17_sb restrict : memref<3x1xf32> to tensor<3x1xf32>
  %mean_row_length_17_d = bufferization.to_tensor %mean_row_length_17_db restrict : memref<3x1xf32> to tensor<3x1xf32>
  %mean_row_length_17_af = kiln.reshape %mean_row_length_17_s, shape = [3] : tensor<3x1xf32>
  %mean_row_length_17_a = tensor.cast %mean_row_length_17_af : tensor<3xf32> to tensor<?xf32>
  %mean_row_length_17_bf = kiln.reshape %mean_row_length_17_d, shape = [3] : tensor<3x1xf32>
  %mean_row_length_17_b = tensor.cast %mean_row_length_17_bf : tensor<3xf32> to tensor<?xf32>
  call @differences(%mean_row_length_17_a, %mean_row_length_17_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %mean_row_length_17_sb : memref<3x1xf32>
  memref.dealloc %mean_row_length_17_db : memref<3x1xf32>
  %mean_row_length_33_n = arith.constant 99 : index
  %mean_row_length_33_x = call @input(%mean_row_length_33_n) : (index) -> tensor<?xf32>
  %mean_row_length_33_xs = tensor.cast %mean_row_length_33_x : tensor<?xf32> to tensor<99xf32>
  %mean_row_length_33_in = kiln.reshape %mean_row_length_33_xs, shape = [3, 33] : tensor<99xf32>
  %mean_row_length_33_xb = bufferization.to_buffer %mean_row_length_33_in : tensor<3x33xf32> to memref<3x33xf32>
  %mean_row_length_33_sb = memref.alloc() : memref<3x1xf32>
  call @mean_row_length_33(%mean_row_length_33_xb, %mean_row_length_33_sb) : (memref<3x33xf32>, memref<3x1xf32>) -> ()
  %mean_row_length_33_xd = memref.cast %mean_row_length_33_xb : memref<3x33xf32> to memref<3x?xf32>
  %mean_row_length_33_db = memref.alloc() : memref<3x1xf32>
  call @mean_row_length(%mean_row_length_33_xd, %mean_row_length_33_db) : (memref<3x?xf32>, memref<3x1xf32>) -> ()
  %mean_row_length_33_s = bufferization.to_tensor %mean_row_length_33_sb restrict : memref<3x1xf32> to tensor<3x1xf32>
  %mean_row_length_33_d = bufferization.to_tensor %mean_row_length_33_db restrict : memref<3x1xf32> to tensor<3x1xf32>
  %mean_row_length_33_af = kiln.reshape %mean_row_length_33_s, shape = [3] : tensor<3x1xf32>
  %mean_row_length_33_a = tensor.cast %mean_row_length_33_af : tensor<3xf32> to tensor<?xf32>
  %mean_row_length_33_bf = kiln.reshape %mean_row_length_33_d, shape = [3] : tensor<3x1xf32>
  %mean_row_length_33_b = tensor.cast %mean_row_length_33_bf : tensor<3xf32> to tensor<?xf32>
  call @differences(%mean_row_length_33_a, %mean_row_length_33_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %mean_row_length_33_sb : memref<3x1xf32>
  memref.dealloc %mean_row_length_33_db : memref<3x1xf32>
  %mean_row_length_257_n = arith.constant 771 : index
  %mean_row_length_257_x = call @input(%mean_row_length_257_n) : (index) -> tensor<?xf32>
  %mean_row_length_257_xs = tensor.cast %mean_row_length_257_x : tensor<?xf32> to tensor<771xf32>
  %mean_row_length_257_in = kiln.reshape %mean_row_length_257_xs, shape = [3, 257] : tensor<771xf32>
  %mean_row_length_257_xb = bufferization.to_buffer %mean_row_length_257_in : tensor<3x257xf32> to memref<3x257xf32>
  %mean_row_length_257_sb = memref.alloc() : memref<3x1xf32>
  call @mean_row_length_257(%mean_row_length_257_xb, %mean_row_length_257_sb) : (memref<3x257xf32>, memref<3x1xf32>) -> ()
  %mean_row_length_257_xd = memref.cast %mean_row_length_257_xb : memref<3x257xf32> to memref<3x?xf32>
  %mean_row_length_257_db = memref.alloc() : memref<3x1xf32>
  call @mean_row_length(%mean_row_length_257_xd, %mean_row_length_257_db) : (memref<3x?xf32>, memref<3x1xf32>) -> ()
  %mean_row_length_257_s = bufferization.to_tensor %mean_row_length_257_sb restrict : memref<3x1xf32> to tensor<3x1xf32>
  %mean_row_length_257_d = bufferization.to_tensor %mean_row_length_257_db restrict : memref<3x1xf32> to tensor<3x1xf32>
  %mean_row_length_257_af = kiln.reshape %mean_row_length_257_s, shape = [3] : tensor<3x1xf32>
  %mean_row_length_257_a = tensor.cast %mean_row_length_257_af : tensor<3xf32> to tensor<?xf32>
  %mean_row_length_257_bf = kiln.reshape %mean_row_length_257_d, shape = [3] : tensor<3x1xf32>
  %mean_row_length_257_b = tensor.cast %mean_row_length_257_bf : tensor<3xf32> to tensor<?xf32>
  call @differences(%mean_row_length_257_a, %mean_row_length_257_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %mean_row_length_257_sb : memref<3x1xf32>
  memref.dealloc %mean_row_length_257_db : memref<3x1xf32>
  // sum_outer
  %sum_outer_1_n = arith.constant 60 : index
  %sum_outer_1_x = call @input(%sum_outer_1_n) : (index) -> tensor<?xf32>
  %sum_outer_1_xs = tensor.cast %sum_outer_1_x : tensor<?xf32> to tensor<60xf32>
  %sum_outer_1_in = kiln.reshape %sum_outer_1_xs, shape = [1, 3, 20] : tensor<60xf32>
  %sum_outer_1_xb = bufferization.to_buffer %sum_outer_1_in : tensor<1x3x20xf32> to memref<1x3x20xf32>
  %sum_outer_1_sb = memref.alloc() : memref<3xf32>
  call @sum_outer_1(%sum_outer_1_xb, %sum_outer_1_sb) : (memref<1x3x20xf32>, memref<3xf32>) -> ()
  %sum_outer_1_xd = memref.cast %sum_outer_1_xb : memref<1x3x20xf32> to memref<?x3x20xf32>
  %sum_outer_1_db = memref.alloc() : memref<3xf32>
  call @sum_outer(%sum_outer_1_xd, %sum_outer_1_db) : (memref<?x3x20xf32>, memref<3xf32>) -> ()
  %sum_outer_1_s = bufferization.to_tensor %sum_outer_1_sb restrict : memref<3xf32> to tensor<3xf32>
  %sum_outer_1_d = bufferization.to_tensor %sum_outer_1_db restrict : memref<3xf32> to tensor<3xf32>
  %sum_outer_1_a = tensor.cast %sum_outer_1_s : tensor<3xf32> to tensor<?xf32>
  %sum_outer_1_b = tensor.cast %sum_outer_1_d : tensor<3xf32> to tensor<?xf32>
  call @differences(%sum_outer_1_a, %sum_outer_1_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %sum_outer_1_sb : memref<3xf32>
  memref.dealloc %sum_outer_1_db : memref<3xf32>
  %sum_outer_17_n = arith.constant 1020 : index
  %sum_outer_17_x = call @input(%sum_outer_17_n) : (index) -> tensor<?xf32>
  %sum_outer_17_xs = tensor.cast %sum_outer_17_x : tensor<?xf32> to tensor<1020xf32>
  %sum_outer_17_in = kiln.reshape %sum_outer_17_xs, shape = [17, 3, 20] : tensor<1020xf32>
  %sum_outer_17_xb = bufferization.to_buffer %sum_outer_17_in : tensor<17x3x20xf32> to memref<17x3x20xf32>
  %sum_outer_17_sb = memref.alloc() : memref<3xf32>
  call @sum_outer_17(%sum_outer_17_xb, %sum_outer_17_sb) : (memref<17x3x20xf32>, memref<3xf32>) -> ()
  %sum_outer_17_xd = memref.cast %sum_outer_17_xb : memref<17x3x20xf32> to memref<?x3x20xf32>
  %sum_outer_17_db = memref.alloc() : memref<3xf32>
  call @sum_outer(%sum_outer_17_xd, %sum_outer_17_db) : (memref<?x3x20xf32>, memref<3xf32>) -> ()
  %sum_outer_17_s = bufferization.to_tensor %sum_outer_17_sb restrict : memref<3xf32> to tensor<3xf32>
  %sum_outer_17_d = bufferization.to_tensor %sum_outer_17_db restrict : memref<3xf32> to tensor<3xf32>
  %sum_outer_17_a = tensor.cast %sum_outer_17_s : tensor<3xf32> to tensor<?xf32>
  %sum_outer_17_b = tensor.cast %sum_outer_17_d : tensor<3xf32> to tensor<?xf32>
  call @differences(%sum_outer_17_a, %sum_outer_17_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %sum_outer_17_sb : memref<3xf32>
  memref.dealloc %sum_outer_17_db : memref<3xf32>
  %sum_outer_33_n = arith.constant 1980 : index
  %sum_outer_33_x = call @input(%sum_outer_33_n) : (index) -> tensor<?xf32>
  %sum_outer_33_xs = tensor.cast %sum_outer_33_x : tensor<?xf32> to tensor<1980xf32>
  %sum_outer_33_in = kiln.reshape %sum_outer_33_xs, shape = [33, 3, 20] : tensor<1980xf32>
  %sum_outer_33_xb = bufferization.to_buffer %sum_outer_33_in : tensor<33x3x20xf32> to memref<33x3x20xf32>
  %sum_outer_33_sb = memref.alloc() : memref<3xf32>
  call @sum_outer_33(%sum_outer_33_xb, %sum_outer_33_sb) : (memref<33x3x20xf32>, memref<3xf32>) -> ()
  %sum_outer_33_xd = memref.cast %sum_outer_33_xb : memref<33x3x20xf32> to memref<?x3x20xf32>
  %sum_outer_33_db = memref.alloc() : memref<3xf32>
  call @sum_outer(%sum_outer_33_xd, %sum_outer_33_db) : (memref<?x3x20xf32>, memref<3xf32>) -> ()
  %sum_outer_33_s = bufferization.to_tensor %sum_outer_33_sb restrict : memref<3xf32> to tensor<3xf32>
  %sum_outer_33_d = bufferization.to_tensor %sum_outer_33_db restrict : memref<3xf32> to tensor<3xf32>
  %sum_outer_33_a = tensor.cast %sum_outer_33_s : tensor<3xf32> to tensor<?xf32>
  %sum_outer_33_b = tensor.cast %sum_outer_33_d : tensor<3xf32> to tensor<?xf32>
  call @differences(%sum_outer_33_a, %sum_outer_33_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %sum_outer_33_sb : memref<3xf32>
  memref.dealloc %sum_outer_33_db : memref<3xf32>
  %sum_outer_257_n = arith.constant 15420 : index
  %sum_outer_257_x = call @input(%sum_outer_257_n) : (index) -> tensor<?xf32>
  %sum_outer_257_xs = tensor.cast %sum_outer_257_x : tensor<?xf32> to tensor<15420xf32>
  %sum_outer_257_in = kiln.reshape %sum_outer_257_xs, shape = [257, 3, 20] : tensor<15420xf32>
  %sum_outer_257_xb = bufferization.to_buffer %sum_outer_257_in : tensor<257x3x20xf32> to memref<257x3x20xf32>
  %sum_outer_257_sb = memref.alloc() : memref<3xf32>
  call @sum_outer_257(%sum_outer_257_xb, %sum_outer_257_sb) : (memref<257x3x20xf32>, memref<3xf32>) -> ()
  %sum_outer_257_xd = memref.cast %sum_outer_257_xb : memref<257x3x20xf32> to memref<?x3x20xf32>
  %sum_outer_257_db = memref.alloc() : memref<3xf32>
  call @sum_outer(%sum_outer_257_xd, %sum_outer_257_db) : (memref<?x3x20xf32>, memref<3xf32>) -> ()
  %sum_outer_257_s = bufferization.to_tensor %sum_outer_257_sb restrict : memref<3xf32> to tensor<3xf32>
  %sum_outer_257_d = bufferization.to_tensor %sum_outer_257_db restrict : memref<3xf32> to tensor<3xf32>
  %sum_outer_257_a = tensor.cast %sum_outer_257_s : tensor<3xf32> to tensor<?xf32>
  %sum_outer_257_b = tensor.cast %sum_outer_257_d : tensor<3xf32> to tensor<?xf32>
  call @differences(%sum_outer_257_a, %sum_outer_257_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %sum_outer_257_sb : memref<3xf32>
  memref.dealloc %sum_outer_257_db : memref<3xf32>
  // sum_all_keep
  %sum_all_keep_1_n = arith.constant 32 : index
  %sum_all_keep_1_x = call @input(%sum_all_keep_1_n) : (index) -> tensor<?xf32>
  %sum_all_keep_1_xs = tensor.cast %sum_all_keep_1_x : tensor<?xf32> to tensor<32xf32>
  %sum_all_keep_1_in = kiln.reshape %sum_all_keep_1_xs, shape = [1, 32] : tensor<32xf32>
  %sum_all_keep_1_xb = bufferization.to_buffer %sum_all_keep_1_in : tensor<1x32xf32> to memref<1x32xf32>
  %sum_all_keep_1_sb = memref.alloc() : memref<1x1xf32>
  call @sum_all_keep_1(%sum_all_keep_1_xb, %sum_all_keep_1_sb) : (memref<1x32xf32>, memref<1x1xf32>) -> ()
  %sum_all_keep_1_xd = memref.cast %sum_all_keep_1_xb : memref<1x32xf32> to memref<?x32xf32>
  %sum_all_keep_1_db = memref.alloc() : memref<1x1xf32>
  call @sum_all_keep(%sum_all_keep_1_xd, %sum_all_keep_1_db) : (memref<?x32xf32>, memref<1x1xf32>) -> ()
  %sum_all_keep_1_s = bufferization.to_tensor %sum_all_keep_1_sb restrict : memref<1x1xf32> to tensor<1x1xf32>
  %sum_all_keep_1_d = bufferization.to_tensor %sum_all_keep_1_db restrict : memref<1x1xf32> to tensor<1x1xf32>
  %sum_all_keep_1_af = kiln.reshape %sum_all_keep_1_s, shape = [1] : tensor<1x1xf32>
  %sum_all_keep_1_a = tensor.cast %sum_all_keep_1_af : tensor<1xf32> to tensor<?xf32>
  %sum_all_keep_1_bf = kiln.reshape %sum_all_keep_1_d, shape = [1] : tensor<1x1xf32>
  %sum_all_keep_1_b = tensor.cast %sum_all_keep_1_bf : tensor<1xf32> to tensor<?xf32>
  call @differences(%sum_all_keep_1_a, %sum_all_keep_1_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %sum_all_keep_1_sb : memref<1x1xf32>
  memref.dealloc %sum_all_keep_1_db : memref<1x1xf32>
  %sum_all_keep_17_n = arith.constant 544 : index
  %sum_all_keep_17_x = call @input(%sum_all_keep_17_n) : (index) -> tensor<?xf32>
  %sum_all_keep_17_xs = tensor.cast %sum_all_keep_17_x : tensor<?xf32> to tensor<544xf32>
  %sum_all_keep_17_in = kiln.reshape %sum_all_keep_17_xs, shape = [17, 32] : tensor<544xf32>
  %sum_all_keep_17_xb = bufferization.to_buffer %sum_all_keep_17_in : tensor<17x32xf32> to memref<17x32xf32>
  %sum_all_keep_17_sb = memref.alloc() : memref<1x1xf32>
  call @sum_all_keep_17(%sum_all_keep_17_xb, %sum_all_keep_17_sb) : (memref<17x32xf32>, memref<1x1xf32>) -> ()
  %sum_all_keep_17_xd = memref.cast %sum_all_keep_17_xb : memref<17x32xf32> to memref<?x32xf32>
  %sum_all_keep_17_db = memref.alloc() : memref<1x1xf32>
  call @sum_all_keep(%sum_all_keep_17_xd, %sum_all_keep_17_db) : (memref<?x32xf32>, memref<1x1xf32>) -> ()
  %sum_all_keep_17_s = bufferization.to_tensor %sum_all_keep_17_sb restrict : memref<1x1xf32> to tensor<1x1xf32>
  %sum_all_keep_17_d = bufferization.to_tensor %sum_all_keep_17_db restrict : memref<1x1xf32> to tensor<1x1xf32>
  %sum_all_keep_17_af = kiln.reshape %sum_all_keep_17_s, shape = [1] : tensor<1x1xf32>
  %sum_all_keep_17_a = tensor.cast %sum_all_keep_17_af : tensor<1xf32> to tensor<?xf32>
  %sum_all_keep_17_bf = kiln.reshape %sum_all_keep_17_d, shape = [1] : tensor<1x1xf32>
  %sum_all_keep_17_b = tensor.cast %sum_all_keep_17_bf : tensor<1xf32> to tensor<?xf32>
  call @differences(%sum_all_keep_17_a, %sum_all_keep_17_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %sum_all_keep_17_sb : memref<1x1xf32>
  memref.dealloc %sum_all_keep_17_db : memref<1x1xf32>
  %sum_all_keep_33_n = arith.constant 1056 : index
  %sum_all_keep_33_x = call @input(%sum_all_keep_33_n) : (index) -> tensor<?xf32>
  %sum_all_keep_33_xs = tensor.cast %sum_all_keep_33_x : tensor<?xf32> to tensor<1056xf32>
  %sum_all_keep_33_in = kiln.reshape %sum_all_keep_33_xs, shape = [33, 32] : tensor<1056xf32>
  %sum_all_keep_33_xb = bufferization.to_buffer %sum_all_keep_33_in : tensor<33x32xf32> to memref<33x32xf32>
  %sum_all_keep_33_sb = memref.alloc() : memref<1x1xf32>
  call @sum_all_keep_33(%sum_all_keep_33_xb, %sum_all_keep_33_sb) : (memref<33x32xf32>, memref<1x1xf32>) -> ()
  %sum_all_keep_33_xd = memref.cast %sum_all_keep_33_xb : memref<33x32xf32> to memref<?x32xf32>
  %sum_all_keep_33_db = memref.alloc() : memref<1x1xf32>
  call @sum_all_keep(%sum_all_keep_33_xd, %sum_all_keep_33_db) : (memref<?x32xf32>, memref<1x1xf32>) -> ()
  %sum_all_keep_33_s = bufferization.to_tensor %sum_all_keep_33_sb restrict : memref<1x1xf32> to tensor<1x1xf32>
  %sum_all_keep_33_d = bufferization.to_tensor %sum_all_keep_33_db restrict : memref<1x1xf32> to tensor<1x1xf32>
  %sum_all_keep_33_af = kiln.reshape %sum_all_keep_33_s, shape = [1] : tensor<1x1xf32>
  %sum_all_keep_33_a = tensor.cast %sum_all_keep_33_af : tensor<1xf32> to tensor<?xf32>
  %sum_all_keep_33_bf = kiln.reshape %sum_all_keep_33_d, shape = [1] : tensor<1x1xf32>
  %sum_all_keep_33_b = tensor.cast %sum_all_keep_33_bf : tensor<1xf32> to tensor<?xf32>
  call @differences(%sum_all_keep_33_a, %sum_all_keep_33_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %sum_all_keep_33_sb : memref<1x1xf32>
  memref.dealloc %sum_all_keep_33_db : memref<1x1xf32>
  %sum_all_keep_257_n = arith.constant 8224 : index
  %sum_all_keep_257_x = call @input(%sum_all_keep_257_n) : (index) -> tensor<?xf32>
  %sum_all_keep_257_xs = tensor.cast %sum_all_keep_257_x : tensor<?xf32> to tensor<8224xf32>
  %sum_all_keep_257_in = kiln.reshape %sum_all_keep_257_xs, shape = [257, 32] : tensor<8224xf32>
  %sum_all_keep_257_xb = bufferization.to_buffer %sum_all_keep_257_in : tensor<257x32xf32> to memref<257x32xf32>
  %sum_all_keep_257_sb = memref.alloc() : memref<1x1xf32>
  call @sum_all_keep_257(%sum_all_keep_257_xb, %sum_all_keep_257_sb) : (memref<257x32xf32>, memref<1x1xf32>) -> ()
  %sum_all_keep_257_xd = memref.cast %sum_all_keep_257_xb : memref<257x32xf32> to memref<?x32xf32>
  %sum_all_keep_257_db = memref.alloc() : memref<1x1xf32>
  call @sum_all_keep(%sum_all_keep_257_xd, %sum_all_keep_257_db) : (memref<?x32xf32>, memref<1x1xf32>) -> ()
  %sum_all_keep_257_s = bufferization.to_tensor %sum_all_keep_257_sb restrict : memref<1x1xf32> to tensor<1x1xf32>
  %sum_all_keep_257_d = bufferization.to_tensor %sum_all_keep_257_db restrict : memref<1x1xf32> to tensor<1x1xf32>
  %sum_all_keep_257_af = kiln.reshape %sum_all_keep_257_s, shape = [1] : tensor<1x1xf32>
  %sum_all_keep_257_a = tensor.cast %sum_all_keep_257_af : tensor<1xf32> to tensor<?xf32>
  %sum_all_keep_257_bf = kiln.reshape %sum_all_keep_257_d, shape = [1] : tensor<1x1xf32>
  %sum_all_keep_257_b = tensor.cast %sum_all_keep_257_bf : tensor<1xf32> to tensor<?xf32>
  call @differences(%sum_all_keep_257_a, %sum_all_keep_257_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %sum_all_keep_257_sb : memref<1x1xf32>
  memref.dealloc %sum_all_keep_257_db : memref<1x1xf32>
  // mean_batch_keep
  %mean_batch_keep_1_n = arith.constant 35 : index
  %mean_batch_keep_1_x = call @input(%mean_batch_keep_1_n) : (index) -> tensor<?xf32>
  %mean_batch_keep_1_xs = tensor.cast %mean_batch_keep_1_x : tensor<?xf32> to tensor<35xf32>
  %mean_batch_keep_1_in = kiln.reshape %mean_batch_keep_1_xs, shape = [1, 5, 7] : tensor<35xf32>
  %mean_batch_keep_1_xb = bufferization.to_buffer %mean_batch_keep_1_in : tensor<1x5x7xf32> to memref<1x5x7xf32>
  %mean_batch_keep_1_sb = memref.alloc() : memref<1x5x7xf32>
  call @mean_batch_keep_1(%mean_batch_keep_1_xb, %mean_batch_keep_1_sb) : (memref<1x5x7xf32>, memref<1x5x7xf32>) -> ()
  %mean_batch_keep_1_xd = memref.cast %mean_batch_keep_1_xb : memref<1x5x7xf32> to memref<?x5x7xf32>
  %mean_batch_keep_1_db = memref.alloc() : memref<1x5x7xf32>
  call @mean_batch_keep(%mean_batch_keep_1_xd, %mean_batch_keep_1_db) : (memref<?x5x7xf32>, memref<1x5x7xf32>) -> ()
  %mean_batch_keep_1_s = bufferization.to_tensor %mean_batch_keep_1_sb restrict : memref<1x5x7xf32> to tensor<1x5x7xf32>
  %mean_batch_keep_1_d = bufferization.to_tensor %mean_batch_keep_1_db restrict : memref<1x5x7xf32> to tensor<1x5x7xf32>
  %mean_batch_keep_1_af = kiln.reshape %mean_batch_keep_1_s, shape = [35] : tensor<1x5x7xf32>
  %mean_batch_keep_1_a = tensor.cast %mean_batch_keep_1_af : tensor<35xf32> to tensor<?xf32>
  %mean_batch_keep_1_bf = kiln.reshape %mean_batch_keep_1_d, shape = [35] : tensor<1x5x7xf32>
  %mean_batch_keep_1_b = tensor.cast %mean_batch_keep_1_bf : tensor<35xf32> to tensor<?xf32>
  call @differences(%mean_batch_keep_1_a, %mean_batch_keep_1_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %mean_batch_keep_1_sb : memref<1x5x7xf32>
  memref.dealloc %mean_batch_keep_1_db : memref<1x5x7xf32>
  %mean_batch_keep_17_n = arith.constant 595 : index
  %mean_batch_keep_17_x = call @input(%mean_batch_keep_17_n) : (index) -> tensor<?xf32>
  %mean_batch_keep_17_xs = tensor.cast %mean_batch_keep_17_x : tensor<?xf32> to tensor<595xf32>
  %mean_batch_keep_17_in = kiln.reshape %mean_batch_keep_17_xs, shape = [17, 5, 7] : tensor<595xf32>
  %mean_batch_keep_17_xb = bufferization.to_buffer %mean_batch_keep_17_in : tensor<17x5x7xf32> to memref<17x5x7xf32>
  %mean_batch_keep_17_sb = memref.alloc() : memref<1x5x7xf32>
  call @mean_batch_keep_17(%mean_batch_keep_17_xb, %mean_batch_keep_17_sb) : (memref<17x5x7xf32>, memref<1x5x7xf32>) -> ()
  %mean_batch_keep_17_xd = memref.cast %mean_batch_keep_17_xb : memref<17x5x7xf32> to memref<?x5x7xf32>
  %mean_batch_keep_17_db = memref.alloc() : memref<1x5x7xf32>
  call @mean_batch_keep(%mean_batch_keep_17_xd, %mean_batch_keep_17_db) : (memref<?x5x7xf32>, memref<1x5x7xf32>) -> ()
  %mean_batch_keep_17_s = bufferization.to_tensor %mean_batch_keep_17_sb restrict : memref<1x5x7xf32> to tensor<1x5x7xf32>
  %mean_batch_keep_17_d = bufferization.to_tensor %mean_batch_keep_17_db restrict : memref<1x5x7xf32> to tensor<1x5x7xf32>
  %mean_batch_keep_17_af = kiln.reshape %mean_batch_keep_17_s, shape = [35] : tensor<1x5x7xf32>
  %mean_batch_keep_17_a = tensor.cast %mean_batch_keep_17_af : tensor<35xf32> to tensor<?xf32>
  %mean_batch_keep_17_bf = kiln.reshape %mean_batch_keep_17_d, shape = [35] : tensor<1x5x7xf32>
  %mean_batch_keep_17_b = tensor.cast %mean_batch_keep_17_bf : tensor<35xf32> to tensor<?xf32>
  call @differences(%mean_batch_keep_17_a, %mean_batch_keep_17_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %mean_batch_keep_17_sb : memref<1x5x7xf32>
  memref.dealloc %mean_batch_keep_17_db : memref<1x5x7xf32>
  %mean_batch_keep_33_n = arith.constant 1155 : index
  %mean_batch_keep_33_x = call @input(%mean_batch_keep_33_n) : (index) -> tensor<?xf32>
  %mean_batch_keep_33_xs = tensor.cast %mean_batch_keep_33_x : tensor<?xf32> to tensor<1155xf32>
  %mean_batch_keep_33_in = kiln.reshape %mean_batch_keep_33_xs, shape = [33, 5, 7] : tensor<1155xf32>
  %mean_batch_keep_33_xb = bufferization.to_buffer %mean_batch_keep_33_in : tensor<33x5x7xf32> to memref<33x5x7xf32>
  %mean_batch_keep_33_sb = memref.alloc() : memref<1x5x7xf32>
  call @mean_batch_keep_33(%mean_batch_keep_33_xb, %mean_batch_keep_33_sb) : (memref<33x5x7xf32>, memref<1x5x7xf32>) -> ()
  %mean_batch_keep_33_xd = memref.cast %mean_batch_keep_33_xb : memref<33x5x7xf32> to memref<?x5x7xf32>
  %mean_batch_keep_33_db = memref.alloc() : memref<1x5x7xf32>
  call @mean_batch_keep(%mean_batch_keep_33_xd, %mean_batch_keep_33_db) : (memref<?x5x7xf32>, memref<1x5x7xf32>) -> ()
  %mean_batch_keep_33_s = bufferization.to_tensor %mean_batch_keep_33_sb restrict : memref<1x5x7xf32> to tensor<1x5x7xf32>
  %mean_batch_keep_33_d = bufferization.to_tensor %mean_batch_keep_33_db restrict : memref<1x5x7xf32> to tensor<1x5x7xf32>
  %mean_batch_keep_33_af = kiln.reshape %mean_batch_keep_33_s, shape = [35] : tensor<1x5x7xf32>
  %mean_batch_keep_33_a = tensor.cast %mean_batch_keep_33_af : tensor<35xf32> to tensor<?xf32>
  %mean_batch_keep_33_bf = kiln.reshape %mean_batch_keep_33_d, shape = [35] : tensor<1x5x7xf32>
  %mean_batch_keep_33_b = tensor.cast %mean_batch_keep_33_bf : tensor<35xf32> to tensor<?xf32>
  call @differences(%mean_batch_keep_33_a, %mean_batch_keep_33_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %mean_batch_keep_33_sb : memref<1x5x7xf32>
  memref.dealloc %mean_batch_keep_33_db : memref<1x5x7xf32>
  %mean_batch_keep_257_n = arith.constant 8995 : index
  %mean_batch_keep_257_x = call @input(%mean_batch_keep_257_n) : (index) -> tensor<?xf32>
  %mean_batch_keep_257_xs = tensor.cast %mean_batch_keep_257_x : tensor<?xf32> to tensor<8995xf32>
  %mean_batch_keep_257_in = kiln.reshape %mean_batch_keep_257_xs, shape = [257, 5, 7] : tensor<8995xf32>
  %mean_batch_keep_257_xb = bufferization.to_buffer %mean_batch_keep_257_in : tensor<257x5x7xf32> to memref<257x5x7xf32>
  %mean_batch_keep_257_sb = memref.alloc() : memref<1x5x7xf32>
  call @mean_batch_keep_257(%mean_batch_keep_257_xb, %mean_batch_keep_257_sb) : (memref<257x5x7xf32>, memref<1x5x7xf32>) -> ()
  %mean_batch_keep_257_xd = memref.cast %mean_batch_keep_257_xb : memref<257x5x7xf32> to memref<?x5x7xf32>
  %mean_batch_keep_257_db = memref.alloc() : memref<1x5x7xf32>
  call @mean_batch_keep(%mean_batch_keep_257_xd, %mean_batch_keep_257_db) : (memref<?x5x7xf32>, memref<1x5x7xf32>) -> ()
  %mean_batch_keep_257_s = bufferization.to_tensor %mean_batch_keep_257_sb restrict : memref<1x5x7xf32> to tensor<1x5x7xf32>
  %mean_batch_keep_257_d = bufferization.to_tensor %mean_batch_keep_257_db restrict : memref<1x5x7xf32> to tensor<1x5x7xf32>
  %mean_batch_keep_257_af = kiln.reshape %mean_batch_keep_257_s, shape = [35] : tensor<1x5x7xf32>
  %mean_batch_keep_257_a = tensor.cast %mean_batch_keep_257_af : tensor<35xf32> to tensor<?xf32>
  %mean_batch_keep_257_bf = kiln.reshape %mean_batch_keep_257_d, shape = [35] : tensor<1x5x7xf32>
  %mean_batch_keep_257_b = tensor.cast %mean_batch_keep_257_bf : tensor<35xf32> to tensor<?xf32>
  call @differences(%mean_batch_keep_257_a, %mean_batch_keep_257_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %mean_batch_keep_257_sb : memref<1x5x7xf32>
  memref.dealloc %mean_batch_keep_257_db : memref<1x5x7xf32>
  // softmax
  %softmax_1_n = arith.constant 40 : index
  %softmax_1_x = call @input(%softmax_1_n) : (index) -> tensor<?xf32>
  %softmax_1_xs = tensor.cast %softmax_1_x : tensor<?xf32> to tensor<40xf32>
  %softmax_1_in = kiln.reshape %softmax_1_xs, shape = [1, 40] : tensor<40xf32>
  %softmax_1_xb = bufferization.to_buffer %softmax_1_in : tensor<1x40xf32> to memref<1x40xf32>
  %softmax_1_sb = memref.alloc() : memref<1x40xf32>
  call @softmax_1(%softmax_1_xb, %softmax_1_sb) : (memref<1x40xf32>, memref<1x40xf32>) -> ()
  %softmax_1_xd = memref.cast %softmax_1_xb : memref<1x40xf32> to memref<?x40xf32>
  %softmax_1_z0 = arith.constant 1 : index
  %softmax_1_db = memref.alloc(%softmax_1_z0) : memref<?x40xf32>
  call @softmax(%softmax_1_xd, %softmax_1_db) : (memref<?x40xf32>, memref<?x40xf32>) -> ()
  %softmax_1_dc = memref.cast %softmax_1_db : memref<?x40xf32> to memref<1x40xf32>
  %softmax_1_s = bufferization.to_tensor %softmax_1_sb restrict : memref<1x40xf32> to tensor<1x40xf32>
  %softmax_1_d = bufferization.to_tensor %softmax_1_dc restrict : memref<1x40xf32> to tensor<1x40xf32>
  %softmax_1_af = kiln.reshape %softmax_1_s, shape = [40] : tensor<1x40xf32>
  %softmax_1_a = tensor.cast %softmax_1_af : tensor<40xf32> to tensor<?xf32>
  %softmax_1_bf = kiln.reshape %softmax_1_d, shape = [40] : tensor<1x40xf32>
  %softmax_1_b = tensor.cast %softmax_1_bf : tensor<40xf32> to tensor<?xf32>
  call @differences(%softmax_1_a, %softmax_1_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %softmax_1_sb : memref<1x40xf32>
  memref.dealloc %softmax_1_db : memref<?x40xf32>
  %softmax_17_n = arith.constant 680 : index
  %softmax_17_x = call @input(%softmax_17_n) : (index) -> tensor<?xf32>
  %softmax_17_xs = tensor.cast %softmax_17_x : tensor<?xf32> to tensor<680xf32>
  %softmax_17_in = kiln.reshape %softmax_17_xs, shape = [17, 40] : tensor<680xf32>
  %softmax_17_xb = bufferization.to_buffer %softmax_17_in : tensor<17x40xf32> to memref<17x40xf32>
  %softmax_17_sb = memref.alloc() : memref<17x40xf32>
  call @softmax_17(%softmax_17_xb, %softmax_17_sb) : (memref<17x40xf32>, memref<17x40xf32>) -> ()
  %softmax_17_xd = memref.cast %softmax_17_xb : memref<17x40xf32> to memref<?x40xf32>
  %softmax_17_z0 = arith.constant 17 : index
  %softmax_17_db = memref.alloc(%softmax_17_z0) : memref<?x40xf32>
  call @softmax(%softmax_17_xd, %softmax_17_db) : (memref<?x40xf32>, memref<?x40xf32>) -> ()
  %softmax_17_dc = memref.cast %softmax_17_db : memref<?x40xf32> to memref<17x40xf32>
  %softmax_17_s = bufferization.to_tensor %softmax_17_sb restrict : memref<17x40xf32> to tensor<17x40xf32>
  %softmax_17_d = bufferization.to_tensor %softmax_17_dc restrict : memref<17x40xf32> to tensor<17x40xf32>
  %softmax_17_af = kiln.reshape %softmax_17_s, shape = [680] : tensor<17x40xf32>
  %softmax_17_a = tensor.cast %softmax_17_af : tensor<680xf32> to tensor<?xf32>
  %softmax_17_bf = kiln.reshape %softmax_17_d, shape = [680] : tensor<17x40xf32>
  %softmax_17_b = tensor.cast %softmax_17_bf : tensor<680xf32> to tensor<?xf32>
  call @differences(%softmax_17_a, %softmax_17_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %softmax_17_sb : memref<17x40xf32>
  memref.dealloc %softmax_17_db : memref<?x40xf32>
  %softmax_33_n = arith.constant 1320 : index
  %softmax_33_x = call @input(%softmax_33_n) : (index) -> tensor<?xf32>
  %softmax_33_xs = tensor.cast %softmax_33_x : tensor<?xf32> to tensor<1320xf32>
  %softmax_33_in = kiln.reshape %softmax_33_xs, shape = [33, 40] : tensor<1320xf32>
  %softmax_33_xb = bufferization.to_buffer %softmax_33_in : tensor<33x40xf32> to memref<33x40xf32>
  %softmax_33_sb = memref.alloc() : memref<33x40xf32>
  call @softmax_33(%softmax_33_xb, %softmax_33_sb) : (memref<33x40xf32>, memref<33x40xf32>) -> ()
  %softmax_33_xd = memref.cast %softmax_33_xb : memref<33x40xf32> to memref<?x40xf32>
  %softmax_33_z0 = arith.constant 33 : index
  %softmax_33_db = memref.alloc(%softmax_33_z0) : memref<?x40xf32>
  call @softmax(%softmax_33_xd, %softmax_33_db) : (memref<?x40xf32>, memref<?x40xf32>) -> ()
  %softmax_33_dc = memref.cast %softmax_33_db : memref<?x40xf32> to memref<33x40xf32>
  %softmax_33_s = bufferization.to_tensor %softmax_33_sb restrict : memref<33x40xf32> to tensor<33x40xf32>
  %softmax_33_d = bufferization.to_tensor %softmax_33_dc restrict : memref<33x40xf32> to tensor<33x40xf32>
  %softmax_33_af = kiln.reshape %softmax_33_s, shape = [1320] : tensor<33x40xf32>
  %softmax_33_a = tensor.cast %softmax_33_af : tensor<1320xf32> to tensor<?xf32>
  %softmax_33_bf = kiln.reshape %softmax_33_d, shape = [1320] : tensor<33x40xf32>
  %softmax_33_b = tensor.cast %softmax_33_bf : tensor<1320xf32> to tensor<?xf32>
  call @differences(%softmax_33_a, %softmax_33_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %softmax_33_sb : memref<33x40xf32>
  memref.dealloc %softmax_33_db : memref<?x40xf32>
  %softmax_257_n = arith.constant 10280 : index
  %softmax_257_x = call @input(%softmax_257_n) : (index) -> tensor<?xf32>
  %softmax_257_xs = tensor.cast %softmax_257_x : tensor<?xf32> to tensor<10280xf32>
  %softmax_257_in = kiln.reshape %softmax_257_xs, shape = [257, 40] : tensor<10280xf32>
  %softmax_257_xb = bufferization.to_buffer %softmax_257_in : tensor<257x40xf32> to memref<257x40xf32>
  %softmax_257_sb = memref.alloc() : memref<257x40xf32>
  call @softmax_257(%softmax_257_xb, %softmax_257_sb) : (memref<257x40xf32>, memref<257x40xf32>) -> ()
  %softmax_257_xd = memref.cast %softmax_257_xb : memref<257x40xf32> to memref<?x40xf32>
  %softmax_257_z0 = arith.constant 257 : index
  %softmax_257_db = memref.alloc(%softmax_257_z0) : memref<?x40xf32>
  call @softmax(%softmax_257_xd, %softmax_257_db) : (memref<?x40xf32>, memref<?x40xf32>) -> ()
  %softmax_257_dc = memref.cast %softmax_257_db : memref<?x40xf32> to memref<257x40xf32>
  %softmax_257_s = bufferization.to_tensor %softmax_257_sb restrict : memref<257x40xf32> to tensor<257x40xf32>
  %softmax_257_d = bufferization.to_tensor %softmax_257_dc restrict : memref<257x40xf32> to tensor<257x40xf32>
  %softmax_257_af = kiln.reshape %softmax_257_s, shape = [10280] : tensor<257x40xf32>
  %softmax_257_a = tensor.cast %softmax_257_af : tensor<10280xf32> to tensor<?xf32>
  %softmax_257_bf = kiln.reshape %softmax_257_d, shape = [10280] : tensor<257x40xf32>
  %softmax_257_b = tensor.cast %softmax_257_bf : tensor<10280xf32> to tensor<?xf32>
  call @differences(%softmax_257_a, %softmax_257_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %softmax_257_sb : memref<257x40xf32>
  memref.dealloc %softmax_257_db : memref<?x40xf32>
  // layer_norm
  %layer_norm_1_n = arith.constant 40 : index
  %layer_norm_1_x = call @input(%layer_norm_1_n) : (index) -> tensor<?xf32>
  %layer_norm_1_xs = tensor.cast %layer_norm_1_x : tensor<?xf32> to tensor<40xf32>
  %layer_norm_1_in = kiln.reshape %layer_norm_1_xs, shape = [1, 40] : tensor<40xf32>
  %layer_norm_1_xb = bufferization.to_buffer %layer_norm_1_in : tensor<1x40xf32> to memref<1x40xf32>
  %layer_norm_1_sb = memref.alloc() : memref<1x40xf32>
  call @layer_norm_1(%layer_norm_1_xb, %layer_norm_1_sb) : (memref<1x40xf32>, memref<1x40xf32>) -> ()
  %layer_norm_1_xd = memref.cast %layer_norm_1_xb : memref<1x40xf32> to memref<?x40xf32>
  %layer_norm_1_z0 = arith.constant 1 : index
  %layer_norm_1_db = memref.alloc(%layer_norm_1_z0) : memref<?x40xf32>
  call @layer_norm(%layer_norm_1_xd, %layer_norm_1_db) : (memref<?x40xf32>, memref<?x40xf32>) -> ()
  %layer_norm_1_dc = memref.cast %layer_norm_1_db : memref<?x40xf32> to memref<1x40xf32>
  %layer_norm_1_s = bufferization.to_tensor %layer_norm_1_sb restrict : memref<1x40xf32> to tensor<1x40xf32>
  %layer_norm_1_d = bufferization.to_tensor %layer_norm_1_dc restrict : memref<1x40xf32> to tensor<1x40xf32>
  %layer_norm_1_af = kiln.reshape %layer_norm_1_s, shape = [40] : tensor<1x40xf32>
  %layer_norm_1_a = tensor.cast %layer_norm_1_af : tensor<40xf32> to tensor<?xf32>
  %layer_norm_1_bf = kiln.reshape %layer_norm_1_d, shape = [40] : tensor<1x40xf32>
  %layer_norm_1_b = tensor.cast %layer_norm_1_bf : tensor<40xf32> to tensor<?xf32>
  call @differences(%layer_norm_1_a, %layer_norm_1_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %layer_norm_1_sb : memref<1x40xf32>
  memref.dealloc %layer_norm_1_db : memref<?x40xf32>
  %layer_norm_17_n = arith.constant 680 : index
  %layer_norm_17_x = call @input(%layer_norm_17_n) : (index) -> tensor<?xf32>
  %layer_norm_17_xs = tensor.cast %layer_norm_17_x : tensor<?xf32> to tensor<680xf32>
  %layer_norm_17_in = kiln.reshape %layer_norm_17_xs, shape = [17, 40] : tensor<680xf32>
  %layer_norm_17_xb = bufferization.to_buffer %layer_norm_17_in : tensor<17x40xf32> to memref<17x40xf32>
  %layer_norm_17_sb = memref.alloc() : memref<17x40xf32>
  call @layer_norm_17(%layer_norm_17_xb, %layer_norm_17_sb) : (memref<17x40xf32>, memref<17x40xf32>) -> ()
  %layer_norm_17_xd = memref.cast %layer_norm_17_xb : memref<17x40xf32> to memref<?x40xf32>
  %layer_norm_17_z0 = arith.constant 17 : index
  %layer_norm_17_db = memref.alloc(%layer_norm_17_z0) : memref<?x40xf32>
  call @layer_norm(%layer_norm_17_xd, %layer_norm_17_db) : (memref<?x40xf32>, memref<?x40xf32>) -> ()
  %layer_norm_17_dc = memref.cast %layer_norm_17_db : memref<?x40xf32> to memref<17x40xf32>
  %layer_norm_17_s = bufferization.to_tensor %layer_norm_17_sb restrict : memref<17x40xf32> to tensor<17x40xf32>
  %layer_norm_17_d = bufferization.to_tensor %layer_norm_17_dc restrict : memref<17x40xf32> to tensor<17x40xf32>
  %layer_norm_17_af = kiln.reshape %layer_norm_17_s, shape = [680] : tensor<17x40xf32>
  %layer_norm_17_a = tensor.cast %layer_norm_17_af : tensor<680xf32> to tensor<?xf32>
  %layer_norm_17_bf = kiln.reshape %layer_norm_17_d, shape = [680] : tensor<17x40xf32>
  %layer_norm_17_b = tensor.cast %layer_norm_17_bf : tensor<680xf32> to tensor<?xf32>
  call @differences(%layer_norm_17_a, %layer_norm_17_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %layer_norm_17_sb : memref<17x40xf32>
  memref.dealloc %layer_norm_17_db : memref<?x40xf32>
  %layer_norm_33_n = arith.constant 1320 : index
  %layer_norm_33_x = call @input(%layer_norm_33_n) : (index) -> tensor<?xf32>
  %layer_norm_33_xs = tensor.cast %layer_norm_33_x : tensor<?xf32> to tensor<1320xf32>
  %layer_norm_33_in = kiln.reshape %layer_norm_33_xs, shape = [33, 40] : tensor<1320xf32>
  %layer_norm_33_xb = bufferization.to_buffer %layer_norm_33_in : tensor<33x40xf32> to memref<33x40xf32>
  %layer_norm_33_sb = memref.alloc() : memref<33x40xf32>
  call @layer_norm_33(%layer_norm_33_xb, %layer_norm_33_sb) : (memref<33x40xf32>, memref<33x40xf32>) -> ()
  %layer_norm_33_xd = memref.cast %layer_norm_33_xb : memref<33x40xf32> to memref<?x40xf32>
  %layer_norm_33_z0 = arith.constant 33 : index
  %layer_norm_33_db = memref.alloc(%layer_norm_33_z0) : memref<?x40xf32>
  call @layer_norm(%layer_norm_33_xd, %layer_norm_33_db) : (memref<?x40xf32>, memref<?x40xf32>) -> ()
  %layer_norm_33_dc = memref.cast %layer_norm_33_db : memref<?x40xf32> to memref<33x40xf32>
  %layer_norm_33_s = bufferization.to_tensor %layer_norm_33_sb restrict : memref<33x40xf32> to tensor<33x40xf32>
  %layer_norm_33_d = bufferization.to_tensor %layer_norm_33_dc restrict : memref<33x40xf32> to tensor<33x40xf32>
  %layer_norm_33_af = kiln.reshape %layer_norm_33_s, shape = [1320] : tensor<33x40xf32>
  %layer_norm_33_a = tensor.cast %layer_norm_33_af : tensor<1320xf32> to tensor<?xf32>
  %layer_norm_33_bf = kiln.reshape %layer_norm_33_d, shape = [1320] : tensor<33x40xf32>
  %layer_norm_33_b = tensor.cast %layer_norm_33_bf : tensor<1320xf32> to tensor<?xf32>
  call @differences(%layer_norm_33_a, %layer_norm_33_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %layer_norm_33_sb : memref<33x40xf32>
  memref.dealloc %layer_norm_33_db : memref<?x40xf32>
  %layer_norm_257_n = arith.constant 10280 : index
  %layer_norm_257_x = call @input(%layer_norm_257_n) : (index) -> tensor<?xf32>
  %layer_norm_257_xs = tensor.cast %layer_norm_257_x : tensor<?xf32> to tensor<10280xf32>
  %layer_norm_257_in = kiln.reshape %layer_norm_257_xs, shape = [257, 40] : tensor<10280xf32>
  %layer_norm_257_xb = bufferization.to_buffer %layer_norm_257_in : tensor<257x40xf32> to memref<257x40xf32>
  %layer_norm_257_sb = memref.alloc() : memref<257x40xf32>
  call @layer_norm_257(%layer_norm_257_xb, %layer_norm_257_sb) : (memref<257x40xf32>, memref<257x40xf32>) -> ()
  %layer_norm_257_xd = memref.cast %layer_norm_257_xb : memref<257x40xf32> to memref<?x40xf32>
  %layer_norm_257_z0 = arith.constant 257 : index
  %layer_norm_257_db = memref.alloc(%layer_norm_257_z0) : memref<?x40xf32>
  call @layer_norm(%layer_norm_257_xd, %layer_norm_257_db) : (memref<?x40xf32>, memref<?x40xf32>) -> ()
  %layer_norm_257_dc = memref.cast %layer_norm_257_db : memref<?x40xf32> to memref<257x40xf32>
  %layer_norm_257_s = bufferization.to_tensor %layer_norm_257_sb restrict : memref<257x40xf32> to tensor<257x40xf32>
  %layer_norm_257_d = bufferization.to_tensor %layer_norm_257_dc restrict : memref<257x40xf32> to tensor<257x40xf32>
  %layer_norm_257_af = kiln.reshape %layer_norm_257_s, shape = [10280] : tensor<257x40xf32>
  %layer_norm_257_a = tensor.cast %layer_norm_257_af : tensor<10280xf32> to tensor<?xf32>
  %layer_norm_257_bf = kiln.reshape %layer_norm_257_d, shape = [10280] : tensor<257x40xf32>
  %layer_norm_257_b = tensor.cast %layer_norm_257_bf : tensor<10280xf32> to tensor<?xf32>
  call @differences(%layer_norm_257_a, %layer_norm_257_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %layer_norm_257_sb : memref<257x40xf32>
  memref.dealloc %layer_norm_257_db : memref<?x40xf32>
  // moves
  %moves_1_n = arith.constant 3 : index
  %moves_1_x = call @input(%moves_1_n) : (index) -> tensor<?xf32>
  %moves_1_xs = tensor.cast %moves_1_x : tensor<?xf32> to tensor<3xf32>
  %moves_1_in = kiln.reshape %moves_1_xs, shape = [1, 3] : tensor<3xf32>
  %moves_1_xb = bufferization.to_buffer %moves_1_in : tensor<1x3xf32> to memref<1x3xf32>
  %moves_1_sb = memref.alloc() : memref<1xf32>
  call @moves_1(%moves_1_xb, %moves_1_sb) : (memref<1x3xf32>, memref<1xf32>) -> ()
  %moves_1_xd = memref.cast %moves_1_xb : memref<1x3xf32> to memref<?x3xf32>
  %moves_1_z0 = arith.constant 1 : index
  %moves_1_db = memref.alloc(%moves_1_z0) : memref<?xf32>
  call @moves(%moves_1_xd, %moves_1_db) : (memref<?x3xf32>, memref<?xf32>) -> ()
  %moves_1_dc = memref.cast %moves_1_db : memref<?xf32> to memref<1xf32>
  %moves_1_s = bufferization.to_tensor %moves_1_sb restrict : memref<1xf32> to tensor<1xf32>
  %moves_1_d = bufferization.to_tensor %moves_1_dc restrict : memref<1xf32> to tensor<1xf32>
  %moves_1_a = tensor.cast %moves_1_s : tensor<1xf32> to tensor<?xf32>
  %moves_1_b = tensor.cast %moves_1_d : tensor<1xf32> to tensor<?xf32>
  call @differences(%moves_1_a, %moves_1_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %moves_1_sb : memref<1xf32>
  memref.dealloc %moves_1_db : memref<?xf32>
  %moves_17_n = arith.constant 51 : index
  %moves_17_x = call @input(%moves_17_n) : (index) -> tensor<?xf32>
  %moves_17_xs = tensor.cast %moves_17_x : tensor<?xf32> to tensor<51xf32>
  %moves_17_in = kiln.reshape %moves_17_xs, shape = [17, 3] : tensor<51xf32>
  %moves_17_xb = bufferization.to_buffer %moves_17_in : tensor<17x3xf32> to memref<17x3xf32>
  %moves_17_sb = memref.alloc() : memref<9xf32>
  call @moves_17(%moves_17_xb, %moves_17_sb) : (memref<17x3xf32>, memref<9xf32>) -> ()
  %moves_17_xd = memref.cast %moves_17_xb : memref<17x3xf32> to memref<?x3xf32>
  %moves_17_z0 = arith.constant 9 : index
  %moves_17_db = memref.alloc(%moves_17_z0) : memref<?xf32>
  call @moves(%moves_17_xd, %moves_17_db) : (memref<?x3xf32>, memref<?xf32>) -> ()
  %moves_17_dc = memref.cast %moves_17_db : memref<?xf32> to memref<9xf32>
  %moves_17_s = bufferization.to_tensor %moves_17_sb restrict : memref<9xf32> to tensor<9xf32>
  %moves_17_d = bufferization.to_tensor %moves_17_dc restrict : memref<9xf32> to tensor<9xf32>
  %moves_17_a = tensor.cast %moves_17_s : tensor<9xf32> to tensor<?xf32>
  %moves_17_b = tensor.cast %moves_17_d : tensor<9xf32> to tensor<?xf32>
  call @differences(%moves_17_a, %moves_17_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %moves_17_sb : memref<9xf32>
  memref.dealloc %moves_17_db : memref<?xf32>
  %moves_33_n = arith.constant 99 : index
  %moves_33_x = call @input(%moves_33_n) : (index) -> tensor<?xf32>
  %moves_33_xs = tensor.cast %moves_33_x : tensor<?xf32> to tensor<99xf32>
  %moves_33_in = kiln.reshape %moves_33_xs, shape = [33, 3] : tensor<99xf32>
  %moves_33_xb = bufferization.to_buffer %moves_33_in : tensor<33x3xf32> to memref<33x3xf32>
  %moves_33_sb = memref.alloc() : memref<17xf32>
  call @moves_33(%moves_33_xb, %moves_33_sb) : (memref<33x3xf32>, memref<17xf32>) -> ()
  %moves_33_xd = memref.cast %moves_33_xb : memref<33x3xf32> to memref<?x3xf32>
  %moves_33_z0 = arith.constant 17 : index
  %moves_33_db = memref.alloc(%moves_33_z0) : memref<?xf32>
  call @moves(%moves_33_xd, %moves_33_db) : (memref<?x3xf32>, memref<?xf32>) -> ()
  %moves_33_dc = memref.cast %moves_33_db : memref<?xf32> to memref<17xf32>
  %moves_33_s = bufferization.to_tensor %moves_33_sb restrict : memref<17xf32> to tensor<17xf32>
  %moves_33_d = bufferization.to_tensor %moves_33_dc restrict : memref<17xf32> to tensor<17xf32>
  %moves_33_a = tensor.cast %moves_33_s : tensor<17xf32> to tensor<?xf32>
  %moves_33_b = tensor.cast %moves_33_d : tensor<17xf32> to tensor<?xf32>
  call @differences(%moves_33_a, %moves_33_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %moves_33_sb : memref<17xf32>
  memref.dealloc %moves_33_db : memref<?xf32>
  %moves_257_n = arith.constant 771 : index
  %moves_257_x = call @input(%moves_257_n) : (index) -> tensor<?xf32>
  %moves_257_xs = tensor.cast %moves_257_x : tensor<?xf32> to tensor<771xf32>
  %moves_257_in = kiln.reshape %moves_257_xs, shape = [257, 3] : tensor<771xf32>
  %moves_257_xb = bufferization.to_buffer %moves_257_in : tensor<257x3xf32> to memref<257x3xf32>
  %moves_257_sb = memref.alloc() : memref<129xf32>
  call @moves_257(%moves_257_xb, %moves_257_sb) : (memref<257x3xf32>, memref<129xf32>) -> ()
  %moves_257_xd = memref.cast %moves_257_xb : memref<257x3xf32> to memref<?x3xf32>
  %moves_257_z0 = arith.constant 129 : index
  %moves_257_db = memref.alloc(%moves_257_z0) : memref<?xf32>
  call @moves(%moves_257_xd, %moves_257_db) : (memref<?x3xf32>, memref<?xf32>) -> ()
  %moves_257_dc = memref.cast %moves_257_db : memref<?xf32> to memref<129xf32>
  %moves_257_s = bufferization.to_tensor %moves_257_sb restrict : memref<129xf32> to tensor<129xf32>
  %moves_257_d = bufferization.to_tensor %moves_257_dc restrict : memref<129xf32> to tensor<129xf32>
  %moves_257_a = tensor.cast %moves_257_s : tensor<129xf32> to tensor<?xf32>
  %moves_257_b = tensor.cast %moves_257_d : tensor<129xf32> to tensor<?xf32>
  call @differences(%moves_257_a, %moves_257_b) : (tensor<?xf32>, tensor<?xf32>) -> ()
  memref.dealloc %moves_257_sb : memref<129xf32>
  memref.dealloc %moves_257_db : memref<?xf32>
  return
}

module @kiln_kernels {
  func.func private @sum_batch(%x: tensor<?x10xf32>) -> tensor<10xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [0] : tensor<?x10xf32>
    return %r : tensor<10xf32>
  }

  func.func private @sum_batch_1(%x: tensor<1x10xf32>) -> tensor<10xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [0] : tensor<1x10xf32>
    return %r : tensor<10xf32>
  }

  func.func private @sum_batch_17(%x: tensor<17x10xf32>) -> tensor<10xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [0] : tensor<17x10xf32>
    return %r : tensor<10xf32>
  }

  func.func private @sum_batch_33(%x: tensor<33x10xf32>) -> tensor<10xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [0] : tensor<33x10xf32>
    return %r : tensor<10xf32>
  }

  func.func private @sum_batch_257(%x: tensor<257x10xf32>) -> tensor<10xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [0] : tensor<257x10xf32>
    return %r : tensor<10xf32>
  }

  func.func private @mean_all(%x: tensor<?x10xf32>) -> tensor<f32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce mean %x, dims = [0, 1] : tensor<?x10xf32>
    return %r : tensor<f32>
  }

  func.func private @mean_all_1(%x: tensor<1x10xf32>) -> tensor<f32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce mean %x, dims = [0, 1] : tensor<1x10xf32>
    return %r : tensor<f32>
  }

  func.func private @mean_all_17(%x: tensor<17x10xf32>) -> tensor<f32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce mean %x, dims = [0, 1] : tensor<17x10xf32>
    return %r : tensor<f32>
  }

  func.func private @mean_all_33(%x: tensor<33x10xf32>) -> tensor<f32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce mean %x, dims = [0, 1] : tensor<33x10xf32>
    return %r : tensor<f32>
  }

  func.func private @mean_all_257(%x: tensor<257x10xf32>) -> tensor<f32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce mean %x, dims = [0, 1] : tensor<257x10xf32>
    return %r : tensor<f32>
  }

  func.func private @sum_rows(%x: tensor<?x100xf32>) -> tensor<?xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [1] : tensor<?x100xf32>
    return %r : tensor<?xf32>
  }

  func.func private @sum_rows_1(%x: tensor<1x100xf32>) -> tensor<1xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [1] : tensor<1x100xf32>
    return %r : tensor<1xf32>
  }

  func.func private @sum_rows_17(%x: tensor<17x100xf32>) -> tensor<17xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [1] : tensor<17x100xf32>
    return %r : tensor<17xf32>
  }

  func.func private @sum_rows_33(%x: tensor<33x100xf32>) -> tensor<33xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [1] : tensor<33x100xf32>
    return %r : tensor<33xf32>
  }

  func.func private @sum_rows_257(%x: tensor<257x100xf32>) -> tensor<257xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [1] : tensor<257x100xf32>
    return %r : tensor<257xf32>
  }

  func.func private @mean_row_length(%x: tensor<3x?xf32>) -> tensor<3x1xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce mean %x, dims = [1] keep_dims : tensor<3x?xf32>
    return %r : tensor<3x1xf32>
  }

  func.func private @mean_row_length_1(%x: tensor<3x1xf32>) -> tensor<3x1xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce mean %x, dims = [1] keep_dims : tensor<3x1xf32>
    return %r : tensor<3x1xf32>
  }

  func.func private @mean_row_length_17(%x: tensor<3x17xf32>) -> tensor<3x1xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce mean %x, dims = [1] keep_dims : tensor<3x17xf32>
    return %r : tensor<3x1xf32>
  }

  func.func private @mean_row_length_33(%x: tensor<3x33xf32>) -> tensor<3x1xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce mean %x, dims = [1] keep_dims : tensor<3x33xf32>
    return %r : tensor<3x1xf32>
  }

  func.func private @mean_row_length_257(%x: tensor<3x257xf32>) -> tensor<3x1xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce mean %x, dims = [1] keep_dims : tensor<3x257xf32>
    return %r : tensor<3x1xf32>
  }

  func.func private @sum_outer(%x: tensor<?x3x20xf32>) -> tensor<3xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [0, 2] : tensor<?x3x20xf32>
    return %r : tensor<3xf32>
  }

  func.func private @sum_outer_1(%x: tensor<1x3x20xf32>) -> tensor<3xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [0, 2] : tensor<1x3x20xf32>
    return %r : tensor<3xf32>
  }

  func.func private @sum_outer_17(%x: tensor<17x3x20xf32>) -> tensor<3xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [0, 2] : tensor<17x3x20xf32>
    return %r : tensor<3xf32>
  }

  func.func private @sum_outer_33(%x: tensor<33x3x20xf32>) -> tensor<3xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [0, 2] : tensor<33x3x20xf32>
    return %r : tensor<3xf32>
  }

  func.func private @sum_outer_257(%x: tensor<257x3x20xf32>) -> tensor<3xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [0, 2] : tensor<257x3x20xf32>
    return %r : tensor<3xf32>
  }

  func.func private @sum_all_keep(%x: tensor<?x32xf32>) -> tensor<1x1xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [0, 1] keep_dims : tensor<?x32xf32>
    return %r : tensor<1x1xf32>
  }

  func.func private @sum_all_keep_1(%x: tensor<1x32xf32>) -> tensor<1x1xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [0, 1] keep_dims : tensor<1x32xf32>
    return %r : tensor<1x1xf32>
  }

  func.func private @sum_all_keep_17(%x: tensor<17x32xf32>) -> tensor<1x1xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [0, 1] keep_dims : tensor<17x32xf32>
    return %r : tensor<1x1xf32>
  }

  func.func private @sum_all_keep_33(%x: tensor<33x32xf32>) -> tensor<1x1xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [0, 1] keep_dims : tensor<33x32xf32>
    return %r : tensor<1x1xf32>
  }

  func.func private @sum_all_keep_257(%x: tensor<257x32xf32>) -> tensor<1x1xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce sum %x, dims = [0, 1] keep_dims : tensor<257x32xf32>
    return %r : tensor<1x1xf32>
  }

  func.func private @mean_batch_keep(%x: tensor<?x5x7xf32>) -> tensor<1x5x7xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce mean %x, dims = [0] keep_dims : tensor<?x5x7xf32>
    return %r : tensor<1x5x7xf32>
  }

  func.func private @mean_batch_keep_1(%x: tensor<1x5x7xf32>) -> tensor<1x5x7xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce mean %x, dims = [0] keep_dims : tensor<1x5x7xf32>
    return %r : tensor<1x5x7xf32>
  }

  func.func private @mean_batch_keep_17(%x: tensor<17x5x7xf32>) -> tensor<1x5x7xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce mean %x, dims = [0] keep_dims : tensor<17x5x7xf32>
    return %r : tensor<1x5x7xf32>
  }

  func.func private @mean_batch_keep_33(%x: tensor<33x5x7xf32>) -> tensor<1x5x7xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce mean %x, dims = [0] keep_dims : tensor<33x5x7xf32>
    return %r : tensor<1x5x7xf32>
  }

  func.func private @mean_batch_keep_257(%x: tensor<257x5x7xf32>) -> tensor<1x5x7xf32> attributes {kiln.kernel = "fusion"} {
    %r = kiln.reduce mean %x, dims = [0] keep_dims : tensor<257x5x7xf32>
    return %r : tensor<1x5x7xf32>
  }

  func.func private @softmax(%x: tensor<?x40xf32>) -> tensor<?x40xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64} {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : tensor<?x40xf32>
    %m = kiln.reduce max %x, dims = [1] keep_dims : tensor<?x40xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [%n, 40] : tensor<?x1xf32>
    %d = kiln.sub %x, %mb : tensor<?x40xf32>
    %e = kiln.exp %d : tensor<?x40xf32>
    %s = kiln.reduce sum %e, dims = [1] keep_dims : tensor<?x40xf32>
    %sb = kiln.broadcast_in_dim %s, dims = [0, 1], shape = [%n, 40] : tensor<?x1xf32>
    %r = kiln.div %e, %sb : tensor<?x40xf32>
    return %r : tensor<?x40xf32>
  }

  func.func private @softmax_1(%x: tensor<1x40xf32>) -> tensor<1x40xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64} {
    %m = kiln.reduce max %x, dims = [1] keep_dims : tensor<1x40xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [1, 40] : tensor<1x1xf32>
    %d = kiln.sub %x, %mb : tensor<1x40xf32>
    %e = kiln.exp %d : tensor<1x40xf32>
    %s = kiln.reduce sum %e, dims = [1] keep_dims : tensor<1x40xf32>
    %sb = kiln.broadcast_in_dim %s, dims = [0, 1], shape = [1, 40] : tensor<1x1xf32>
    %r = kiln.div %e, %sb : tensor<1x40xf32>
    return %r : tensor<1x40xf32>
  }

  func.func private @softmax_17(%x: tensor<17x40xf32>) -> tensor<17x40xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64} {
    %m = kiln.reduce max %x, dims = [1] keep_dims : tensor<17x40xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [17, 40] : tensor<17x1xf32>
    %d = kiln.sub %x, %mb : tensor<17x40xf32>
    %e = kiln.exp %d : tensor<17x40xf32>
    %s = kiln.reduce sum %e, dims = [1] keep_dims : tensor<17x40xf32>
    %sb = kiln.broadcast_in_dim %s, dims = [0, 1], shape = [17, 40] : tensor<17x1xf32>
    %r = kiln.div %e, %sb : tensor<17x40xf32>
    return %r : tensor<17x40xf32>
  }

  func.func private @softmax_33(%x: tensor<33x40xf32>) -> tensor<33x40xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64} {
    %m = kiln.reduce max %x, dims = [1] keep_dims : tensor<33x40xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [33, 40] : tensor<33x1xf32>
    %d = kiln.sub %x, %mb : tensor<33x40xf32>
    %e = kiln.exp %d : tensor<33x40xf32>
    %s = kiln.reduce sum %e, dims = [1] keep_dims : tensor<33x40xf32>
    %sb = kiln.broadcast_in_dim %s, dims = [0, 1], shape = [33, 40] : tensor<33x1xf32>
    %r = kiln.div %e, %sb : tensor<33x40xf32>
    return %r : tensor<33x40xf32>
  }

  func.func private @softmax_257(%x: tensor<257x40xf32>) -> tensor<257x40xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64} {
    %m = kiln.reduce max %x, dims = [1] keep_dims : tensor<257x40xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [257, 40] : tensor<257x1xf32>
    %d = kiln.sub %x, %mb : tensor<257x40xf32>
    %e = kiln.exp %d : tensor<257x40xf32>
    %s = kiln.reduce sum %e, dims = [1] keep_dims : tensor<257x40xf32>
    %sb = kiln.broadcast_in_dim %s, dims = [0, 1], shape = [257, 40] : tensor<257x1xf32>
    %r = kiln.div %e, %sb : tensor<257x40xf32>
    return %r : tensor<257x40xf32>
  }

  func.func private @layer_norm(%x: tensor<?x40xf32>) -> tensor<?x40xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64} {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : tensor<?x40xf32>
    %m = kiln.reduce mean %x, dims = [1] keep_dims : tensor<?x40xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [%n, 40] : tensor<?x1xf32>
    %c = kiln.sub %x, %mb : tensor<?x40xf32>
    %sq = kiln.mul %c, %c : tensor<?x40xf32>
    %v = kiln.reduce mean %sq, dims = [1] keep_dims : tensor<?x40xf32>
    %e = kiln.constant dense<1.0e-5> : tensor<f32>
    %eps = kiln.broadcast_in_dim %e, dims = [], shape = [%n, 1] : tensor<f32>
    %ve = kiln.add %v, %eps : tensor<?x1xf32>
    %rs = kiln.rsqrt %ve : tensor<?x1xf32>
    %rb = kiln.broadcast_in_dim %rs, dims = [0, 1], shape = [%n, 40] : tensor<?x1xf32>
    %r = kiln.mul %c, %rb : tensor<?x40xf32>
    return %r : tensor<?x40xf32>
  }

  func.func private @layer_norm_1(%x: tensor<1x40xf32>) -> tensor<1x40xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64} {
    %m = kiln.reduce mean %x, dims = [1] keep_dims : tensor<1x40xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [1, 40] : tensor<1x1xf32>
    %c = kiln.sub %x, %mb : tensor<1x40xf32>
    %sq = kiln.mul %c, %c : tensor<1x40xf32>
    %v = kiln.reduce mean %sq, dims = [1] keep_dims : tensor<1x40xf32>
    %e = kiln.constant dense<1.0e-5> : tensor<f32>
    %eps = kiln.broadcast_in_dim %e, dims = [], shape = [1, 1] : tensor<f32>
    %ve = kiln.add %v, %eps : tensor<1x1xf32>
    %rs = kiln.rsqrt %ve : tensor<1x1xf32>
    %rb = kiln.broadcast_in_dim %rs, dims = [0, 1], shape = [1, 40] : tensor<1x1xf32>
    %r = kiln.mul %c, %rb : tensor<1x40xf32>
    return %r : tensor<1x40xf32>
  }

  func.func private @layer_norm_17(%x: tensor<17x40xf32>) -> tensor<17x40xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64} {
    %m = kiln.reduce mean %x, dims = [1] keep_dims : tensor<17x40xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [17, 40] : tensor<17x1xf32>
    %c = kiln.sub %x, %mb : tensor<17x40xf32>
    %sq = kiln.mul %c, %c : tensor<17x40xf32>
    %v = kiln.reduce mean %sq, dims = [1] keep_dims : tensor<17x40xf32>
    %e = kiln.constant dense<1.0e-5> : tensor<f32>
    %eps = kiln.broadcast_in_dim %e, dims = [], shape = [17, 1] : tensor<f32>
    %ve = kiln.add %v, %eps : tensor<17x1xf32>
    %rs = kiln.rsqrt %ve : tensor<17x1xf32>
    %rb = kiln.broadcast_in_dim %rs, dims = [0, 1], shape = [17, 40] : tensor<17x1xf32>
    %r = kiln.mul %c, %rb : tensor<17x40xf32>
    return %r : tensor<17x40xf32>
  }

  func.func private @layer_norm_33(%x: tensor<33x40xf32>) -> tensor<33x40xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64} {
    %m = kiln.reduce mean %x, dims = [1] keep_dims : tensor<33x40xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [33, 40] : tensor<33x1xf32>
    %c = kiln.sub %x, %mb : tensor<33x40xf32>
    %sq = kiln.mul %c, %c : tensor<33x40xf32>
    %v = kiln.reduce mean %sq, dims = [1] keep_dims : tensor<33x40xf32>
    %e = kiln.constant dense<1.0e-5> : tensor<f32>
    %eps = kiln.broadcast_in_dim %e, dims = [], shape = [33, 1] : tensor<f32>
    %ve = kiln.add %v, %eps : tensor<33x1xf32>
    %rs = kiln.rsqrt %ve : tensor<33x1xf32>
    %rb = kiln.broadcast_in_dim %rs, dims = [0, 1], shape = [33, 40] : tensor<33x1xf32>
    %r = kiln.mul %c, %rb : tensor<33x40xf32>
    return %r : tensor<33x40xf32>
  }

  func.func private @layer_norm_257(%x: tensor<257x40xf32>) -> tensor<257x40xf32> attributes {kiln.kernel = "fusion", kiln.row_dims = 1 : i64} {
    %m = kiln.reduce mean %x, dims = [1] keep_dims : tensor<257x40xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0, 1], shape = [257, 40] : tensor<257x1xf32>
    %c = kiln.sub %x, %mb : tensor<257x40xf32>
    %sq = kiln.mul %c, %c : tensor<257x40xf32>
    %v = kiln.reduce mean %sq, dims = [1] keep_dims : tensor<257x40xf32>
    %e = kiln.constant dense<1.0e-5> : tensor<f32>
    %eps = kiln.broadcast_in_dim %e, dims = [], shape = [257, 1] : tensor<f32>
    %ve = kiln.add %v, %eps : tensor<257x1xf32>
    %rs = kiln.rsqrt %ve : tensor<257x1xf32>
    %rb = kiln.broadcast_in_dim %rs, dims = [0, 1], shape = [257, 40] : tensor<257x1xf32>
    %r = kiln.mul %c, %rb : tensor<257x40xf32>
    return %r : tensor<257x40xf32>
  }

  func.func private @moves(%x: tensor<?x3xf32>) -> tensor<?xf32> attributes {kiln.kernel = "fusion"} {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : tensor<?x3xf32>
    %c3 = arith.constant 3 : index
    %n3 = arith.muli %n, %c3 : index
    %t = kiln.transpose %x, permutation = [1, 0] : tensor<?x3xf32>
    %f = kiln.reshape %t, shape = [%n3] : tensor<3x?xf32>
    %c = kiln.concat(%f, %f) dim = 0 : tensor<?xf32>, tensor<?xf32>
    %i = kiln.iota dim = 0, shape = [%n], dtype = i64
    %g = kiln.gather %c[%i], dim = 0 : tensor<?xf32>, tensor<?xi64>
    %r = kiln.slice %g, start = [0], limit = [%n], stride = [2] : tensor<?xf32>
    return %r : tensor<?xf32>
  }

  func.func private @moves_1(%x: tensor<1x3xf32>) -> tensor<1xf32> attributes {kiln.kernel = "fusion"} {
    %t = kiln.transpose %x, permutation = [1, 0] : tensor<1x3xf32>
    %f = kiln.reshape %t, shape = [3] : tensor<3x1xf32>
    %c = kiln.concat(%f, %f) dim = 0 : tensor<3xf32>, tensor<3xf32>
    %i = kiln.iota dim = 0, shape = [1], dtype = i64
    %g = kiln.gather %c[%i], dim = 0 : tensor<6xf32>, tensor<1xi64>
    %r = kiln.slice %g, start = [0], limit = [1], stride = [2] : tensor<1xf32>
    return %r : tensor<1xf32>
  }

  func.func private @moves_17(%x: tensor<17x3xf32>) -> tensor<9xf32> attributes {kiln.kernel = "fusion"} {
    %t = kiln.transpose %x, permutation = [1, 0] : tensor<17x3xf32>
    %f = kiln.reshape %t, shape = [51] : tensor<3x17xf32>
    %c = kiln.concat(%f, %f) dim = 0 : tensor<51xf32>, tensor<51xf32>
    %i = kiln.iota dim = 0, shape = [17], dtype = i64
    %g = kiln.gather %c[%i], dim = 0 : tensor<102xf32>, tensor<17xi64>
    %r = kiln.slice %g, start = [0], limit = [17], stride = [2] : tensor<17xf32>
    return %r : tensor<9xf32>
  }

  func.func private @moves_33(%x: tensor<33x3xf32>) -> tensor<17xf32> attributes {kiln.kernel = "fusion"} {
    %t = kiln.transpose %x, permutation = [1, 0] : tensor<33x3xf32>
    %f = kiln.reshape %t, shape = [99] : tensor<3x33xf32>
    %c = kiln.concat(%f, %f) dim = 0 : tensor<99xf32>, tensor<99xf32>
    %i = kiln.iota dim = 0, shape = [33], dtype = i64
    %g = kiln.gather %c[%i], dim = 0 : tensor<198xf32>, tensor<33xi64>
    %r = kiln.slice %g, start = [0], limit = [33], stride = [2] : tensor<33xf32>
    return %r : tensor<17xf32>
  }

  func.func private @moves_257(%x: tensor<257x3xf32>) -> tensor<129xf32> attributes {kiln.kernel = "fusion"} {
    %t = kiln.transpose %x, permutation = [1, 0] : tensor<257x3xf32>
    %f = kiln.reshape %t, shape = [771] : tensor<3x257xf32>
    %c = kiln.concat(%f, %f) dim = 0 : tensor<771xf32>, tensor<771xf32>
    %i = kiln.iota dim = 0, shape = [257], dtype = i64
    %g = kiln.gather %c[%i], dim = 0 : tensor<1542xf32>, tensor<257xi64>
    %r = kiln.slice %g, start = [0], limit = [257], stride = [2] : tensor<257xf32>
    return %r : tensor<129xf32>
  }
}
