// Tensor: a view (shape, strides, offset) of reference-counted storage with a dtype, a
// device and autograd state; LibTorch's torch::Tensor under the name kiln::Tensor.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <source_location>
#include <tuple>
#include <vector>

#include "kiln/core/Device.h"
#include "kiln/core/DType.h"
#include "kiln/core/Error.h"
#include "kiln/core/Scalar.h"
#include "kiln/core/Shape.h"
#include "kiln/core/Storage.h"
#include "kiln/core/TensorOptions.h"

namespace kiln {

namespace autograd {
class Node;
}  // namespace autograd
namespace indexing {
class TensorIndex;
}  // namespace indexing

// Defined below Tensor, as it holds the .grad Tensor that mutable_grad() hands out.
struct TensorImpl;
class Tensor;

// The op table's unary ops, and the binary ops that take a tensor or a Scalar, each
// spelled both as a free function (Ops.h) and as a Tensor method (x.exp(), x.pow(2)).
#define KILN_FOR_EACH_UNARY_OP(X) \
  X(neg) X(abs) X(exp) X(log) X(sqrt) X(rsqrt) X(tanh) X(sigmoid) X(relu) X(sin) X(cos) X(floor) \
  X(logical_not)
#define KILN_FOR_EACH_SCALAR_BINARY_OP(X) \
  X(mul) X(div) X(pow) X(maximum) X(minimum) X(eq) X(ne) X(lt) X(le) X(gt) X(ge)

// An operator has no room for a source_location parameter, so one operand converts
// through Located (a tensor) or LocatedScalar, whose constructor's default argument is
// evaluated at the operator expression: `a + b` reports the user's line, not a header's.
struct Located {
  Located(const Tensor& tensor, const SourceLoc& loc = SourceLoc::current())  // NOLINT
      : tensor(tensor), loc(loc) {}
  const Tensor& tensor;
  SourceLoc loc;
};
struct LocatedScalar {
  template <Arithmetic T>
  LocatedScalar(T value, const SourceLoc& loc = SourceLoc::current())  // NOLINT
      : value(value), loc(loc) {}
  LocatedScalar(const Scalar& value, const SourceLoc& loc = SourceLoc::current())  // NOLINT
      : value(value), loc(loc) {}
  Scalar value;
  SourceLoc loc;
};
struct LocatedIndex {
  template <std::integral T>
  LocatedIndex(T index, const SourceLoc& loc = SourceLoc::current())  // NOLINT
      : index(int64_t(index)), loc(loc) {}
  int64_t index;
  SourceLoc loc;
};

class Tensor {
 public:
  Tensor() = default;  // undefined, as a default-constructed torch::Tensor
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& implPtr() const { return impl_; }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

  // ---- metadata --------------------------------------------------------------------
  const Shape& sizes() const;
  const Shape& shape() const;
  int64_t size(int64_t dim, const SourceLoc& loc = SourceLoc::current()) const;
  const Strides& strides() const;
  int64_t storage_offset() const;
  int64_t dim() const;
  int64_t numel() const;
  DType dtype() const;
  DType scalar_type() const;
  Device device() const;
  size_t element_size() const;
  bool is_contiguous() const;
  bool is_floating_point() const;
  // True for symbolic trace placeholders, which describe a value but hold none.
  bool is_placeholder() const;

  // ---- data ------------------------------------------------------------------------
  // Pointer to the first element; T must be the tensor's dtype (TypeError otherwise).
  // Reading data is a value read: under a symbolic trace it raises TraceError.
  template <class T>
  T* data_ptr(const SourceLoc& loc = SourceLoc::current()) const {
    checkDataAccess(dtypeOf<T>(), "data_ptr", loc);
    return static_cast<T*>(rawData());
  }
  // The single element of a one-element tensor, converted to T (as torch's item<T>()).
  template <class T>
  T item(const SourceLoc& loc = SourceLoc::current()) const;
  // The single element as a Scalar of the dtype's kind (torch's item()).
  Scalar item(const SourceLoc& loc = SourceLoc::current()) const;
  void* rawData() const;
  // This tensor's dtype and device, for a factory to match (torch's x.options()).
  TensorOptions options() const { return TensorOptions(dtype()).device(device()); }

  // A contiguous tensor with the same values (itself if already contiguous).
  Tensor contiguous(const SourceLoc& loc = SourceLoc::current()) const;
  // A contiguous copy that never shares storage.
  Tensor clone(const SourceLoc& loc = SourceLoc::current()) const;
  Tensor to(DType dtype, const SourceLoc& loc = SourceLoc::current()) const;
  // The same values on `device` (itself if already there). Differentiable: the gradient
  // goes back to this tensor's device. cuda() is to(cuda:0), cpu() is to(cpu).
  Tensor to(Device device, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor cuda(const SourceLoc& loc = SourceLoc::current()) const;
  Tensor cpu(const SourceLoc& loc = SourceLoc::current()) const;

  // ---- views (no copy when eager) ---------------------------------------------------
  Tensor reshape(Shape shape, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor view(Shape shape, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor flatten(int64_t startDim = 0, int64_t endDim = -1,
                 const SourceLoc& loc = SourceLoc::current()) const;
  Tensor transpose(int64_t dim0, int64_t dim1, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor t(const SourceLoc& loc = SourceLoc::current()) const;
  Tensor permute(Shape dims, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor expand(Shape shape, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor expand_as(const Tensor& other, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length,
                const SourceLoc& loc = SourceLoc::current()) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1,
               const SourceLoc& loc = SourceLoc::current()) const;
  Tensor squeeze(int64_t dim, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor squeeze(const SourceLoc& loc = SourceLoc::current()) const;
  Tensor unsqueeze(int64_t dim, const SourceLoc& loc = SourceLoc::current()) const;
  // The slice at `index` along `dim`, without that dim; a negative index counts from the
  // end. x[i] is select(0, i).
  Tensor select(int64_t dim, int64_t index, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor operator[](LocatedIndex index) const { return select(0, index.index, index.loc); }

  // ---- in place (optimizer updates, running statistics) -----------------------------
  // Operands broadcast to this tensor's shape and convert to its dtype. Rejected on a leaf
  // that requires grad while grad mode is on (use NoGradGuard), as in PyTorch.
  Tensor& add_(const Tensor& other, double alpha = 1.0, const SourceLoc& loc = SourceLoc::current());
  Tensor& sub_(const Tensor& other, double alpha = 1.0, const SourceLoc& loc = SourceLoc::current());
  Tensor& mul_(const Tensor& other, const SourceLoc& loc = SourceLoc::current());
  Tensor& div_(const Tensor& other, const SourceLoc& loc = SourceLoc::current());
  Tensor& add_(double other, const SourceLoc& loc = SourceLoc::current());
  Tensor& mul_(double other, const SourceLoc& loc = SourceLoc::current());
  Tensor& copy_(const Tensor& src, const SourceLoc& loc = SourceLoc::current());
  Tensor& fill_(double value, const SourceLoc& loc = SourceLoc::current());
  Tensor& zero_(const SourceLoc& loc = SourceLoc::current());
  // Values drawn from the default generator, as rand/randn/bernoulli draw them: U[from, to),
  // N(mean, std²), 1 with probability p else 0. Floating-point tensors only.
  Tensor& uniform_(double from = 0.0, double to = 1.0, const SourceLoc& loc = SourceLoc::current());
  Tensor& normal_(double mean = 0.0, double std = 1.0, const SourceLoc& loc = SourceLoc::current());
  Tensor& bernoulli_(double p = 0.5, const SourceLoc& loc = SourceLoc::current());
  // LibTorch's other distributions, from the same generator, composed of those draws:
  // exponential with rate lambd; geometric (trials up to the first success, 1, 2, ...);
  // exp of N(mean, std²); Cauchy with its median and scale; integers uniform in
  // [from, to), or [from, the dtype's largest integer] (2^digits for floats) without
  // `to`, ranges of at most 2^53 integers. exponential_, log_normal_ and cauchy_ want a
  // floating-point tensor; geometric_ and random_ fill any.
  Tensor& exponential_(double lambd = 1.0, const SourceLoc& loc = SourceLoc::current());
  Tensor& geometric_(double p, const SourceLoc& loc = SourceLoc::current());
  Tensor& log_normal_(double mean = 1.0, double std = 2.0, const SourceLoc& loc = SourceLoc::current());
  Tensor& cauchy_(double median = 0.0, double sigma = 1.0, const SourceLoc& loc = SourceLoc::current());
  Tensor& random_(int64_t from, std::optional<int64_t> to, const SourceLoc& loc = SourceLoc::current());
  Tensor& random_(int64_t to, const SourceLoc& loc = SourceLoc::current());
  Tensor& random_(const SourceLoc& loc = SourceLoc::current());
  // x += y, x -= 2, ...: add_, sub_, mul_, div_, with their rules.
  Tensor& operator+=(Located other);
  Tensor& operator-=(Located other);
  Tensor& operator*=(Located other);
  Tensor& operator/=(Located other);
  Tensor& operator+=(LocatedScalar other);
  Tensor& operator-=(LocatedScalar other);
  Tensor& operator*=(LocatedScalar other);
  Tensor& operator/=(LocatedScalar other);

  // ---- LibTorch's method spellings of the ops -------------------------------------------
  // Each calls the free function of the same name (kiln/core/Ops.h, Functional.h), so
  // x.sum(1) and sum(x, 1) are one implementation.
#define KILN_UNARY_METHOD(name) Tensor name(const SourceLoc& loc = SourceLoc::current()) const;
  KILN_FOR_EACH_UNARY_OP(KILN_UNARY_METHOD)
#undef KILN_UNARY_METHOD
  // add and sub scale `other` by alpha first, as torch's x.add(y, alpha).
  Tensor add(const Tensor& other, const Scalar& alpha = 1, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor sub(const Scalar& other, const Scalar& alpha = 1, const SourceLoc& loc = SourceLoc::current()) const;
#define KILN_BINARY_METHOD(name)                                                             \
  Tensor name(const Tensor& other, const SourceLoc& loc = SourceLoc::current()) const;       \
  Tensor name(const Scalar& other, const SourceLoc& loc = SourceLoc::current()) const;
  KILN_FOR_EACH_SCALAR_BINARY_OP(KILN_BINARY_METHOD)
#undef KILN_BINARY_METHOD
  Tensor logical_and(const Tensor& other, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor logical_or(const Tensor& other, const SourceLoc& loc = SourceLoc::current()) const;
  // condition ? this : other.
  Tensor where(const Tensor& condition, const Tensor& other,
               const SourceLoc& loc = SourceLoc::current()) const;
  Tensor clamp(std::optional<double> min, std::optional<double> max = std::nullopt,
               const SourceLoc& loc = SourceLoc::current()) const;
  Tensor clamp_min(double min, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor clamp_max(double max, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor softmax(int64_t dim, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor log_softmax(int64_t dim, const SourceLoc& loc = SourceLoc::current()) const;
  // The values of `other`'s dtype.
  Tensor type_as(const Tensor& other, const SourceLoc& loc = SourceLoc::current()) const;

  // Linear algebra; addmm's self is the 1-d bias.
  Tensor mm(const Tensor& other, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor matmul(const Tensor& other, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor bmm(const Tensor& other, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, const SourceLoc& loc = SourceLoc::current()) const;

  // Reductions: over every dim by default, or over `dims` (one or a list).
  Tensor sum(Dims dims = {}, bool keepdim = false, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor mean(Dims dims = {}, bool keepdim = false, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor prod(Dims dims = {}, bool keepdim = false, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor amax(Dims dims = {}, bool keepdim = false, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor amin(Dims dims = {}, bool keepdim = false, const SourceLoc& loc = SourceLoc::current()) const;
  // unbiased divides by N - 1, else by N.
  Tensor var(Dims dims = {}, bool unbiased = true, bool keepdim = false,
             const SourceLoc& loc = SourceLoc::current()) const;
  Tensor std(Dims dims = {}, bool unbiased = true, bool keepdim = false,
             const SourceLoc& loc = SourceLoc::current()) const;
  Tensor norm(double p = 2, Dims dims = {}, bool keepdim = false,
              const SourceLoc& loc = SourceLoc::current()) const;
  Tensor all(Dims dims = {}, bool keepdim = false, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor any(Dims dims = {}, bool keepdim = false, const SourceLoc& loc = SourceLoc::current()) const;
  // Of all elements; (values, indices) along a dim; or elementwise with `other`.
  Tensor max(const SourceLoc& loc = SourceLoc::current()) const;
  Tensor min(const SourceLoc& loc = SourceLoc::current()) const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false,
                                 const SourceLoc& loc = SourceLoc::current()) const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false,
                                 const SourceLoc& loc = SourceLoc::current()) const;
  Tensor max(const Tensor& other, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor min(const Tensor& other, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                const SourceLoc& loc = SourceLoc::current()) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                const SourceLoc& loc = SourceLoc::current()) const;

  // Indexing by index tensors.
  Tensor index_select(int64_t dim, const Tensor& index, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor gather(int64_t dim, const Tensor& index, const SourceLoc& loc = SourceLoc::current()) const;
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source,
                   const SourceLoc& loc = SourceLoc::current()) const;
  // The positions of the nonzero elements, int64 [n, dim()] (data-dependent: a value read).
  Tensor nonzero(const SourceLoc& loc = SourceLoc::current()) const;
  // LibTorch's indexing (kiln/core/TensorIndex.h): x.index({Slice(), 0}),
  // x.index({"...", None}), x.index({mask}), x.index({rows, cols}). Integers, slices, None
  // and Ellipsis give a view; tensor indices gather a copy (numpy's advanced indexing).
  Tensor index(std::initializer_list<indexing::TensorIndex> indices,
               const SourceLoc& loc = SourceLoc::current()) const;
  Tensor index(const std::vector<indexing::TensorIndex>& indices,
               const SourceLoc& loc = SourceLoc::current()) const;
  // Writes `value` (broadcast to x.index(indices)'s shape) at those positions, in place,
  // with the rules of add_ and copy_. A tensor value must have this tensor's dtype.
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value,
                     const SourceLoc& loc = SourceLoc::current());
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar& value,
                     const SourceLoc& loc = SourceLoc::current());
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& value,
                     const SourceLoc& loc = SourceLoc::current());
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Scalar& value,
                     const SourceLoc& loc = SourceLoc::current());

  // ---- autograd ---------------------------------------------------------------------
  bool requires_grad() const;
  // Marks a leaf as requiring gradients; TypeError for non-floating dtypes.
  Tensor& requires_grad_(bool requiresGrad = true, const SourceLoc& loc = SourceLoc::current());
  bool is_leaf() const;
  // The accumulated gradient of a leaf (undefined until backward reaches it).
  Tensor grad() const;
  void set_grad(const Tensor& grad);
  // The .grad slot itself, as LibTorch's: `p.mutable_grad() = zeros_like(p)` sets it,
  // `p.mutable_grad() = Tensor()` clears it, `p.mutable_grad().zero_()` zeroes it in
  // place. Nothing checks what is assigned (LibTorch does not either); backward() adds
  // to a defined .grad of the leaf's shape. Inside jit::trace it works as zero_grad() and
  // backward() do: the trace keys on whether the slot held a .grad when the call began.
  Tensor& mutable_grad() const;
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  // The same data with no autograd history.
  Tensor detach() const;
  // Reverse-mode gradient of this tensor; `gradient` is required for non-scalars.
  // retainGraph defaults to createGraph, as LibTorch's; with createGraph the leaves' .grad
  // keep the backward pass's history (autograd::backward, kiln/core/Autograd.h).
  void backward(const Tensor& gradient = Tensor(), std::optional<bool> retainGraph = std::nullopt,
                bool createGraph = false, const SourceLoc& loc = SourceLoc::current()) const;

 private:
  void checkDataAccess(DType requested, const char* what, const SourceLoc& loc) const;

  std::shared_ptr<TensorImpl> impl_;
};

// The state a Tensor handle points to. Views share `storage`; every field but the
// autograd ones describes which elements of it the tensor sees.
struct TensorImpl {
  std::shared_ptr<Storage> storage;  // null for symbolic trace placeholders
  Shape shape;
  Strides strides;     // in elements
  int64_t offset = 0;  // in elements
  DType dtype = kFloat32;
  Device device = kCPU;

  bool requiresGrad = false;
  std::shared_ptr<autograd::Node> gradFn;  // null for leaves
  int outputNr = 0;                        // which output of gradFn this is
  Tensor grad;                             // accumulated gradient (of a leaf, by backward)
  uint64_t version = 0;                    // bumped by every in-place write
};

inline const Shape& Tensor::sizes() const { return impl_->shape; }
inline const Shape& Tensor::shape() const { return impl_->shape; }
inline const Strides& Tensor::strides() const { return impl_->strides; }
inline int64_t Tensor::storage_offset() const { return impl_->offset; }
inline int64_t Tensor::dim() const { return int64_t(impl_->shape.size()); }
inline int64_t Tensor::numel() const { return kiln::numel(impl_->shape); }
inline DType Tensor::dtype() const { return impl_->dtype; }
inline DType Tensor::scalar_type() const { return impl_->dtype; }
inline Device Tensor::device() const { return impl_->device; }
inline size_t Tensor::element_size() const { return elementSize(impl_->dtype); }
inline bool Tensor::is_contiguous() const { return isContiguous(impl_->shape, impl_->strides); }
inline bool Tensor::is_floating_point() const { return isFloatingPoint(impl_->dtype); }
inline bool Tensor::is_placeholder() const { return impl_->storage == nullptr; }
inline bool Tensor::requires_grad() const { return impl_->requiresGrad; }
inline bool Tensor::is_leaf() const { return impl_->gradFn == nullptr; }
inline Tensor Tensor::grad() const { return impl_->grad; }
inline void Tensor::set_grad(const Tensor& grad) { impl_->grad = grad; }
inline const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const { return impl_->gradFn; }

// Prints like PyTorch: `tensor([[1., 2.],\n        [3., 4.]])`, with `dtype=` for
// non-default dtypes and `requires_grad=True` where it applies.
std::ostream& operator<<(std::ostream& os, const Tensor& tensor);

namespace detail {
// A tensor with fresh contiguous storage (or none, for placeholders).
Tensor emptyTensor(const Shape& shape, DType dtype, Device device, bool placeholder,
                   const SourceLoc& loc);
double readElementAsDouble(const Tensor& tensor, int64_t linearIndex);
}  // namespace detail

template <class T>
T Tensor::item(const SourceLoc& loc) const {
  if (!defined()) throw Error::make(loc, "item", "called on an undefined tensor");
  checkDataAccess(dtype(), "item", loc);
  if (numel() != 1)
    throw ShapeError::make(loc, "item", "a tensor with ", numel(),
                           " elements cannot be converted to a scalar (shape ", shape(), ")");
  if (!device().isCPU()) return detach().cpu(loc).template item<T>(loc);  // waits for the device
  return dispatchDType(dtype(), [&]<class S>() {
    return T(static_cast<OpMathType<S>>(*static_cast<const S*>(rawData())));
  });
}

}  // namespace kiln

// TensorIndex holds a Tensor, so it is defined once Tensor is complete.
#include "kiln/core/TensorIndex.h"  // IWYU pragma: export
