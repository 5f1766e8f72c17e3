// The reduction op of the op table (kiln.reduce: sum mean max min prod over dims) and the
// public sum/mean/amax/amin/prod/sum_to built on it.
#include <algorithm>
#include <array>
#include <optional>

#include "frontend/core/kernels/Copy.h"
#include "frontend/core/kernels/Loops.h"
#include "frontend/core/kernels/Reduce.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "frontend/core/ops/Compose.h"
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
    if (dims[i] < 0 || dims[i] >= rank || (i > 0 && dims[i] <= dims[i - 1]))
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

using kernels::ReduceKind;

ReduceKind kindOf(const std::string& kind) {
  if (kind == "sum") return ReduceKind::Sum;
  if (kind == "mean") return ReduceKind::Mean;
  if (kind == "prod") return ReduceKind::Prod;
  if (kind == "max") return ReduceKind::Max;
  return ReduceKind::Min;
}

// Calls f.template operator()<K>() for the kind, so the loops are compiled per kind.
template <class F>
void dispatchKind(ReduceKind kind, F&& f) {
  switch (kind) {
    case ReduceKind::Sum: return f.template operator()<ReduceKind::Sum>();
    case ReduceKind::Mean: return f.template operator()<ReduceKind::Mean>();
    case ReduceKind::Prod: return f.template operator()<ReduceKind::Prod>();
    case ReduceKind::Max: return f.template operator()<ReduceKind::Max>();
    case ReduceKind::Min: return f.template operator()<ReduceKind::Min>();
  }
}

// A contiguous tensor seen as runs of dims that are all kept or all reduced (dims of size 1
// dropped, neighbours of the same kind merged): [K, R] is rows, [K, R, K] columns.
struct Run {
  int64_t size;
  bool reduced;
};

std::vector<Run> runsOf(const Shape& shape, const Shape& dims) {
  std::vector<Run> runs;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    if (shape[d] == 1) continue;
    bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!runs.empty() && runs.back().reduced == reduced) runs.back().size *= shape[d];
    else runs.push_back({shape[d], reduced});
  }
  return runs;
}

// Outputs [begin, end) of plain rows of `segment` elements: one parallelFor chunk, the loop
// the vector clones are made of (cloned per chunk so reduceRow inlines and short rows pay no
// ifunc call each).
template <ReduceKind K, class T>
KILN_VECTOR_CLONES void reduceRowChunk(const T* x, int64_t segment, int64_t begin, int64_t end,
                                       T* out) {
  for (int64_t o = begin; o < end; ++o) out[o] = kernels::reduceRow<K>(x + o * segment, segment);
}

// Outputs made of several segments (reduced runs before the last): segment length, elements
// per output, and the kept and reduced runs before the segment with their strides.
struct SegmentedRows {
  int64_t segment, perOutput;
  const std::vector<int64_t>&keptSize, &keptStride, &redSize, &redStride;
};

// Outputs [begin, end) of reduceRows' segmented layout: one parallelFor chunk, cloned.
template <ReduceKind K, class T>
KILN_VECTOR_CLONES void reduceSegmentedChunk(const T* x, const SegmentedRows& l, int64_t begin,
                                             int64_t end, T* out) {
  for (int64_t o = begin; o < end; ++o) {
    int64_t base = 0;
    for (size_t k = 0, rest = size_t(o); k < l.keptSize.size(); ++k) {
      base += int64_t(rest % size_t(l.keptSize[k])) * l.keptStride[k];
      rest /= size_t(l.keptSize[k]);
    }
    // Element i of the output: segment i / segment, its index over the reduced runs with
    // the innermost (first) fastest.
    auto at = [&](int64_t i) {
      int64_t offset = base;
      for (size_t k = 0, s = size_t(i / l.segment); k < l.redSize.size(); ++k) {
        offset += int64_t(s % size_t(l.redSize[k])) * l.redStride[k];
        s /= size_t(l.redSize[k]);
      }
      const int64_t within = i % l.segment;
      return std::pair{x + offset + within, l.segment - within};
    };
    out[o] = kernels::reduceSegments<K, T>(at, l.perOutput);
  }
}

// out[o] for each output o: its elements are segments of `segment` contiguous elements, one
// per index of the reduced runs before the last (none for plain rows), taken in row order.
// So an output's lanes see its elements in the order of a packed copy, without the copy.
template <ReduceKind K, class T>
void reduceRows(const T* x, const std::vector<Run>& runs, int64_t outputs, T* out) {
  const int64_t segment = runs.empty() || !runs.back().reduced ? 1 : runs.back().size;
  // The runs before the segment, with their strides in elements.
  std::vector<int64_t> keptSize, keptStride, redSize, redStride;
  int64_t stride = segment, perOutput = segment;
  for (int64_t i = int64_t(runs.size()) - 2; i >= 0; --i) {
    (runs[i].reduced ? redSize : keptSize).push_back(runs[i].size);
    (runs[i].reduced ? redStride : keptStride).push_back(stride);
    if (runs[i].reduced) perOutput *= runs[i].size;
    stride *= runs[i].size;
  }
  const int64_t grain = std::max<int64_t>(1, kernels::kElementwiseGrain / std::max<int64_t>(perOutput, 1));
  if (redSize.empty()) {  // plain rows
    parallelFor(0, outputs, grain, [&](int64_t begin, int64_t end) {
      reduceRowChunk<K>(x, segment, begin, end, out);
    });
    return;
  }
  const SegmentedRows layout{segment, perOutput, keptSize, keptStride, redSize, redStride};
  parallelFor(0, outputs, grain, [&](int64_t begin, int64_t end) {
    reduceSegmentedChunk<K>(x, layout, begin, end, out);
  });
}

// Column blocks (jobs) [begin, end) of reduceColumnBlocks: one parallelFor chunk, cloned.
template <ReduceKind K, class T>
KILN_VECTOR_CLONES void reduceColumnChunk(const T* x, int64_t r, int64_t inner, int64_t block,
                                          int64_t begin, int64_t end, T* out) {
  const int64_t blocks = (inner + block - 1) / block;
  kernels::ColumnAcc<K, T> acc[kernels::kMaxColumnBlock];
  for (int64_t job = begin; job < end; ++job) {
    const int64_t o = job / blocks, j0 = (job % blocks) * block;
    kernels::reduceColumns<K>(x + o * r * inner + j0, r, inner, std::min(block, inner - j0),
                              out + o * inner + j0, acc);
  }
}

// x is [outer, r, inner]: out[o][j] reduces x[o][.][j], in blocks of columns spread over
// the pool.
template <ReduceKind K, class T>
void reduceColumnBlocks(const T* x, int64_t outer, int64_t r, int64_t inner, T* out) {
  const int64_t block = kernels::columnBlock(outer, inner);
  const int64_t blocks = (inner + block - 1) / block;
  const int64_t grain = std::max<int64_t>(1, kernels::kElementwiseGrain / std::max<int64_t>(r * block, 1));
  parallelFor(0, outer * blocks, grain, [&](int64_t begin, int64_t end) {
    reduceColumnChunk<K>(x, r, inner, block, begin, end, out);
  });
}

// Moves the reduced dims last into a packed copy: for layouts neither rows nor columns.
Tensor packReducedLast(const Tensor& x, const Shape& dims, const SourceLoc& loc) {
  const Shape& s = x.sizes();
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
  Tensor packed = detail::emptyTensor(shape, x.dtype(), x.device(), false, loc);
  kernels::copyValues(packed, kernels::aliasOf(x, shape, strides, x.storage_offset()));
  return packed;
}

// [outer, r, inner] for the column loop: a layout whose reduced dims sit between kept ones
// ([R, K] or [K, R, K]) or that reduces nothing ([K], as [1, 1, K]).
std::optional<std::array<int64_t, 3>> columnsOf(const std::vector<Run>& runs) {
  if (runs.empty() || runs.back().reduced || runs.size() > 3) return std::nullopt;
  if (runs.size() == 1) return std::array<int64_t, 3>{1, 1, runs[0].size};
  if (runs.size() == 2) return std::array<int64_t, 3>{1, runs[0].size, runs[1].size};
  if (runs[0].reduced) return std::nullopt;
  return std::array<int64_t, 3>{runs[0].size, runs[1].size, runs[2].size};
}

// Reads contiguous inputs in place. The layout decides the loop: reduced dims last are
// rows (also with reduced dims further out, as batch_norm's [N, C, H, W] over 0, 2, 3);
// reduced dims between kept ones are columns; anything else is packed into rows first.
void reduceKernel(const OpArgs& args, std::span<Tensor> out) {
  const Tensor& x = args.inputs[0];
  const Shape& dims = args.attrs.get<Shape>("dims");
  const int64_t outputs = out[0].numel();
  if (outputs == 0) return;
  std::vector<Run> runs = runsOf(x.sizes(), dims);
  const bool rows = runs.empty() || runs.back().reduced;
  const std::optional<std::array<int64_t, 3>> columns = columnsOf(runs);
  const bool packed = !rows && !columns && x.numel() > 0;
  const Tensor source = packed ? packReducedLast(x, dims, args.loc) : kernels::contiguousValues(x, args.loc);
  if (packed) runs = {{outputs, false}, {x.numel() / outputs, true}};
  dispatchDType(x.dtype(), [&]<class T>() {
    T* dst = static_cast<T*>(out[0].rawData());
    dispatchKind(kindOf(args.attrs.get<std::string>("kind")), [&]<ReduceKind K>() {
      if (x.numel() == 0)  // sums of nothing (max and min of nothing are rejected before)
        return std::fill(dst, dst + outputs, kernels::reduceNothing<K, T>());
      const T* src = static_cast<const T*>(source.rawData());
      if (!columns) return reduceRows<K>(src, runs, outputs, dst);
      const auto [outer, r, inner] = *columns;
      reduceColumnBlocks<K>(src, outer, r, inner, dst);
    });
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
    // float32/float64: the count as a tensor (countOver), so a mean over the batch merges
    // across batch sizes in a trace; a half-precision count could be inexact.
    if (x.dtype() == kFloat32 || x.dtype() == kFloat64)
      return {expandBack(a, div(a.gradOutputs[0], countOver(x, a.attrs.get<Shape>("dims"), l), l))};
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

Tensor sum(const Tensor& x, Dims dims, bool keepdim, const SourceLoc& loc) {
  return reduce("sum", "sum", widenIntegral(x, loc), std::move(dims), keepdim, loc);
}
Tensor prod(const Tensor& x, Dims dims, bool keepdim, const SourceLoc& loc) {
  return reduce("prod", "prod", widenIntegral(x, loc), std::move(dims), keepdim, loc);
}
Tensor mean(const Tensor& x, Dims dims, bool keepdim, const SourceLoc& loc) {
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

Tensor amax(const Tensor& x, Dims dims, bool keepdim, const SourceLoc& loc) {
  return reduce("amax", "max", x, std::move(dims), keepdim, loc);
}
Tensor amin(const Tensor& x, Dims dims, bool keepdim, const SourceLoc& loc) {
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
