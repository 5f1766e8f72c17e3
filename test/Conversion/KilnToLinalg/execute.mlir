// RUN: kiln-opt %s --kiln-convert-to-linalg \
// RUN:   | kiln-opt --linalg-fuse-elementwise-ops \
// RUN:       --one-shot-bufferize="bufferize-function-boundaries" \
// RUN:       --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --lower-affine \
// RUN:       --finalize-memref-to-llvm --convert-math-to-funcs --convert-math-to-llvm \
// RUN:       --convert-math-to-libm --convert-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%shlibdir/libmlir_runner_utils.so,%shlibdir/libmlir_c_runner_utils.so \
// RUN:   | FileCheck %s

// Numerics of kiln-convert-to-linalg: kiln programs lowered through upstream
// passes to LLVM and run; the values are the eager kernels' (the reference
// interpreter's) for the same ops.

func.func private @printMemrefF32(tensor<*xf32>)
func.func private @printMemrefI64(tensor<*xi64>)

func.func @print(%x: tensor<2x3xf32>) {
  %u = tensor.cast %x : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

// Softmax over rows, made of reduce, broadcast, sub, exp and div.
// CHECK-LABEL: data =
// CHECK-NEXT:  [0.0900306,   0.244728,   0.665241],
// CHECK-NEXT:  [0.333333,   0.333333,   0.333333]
func.func @softmax(%x: tensor<2x3xf32>) {
  %m = kiln.reduce max %x, dims = [1] : tensor<2x3xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0], shape = [2, 3] : tensor<2xf32>
  %d = kiln.sub %x, %mb : tensor<2x3xf32>
  %e = kiln.exp %d : tensor<2x3xf32>
  %s = kiln.reduce sum %e, dims = [1] keep_dims : tensor<2x3xf32>
  %sb = kiln.broadcast_in_dim %s, dims = [0, 1], shape = [2, 3] : tensor<2x1xf32>
  %p = kiln.div %e, %sb : tensor<2x3xf32>
  call @print(%p) : (tensor<2x3xf32>) -> ()
  return
}

// x where x > 0, else x truncated toward zero by a round trip through i32
// (convert and select), then halved in f16 (exact here).
// CHECK-LABEL: data =
// CHECK-NEXT:  [-0.5,   0.25,   0],
// CHECK-NEXT:  [2,   -2,   0.5]
func.func @select_convert(%x: tensor<2x3xf32>) {
  %zero = kiln.constant dense<0.0> : tensor<2x3xf32>
  %pos = kiln.compare gt, %x, %zero : tensor<2x3xf32>
  %i = kiln.convert %x : tensor<2x3xf32> to i32
  %t = kiln.convert %i : tensor<2x3xi32> to f32
  %v = kiln.select %pos, %x, %t : tensor<2x3xi1>, tensor<2x3xf32>
  %h = kiln.convert %v : tensor<2x3xf32> to f16
  %half = kiln.constant dense<0.5> : tensor<2x3xf16>
  %hv = kiln.mul %h, %half : tensor<2x3xf16>
  %back = kiln.convert %hv : tensor<2x3xf16> to f32
  call @print(%back) : (tensor<2x3xf32>) -> ()
  return
}

// gelu (erf form), sigmoid, and max/min propagating NaN (from either side).
// CHECK-LABEL: data =
// CHECK-NEXT:  [-0.158655,   0,   0.841345],
// CHECK-NEXT:  [0.5,   {{-?}}nan,   {{-?}}nan]
func.func @activations() {
  %x = kiln.constant dense<[-1.0, 0.0, 1.0]> : tensor<3xf32>
  %g = kiln.gelu %x : tensor<3xf32>
  %n = kiln.constant dense<[0.0, 0x7FC00000, 1.0]> : tensor<3xf32>
  %sig = kiln.sigmoid %n : tensor<3xf32>
  %nan = kiln.constant dense<[1.0, 2.0, 0x7FC00000]> : tensor<3xf32>
  %mx = kiln.max %sig, %nan : tensor<3xf32>
  %mn = kiln.min %mx, %sig : tensor<3xf32>
  %both = kiln.concat(%g, %mn) dim = 0 : tensor<3xf32>, tensor<3xf32>
  %r = kiln.reshape %both, shape = [2, 3] : tensor<6xf32>
  call @print(%r) : (tensor<2x3xf32>) -> ()
  return
}

// Integer pow (negative exponents too) and integer division toward zero.
// CHECK-LABEL: data =
// CHECK-NEXT:  [8,  1,  -1,  0,  1,  -3]
func.func @integers() {
  %a = kiln.constant dense<[2, 1, -1, 3, -7, -7]> : tensor<6xi64>
  %b = kiln.constant dense<[3, -2, -3, -1, 0, 1]> : tensor<6xi64>
  %p = kiln.pow %a, %b : tensor<6xi64>
  %two = kiln.constant dense<[1, 1, 1, 1, 1, 2]> : tensor<6xi64>
  %q = kiln.div %p, %two : tensor<6xi64>
  %u = tensor.cast %q : tensor<6xi64> to tensor<*xi64>
  call @printMemrefI64(%u) : (tensor<*xi64>) -> ()
  return
}

// Data movement on a 3x4 iota: a strided slice of its transpose, then column 1
// of a gather (index 7 clamps to 2); below, the column sums of the gather.
// CHECK-LABEL: data =
// CHECK-NEXT:  [1,   9,   9],
// CHECK-NEXT:  [16,   19,   22]
func.func @data_movement() {
  %x = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]> : tensor<3x4xf32>
  %t = kiln.transpose %x, permutation = [1, 0] : tensor<3x4xf32>
  %s = kiln.slice %t, start = [1, 0], limit = [2, 3], stride = [1, 2] : tensor<4x3xf32>
  %ids = kiln.constant dense<[2, 0, 7]> : tensor<3xi32>
  %g = kiln.gather %x[%ids], dim = 0 : tensor<3x4xf32>, tensor<3xi32>
  %col = kiln.slice %g, start = [0, 1], limit = [3, 2], stride = [1, 1] : tensor<3x4xf32>
  %row = kiln.reshape %col, shape = [3] : tensor<3x1xf32>
  %first = kiln.reshape %s, shape = [2] : tensor<1x2xf32>
  %one = kiln.slice %row, start = [0], limit = [1], stride = [1] : tensor<3xf32>
  %top = kiln.concat(%first, %one) dim = 0 : tensor<2xf32>, tensor<1xf32>
  %bottom = kiln.reduce sum %g, dims = [0] : tensor<3x4xf32>
  %b3 = kiln.slice %bottom, start = [0], limit = [3], stride = [1] : tensor<4xf32>
  %both = kiln.concat(%top, %b3) dim = 0 : tensor<3xf32>, tensor<3xf32>
  %r = kiln.reshape %both, shape = [2, 3] : tensor<6xf32>
  call @print(%r) : (tensor<2x3xf32>) -> ()
  return
}

// scatter_add adds in index order, one float32 rounding per add, as the eager
// kernel: 1e8 - 1e8 + 1 = 1 at index 0 (another order would give 0), with a `?`
// size and `?` updates, as a batch's cross-entropy backward. Then 2x2 indices into
// 3 rows: rows [0 1 2] and [3 4 5] land at 1 and 0, both again at 2 (index 9 clamps
// to 2): column 1 of the result is 4, 1, 1 + 4.
// CHECK-LABEL: data =
// CHECK-NEXT:  [1,   0,   0],
// CHECK-NEXT:  [4,   1,   5]
func.func @scatter(%n: index) {
  %u = kiln.constant dense<[1.0e8, -1.0e8, 1.0]> : tensor<3xf32>
  %i = kiln.constant dense<[0, 0, 0]> : tensor<3xi64>
  %ud = tensor.cast %u : tensor<3xf32> to tensor<?xf32>
  %id = tensor.cast %i : tensor<3xi64> to tensor<?xi64>
  %s = kiln.scatter_add %ud[%id], dim = 0, size = %n : tensor<?xf32>, tensor<?xi64>
  %ss = tensor.cast %s : tensor<?xf32> to tensor<3xf32>
  %rows = kiln.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %ri = kiln.constant dense<[[1, 0], [2, 9]]> : tensor<2x2xi32>
  %flat = kiln.reshape %rows, shape = [6] : tensor<2x3xf32>
  %twice = kiln.concat(%flat, %flat) dim = 0 : tensor<6xf32>, tensor<6xf32>
  %u2 = kiln.reshape %twice, shape = [2, 2, 3] : tensor<12xf32>
  %r2 = kiln.scatter_add %u2[%ri], dim = 0, size = 3 : tensor<2x2x3xf32>, tensor<2x2xi32>
  %col = kiln.slice %r2, start = [0, 1], limit = [3, 2], stride = [1, 1] : tensor<3x3xf32>
  %c = kiln.reshape %col, shape = [3] : tensor<3x1xf32>
  %both = kiln.concat(%ss, %c) dim = 0 : tensor<3xf32>, tensor<3xf32>
  %r = kiln.reshape %both, shape = [2, 3] : tensor<6xf32>
  call @print(%r) : (tensor<2x3xf32>) -> ()
  return
}

func.func @main() {
  %x = kiln.constant dense<[[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]> : tensor<2x3xf32>
  call @softmax(%x) : (tensor<2x3xf32>) -> ()
  %y = kiln.constant dense<[[-1.5, 0.5, -0.25], [4.0, -4.9, 1.0]]> : tensor<2x3xf32>
  call @select_convert(%y) : (tensor<2x3xf32>) -> ()
  call @activations() : () -> ()
  call @integers() : () -> ()
  call @data_movement() : () -> ()
  %c3 = arith.constant 3 : index
  call @scatter(%c3) : (index) -> ()
  return
}
