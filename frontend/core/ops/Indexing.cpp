// The gather op of the op table (kiln.gather, numpy.take along a dim) and take,
// index_select, gather (torch.gather) and argmax/argmin composed from primitives.
#include <cstring>

#include "frontend/core/kernels/Copy.h"
#include "frontend/core/ops/OpTable.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "kiln/core/ThreadPool.h"

namespace kiln {
namespace ops {
namespace {

using Grads = std::vector<Tensor>;

std::vector<TensorMeta> gatherShape(const OpDef& op, std::span<const TensorMeta> in,
                                    const Attrs& attrs, const SourceLoc& loc) {
  const int64_t dim = attrs.get<int64_t>("dim");
  const Shape& x = in[0].shape;
  if (in[1].dtype != kInt64 && in[1].dtype != kInt32)
    throw TypeError::make(loc, op.name, "indices must be int32 or int64, got ", in[1].dtype);
  if (dim < 0 || dim >= int64_t(x.size()))
    throw ShapeError::make(loc, op.name, "dim ", dim, " is out of range for a tensor of shape ", x);
  TensorMeta out = in[0];
  out.shape.assign(x.begin(), x.begin() + dim);
  out.shape.insert(out.shape.end(), in[1].shape.begin(), in[1].shape.end());
  out.shape.insert(out.shape.end(), x.begin() + dim + 1, x.end());
  return {out};
}

std::vector<int64_t> checkedIndices(const Tensor& indices, int64_t size, const SourceLoc& loc) {
  Tensor idx = kernels::contiguousValues(indices, loc);
  std::vector<int64_t> out(size_t(idx.numel()));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = idx.dtype() == kInt64 ? static_cast<const int64_t*>(idx.rawData())[i]
                                   : static_cast<const int32_t*>(idx.rawData())[i];
    if (out[i] < 0 || out[i] >= size)
      throw ShapeError::make(loc, "take", "index ", out[i], " is out of range for a dim of size ", size);
  }
  return out;
}

// x viewed as [outer, D, inner]; out[o, k, :] = x[o, idx[k], :].
void gatherKernel(const OpArgs& args, std::span<Tensor> out) {
  const int64_t dim = args.attrs.get<int64_t>("dim");
  Tensor x = kernels::contiguousValues(args.inputs[0], args.loc);
  const Shape& s = x.sizes();
  const std::vector<int64_t> idx = checkedIndices(args.inputs[1], s[dim], args.loc);
  const int64_t outer = numel(Shape(s.begin(), s.begin() + dim));
  const int64_t inner = numel(Shape(s.begin() + dim + 1, s.end()));
  const int64_t k = int64_t(idx.size()), bytes = int64_t(x.element_size()) * inner;
  const char* src = static_cast<const char*>(x.rawData());
  char* dst = static_cast<char*>(out[0].rawData());
  parallelFor(0, outer * k, std::max<int64_t>(1, 32768 / std::max<int64_t>(bytes, 1)),
              [&](int64_t begin, int64_t end) {
                for (int64_t r = begin; r < end; ++r) {
                  const int64_t o = r / k, j = r % k;
                  std::memcpy(dst + r * bytes, src + (o * s[dim] + idx[size_t(j)]) * bytes, size_t(bytes));
                }
              });
}

// The scatter-add back into x's shape, as a one-hot [K, D] product so it stays made of
// dialect ops: dx[o] = onehot^T g[o]. O(K·D·inner); a scatter op would be O(K·inner).
Grads gatherGrad(const GradArgs& a) {
  const int64_t dim = a.attrs.get<int64_t>("dim");
  const Tensor& x = a.inputs[0];
  const SourceLoc& l = a.loc;
  const Shape& s = x.sizes();
  const int64_t outer = numel(Shape(s.begin(), s.begin() + dim));
  const int64_t inner = numel(Shape(s.begin() + dim + 1, s.end()));
  const int64_t k = a.inputs[1].numel();
  Tensor ids = a.inputs[1].reshape({k, 1}, l);
  Tensor onehot = convert(eq(ids, arange(s[dim], l).to(ids.dtype(), l), l), x.dtype(), l);
  Tensor g = a.gradOutputs[0].reshape({outer, k, inner}, l);
  return {matmul(onehot.t(l), g, l).reshape(s, l), Tensor()};
}

}  // namespace

const OpDef kGather{"take", "kiln.gather", gatherShape, gatherKernel, nullptr, gatherGrad,
                    kReadsInputs};

}  // namespace ops

Tensor take(const Tensor& x, const Tensor& indices, int64_t dim, const SourceLoc& loc) {
  dim = normalizeDim(dim, x.dim(), "take", loc);
  if (x.dim() == 0) return take(x.reshape({1}, loc), indices, 0, loc);
  return dispatch1(ops::kGather, {x, indices}, {{"dim", dim}}, loc);
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index, const SourceLoc& loc) {
  if (index.dim() > 1)
    throw ShapeError::make(loc, "index_select", "index must be 0-d or 1-d, got shape ", index.sizes());
  return take(x, index.reshape({index.numel()}, loc), dim, loc);
}

// torch.gather through take on the flattened input: the linear index of
// out[i0, .., ik, ..] is sum_{d != dim} i_d * stride_d + index[i] * stride_dim.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index, const SourceLoc& loc) {
  dim = normalizeDim(dim, x.dim(), "gather", loc);
  if (index.dim() != x.dim())
    throw ShapeError::make(loc, "gather", "index of shape ", index.sizes(),
                           " must have the rank of the input's shape ", x.sizes());
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != dim && index.sizes()[d] > x.sizes()[d])
      throw ShapeError::make(loc, "gather", "index of shape ", index.sizes(),
                             " is larger than the input's shape ", x.sizes(), " in dim ", d);
  const Strides strides = contiguousStrides(x.sizes());
  Tensor linear = mul(index.to(kInt64, loc), strides[dim], loc);
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d == dim) continue;
    Shape at(size_t(x.dim()), 1);
    at[d] = index.sizes()[d];
    linear = add(linear, mul(arange(index.sizes()[d], loc).reshape(at, loc), strides[d], loc), loc);
  }
  return take(x.reshape({x.numel()}, loc), linear, 0, loc);
}

namespace {

// The first position of the extreme along dim: positions where x equals the extreme keep
// their index, the rest the dim's size, and the minimum of those wins.
Tensor argExtreme(const char* op, const Tensor& x, int64_t dim, bool keepdim, bool isMax,
                  const SourceLoc& loc) {
  dim = normalizeDim(dim, x.dim(), op, loc);
  const int64_t size = x.dim() == 0 ? 1 : x.sizes()[dim];
  Tensor extreme = isMax ? amax(x, {dim}, true, loc) : amin(x, {dim}, true, loc);
  Shape at(size_t(std::max<int64_t>(x.dim(), 1)), 1);
  at[size_t(dim)] = size;
  Tensor positions = arange(size, loc).reshape(at, loc);
  // NaN is the extreme of a row holding one (as PyTorch), and NaN == NaN is false.
  Tensor hit = logical_or(eq(x, extreme, loc),
                          logical_and(ne(x, x, loc), ne(extreme, extreme, loc), loc), loc);
  Tensor candidates = where(hit, positions, full({}, size, kInt64, loc), loc);
  return amin(candidates, {dim}, keepdim, loc);
}

}  // namespace

Tensor argmax(const Tensor& x, int64_t dim, bool keepdim, const SourceLoc& loc) {
  return argExtreme("argmax", x, dim, keepdim, true, loc);
}

Tensor argmin(const Tensor& x, int64_t dim, bool keepdim, const SourceLoc& loc) {
  return argExtreme("argmin", x, dim, keepdim, false, loc);
}

}  // namespace kiln
