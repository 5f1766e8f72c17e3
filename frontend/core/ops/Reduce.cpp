// The reduction op of the op table (kiln.reduce: sum mean max min prod over dims) and the
// public sum/mean/amax/amin/prod/sum_to built on it.
#include <algorithm>
#include <cmath>
#include <limits>

#include "frontend/core/kernels/Copy.h"
#include "frontend/core/kernels/Map.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "frontend/core/ops/OpTable.h"
#include "frontend/core/ops/ShapeRules.h"

namespace kiln {
namespace ops {
namespace {

using Grads = std::vector<Tensor>;

Shape keptShape(const Shape& shape, const Shape& dims, bool keepDims) {
  Shape out;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!reduced) out.push_back(shape[d]);
    else if (keepDims) out.push_back(1);
  }
  return out;
}

std::vector<TensorMeta> reduceShape(const OpDef& op, std::span<const TensorMeta> in,
                                    const Attrs& attrs, const SourceLoc& loc) {
  const Shape& dims = attrs.get<Shape>("dims");
  const std::string& kind = attrs.get<std::string>("kind");
  const int64_t rank = int64_t(in[0].shape.size());
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0 || dims[i] >= std::max<int64_t>(rank, 1) || (i > 0 && dims[i] <= dims[i - 1]))
      throw ShapeError::make(loc, kind, "dims ", dims,
                             " must be increasing and within the dims of a tensor of shape ",
                             in[0].shape);
  requireDType(op, in[0], kind == "mean" ? DTypeClass::Floating : DTypeClass::Numeric, loc);
  for (int64_t d : dims)
    if ((kind == "max" || kind == "min") && in[0].shape[d] == 0)
      throw ShapeError::make(loc, kind, "cannot reduce dim ", d, " of size 0 of a tensor of shape ",
                             in[0].shape, " (max and min have no identity)");
  TensorMeta out = in[0];
  out.shape = keptShape(in[0].shape, dims, attrs.get<bool>("keep_dims"));
  return {out};
}

template <class T>
struct Reducer {
  using Acc = std::conditional_t<std::is_floating_point_v<OpMathType<T>>, double, int64_t>;

  static T reduce(const std::string& kind, const T* x, int64_t n) {
    if (kind == "sum" || kind == "mean") {
      Acc acc = 0;
      for (int64_t i = 0; i < n; ++i) acc += Acc(OpMathType<T>(x[i]));
      return T(OpMathType<T>(kind == "mean" ? acc / Acc(n) : acc));
    }
    if (kind == "prod") {
      Acc acc = 1;
      for (int64_t i = 0; i < n; ++i) acc *= Acc(OpMathType<T>(x[i]));
      return T(OpMathType<T>(acc));
    }
    const bool isMax = kind == "max";
    OpMathType<T> best = OpMathType<T>(x[0]);
    for (int64_t i = 1; i < n; ++i) {
      OpMathType<T> v = OpMathType<T>(x[i]);
      if (v != v) return x[i];  // NaN propagates
      if (isMax ? v > best : v < best) best = v;
    }
    return T(best);
  }
};

// Reduces `rows` rows of `width` columns (row r starts at x + r * rowStride) column-wise
// into out[0..width): the inner loop runs along a row, so it vectorizes.
template <class T>
void reduceColumns(const std::string& kind, const T* x, int64_t rows, int64_t rowStride, int64_t width,
                   T* out) {
  using M = OpMathType<T>;
  using Acc = typename Reducer<T>::Acc;
  if (kind == "max" || kind == "min") {
    const bool isMax = kind == "max";
    std::vector<M> best(x, x + width);
    for (int64_t r = 1; r < rows; ++r)
      for (int64_t i = 0; i < width; ++i) {
        M v = M(x[r * rowStride + i]);
        if (best[i] != best[i]) continue;  // NaN propagates
        if (v != v || (isMax ? v > best[i] : v < best[i])) best[i] = v;
      }
    for (int64_t i = 0; i < width; ++i) out[i] = T(best[i]);
    return;
  }
  const bool product = kind == "prod";
  std::vector<Acc> acc(size_t(width), Acc(product ? 1 : 0));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < width; ++i)
      acc[i] = product ? acc[i] * Acc(M(x[r * rowStride + i])) : acc[i] + Acc(M(x[r * rowStride + i]));
  for (int64_t i = 0; i < width; ++i)
    out[i] = T(M(kind == "mean" ? acc[i] / Acc(rows) : acc[i]));
}

// x contiguous and the reduced dims consecutive: x is [outer, R, inner] in place, no copy.
// inner == 1 reduces contiguous segments; otherwise columns of `inner` in chunks.
template <class T>
void reduceInPlace(const std::string& kind, const T* x, int64_t outer, int64_t r, int64_t inner, T* out) {
  if (inner == 1) {
    int64_t grain = std::max<int64_t>(1, kernels::kElementwiseGrain / std::max<int64_t>(r, 1));
    parallelFor(0, outer, grain, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) out[o] = Reducer<T>::reduce(kind, x + o * r, r);
    });
    return;
  }
  constexpr int64_t kColumns = 1024;
  const int64_t chunks = (inner + kColumns - 1) / kColumns;
  int64_t grain = std::max<int64_t>(1, kernels::kElementwiseGrain / std::max<int64_t>(r * kColumns, 1));
  parallelFor(0, outer * chunks, grain, [&](int64_t begin, int64_t end) {
    for (int64_t job = begin; job < end; ++job) {
      const int64_t o = job / chunks, i0 = (job % chunks) * kColumns;
      reduceColumns(kind, x + o * r * inner + i0, r, inner, std::min(kColumns, inner - i0),
                    out + o * inner + i0);
    }
  });
}

bool consecutive(const Shape& dims) {
  for (size_t i = 1; i < dims.size(); ++i)
    if (dims[i] != dims[i - 1] + 1) return false;
  return !dims.empty();
}

// Contiguous input with consecutive reduced dims reduces in place; anything else first
// moves the reduced dims last and packs them into contiguous segments.
void reduceKernel(const OpArgs& args, std::span<Tensor> out) {
  const Tensor& x = args.inputs[0];
  const Shape& dims = args.attrs.get<Shape>("dims");
  const std::string& kind = args.attrs.get<std::string>("kind");
  const Shape& s = x.sizes();
  const int64_t outputs = out[0].numel();
  if (outputs == 0) return;
  if (dims.empty() || (x.is_contiguous() && consecutive(dims))) {
    const int64_t d0 = dims.empty() ? 0 : dims.front(), d1 = dims.empty() ? -1 : dims.back();
    const int64_t outer = numel(Shape(s.begin(), s.begin() + d0));
    const int64_t r = numel(Shape(s.begin() + d0, s.begin() + d1 + 1));
    const int64_t inner = numel(Shape(s.begin() + d1 + 1, s.end()));
    Tensor source = kernels::contiguousValues(x, args.loc);
    dispatchDType(x.dtype(), [&]<class T>() {
      reduceInPlace(kind, static_cast<const T*>(source.rawData()), outer, r, inner,
                    static_cast<T*>(out[0].rawData()));
    });
    return;
  }
  Shape perm;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) perm.push_back(d);
  perm.insert(perm.end(), dims.begin(), dims.end());
  Shape shape(perm.size());
  Strides strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    shape[i] = s[perm[i]];
    strides[i] = x.strides()[perm[i]];
  }
  Tensor packed = detail::emptyTensor(shape, x.dtype(), x.device(), false, args.loc);
  kernels::copyValues(packed, kernels::aliasOf(x, shape, strides, x.storage_offset()));
  dispatchDType(x.dtype(), [&]<class T>() {
    reduceInPlace(kind, static_cast<const T*>(packed.rawData()), outputs, packed.numel() / outputs, 1,
                  static_cast<T*>(out[0].rawData()));
  });
}

// The gradient of a reduction broadcast back over the reduced dims.
Tensor expandBack(const GradArgs& a, const Tensor& g) {
  const Shape& dims = a.attrs.get<Shape>("dims");
  Tensor kept = g.reshape(keptShape(a.inputs[0].sizes(), dims, true), a.loc);
  return kept.expand(a.inputs[0].sizes(), a.loc);
}

// d prod / d x_i is the product of the other elements of x_i's slice: out / x_i without
// zeros; with one zero, that product at the zero and 0 elsewhere; 0 with two or more (as
// PyTorch, exact where out / x would divide by zero).
Tensor prodGrad(const GradArgs& a) {
  const SourceLoc& l = a.loc;
  const Tensor& x = a.inputs[0];
  const Shape& dims = a.attrs.get<Shape>("dims");
  Tensor isZero = eq(x, 0.0, l);
  Tensor zeroCount = sum(isZero, dims, true, l);
  Tensor safe = where(isZero, ones_like(x, l), x, l);
  Tensor withoutZeros = prod(safe, dims, true, l);
  Tensor noZero = div(expandBack(a, a.outputs[0]), safe, l);
  Tensor oneZero = where(isZero, withoutZeros.expand(x.sizes(), l), zeros_like(x, l), l);
  Tensor partial = where(eq(zeroCount, int64_t(0), l), noZero,
                         where(eq(zeroCount, int64_t(1), l), oneZero, zeros_like(x, l), l), l);
  return mul(expandBack(a, a.gradOutputs[0]), partial, l);
}

Grads reduceGrad(const GradArgs& a) {
  const std::string& kind = a.attrs.get<std::string>("kind");
  const SourceLoc& l = a.loc;
  const Tensor& x = a.inputs[0];
  if (kind == "sum") return {expandBack(a, a.gradOutputs[0])};
  if (kind == "mean") {
    double count = double(x.numel()) / double(std::max<int64_t>(a.outputs[0].numel(), 1));
    return {expandBack(a, div(a.gradOutputs[0], count, l))};
  }
  if (kind == "prod") return {prodGrad(a)};
  // max/min: ties share the gradient evenly, as torch.amax/amin.
  const Shape& dims = a.attrs.get<Shape>("dims");
  Tensor hit = convert(eq(x, expandBack(a, a.outputs[0]), l), x.dtype(), l);
  Tensor count = sum(hit, dims, true, l);
  return {mul(expandBack(a, a.gradOutputs[0]), div(hit, count, l), l)};
}

}  // namespace

const OpDef kReduce{"reduce", "kiln.reduce", reduceShape, reduceKernel, nullptr, reduceGrad};

}  // namespace ops

namespace {

// `name` is the public function (amax), `kind` the kiln.reduce kind (max); errors name
// the function the user called.
Tensor reduce(const char* name, const char* kind, const Tensor& x, Shape dims, bool keepdim,
              const SourceLoc& loc) {
  if (dims.empty()) {
    dims.resize(x.dim());
    for (int64_t d = 0; d < x.dim(); ++d) dims[d] = d;
  }
  for (int64_t& d : dims) d = normalizeDim(d, x.dim(), name, loc);
  std::sort(dims.begin(), dims.end());
  if (std::adjacent_find(dims.begin(), dims.end()) != dims.end())
    throw ShapeError::make(loc, name, "dim appears more than once in ", dims);
  if (x.dim() == 0) dims.clear();
  const std::string k = kind;
  if (k == "mean" && !x.is_floating_point())
    throw TypeError::make(loc, name, "expects a floating-point tensor, got ", x.dtype(), " of shape ",
                          x.sizes());
  for (int64_t d : dims)
    if ((k == "max" || k == "min") && x.sizes()[d] == 0)
      throw ShapeError::make(loc, name, "cannot reduce dim ", d, " of size 0 of a tensor of shape ",
                             x.sizes(), " (max and min have no identity)");
  return dispatch1(ops::kReduce, {x},
                   {{"kind", std::string(kind)}, {"dims", dims}, {"keep_dims", keepdim}}, loc);
}

// Integer and bool sums and products accumulate in int64, as PyTorch.
Tensor widenIntegral(const Tensor& x, const SourceLoc& loc) {
  return x.is_floating_point() ? x : convert(x, kInt64, loc);
}

}  // namespace

Tensor sum(const Tensor& x, Shape dims, bool keepdim, const SourceLoc& loc) {
  return reduce("sum", "sum", widenIntegral(x, loc), std::move(dims), keepdim, loc);
}
Tensor prod(const Tensor& x, Shape dims, bool keepdim, const SourceLoc& loc) {
  return reduce("prod", "prod", widenIntegral(x, loc), std::move(dims), keepdim, loc);
}
Tensor mean(const Tensor& x, Shape dims, bool keepdim, const SourceLoc& loc) {
  return reduce("mean", "mean", x, std::move(dims), keepdim, loc);
}
Tensor max(const Tensor& x, const SourceLoc& loc) { return amax(x, {}, false, loc); }
Tensor min(const Tensor& x, const SourceLoc& loc) { return amin(x, {}, false, loc); }
Tensor max(const Tensor& a, const Tensor& b, const SourceLoc& loc) { return maximum(a, b, loc); }
Tensor min(const Tensor& a, const Tensor& b, const SourceLoc& loc) { return minimum(a, b, loc); }
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim, const SourceLoc& loc) {
  return {amax(x, {dim}, keepdim, loc), argmax(x, dim, keepdim, loc)};
}
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim, const SourceLoc& loc) {
  return {amin(x, {dim}, keepdim, loc), argmin(x, dim, keepdim, loc)};
}

Tensor amax(const Tensor& x, Shape dims, bool keepdim, const SourceLoc& loc) {
  return reduce("amax", "max", x, std::move(dims), keepdim, loc);
}
Tensor amin(const Tensor& x, Shape dims, bool keepdim, const SourceLoc& loc) {
  return reduce("amin", "min", x, std::move(dims), keepdim, loc);
}

// Sums over the dims broadcasting added (leading ones) or stretched (size 1 in `shape`).
Tensor sum_to(const Tensor& grad, const Shape& shape, const SourceLoc& loc) {
  if (grad.sizes() == shape) return grad;
  const int64_t lead = grad.dim() - int64_t(shape.size());
  Shape dims;
  for (int64_t d = 0; d < grad.dim(); ++d)
    if (d < lead || (shape[d - lead] == 1 && grad.sizes()[d] != 1)) dims.push_back(d);
  Tensor summed = dims.empty() ? grad : reduce("sum_to", "sum", grad, dims, true, loc);
  return summed.reshape(shape, loc);
}

}  // namespace kiln
