// LibTorch's x.index({...}) and x.index_put_({...}, value), composed from the op table's
// views (select, slice, unsqueeze, permute, reshape), take and scatter_add: indexing has
// no kernel or gradient formula of its own, so its gradients are those of the ops it uses.
#include <algorithm>
#include <span>

#include "frontend/core/ops/Compose.h"
#include "frontend/core/ops/OpTable.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"

namespace kiln {
namespace {

using indexing::TensorIndex;

// A tensor index left for the second phase: int64 positions (negative ones count from
// the end) along `dim` of the view the other indices made.
struct PositionIndex {
  int64_t dim;
  Tensor positions;
};

// The dims of x an index consumes: a mask consumes its rank; None and Ellipsis none.
int64_t consumedDims(const TensorIndex& index) {
  if (index.is_tensor() && index.tensor().dtype() == kBool) return index.tensor().dim();
  return index.is_none() || index.is_ellipsis() ? 0 : 1;
}

void checkIndexList(const Tensor& x, std::span<const TensorIndex> indices, const char* op,
                    const SourceLoc& loc) {
  int64_t consumed = 0, ellipses = 0;
  for (const TensorIndex& index : indices) {
    consumed += consumedDims(index);
    ellipses += index.is_ellipsis();
    if (index.is_tensor() && !index.tensor().defined())
      throw Error::make(loc, op, "an undefined tensor used as an index into a tensor of shape ",
                        x.sizes());
  }
  if (ellipses > 1)
    throw ShapeError::make(loc, op, "an index can only have a single ellipsis, got ", ellipses,
                           " (tensor of shape ", x.sizes(), ")");
  if (consumed > x.dim())
    throw ShapeError::make(loc, op, "too many indices for a tensor of shape ", x.sizes(), ": ",
                           consumed, " dims indexed");
}

// Integers, slices, None and Ellipsis applied as views; tensor indices left in `tensors`.
Tensor applyBasicIndices(const Tensor& x, std::span<const TensorIndex> indices,
                         std::vector<PositionIndex>& tensors, const char* op, const SourceLoc& loc) {
  int64_t consumed = 0;
  for (const TensorIndex& index : indices) consumed += consumedDims(index);
  Tensor view = x;
  int64_t dim = 0, xDim = 0;  // the dim of `view` and of `x` the next index applies to
  for (const TensorIndex& index : indices) {
    if (index.is_none()) {
      view = view.unsqueeze(dim++, loc);
    } else if (index.is_ellipsis()) {
      dim += x.dim() - consumed;
      xDim += x.dim() - consumed;
    } else if (index.is_integer()) {
      const int64_t i = index.integer(), size = view.sizes()[dim];
      if (i < -size || i >= size)
        throw ShapeError::make(loc, op, "index ", i, " is out of range for dim ", xDim, " of size ",
                               size, " (tensor of shape ", x.sizes(), ")");
      view = view.select(dim, i, loc);
      ++xDim;
    } else if (index.is_slice()) {
      if (index.slice().step() <= 0)
        throw ShapeError::make(loc, op, "slice step must be positive, got ", index.slice().step(),
                               " (dim ", xDim, " of a tensor of shape ", x.sizes(), ")");
      view = view.slice(dim++, index.slice().start(), index.slice().stop(), index.slice().step(), loc);
      ++xDim;
    } else if (const Tensor& t = index.tensor(); t.dtype() == kBool) {
      const Shape at(view.sizes().begin() + dim, view.sizes().begin() + dim + t.dim());
      if (t.dim() == 0 || at != t.sizes())
        throw ShapeError::make(loc, op, "a mask of shape ", t.sizes(), " does not match shape ", at,
                               " at dim ", xDim, " of a tensor of shape ", x.sizes());
      Tensor positions = nonzero(t, loc);  // [n, rank]
      for (int64_t j = 0; j < t.dim(); ++j) tensors.push_back({dim++, positions.select(1, j, loc)});
      xDim += t.dim();
    } else {
      if (t.dtype() != kInt64 && t.dtype() != kInt32)
        throw TypeError::make(loc, op, "tensors used as indices must be int64, int32 or bool, got ",
                              t.dtype(), " (index of shape ", t.sizes(), " into a tensor of shape ",
                              x.sizes(), ")");
      tensors.push_back({dim++, t.to(kInt64, loc)});
      ++xDim;
    }
  }
  return view;
}

// Positions outside [-size, size) name the op and the shapes. The check reads the
// positions, so it is left to take's kernel while a trace records.
void checkPositions(const Tensor& positions, int64_t size, const Tensor& x, const char* op,
                    const SourceLoc& loc) {
  if (currentDispatchHook() || positions.numel() == 0) return;
  Tensor values = positions.detach().cpu(loc).contiguous(loc);
  const int64_t* p = values.data_ptr<int64_t>(loc);
  for (int64_t i = 0; i < values.numel(); ++i)
    if (p[i] < -size || p[i] >= size)
      throw ShapeError::make(loc, op, "index ", p[i], " is out of range for a dim of size ", size,
                             " (index tensor of shape ", positions.sizes(), " into a tensor of shape ",
                             x.sizes(), ")");
}

// numpy's advanced indexing: the indexed dims are merged into one and gathered with take
// at the positions' broadcast shape. Indexed dims that are not adjacent go first, as
// PyTorch puts them.
Tensor applyTensorIndices(Tensor view, std::vector<PositionIndex> tensors, const Tensor& x,
                          const char* op, const SourceLoc& loc) {
  Shape broadcast = tensors[0].positions.sizes();
  for (const PositionIndex& t : tensors) broadcast = broadcastShapes(broadcast, t.positions.sizes(), op, loc);
  const int64_t count = int64_t(tensors.size());
  bool adjacent = true;
  for (int64_t i = 0; i < count; ++i) adjacent = adjacent && tensors[i].dim == tensors[0].dim + i;
  int64_t at = tensors[0].dim;
  if (!adjacent) {
    Shape order;
    for (const PositionIndex& t : tensors) order.push_back(t.dim);
    for (int64_t d = 0; d < view.dim(); ++d)
      if (std::find(order.begin(), order.begin() + count, d) == order.begin() + count) order.push_back(d);
    view = view.permute(order, loc);
    at = 0;
  }
  const Shape& sizes = view.sizes();
  Tensor linear;
  int64_t stride = 1;
  for (int64_t i = count - 1; i >= 0; --i) {
    const int64_t size = sizes[at + i];
    Tensor p = tensors[i].positions;
    checkPositions(p, size, x, op, loc);
    p = where(lt(p, Scalar(0), loc), add(p, Scalar(size), loc), p, loc);
    Tensor term = stride == 1 ? p : mul(p, Scalar(stride), loc);
    linear = linear.defined() ? add(term, linear, loc) : term;
    stride *= size;
  }
  Shape merged(sizes.begin(), sizes.begin() + at);
  merged.push_back(stride);
  merged.insert(merged.end(), sizes.begin() + at + count, sizes.end());
  return take(view.reshape(merged, loc), linear.expand(broadcast, loc), at, loc);
}

void requireDefined(const Tensor& x, const char* op, const SourceLoc& loc) {
  if (!x.defined()) throw Error::make(loc, op, "called on an undefined tensor");
}

Tensor indexWith(const Tensor& x, std::span<const TensorIndex> indices, const char* op,
                 const SourceLoc& loc) {
  requireDefined(x, op, loc);
  checkIndexList(x, indices, op, loc);
  std::vector<PositionIndex> tensors;
  Tensor view = applyBasicIndices(x, indices, tensors, op, loc);
  return tensors.empty() ? view : applyTensorIndices(std::move(view), std::move(tensors), x, op, loc);
}

// A second handle on x's values and autograd identity: the graph recorded from it must
// not hold x's own handle, which the in-place write then points at that graph (a cycle).
Tensor alias(const Tensor& x) {
  Tensor handle(std::make_shared<TensorImpl>(*x.impl()));
  if (DispatchHook* hook = currentDispatchHook()) hook->onAlias(x, handle);
  return handle;
}

// Whether `from` broadcasts to exactly `to` (numpy's rule, aligned from the right).
bool broadcastsTo(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[lead + i]) return false;
  return true;
}

// index_put_: the flat positions the indices select (by indexing an iota of x's shape)
// receive the values through scatter_add; where they land replaces x's values. Repeated
// positions, which LibTorch leaves undefined, get the mean of their values, so a Scalar
// written twice is still that Scalar.
void indexPut(const Tensor& self, std::span<const TensorIndex> indices, const Tensor& value,
              const SourceLoc& loc) {
  constexpr const char* op = "index_put_";
  if (isGradEnabled() && self.is_leaf() && self.requires_grad())
    throw Error::make(loc, op, "a leaf tensor that requires grad (shape ", self.sizes(),
                      ") cannot be modified in place; wrap the update in NoGradGuard");
  Tensor positions;
  {
    detail::FactoryDeviceGuard onDevice(self.device());
    positions = arange(self.numel(), loc).reshape(self.sizes(), loc);
  }
  positions = indexWith(positions, indices, op, loc);
  if (value.dtype() != self.dtype())
    throw TypeError::make(loc, op, "values of dtype ", value.dtype(), " must have the dtype of the ",
                          "tensor of shape ", self.sizes(), ", ", self.dtype());
  const Shape& target = positions.sizes();
  if (!broadcastsTo(value.sizes(), target))
    throw ShapeError::make(loc, op, "values of shape ", value.sizes(), " cannot be broadcast to the ",
                           "indexed shape ", target, " of a tensor of shape ", self.sizes());
  const DType math = isFloatingPoint(self.dtype()) ? self.dtype() : kFloat64;
  Tensor flat = positions.reshape({-1}, loc);
  Tensor updates = convert(value, math, loc).expand(target, loc).reshape({-1}, loc);
  Tensor sums = ops::scatterAdd(updates, flat, 0, self.numel(), loc);
  Tensor counts = ops::scatterAdd(ones_like(updates, loc), flat, 0, self.numel(), loc);
  Tensor put = convert(div(sums, maximum(counts, Scalar(1), loc), loc), self.dtype(), loc);
  // where keeps its operands for the gradient, so it gets a copy of self's old values
  // when a gradient is recorded (as dispatchInPlace snapshots add_'s operand).
  const bool recorded = isGradEnabled() && (self.requires_grad() || value.requires_grad());
  Tensor result = where(gt(counts, Scalar(0), loc).reshape(self.sizes(), loc),
                        put.reshape(self.sizes(), loc), recorded ? alias(self).clone(loc) : self, loc);
  dispatchInPlace(ops::kCopy, self, {result}, {{"shape", self.sizes()}}, loc);
}

}  // namespace

Tensor nonzero(const Tensor& x, const SourceLoc& loc) {
  Tensor flags = (x.dtype() == kBool ? x : ne(x, Scalar(0), loc)).detach().cpu(loc).contiguous(loc);
  const bool* values = flags.data_ptr<bool>(loc);
  const Strides strides = contiguousStrides(x.sizes());
  std::vector<int64_t> positions;
  for (int64_t i = 0; i < flags.numel(); ++i)
    if (values[i])
      for (int64_t d = 0; d < x.dim(); ++d) positions.push_back(i / strides[d] % x.sizes()[d]);
  const int64_t rank = x.dim();
  const int64_t n = rank == 0 ? int64_t(values[0]) : int64_t(positions.size()) / rank;
  return tensor(positions, Shape{n, rank}, loc).to(x.device(), loc);
}

Tensor Tensor::nonzero(const SourceLoc& loc) const { return kiln::nonzero(*this, loc); }

Tensor Tensor::index(std::initializer_list<TensorIndex> indices, const SourceLoc& loc) const {
  return indexWith(*this, std::span(indices.begin(), indices.size()), "index", loc);
}

Tensor Tensor::index(const std::vector<TensorIndex>& indices, const SourceLoc& loc) const {
  return indexWith(*this, indices, "index", loc);
}

Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Tensor& value,
                           const SourceLoc& loc) {
  return index_put_(std::vector<TensorIndex>(indices), value, loc);
}

Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Scalar& value,
                           const SourceLoc& loc) {
  return index_put_(std::vector<TensorIndex>(indices), value, loc);
}

Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Tensor& value,
                           const SourceLoc& loc) {
  requireDefined(*this, "index_put_", loc);
  indexPut(*this, indices, value, loc);
  return *this;
}

// A Scalar takes the tensor's dtype, as fill_ does.
Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Scalar& value,
                           const SourceLoc& loc) {
  requireDefined(*this, "index_put_", loc);
  indexPut(*this, indices, convert(scalarOperand(*this, value, loc), dtype(), loc), loc);
  return *this;
}

}  // namespace kiln
