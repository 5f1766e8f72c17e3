// Convolution and pooling ops of the op table (kiln.conv2d, kiln.pool2d): oneDNN for f32
// (convolutions in its blocked layouts where plain ones would get im2col + sgemm),
// reference loops for other dtypes, gradients composed from primitive ops.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include <omp.h>

#include "frontend/core/kernels/Copy.h"
#include "frontend/core/kernels/Depthwise.h"
#include "frontend/core/kernels/Epilogue.h"
#include "frontend/core/kernels/OneDnn.h"
#include "frontend/core/ops/Compose.h"
#include "frontend/core/ops/OpTable.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Storage.h"
#include "kiln/core/ThreadPool.h"

namespace kiln {
namespace ops {
namespace {

using Grads = std::vector<Tensor>;

// The window geometry shared by conv2d and pool2d, NCHW.
struct Window {
  int64_t kh, kw, sh, sw, dh, dw;
  int64_t pt, pb, pl, pr;  // padding top, bottom, left, right
  int64_t outH(int64_t h) const { return extent(h + pt + pb, dh * (kh - 1) + 1, sh); }
  int64_t outW(int64_t w) const { return extent(w + pl + pr, dw * (kw - 1) + 1, sw); }
  // floor((padded - span) / stride) + 1, and 0 when the window spans more than the padded
  // input: C++ division truncates, so (2 - 3) / 2 + 1 would give 1 (the dialect says 0).
  static int64_t extent(int64_t padded, int64_t span, int64_t stride) {
    return padded < span ? 0 : (padded - span) / stride + 1;
  }
};

Window windowOf(const Attrs& attrs, int64_t kh, int64_t kw) {
  const Shape& s = attrs.get<Shape>("stride");
  const Shape& p = attrs.get<Shape>("padding");
  Shape d = attrs.has("dilation") ? attrs.get<Shape>("dilation") : Shape{1, 1};
  return Window{kh, kw, s[0], s[1], d[0], d[1], p[0], p[1], p[2], p[3]};
}

void checkWindow(const OpDef& op, const Attrs& attrs, const TensorMeta& x, int64_t kh, int64_t kw,
                 const SourceLoc& loc) {
  const Shape& s = attrs.get<Shape>("stride");
  const Shape& p = attrs.get<Shape>("padding");
  Shape d = attrs.has("dilation") ? attrs.get<Shape>("dilation") : Shape{1, 1};
  bool ok = x.shape.size() == 4 && s.size() == 2 && p.size() == 4 && d.size() == 2;
  for (size_t i = 0; ok && i < 2; ++i) ok = s[i] > 0 && d[i] > 0;
  for (size_t i = 0; ok && i < 4; ++i) ok = p[i] >= 0;
  if (!ok)
    throw ShapeError::make(loc, op.name, "expects an NCHW input, positive stride ", s,
                           " and dilation ", d, ", non-negative padding ", p, "; got input ", x.shape);
  Window w = windowOf(attrs, kh, kw);
  if (w.outH(x.shape[2]) <= 0 || w.outW(x.shape[3]) <= 0)
    throw ShapeError::make(loc, op.name, "a ", kh, "x", kw, " window does not fit the input of shape ",
                           x.shape, " with padding ", p);
}

// ---- conv2d ---------------------------------------------------------------------------

std::vector<TensorMeta> convShape(const OpDef& op, std::span<const TensorMeta> in, const Attrs& attrs,
                                  const SourceLoc& loc) {
  const Shape &x = in[0].shape, &w = in[1].shape;
  const int64_t groups = attrs.get<int64_t>("groups");
  if (w.size() != 4 || x.size() != 4 || groups <= 0 || x[1] != w[1] * groups || w[0] % groups != 0)
    throw ShapeError::make(loc, op.name, "input ", x, " and weight ", w, " do not fit groups = ", groups,
                           " (NCHW input, OIHW weight, C = I * groups, O divisible by groups)");
  if (in[0].dtype != in[1].dtype || !isFloatingPoint(in[0].dtype))
    throw TypeError::make(loc, op.name, "input and weight must share a floating dtype, got ",
                          in[0].dtype, " and ", in[1].dtype);
  checkWindow(op, attrs, in[0], w[2], w[3], loc);
  if (in.size() == 3 && (in[2].shape.size() != 1 || in[2].shape[0] != w[0] || in[2].dtype != in[0].dtype))
    throw ShapeError::make(loc, op.name, "bias of shape ", in[2].shape, " and dtype ", in[2].dtype,
                           " does not match ", w[0], " output channels of dtype ", in[0].dtype);
  Window win = windowOf(attrs, w[2], w[3]);
  return {TensorMeta{{x[0], w[0], win.outH(x[2]), win.outW(x[3])}, in[0].dtype, in[0].device}};
}

// ---- conv2d on oneDNN ------------------------------------------------------------------

namespace onednn = kernels::onednn;
using dnnl::memory;

// How oneDNN runs one convolution geometry. The plain primitive reads NCHW/OIHW in place.
// The blocked one runs in oneDNN's own layouts (nChw16c on AVX-512): src is reordered in,
// dst out, and the weights come from the reordered-weights cache.
struct ConvPlan {
  onednn::Primitive conv;
  memory::desc src, weights, dst;  // as conv reads and writes them
  // Blocked plans only: srcIn reads x from plainSrc (its own strides when srcStrided, else
  // NCHW), dstOut writes NCHW plainDst.
  bool blocked = false, srcStrided = false;
  memory::desc plainSrc, plainDst;
  onednn::Primitive srcIn, dstOut;
};

// im2col + sgemm. oneDNN picks it for plain layouts; it is slow for kernels larger than
// 1x1 (the im2col copy) and for groups (a small gemm per group). A 1x1 convolution with one
// group is a single sgemm per image with no im2col and stays plain, the reorders would cost
// more, except on planes of at most 2x2 pixels, where each image's product has at most 4
// columns: the blocked kernel, reorders included, takes a third of its time there
// (MobileNetV2's 2x2 layers, one thread: 64->384 0.34 -> 0.10 ms, 96->576 0.75 -> 0.19 ms);
// from 4x4 on the two are even, and at 1x1 the plain sgemm is one product over the batch.
bool worthTryingBlocked(const std::string& plainImpl, const Shape& xs, const Shape& ws, int64_t groups) {
  const bool tinyPlanes = xs[2] * xs[3] > 1 && xs[2] * xs[3] <= 4;
  return plainImpl.find("gemm") != std::string::npos && (ws[2] * ws[3] > 1 || groups > 1 || tinyPlanes);
}

// The blocked primitive must be another implementation than the plain one, and not the
// reference loops: for some shapes (the depthwise weight gradient) oneDNN has nothing
// better than the same gemm.
bool blockedIsBetter(const std::string& blockedImpl, const std::string& plainImpl) {
  return !blockedImpl.empty() && blockedImpl != plainImpl && blockedImpl.rfind("ref", 0) != 0;
}

// OIHW weights as oneDNN sees them: GOIHW when grouped.
Shape weightDims(const Shape& ws, int64_t groups) {
  if (groups == 1) return ws;
  return {groups, ws[0] / groups, ws[1], ws[2], ws[3]};
}

std::optional<memory::desc> weightDesc(const Tensor& w, int64_t groups) {
  const Strides& s = w.strides();
  if (groups == 1) return onednn::stridedDesc(w.sizes(), s);
  return onednn::stridedDesc(weightDims(w.sizes(), groups),
                             {s[0] * (w.sizes()[0] / groups), s[0], s[1], s[2], s[3]});
}

std::shared_ptr<const ConvPlan> makeConvPlan(const Tensor& x, const Shape& ws, const Window& win,
                                             int64_t groups, const Shape& ys, bool bias) {
  using tag = memory::format_tag;
  const auto f32 = memory::data_type::f32;
  const Shape wd = weightDims(ws, groups);
  // allowEmpty: an empty descriptor, not an exception, when no implementation fits.
  auto primitiveDesc = [&](dnnl::prop_kind prop, tag layout, tag weightLayout, bool allowEmpty) {
    const memory::desc src(x.sizes(), f32, layout), weights(wd, f32, weightLayout), dst(ys, f32, layout);
    auto desc = bias ? dnnl::convolution_forward::desc(
                           prop, dnnl::algorithm::convolution_direct, src, weights,
                           memory::desc({ws[0]}, f32, tag::a), dst, {win.sh, win.sw},
                           {win.dh - 1, win.dw - 1}, {win.pt, win.pl}, {win.pb, win.pr})
                     : dnnl::convolution_forward::desc(
                           prop, dnnl::algorithm::convolution_direct, src, weights, dst,
                           {win.sh, win.sw}, {win.dh - 1, win.dw - 1}, {win.pt, win.pl},
                           {win.pb, win.pr});
    return dnnl::convolution_forward::primitive_desc(desc, onednn::userScratchpad(), onednn::engine(),
                                                     allowEmpty);
  };
  auto plan = std::make_shared<ConvPlan>();
  auto plain = primitiveDesc(dnnl::prop_kind::forward_inference, tag::nchw,
                             groups == 1 ? tag::oihw : tag::goihw, false);
  const std::string plainImpl = plain.impl_info_str();
  if (worthTryingBlocked(plainImpl, x.sizes(), ws, groups)) {
    // forward_training, as LibTorch's ideep asks: oneDNN 2.6 then picks the nChw16c direct
    // kernels (jit:avx512_core, jit_dw). forward_inference picks brgconv on NHWC, whose
    // reorders from NCHW cost more, and a weight layout that is slow to reorder into.
    auto blocked = primitiveDesc(dnnl::prop_kind::forward_training, tag::any, tag::any, true);
    if (blocked && blockedIsBetter(blocked.impl_info_str(), plainImpl)) {
      plan->conv = onednn::makePrimitive<dnnl::convolution_forward>(blocked);
      plan->src = blocked.src_desc();
      plan->weights = blocked.weights_desc();
      plan->dst = blocked.dst_desc();
      plan->blocked = true;
      std::optional<memory::desc> strided = onednn::stridedDesc(x.sizes(), x.strides());
      plan->srcStrided = strided.has_value();
      plan->plainSrc = strided.value_or(memory::desc(x.sizes(), f32, tag::nchw));
      plan->plainDst = memory::desc(ys, f32, tag::nchw);
      plan->srcIn = onednn::makeReorder(plan->plainSrc, plan->src);
      plan->dstOut = onednn::makeReorder(plan->dst, plan->plainDst);
      return plan;
    }
  }
  plan->conv = onednn::makePrimitive<dnnl::convolution_forward>(plain);
  plan->src = plain.src_desc();
  plan->weights = plain.weights_desc();
  plan->dst = plain.dst_desc();
  return plan;
}

// Plans by geometry, bias, and x's strides, which the blocked src reorder reads.
std::shared_ptr<const ConvPlan> convPlan(const Tensor& x, const Shape& ws, const Window& win,
                                         int64_t groups, const Shape& ys, bool bias) {
  std::vector<int64_t> key(x.sizes());
  for (size_t d = 0; d < x.sizes().size(); ++d) key.push_back(x.sizes()[d] == 1 ? 0 : x.strides()[d]);
  key.insert(key.end(), ws.begin(), ws.end());
  key.insert(key.end(), {groups, win.sh, win.sw, win.dh, win.dw, win.pt, win.pb, win.pl, win.pr, bias});
  static auto* plans = new onednn::PlanCache<ConvPlan>(128);
  return plans->get(std::move(key), [&] { return makeConvPlan(x, ws, win, groups, ys, bias); });
}

// Plain plans read dense NCHW/OIHW. Blocked plans reorder x through its strides where
// oneDNN can describe them (the backward passes hand in transposed views), and likewise
// the weights into the cache.
// With a (contiguous) bias, oneDNN adds it as the convolution's epilogue.
void onednnConv(const Tensor& xIn, const Tensor& wIn, const Tensor& bias, const Window& win,
                int64_t groups, Tensor& out, const SourceLoc& loc) {
  onednn::useKilnThreads();
  const std::shared_ptr<const ConvPlan> plan =
      convPlan(xIn, wIn.sizes(), win, groups, out.sizes(), bias.defined());
  dnnl::engine& engine = onednn::engine();
  auto withBias = [&](std::unordered_map<int, memory> args) {
    if (bias.defined())
      args.emplace(DNNL_ARG_BIAS, memory(memory::desc({bias.numel()}, memory::data_type::f32,
                                                      memory::format_tag::a),
                                         engine, bias.rawData()));
    return args;
  };
  if (!plan->blocked) {
    Tensor x = kernels::contiguousValues(xIn, loc), w = kernels::contiguousValues(wIn, loc);
    plan->conv.run(withBias({{DNNL_ARG_SRC, memory(plan->src, engine, x.rawData())},
                             {DNNL_ARG_WEIGHTS, memory(plan->weights, engine, w.rawData())},
                             {DNNL_ARG_DST, memory(plan->dst, engine, out.rawData())}}));
    return;
  }
  Tensor x = plan->srcStrided ? xIn : kernels::contiguousValues(xIn, loc);
  Tensor w = wIn;
  std::optional<memory::desc> wPlain = weightDesc(w, groups);
  if (!wPlain) {
    w = kernels::contiguousValues(wIn, loc);
    wPlain = weightDesc(w, groups);
  }
  // Kiln's allocator keeps freed blocks of these sizes for the next call.
  std::shared_ptr<Storage> xBuffer = Storage::allocate(plan->src.get_size(), kCPU, "conv2d");
  std::shared_ptr<Storage> yBuffer = Storage::allocate(plan->dst.get_size(), kCPU, "conv2d");
  memory xb(plan->src, engine, xBuffer->data()), yb(plan->dst, engine, yBuffer->data());
  plan->srcIn.run({{DNNL_ARG_FROM, memory(plan->plainSrc, engine, x.rawData())}, {DNNL_ARG_TO, xb}});
  plan->conv.run(withBias({{DNNL_ARG_SRC, xb},
                           {DNNL_ARG_WEIGHTS, onednn::reorderedWeights(w, *wPlain, plan->weights)},
                           {DNNL_ARG_DST, yb}}));
  plan->dstOut.run({{DNNL_ARG_FROM, yb}, {DNNL_ARG_TO, memory(plan->plainDst, engine, out.rawData())}});
}

// Direct convolution for dtypes oneDNN lacks; accumulates in OpMath.
void referenceConv(const Tensor& x, const Tensor& w, const Window& win, int64_t groups, Tensor& out) {
  const Shape &xs = x.sizes(), &ws = w.sizes(), &ys = out.sizes();
  const int64_t cg = ws[1], og = ws[0] / groups;
  dispatchDType(out.dtype(), [&]<class T>() {
    using M = OpMathType<T>;
    const T *px = static_cast<const T*>(x.rawData()), *pw = static_cast<const T*>(w.rawData());
    T* py = static_cast<T*>(out.rawData());
    parallelFor(0, ys[0] * ys[1], 1, [&](int64_t begin, int64_t end) {
      for (int64_t no = begin; no < end; ++no) {
        const int64_t n = no / ys[1], o = no % ys[1], g = o / og;
        for (int64_t i = 0; i < ys[2]; ++i)
          for (int64_t j = 0; j < ys[3]; ++j) {
            M acc = M(0);
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t a = 0; a < ws[2]; ++a)
                for (int64_t b = 0; b < ws[3]; ++b) {
                  const int64_t h = i * win.sh + a * win.dh - win.pt, v = j * win.sw + b * win.dw - win.pl;
                  if (h < 0 || h >= xs[2] || v < 0 || v >= xs[3]) continue;
                  acc += M(px[((n * xs[1] + g * cg + c) * xs[2] + h) * xs[3] + v]) *
                         M(pw[((o * cg + c) * ws[2] + a) * ws[3] + b]);
                }
            py[((n * ys[1] + o) * ys[2] + i) * ys[3] + j] = T(acc);
          }
      }
    });
  });
}

// f32 depthwise convolutions (one input channel per group) with 3x3 windows at stride 1,
// the common layer, run in NCHW by Kiln's own kernel where its 16-wide output rows are
// used whole and the left padding is one its 3x3 loop is compiled for (0 to 2); oneDNN
// would reorder input and output to and from its blocked layout.
// [64,96,16,16], 2 threads on the 2-vCPU Zen 5 of docs/BENCHMARKS.md: 0.20 ms against
// 0.22 for oneDNN's blocked kernel alone, before its reorders. The kernel's general loop
// loses to oneDNN elsewhere (stride 2, and planes under 16 wide), so those stay on oneDNN.
// Non-finite weights also go to oneDNN, which skips the padding where the kernel
// multiplies it (inf * 0). Returns whether it ran the convolution (false: nothing done).
bool depthwiseConv(const Tensor& x, const Tensor& wIn, const Window& win, int64_t groups, Tensor& out,
                   const SourceLoc& loc) {
  if (x.dtype() != kFloat32 || wIn.sizes()[1] != 1 || groups != x.sizes()[1] || win.kh != 3 ||
      win.kw != 3 || win.sh != 1 || win.sw != 1 || win.dh != 1 || win.dw != 1 || out.sizes()[3] < 16 ||
      win.pl > 2)
    return false;
  Tensor w = kernels::contiguousValues(wIn, loc);
  const float* pw = w.data_ptr<float>();
  if (!std::all_of(pw, pw + w.numel(), [](float v) { return std::isfinite(v); })) return false;
  Tensor xc = kernels::contiguousValues(x, loc);
  const Shape &xs = xc.sizes(), &ys = out.sizes();
  const kernels::DepthwiseGeometry g{xs[0], xs[1], xs[2],  xs[3],  ys[1] / xs[1], win.kh, win.kw,
                                     win.sh, win.sw, win.dh, win.dw, win.pt, win.pl, ys[2], ys[3]};
  kernels::depthwiseConv2d(xc.data_ptr<float>(), pw, out.data_ptr<float>(), g);
  return true;
}

// A batch-1 grouped convolution with one output channel per group and at most 25 output
// positions: how a depthwise layer's weight gradient arrives (convWeightGrad: the input's
// planes grouped by channel, the output gradient's planes as filters). oneDNN has no direct
// kernel for it and runs im2col + a matrix-vector product per group (in MobileNetV2's
// compiled step, a fifth to a quarter of the convolution time); Kiln's kernel sums each
// output's taps over the channels, channels last (kernels::planeDotConv2d), in about a
// tenth of that time (one thread). The scratch bound keeps odd geometries on oneDNN.
bool planeDotConv(const Tensor& x, const Tensor& w, const Window& win, int64_t groups, Tensor& out) {
  const Shape &xs = x.sizes(), &ws = w.sizes(), &ys = out.sizes();
  if (x.dtype() != kFloat32 || xs[0] != 1 || ws[0] != groups || ys[2] * ys[3] > 25) return false;
  const Strides &sx = x.strides(), &sw = w.strides();
  const kernels::PlaneDotGeometry g{groups, ws[1], xs[2], xs[3], win.kh, win.kw, win.sh, win.sw, win.dh, win.dw,
                                    win.pt, win.pl, ys[2], ys[3], sx[1], sx[2], sx[3], sw[0], sw[1], sw[2], sw[3]};
  if (kernels::planeDotScratch(g) > (int64_t(1) << 20)) return false;
  kernels::planeDotConv2d(x.data_ptr<float>(), w.data_ptr<float>(), out.data_ptr<float>(), g);
  return true;
}

// c = a * b (each transposed where its flag says 'T') + beta * c, row-major, for a conv2d
// of input xs and weight ws.
void sgemmOrThrow(char transA, char transB, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const Shape& xs,
                  const Shape& ws, const SourceLoc& loc) {
  const dnnl::status status = dnnl::sgemm(transA, transB, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  if (status != dnnl::status::success)
    throw Error::make(loc, "conv2d", "oneDNN's sgemm failed (status ", int(status), ") on input ", xs,
                      " and weight ", ws);
}

// Whether t's planes (its last two dims) are contiguous rows of H * W elements, each
// (dim 0, dim 1) pair's its own: the layout of a [N, C, H, W] tensor's transpose(0, 1).
bool planesContiguous(const Tensor& t) {
  const Shape& s = t.sizes();
  const Strides& st = t.strides();
  return st[3] == 1 && (s[2] == 1 || st[2] == s[3]);
}

// The pointwise weight gradient without its transposes: x is [C, N, H, W] and w is
// [O, N, H, W], each the transpose(0, 1) view of a [N, *, H, W] tensor (convWeightGrad's
// operands), and out[c, o] = sum over n of x[:, n] . w[:, n]^T, one sgemm per sample on
// the planes where they lie, instead of copying both into [*, N * H * W] for one sgemm.
// Measured with oneDNN's sgemm on MobileNetV2's shapes (batch 64, one thread): 0.25
// against 0.41 ms for [144, 64, 8, 8] by [24, 64, 8, 8] with the copies, 0.09 against 0.18
// on 4x4 planes; on planes of 4 or fewer elements the small products lose (0.24 against
// 0.23 ms on 2x2), so those keep the copies, except 1x1 planes, one sgemm over the samples
// reading both operands transposed (0.56 against 0.25 ms per sample). Samples are summed
// in fixed chunks of 8, each chunk's products on one thread into its own partial sum,
// then the partials in chunk order: the bits do not depend on the thread count.
bool perSampleWholeInputConv(const Tensor& x, const Tensor& w, Tensor& out, const SourceLoc& loc) {
  const Shape &xs = x.sizes(), &ws = w.sizes();
  constexpr int64_t kChunk = 8;
  const int64_t c = xs[0], n = xs[1], o = ws[0], plane = xs[2] * xs[3];
  if (plane == 1 && x.strides()[0] == 1 && w.strides()[0] == 1 && x.strides()[1] >= c &&
      w.strides()[1] >= o && !(x.is_contiguous() && w.is_contiguous())) {
    // 1x1 planes: x and w are [N, C] and [N, O] matrices read transposed, and out = x^T w
    // is one sgemm over the samples.
    sgemmOrThrow('T', 'N', c, o, n, x.data_ptr<float>(), x.strides()[1], w.data_ptr<float>(), w.strides()[1],
                 0.0f, out.data_ptr<float>(), o, xs, ws, loc);
    return true;
  }
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  if (plane < 16 || (x.is_contiguous() && w.is_contiguous()) || !planesContiguous(x) ||
      !planesContiguous(w) || x.strides()[0] < plane || w.strides()[0] < plane ||
      chunks * c * o > (int64_t(1) << 22))
    return false;
  const float *px = x.data_ptr<float>(), *pw = w.data_ptr<float>();
  const int64_t ldx = x.strides()[0], sampleX = x.strides()[1];
  const int64_t ldw = w.strides()[0], sampleW = w.strides()[1];
  std::vector<float> partials(size_t((chunks - 1) * c * o));
  float* result = out.data_ptr<float>();
  auto chunkInto = [&](int64_t chunk) { return chunk == 0 ? result : partials.data() + (chunk - 1) * c * o; };
  // Each sgemm on one thread, also where the chunks run inline (a single chunk): the chunks
  // are the parallelism, and an sgemm oneDNN split over threads might add in another order.
  struct OneOpenMpThread {
    int before = omp_get_max_threads();
    OneOpenMpThread() { omp_set_num_threads(1); }
    ~OneOpenMpThread() { omp_set_num_threads(before); }
  } oneThread;
  parallelFor(0, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t chunk = begin; chunk < end; ++chunk)
      for (int64_t s = chunk * kChunk; s < std::min(n, (chunk + 1) * kChunk); ++s)
        sgemmOrThrow('N', 'T', c, o, plane, px + s * sampleX, ldx, pw + s * sampleW, ldw,
                     s == chunk * kChunk ? 0.0f : 1.0f, chunkInto(chunk), o, xs, ws, loc);
  });
  parallelFor(0, c * o, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t chunk = 1; chunk < chunks; ++chunk) {
      const float* partial = chunkInto(chunk);
      for (int64_t i = begin; i < end; ++i) result[i] += partial[i];
    }
  });
  return true;
}

// A convolution with one group whose window is the whole unpadded input (one output
// position) is a matrix product: out[n, o] = x[n] . w[o], both flattened over channel,
// height and width. How a pointwise layer's weight gradient arrives (the output gradient's
// planes as filters); oneDNN runs it as one matrix-vector product per batch row, reading
// all the filters each time, where one sgemm reads them once. Grouped ones stay on oneDNN:
// an sgemm call per group would cost more than it saves.
bool wholeInputConv(const Tensor& xIn, const Tensor& wIn, const Window& win, int64_t groups, Tensor& out,
                    const SourceLoc& loc) {
  const Shape &xs = xIn.sizes(), &ws = wIn.sizes();
  if (xIn.dtype() != kFloat32 || groups != 1 || ws[2] != xs[2] || ws[3] != xs[3] || win.pt != 0 ||
      win.pb != 0 || win.pl != 0 || win.pr != 0)
    return false;
  onednn::useKilnThreads();
  if (perSampleWholeInputConv(xIn, wIn, out, loc)) return true;
  Tensor x = kernels::contiguousValues(xIn, loc), w = kernels::contiguousValues(wIn, loc);
  const int64_t n = xs[0], o = ws[0], k = xs[1] * xs[2] * xs[3];
  sgemmOrThrow('N', 'T', n, o, k, x.data_ptr<float>(), k, w.data_ptr<float>(), k, 0.0f, out.data_ptr<float>(), o, xs,
               ws, loc);
  return true;
}

// conv2d, then its bias and relu epilogues: the bias through oneDNN's bias argument where
// oneDNN runs the convolution, else (Kiln's depthwise kernel, the reference loops) in
// kernels::biasAndRelu, which also applies the relu.
void convKernel(const OpArgs& args, std::span<Tensor> out) {
  const Tensor &x = args.inputs[0], &w = args.inputs[1];
  const Tensor bias = args.inputs.size() > 2 ? kernels::contiguousValues(args.inputs[2], args.loc) : Tensor();
  const bool relu = reluEpilogue(args.attrs);
  const Window win = windowOf(args.attrs, w.sizes()[2], w.sizes()[3]);
  const int64_t groups = args.attrs.get<int64_t>("groups");
  if (out[0].numel() == 0) return;
  Tensor biasLeft = bias;  // the bias no library call has added
  if (!depthwiseConv(x, w, win, groups, out[0], args.loc) && !planeDotConv(x, w, win, groups, out[0]) &&
      !wholeInputConv(x, w, win, groups, out[0], args.loc)) {
    if (x.dtype() == kFloat32) {
      onednnConv(x, w, bias, win, groups, out[0], args.loc);
      biasLeft = Tensor();
    } else {
      referenceConv(kernels::contiguousValues(x, args.loc), kernels::contiguousValues(w, args.loc), win,
                    groups, out[0]);
    }
  }
  const Shape& ys = out[0].sizes();
  if (biasLeft.defined() || relu) kernels::biasAndRelu(out[0], biasLeft, ys[1], ys[2] * ys[3], relu, args.loc);
}

Tensor conv(const Tensor& x, const Tensor& w, Shape stride, Shape padding, Shape dilation,
            int64_t groups, const SourceLoc& loc) {
  return dispatch1(kConv2d, {x, w},
                   {{"stride", std::move(stride)}, {"padding", std::move(padding)},
                    {"dilation", std::move(dilation)}, {"groups", groups}},
                   loc);
}

// Crops H and W by the negative ones of the given amounts (a view); the positive ones are
// the convolution's padding.
Tensor cropNegative(Tensor t, int64_t top, int64_t bottom, int64_t left, int64_t right,
                    const SourceLoc& loc) {
  auto crop = [&](int64_t dim, int64_t before, int64_t after) {
    const int64_t n = t.sizes()[dim];
    t = t.slice(dim, std::max<int64_t>(-before, 0), n - std::max<int64_t>(-after, 0), 1, loc);
  };
  crop(2, top, bottom);
  crop(3, left, right);
  return t;
}

// dL/dx: the gradient, interleaved with stride-1 zeros, convolved with the weights
// flipped in space and transposed per group (C_out <-> C_in), fully padded.
Tensor convInputGrad(const Tensor& g, const Tensor& w, const Window& win, int64_t groups,
                     const Shape& xs, const SourceLoc& loc) {
  const Shape& ws = w.sizes();
  const int64_t og = ws[0] / groups, cg = ws[1];
  Tensor spread = interleaveZeros(interleaveZeros(g, 2, win.sh, loc), 3, win.sw, loc);
  Tensor wt = w.reshape({groups, og, cg, ws[2], ws[3]}, loc)
                  .permute({0, 2, 1, 3, 4}, loc)
                  .reshape({groups * cg, og, ws[2], ws[3]}, loc);
  wt = flipDim(flipDim(wt, 2, loc), 3, loc);
  const int64_t eh = win.dh * (ws[2] - 1), ew = win.dw * (ws[3] - 1);
  // Rows/columns of x no window reached get zero gradient: pad the far side by them.
  const int64_t restH = xs[2] + win.pt + win.pb - eh - 1 - (g.sizes()[2] - 1) * win.sh;
  const int64_t restW = xs[3] + win.pl + win.pr - ew - 1 - (g.sizes()[3] - 1) * win.sw;
  const Shape pad{eh - win.pt, eh - win.pb + restH, ew - win.pl, ew - win.pr + restW};
  Tensor cropped = cropNegative(spread, pad[0], pad[1], pad[2], pad[3], loc);
  Shape convPad(4);
  for (size_t i = 0; i < 4; ++i) convPad[i] = std::max<int64_t>(pad[i], 0);
  return conv(cropped, wt, {1, 1}, convPad, {win.dh, win.dw}, groups, loc);
}

// dL/dw: for groups == 1, x with N and C swapped convolved with g (N and O swapped)
// as filters, stride and dilation exchanged; grouped convs expand g per input channel.
Tensor convWeightGrad(const Tensor& g, const Tensor& x, const Window& win, int64_t groups,
                      const Shape& ws, const SourceLoc& loc) {
  const Shape& xs = x.sizes();
  const Shape& gs = g.sizes();
  const int64_t og = ws[0] / groups, cg = ws[1], n = xs[0];
  Shape pad{win.pt, win.pb, win.pl, win.pr};
  Tensor dw;
  const bool pointwise = ws[2] == 1 && ws[3] == 1 && win.sh == 1 && win.sw == 1 && win.pt == 0 &&
                         win.pb == 0 && win.pl == 0 && win.pr == 0;
  if (groups == 1 && pointwise) {
    // dw[o, c] = sum over n, h, w of g[n, o, h, w] * x[n, c, h, w]: g's planes as the input
    // and x's as the filters give [O, C, 1, 1], the weight's own layout, where the other
    // order gives its transpose, which the optimizer's update then reads across rows.
    return conv(g.transpose(0, 1, loc), x.transpose(0, 1, loc), {1, 1}, pad, {1, 1}, 1, loc);
  }
  if (groups == 1) {
    Tensor r = conv(x.transpose(0, 1, loc), g.transpose(0, 1, loc), {win.dh, win.dw}, pad,
                    {win.sh, win.sw}, 1, loc);  // [C, O, kh', kw']
    dw = r.transpose(0, 1, loc);
  } else {
    Tensor input = x.transpose(0, 1, loc).reshape({1, xs[1] * n, xs[2], xs[3]}, loc);
    Tensor filters = g.reshape({n, groups, og, gs[2], gs[3]}, loc)
                         .permute({1, 2, 0, 3, 4}, loc)
                         .unsqueeze(1, loc)
                         .expand({groups, cg, og, n, gs[2], gs[3]}, loc)
                         .reshape({groups * cg * og, n, gs[2], gs[3]}, loc);
    Tensor r = conv(input, filters, {win.dh, win.dw}, pad, {win.sh, win.sw}, groups * cg, loc);
    dw = r.reshape({groups, cg, og, r.sizes()[2], r.sizes()[3]}, loc)
             .permute({0, 2, 1, 3, 4}, loc)
             .reshape({groups * og, cg, r.sizes()[2], r.sizes()[3]}, loc);
  }
  return dw.narrow(2, 0, ws[2], loc).narrow(3, 0, ws[3], loc);
}

// relu's mask on G first (gradBeforeRelu); the bias's gradient is G summed over batch,
// height and width.
Grads convGrad(const GradArgs& a) {
  const Tensor &x = a.inputs[0], &w = a.inputs[1];
  const Tensor g = gradBeforeRelu(kConv2d, a);
  const Window win = windowOf(a.attrs, w.sizes()[2], w.sizes()[3]);
  const int64_t groups = a.attrs.get<int64_t>("groups");
  Grads grads{convInputGrad(g, w, win, groups, x.sizes(), a.loc),
              convWeightGrad(g, x, win, groups, w.sizes(), a.loc)};
  if (a.inputs.size() > 2) grads.push_back(sum(g, {0, 2, 3}, false, a.loc));
  return grads;
}

// ---- pool2d ---------------------------------------------------------------------------

std::vector<TensorMeta> poolShape(const OpDef& op, std::span<const TensorMeta> in, const Attrs& attrs,
                                  const SourceLoc& loc) {
  const Shape& window = attrs.get<Shape>("window");
  if (window.size() != 2 || window[0] <= 0 || window[1] <= 0)
    throw ShapeError::make(loc, op.name, "window must have two positive sizes, got ", window);
  if (!isFloatingPoint(in[0].dtype))
    throw TypeError::make(loc, op.name, "expects a floating-point input, got ", in[0].dtype);
  checkWindow(op, attrs, in[0], window[0], window[1], loc);
  Window win = windowOf(attrs, window[0], window[1]);
  const Shape& x = in[0].shape;
  return {TensorMeta{{x[0], x[1], win.outH(x[2]), win.outW(x[3])}, in[0].dtype, in[0].device}};
}

// Max: the largest value in the window (padding never wins; NaN wins, as PyTorch).
// Avg: the window sum over kh*kw, padding counted (PyTorch's count_include_pad default).
void referencePool(const Tensor& x, const Window& win, bool isMax, Tensor& out) {
  const Shape &xs = x.sizes(), &ys = out.sizes();
  dispatchDType(x.dtype(), [&]<class T>() {
    using M = OpMathType<T>;
    const T* px = static_cast<const T*>(x.rawData());
    T* py = static_cast<T*>(out.rawData());
    parallelFor(0, ys[0] * ys[1], 1, [&](int64_t begin, int64_t end) {
      for (int64_t nc = begin; nc < end; ++nc)
        for (int64_t i = 0; i < ys[2]; ++i)
          for (int64_t j = 0; j < ys[3]; ++j) {
            M acc = isMax ? -std::numeric_limits<M>::infinity() : M(0);
            for (int64_t a = 0; a < win.kh; ++a)
              for (int64_t b = 0; b < win.kw; ++b) {
                const int64_t h = i * win.sh + a * win.dh - win.pt, v = j * win.sw + b * win.dw - win.pl;
                if (h < 0 || h >= xs[2] || v < 0 || v >= xs[3]) continue;
                M val = M(px[(nc * xs[2] + h) * xs[3] + v]);
                if (!isMax) acc += val;
                else if (val > acc || val != val) acc = val;
              }
            py[(nc * ys[2] + i) * ys[3] + j] = T(isMax ? acc : acc / M(win.kh * win.kw));
          }
    });
  });
}

// Whether contiguous f32 x holds a NaN. It runs before every oneDNN max pool, so it must
// cost a fraction of one: four lanes at a time (GCC vector extensions: SSE2 on any x86-64,
// NEON on ARM), which -O2 does not vectorise from a scalar loop.
bool containsNaN(const Tensor& x) {
  using Floats = float __attribute__((vector_size(16)));
  using Mask = int32_t __attribute__((vector_size(16)));
  constexpr int64_t kLanes = 4, kBlock = 64;
  const float* p = static_cast<const float*>(x.rawData());
  const int64_t n = x.numel();
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    Mask nan = {};
    for (int64_t k = 0; k < kBlock; k += kLanes) {
      Floats v;
      std::memcpy(&v, p + i + k, sizeof v);
      nan |= v != v;
    }
    for (int64_t lane = 0; lane < kLanes; ++lane)
      if (nan[lane]) return true;
  }
  for (; i < n; ++i)
    if (p[i] != p[i]) return true;
  return false;
}

struct PoolPlan {
  onednn::Primitive pool;
  memory::desc src, dst;
};

// oneDNN's jit pooling reads NCHW directly (no reorders). Its max drops NaNs, which
// PyTorch propagates: the caller sends inputs with a NaN to the reference loop instead.
void onednnPool(const Tensor& x, const Window& win, bool isMax, Tensor& out) {
  onednn::useKilnThreads();
  std::vector<int64_t> key(x.sizes());
  key.insert(key.end(), {isMax, win.kh, win.kw, win.sh, win.sw, win.pt, win.pb, win.pl, win.pr});
  static auto* plans = new onednn::PlanCache<PoolPlan>(64);
  auto plan = plans->get(std::move(key), [&] {
    const auto f32 = memory::data_type::f32;
    const auto nchw = memory::format_tag::nchw;
    memory::desc src(x.sizes(), f32, nchw), dst(out.sizes(), f32, nchw);
    dnnl::pooling_forward::desc desc(
        dnnl::prop_kind::forward_inference,
        isMax ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_include_padding, src, dst,
        {win.sh, win.sw}, {win.kh, win.kw}, {win.pt, win.pl}, {win.pb, win.pr});
    dnnl::pooling_forward::primitive_desc pd(desc, onednn::userScratchpad(), onednn::engine());
    return std::make_shared<const PoolPlan>(
        PoolPlan{onednn::makePrimitive<dnnl::pooling_forward>(pd), src, dst});
  });
  dnnl::engine& engine = onednn::engine();
  plan->pool.run({{DNNL_ARG_SRC, memory(plan->src, engine, x.rawData())},
                  {DNNL_ARG_DST, memory(plan->dst, engine, out.rawData())}});
}

void poolKernel(const OpArgs& args, std::span<Tensor> out) {
  Tensor x = kernels::contiguousValues(args.inputs[0], args.loc);
  const Shape& window = args.attrs.get<Shape>("window");
  const Window win = windowOf(args.attrs, window[0], window[1]);
  const bool isMax = args.attrs.get<std::string>("kind") == "max";
  if (out[0].numel() == 0) return;
  const bool dilated = win.dh != 1 || win.dw != 1;
  if (x.dtype() == kFloat32 && !dilated && !(isMax && containsNaN(x))) onednnPool(x, win, isMax, out[0]);
  else referencePool(x, win, isMax, out[0]);
}

// Flat indices into the padded H'xW' plane of every window element: [Ho*Wo, kh*kw].
Tensor windowIndices(const Window& win, int64_t ho, int64_t wo, int64_t paddedW, const SourceLoc& loc) {
  Tensor rows = add(mul(arange(ho, loc).reshape({ho, 1, 1, 1}, loc), win.sh, loc),
                    mul(arange(win.kh, loc).reshape({1, 1, win.kh, 1}, loc), win.dh, loc), loc);
  Tensor cols = add(mul(arange(wo, loc).reshape({1, wo, 1, 1}, loc), win.sw, loc),
                    mul(arange(win.kw, loc).reshape({1, 1, 1, win.kw}, loc), win.dw, loc), loc);
  return add(mul(rows, paddedW, loc), cols, loc).reshape({ho * wo, win.kh * win.kw}, loc);
}

// Max: the gradient goes to the first maximum of each window (row-major), as PyTorch's
// CPU kernel, scatter-added back at the maxima's flat positions. Avg: the transposed convolution of
// the gradient with a constant 1/(kh*kw) depthwise kernel.
Grads poolGrad(const GradArgs& a) {
  const Tensor &x = a.inputs[0], &g = a.gradOutputs[0];
  const SourceLoc& l = a.loc;
  detail::FactoryDeviceGuard onDevice(x.device());  // the window indices and the avg kernel
  const Shape& window = a.attrs.get<Shape>("window");
  const Window win = windowOf(a.attrs, window[0], window[1]);
  const Shape& xs = x.sizes();
  const int64_t nc = xs[0] * xs[1], ho = g.sizes()[2], wo = g.sizes()[3];
  if (a.attrs.get<std::string>("kind") == "avg") {
    Tensor ones = full({xs[1], 1, win.kh, win.kw}, 1.0 / double(win.kh * win.kw), x.dtype(), l);
    return {convInputGrad(g, ones, win, xs[1], xs, l)};
  }
  const double lowest = -std::numeric_limits<double>::infinity();
  Tensor padded = padDim(padDim(x, 2, win.pt, win.pb, lowest, l), 3, win.pl, win.pr, lowest, l);
  const int64_t hp = padded.sizes()[2], wp = padded.sizes()[3];
  Tensor idx = windowIndices(win, ho, wo, wp, l);                              // [Q, K]
  Tensor values = take(padded.reshape({nc, hp * wp}, l), idx, 1, l);           // [NC, Q, K]
  Tensor first = argmax(values, 2, true, l);                                    // [NC, Q, 1]
  Tensor pos = gather(idx.unsqueeze(0, l).expand({nc, ho * wo, win.kh * win.kw}, l), 2, first, l);
  Tensor planes = mul(arange(nc, l).reshape({nc, 1, 1}, l), hp * wp, l);
  Tensor flat = add(pos, planes, l).reshape({nc * ho * wo}, l);                // into [NC*H'*W']
  Tensor dx = scatterAdd(g.reshape({nc * ho * wo}, l), flat, 0, nc * hp * wp, l)
                  .reshape({xs[0], xs[1], hp, wp}, l);
  return {dx.narrow(2, win.pt, xs[2], l).narrow(3, win.pl, xs[3], l)};
}

}  // namespace

const OpDef kConv2d{"conv2d", "kiln.conv2d", convShape, convKernel, nullptr, convGrad, kReadsInputs};
const OpDef kPool2d{"pool2d", "kiln.pool2d", poolShape, poolKernel, nullptr, poolGrad, kReadsInputs};

}  // namespace ops

namespace {

Shape pair(const Shape& v, const char* what, const SourceLoc& loc, const char* op = "conv2d") {
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return v;
  throw ShapeError::make(loc, op, what, " must have one or two values, got ", v);
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Shape stride, Shape padding,
              Shape dilation, int64_t groups, const SourceLoc& loc) {
  Shape p = pair(padding, "padding", loc);
  DType dtype = promoteTypes(x.dtype(), weight.dtype());
  if (bias.defined()) dtype = promoteTypes(dtype, bias.dtype());
  std::vector<Tensor> inputs{convert(x, dtype, loc), convert(weight, dtype, loc)};
  // The bias goes into the op, whose library call adds it as an epilogue.
  if (bias.defined()) inputs.push_back(convert(bias, dtype, loc));
  return dispatch1(ops::kConv2d, std::move(inputs),
                   {{"stride", pair(stride, "stride", loc)}, {"padding", Shape{p[0], p[0], p[1], p[1]}},
                    {"dilation", pair(dilation, "dilation", loc)}, {"groups", groups}},
                   loc);
}

// The input gradient of conv2d(y, weight) at y's size: a transposed convolution is that
// adjoint, so it is composed from the same ops (and differentiates through them).
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Shape stride,
                        Shape padding, Shape output_padding, int64_t groups, Shape dilation,
                        const SourceLoc& loc) {
  const char* name = "conv_transpose2d";
  const Shape s = pair(stride, "stride", loc, name), p = pair(padding, "padding", loc, name);
  const Shape op = pair(output_padding, "output_padding", loc, name);
  const Shape d = pair(dilation, "dilation", loc, name);
  const Shape &xs = x.sizes(), &ws = weight.sizes();
  if (xs.size() != 4 || ws.size() != 4 || groups <= 0 || xs[1] != ws[0] || ws[0] % groups != 0)
    throw ShapeError::make(loc, "conv_transpose2d", "input ", xs, " and weight ", ws,
                           " do not fit groups = ", groups,
                           " (NCHW input, weight [C, O / groups, kH, kW], C divisible by groups)");
  Shape ys{xs[0], ws[1] * groups, 0, 0};
  for (size_t i = 0; i < 2; ++i) {
    if (s[i] <= 0 || d[i] <= 0 || p[i] < 0 || op[i] < 0 || op[i] >= std::max(s[i], d[i]))
      throw ShapeError::make(loc, "conv_transpose2d", "expects positive stride ", s, " and dilation ", d,
                             ", non-negative padding ", p, " and output_padding ", op,
                             " smaller than stride or dilation");
    ys[2 + i] = (xs[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (ws[2 + i] - 1) + op[i] + 1;
  }
  if (ys[2] <= 0 || ys[3] <= 0)
    throw ShapeError::make(loc, "conv_transpose2d", "input ", xs, " with weight ", ws, " and padding ", p,
                           " gives an empty output of spatial size ", Shape{ys[2], ys[3]});
  DType dtype = promoteTypes(x.dtype(), weight.dtype());
  if (bias.defined()) dtype = promoteTypes(dtype, bias.dtype());
  const ops::Window win{ws[2], ws[3], s[0], s[1], d[0], d[1], p[0], p[0], p[1], p[1]};
  Tensor y = ops::convInputGrad(convert(x, dtype, loc), convert(weight, dtype, loc), win, groups, ys, loc);
  if (!bias.defined()) return y;
  return add(y, convert(bias, dtype, loc).reshape({1, ys[1], 1, 1}, loc), loc);
}

namespace {

Tensor pool(const char* kind, const Tensor& x, Shape kernel, Shape stride, Shape padding,
            const SourceLoc& loc) {
  Shape k = pair(kernel, "kernel_size", loc);
  Shape s = stride.empty() ? k : pair(stride, "stride", loc);
  Shape p = pair(padding, "padding", loc);
  if (p[0] * 2 > k[0] || p[1] * 2 > k[1])
    throw ShapeError::make(loc, std::string(kind) + "_pool2d", "padding ", padding,
                           " must be at most half the kernel size ", kernel);
  return dispatch1(ops::kPool2d, {x},
                   {{"kind", std::string(kind)}, {"window", k}, {"stride", s},
                    {"padding", Shape{p[0], p[0], p[1], p[1]}}},
                   loc);
}

}  // namespace

Tensor max_pool2d(const Tensor& x, Dims kernel, Dims stride, Dims padding, const SourceLoc& loc) {
  return pool("max", x, std::move(kernel), std::move(stride), std::move(padding), loc);
}

Tensor avg_pool2d(const Tensor& x, Dims kernel, Dims stride, Dims padding, const SourceLoc& loc) {
  return pool("avg", x, std::move(kernel), std::move(stride), std::move(padding), loc);
}

// Output size 1x1 is a mean over H and W; other sizes that divide the input evenly are an
// average pool with kernel = stride = input/output (PyTorch's windows coincide then).
Tensor adaptive_avg_pool2d(const Tensor& x, Shape output, const SourceLoc& loc) {
  Shape o = pair(output, "output_size", loc);
  if (x.dim() != 4)
    throw ShapeError::make(loc, "adaptive_avg_pool2d", "expects an NCHW input, got shape ", x.sizes());
  if (o[0] == 1 && o[1] == 1) return mean(x, {2, 3}, true, loc);
  if (o[0] <= 0 || o[1] <= 0 || x.sizes()[2] % o[0] != 0 || x.sizes()[3] % o[1] != 0)
    throw ShapeError::make(loc, "adaptive_avg_pool2d", "output size ", output,
                           " must divide the input's spatial size ", x.sizes(), " (other sizes are not supported yet)");
  Shape k{x.sizes()[2] / o[0], x.sizes()[3] / o[1]};
  return avg_pool2d(x, k, k, {0, 0}, loc);
}

}  // namespace kiln
