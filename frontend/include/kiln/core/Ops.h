// Tensor ops as free functions and operators (torch::add, torch::exp, a + b, ...). Each
// inserts the explicit dtype conversions and broadcasts the dialect needs, then dispatches
// a primitive op from the op table (OpTable.h).
#pragma once

#include <concepts>
#include <optional>
#include <tuple>
#include <vector>

#include "kiln/core/Tensor.h"

namespace kiln {

template <class S>
concept Scalar = std::is_arithmetic_v<S>;

// ---- factories ------------------------------------------------------------------------
// torch::TensorOptions: the dtype and device a factory makes its tensor with. It converts
// from either alone, so zeros({2}, kFloat64), randn({4}, kCUDA) and
// zeros({2}, TensorOptions().dtype(kHalf).device(kCUDA)) read as in LibTorch. A factory
// given no dtype uses its own default (float32; int64 for randint); given no device, the CPU.
class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(DType dtype) : dtype_(dtype) {}
  TensorOptions(DeviceType type) : device_(type) {}
  TensorOptions(Device device) : device_(device) {}
  TensorOptions dtype(DType dtype) const { TensorOptions o = *this; o.dtype_ = dtype; return o; }
  TensorOptions device(Device device) const { TensorOptions o = *this; o.device_ = device; return o; }
  DType dtype_or(DType fallback) const { return dtype_.value_or(fallback); }
  // The device given, else the factory device: the CPU, or inside an op on a CUDA tensor
  // that tensor's device (detail::FactoryDeviceGuard), so zeros(shape, x.dtype()) in a
  // gradient lands where x is.
  Device device() const { return device_.value_or(detail::factoryDevice()); }

 private:
  std::optional<DType> dtype_;
  std::optional<Device> device_;
};

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
template <Scalar T>
Tensor tensor(const std::vector<T>& values, std::optional<Shape> shape = std::nullopt,
              const SourceLoc& loc = SourceLoc::current());
namespace detail {
Tensor arangeImpl(double start, double end, double step, DType dtype, const SourceLoc& loc);
}  // namespace detail

// [start, end) in steps of `step`. As torch.arange, the argument types pick the dtype:
// int64 when all are integers, else the default float dtype.
template <Scalar A, Scalar B, Scalar C = int64_t>
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
KILN_UNARY_OP(neg)
KILN_UNARY_OP(abs)
KILN_UNARY_OP(exp)
KILN_UNARY_OP(log)
KILN_UNARY_OP(sqrt)
KILN_UNARY_OP(rsqrt)
KILN_UNARY_OP(tanh)
KILN_UNARY_OP(sigmoid)
KILN_UNARY_OP(relu)
KILN_UNARY_OP(sin)
KILN_UNARY_OP(cos)
KILN_UNARY_OP(floor)
KILN_UNARY_OP(logical_not)
#undef KILN_UNARY_OP

#define KILN_BINARY_OP(name) \
  Tensor name(const Tensor& a, const Tensor& b, const SourceLoc& loc = SourceLoc::current());
KILN_BINARY_OP(add)
KILN_BINARY_OP(sub)
KILN_BINARY_OP(mul)
KILN_BINARY_OP(div)
KILN_BINARY_OP(pow)
KILN_BINARY_OP(maximum)
KILN_BINARY_OP(minimum)
KILN_BINARY_OP(logical_and)
KILN_BINARY_OP(logical_or)
KILN_BINARY_OP(eq)
KILN_BINARY_OP(ne)
KILN_BINARY_OP(lt)
KILN_BINARY_OP(le)
KILN_BINARY_OP(gt)
KILN_BINARY_OP(ge)
#undef KILN_BINARY_OP

// cond ? a : b elementwise, with broadcasting and promotion of a and b.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b,
             const SourceLoc& loc = SourceLoc::current());
// A tensor with the same values converted to `dtype`.
Tensor convert(const Tensor& x, DType dtype, const SourceLoc& loc = SourceLoc::current());

// A binary op with a scalar: the scalar takes the tensor's dtype unless its kind is higher
// (PyTorch's rule: int tensor * 0.5 is float32).
Tensor scalarOperand(const Tensor& like, double value, ScalarKind kind, const SourceLoc& loc);
Tensor scalarOperand(const Tensor& like, int64_t value, ScalarKind kind, const SourceLoc& loc);
namespace detail {
Tensor fullExact(Shape shape, int64_t value, DType dtype, const SourceLoc& loc);
}  // namespace detail

// An integer fill keeps all 64 bits and, as torch.full, defaults to int64.
template <std::integral I>
  requires(!std::is_same_v<I, bool>)
Tensor full(Shape shape, I value, DType dtype = kInt64, const SourceLoc& loc = SourceLoc::current()) {
  return detail::fullExact(std::move(shape), int64_t(value), dtype, loc);
}

namespace detail {
template <Scalar S>
auto scalarValue(S s) {
  if constexpr (std::is_integral_v<S> && !std::is_same_v<S, bool>) return int64_t(s);
  else return double(s);
}
}  // namespace detail

#define KILN_SCALAR_OVERLOADS(name)                                                    \
  template <Scalar S>                                                                  \
  Tensor name(const Tensor& a, S b, const SourceLoc& loc = SourceLoc::current()) {     \
    return name(a, scalarOperand(a, detail::scalarValue(b), scalarKindOf<S>(), loc), loc); \
  }                                                                                    \
  template <Scalar S>                                                                  \
  Tensor name(S a, const Tensor& b, const SourceLoc& loc = SourceLoc::current()) {     \
    return name(scalarOperand(b, detail::scalarValue(a), scalarKindOf<S>(), loc), b, loc); \
  }
KILN_SCALAR_OVERLOADS(add)
KILN_SCALAR_OVERLOADS(sub)
KILN_SCALAR_OVERLOADS(mul)
KILN_SCALAR_OVERLOADS(div)
KILN_SCALAR_OVERLOADS(pow)
KILN_SCALAR_OVERLOADS(maximum)
KILN_SCALAR_OVERLOADS(minimum)
KILN_SCALAR_OVERLOADS(eq)
KILN_SCALAR_OVERLOADS(ne)
KILN_SCALAR_OVERLOADS(lt)
KILN_SCALAR_OVERLOADS(le)
KILN_SCALAR_OVERLOADS(gt)
KILN_SCALAR_OVERLOADS(ge)
#undef KILN_SCALAR_OVERLOADS

// An operator has no room for a source_location parameter, so one operand converts
// through Located, whose constructor's default argument is evaluated at the operator
// expression: `a + b` reports the user's line, not this header's.
struct Located {
  Located(const Tensor& tensor, const SourceLoc& loc = SourceLoc::current())
      : tensor(tensor), loc(loc) {}
  const Tensor& tensor;
  SourceLoc loc;
};

#define KILN_OPERATOR(op, fn)                                                              \
  inline Tensor operator op(const Tensor& a, Located b) { return fn(a, b.tensor, b.loc); } \
  template <Scalar S>                                                                      \
  Tensor operator op(Located a, S b) { return fn(a.tensor, b, a.loc); }                    \
  template <Scalar S>                                                                      \
  Tensor operator op(S a, Located b) { return fn(a, b.tensor, b.loc); }
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
// Position of the maximum along `dim` (first on ties), int64.
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false,
              const SourceLoc& loc = SourceLoc::current());
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false,
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
// stride {} means stride = kernel size.
Tensor max_pool2d(const Tensor& x, Shape kernel, Shape stride = {}, Shape padding = {0},
                  const SourceLoc& loc = SourceLoc::current());
Tensor avg_pool2d(const Tensor& x, Shape kernel, Shape stride = {}, Shape padding = {0},
                  const SourceLoc& loc = SourceLoc::current());
Tensor adaptive_avg_pool2d(const Tensor& x, Shape output, const SourceLoc& loc = SourceLoc::current());

// ---- reductions -----------------------------------------------------------------------
// Over `dims` (all dims when empty), as torch.sum(x, dims, keepdim).
Tensor sum(const Tensor& x, Shape dims = {}, bool keepdim = false,
           const SourceLoc& loc = SourceLoc::current());
Tensor mean(const Tensor& x, Shape dims = {}, bool keepdim = false,
            const SourceLoc& loc = SourceLoc::current());
Tensor amax(const Tensor& x, Shape dims = {}, bool keepdim = false,
            const SourceLoc& loc = SourceLoc::current());
Tensor amin(const Tensor& x, Shape dims = {}, bool keepdim = false,
            const SourceLoc& loc = SourceLoc::current());
Tensor prod(const Tensor& x, Shape dims = {}, bool keepdim = false,
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
