// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// One case per verifier error of the kiln dialect. Cases the custom form cannot
// express use the generic form.

//===----------------------------------------------------------------------===//
// Constant
//===----------------------------------------------------------------------===//

func.func @constant_sparse() -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.constant' op 'value' must be a dense or dense_resource elements attribute}}
  %0 = kiln.constant sparse<[[1]], [2.0]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @constant_element_type() -> tensor<4xui8> {
  // expected-error@+1 {{'kiln.constant' op result #0 must be ranked tensor of f32, f64, f16, bf16, i1, i32 or i64 values, but got 'tensor<4xui8>'}}
  %0 = kiln.constant dense<1> : tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

func.func @constant_result_type() -> tensor<3xf32> {
  // expected-error@+1 {{'kiln.constant' op result 0 has type 'tensor<3xf32>' but its operands and attributes give 'tensor<4xf32>'}}
  %0 = "kiln.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

// -----

func.func @unary_float_only(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'kiln.exp' op operand #0 must be ranked tensor of f32, f64, f16 or bf16 values, but got 'tensor<4xi32>'}}
  %0 = kiln.exp %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @unary_result_type(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error@+1 {{'kiln.neg' op requires the same type for all operands and results}}
  %0 = "kiln.neg"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @binary_shape(%x: tensor<4x3xf32>, %y: tensor<4x2xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'kiln.add' op operand 'rhs' has shape [4, 2] but operand 'lhs' has shape [4, 3]}}
  %0 = kiln.add %x, %y : tensor<4x3xf32>, tensor<4x2xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @binary_rank(%x: tensor<4x3xf32>, %y: tensor<12xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'kiln.mul' op operand 'rhs' has shape [12] but operand 'lhs' has shape [4, 3]}}
  %0 = kiln.mul %x, %y : tensor<4x3xf32>, tensor<12xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @binary_dynamic_mismatch(%x: tensor<?x3xf32>, %y: tensor<4x2xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'kiln.sub' op operand 'rhs' has shape [4, 2] but operand 'lhs' has shape [?, 3]}}
  %0 = kiln.sub %x, %y : tensor<?x3xf32>, tensor<4x2xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @binary_element_type(%x: tensor<4xf32>, %y: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.max' op operand 'rhs' has element type 'f16' but operand 'lhs' has element type 'f32'}}
  %0 = kiln.max %x, %y : tensor<4xf32>, tensor<4xf16>
  return %0 : tensor<4xf32>
}

// -----

func.func @binary_unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error@+1 {{'kiln.add' op operand 'lhs' must be a ranked tensor, but got 'tensor<*xf32>'}}
  %0 = kiln.add %x, %x : tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @logic_on_floats(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.and' op operand #0 must be ranked tensor of i1, i32 or i64 values, but got 'tensor<4xf32>'}}
  %0 = kiln.and %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @binary_result_type(%x: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error@+1 {{'kiln.add' op result 0 has type 'tensor<5xf32>' but its operands and attributes give 'tensor<4xf32>'}}
  %0 = "kiln.add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @compare_shape(%x: tensor<4x3xf32>, %y: tensor<3x4xf32>) -> tensor<4x3xi1> {
  // expected-error@+1 {{'kiln.compare' op operand 'rhs' has shape [3, 4] but operand 'lhs' has shape [4, 3]}}
  %0 = kiln.compare lt, %x, %y : tensor<4x3xf32>, tensor<3x4xf32>
  return %0 : tensor<4x3xi1>
}

// -----

func.func @compare_element_type(%x: tensor<4xi32>, %y: tensor<4xi64>) -> tensor<4xi1> {
  // expected-error@+1 {{'kiln.compare' op operand 'rhs' has element type 'i64' but operand 'lhs' has element type 'i32'}}
  %0 = kiln.compare eq, %x, %y : tensor<4xi32>, tensor<4xi64>
  return %0 : tensor<4xi1>
}

// -----

func.func @select_condition_type(%m: tensor<4xi32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.select' op operand #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xi32>'}}
  %0 = kiln.select %m, %x, %x : tensor<4xi32>, tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @select_condition_shape(%m: tensor<4xi1>, %x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'kiln.select' op operand 'cond' has shape [4] but operand 'a' has shape [4, 3]}}
  %0 = kiln.select %m, %x, %x : tensor<4xi1>, tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @select_branch_shape(%m: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<5xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.select' op operand 'b' has shape [5] but operand 'a' has shape [4]}}
  %0 = kiln.select %m, %x, %y : tensor<4xi1>, tensor<4xf32>, tensor<5xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @select_branch_element_type(%m: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xi32>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.select' op operand 'b' has element type 'i32' but operand 'a' has element type 'f32'}}
  %0 = kiln.select %m, %x, %y : tensor<4xi1>, tensor<4xf32>, tensor<4xi32>
  return %0 : tensor<4xf32>
}

// -----

func.func @convert_dtype(%x: tensor<4xf32>) -> tensor<4xindex> {
  // expected-error@+1 {{'kiln.convert' op 'dtype' must be f32, f64, f16, bf16, i1, i32 or i64, but got 'index'}}
  %0 = kiln.convert %x : tensor<4xf32> to index
  return %0 : tensor<4xindex>
}

// -----

func.func @convert_result_shape(%x: tensor<4xf32>) -> tensor<5xf16> {
  // expected-error@+1 {{'kiln.convert' op result 0 has type 'tensor<5xf16>' but its operands and attributes give 'tensor<4xf16>'}}
  %0 = "kiln.convert"(%x) <{dtype = f16}> : (tensor<4xf32>) -> tensor<5xf16>
  return %0 : tensor<5xf16>
}

//===----------------------------------------------------------------------===//
// broadcast_in_dim
//===----------------------------------------------------------------------===//

// -----

func.func @broadcast_dims_length(%x: tensor<3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'kiln.broadcast_in_dim' op 'dims' has 2 entries but operand 'x' with shape [3] has rank 1}}
  %0 = kiln.broadcast_in_dim %x, dims = [0, 1], shape = [4, 3] : tensor<3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @broadcast_dims_range(%x: tensor<3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'kiln.broadcast_in_dim' op 'dims' entry 2 is out of range for result shape [4, 3]}}
  %0 = kiln.broadcast_in_dim %x, dims = [2], shape = [4, 3] : tensor<3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @broadcast_dims_order(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  // expected-error@+1 {{'kiln.broadcast_in_dim' op 'dims' [1, 0] is not strictly increasing}}
  %0 = kiln.broadcast_in_dim %x, dims = [1, 0], shape = [3, 3] : tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @broadcast_size(%x: tensor<2xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'kiln.broadcast_in_dim' op operand 'x' with shape [2] cannot broadcast dimension 0 to dimension 1 of result shape [4, 3]}}
  %0 = kiln.broadcast_in_dim %x, dims = [1], shape = [4, 3] : tensor<2xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @broadcast_negative_size(%x: tensor<3xf32>) -> tensor<?x3xf32> {
  // expected-error@+1 {{'kiln.broadcast_in_dim' op 'shape' [-4, 3] has a negative size}}
  %0 = kiln.broadcast_in_dim %x, dims = [1], shape = [-4, 3] : tensor<3xf32>
  return %0 : tensor<?x3xf32>
}

//===----------------------------------------------------------------------===//
// reshape, transpose
//===----------------------------------------------------------------------===//

// -----

func.func @reshape_count(%x: tensor<4x3xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{'kiln.reshape' op 'shape' [2, 5] has 10 elements but operand 'x' with shape [4, 3] has 12}}
  %0 = kiln.reshape %x, shape = [2, 5] : tensor<4x3xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @reshape_negative(%x: tensor<4x3xf32>) -> tensor<12xf32> {
  // expected-error@+1 {{'kiln.reshape' op 'shape' [-1] has a negative size}}
  %0 = kiln.reshape %x, shape = [-1] : tensor<4x3xf32>
  return %0 : tensor<12xf32>
}

// -----

func.func @transpose_length(%x: tensor<4x3xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'kiln.transpose' op 'permutation' has 3 entries but operand 'x' with shape [4, 3] has rank 2}}
  %0 = kiln.transpose %x, permutation = [1, 0, 2] : tensor<4x3xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @transpose_range(%x: tensor<4x3xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'kiln.transpose' op 'permutation' entry 2 is out of range for operand 'x' with shape [4, 3]}}
  %0 = kiln.transpose %x, permutation = [2, 0] : tensor<4x3xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @transpose_duplicate(%x: tensor<4x3xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{'kiln.transpose' op 'permutation' [0, 0] repeats dimension 0}}
  %0 = kiln.transpose %x, permutation = [0, 0] : tensor<4x3xf32>
  return %0 : tensor<4x4xf32>
}

//===----------------------------------------------------------------------===//
// slice
//===----------------------------------------------------------------------===//

// -----

func.func @slice_length(%x: tensor<4x3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'kiln.slice' op 'start' has 1 entries but operand 'x' with shape [4, 3] has rank 2}}
  %0 = kiln.slice %x, start = [0], limit = [2, 3], stride = [1, 1] : tensor<4x3xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @slice_negative_start(%x: tensor<4x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'kiln.slice' op 'start' [-1, 0] is negative in dimension 0}}
  %0 = kiln.slice %x, start = [-1, 0], limit = [2, 3], stride = [1, 1] : tensor<4x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @slice_start_after_limit(%x: tensor<4x3xf32>) -> tensor<0x3xf32> {
  // expected-error@+1 {{'kiln.slice' op 'start' [3, 0] exceeds 'limit' [2, 3] in dimension 0}}
  %0 = kiln.slice %x, start = [3, 0], limit = [2, 3], stride = [1, 1] : tensor<4x3xf32>
  return %0 : tensor<0x3xf32>
}

// -----

func.func @slice_limit_out_of_bounds(%x: tensor<4x3xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{'kiln.slice' op 'limit' [4, 4] exceeds operand 'x' with shape [4, 3] in dimension 1}}
  %0 = kiln.slice %x, start = [0, 0], limit = [4, 4], stride = [1, 1] : tensor<4x3xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @slice_stride(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'kiln.slice' op 'stride' [1, 0] is not positive in dimension 1}}
  %0 = kiln.slice %x, start = [0, 0], limit = [4, 3], stride = [1, 0] : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

//===----------------------------------------------------------------------===//
// concat
//===----------------------------------------------------------------------===//

// -----

func.func @concat_empty() -> tensor<0xf32> {
  // expected-error@+1 {{'kiln.concat' op needs at least one operand}}
  %0 = "kiln.concat"() <{dim = 0 : i64}> : () -> tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

func.func @concat_dim(%x: tensor<4x3xf32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{'kiln.concat' op 'dim' 2 is out of range for operand 'xs[0]' with shape [4, 3]}}
  %0 = kiln.concat(%x, %x) dim = 2 : tensor<4x3xf32>, tensor<4x3xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @concat_rank(%x: tensor<4x3xf32>, %y: tensor<4xf32>) -> tensor<8x3xf32> {
  // expected-error@+1 {{'kiln.concat' op operand 'xs[1]' has shape [4] but operand 'xs[0]' has shape [4, 3]: only dimension 0 may differ}}
  %0 = kiln.concat(%x, %y) dim = 0 : tensor<4x3xf32>, tensor<4xf32>
  return %0 : tensor<8x3xf32>
}

// -----

func.func @concat_other_dim(%x: tensor<4x3xf32>, %y: tensor<2x2xf32>) -> tensor<6x3xf32> {
  // expected-error@+1 {{'kiln.concat' op operand 'xs[1]' has shape [2, 2] but operand 'xs[0]' has shape [4, 3]: only dimension 0 may differ}}
  %0 = kiln.concat(%x, %y) dim = 0 : tensor<4x3xf32>, tensor<2x2xf32>
  return %0 : tensor<6x3xf32>
}

// -----

func.func @concat_element_type(%x: tensor<4x3xf32>, %y: tensor<4x3xi32>) -> tensor<8x3xf32> {
  // expected-error@+1 {{'kiln.concat' op operand 'xs[1]' has element type 'i32' but operand 'xs[0]' has element type 'f32'}}
  %0 = kiln.concat(%x, %y) dim = 0 : tensor<4x3xf32>, tensor<4x3xi32>
  return %0 : tensor<8x3xf32>
}

//===----------------------------------------------------------------------===//
// reduce
//===----------------------------------------------------------------------===//

// -----

func.func @reduce_dim_range(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.reduce' op 'dims' entry 2 is out of range for operand 'x' with shape [4, 3]}}
  %0 = kiln.reduce sum %x, dims = [2] : tensor<4x3xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_dim_duplicate(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.reduce' op 'dims' [1, 1] repeats dimension 1}}
  %0 = kiln.reduce max %x, dims = [1, 1] : tensor<4x3xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_dims_order(%x: tensor<4x3xf32>) -> tensor<f32> {
  // expected-error@+1 {{'kiln.reduce' op 'dims' [1, 0] is not in increasing order}}
  %0 = kiln.reduce sum %x, dims = [1, 0] : tensor<4x3xf32>
  return %0 : tensor<f32>
}

// -----

func.func @reduce_max_empty(%x: tensor<2x0x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'kiln.reduce' op kind 'max' cannot reduce dimension 1 of size 0 of operand 'x' with shape [2, 0, 3] (max and min have no identity)}}
  %0 = kiln.reduce max %x, dims = [1] : tensor<2x0x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @reduce_mean_int(%x: tensor<4x3xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'kiln.reduce' op kind 'mean' needs a float element type, but operand 'x' has element type 'i32'}}
  %0 = kiln.reduce mean %x, dims = [1] : tensor<4x3xi32>
  return %0 : tensor<4xi32>
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

// -----

func.func @matmul_rank(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<f32> {
  // expected-error@+1 {{'kiln.matmul' op operand 'a' has shape [3] but needs rank 2 or more}}
  %0 = kiln.matmul %a, %b : tensor<3xf32>, tensor<3xf32>
  return %0 : tensor<f32>
}

// -----

func.func @matmul_ranks_differ(%a: tensor<2x4x3xf32>, %b: tensor<3x5xf32>) -> tensor<2x4x5xf32> {
  // expected-error@+1 {{'kiln.matmul' op operand 'b' has shape [3, 5] but operand 'a' has shape [2, 4, 3]: ranks differ}}
  %0 = kiln.matmul %a, %b : tensor<2x4x3xf32>, tensor<3x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// -----

func.func @matmul_batch(%a: tensor<2x4x3xf32>, %b: tensor<3x3x5xf32>) -> tensor<2x4x5xf32> {
  // expected-error@+1 {{'kiln.matmul' op operand 'b' has shape [3, 3, 5] but operand 'a' has shape [2, 4, 3]: batch dimensions differ}}
  %0 = kiln.matmul %a, %b : tensor<2x4x3xf32>, tensor<3x3x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// -----

func.func @conv2d_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error@+1 {{'kiln.conv2d' op operand 'bias' has shape [8] but the convolution has 16 output channels}}
  %0 = kiln.conv2d %x, %w bias(%b : tensor<8xf32>), stride = [1, 1], padding = [1, 1, 1, 1],
         dilation = [1, 1], groups = 1 : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// -----

func.func @addmm_bias(%a: tensor<8x3xf32>, %b: tensor<3x5xf32>, %c: tensor<4xf32>) -> tensor<8x5xf32> {
  // expected-error@+1 {{'kiln.addmm' op operand 'bias' has shape [4] but the product has 5 columns}}
  %0 = kiln.addmm %a, %b, %c : tensor<8x3xf32>, tensor<3x5xf32>, tensor<4xf32>
  return %0 : tensor<8x5xf32>
}

// -----

func.func @addmm_rank(%a: tensor<2x8x3xf32>, %b: tensor<3x5xf32>, %c: tensor<5xf32>) -> tensor<8x5xf32> {
  // expected-error@+1 {{'kiln.addmm' op operand 'a' has shape [2, 8, 3] but needs rank 2}}
  %0 = kiln.addmm %a, %b, %c : tensor<2x8x3xf32>, tensor<3x5xf32>, tensor<5xf32>
  return %0 : tensor<8x5xf32>
}

// -----

func.func @matmul_contraction(%a: tensor<8x3xf32>, %b: tensor<4x5xf32>) -> tensor<8x5xf32> {
  // expected-error@+1 {{'kiln.matmul' op operand 'b' has shape [4, 5] but operand 'a' has shape [8, 3]: contraction dimensions differ}}
  %0 = kiln.matmul %a, %b : tensor<8x3xf32>, tensor<4x5xf32>
  return %0 : tensor<8x5xf32>
}

// -----

func.func @matmul_contraction_transposed(%a: tensor<8x3xf32>, %b: tensor<3x5xf32>) -> tensor<8x3xf32> {
  // expected-error@+1 {{'kiln.matmul' op operand 'b' has shape [3, 5] but operand 'a' has shape [8, 3]: contraction dimensions differ}}
  %0 = kiln.matmul %a, %b transpose_b : tensor<8x3xf32>, tensor<3x5xf32>
  return %0 : tensor<8x3xf32>
}

// -----

func.func @matmul_element_type(%a: tensor<8x3xf32>, %b: tensor<3x5xf16>) -> tensor<8x5xf32> {
  // expected-error@+1 {{'kiln.matmul' op operand 'b' has element type 'f16' but operand 'a' has element type 'f32'}}
  %0 = kiln.matmul %a, %b : tensor<8x3xf32>, tensor<3x5xf16>
  return %0 : tensor<8x5xf32>
}

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

// -----

func.func @conv2d_rank(%x: tensor<3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error@+1 {{'kiln.conv2d' op operand 'x' has shape [3, 8, 8] but needs rank 4}}
  %0 = kiln.conv2d %x, %w, stride = [1, 1], padding = [1, 1, 1, 1], dilation = [1, 1], groups = 1
         : tensor<3x8x8xf32>, tensor<16x3x3x3xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// -----

func.func @conv2d_weight_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error@+1 {{'kiln.conv2d' op operand 'w' has shape [16, 3, 3] but needs rank 4}}
  %0 = kiln.conv2d %x, %w, stride = [1, 1], padding = [1, 1, 1, 1], dilation = [1, 1], groups = 1
         : tensor<1x3x8x8xf32>, tensor<16x3x3xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// -----

func.func @conv2d_stride_length(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error@+1 {{'kiln.conv2d' op 'stride' has 1 entries but needs 2}}
  %0 = kiln.conv2d %x, %w, stride = [1], padding = [1, 1, 1, 1], dilation = [1, 1], groups = 1
         : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// -----

func.func @conv2d_padding_length(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error@+1 {{'kiln.conv2d' op 'padding' has 2 entries but needs 4}}
  %0 = kiln.conv2d %x, %w, stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = 1
         : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// -----

func.func @conv2d_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error@+1 {{'kiln.conv2d' op 'stride' [0, 1] must be positive}}
  %0 = kiln.conv2d %x, %w, stride = [0, 1], padding = [1, 1, 1, 1], dilation = [1, 1], groups = 1
         : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// -----

func.func @conv2d_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error@+1 {{'kiln.conv2d' op 'dilation' [1, -1] must be positive}}
  %0 = kiln.conv2d %x, %w, stride = [1, 1], padding = [1, 1, 1, 1], dilation = [1, -1], groups = 1
         : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// -----

func.func @conv2d_padding(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error@+1 {{'kiln.conv2d' op 'padding' [1, 1, -1, 1] must not be negative}}
  %0 = kiln.conv2d %x, %w, stride = [1, 1], padding = [1, 1, -1, 1], dilation = [1, 1], groups = 1
         : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// -----

func.func @conv2d_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error@+1 {{'kiln.conv2d' op 'groups' 0 must be positive}}
  %0 = kiln.conv2d %x, %w, stride = [1, 1], padding = [1, 1, 1, 1], dilation = [1, 1], groups = 0
         : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// -----

func.func @conv2d_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error@+1 {{'kiln.conv2d' op operand 'w' has shape [16, 3, 3, 3] but operand 'x' has shape [1, 4, 8, 8]: 4 input channels are not 3 per group x 1 groups}}
  %0 = kiln.conv2d %x, %w, stride = [1, 1], padding = [1, 1, 1, 1], dilation = [1, 1], groups = 1
         : tensor<1x4x8x8xf32>, tensor<16x3x3x3xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// -----

func.func @conv2d_output_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<15x2x3x3xf32>) -> tensor<1x15x8x8xf32> {
  // expected-error@+1 {{'kiln.conv2d' op operand 'w' with shape [15, 2, 3, 3] has 15 output channels, not divisible by 'groups' 2}}
  %0 = kiln.conv2d %x, %w, stride = [1, 1], padding = [1, 1, 1, 1], dilation = [1, 1], groups = 2
         : tensor<1x4x8x8xf32>, tensor<15x2x3x3xf32>
  return %0 : tensor<1x15x8x8xf32>
}

// -----

func.func @conv2d_output_size(%x: tensor<1x3x2x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x0x6xf32> {
  // expected-error@+1 {{'kiln.conv2d' op output size [0, 6] is not positive for operand 'x' with shape [1, 3, 2, 8] and operand 'w' with shape [16, 3, 3, 3]}}
  %0 = kiln.conv2d %x, %w, stride = [1, 1], padding = [0, 0, 0, 0], dilation = [1, 1], groups = 1
         : tensor<1x3x2x8xf32>, tensor<16x3x3x3xf32>
  return %0 : tensor<1x16x0x6xf32>
}

// -----

func.func @conv2d_element_type(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf16>) -> tensor<1x16x8x8xf32> {
  // expected-error@+1 {{'kiln.conv2d' op operand 'w' has element type 'f16' but operand 'x' has element type 'f32'}}
  %0 = kiln.conv2d %x, %w, stride = [1, 1], padding = [1, 1, 1, 1], dilation = [1, 1], groups = 1
         : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf16>
  return %0 : tensor<1x16x8x8xf32>
}

//===----------------------------------------------------------------------===//
// pool2d
//===----------------------------------------------------------------------===//

// -----

func.func @pool2d_rank(%x: tensor<3x8x8xf32>) -> tensor<3x4x4xf32> {
  // expected-error@+1 {{'kiln.pool2d' op operand 'x' has shape [3, 8, 8] but needs rank 4}}
  %0 = kiln.pool2d max %x, window = [2, 2], stride = [2, 2], padding = [0, 0, 0, 0] : tensor<3x8x8xf32>
  return %0 : tensor<3x4x4xf32>
}

// -----

func.func @pool2d_window_length(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error@+1 {{'kiln.pool2d' op 'window' has 3 entries but needs 2}}
  %0 = kiln.pool2d max %x, window = [2, 2, 2], stride = [2, 2], padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

func.func @pool2d_window(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error@+1 {{'kiln.pool2d' op 'window' [0, 2] must be positive}}
  %0 = kiln.pool2d avg %x, window = [0, 2], stride = [2, 2], padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

func.func @pool2d_stride(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error@+1 {{'kiln.pool2d' op 'stride' [2, 0] must be positive}}
  %0 = kiln.pool2d avg %x, window = [2, 2], stride = [2, 0], padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

func.func @pool2d_padding(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error@+1 {{'kiln.pool2d' op 'padding' [0, -1, 0, 0] must not be negative}}
  %0 = kiln.pool2d max %x, window = [2, 2], stride = [2, 2], padding = [0, -1, 0, 0] : tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

func.func @pool2d_output_size(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x0x0xf32> {
  // expected-error@+1 {{'kiln.pool2d' op output size [-1, -1] is not positive for operand 'x' with shape [1, 3, 8, 8]}}
  %0 = kiln.pool2d max %x, window = [10, 10], stride = [1, 1], padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x0x0xf32>
}

// -----

func.func @pool2d_int(%x: tensor<1x3x8x8xi32>) -> tensor<1x3x4x4xi32> {
  // expected-error@+1 {{'kiln.pool2d' op operand #0 must be ranked tensor of f32, f64, f16 or bf16 values, but got 'tensor<1x3x8x8xi32>'}}
  %0 = kiln.pool2d max %x, window = [2, 2], stride = [2, 2], padding = [0, 0, 0, 0] : tensor<1x3x8x8xi32>
  return %0 : tensor<1x3x4x4xi32>
}

//===----------------------------------------------------------------------===//
// gather
//===----------------------------------------------------------------------===//

// -----

func.func @gather_dim(%x: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<10x3xf32> {
  // expected-error@+1 {{'kiln.gather' op 'dim' 2 is out of range for operand 'x' with shape [10, 4]}}
  %0 = kiln.gather %x[%i], dim = 2 : tensor<10x4xf32>, tensor<3xi64>
  return %0 : tensor<10x3xf32>
}

// -----

func.func @gather_indices_type(%x: tensor<10x4xf32>, %i: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'kiln.gather' op operand #1 must be ranked tensor of i32 or i64 values, but got 'tensor<3xf32>'}}
  %0 = kiln.gather %x[%i], dim = 0 : tensor<10x4xf32>, tensor<3xf32>
  return %0 : tensor<3x4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// all_reduce
//===----------------------------------------------------------------------===//

func.func @all_reduce_mean_of_integers(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'kiln.all_reduce' op kind 'mean' needs a float element type, but operand 'x' has element type 'i32'}}
  %0 = kiln.all_reduce mean %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @all_reduce_result_type(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{'kiln.all_reduce' op result 0 has type 'tensor<2x2xf32>' but its operands and attributes give 'tensor<4xf32>'}}
  %0 = "kiln.all_reduce"(%x) <{kind = #kiln<all_reduce_kind sum>}> : (tensor<4xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @all_reduce_start_mean_of_integers(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error@+1 {{'kiln.all_reduce_start' op kind 'mean' needs a float element type, but operand 'x' has element type 'i64'}}
  %0 = kiln.all_reduce_start mean %x : tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @wait_result_type(%x: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error@+1 {{'kiln.wait' op result 0 has type 'tensor<4xf64>' but its operands and attributes give 'tensor<4xf32>'}}
  %0 = "kiln.wait"(%x) : (tensor<4xf32>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

//===----------------------------------------------------------------------===//
// scatter_add
//===----------------------------------------------------------------------===//

// -----

func.func @scatter_add_dim(%g: tensor<4x3xf32>, %i: tensor<3xi64>) -> tensor<4x10xf32> {
  // expected-error@+1 {{'kiln.scatter_add' op 'dim' 2 with operand 'indices' with shape [3] is out of range for operand 'updates' with shape [4, 3]}}
  %0 = kiln.scatter_add %g[%i], dim = 2, size = 10 : tensor<4x3xf32>, tensor<3xi64>
  return %0 : tensor<4x10xf32>
}

// -----

func.func @scatter_add_size(%g: tensor<3x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'kiln.scatter_add' op 'size' [-1] has a negative size}}
  %0 = kiln.scatter_add %g[%i], dim = 0, size = -1 : tensor<3x4xf32>, tensor<3xi64>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @scatter_add_held(%g: tensor<3x4xf32>, %i: tensor<2xi64>) -> tensor<10x4xf32> {
  // expected-error@+1 {{'kiln.scatter_add' op operand 'updates' with shape [3, 4] does not hold operand 'indices' with shape [2] at dimension 0}}
  %0 = kiln.scatter_add %g[%i], dim = 0, size = 10 : tensor<3x4xf32>, tensor<2xi64>
  return %0 : tensor<10x4xf32>
}

// -----

func.func @scatter_add_bool(%g: tensor<3xi1>, %i: tensor<3xi64>) -> tensor<5xi1> {
  // expected-error@+1 {{'kiln.scatter_add' op operand #0 must be ranked tensor of f32, f64, f16, bf16, i32 or i64 values, but got 'tensor<3xi1>'}}
  %0 = kiln.scatter_add %g[%i], dim = 0, size = 5 : tensor<3xi1>, tensor<3xi64>
  return %0 : tensor<5xi1>
}

//===----------------------------------------------------------------------===//
// rng
//===----------------------------------------------------------------------===//

// -----

func.func @rng_key_shape(%key: tensor<3xi64>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.rng' op operand 'key' has shape [3] but needs shape [2]}}
  %s, %k = kiln.rng uniform %key, shape = [4], dtype = f32, params = [0.0, 1.0] : tensor<3xi64>
  return %s : tensor<4xf32>
}

// -----

func.func @rng_key_type(%key: tensor<2xi32>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.rng' op operand #0 must be 1D tensor of 64-bit signless integer values, but got 'tensor<2xi32>'}}
  %s, %k = kiln.rng uniform %key, shape = [4], dtype = f32, params = [0.0, 1.0] : tensor<2xi32>
  return %s : tensor<4xf32>
}

// -----

func.func @rng_params_count(%key: tensor<2xi64>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.rng' op 'params' has 1 entries but distribution 'normal' needs 2}}
  %s, %k = kiln.rng normal %key, shape = [4], dtype = f32, params = [1.0] : tensor<2xi64>
  return %s : tensor<4xf32>
}

// -----

func.func @rng_params_range(%key: tensor<2xi64>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.rng' op 'params' are out of range for distribution 'bernoulli' (uniform: low <= high, normal: std >= 0, bernoulli: 0 <= p <= 1)}}
  %s, %k = kiln.rng bernoulli %key, shape = [4], dtype = f32, params = [1.5] : tensor<2xi64>
  return %s : tensor<4xf32>
}

// -----

func.func @rng_uniform_bounds(%key: tensor<2xi64>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.rng' op 'params' are out of range for distribution 'uniform' (uniform: low <= high, normal: std >= 0, bernoulli: 0 <= p <= 1)}}
  %s, %k = kiln.rng uniform %key, shape = [4], dtype = f32, params = [1.0, 0.0] : tensor<2xi64>
  return %s : tensor<4xf32>
}

// -----

func.func @rng_normal_std(%key: tensor<2xi64>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.rng' op 'params' are out of range for distribution 'normal' (uniform: low <= high, normal: std >= 0, bernoulli: 0 <= p <= 1)}}
  %s, %k = kiln.rng normal %key, shape = [4], dtype = f32, params = [0.0, -1.0] : tensor<2xi64>
  return %s : tensor<4xf32>
}

// -----

func.func @rng_dtype_float(%key: tensor<2xi64>) -> tensor<4xi32> {
  // expected-error@+1 {{'kiln.rng' op distribution 'uniform' needs a float 'dtype', but got 'i32'}}
  %s, %k = kiln.rng uniform %key, shape = [4], dtype = i32, params = [0.0, 1.0] : tensor<2xi64>
  return %s : tensor<4xi32>
}

// -----

func.func @rng_dtype(%key: tensor<2xi64>) -> tensor<4xui8> {
  // expected-error@+1 {{'kiln.rng' op 'dtype' must be f32, f64, f16, bf16, i1, i32 or i64, but got 'ui8'}}
  %s, %k = kiln.rng bernoulli %key, shape = [4], dtype = ui8, params = [0.5] : tensor<2xi64>
  return %s : tensor<4xui8>
}

// -----

func.func @rng_shape(%key: tensor<2xi64>) -> tensor<4xf32> {
  // expected-error@+1 {{'kiln.rng' op 'shape' [4, -2] has a negative size}}
  %s, %k = kiln.rng normal %key, shape = [4, -2], dtype = f32, params = [0.0, 1.0] : tensor<2xi64>
  return %s : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// fusion, yield, callback
//===----------------------------------------------------------------------===//

// -----

func.func @fusion_no_yield(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'kiln.fusion' op body must end with 'kiln.yield'}}
  %f = kiln.fusion(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32> {
  ^bb0(%a: tensor<4x3xf32>):
    %0 = kiln.exp %a : tensor<4x3xf32>
  }
  return %f : tensor<4x3xf32>
}

// -----

func.func @fusion_argument_count(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'kiln.fusion' op body has 2 arguments but there are 1 inputs}}
  %f = kiln.fusion(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32> {
  ^bb0(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>):
    kiln.yield %a : tensor<4x3xf32>
  }
  return %f : tensor<4x3xf32>
}

// -----

func.func @fusion_argument_type(%x: tensor<4x3xf32>) -> tensor<4x3xf16> {
  // expected-error@+1 {{'kiln.fusion' op body argument 0 has type 'tensor<4x3xf16>' but input 0 has type 'tensor<4x3xf32>'}}
  %f = kiln.fusion(%x) : (tensor<4x3xf32>) -> tensor<4x3xf16> {
  ^bb0(%a: tensor<4x3xf16>):
    kiln.yield %a : tensor<4x3xf16>
  }
  return %f : tensor<4x3xf16>
}

// -----

func.func @fusion_result_count(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'kiln.fusion' op 'kiln.yield' has 2 operands but the op has 1 results}}
  %f = kiln.fusion(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32> {
  ^bb0(%a: tensor<4x3xf32>):
    kiln.yield %a, %a : tensor<4x3xf32>, tensor<4x3xf32>
  }
  return %f : tensor<4x3xf32>
}

// -----

func.func @fusion_result_type(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{'kiln.fusion' op result 0 has type 'tensor<4x2xf32>' but 'kiln.yield' operand 0 has type 'tensor<4x3xf32>'}}
  %f = kiln.fusion(%x) : (tensor<4x3xf32>) -> tensor<4x2xf32> {
  ^bb0(%a: tensor<4x3xf32>):
    kiln.yield %a : tensor<4x3xf32>
  }
  return %f : tensor<4x2xf32>
}

// -----

func.func @fusion_captures(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-note@+1 {{required by region isolation constraints}}
  %f = kiln.fusion(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32> {
  ^bb0(%a: tensor<4x3xf32>):
    // expected-error@+1 {{'kiln.yield' op using value defined outside the region}}
    kiln.yield %y : tensor<4x3xf32>
  }
  return %f : tensor<4x3xf32>
}

// -----

func.func @yield_outside_fusion(%x: tensor<4x3xf32>) {
  // expected-error@+1 {{'kiln.yield' op expects parent op 'kiln.fusion'}}
  kiln.yield %x : tensor<4x3xf32>
}

// -----

func.func @callback_callee(%x: tensor<4x3xf32>) {
  // expected-error@+1 {{'kiln.callback' op 'callee' -1 must not be negative}}
  kiln.callback(%x) callee = -1 : (tensor<4x3xf32>) -> ()
  return
}

// -----

func.func @dynamic_entry_without_operand(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error@+1 {{'kiln.reshape' op 'shape' [?, 3] has 1 dynamic entries but the op has 0 dynamic size operands}}
  %0 = "kiln.reshape"(%x) <{shape = array<i64: -9223372036854775808, 3>}> : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

func.func @iota_dim_out_of_range(%n: index) -> tensor<?xi64> {
  // expected-error@+1 {{'kiln.iota' op 'dim' 1 is out of range for shape [?]}}
  %0 = kiln.iota dim = 1, shape = [%n], dtype = i64
  return %0 : tensor<?xi64>
}

// -----

func.func @iota_bool(%n: index) -> tensor<?xi1> {
  // expected-error@+1 {{'kiln.iota' op 'dtype' must be numeric, but got 'i1'}}
  %0 = kiln.iota dim = 0, shape = [%n], dtype = i1
  return %0 : tensor<?xi1>
}
