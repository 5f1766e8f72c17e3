// The parity table: every public op and composite of kiln/core/{Ops,Functional,Tensor}.h
// and kiln/nn/Functional.h, with the overloads and attributes that take different paths
// (broadcasting, scalars, dims and keepdim, strides, dtypes, state, the generator).
// Adding an op is one line here.
#include <optional>
#include <vector>

#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/nn/Functional.h"
#include "kiln/optim/SGD.h"
#include "test/e2e/Parity.h"

namespace kiln::e2e {

namespace {

namespace F = nn::functional;
using X = const Tensors&;

const Shape kMat{3, 4};
const Maker kA = normal(kMat);
const Maker kB = normal(kMat);
const Maker kRow = normal({4});
const Maker kSp = specials(kMat);
const Maker kPos = positive(kMat);
const Maker kImage = normal({2, 4, 6, 6});
const Maker kBatch = normal({4, 3, 5});

std::vector<OpCase> factories() {
  return {
      op("factory_only_zeros", {}, [](X) { return zeros({2, 3}); }),
      op("zeros", {kA}, [](X x) { return add(x[0], zeros(kMat)); }),
      op("ones", {kA}, [](X x) { return sub(x[0], ones({4})); }),
      op("full", {kA}, [](X x) { return mul(x[0], full({3, 1}, 2.5)); }),
      op("full_int", {kA}, [](X x) { return std::make_tuple(x[0], full({3}, int64_t(1) << 40)); }),
      op("full_f16", {kA}, [](X x) { return add(x[0], full({4}, 0.1, kFloat16)); }),
      op("zeros_like", {kA}, [](X x) { return add(x[0], zeros_like(x[0])); }),
      op("ones_like", {kA}, [](X x) { return add(x[0], ones_like(x[0])); }),
      op("full_like", {kA}, [](X x) { return add(x[0], full_like(x[0], -3.0)); }),
      op("scalar_tensor", {kA}, [](X x) { return mul(x[0], scalar_tensor(0.3)); }),
      op("tensor_values", {kRow}, [](X x) { return add(x[0], tensor(std::vector<float>{1, 2, 3, 4})); }),
      op("empty_fill", {kA}, [](X x) { return add(x[0], empty(kMat).fill_(1.5)); }),
      op("arange_end", {kRow}, [](X x) { return add(x[0], arange(4)); }),
      op("arange_float", {kRow}, [](X x) { return add(x[0], arange(0.5, 2.5, 0.5)); }),
      op("arange_int_dtype", {kRow}, [](X x) { return add(x[0], arange(0, 8, 2, kInt32)); }),
      op("linspace", {kRow}, [](X x) { return add(x[0], linspace(-1.0, 1.0, 4)); }),
      op("rand", {kA}, [](X x) { return add(x[0], rand(kMat)); }),
      op("rand_f64", {kA}, [](X x) { return add(x[0], rand({3, 4}, kFloat64)); }),
      op("randn", {kA}, [](X x) { return add(x[0], randn(kMat)); }),
      op("randn_f64", {kA}, [](X x) { return sum(add(x[0], randn({4}, kFloat64))); }),
      op("randn_bf16", {kA}, [](X x) { return mul(x[0], randn({4}, kBFloat16)); }),
      op("randn_twice", {kA}, [](X x) { return add(mul(x[0], randn(kMat)), randn({4})); }),
      op("randint", {kA}, [](X x) { return add(x[0], randint(-3, 3, kMat)); }),
      op("bernoulli", {kA}, [](X x) { return mul(x[0], bernoulli(kMat, 0.3)); }),
      op("factory_only_rand", {}, [](X) { return rand({7}); }),
      op("full_int_large", {}, [](X) { return full({2}, (int64_t(1) << 62) + 1); }),
      op("ones_bool", {bools(kMat)}, [](X x) { return logical_and(x[0], ones({4}, kBool)); }),
      op("tensor_bools", {bools({4})}, [](X x) { return logical_or(x[0], tensor(std::vector<bool>{true, false, false, true})); }),
      op("tensor_int64", {normal({3}, kInt64)}, [](X x) { return mul(x[0], tensor(std::vector<int64_t>{-7, 1LL << 40, 3})); }),
      op("arange_bool", {bools({4})}, [](X x) { return logical_or(x[0], arange(0, 4, 1, kBool)); }),
      op("arange_f16", {normal({4}, kFloat16)}, [](X x) { return add(x[0], arange(0.0, 2.0, 0.5, kFloat16)); }),
      op("linspace_bf16", {normal({5}, kBFloat16)}, [](X x) { return add(x[0], linspace(-3.0, 1.0, 5, kBFloat16)); }),
      op("zeros_empty", {normal({0, 4})}, [](X x) { return add(x[0], zeros({0, 4})); }),
      op("rand_f16", {kA}, [](X x) { return add(x[0], rand(kMat, kFloat16)); }),
      op("randint_i32", {normal(kMat, kInt32)}, [](X x) { return add(x[0], randint(-1000000, 1000000, kMat, kInt32)); }),
      op("bernoulli_f64", {normal({9}, kFloat64)}, [](X x) { return mul(x[0], bernoulli({9}, 0.7, kFloat64)); }),
      op("rand_odd_sizes", {normal({5})}, [](X x) { return std::make_tuple(add(x[0], rand({5})), randn({3}, kFloat64), rand({1})); }),
  };
}

std::vector<OpCase> elementwise() {
  const Maker i32 = normal(kMat, kInt32), i64 = normal(kMat, kInt64);
  const Maker f16 = normal(kMat, kFloat16), bf16 = normal(kMat, kBFloat16), f64 = normal(kMat, kFloat64);
  return {
      op("neg", {kSp}, [](X x) { return neg(x[0]); }),
      op("abs", {kSp}, [](X x) { return abs(x[0]); }),
      op("exp", {kSp}, [](X x) { return exp(x[0]); }),
      op("log", {kSp}, [](X x) { return log(x[0]); }),
      op("sqrt", {kSp}, [](X x) { return sqrt(x[0]); }),
      op("rsqrt", {kSp}, [](X x) { return rsqrt(x[0]); }),
      op("tanh", {kSp}, [](X x) { return tanh(x[0]); }),
      op("sigmoid", {kSp}, [](X x) { return sigmoid(x[0]); }),
      op("relu", {kSp}, [](X x) { return relu(x[0]); }),
      op("sin", {kSp}, [](X x) { return sin(x[0]); }),
      op("cos", {kSp}, [](X x) { return cos(x[0]); }),
      op("floor", {kSp}, [](X x) { return floor(x[0]); }),
      op("logical_not", {bools(kMat)}, [](X x) { return logical_not(x[0]); }),
      op("exp_f64", {f64}, [](X x) { return exp(x[0]); }),
      op("exp_f16", {f16}, [](X x) { return exp(x[0]); }),
      op("tanh_bf16", {bf16}, [](X x) { return tanh(x[0]); }),
      op("neg_i32", {i32}, [](X x) { return neg(x[0]); }),
      op("abs_i64", {i64}, [](X x) { return abs(x[0]); }),
      op("operator_neg", {kA}, [](X x) { return -x[0]; }),

      op("add", {kSp, kB}, [](X x) { return add(x[0], x[1]); }),
      op("add_broadcast_row", {kA, kRow}, [](X x) { return add(x[0], x[1]); }),
      op("add_broadcast_outer", {normal({3, 1}), normal({1, 4})}, [](X x) { return add(x[0], x[1]); }),
      op("sub", {kSp, kB}, [](X x) { return sub(x[0], x[1]); }),
      op("mul", {kSp, kB}, [](X x) { return mul(x[0], x[1]); }),
      op("div", {kSp, kB}, [](X x) { return div(x[0], x[1]); }),
      op("pow", {kPos, kB}, [](X x) { return pow(x[0], x[1]); }),
      op("maximum", {kSp, kB}, [](X x) { return maximum(x[0], x[1]); }),
      op("minimum", {kSp, kB}, [](X x) { return minimum(x[0], x[1]); }),
      op("max_binary", {kA, kRow}, [](X x) { return max(x[0], x[1]); }),
      op("min_binary", {kA, kRow}, [](X x) { return min(x[0], x[1]); }),
      op("add_scalar", {kA}, [](X x) { return add(x[0], 2.5); }),
      op("add_scalar_left_int", {kA}, [](X x) { return add(2, x[0]); }),
      op("sub_scalar_left", {kA}, [](X x) { return sub(1.5, x[0]); }),
      op("mul_scalar", {kA}, [](X x) { return mul(x[0], 3); }),
      op("div_scalar", {kA}, [](X x) { return div(x[0], 7.0); }),
      op("div_scalar_left", {kSp}, [](X x) { return div(1.0, x[0]); }),
      op("pow_scalar", {kA}, [](X x) { return pow(x[0], 2.0); }),
      op("pow_scalar_base", {kA}, [](X x) { return pow(2.0, x[0]); }),
      op("maximum_scalar", {kSp}, [](X x) { return maximum(x[0], 0.25); }),
      op("minimum_scalar_left", {kSp}, [](X x) { return minimum(0.25, x[0]); }),
      op("operators", {kA, kB}, [](X x) { return (x[0] + x[1]) * 2.0 - x[1] / (1.5 + x[0] * x[0]); }),
      op("int_add", {i32, i64}, [](X x) { return add(x[0], x[1]); }),
      op("int_mul_float_scalar", {i32}, [](X x) { return mul(x[0], 0.5); }),
      op("int_div", {i64, ints(1, 5, kMat)}, [](X x) { return div(x[0], x[1]); }),
      op("f16_add_f32", {f16, kB}, [](X x) { return add(x[0], x[1]); }),
      op("bf16_mul", {bf16, bf16}, [](X x) { return mul(x[0], x[1]); }),
      op("f64_div", {f64, f64}, [](X x) { return div(x[0], x[1]); }),
      op("bool_add", {bools(kMat), bools(kMat)}, [](X x) { return add(x[0], x[1]); }),
      op("bool_mul", {bools(kMat), bools(kMat)}, [](X x) { return mul(x[0], x[1]); }),
      op("bool_maximum", {bools(kMat), bools({4})}, [](X x) { return maximum(x[0], x[1]); }),
      op("bool_minimum", {bools(kMat), bools(kMat)}, [](X x) { return minimum(x[0], x[1]); }),
      op("logical_and", {bools(kMat), bools({4})}, [](X x) { return logical_and(x[0], x[1]); }),
      op("logical_or", {bools(kMat), bools(kMat)}, [](X x) { return logical_or(x[0], x[1]); }),
      op("f16_mul_scalar", {f16}, [](X x) { return mul(x[0], 0.1); }),
      op("bf16_add_scalar", {bf16}, [](X x) { return add(x[0], 1e-3); }),
      op("mul_denormal_scalar", {kA}, [](X x) { return mul(x[0], 1e-40); }),
      op("int_add_large_scalar", {normal(kMat, kInt64)}, [](X x) { return add(x[0], (int64_t(1) << 60) + 3); }),

      op("eq", {kSp, kSp}, [](X x) { return eq(x[0], x[1]); }),
      op("ne", {kSp, kB}, [](X x) { return ne(x[0], x[1]); }),
      op("lt", {kSp, kRow}, [](X x) { return lt(x[0], x[1]); }),
      op("le", {kSp, kB}, [](X x) { return le(x[0], x[1]); }),
      op("gt", {kSp, kB}, [](X x) { return gt(x[0], x[1]); }),
      op("ge", {kSp, kB}, [](X x) { return ge(x[0], x[1]); }),
      op("compare_scalars", {kSp}, [](X x) { return std::make_tuple(eq(x[0], 0.0), lt(1, x[0]), ge(x[0], -0.5)); }),
      op("compare_operators", {kA, kB}, [](X x) { return std::make_tuple(x[0] < x[1], x[0] != 0.5, x[0] >= x[1]); }),
      op("compare_int_float", {i32, kB}, [](X x) { return gt(x[0], x[1]); }),
      op("where", {bools(kMat), kA, kB}, [](X x) { return where(x[0], x[1], x[2]); }),
      op("where_broadcast", {bools({4}), kA, normal({3, 1})}, [](X x) { return where(x[0], x[1], x[2]); }),
      op("where_promote", {bools(kMat), i32, kB}, [](X x) { return where(x[0], x[1], x[2]); }),
      op("where_scalar_tensors", {kSp}, [](X x) { return where(gt(x[0], 0.0), scalar_tensor(1.0), x[0]); }),
      op("where_bools", {bools(kMat), bools(kMat), bools({4})}, [](X x) { return where(x[0], x[1], x[2]); }),
  };
}

std::vector<OpCase> activationsAndConversions() {
  return {
      op("clamp", {kSp}, [](X x) { return clamp(x[0], -0.5, 0.5); }),
      op("clamp_min", {kSp}, [](X x) { return clamp(x[0], 0.0); }),
      op("clamp_max", {kSp}, [](X x) { return clamp(x[0], std::nullopt, 0.1); }),
      op("clamp_inverted", {kA}, [](X x) { return clamp(x[0], 1.0, -1.0); }),
      op("clamp_int_fraction", {normal(kMat, kInt32)}, [](X x) { return clamp(x[0], -2.5, 3.0); }),
      op("relu6", {normal(kMat)}, [](X x) { return relu6(mul(x[0], 4.0)); }),
      op("silu", {kSp}, [](X x) { return silu(x[0]); }),
      op("leaky_relu", {kSp}, [](X x) { return leaky_relu(x[0], 0.2); }),
      op("gelu", {kSp}, [](X x) { return gelu(x[0]); }),
      op("gelu_tanh", {kSp}, [](X x) { return gelu(x[0], "tanh"); }),
      op("gelu_tanh_f64", {normal(kMat, kFloat64)}, [](X x) { return gelu(x[0], "tanh"); }),
      op("gelu_tanh_f16", {normal(kMat, kFloat16)}, [](X x) { return gelu(x[0], "tanh"); }),
      op("F_gelu_options", {kA}, [](X x) { return F::gelu(x[0], F::GELUFuncOptions().approximate("tanh")); }),
      op("F_leaky_relu_options", {kA}, [](X x) { return F::leaky_relu(x[0], F::LeakyReLUFuncOptions().negative_slope(0.3)); }),

      op("to_f16", {kSp}, [](X x) { return x[0].to(kFloat16); }),
      op("to_bf16", {kSp}, [](X x) { return x[0].to(kBFloat16); }),
      op("to_f64", {kSp}, [](X x) { return x[0].to(kFloat64); }),
      op("to_i32", {normal(kMat)}, [](X x) { return mul(x[0], 100.0).to(kInt32); }),
      op("to_i64", {normal(kMat)}, [](X x) { return mul(x[0], 100.0).to(kInt64); }),
      op("to_bool", {kSp}, [](X x) { return x[0].to(kBool); }),
      op("to_same_dtype", {kA}, [](X x) { return x[0].to(kFloat32); }),
      op("convert_f16_to_f32", {normal(kMat, kFloat16)}, [](X x) { return convert(x[0], kFloat32); }),
      op("convert_bf16_to_f16", {normal(kMat, kBFloat16)}, [](X x) { return convert(x[0], kFloat16); }),
      op("convert_i64_to_f32", {normal(kMat, kInt64)}, [](X x) { return convert(x[0], kFloat32); }),
      op("convert_bool_to_i32", {bools(kMat)}, [](X x) { return convert(x[0], kInt32); }),
      op("convert_f64_to_bf16", {normal(kMat, kFloat64)}, [](X x) { return convert(x[0], kBFloat16); }),
  };
}

std::vector<OpCase> reductions() {
  const Maker cube = normal({2, 3, 4});
  return {
      op("sum_all", {cube}, [](X x) { return sum(x[0]); }),
      op("sum_dim", {cube}, [](X x) { return sum(x[0], {1}); }),
      op("sum_dims_keepdim", {cube}, [](X x) { return sum(x[0], {0, 2}, true); }),
      op("sum_negative_dim", {cube}, [](X x) { return sum(x[0], {-1}); }),
      op("sum_i32", {normal(kMat, kInt32)}, [](X x) { return sum(x[0], {0}); }),
      op("sum_bool", {bools(kMat)}, [](X x) { return sum(x[0]); }),
      op("sum_f16", {normal({64}, kFloat16)}, [](X x) { return sum(x[0]); }),
      op("sum_specials", {kSp}, [](X x) { return sum(x[0], {1}); }),
      op("mean_all", {cube}, [](X x) { return mean(x[0]); }),
      op("mean_dims_keepdim", {cube}, [](X x) { return mean(x[0], {0, 1}, true); }),
      op("mean_f64", {normal({5, 7}, kFloat64)}, [](X x) { return mean(x[0], {1}); }),
      op("amax", {kSp}, [](X x) { return amax(x[0], {1}); }),
      op("amin_keepdim", {cube}, [](X x) { return amin(x[0], {0}, true); }),
      op("prod", {cube}, [](X x) { return prod(x[0], {2}); }),
      op("prod_i64", {ints(-3, 4, kMat)}, [](X x) { return prod(x[0]); }),
      op("max_all", {kA}, [](X x) { return max(x[0]); }),
      op("min_all", {kA}, [](X x) { return min(x[0]); }),
      op("max_dim", {cube}, [](X x) { return max(x[0], int64_t(1)); }),
      op("min_dim_keepdim", {cube}, [](X x) { return min(x[0], int64_t(-1), true); }),
      op("argmax", {kSp}, [](X x) { return argmax(x[0], 1); }),
      op("argmin_keepdim", {cube}, [](X x) { return argmin(x[0], 0, true); }),
      op("var_all", {cube}, [](X x) { return var(x[0]); }),
      op("var_dims", {cube}, [](X x) { return var(x[0], {0, 2}, 1, true); }),
      op("var_correction0", {cube}, [](X x) { return var(x[0], {1}, 0); }),
      op("std", {cube}, [](X x) { return kiln::std(x[0], {2}); }),
      op("std_zero_variance", {cube}, [](X x) { return kiln::std(mul(x[0], 0.0), {1}); }),
      op("sum_to", {cube}, [](X x) { return sum_to(x[0], {3, 1}); }),
      op("sum_all_keepdim", {cube}, [](X x) { return sum(x[0], {}, true); }),
      op("argmax_i32", {normal(kMat, kInt32)}, [](X x) { return argmax(x[0], 0); }),
      op("prod_f16", {normal({2, 8}, kFloat16)}, [](X x) { return prod(x[0], {1}); }),
      op("amax_bf16", {normal({3, 9}, kBFloat16)}, [](X x) { return amax(x[0], {1}, true); }),
      // float32 sums pair their elements as the eager kernels do: whole blocks, a last
      // block with pairs and elements alone, columns, and reduced dims taken together (one
      // run; batch_norm's dims, moved last where their blocks would not cover whole rows).
      op("sum_pairs_rows", {pairRounding({3, 601}, {1})}, [](X x) { return std::make_tuple(sum(x[0], {1}), mean(x[0], {1})); }),
      op("sum_pairs_columns", {pairRounding({37, 20}, {0})}, [](X x) { return sum(x[0], {0}, true); }),
      op("sum_pairs_run", {pairRounding({2, 7, 7}, {1, 2})}, [](X x) { return sum(x[0], {1, 2}); }),
      op("sum_pairs_bn_8x8", {pairRounding({4, 3, 8, 8}, {0, 2, 3})}, [](X x) { return sum(x[0], {0, 2, 3}); }),
      op("sum_pairs_bn_7x7", {pairRounding({4, 3, 7, 7}, {0, 2, 3})}, [](X x) { return mean(x[0], {0, 2, 3}, true); }),
      // Planes of 16, 4 or 1 elements: the blocks span planes (N, H and W taken as one
      // dim), read in place; and BatchNorm's variance, whose squares are computed in the
      // sum's loop (fused into its 32 operands).
      op("sum_pairs_bn_4x4", {pairRounding({4, 3, 4, 4}, {0, 2, 3})}, [](X x) { return sum(x[0], {0, 2, 3}); }),
      op("sum_pairs_bn_2x2", {pairRounding({24, 3, 2, 2}, {0, 2, 3})}, [](X x) { return sum(x[0], {0, 2, 3}, true); }),
      op("sum_pairs_bn_1x1", {pairRounding({70, 3, 1, 1}, {0, 2, 3})}, [](X x) { return mean(x[0], {0, 2, 3}); }),
      op("bn_variance_16x16", {normal({3, 5, 16, 16})}, [](X x) { Tensor d = sub(x[0], mean(x[0], {0, 2, 3}, true)); return sum(mul(d, d), {0, 2, 3}); }),
      op("bn_variance_4x4", {normal({6, 5, 4, 4})}, [](X x) { Tensor d = sub(x[0], mean(x[0], {0, 2, 3}, true)); return mean(mul(d, d), {0, 2, 3}, true); }),
  };
}

std::vector<OpCase> linalgAndJoins() {
  const Maker batchB = normal({4, 5, 2});
  return {
      op("matmul", {kA, normal({4, 5})}, [](X x) { return matmul(x[0], x[1]); }),
      op("matmul_vector_matrix", {kRow, normal({4, 5})}, [](X x) { return matmul(x[0], x[1]); }),
      op("matmul_matrix_vector", {kA, kRow}, [](X x) { return matmul(x[0], x[1]); }),
      op("matmul_vector_vector", {kRow, kRow}, [](X x) { return matmul(x[0], x[1]); }),
      op("matmul_batch_broadcast", {kBatch, normal({5, 2})}, [](X x) { return matmul(x[0], x[1]); }),
      op("matmul_transposed", {transposed(kMat), normal({4, 2})}, [](X x) { return matmul(x[0], x[1]); }),
      op("matmul_f64", {normal(kMat, kFloat64), normal({4, 2}, kFloat64)}, [](X x) { return matmul(x[0], x[1]); }),
      op("mm", {kA, normal({4, 2})}, [](X x) { return mm(x[0], x[1]); }),
      op("mm_transpose_b", {kA, normal({2, 4})}, [](X x) { return mm(x[0], x[1].t()); }),
      op("bmm", {kBatch, batchB}, [](X x) { return bmm(x[0], x[1]); }),
      op("addmm", {normal({2}), kA, normal({4, 2})}, [](X x) { return addmm(x[0], x[1], x[2]); }),
      op("addmm_transpose_b", {normal({5}), kA, normal({5, 4})},
         [](X x) { return addmm(x[0], x[1], x[2].t()); }),
      op("addmm_f64", {normal({2}, kFloat64), normal(kMat, kFloat64), normal({4, 2}, kFloat64)},
         [](X x) { return addmm(x[0], x[1], x[2]); }),
      op("F_linear", {kA, normal({5, 4}), normal({5})}, [](X x) { return F::linear(x[0], x[1], x[2]); }),
      op("F_linear_no_bias", {kBatch, normal({2, 5})}, [](X x) { return F::linear(x[0], x[1]); }),

      op("cat", {kA, normal({2, 4})}, [](X x) { return cat({x[0], x[1]}); }),
      op("cat_dim1_three", {kA, normal({3, 1}), kB}, [](X x) { return cat({x[0], x[1], x[2]}, 1); }),
      op("cat_promote", {kA, normal({1, 4}, kInt32)}, [](X x) { return cat({x[0], x[1]}, 0); }),
      op("stack", {kA, kB}, [](X x) { return stack({x[0], x[1]}); }),
      op("stack_last", {kA, kB, kSp}, [](X x) { return stack({x[0], x[1], x[2]}, -1); }),
      op("cat_bools", {bools(kMat), bools({1, 4})}, [](X x) { return cat({x[0], x[1]}); }),
      op("stack_ints", {normal({4}, kInt32), normal({4}, kInt32)}, [](X x) { return stack({x[0], x[1]}, 1); }),
      op("matmul_i64", {normal(kMat, kInt64), normal({4, 2}, kInt64)}, [](X x) { return matmul(x[0], x[1]); }),
      op("bmm_f64", {normal({2, 3, 4}, kFloat64), normal({2, 4, 5}, kFloat64)}, [](X x) { return bmm(x[0], x[1]); }),
  };
}

std::vector<OpCase> indexing() {
  const Maker table = normal({6, 3});
  return {
      op("index_select", {table, ints(0, 6, {4})}, [](X x) { return index_select(x[0], 0, x[1]); }),
      op("index_select_dim1", {table, ints(0, 3, {5}, kInt32)}, [](X x) { return index_select(x[0], 1, x[1]); }),
      op("gather", {table, ints(0, 3, {6, 2})}, [](X x) { return gather(x[0], 1, x[1]); }),
      op("gather_dim0", {table, ints(0, 6, {2, 3})}, [](X x) { return gather(x[0], 0, x[1]); }),
      op("take", {table, ints(0, 6, {2, 2})}, [](X x) { return take(x[0], x[1], 0); }),
      op("take_dim1", {table, ints(0, 3, {4})}, [](X x) { return take(x[0], x[1], 1); }),
      op("index_select_negative_dim", {table, ints(0, 3, {2})}, [](X x) { return index_select(x[0], -1, x[1]); }),
      op("take_0d_index", {table, ints(0, 6, {})}, [](X x) { return take(x[0], x[1], 0); }),
      op("index_add", {table, ints(0, 6, {4}), normal({4, 3})},
         [](X x) { return index_add(x[0], 0, x[1], x[2]); }),
      op("index_add_dim1_ints", {normal({6, 3}, kInt64), ints(0, 3, {5}, kInt32), normal({6, 5}, kInt64)},
         [](X x) { return index_add(x[0], 1, x[1], x[2]); }),
      op("embedding", {table, ints(0, 6, {2, 5})}, [](X x) { return embedding(x[0], x[1]); }),
      op("F_embedding_padding_idx", {ints(0, 6, {7}), table},
         [](X x) { return F::embedding(x[0], x[1], F::EmbeddingFuncOptions().padding_idx(0)); }),
  };
}

std::vector<OpCase> convolutionAndPooling() {
  const Maker w = normal({5, 4, 3, 3}), bias = normal({5});
  return {
      op("conv2d", {kImage, w}, [](X x) { return conv2d(x[0], x[1]); }),
      op("conv2d_bias", {kImage, w, bias}, [](X x) { return conv2d(x[0], x[1], x[2]); }),
      op("conv2d_bias_relu", {kImage, w, bias}, [](X x) { return relu(conv2d(x[0], x[1], x[2])); }),
      op("conv2d_stride_padding", {kImage, w, bias}, [](X x) { return conv2d(x[0], x[1], x[2], {2}, {1}); }),
      op("conv2d_asymmetric", {kImage, normal({5, 4, 3, 2})},
         [](X x) { return conv2d(x[0], x[1], Tensor(), {2, 1}, {1, 0}); }),
      op("conv2d_dilation", {kImage, w}, [](X x) { return conv2d(x[0], x[1], Tensor(), {1}, {2}, {2}); }),
      op("conv2d_groups", {kImage, normal({6, 2, 3, 3}), normal({6})},
         [](X x) { return conv2d(x[0], x[1], x[2], {1}, {1}, {1}, 2); }),
      op("conv2d_depthwise", {kImage, normal({4, 1, 3, 3})},
         [](X x) { return conv2d(x[0], x[1], Tensor(), {1}, {1}, {1}, 4); }),
      op("F_conv2d_options", {kImage, w, bias},
         [](X x) { return F::conv2d(x[0], x[1], F::Conv2dFuncOptions().bias(x[2]).stride(2).padding(1).dilation(1)); }),
      op("max_pool2d", {kImage}, [](X x) { return max_pool2d(x[0], {2}); }),
      op("max_pool2d_stride_padding", {kImage}, [](X x) { return max_pool2d(x[0], {3}, {2}, {1}); }),
      op("max_pool2d_specials", {specials({1, 2, 4, 4})}, [](X x) { return max_pool2d(x[0], {2}); }),
      op("avg_pool2d", {kImage}, [](X x) { return avg_pool2d(x[0], {2}); }),
      op("avg_pool2d_stride_padding", {kImage}, [](X x) { return avg_pool2d(x[0], {3, 2}, {1, 2}, {1, 0}); }),
      op("adaptive_avg_pool2d_global", {kImage}, [](X x) { return adaptive_avg_pool2d(x[0], {1}); }),
      op("adaptive_avg_pool2d_rect", {kImage}, [](X x) { return adaptive_avg_pool2d(x[0], {2, 3}); }),
      op("F_max_pool2d_options", {kImage}, [](X x) { return F::max_pool2d(x[0], F::MaxPool2dFuncOptions(3).stride(1).padding(1)); }),
      op("F_avg_pool2d_options", {kImage}, [](X x) { return F::avg_pool2d(x[0], F::AvgPool2dFuncOptions({2, 3})); }),
      op("F_adaptive_avg_pool2d_options", {kImage}, [](X x) { return F::adaptive_avg_pool2d(x[0], F::AdaptiveAvgPool2dFuncOptions({3, 2})); }),
      op("conv2d_f64", {normal({1, 2, 5, 5}, kFloat64), normal({3, 2, 3, 3}, kFloat64)}, [](X x) { return conv2d(x[0], x[1], Tensor(), {1}, {1}); }),
      op("max_pool2d_f64", {normal({1, 2, 4, 4}, kFloat64)}, [](X x) { return max_pool2d(x[0], {2}); }),
      op("avg_pool2d_f16", {normal({1, 2, 4, 4}, kFloat16)}, [](X x) { return avg_pool2d(x[0], {2}); }),
  };
}

std::vector<OpCase> normalizationAndSoftmax() {
  const Maker gamma = normal({4}), beta = normal({4}), channels4 = normal({4});
  const Maker runningVar = positive({4});
  return {
      op("softmax", {kSp}, [](X x) { return softmax(x[0], 1); }),
      op("softmax_dim0", {kBatch}, [](X x) { return softmax(x[0], 0); }),
      op("softmax_f64", {normal({3, 9}, kFloat64)}, [](X x) { return softmax(x[0], -1); }),
      op("softmax_f16", {normal(kMat, kFloat16)}, [](X x) { return softmax(x[0], 1); }),
      op("softmax_transposed", {transposed({5, 3})}, [](X x) { return softmax(x[0], 1); }),
      op("log_softmax", {kA}, [](X x) { return log_softmax(x[0], 1); }),
      op("log_softmax_dim1", {kBatch}, [](X x) { return log_softmax(x[0], 1); }),
      op("log_softmax_f64", {normal({3, 9}, kFloat64)}, [](X x) { return log_softmax(x[0], 0); }),
      op("F_softmax_options", {kA}, [](X x) { return F::softmax(x[0], F::SoftmaxFuncOptions(0)); }),
      op("F_log_softmax_options", {kA}, [](X x) { return F::log_softmax(x[0], F::LogSoftmaxFuncOptions(-1)); }),

      op("layer_norm", {kBatch}, [](X x) { return layer_norm(x[0], {5}); }),
      op("layer_norm_affine", {kA, gamma, beta}, [](X x) { return layer_norm(x[0], {4}, x[1], x[2]); }),
      op("layer_norm_two_dims", {kBatch, normal({3, 5})}, [](X x) { return layer_norm(x[0], {3, 5}, x[1], Tensor(), 1e-3); }),
      op("layer_norm_f64", {normal({3, 8}, kFloat64)}, [](X x) { return layer_norm(x[0], {8}); }),
      op("F_layer_norm_options", {kA, gamma}, [](X x) { return F::layer_norm(x[0], F::LayerNormFuncOptions({4}).weight(x[1]).eps(1e-3)); }),

      withState("batch_norm_train", {kImage}, {normal({4}), runningVar},
                [](X x, Tensors s) { return batch_norm(x[0], s[0], s[1], Tensor(), Tensor(), true); }),
      withState("batch_norm_train_affine", {normal({6, 4}), gamma, beta}, {normal({4}), runningVar},
                [](X x, Tensors s) { return batch_norm(x[0], s[0], s[1], x[1], x[2], true, 0.3); }),
      op("batch_norm_train_no_running_stats", {kImage}, [](X x) { return batch_norm(x[0], Tensor(), Tensor(), Tensor(), Tensor(), true); }),
      withState("batch_norm_eval", {kImage, gamma, beta}, {normal({4}), runningVar},
                [](X x, Tensors s) { return batch_norm(x[0], s[0], s[1], x[1], x[2], false); }),
      op("batch_norm_eval_inputs", {kImage, channels4, runningVar}, [](X x) { return batch_norm(x[0], x[1], x[2]); }),
      withState("F_batch_norm_options", {kImage}, {normal({4}), runningVar},
                [](X x, Tensors s) { return F::batch_norm(x[0], s[0], s[1], F::BatchNormFuncOptions().training(true).momentum(0.5)); }),
  };
}

std::vector<OpCase> lossesAndDropout() {
  const Maker logits = normal({5, 4}), classes = ints(0, 4, {5});
  const Maker weight = positive({4});
  // Targets with the ignored class -1 mixed in.
  const Maker ignoring = ints(-1, 4, {5});
  return {
      op("cross_entropy", {logits, classes}, [](X x) { return cross_entropy(x[0], x[1]); }),
      op("cross_entropy_sum_weight", {logits, classes, weight}, [](X x) { return cross_entropy(x[0], x[1], Reduction::Sum, x[2]); }),
      op("cross_entropy_ignore_index", {logits, ignoring}, [](X x) { return cross_entropy(x[0], x[1], Reduction::Mean, Tensor(), -1); }),
      op("cross_entropy_none_spatial", {normal({2, 4, 3}), ints(0, 4, {2, 3})}, [](X x) { return cross_entropy(x[0], x[1], Reduction::None); }),
      op("cross_entropy_probabilities", {logits, positive({5, 4})}, [](X x) { return cross_entropy(x[0], x[1]); }),
      op("cross_entropy_single", {kRow, ints(0, 4, {})}, [](X x) { return cross_entropy(x[0], x[1]); }),
      op("F_cross_entropy_options", {logits, classes}, [](X x) { return F::cross_entropy(x[0], x[1], F::CrossEntropyFuncOptions().reduction(Reduction::Sum)); }),
      op("nll_loss", {logits, classes}, [](X x) { return nll_loss(log_softmax(x[0], 1), x[1]); }),
      op("nll_loss_weight_ignore", {logits, ignoring, weight}, [](X x) { return nll_loss(x[0], x[1], Reduction::Mean, x[2], -1); }),
      op("nll_loss_none", {logits, classes}, [](X x) { return nll_loss(x[0], x[1], Reduction::None); }),
      op("F_nll_loss_options", {logits, classes}, [](X x) { return F::nll_loss(x[0], x[1], F::NLLLossFuncOptions().ignore_index(2)); }),
      op("mse_loss", {kA, kB}, [](X x) { return mse_loss(x[0], x[1]); }),
      op("mse_loss_sum", {kA, kB}, [](X x) { return mse_loss(x[0], x[1], Reduction::Sum); }),
      op("mse_loss_none", {kA, kB}, [](X x) { return mse_loss(x[0], x[1], Reduction::None); }),
      op("F_mse_loss_options", {kA, kB}, [](X x) { return F::mse_loss(x[0], x[1], F::MSELossFuncOptions(Reduction::Sum)); }),

      op("dropout", {kA}, [](X x) { return dropout(x[0]); }),
      op("dropout_p02", {kImage}, [](X x) { return dropout(x[0], 0.2); }),
      op("dropout_f64", {normal(kMat, kFloat64)}, [](X x) { return dropout(x[0], 0.5); }),
      op("dropout_twice", {kA}, [](X x) { return dropout(dropout(x[0], 0.3), 0.6); }),
      op("dropout_eval", {kA}, [](X x) { return dropout(x[0], 0.5, false); }),
      op("dropout_p0", {kA}, [](X x) { return dropout(x[0], 0.0); }),
      op("dropout_p1", {kA}, [](X x) { return dropout(x[0], 1.0); }),
      op("F_dropout_options", {kA}, [](X x) { return F::dropout(x[0], F::DropoutFuncOptions().p(0.25)); }),
  };
}

std::vector<OpCase> viewsAndCopies() {
  const Maker cube = normal({2, 3, 4});
  return {
      op("identity", {kA}, [](X x) { return x[0]; }),
      op("reshape", {cube}, [](X x) { return x[0].reshape({6, -1}); }),
      op("view", {cube}, [](X x) { return x[0].view({4, 6}); }),
      op("flatten", {cube}, [](X x) { return x[0].flatten(1); }),
      op("flatten_scalar", {normal({})}, [](X x) { return x[0].flatten(); }),
      op("transpose", {cube}, [](X x) { return x[0].transpose(0, 2); }),
      op("t", {kA}, [](X x) { return x[0].t(); }),
      op("permute", {cube}, [](X x) { return x[0].permute({2, 0, 1}); }),
      op("expand", {normal({3, 1})}, [](X x) { return x[0].expand({2, 3, 4}); }),
      op("narrow", {cube}, [](X x) { return x[0].narrow(2, 1, 2); }),
      op("slice_step", {cube}, [](X x) { return x[0].slice(2, 0, 4, 2); }),
      op("slice_negative", {kA}, [](X x) { return x[0].slice(0, -2, 3); }),
      op("squeeze_dim", {normal({3, 1, 4})}, [](X x) { return x[0].squeeze(1); }),
      op("squeeze_all", {normal({1, 3, 1})}, [](X x) { return x[0].squeeze(); }),
      op("unsqueeze", {kA}, [](X x) { return x[0].unsqueeze(-1); }),
      op("contiguous", {kA}, [](X x) { return x[0].contiguous(); }),
      op("contiguous_transposed", {transposed(kMat)}, [](X x) { return x[0].contiguous(); }),
      op("clone", {kA}, [](X x) { return x[0].clone(); }),
      op("detach", {kA}, [](X x) { return mul(x[0], 2.0).detach(); }),
      op("view_chain_compute", {cube}, [](X x) { return exp(x[0].permute({1, 0, 2}).reshape({3, 8}).slice(1, 1, 7)); }),
      op("transposed_input_add", {transposed(kMat), kA}, [](X x) { return add(x[0], x[1]); }),
      op("transposed_input_sum", {transposed({5, 3})}, [](X x) { return sum(x[0], {0}); }),
      op("multiple_outputs_aliasing", {kA}, [](X x) { return std::make_tuple(x[0], x[0].t(), x[0].reshape({12})); }),
      op("same_output_twice", {kA}, [](X x) { Tensor y = exp(x[0]); return std::make_tuple(y, y); }),
  };
}

std::vector<OpCase> inPlace() {
  const Maker stateMat = normal(kMat);
  return {
      withState("state_add_", {kA}, {stateMat}, [](X x, Tensors s) { s[0].add_(x[0]); return mul(s[0], 2.0); }),
      withState("state_add_alpha", {kRow}, {stateMat}, [](X x, Tensors s) { s[0].add_(x[0], -0.5); return s[0].clone(); }),
      withState("state_sub_alpha", {kA}, {stateMat}, [](X x, Tensors s) { s[0].sub_(x[0], 3.0); return sum(s[0]); }),
      withState("state_mul_", {kA}, {stateMat}, [](X x, Tensors s) { s[0].mul_(x[0]); return add(s[0], x[0]); }),
      withState("state_div_", {kPos}, {stateMat}, [](X x, Tensors s) { s[0].div_(x[0]); return neg(s[0]); }),
      withState("state_add_scalar", {kA}, {stateMat}, [](X x, Tensors s) { s[0].add_(0.25); return add(x[0], s[0]); }),
      withState("state_mul_scalar", {kA}, {stateMat}, [](X x, Tensors s) { s[0].mul_(0.9); return add(x[0], s[0]); }),
      withState("state_copy_", {kRow}, {stateMat}, [](X x, Tensors s) { s[0].copy_(x[0]); return mul(x[0], 2.0); }),
      withState("state_copy_converts", {normal(kMat, kFloat64)}, {stateMat}, [](X x, Tensors s) { s[0].copy_(x[0]); return x[0]; }),
      withState("state_fill_", {kA}, {stateMat}, [](X x, Tensors s) { s[0].fill_(-2.0); return add(x[0], s[0]); }),
      withState("state_zero_", {kA}, {stateMat}, [](X x, Tensors s) { s[0].zero_(); return add(x[0], s[0]); }),
      withState("state_two_updates", {kA}, {stateMat, normal({4})},
                [](X x, Tensors s) { s[0].mul_(0.5).add_(x[0], 0.5); s[1].add_(sum(x[0], {0})); return std::make_tuple(s[0].clone(), s[1].clone()); }),
      withState("state_f64_from_f32", {kA}, {normal(kMat, kFloat64)}, [](X x, Tensors s) { s[0].add_(x[0]); return s[0].to(kFloat32); }),
      withState("state_read_only", {kA}, {stateMat}, [](X x, Tensors s) { return mul(x[0], s[0]); }),
      op("intermediate_add_", {kA, kB}, [](X x) { Tensor y = mul(x[0], 2.0); y.add_(x[1]); return y; }),
      op("clone_then_mul_", {kA, kRow}, [](X x) { Tensor y = x[0].clone(); y.mul_(x[1]).add_(1.0); return y; }),
      withState("state_returned_itself", {kA}, {stateMat}, [](X x, Tensors s) { s[0].add_(x[0]); return s[0]; }),
      withState("state_returned_as_view", {kA}, {stateMat}, [](X x, Tensors s) { s[0].mul_(x[0]); return s[0].t(); }),
      withState("state_reads_other_state", {kA}, {stateMat, normal(kMat)}, [](X x, Tensors s) { s[0].add_(s[1]); s[1].copy_(x[0]); return mul(s[0], s[1]); }),
      withState("state_int_add_", {normal(kMat, kInt64)}, {normal(kMat, kInt64)}, [](X x, Tensors s) { s[0].add_(x[0], 3.0); return s[0].clone(); }),
      withState("state_bool_copy_", {kSp}, {bools(kMat)}, [](X x, Tensors s) { s[0].copy_(x[0]); return logical_not(s[0]); }),
      withState("state_bf16_copy_", {kSp}, {normal({4}, kBFloat16)}, [](X x, Tensors s) { s[0].copy_(sum(x[0], {0})); return s[0].clone(); }),
      withState("state_bool_add_", {bools(kMat)}, {bools(kMat)}, [](X x, Tensors s) { s[0].add_(x[0]); return s[0].clone(); }),
      withState("state_bool_mul_", {bools(kMat)}, {bools(kMat)}, [](X x, Tensors s) { s[0].mul_(x[0]); return s[0].clone(); }),
      withState("state_bf16_fill_", {kA}, {normal(kMat, kBFloat16)}, [](X x, Tensors s) { s[0].fill_(0.1); return add(x[0], s[0]); }),
      withState("state_f16_zero_then_add_", {kA}, {normal(kMat, kFloat16)}, [](X x, Tensors s) { s[0].zero_().add_(x[0]); return s[0].clone(); }),
      withState("state_copy_from_0d", {normal({})}, {stateMat}, [](X x, Tensors s) { s[0].copy_(x[0]); return s[0].clone(); }),
      withState("state_0d_counter", {kA}, {normal({})}, [](X x, Tensors s) { s[0].add_(1.0); return mul(x[0], s[0]); }),
      // A square state updated with its own transpose: the kernel reads the state where
      // another element is written, so the update cannot be written over it in place.
      withState("state_add_own_transpose", {normal({8, 8})}, {normal({8, 8})},
                [](X x, Tensors s) { s[0].add_(mul(s[0], 0.5).t()); return add(x[0], s[0]); }),
  };
}

// Sizes at the edges: no elements, no dims, and enough elements for the kernels' threaded
// and vectorized paths.
std::vector<OpCase> edgeSizes() {
  const Maker empty = normal({0, 4}), scalar = normal({});
  const Maker big = normal({1 << 20}), wide = normal({64, 1000});
  return {
      op("empty_add", {empty, kRow}, [](X x) { return add(x[0], x[1]); }),
      op("empty_sum_dim0", {empty}, [](X x) { return sum(x[0], {0}); }),
      op("empty_softmax", {empty}, [](X x) { return softmax(x[0], 1); }),
      op("empty_cat", {empty, kA}, [](X x) { return cat({x[0], x[1]}); }),
      op("empty_matmul", {empty, normal({4, 2})}, [](X x) { return matmul(x[0], x[1]); }),
      op("scalar_add", {scalar, scalar}, [](X x) { return add(x[0], x[1]); }),
      op("scalar_broadcast", {scalar, kA}, [](X x) { return mul(x[0], x[1]); }),
      op("scalar_sum", {scalar}, [](X x) { return sum(x[0]); }),
      op("scalar_reshape", {scalar}, [](X x) { return x[0].reshape({1, 1}); }),
      op("big_exp", {big}, [](X x) { return exp(x[0]); }),
      op("big_sum", {big}, [](X x) { return sum(x[0]); }),
      op("big_mean_var", {normal({1024, 1024})}, [](X x) { return std::make_tuple(mean(x[0], {0}), var(x[0], {1})); }),
      op("big_dropout", {big}, [](X x) { return dropout(x[0], 0.1); }),
      op("big_gelu_tanh", {big}, [](X x) { return gelu(x[0], "tanh"); }),
      op("big_softmax", {wide}, [](X x) { return softmax(x[0], 1); }),
      op("big_log_softmax_dim0", {wide}, [](X x) { return log_softmax(x[0], 0); }),
      op("big_layer_norm", {wide, normal({1000}), normal({1000})}, [](X x) { return layer_norm(x[0], {1000}, x[1], x[2]); }),
      op("big_matmul", {normal({128, 256}), normal({256, 64})}, [](X x) { return matmul(x[0], x[1]); }),
      op("big_conv2d", {normal({4, 16, 32, 32}), normal({32, 16, 3, 3}), normal({32})},
         [](X x) { return conv2d(x[0], x[1], x[2], {1}, {1}); }),
      op("big_max_pool2d", {normal({4, 16, 32, 32})}, [](X x) { return max_pool2d(x[0], {3}, {2}, {1}); }),
      op("big_cross_entropy", {wide, ints(0, 1000, {64})}, [](X x) { return cross_entropy(x[0], x[1]); }),
  };
}

// Aliasing the key cannot see: inputs that share memory with each other or with state on
// the recording call. (Writes to state that aliases other state are TraceErrors.)
std::vector<OpCase> aliasing() {
  return {
      onFirstCall(op("input_passed_twice_when_recording", {kA, kB}, [](X x) { return add(x[0], mul(x[1], 2.0)); }),
                  [](Tensors& in, const Tensors&) { in[1] = in[0]; }),
      onFirstCall(op("input_view_of_other_input_when_recording", {kA, kB}, [](X x) { return sub(x[0], x[1]); }),
                  [](Tensors& in, const Tensors&) { in[1] = in[0].reshape({12}).reshape(kMat); }),
      onFirstCall(withState("input_is_state_when_recording", {kA}, {normal(kMat)}, [](X x, Tensors s) { return mul(x[0], add(s[0], 1.0)); }),
                  [](Tensors& in, const Tensors& s) { in[0] = s[0]; }),
      op("layout_changes_add", {layoutChanging(kMat), kB}, [](X x) { return add(x[0], x[1]); }),
      op("layout_changes_sum", {layoutChanging({2, 3, 4})}, [](X x) { return sum(x[0], {1}); }),
      op("layout_changes_matmul", {layoutChanging(kMat), normal({4, 2})}, [](X x) { return matmul(x[0], x[1]); }),
      op("layout_changes_softmax", {layoutChanging({5, 7})}, [](X x) { return softmax(x[0], 1); }),
      op("layout_changes_layer_norm", {layoutChanging({5, 7})}, [](X x) { return layer_norm(x[0], {7}); }),
      op("layout_changes_conv2d", {layoutChanging({2, 4, 6, 6}), normal({3, 4, 3, 3})}, [](X x) { return conv2d(x[0], x[1]); }),
      op("layout_changes_max_pool2d", {layoutChanging({2, 4, 6, 6})}, [](X x) { return max_pool2d(x[0], {2}); }),
      op("layout_changes_reshape", {layoutChanging(kMat)}, [](X x) { return exp(x[0].reshape({12})); }),
      op("layout_changes_contiguous", {layoutChanging(kMat)}, [](X x) { return x[0].contiguous(); }),
      op("layout_changes_gather", {layoutChanging({6, 3}), ints(0, 3, {6, 2})}, [](X x) { return gather(x[0], 1, x[1]); }),
      op("layout_changes_contiguous_matmul", {layoutChanging({64, 512}), normal({512, 48})}, [](X x) { return matmul(x[0].contiguous(), x[1]); }),
      op("transposed_contiguous_matmul", {transposed({64, 512}), normal({512, 48})}, [](X x) { return matmul(x[0].contiguous(), x[1]); }),
      op("transposed_matmul_big", {transposed({64, 512}), transposed({512, 48})}, [](X x) { return matmul(x[0], x[1]); }),
      op("layout_changes_contiguous_conv2d", {layoutChanging({2, 32, 12, 12}), normal({16, 32, 3, 3})}, [](X x) { return conv2d(x[0].contiguous(), x[1]); }),
      op("layout_changes_conv2d_weight", {normal({2, 32, 12, 12}), layoutChanging({16, 32, 3, 3})}, [](X x) { return conv2d(x[0], x[1]); }),
      op("layout_changes_contiguous_sum", {layoutChanging({300, 200})}, [](X x) { return sum(x[0].contiguous(), {0}); }),
      op("layout_changes_big_sum", {layoutChanging({300, 200})}, [](X x) { return std::make_tuple(sum(x[0], {0}), sum(x[0], {1}), mean(x[0])); }),
      op("layout_changes_big_softmax", {layoutChanging({300, 200})}, [](X x) { return std::make_tuple(softmax(x[0], 0), log_softmax(x[0], 1)); }),
      op("layout_changes_cat", {layoutChanging(kMat), kB}, [](X x) { return cat({x[0], x[1]}, 1); }),
  };
}

// Programs that once gave wrong answers compiled, each kept as found.
std::vector<OpCase> regressions() {
  std::vector<OpCase> cases;
  // Issue 19, case 1: an elementwise producer fused into layer_norm's row kernel read
  // garbage (NaN, 1e37) for rows whose length is not a multiple of the vector width.
  for (Shape shape : {Shape{5, 1, 20}, Shape{5, 20}, Shape{1, 5, 20}, Shape{5, 2, 20}, Shape{3, 1, 18},
                      Shape{2, 1, 1, 33}, Shape{4, 1, 64}}) {
    std::string name = "layer_norm_of_fused_chain";
    for (int64_t d : shape) name += "_" + std::to_string(d);
    const int64_t n = shape.back();
    cases.push_back(op(name, {normal(shape), normal(shape)}, [n](X x) {
      return layer_norm(add(x[1], add(mul(x[0], -1.5), 0.25)), {n});
    }));
  }
  // Found by kiln-fuzz (tools/kiln-fuzz/FINDINGS.md), as it printed them. A strided
  // slice's copy lowered to MLIR's memrefCopy, which the JIT did not provide (2554, 2480).
  cases.push_back(op("fuzz_2554_layer_norm_of_log_softmax", {normal({4, 6, 8, 7})}, [](X x) {
    return layer_norm(log_softmax(x[0], 3), {8, 7});
  }));
  cases.push_back(withState("fuzz_2480_two_layer_norms_then_conv2d",
                            {normal({4, 17, 2, 3}), normal({3}), normal({3}), normal({2, 3}), positive({2, 3})},
                            {normal({2, 17, 1, 1})}, [](X x, Tensors s) {
    Tensor v3 = layer_norm(x[0], {3}, x[1], x[2]);
    Tensor v6 = layer_norm(v3, {2, 3}, x[3], x[4]);
    return conv2d(mul(v6, 0.25), s[0], Tensor(), {2}, {1}, {1}, 1);
  }));
  // kiln-tile-rows crashed on row ops' backward with two costly producers (1074, 2444).
  auto trainable = [](Shape shape, bool positiveValues = false) -> Maker {
    return [shape, positiveValues](uint64_t seed) {
      return (positiveValues ? positive(shape) : normal(shape))(seed).requires_grad_();
    };
  };
  cases.push_back(withState("fuzz_1074_softmax_backward", {normal({1, 20, 1, 6})},
                            {trainable({2, 20, 8, 6}), normal({2, 20, 8, 6})}, [](X x, Tensors s) {
    optim::SGD(Tensors{s[0]}, optim::SGDOptions(0.1)).zero_grad(/*set_to_none=*/true);
    Tensor v5 = div(softmax(s[0], 3), add(abs(x[0]), 0.5));
    sum(mul(v5, s[1])).backward();
    return Tensors{v5, s[0].grad()};
  }));
  cases.push_back(withState("fuzz_2444_layer_norm_backward", {normal({6}), positive({6})},
                            {trainable({6, 6}), trainable({6}, true), normal({6, 6})}, [](X x, Tensors s) {
    optim::SGD(Tensors{s[0], s[1]}, optim::SGDOptions(0.1)).zero_grad(/*set_to_none=*/true);
    Tensor v4 = layer_norm(abs(s[0]), {6}, s[1], x[0]);
    Tensor v8 = div(mul(v4, 0.5), add(x[1], 0.5));
    sum(mul(v8, s[2])).backward();
    return Tensors{v8, s[0].grad(), s[1].grad()};
  }));
  // A symbolic trace gave a transposed placeholder contiguous strides, so contiguous() of
  // it recorded nothing and the gradient contributions met in another order than eagerly:
  // the float32 gradient differed from eager in the last bits under INTERP (108071).
  cases.push_back(withState("fuzz_108071_contiguous_of_transposed_parameter",
                            {normal({3, 1, 6}, kFloat64), positive({6}), normal({6})},
                            {trainable({13, 3, 5, 6}, true), normal({5, 3, 13, 6}),
                             normal({5, 3, 13, 6}, kFloat64)},
                            [](X x, Tensors s) {
    optim::SGD(Tensors{s[0]}, optim::SGDOptions(0.1)).zero_grad(/*set_to_none=*/true);
    Tensor v1 = s[0].transpose(2, 0);
    Tensor v4 = mul(v1, x[0]);
    Tensor v7 = layer_norm(v1.contiguous(), {6}, x[1], x[2]);
    (sum(mul(v7, s[1])) + sum(mul(v4, s[2]))).backward();
    return Tensors{v7, v4, s[0].grad()};
  }));
  // A float32 matmul of a column sliced with step 2 (stride 2 on its size-1 dim): oneDNN
  // refused the layout, eagerly (218878). A float64 product plus a [1] bias broadcast
  // over its 33 columns became an addmm its verifier rejects, compiled (217693).
  cases.push_back(op("fuzz_218878_matmul_of_strided_column", {positive({33, 1}), normal({1, 33})},
                     [](X x) { return matmul(x[0].slice(-1, -1, 1, 2), x[1]); }));
  // A float32 batched matmul of rows sliced with step 3: batch stride 121 below the 4 x 33
  // the sliced rows span; oneDNN could not describe it (223643, in the fuzzer's float32 run).
  cases.push_back(op("fuzz_223643_matmul_of_rows_sliced_with_a_step",
                     {normal({2, 11, 11, 1}), normal({2, 4, 1, 5})},
                     [](X x) { return matmul(x[0].slice(-3, -11, 10, 3), x[1]); }));
  // maximum(x.to(f32), x) of a float64 x is max(x, x) once the conversion round trip
  // folds: the fused kernel returned one buffer twice, and MLIR's out-parameter pass
  // crashed on it (a segfault while compiling, 227268).
  cases.push_back(withState("fuzz_227268_kernel_returning_one_value_twice",
                            {normal({7, 4, 8}), normal({4, 13}, kFloat64)}, {normal({7, 8, 2}, kFloat64)},
                            [](X x, Tensors s) {
    Tensor v1 = x[0].to(kFloat64);
    Tensor v4 = maximum(v1.to(kFloat32), v1).reshape({7, 4, -1, 4});
    return Tensors{matmul(v4, x[1]), matmul(v1, s[0])};
  }));
  cases.push_back(withState("fuzz_217693_matmul_plus_one_bias_value",
                            {positive({1}), normal({6, 8}, kFloat64)},
                            {normal({8, 33}, kFloat64)}, [](X x, Tensors s) {
    return Tensors{add(matmul(x[1], s[0]), x[0])};
  }));
  // conv2d of every third column of [11,5,1,5]: strides oneDNN calls overlapping (dim 1's 5
  // below dim 3's 3 x 2); eager conv2d failed with "could not construct a memory descriptor
  // using strides" (found by the HALIDE fuzz run, 400002).
  cases.push_back(op("fuzz_400002_conv2d_of_a_strided_slice",
                     {normal({11, 5, 1, 5}), normal({3, 5, 3, 3}), normal({3})}, [](X x) {
    return conv2d(x[0].slice(3, 1, 5, 3), x[1], x[2], {2}, {1}, {1}, 1);
  }));
  // A state read before and after its in-place update, the two reads multiplied:
  // -s * (0.75 s + 0.25 t). MLIR's program gave wrong values on every call after the
  // recording (found by kiln-fuzz --in-place, 800209).
  cases.push_back(withState("fuzz_800209_state_read_before_and_after_its_update", {},
                            {normal({17, 7}), normal({17, 7})}, [](X, Tensors s) {
    Tensor before = neg(s[0]);
    s[0].mul_(0.75).add_(s[1], 0.25);
    return Tensors{mul(before, s[0])};
  }));
  // A state overwritten in place with tanh of itself, and another result computed from the
  // new state: HALIDE's Tuple of both, vectorized 128 floats a step, gave the tail past 896
  // wrong values (Halide takes buffers not to alias; found by kiln-fuzz --in-place, 800031).
  cases.push_back(withState("fuzz_800031_state_copied_in_place_beside_another_result", {},
                            {normal({1020}), normal({1020})}, [](X, Tensors s) {
    s[0].copy_(tanh(s[0]));
    return Tensors{mul(s[1], s[0])};
  }));
  cases.push_back(op("layer_norm_of_broadcast_chain", {normal({5, 1, 20}), normal({5, 20})}, [](X x) {
    return layer_norm(add(x[1], add(mul(x[0], -1.5), 0.25)), {20});
  }));
  return cases;
}

std::vector<OpCase> build() {
  std::vector<OpCase> all;
  for (auto family : {factories, elementwise, activationsAndConversions, reductions, linalgAndJoins,
                      indexing, convolutionAndPooling, normalizationAndSoftmax, lossesAndDropout,
                      viewsAndCopies, inPlace, edgeSizes, aliasing, regressions}) {
    std::vector<OpCase> cases = family();
    all.insert(all.end(), cases.begin(), cases.end());
  }
  return all;
}

}  // namespace

const std::vector<OpCase>& allCases() {
  static const std::vector<OpCase> kAll = build();
  return kAll;
}

}  // namespace kiln::e2e
