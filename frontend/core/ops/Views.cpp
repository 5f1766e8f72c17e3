// View and data-movement ops of the op table (reshape, transpose, expand, slice, concat,
// copy) and the Tensor methods built on them. Eager views share storage; the tracer still
// records them as kiln ops.
#include <optional>
#include <numeric>

#include "frontend/core/kernels/Copy.h"
#include "frontend/core/kernels/Map.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "frontend/core/ops/Compose.h"
#include "frontend/core/ops/OpTable.h"
#include "frontend/core/ops/ShapeRules.h"

namespace kiln {
namespace ops {
namespace {

using Grads = std::vector<Tensor>;

using kernels::aliasOf;

Tensor contiguousCopy(const Tensor& x, const SourceLoc& loc) {
  return kernels::contiguousValues(x, loc);
}

// ---- reshape --------------------------------------------------------------------------

std::vector<TensorMeta> reshapeShape(const OpDef& op, std::span<const TensorMeta> in,
                                     const Attrs& attrs, const SourceLoc& loc) {
  const Shape& shape = attrs.get<Shape>("shape");
  if (checkedNumel(shape, op.name, loc) != numel(in[0].shape))
    throw ShapeError::make(loc, op.name, "cannot reshape a tensor of shape ", in[0].shape, " (",
                           numel(in[0].shape), " elements) to ", shape, " (", numel(shape),
                           " elements)");
  TensorMeta out = in[0];
  out.shape = shape;
  return {out};
}

// The strides that show `shape` over the storage a tensor of `oldShape` and `oldStrides`
// views, in the same element order, or nullopt where no strides can (PyTorch's
// computeStride): runs of old dims laid out as one block ("chunks") may be split and merged
// freely, size-1 dims added or dropped anywhere, and nothing else.
std::optional<Strides> viewStrides(const Shape& oldShape, const Strides& oldStrides, const Shape& shape) {
  if (oldShape.empty() || numel(oldShape) == 0) return contiguousStrides(shape);
  Strides strides(shape.size(), 0);
  int64_t viewD = int64_t(shape.size()) - 1;
  int64_t chunkBaseStride = oldStrides.back();
  int64_t tensorNumel = 1, viewNumel = 1;
  for (int64_t d = int64_t(oldShape.size()) - 1; d >= 0; --d) {
    tensorNumel *= oldShape[size_t(d)];
    // The end of a chunk: the dim before is not laid out right after this one.
    if (d == 0 ||
        (oldShape[size_t(d - 1)] != 1 && oldStrides[size_t(d - 1)] != tensorNumel * chunkBaseStride)) {
      while (viewD >= 0 && (viewNumel < tensorNumel || shape[size_t(viewD)] == 1)) {
        strides[size_t(viewD)] = viewNumel * chunkBaseStride;
        viewNumel *= shape[size_t(viewD)];
        --viewD;
      }
      if (viewNumel != tensorNumel) return std::nullopt;
      if (d > 0) {
        chunkBaseStride = oldStrides[size_t(d - 1)];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  if (viewD != -1) return std::nullopt;
  return strides;
}

Tensor reshapeView(const OpArgs& args, const TensorMeta& out) {
  const Tensor& x = args.inputs[0];
  // A view where strides can show the new shape (select, squeeze and unsqueeze of any
  // tensor, as in PyTorch), else a contiguous copy.
  if (!x.is_contiguous())
    if (std::optional<Strides> strides = viewStrides(x.sizes(), x.strides(), out.shape))
      return aliasOf(x, out.shape, std::move(*strides), x.storage_offset());
  // A placeholder (symbolic trace) has no values to copy: its copy is a fresh placeholder.
  Tensor source = x.is_contiguous()    ? x
                  : x.is_placeholder() ? detail::emptyTensor(x.sizes(), x.dtype(), x.device(), true, args.loc)
                                       : contiguousCopy(x, args.loc);
  return aliasOf(source, out.shape, contiguousStrides(out.shape), source.storage_offset());
}

Grads reshapeGrad(const GradArgs& a) { return {a.gradOutputs[0].reshape(a.inputs[0].sizes(), a.loc)}; }

// ---- copy (contiguous, clone): a value identity, recorded as a same-shape reshape -------

void copyKernel(const OpArgs& args, std::span<Tensor> out) { kernels::copyValues(out[0], args.inputs[0]); }

Grads copyGrad(const GradArgs& a) { return {a.gradOutputs[0]}; }

// ---- transpose (permute) --------------------------------------------------------------

std::vector<TensorMeta> transposeShape(const OpDef& op, std::span<const TensorMeta> in,
                                       const Attrs& attrs, const SourceLoc& loc) {
  const Shape& perm = attrs.get<Shape>("permutation");
  const int64_t rank = int64_t(in[0].shape.size());
  std::vector<bool> seen(rank, false);
  bool valid = int64_t(perm.size()) == rank;
  for (int64_t p : perm) {
    valid = valid && p >= 0 && p < rank && !seen[p];
    if (valid) seen[p] = true;
  }
  if (!valid)
    throw ShapeError::make(loc, op.name, "permutation ", perm,
                           " is not a permutation of the dims of a tensor of shape ", in[0].shape);
  TensorMeta out = in[0];
  for (int64_t i = 0; i < rank; ++i) out.shape[i] = in[0].shape[perm[i]];
  return {out};
}

Tensor transposeView(const OpArgs& args, const TensorMeta& out) {
  const Tensor& x = args.inputs[0];
  const Shape& perm = args.attrs.get<Shape>("permutation");
  Strides strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) strides[i] = x.strides()[perm[i]];
  return aliasOf(x, out.shape, std::move(strides), x.storage_offset());
}

Grads transposeGrad(const GradArgs& a) {
  const Shape& perm = a.attrs.get<Shape>("permutation");
  Shape inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = int64_t(i);
  return {a.gradOutputs[0].permute(inverse, a.loc)};
}

// ---- expand (kiln.broadcast_in_dim) ---------------------------------------------------

std::vector<TensorMeta> expandShape(const OpDef& op, std::span<const TensorMeta> in,
                                    const Attrs& attrs, const SourceLoc& loc) {
  const Shape& dims = attrs.get<Shape>("dims");
  const Shape& shape = attrs.get<Shape>("shape");
  checkedNumel(shape, op.name, loc);
  bool valid = dims.size() == in[0].shape.size();
  for (size_t i = 0; valid && i < dims.size(); ++i) {
    valid = dims[i] >= 0 && dims[i] < int64_t(shape.size()) && (i == 0 || dims[i] > dims[i - 1]);
    valid = valid && (in[0].shape[i] == shape[dims[i]] || in[0].shape[i] == 1);
  }
  if (!valid)
    throw ShapeError::make(loc, op.name, "cannot expand a tensor of shape ", in[0].shape, " to ",
                           shape);
  TensorMeta out = in[0];
  out.shape = shape;
  return {out};
}

Tensor expandView(const OpArgs& args, const TensorMeta& out) {
  const Tensor& x = args.inputs[0];
  const Shape& dims = args.attrs.get<Shape>("dims");
  Strides strides(out.shape.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i)
    if (x.sizes()[i] == out.shape[dims[i]]) strides[dims[i]] = x.strides()[i];
  return aliasOf(x, out.shape, std::move(strides), x.storage_offset());
}

Grads expandGrad(const GradArgs& a) { return {sum_to(a.gradOutputs[0], a.inputs[0].sizes(), a.loc)}; }

// ---- slice ----------------------------------------------------------------------------

int64_t sliceLength(int64_t start, int64_t limit, int64_t stride) {
  return limit <= start ? 0 : (limit - start + stride - 1) / stride;
}

std::vector<TensorMeta> sliceShape(const OpDef& op, std::span<const TensorMeta> in,
                                   const Attrs& attrs, const SourceLoc& loc) {
  const Shape& start = attrs.get<Shape>("start");
  const Shape& limit = attrs.get<Shape>("limit");
  const Shape& stride = attrs.get<Shape>("stride");
  const Shape& shape = in[0].shape;
  if (start.size() != shape.size() || limit.size() != shape.size() || stride.size() != shape.size())
    throw ShapeError::make(loc, op.name, "start ", start, ", limit ", limit, " and stride ", stride,
                           " need one entry per dim of a tensor of shape ", shape);
  TensorMeta out = in[0];
  for (size_t d = 0; d < shape.size(); ++d) {
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > shape[d] || stride[d] <= 0)
      throw ShapeError::make(loc, op.name, "slice [", start[d], ":", limit[d], ":", stride[d],
                             "] of dim ", d, " is out of range for a tensor of shape ", shape);
    out.shape[d] = sliceLength(start[d], limit[d], stride[d]);
  }
  return {out};
}

Tensor sliceView(const OpArgs& args, const TensorMeta& out) {
  const Tensor& x = args.inputs[0];
  const Shape& start = args.attrs.get<Shape>("start");
  const Shape& stride = args.attrs.get<Shape>("stride");
  Strides strides = x.strides();
  int64_t offset = x.storage_offset();
  for (size_t d = 0; d < strides.size(); ++d) {
    offset += start[d] * strides[d];
    strides[d] *= stride[d];
  }
  return aliasOf(x, out.shape, std::move(strides), offset);
}

// Places `g` (a slice along `dim`) back into zeros of length `size` along that dim.
Tensor unslice(const Tensor& g, int64_t dim, int64_t size, int64_t start, int64_t stride,
               const SourceLoc& loc) {
  Tensor spread = interleaveZeros(g, dim, stride, loc);
  return padDim(spread, dim, start, size - start - spread.sizes()[dim], 0.0, loc);
}

Grads sliceGrad(const GradArgs& a) {
  const Shape& start = a.attrs.get<Shape>("start");
  const Shape& limit = a.attrs.get<Shape>("limit");
  const Shape& stride = a.attrs.get<Shape>("stride");
  const Shape& shape = a.inputs[0].sizes();
  Tensor g = a.gradOutputs[0];
  for (size_t d = 0; d < shape.size(); ++d)
    if (start[d] != 0 || limit[d] != shape[d] || stride[d] != 1)
      g = unslice(g, int64_t(d), shape[d], start[d], stride[d], a.loc);
  return {g};
}

// ---- concat ---------------------------------------------------------------------------

std::vector<TensorMeta> concatShape(const OpDef& op, std::span<const TensorMeta> in,
                                    const Attrs& attrs, const SourceLoc& loc) {
  const int64_t dim = attrs.get<int64_t>("dim");
  if (dim < 0 || dim >= int64_t(in[0].shape.size()))
    throw ShapeError::make(loc, op.name, "dim ", dim, " is out of range for tensor 0's shape ", in[0].shape);
  TensorMeta out = in[0];
  out.shape[dim] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    Shape a = in[i].shape, b = in[0].shape;
    bool fits = a.size() == b.size();
    if (fits) a[dim] = b[dim] = 0;
    if (!fits || a != b)
      throw ShapeError::make(loc, op.name, "tensor ", i, " has shape ", in[i].shape,
                             ", which does not match tensor 0's shape ", in[0].shape,
                             " outside dim ", dim);
    if (in[i].dtype != in[0].dtype)
      throw TypeError::make(loc, op.name, "tensor ", i, " has dtype ", in[i].dtype,
                            " but tensor 0 has dtype ", in[0].dtype);
    out.shape[dim] += in[i].shape[dim];
  }
  return {out};
}

// Input i is copied into its slice of the output along `dim` (copyValues: any strides,
// any device). One memcpy per row, as this was, made the zero-interleaving of a strided
// convolution's gradient (inputs [64, 96, 15, 8, 1] along the last dim) 737K copies of 4
// bytes; copyValues merges the dims both sides walk alike into one strided loop.
void concatKernel(const OpArgs& args, std::span<Tensor> out) {
  const int64_t dim = args.attrs.get<int64_t>("dim");
  const Tensor& y = out[0];
  int64_t at = 0;
  for (const Tensor& x : args.inputs) {
    if (x.numel() > 0)
      kernels::copyValues(kernels::aliasOf(y, x.sizes(), y.strides(), y.storage_offset() + at * y.strides()[dim]), x);
    at += x.sizes()[dim];
  }
}

Grads concatGrad(const GradArgs& a) {
  const int64_t dim = a.attrs.get<int64_t>("dim");
  Grads grads;
  int64_t at = 0;
  for (const Tensor& x : a.inputs) {
    grads.push_back(a.gradOutputs[0].narrow(dim, at, x.sizes()[dim], a.loc));
    at += x.sizes()[dim];
  }
  return grads;
}

}  // namespace

const OpDef kReshape{"reshape", "kiln.reshape", reshapeShape, nullptr, reshapeView, reshapeGrad, kReadsNothing};
const OpDef kCopy{"clone", "kiln.reshape", reshapeShape, copyKernel, nullptr, copyGrad, kReadsNothing,
                  true};
const OpDef kTranspose{"permute", "kiln.transpose", transposeShape, nullptr, transposeView,
                       transposeGrad, kReadsNothing};
const OpDef kExpand{"expand", "kiln.broadcast_in_dim", expandShape, nullptr, expandView, expandGrad, kReadsNothing};
const OpDef kSlice{"slice", "kiln.slice", sliceShape, nullptr, sliceView, sliceGrad, kReadsNothing};
const OpDef kConcat{"cat", "kiln.concat", concatShape, concatKernel, nullptr, concatGrad, kReadsNothing};

}  // namespace ops

// ---- Tensor methods and free functions ------------------------------------------------

Tensor Tensor::reshape(Shape shape, const SourceLoc& loc) const {
  Shape resolved = inferSize(shape, numel(), "reshape", loc);
  if (resolved == sizes()) return *this;
  return dispatch1(ops::kReshape, {*this}, {{"shape", resolved}}, loc);
}

// Unlike reshape, view never copies: a non-contiguous tensor is an error, as in PyTorch.
Tensor Tensor::view(Shape shape, const SourceLoc& loc) const {
  if (!is_contiguous())
    throw ShapeError::make(loc, "view", "a tensor of shape ", sizes(), " and strides ", strides(),
                           " is not contiguous; use reshape (which may copy)");
  return reshape(std::move(shape), loc);
}

Tensor Tensor::contiguous(const SourceLoc& loc) const {
  if (is_contiguous()) return *this;
  return dispatch1(ops::kCopy, {*this}, {{"shape", sizes()}}, loc);
}

Tensor Tensor::clone(const SourceLoc& loc) const {
  return dispatch1(ops::kCopy, {*this}, {{"shape", sizes()}}, loc);
}

Tensor Tensor::flatten(int64_t startDim, int64_t endDim, const SourceLoc& loc) const {
  if (dim() == 0) return reshape({1}, loc);
  int64_t s = normalizeDim(startDim, dim(), "flatten", loc);
  int64_t e = normalizeDim(endDim, dim(), "flatten", loc);
  if (s > e)
    throw ShapeError::make(loc, "flatten", "start dim ", startDim, " comes after end dim ", endDim,
                           " for a tensor of shape ", sizes());
  Shape shape(sizes().begin(), sizes().begin() + s);
  int64_t merged = 1;
  for (int64_t d = s; d <= e; ++d) merged *= sizes()[d];
  shape.push_back(merged);
  shape.insert(shape.end(), sizes().begin() + e + 1, sizes().end());
  return reshape(shape, loc);
}

Tensor Tensor::permute(Shape dims, const SourceLoc& loc) const {
  for (int64_t& d : dims) d = normalizeDim(d, this->dim(), "permute", loc);
  Shape identity(dims.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (dims == identity && int64_t(dims.size()) == dim()) return *this;
  return dispatch1(ops::kTranspose, {*this}, {{"permutation", dims}}, loc);
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1, const SourceLoc& loc) const {
  const int64_t d0 = normalizeDim(dim0, dim(), "transpose", loc);
  const int64_t d1 = normalizeDim(dim1, dim(), "transpose", loc);
  if (dim() == 0) return *this;
  Shape perm(dim());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[d0], perm[d1]);
  return permute(perm, loc);
}

Tensor Tensor::t(const SourceLoc& loc) const {
  if (dim() > 2)
    throw ShapeError::make(loc, "t", "expects a tensor with at most 2 dims, got shape ", sizes());
  return dim() < 2 ? *this : transpose(0, 1, loc);
}

Tensor Tensor::expand_as(const Tensor& other, const SourceLoc& loc) const {
  return expand(other.sizes(), loc);
}

// PyTorch's expand: new dims on the left, size-1 dims stretched, -1 keeps a dim.
Tensor Tensor::expand(Shape shape, const SourceLoc& loc) const {
  const int64_t rank = int64_t(shape.size());
  if (rank < dim())
    throw ShapeError::make(loc, "expand", "cannot expand a tensor of shape ", sizes(),
                           " to fewer dims: ", shape);
  Shape dims(dim());
  for (int64_t i = 0; i < dim(); ++i) {
    dims[i] = rank - dim() + i;
    if (shape[dims[i]] == -1) shape[dims[i]] = sizes()[i];
  }
  for (int64_t s : shape)
    if (s < 0)
      throw ShapeError::make(loc, "expand", "cannot expand a tensor of shape ", sizes(), " to ", shape,
                             ": -1 keeps an existing dim, and new dims need a size");
  if (shape == sizes()) return *this;
  return dispatch1(ops::kExpand, {*this}, {{"dims", dims}, {"shape", shape}}, loc);
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step, const SourceLoc& loc) const {
  d = normalizeDim(d, dim(), "slice", loc);
  if (step <= 0)
    throw ShapeError::make(loc, "slice", "step must be positive, got ", step);
  const int64_t size = sizes()[d];
  // Python slice semantics: negative indices count from the end; out of range clamps.
  auto clampIndex = [size](int64_t i) { return std::clamp(i < 0 ? i + size : i, int64_t(0), size); };
  start = clampIndex(start);
  end = std::max(start, clampIndex(end));
  Shape starts(dim(), 0), limits = sizes(), strides(dim(), 1);
  starts[d] = start;
  limits[d] = end;
  strides[d] = step;
  if (start == 0 && end == size && step == 1) return *this;
  return dispatch1(ops::kSlice, {*this}, {{"start", starts}, {"limit", limits}, {"stride", strides}},
                   loc);
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length, const SourceLoc& loc) const {
  d = normalizeDim(d, dim(), "narrow", loc);
  if (start < 0) start += sizes()[d];
  if (start < 0 || length < 0 || start + length > sizes()[d])
    throw ShapeError::make(loc, "narrow", "start ", start, " and length ", length,
                           " are out of range for dim ", d, " of a tensor of shape ", sizes());
  return slice(d, start, start + length, 1, loc);
}

Tensor Tensor::select(int64_t d, int64_t index, const SourceLoc& loc) const {
  if (dim() == 0)
    throw ShapeError::make(loc, "select", "index ", index, " into a 0-d tensor, which has no dims");
  d = normalizeDim(d, dim(), "select", loc);
  const int64_t size = sizes()[d];
  if (index < -size || index >= size)
    throw ShapeError::make(loc, "select", "index ", index, " is out of range for dim ", d,
                           " of size ", size, " (shape ", sizes(), ")");
  return narrow(d, index < 0 ? index + size : index, 1, loc).squeeze(d, loc);
}

Tensor Tensor::squeeze(int64_t d, const SourceLoc& loc) const {
  d = normalizeDim(d, dim(), "squeeze", loc);
  if (dim() == 0 || sizes()[d] != 1) return *this;
  Shape shape = sizes();
  shape.erase(shape.begin() + d);
  return reshape(shape, loc);
}

Tensor Tensor::squeeze(const SourceLoc& loc) const {
  Shape shape;
  for (int64_t s : sizes())
    if (s != 1) shape.push_back(s);
  return reshape(shape, loc);
}

Tensor Tensor::unsqueeze(int64_t d, const SourceLoc& loc) const {
  d = normalizeDim(d, dim() + 1, "unsqueeze", loc);
  Shape shape = sizes();
  shape.insert(shape.begin() + d, 1);
  return reshape(shape, loc);
}

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim, const SourceLoc& loc) {
  if (tensors.empty()) throw ShapeError::make(loc, "cat", "expects at least one tensor");
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].dim() == 0)
      throw ShapeError::make(loc, "cat", "tensor ", i, " is 0-d; 0-d tensors cannot be concatenated");
  dim = normalizeDim(dim, tensors[0].dim(), "cat", loc);
  DType dtype = tensors[0].dtype();
  for (const Tensor& t : tensors) dtype = promoteTypes(dtype, t.dtype());
  std::vector<Tensor> inputs;
  for (const Tensor& t : tensors) inputs.push_back(convert(t, dtype, loc));
  if (inputs.size() == 1) return inputs[0].clone(loc);  // torch.cat always copies
  return dispatch1(ops::kConcat, std::move(inputs), {{"dim", dim}}, loc);
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim, const SourceLoc& loc) {
  if (tensors.empty()) throw ShapeError::make(loc, "stack", "expects at least one tensor");
  dim = normalizeDim(dim, tensors[0].dim() + 1, "stack", loc);
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].sizes() != tensors[0].sizes())
      throw ShapeError::make(loc, "stack", "tensor ", i, " has shape ", tensors[i].sizes(),
                             " but tensor 0 has shape ", tensors[0].sizes());
    parts.push_back(tensors[i].unsqueeze(dim, loc));
  }
  return cat(parts, dim, loc);
}

}  // namespace kiln
