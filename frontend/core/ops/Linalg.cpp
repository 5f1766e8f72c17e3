// The matmul op of the op table (kiln.matmul): oneDNN for f32, a blocked reference loop
// for the dtypes oneDNN's matmul lacks on CPU; and torch.matmul/mm/bmm on top of it.
#include <optional>
#include <unordered_map>

#include "frontend/core/kernels/Copy.h"
#include "frontend/core/kernels/Epilogue.h"
#include "frontend/core/kernels/OneDnn.h"
#include "frontend/core/ops/Compose.h"
#include "frontend/core/ops/OpTable.h"
#include "frontend/core/ops/ShapeRules.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "kiln/core/ThreadPool.h"

namespace kiln {
namespace ops {
namespace {

using Grads = std::vector<Tensor>;

// Rows and columns of the operand as the product sees it (after its transpose flag).
std::pair<int64_t, int64_t> matrixDims(const Shape& s, bool transposed) {
  int64_t r = s[s.size() - 2], c = s[s.size() - 1];
  return transposed ? std::pair{c, r} : std::pair{r, c};
}

std::vector<TensorMeta> matmulShape(const OpDef& op, std::span<const TensorMeta> in,
                                    const Attrs& attrs, const SourceLoc& loc) {
  const Shape &a = in[0].shape, &b = in[1].shape;
  if (a.size() < 2 || a.size() != b.size() || !std::equal(a.begin(), a.end() - 2, b.begin()))
    throw ShapeError::make(loc, op.name, "operands of shapes ", a, " and ", b,
                           " need rank >= 2 and equal batch dims");
  auto [m, k] = matrixDims(a, attrs.get<bool>("transpose_a"));
  auto [k2, n] = matrixDims(b, attrs.get<bool>("transpose_b"));
  if (k != k2)
    throw ShapeError::make(loc, op.name, "cannot multiply shapes ", a, " and ", b, ": ", k, " != ", k2);
  if (in[0].dtype != in[1].dtype || in[0].dtype == kBool)
    throw TypeError::make(loc, op.name, "operands must share a numeric dtype, got ", in[0].dtype,
                          " and ", in[1].dtype);
  TensorMeta out = in[0];
  out.shape.back() = n;
  out.shape[out.shape.size() - 2] = m;
  return {out};
}

// The strides of `x` read as a (possibly transposed) batch of matrices, or empty when
// oneDNN cannot read its layout directly (broadcast batch dims, odd inner strides).
dnnl::memory::dims matrixStrides(const Tensor& x, bool transposed) {
  Strides s = x.strides();
  const Shape& n = x.sizes();
  const size_t r = s.size();
  for (size_t d = 0; d + 2 < r; ++d)
    if (s[d] == 0 && n[d] > 1) return {};
  for (size_t d = r; d-- > 0;) {
    int64_t span = 1;  // how far the dims after d reach, as oneDNN measures it
    for (size_t e = d + 1; e < r; ++e) span = std::max(span, n[e] * s[e]);
    // A dim of size 1 is never stepped along, so its stride can be anything (a slice's
    // step leaves 2 on a [33, 1] column), which oneDNN reads as an overlapping layout and
    // refuses ("could not execute a primitive", kiln-fuzz seed 218878): it gets the span.
    if (n[d] == 1) s[d] = span;
    // A batch dim whose stride is below the span of the matrix after it (rows sliced with
    // a step: [2, 4, 11] with strides [121, 33, 1]) does not overlap, but oneDNN cannot
    // describe it ("could not construct a memory descriptor using strides", 223643): copy.
    else if (d + 2 < r && s[d] < span) return {};
  }
  if (s[r - 1] != 1 && s[r - 2] != 1) return {};
  if (transposed) std::swap(s[r - 1], s[r - 2]);
  return dnnl::memory::dims(s.begin(), s.end());
}

// How dnnl_sgemm (row-major) reads a 2-d `x` as op(x): 'N' or 'T' and the leading
// dimension, for x stored row by row (unit column stride) or column by column (then read as
// the transpose of a row-major matrix, so the flag flips); nothing otherwise. Both layouts
// must go here: the compiler turns a transpose into a flag (mm(x, w.t()) becomes
// matmul(x, w, transpose_b)), and both spellings must reach the same call for the same bits.
std::optional<std::pair<char, int64_t>> sgemmOperand(const Tensor& x, bool transposed) {
  const Shape& n = x.sizes();
  const Strides& s = x.strides();
  if (n.size() != 2) return std::nullopt;
  auto rowMajor = [](int64_t rows, int64_t columns, int64_t rowStride, int64_t columnStride,
                     bool flag) -> std::optional<std::pair<char, int64_t>> {
    if (columnStride != 1 && columns > 1) return std::nullopt;
    const int64_t ld = rows > 1 ? rowStride : std::max<int64_t>(columns, 1);
    if (ld < std::max<int64_t>(columns, 1)) return std::nullopt;
    return std::pair{flag ? 'T' : 'N', ld};
  };
  if (auto op = rowMajor(n[0], n[1], s[0], s[1], transposed)) return op;
  return rowMajor(n[1], n[0], s[1], s[0], !transposed);
}

// out = op(a) op(b) for 2-d operands stored by rows or columns, through dnnl_sgemm: oneDNN's matmul
// primitive picks its brgemm kernel on AVX-512, 6-11% slower than the sgemm driver at 2048
// on a Zen 5 (bench/traced, 2026-11-27). Returns false where it does not apply.
bool sgemmMatmul(const Tensor& a, const Tensor& b, bool ta, bool tb, Tensor& out) {
  const auto pa = sgemmOperand(a, ta), pb = sgemmOperand(b, tb);
  if (!pa || !pb || out.sizes().size() != 2 || !out.is_contiguous()) return false;
  const int64_t m = out.sizes()[0], n = out.sizes()[1], k = ta ? a.sizes()[0] : a.sizes()[1];
  kernels::onednn::useKilnThreads();
  return dnnl::sgemm(pa->first, pb->first, m, n, k, 1.0f, static_cast<const float*>(a.rawData()), pa->second,
                     static_cast<const float*>(b.rawData()), pb->second, 0.0f,
                     static_cast<float*>(out.rawData()), std::max<int64_t>(n, 1)) == dnnl::status::success;
}

// out = op(a) op(b), plus `bias` (contiguous, one value per column) through oneDNN's bias
// argument when given: the product's f32 accumulator plus the bias, rounded once, which
// is what storing the product and adding the bias rounds to.
void onednnMatmul(const Tensor& a, const Tensor& b, bool ta, bool tb, Tensor& out,
                  const Tensor* bias = nullptr) {
  if (!bias && sgemmMatmul(a, b, ta, tb, out)) return;
  kernels::onednn::useKilnThreads();
  using dt = dnnl::memory::data_type;
  Shape as = a.sizes(), bs = b.sizes();
  if (ta) std::swap(as[as.size() - 1], as[as.size() - 2]);
  if (tb) std::swap(bs[bs.size() - 1], bs[bs.size() - 2]);
  dnnl::memory::desc aMd(as, dt::f32, matrixStrides(a, ta));
  dnnl::memory::desc bMd(bs, dt::f32, matrixStrides(b, tb));
  dnnl::memory::desc cMd(out.sizes(), dt::f32, out.strides());
  // oneDNN keeps a cache of primitives keyed by descriptor, so repeated shapes reuse one.
  dnnl::engine& engine = kernels::onednn::engine();
  // [1, N], one value per column (addmm's products are 2-d); empty without a bias.
  const dnnl::memory::desc biasMd =
      bias ? dnnl::memory::desc({1, out.sizes().back()}, dt::f32, dnnl::memory::format_tag::ab)
           : dnnl::memory::desc();
  const dnnl::matmul::primitive_desc pd(
      bias ? dnnl::matmul::desc(aMd, bMd, biasMd, cMd) : dnnl::matmul::desc(aMd, bMd, cMd), engine);
  std::unordered_map<int, dnnl::memory> memories{{DNNL_ARG_SRC, dnnl::memory(aMd, engine, a.rawData())},
                                                {DNNL_ARG_WEIGHTS, dnnl::memory(bMd, engine, b.rawData())},
                                                {DNNL_ARG_DST, dnnl::memory(cMd, engine, out.rawData())}};
  if (bias) memories.emplace(DNNL_ARG_BIAS, dnnl::memory(biasMd, engine, bias->rawData()));
  dnnl::stream& stream = kernels::onednn::stream();
  dnnl::matmul(pd).execute(stream, memories);
  stream.wait();
}

// C[b] = op(A[b]) op(B[b]) for dtypes oneDNN lacks; accumulates in OpMath (double for f64).
void referenceMatmul(const Tensor& a, const Tensor& b, bool ta, bool tb, Tensor& out) {
  const Shape& os = out.sizes();
  const int64_t rank = int64_t(os.size()), m = os[rank - 2], n = os[rank - 1];
  const int64_t k = ta ? a.sizes()[rank - 2] : a.sizes()[rank - 1];
  const int64_t batch = out.numel() / std::max<int64_t>(m * n, 1);
  const Strides &sa = a.strides(), &sb = b.strides();
  const int64_t aRow = ta ? sa[rank - 1] : sa[rank - 2], aCol = ta ? sa[rank - 2] : sa[rank - 1];
  const int64_t bRow = tb ? sb[rank - 1] : sb[rank - 2], bCol = tb ? sb[rank - 2] : sb[rank - 1];
  dispatchDType(out.dtype(), [&]<class T>() {
    using M = OpMathType<T>;
    const T *pa = static_cast<const T*>(a.rawData()), *pb = static_cast<const T*>(b.rawData());
    T* pc = static_cast<T*>(out.rawData());
    parallelFor(0, batch * m, std::max<int64_t>(1, 4096 / std::max<int64_t>(n * k, 1)),
                [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t bi = row / std::max<int64_t>(m, 1), i = row % std::max<int64_t>(m, 1);
        int64_t aOff = 0, bOff = 0;
        for (int64_t d = rank - 3, rest = bi; d >= 0; --d) {
          aOff += (rest % os[d]) * sa[d];
          bOff += (rest % os[d]) * sb[d];
          rest /= os[d];
        }
        for (int64_t j = 0; j < n; ++j) {
          M acc = M(0);
          for (int64_t p = 0; p < k; ++p)
            acc += M(pa[aOff + i * aRow + p * aCol]) * M(pb[bOff + p * bRow + j * bCol]);
          pc[row * n + j] = T(acc);
        }
      }
    });
  });
}

void matmulKernel(const OpArgs& args, std::span<Tensor> out) {
  const bool ta = args.attrs.get<bool>("transpose_a"), tb = args.attrs.get<bool>("transpose_b");
  if (out[0].numel() == 0) return;
  Tensor a = args.inputs[0], b = args.inputs[1];
  // K == 0 (the product is zeros) goes to the loops too: oneDNN divides by K.
  if (out[0].dtype() != kFloat32 || a.numel() == 0) return referenceMatmul(a, b, ta, tb, out[0]);
  if (matrixStrides(a, ta).empty()) a = kernels::contiguousValues(a, args.loc);
  if (matrixStrides(b, tb).empty()) b = kernels::contiguousValues(b, args.loc);
  onednnMatmul(a, b, ta, tb, out[0]);
}

// addmm: relu?(op(A) op(B) + bias) for 2-d A and B and a bias of one value per column.
std::vector<TensorMeta> addmmShape(const OpDef& op, std::span<const TensorMeta> in, const Attrs& attrs,
                                   const SourceLoc& loc) {
  const Shape &a = in[0].shape, &b = in[1].shape, &bias = in[2].shape;
  if (a.size() != 2 || b.size() != 2)
    throw ShapeError::make(loc, op.name, "expects 2-d operands, got shapes ", a, " and ", b);
  std::vector<TensorMeta> out = matmulShape(op, in.first(2), attrs, loc);
  if (bias.size() != 1)
    throw ShapeError::make(loc, op.name, "expects a 1-d bias (one value per column), got shape ", bias);
  if (bias[0] != out[0].shape[1])
    throw ShapeError::make(loc, op.name, "bias of shape ", bias, " does not fit a product of shape ",
                           out[0].shape, " (it needs shape [", out[0].shape[1], "])");
  if (in[2].dtype != in[0].dtype || !isFloatingPoint(in[0].dtype))
    throw TypeError::make(loc, op.name, "operands and bias must share a floating dtype, got ", in[0].dtype,
                          ", ", in[1].dtype, " and ", in[2].dtype);
  return out;
}

void addmmKernel(const OpArgs& args, std::span<Tensor> out) {
  const bool ta = args.attrs.get<bool>("transpose_a"), tb = args.attrs.get<bool>("transpose_b");
  const bool relu = reluEpilogue(args.attrs);
  if (out[0].numel() == 0) return;
  Tensor a = args.inputs[0], b = args.inputs[1], bias = kernels::contiguousValues(args.inputs[2], args.loc);
  const bool emptyProduct = a.numel() == 0;  // K == 0: the product is zeros
  const int64_t columns = out[0].sizes()[1];
  if (out[0].dtype() != kFloat32 || emptyProduct) {
    referenceMatmul(a, b, ta, tb, out[0]);
    return kernels::biasAndRelu(out[0], bias, columns, 1, relu, args.loc);
  }
  if (matrixStrides(a, ta).empty()) a = kernels::contiguousValues(a, args.loc);
  if (matrixStrides(b, tb).empty()) b = kernels::contiguousValues(b, args.loc);
  // Where matmul takes dnnl_sgemm, addmm must too (the same product bits), the bias and
  // relu after it: the stored f32 product plus the bias is what matmul then add gives.
  if (sgemmMatmul(a, b, ta, tb, out[0])) return kernels::biasAndRelu(out[0], bias, columns, 1, relu, args.loc);
  onednnMatmul(a, b, ta, tb, out[0], &bias);  // the bias as oneDNN's epilogue
  if (relu) kernels::biasAndRelu(out[0], Tensor(), columns, 1, true, args.loc);
}

Tensor product(const Tensor& a, const Tensor& b, bool ta, bool tb, const SourceLoc& loc) {
  return dispatch1(kMatmul, {a, b}, {{"transpose_a", ta}, {"transpose_b", tb}}, loc);
}

// d(op(A) op(B)) with G the output gradient: dA = G op(B)^T (transposed back if A was),
// dB likewise; expressed with the transpose flags so no transpose op is recorded.
Grads matmulGrad(const GradArgs& g) {
  const bool ta = g.attrs.get<bool>("transpose_a"), tb = g.attrs.get<bool>("transpose_b");
  const Tensor &a = g.inputs[0], &b = g.inputs[1], &dc = g.gradOutputs[0];
  Tensor da = ta ? product(b, dc, tb, true, g.loc) : product(dc, b, false, !tb, g.loc);
  Tensor db = tb ? product(dc, a, true, ta, g.loc) : product(a, dc, !ta, false, g.loc);
  return {da, db};
}

// addmm's gradient: relu's mask on G first (gradBeforeRelu), then matmul's, and the bias's
// is G summed over the rows.
Grads addmmGrad(const GradArgs& g) {
  const Tensor dc = gradBeforeRelu(kAddmm, g);
  std::vector<Tensor> outputs{g.outputs[0]}, gradOutputs{dc};
  Grads d = matmulGrad(GradArgs{g.inputs.first(2), outputs, gradOutputs, g.attrs, g.loc});
  d.push_back(sum(dc, {0}, false, g.loc));
  return d;
}

}  // namespace

const OpDef kMatmul{"matmul", "kiln.matmul", matmulShape, matmulKernel, nullptr, matmulGrad,
                    kReadsInputs};
const OpDef kAddmm{"addmm", "kiln.addmm", addmmShape, addmmKernel, nullptr, addmmGrad, kReadsInputs};

}  // namespace ops

namespace {

Tensor matmulSameRank(const Tensor& a, const Tensor& b, const SourceLoc& loc) {
  DType dtype = promoteTypes(a.dtype(), b.dtype());
  return dispatch1(ops::kMatmul, {convert(a, dtype, loc), convert(b, dtype, loc)},
                   {{"transpose_a", false}, {"transpose_b", false}}, loc);
}

}  // namespace

Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, const SourceLoc& loc) {
  const DType dtype = promoteTypes(promoteTypes(a.dtype(), b.dtype()), bias.dtype());
  return dispatch1(ops::kAddmm, {convert(a, dtype, loc), convert(b, dtype, loc), convert(bias, dtype, loc)},
                   {{"transpose_a", false}, {"transpose_b", false}, {"relu", false}}, loc);
}

Tensor mm(const Tensor& a, const Tensor& b, const SourceLoc& loc) {
  if (a.dim() != 2 || b.dim() != 2)
    throw ShapeError::make(loc, "mm", "expects 2-d operands, got shapes ", a.sizes(), " and ", b.sizes());
  return matmulSameRank(a, b, loc);
}

Tensor bmm(const Tensor& a, const Tensor& b, const SourceLoc& loc) {
  if (a.dim() != 3 || b.dim() != 3 || a.sizes()[0] != b.sizes()[0])
    throw ShapeError::make(loc, "bmm", "expects 3-d operands with equal batch, got shapes ", a.sizes(),
                           " and ", b.sizes());
  return matmulSameRank(a, b, loc);
}

// torch.matmul: a 1-d operand becomes a matrix (and that dim is dropped again), batch dims
// broadcast.
Tensor matmul(const Tensor& a, const Tensor& b, const SourceLoc& loc) {
  if (a.dim() == 0 || b.dim() == 0)
    throw ShapeError::make(loc, "matmul", "both operands need at least one dim, got shapes ", a.sizes(),
                           " and ", b.sizes());
  Tensor x = a.dim() == 1 ? a.unsqueeze(0, loc) : a;
  Tensor y = b.dim() == 1 ? b.unsqueeze(-1, loc) : b;
  Shape xb(x.sizes().begin(), x.sizes().end() - 2), yb(y.sizes().begin(), y.sizes().end() - 2);
  Shape batch = broadcastShapes(xb, yb, "matmul", loc);
  Shape xs = batch, ys = batch;
  xs.insert(xs.end(), x.sizes().end() - 2, x.sizes().end());
  ys.insert(ys.end(), y.sizes().end() - 2, y.sizes().end());
  Tensor out = matmulSameRank(x.expand(xs, loc), y.expand(ys, loc), loc);
  if (a.dim() == 1) out = out.squeeze(-2, loc);
  if (b.dim() == 1) out = out.squeeze(-1, loc);
  return out;
}

}  // namespace kiln
