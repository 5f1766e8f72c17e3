// The gather op of the op table (kiln.gather, numpy.take along a dim) and take,
// index_select, gather (torch.gather) and argmax/argmin composed from primitives.
#include <algorithm>
#include <cstring>

#include "frontend/core/kernels/Copy.h"
#include "frontend/core/ops/Compose.h"
#include "frontend/core/ops/OpTable.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "kiln/core/ThreadPool.h"

namespace kiln {
namespace ops {
namespace {

using Grads = std::vector<Tensor>;

void checkIndexType(const OpDef& op, const TensorMeta& indices, const SourceLoc& loc) {
  if (indices.dtype != kInt64 && indices.dtype != kInt32)
    throw TypeError::make(loc, op.name, "indices must be int32 or int64, got ", indices.dtype);
}

std::vector<TensorMeta> gatherShape(const OpDef& op, std::span<const TensorMeta> in,
                                    const Attrs& attrs, const SourceLoc& loc) {
  const int64_t dim = attrs.get<int64_t>("dim");
  const Shape& x = in[0].shape;
  checkIndexType(op, in[1], loc);
  if (dim < 0 || dim >= int64_t(x.size()))
    throw ShapeError::make(loc, op.name, "dim ", dim, " is out of range for a tensor of shape ", x);
  TensorMeta out = in[0];
  out.shape.assign(x.begin(), x.begin() + dim);
  out.shape.insert(out.shape.end(), in[1].shape.begin(), in[1].shape.end());
  out.shape.insert(out.shape.end(), x.begin() + dim + 1, x.end());
  return {out};
}

std::vector<int64_t> checkedIndices(std::string_view op, const Tensor& indices, int64_t size,
                                    const SourceLoc& loc) {
  Tensor idx = kernels::contiguousValues(indices, loc);
  std::vector<int64_t> out(size_t(idx.numel()));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = idx.dtype() == kInt64 ? static_cast<const int64_t*>(idx.rawData())[i]
                                   : static_cast<const int32_t*>(idx.rawData())[i];
    if (out[i] < 0 || out[i] >= size)
      throw ShapeError::make(loc, op, "index ", out[i], " is out of range for a dim of size ", size);
  }
  return out;
}

// x viewed as [outer, D, inner]; out[o, k, :] = x[o, idx[k], :].
void gatherKernel(const OpArgs& args, std::span<Tensor> out) {
  const int64_t dim = args.attrs.get<int64_t>("dim");
  Tensor x = kernels::contiguousValues(args.inputs[0], args.loc);
  const Shape& s = x.sizes();
  const std::vector<int64_t> idx = checkedIndices("take", args.inputs[1], s[dim], args.loc);
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

// The gradient goes back through the adjoint of take: a scatter-add into x's shape,
// O(indices · inner) with no one-hot intermediate.
Grads gatherGrad(const GradArgs& a) {
  const int64_t dim = a.attrs.get<int64_t>("dim");
  return {scatterAdd(a.gradOutputs[0], a.inputs[1], dim, a.inputs[0].sizes()[size_t(dim)], a.loc),
          Tensor()};
}

// take's adjoint: updates of shape u[:dim] ++ indices ++ u[dim+r:] summed into zeros of
// shape u[:dim] ++ [size] ++ u[dim+r:] at the positions the indices name.
std::vector<TensorMeta> scatterAddShape(const OpDef& op, std::span<const TensorMeta> in,
                                        const Attrs& attrs, const SourceLoc& loc) {
  const int64_t dim = attrs.get<int64_t>("dim"), size = attrs.get<int64_t>("size");
  const Shape &u = in[0].shape, &ids = in[1].shape;
  checkIndexType(op, in[1], loc);
  if (in[0].dtype == kBool)
    throw TypeError::make(loc, op.name, "updates must be numbers, got ", in[0].dtype);
  const int64_t rank = int64_t(ids.size());
  if (dim < 0 || dim + rank > int64_t(u.size()) || size < 0)
    throw ShapeError::make(loc, op.name, "dim ", dim, " and size ", size,
                           " do not fit updates of shape ", u, " with indices of shape ", ids);
  if (!std::equal(ids.begin(), ids.end(), u.begin() + dim))
    throw ShapeError::make(loc, op.name, "updates of shape ", u, " do not hold indices of shape ",
                           ids, " at dim ", dim);
  TensorMeta out = in[0];
  out.shape.assign(u.begin(), u.begin() + dim);
  out.shape.push_back(size);
  out.shape.insert(out.shape.end(), u.begin() + dim + rank, u.end());
  return {out};
}

// out viewed as [outer, size, inner] and updates as [outer, K, inner]:
// out[o, idx[k], :] += u[o, k, :], k ascending for every destination, so the sums are
// the same for any thread count. Tasks split outer and inner, never K.
void scatterAddKernel(const OpArgs& args, std::span<Tensor> out) {
  const int64_t dim = args.attrs.get<int64_t>("dim"), size = args.attrs.get<int64_t>("size");
  Tensor u = kernels::contiguousValues(args.inputs[0], args.loc);
  const std::vector<int64_t> idx = checkedIndices("scatter_add", args.inputs[1], size, args.loc);
  const Shape& s = u.sizes();
  const int64_t k = int64_t(idx.size());
  const int64_t outer = numel(Shape(s.begin(), s.begin() + dim));
  const int64_t inner = numel(Shape(s.begin() + dim + int64_t(args.inputs[1].dim()), s.end()));
  const int64_t block = std::min<int64_t>(std::max<int64_t>(inner, 1), 4096);
  const int64_t blocks = (inner + block - 1) / block;
  std::memset(out[0].rawData(), 0, size_t(out[0].numel()) * out[0].element_size());
  dispatchDType(u.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      using M = OpMathType<T>;
      const T* src = static_cast<const T*>(u.rawData());
      T* dst = static_cast<T*>(out[0].rawData());
      const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(k * block, 1));
      parallelFor(0, outer * blocks, grain, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          const int64_t o = t / blocks, lo = (t % blocks) * block, hi = std::min(inner, lo + block);
          for (int64_t j = 0; j < k; ++j) {
            T* d = dst + (o * size + idx[size_t(j)]) * inner;
            const T* x = src + (o * k + j) * inner;
            for (int64_t i = lo; i < hi; ++i) d[i] = T(M(d[i]) + M(x[i]));
          }
        }
      });
    }
  });
}

Grads scatterAddGrad(const GradArgs& a) {
  return {take(a.gradOutputs[0], a.inputs[1], a.attrs.get<int64_t>("dim"), a.loc), Tensor()};
}

}  // namespace

const OpDef kGather{"take", "kiln.gather", gatherShape, gatherKernel, nullptr, gatherGrad,
                    kReadsInputs};
const OpDef kScatterAdd{"scatter_add", "kiln.scatter_add", scatterAddShape, scatterAddKernel,
                        nullptr, scatterAddGrad, kReadsInputs};

Tensor scatterAdd(const Tensor& updates, const Tensor& indices, int64_t dim, int64_t size,
                  const SourceLoc& loc) {
  return dispatch1(kScatterAdd, {updates, indices}, {{"dim", dim}, {"size", size}}, loc);
}

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

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source,
                 const SourceLoc& loc) {
  if (x.dim() == 0)
    return index_add(x.reshape({1}, loc), dim, index, source.reshape({source.numel()}, loc), loc)
        .reshape({}, loc);
  dim = normalizeDim(dim, x.dim(), "index_add", loc);
  if (index.dim() > 1)
    throw ShapeError::make(loc, "index_add", "index must be 0-d or 1-d, got shape ", index.sizes());
  Shape want = x.sizes();
  want[size_t(dim)] = index.numel();
  if (source.sizes() != want)
    throw ShapeError::make(loc, "index_add", "source of shape ", source.sizes(), " does not match ",
                           want, " (x's shape ", x.sizes(), " with dim ", dim, " of the index's ",
                           index.numel(), " entries)");
  if (source.dtype() != x.dtype())
    throw TypeError::make(loc, "index_add", "source of dtype ", source.dtype(),
                          " must have the dtype of x, ", x.dtype());
  Tensor sums = ops::scatterAdd(source, index.reshape({index.numel()}, loc), dim,
                                x.sizes()[size_t(dim)], loc);
  return add(x, sums, loc);
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
  detail::FactoryDeviceGuard onDevice(x.device());
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
  detail::FactoryDeviceGuard onDevice(x.device());
  Tensor positions = arange(size, loc).reshape(at, loc);
  // NaN is the extreme of a row holding one (as PyTorch), and NaN == NaN is false.
  Tensor hit = logical_or(eq(x, extreme, loc),
                          logical_and(ne(x, x, loc), ne(extreme, extreme, loc), loc), loc);
  Tensor candidates = where(hit, positions, full({}, size, kInt64, loc), loc);
  return amin(candidates, {dim}, keepdim, loc);
}

}  // namespace

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim, const SourceLoc& loc) {
  if (!dim) return argExtreme("argmax", x.reshape({-1}, loc), 0, false, true, loc);
  return argExtreme("argmax", x, *dim, keepdim, true, loc);
}

Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim, const SourceLoc& loc) {
  if (!dim) return argExtreme("argmin", x.reshape({-1}, loc), 0, false, false, loc);
  return argExtreme("argmin", x, *dim, keepdim, false, loc);
}

}  // namespace kiln
