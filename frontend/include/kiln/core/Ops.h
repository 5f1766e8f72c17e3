// Tensor ops as free functions and operators (torch::add, torch::exp, a + b, ...). Each
// inserts the explicit dtype conversions and broadcasts the dialect needs, then dispatches
// a primitive op from the op table (OpTable.h).
#pragma once

#include <concepts>
#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kiln/core/Tensor.h"

namespace kiln {

// ---- factories ------------------------------------------------------------------------
Tensor empty(Shape shape, TensorOptions options = {}, const SourceLoc& loc = SourceLoc::current());
Tensor full(Shape shape, double value, TensorOptions options = {},
            const SourceLoc& loc = SourceLoc::current());
Tensor zeros(Shape shape, TensorOptions options = {}, const SourceLoc& loc = SourceLoc::current());
Tensor ones(Shape shape, TensorOptions options = {}, const SourceLoc& loc = SourceLoc::current());
Tensor zeros_like(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
Tensor ones_like(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
Tensor full_like(const Tensor& x, double value, const SourceLoc& loc = SourceLoc::current());
// A 0-d tensor holding `value` (how scalar operands enter the graph).
Tensor scalar_tensor(double value, DType dtype = kFloat32,
                     const SourceLoc& loc = SourceLoc::current());
// Copies `values` into a new tensor of `shape` (default: 1-d).
template <Arithmetic T>
Tensor tensor(const std::vector<T>& values, std::optional<Shape> shape = std::nullopt,
              const SourceLoc& loc = SourceLoc::current());
namespace detail {
// A scalar or a braced list of them, nested to any depth: torch::tensor's argument
// (LibTorch's TensorDataContainer). A ragged list is recorded, and tensor() reports it.
class TensorDataContainer {
 public:
  template <Arithmetic T>
  TensorDataContainer(T value) : values_{Scalar(value)}, kind_(scalarKindOf<T>()) {}  // NOLINT
  TensorDataContainer(std::initializer_list<TensorDataContainer> list);                  // NOLINT
  const Shape& shape() const { return shape_; }
  const std::vector<Scalar>& values() const { return values_; }
  // The highest kind among the values (bool < integral < floating).
  ScalarKind kind() const { return kind_; }
  const std::string& error() const { return error_; }

 private:
  Shape shape_;
  std::vector<Scalar> values_;
  ScalarKind kind_;
  std::string error_;
};
// x with requires_grad set when the options ask for it.
Tensor withRequiresGrad(Tensor x, const TensorOptions& options, const SourceLoc& loc);
}  // namespace detail
// torch::tensor({1.0, 2.0}), tensor({{1, 2}, {3, 4}}), tensor(3.5): the shape is the lists'
// nesting. Without a dtype, floating values make float32, integers int64, bools bool (a
// mix takes the highest kind).
Tensor tensor(const detail::TensorDataContainer& data, TensorOptions options = {},
              const SourceLoc& loc = SourceLoc::current());
namespace detail {
Tensor arangeImpl(double start, double end, double step, DType dtype, const SourceLoc& loc);
}  // namespace detail

// [start, end) in steps of `step`. As torch.arange, the argument types pick the dtype:
// int64 when all are integers, else the default float dtype.
template <Arithmetic A, Arithmetic B, Arithmetic C = int64_t>
Tensor arange(A start, B end, C step = 1, std::optional<DType> dtype = std::nullopt,
              const SourceLoc& loc = SourceLoc::current()) {
  constexpr bool integral = std::is_integral_v<A> && std::is_integral_v<B> && std::is_integral_v<C>;
  return detail::arangeImpl(double(start), double(end), double(step),
                            dtype.value_or(integral ? kInt64 : kDefaultFloat), loc);
}
Tensor arange(int64_t end, const SourceLoc& loc = SourceLoc::current());
Tensor linspace(double start, double end, int64_t steps, DType dtype = kFloat32,
                const SourceLoc& loc = SourceLoc::current());
// Random tensors from the default Philox generator (manual_seed), advancing its offset;
// recorded as kiln.rng so a trace draws the same stream.
// On a CUDA device the values are drawn as on the CPU and copied there, so a seed gives the
// same numbers on every device.
Tensor rand(Shape shape, TensorOptions options = {}, const SourceLoc& loc = SourceLoc::current());
Tensor randn(Shape shape, TensorOptions options = {}, const SourceLoc& loc = SourceLoc::current());
Tensor randint(int64_t low, int64_t high, Shape shape, TensorOptions options = {},
               const SourceLoc& loc = SourceLoc::current());
// 1 with probability p, else 0, in `dtype` (dropout masks).
Tensor bernoulli(Shape shape, double p, TensorOptions options = {},
                 const SourceLoc& loc = SourceLoc::current());
// Views memory the caller owns and keeps alive; no copy.
Tensor from_blob(void* data, Shape shape, DType dtype = kFloat32,
                 const SourceLoc& loc = SourceLoc::current());

// ---- elementwise ----------------------------------------------------------------------
#define KILN_UNARY_OP(name) Tensor name(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
KILN_FOR_EACH_UNARY_OP(KILN_UNARY_OP)
#undef KILN_UNARY_OP

#define KILN_BINARY_OP(name) \
  Tensor name(const Tensor& a, const Tensor& b, const SourceLoc& loc = SourceLoc::current());
KILN_BINARY_OP(add)
KILN_BINARY_OP(sub)
KILN_BINARY_OP(logical_and)
KILN_BINARY_OP(logical_or)
KILN_FOR_EACH_SCALAR_BINARY_OP(KILN_BINARY_OP)
#undef KILN_BINARY_OP

// cond ? a : b elementwise, with broadcasting and promotion of a and b.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b,
             const SourceLoc& loc = SourceLoc::current());
// A tensor with the same values converted to `dtype`.
Tensor convert(const Tensor& x, DType dtype, const SourceLoc& loc = SourceLoc::current());

// A binary op with a scalar: the scalar takes the tensor's dtype unless its kind is higher
// (PyTorch's rule: int tensor * 0.5 is float32). Integral scalars keep all 64 bits when
// the result is integral (2^53 + 1 stays exact).
Tensor scalarOperand(const Tensor& like, const Scalar& value, const SourceLoc& loc);
namespace detail {
Tensor fullExact(Shape shape, int64_t value, DType dtype, const SourceLoc& loc);
}  // namespace detail

// An integer fill keeps all 64 bits and, as torch.full, defaults to int64.
template <std::integral I>
  requires(!std::is_same_v<I, bool>)
Tensor full(Shape shape, I value, DType dtype = kInt64, const SourceLoc& loc = SourceLoc::current()) {
  return detail::fullExact(std::move(shape), int64_t(value), dtype, loc);
}

#define KILN_SCALAR_OVERLOADS(name)                                                         \
  inline Tensor name(const Tensor& a, const Scalar& b, const SourceLoc& loc = SourceLoc::current()) { \
    return name(a, scalarOperand(a, b, loc), loc);                                            \
  }                                                                                           \
  inline Tensor name(const Scalar& a, const Tensor& b, const SourceLoc& loc = SourceLoc::current()) { \
    return name(scalarOperand(b, a, loc), b, loc);                                            \
  }
KILN_SCALAR_OVERLOADS(add)
KILN_SCALAR_OVERLOADS(sub)
KILN_FOR_EACH_SCALAR_BINARY_OP(KILN_SCALAR_OVERLOADS)
#undef KILN_SCALAR_OVERLOADS

// Each operator reports the user's line through Located (Tensor.h).
#define KILN_OPERATOR(op, fn)                                                                     \
  inline Tensor operator op(const Tensor& a, Located b) { return fn(a, b.tensor, b.loc); }        \
  inline Tensor operator op(Located a, const Scalar& b) { return fn(a.tensor, b, a.loc); }        \
  inline Tensor operator op(const Scalar& a, Located b) { return fn(a, b.tensor, b.loc); }
KILN_OPERATOR(+, add)
KILN_OPERATOR(-, sub)
KILN_OPERATOR(*, mul)
KILN_OPERATOR(/, div)
KILN_OPERATOR(==, eq)
KILN_OPERATOR(!=, ne)
KILN_OPERATOR(<, lt)
KILN_OPERATOR(<=, le)
KILN_OPERATOR(>, gt)
KILN_OPERATOR(>=, ge)
#undef KILN_OPERATOR
inline Tensor operator-(Located x) { return neg(x.tensor, x.loc); }

// ---- joining ---------------------------------------------------------------------------
// Concatenates along `dim`; dtypes are promoted to a common one.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0,
           const SourceLoc& loc = SourceLoc::current());
// Joins equally shaped tensors along a new dim.
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0,
             const SourceLoc& loc = SourceLoc::current());

// ---- indexing ----------------------------------------------------------------------
// numpy.take along `dim` (kiln.gather): result shape x[:dim] ++ indices ++ x[dim+1:].
Tensor take(const Tensor& x, const Tensor& indices, int64_t dim,
            const SourceLoc& loc = SourceLoc::current());
// torch.index_select: `index` is 1-d.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index,
                    const SourceLoc& loc = SourceLoc::current());
// torch.index_add: x with source[.., i, ..] added at x[.., index[i], ..] along `dim`
// (repeated indices accumulate); `index` is 0-d or 1-d, `source` has x's dtype and shape
// except index.numel() entries along `dim`.
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source,
                 const SourceLoc& loc = SourceLoc::current());
// torch.gather: out[i][j] = x[index[i][j]][j] for dim 0, etc.; index has x's rank.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index,
              const SourceLoc& loc = SourceLoc::current());
// The positions of x's nonzero elements in row-major order, int64 [n, x.dim()]. The
// shape depends on the values, so this reads them (a symbolic trace cannot record it).
Tensor nonzero(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
// Position of the maximum along `dim` (first on ties), int64.
// Without a dim, the position in the flattened tensor (a 0-d result).
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
              const SourceLoc& loc = SourceLoc::current());
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
              const SourceLoc& loc = SourceLoc::current());

// ---- linear algebra (oneDNN) --------------------------------------------------------
// torch.matmul: 1-d operands promote to matrices, batch dims broadcast.
Tensor matmul(const Tensor& a, const Tensor& b, const SourceLoc& loc = SourceLoc::current());
Tensor mm(const Tensor& a, const Tensor& b, const SourceLoc& loc = SourceLoc::current());
// torch.addmm(bias, a, b) with a 1-d bias: a @ b plus bias added to every row, in one
// oneDNN call for f32 (the bias as the product's epilogue).
Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b,
             const SourceLoc& loc = SourceLoc::current());
Tensor bmm(const Tensor& a, const Tensor& b, const SourceLoc& loc = SourceLoc::current());

// ---- convolution and pooling (NCHW, OIHW; oneDNN) ---------------------------------------
// Sizes take one value (both dims) or two (height, width), as torch.nn.functional.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              Shape stride = {1}, Shape padding = {0}, Shape dilation = {1}, int64_t groups = 1,
              const SourceLoc& loc = SourceLoc::current());
// The adjoint of conv2d (torch.conv_transpose2d, LibTorch's argument order): weight is
// [C_in, C_out / groups, kH, kW], the output's size (H - 1)·stride - 2·padding +
// dilation·(kH - 1) + output_padding + 1, output_padding < max(stride, dilation). Composed
// of conv2d and views, so autograd and the tracer see those.
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
                        Shape stride = {1}, Shape padding = {0}, Shape output_padding = {0},
                        int64_t groups = 1, Shape dilation = {1},
                        const SourceLoc& loc = SourceLoc::current());
// stride {} means stride = kernel size. Sizes are Dims, so `max_pool2d(x, 2)` reads as
// LibTorch's.
Tensor max_pool2d(const Tensor& x, Dims kernel, Dims stride = {}, Dims padding = {0},
                  const SourceLoc& loc = SourceLoc::current());
Tensor avg_pool2d(const Tensor& x, Dims kernel, Dims stride = {}, Dims padding = {0},
                  const SourceLoc& loc = SourceLoc::current());
Tensor adaptive_avg_pool2d(const Tensor& x, Shape output, const SourceLoc& loc = SourceLoc::current());

// ---- reductions -----------------------------------------------------------------------
// Over `dims` (all dims when empty), as torch.sum(x, dims, keepdim).
Tensor sum(const Tensor& x, Dims dims = {}, bool keepdim = false,
           const SourceLoc& loc = SourceLoc::current());
Tensor mean(const Tensor& x, Dims dims = {}, bool keepdim = false,
            const SourceLoc& loc = SourceLoc::current());
Tensor amax(const Tensor& x, Dims dims = {}, bool keepdim = false,
            const SourceLoc& loc = SourceLoc::current());
Tensor amin(const Tensor& x, Dims dims = {}, bool keepdim = false,
            const SourceLoc& loc = SourceLoc::current());
Tensor prod(const Tensor& x, Dims dims = {}, bool keepdim = false,
            const SourceLoc& loc = SourceLoc::current());

// LibTorch's max/min: of all elements; (values, indices) along a dim; or elementwise.
Tensor max(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
Tensor min(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
Tensor max(const Tensor& a, const Tensor& b, const SourceLoc& loc = SourceLoc::current());
Tensor min(const Tensor& a, const Tensor& b, const SourceLoc& loc = SourceLoc::current());
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false,
                               const SourceLoc& loc = SourceLoc::current());
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false,
                               const SourceLoc& loc = SourceLoc::current());

// Sums `grad` (of a broadcast result) back to `shape`: the gradient of a broadcast.
Tensor sum_to(const Tensor& grad, const Shape& shape, const SourceLoc& loc = SourceLoc::current());

}  // namespace kiln
