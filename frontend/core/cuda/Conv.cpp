// conv2d and pool2d on CUDA tensors as generated CUDA C kernels (ops/Conv.cpp holds the CPU
// kernels and the shape rules): a direct convolution and a direct pooling, one thread per
// output element in a grid-stride loop, accumulating in the dtype's math type (float for
// f16/bf16) in the CPU reference loops' order (channel, then window row, then column), and
// reading x and w through their strides, so the views the gradients pass (transposed x,
// permuted and flipped weights, expanded filters) need no copy. The gradients of both ops
// are composed of conv2d itself (stride 1 over an interleaved-zeros input, dilation and
// stride exchanged, groups up to C * N) and other primitive ops: every attribute
// combination is the same generic kernel.
//
// cuDNN (9, loaded with dlopen like cuBLASLt in Blas.cpp) is the next step for speed; these
// kernels stay as the reference it is checked against and as the fallback without it.
//
// Also here: the bias-and-relu epilogue that conv2d and addmm share (kernels/Epilogue.h on
// the CPU), rounding as the CPU does: the product is rounded to the dtype first, then the
// bias added in the math type and rounded again, then relu keeps NaN and makes every value
// not above 0 +0.
#include <algorithm>

#include "frontend/core/cuda/Codegen.h"
#include "frontend/core/cuda/Kernels.h"
#include "frontend/core/cuda/Nvrtc.h"
#include "frontend/core/kernels/Copy.h"
#include "frontend/core/ops/Compose.h"
#include "frontend/core/ops/OpTable.h"

namespace kiln::cuda {

namespace {

// Mirrors the ConvGeom struct of the generated source (all 64-bit, so the layouts agree).
struct ConvGeom {
  long long C, H, W;             // input channels and plane
  long long xs[4];               // input strides (elements), NCHW
  long long O, kh, kw;           // output channels and window
  long long ws[4];               // weight strides, OIHW
  long long Ho, Wo;              // output plane
  long long sh, sw, dh, dw, pt, pl;
  long long cg, og;              // input and output channels per group
  long long biasStride;
};

constexpr const char* kConvGeom =
    "struct ConvGeom { i64 C, H, W; i64 xs[4]; i64 O, kh, kw; i64 ws[4]; i64 Ho, Wo;\n"
    "  i64 sh, sw, dh, dw, pt, pl; i64 cg, og; i64 biasStride; };\n";

// The smallest value of the math type, as the CPU's -infinity start of a max pool.
std::string negativeInfinity(DType dtype) {
  return dtype == kFloat64 ? "(-__longlong_as_double(0x7ff0000000000000LL))" : "(-__int_as_float(0x7f800000))";
}

// v (a stored value) plus bias (when hasBias), then relu (when relu), as the CPU rounds.
std::string epilogue(DType t, const std::string& v, const std::string& bias) {
  std::string s;
  s += "    if (hasBias) " + v + " = " + storeAs(t, loadAs(t, v) + " + " + loadAs(t, bias)) + ";\n";
  s += "    if (relu) { const M r = " + loadAs(t, v) + "; if (!(r != r || r > (M)0)) " + v + " = " +
       storeAs(t, "(M)0") + "; }\n";
  return s;
}

KernelSource convKernel(DType t) {
  const std::string T = storageType(t);
  const std::string name = std::string("kiln_conv2d_") + shortName(t);
  std::string src = prelude();
  src += "typedef " + std::string(mathType(t)) + " M;\n" + kConvGeom;
  src += "extern \"C\" __global__ void " + name + "(" + T + "* out, const " + T + "* x, const " + T +
         "* w, const " + T + "* bias, int hasBias, int relu, ConvGeom g, i64 n) {\n";
  src += R"(  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
    i64 t = i;
    const i64 j = t % g.Wo; t /= g.Wo;
    const i64 r = t % g.Ho; t /= g.Ho;
    const i64 o = t % g.O;
    const i64 b = t / g.O;
    const i64 grp = o / g.og;
    const i64 xBase = b * g.xs[0] + grp * g.cg * g.xs[1], wBase = o * g.ws[0];
    M acc = (M)0;
    for (i64 c = 0; c < g.cg; ++c)
      for (i64 a = 0; a < g.kh; ++a) {
        const i64 h = r * g.sh + a * g.dh - g.pt;
        if (h < 0 || h >= g.H) continue;
        for (i64 e = 0; e < g.kw; ++e) {
          const i64 v = j * g.sw + e * g.dw - g.pl;
          if (v < 0 || v >= g.W) continue;
)";
  src += "          acc += " + loadAs(t, "x[xBase + c * g.xs[1] + h * g.xs[2] + v * g.xs[3]]") + " * " +
         loadAs(t, "w[wBase + c * g.ws[1] + a * g.ws[2] + e * g.ws[3]]") + ";\n";
  src += "        }\n      }\n";
  src += "    " + T + " y = " + storeAs(t, "acc") + ";\n";
  src += epilogue(t, "y", "bias[o * g.biasStride]");
  src += "    out[i] = y;\n  }\n}\n";
  return {std::string("conv2d ") + shortName(t), name, src};
}

KernelSource poolKernel(DType t, bool isMax) {
  const std::string T = storageType(t);
  const std::string name = std::string("kiln_pool2d_") + (isMax ? "max_" : "avg_") + shortName(t);
  std::string src = prelude();
  src += "typedef " + std::string(mathType(t)) + " M;\n" + kConvGeom;
  // g.O is the channel count (C), g.ws unused; one plane per (n, c).
  src += "extern \"C\" __global__ void " + name + "(" + T + "* out, const " + T + "* x, ConvGeom g, i64 n) {\n";
  src += R"(  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
    i64 t = i;
    const i64 j = t % g.Wo; t /= g.Wo;
    const i64 r = t % g.Ho; t /= g.Ho;
    const i64 c = t % g.O;
    const i64 b = t / g.O;
    const i64 base = b * g.xs[0] + c * g.xs[1];
)";
  src += "    M acc = " + (isMax ? "(M)" + negativeInfinity(t) : std::string("(M)0")) + ";\n";
  src += R"(    for (i64 a = 0; a < g.kh; ++a) {
      const i64 h = r * g.sh + a * g.dh - g.pt;
      if (h < 0 || h >= g.H) continue;
      for (i64 e = 0; e < g.kw; ++e) {
        const i64 v = j * g.sw + e * g.dw - g.pl;
        if (v < 0 || v >= g.W) continue;
)";
  src += "        const M val = " + loadAs(t, "x[base + h * g.xs[2] + v * g.xs[3]]") + ";\n";
  src += isMax ? "        if (val > acc || val != val) acc = val;\n" : "        acc += val;\n";
  src += "      }\n    }\n";
  src += "    out[i] = " + storeAs(t, isMax ? "acc" : "acc / (M)(g.kh * g.kw)") + ";\n  }\n}\n";
  return {std::string("pool2d ") + (isMax ? "max " : "avg ") + shortName(t), name, src};
}

// out (contiguous, [outer, channels, inner]) in place: bias[c] (contiguous) when hasBias,
// then relu when relu.
KernelSource biasReluKernel(DType t) {
  const std::string T = storageType(t);
  const std::string name = std::string("kiln_bias_relu_") + shortName(t);
  std::string src = prelude();
  src += "typedef " + std::string(mathType(t)) + " M;\n";
  src += "extern \"C\" __global__ void " + name + "(" + T + "* out, const " + T +
         "* bias, int hasBias, int relu, i64 channels, i64 inner, i64 n) {\n";
  src += "  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {\n";
  src += "    " + T + " y = out[i];\n";
  src += epilogue(t, "y", "bias[(i / inner) % channels]");
  src += "    out[i] = y;\n  }\n}\n";
  return {std::string("bias and relu ") + shortName(t), name, src};
}

// The window attrs the kernels read: stride, dilation, and the top and left padding (the
// bottom and right ones only shape the output, which the caller has sized).
struct Window4 {
  int64_t sh, sw, dh, dw, pt, pl;
};

const std::vector<DType>& floatingTypes() {
  static const std::vector<DType> types{kFloat32, kFloat64, kFloat16, kBFloat16};
  return types;
}

void checkFloating(DType dtype, std::string_view op, const SourceLoc& loc) {
  if (!isFloatingPoint(dtype))
    throw TypeError::make(loc, op, "on CUDA takes a floating dtype, got ", dtype);
}

Window4 windowOf(const Attrs& attrs) {
  const Shape& s = attrs.get<Shape>("stride");
  const Shape& p = attrs.get<Shape>("padding");
  const Shape d = attrs.has("dilation") ? attrs.get<Shape>("dilation") : Shape{1, 1};
  return Window4{s[0], s[1], d[0], d[1], p[0], p[2]};
}

// What convolution and pooling share of their kernel's geometry: the input's sizes and
// strides, the output's size, the window and its stride, dilation and leading padding.
ConvGeom geometryOf(const Tensor& x, const Shape& ys, const Window4& win, int64_t outChannels, int64_t kh,
                    int64_t kw) {
  ConvGeom g{};
  g.C = x.sizes()[1];
  g.H = x.sizes()[2];
  g.W = x.sizes()[3];
  for (int d = 0; d < 4; ++d) g.xs[d] = x.strides()[d];
  g.O = outChannels;
  g.kh = kh;
  g.kw = kw;
  g.Ho = ys[2];
  g.Wo = ys[3];
  g.sh = win.sh;
  g.sw = win.sw;
  g.dh = win.dh;
  g.dw = win.dw;
  g.pt = win.pt;
  g.pl = win.pl;
  return g;
}

void conv2d(const OpArgs& args, std::span<Tensor> outputs) {
  const SourceLoc& loc = args.loc;
  Tensor& out = outputs[0];
  const Tensor &x = args.inputs[0], &w = args.inputs[1];
  checkFloating(out.dtype(), "conv2d", loc);
  if (out.numel() == 0) return;
  const bool hasBias = args.inputs.size() > 2;
  const Tensor bias = hasBias ? args.inputs[2] : Tensor();
  const int relu = ops::reluEpilogue(args.attrs) ? 1 : 0;
  const int64_t groups = args.attrs.get<int64_t>("groups");
  const Window4 win = windowOf(args.attrs);
  const Shape &wsz = w.sizes(), &ys = out.sizes();
  ConvGeom g = geometryOf(x, ys, win, wsz[0], wsz[2], wsz[3]);
  for (int d = 0; d < 4; ++d) g.ws[d] = w.strides()[d];
  g.cg = wsz[1];
  g.og = wsz[0] / groups;
  g.biasStride = hasBias ? bias.strides()[0] : 0;
  const int index = out.device().index;
  CUfunction f = kernel(index, std::string("kiln_conv2d_") + shortName(out.dtype()),
                        [&] { return convKernel(out.dtype()).source; }, "conv2d", loc);
  void* po = out.rawData();
  void* px = x.rawData();
  void* pw = w.rawData();
  void* pb = hasBias ? bias.rawData() : out.rawData();  // never read without a bias
  int hb = hasBias ? 1 : 0, rl = relu;
  long long n = out.numel();
  void* params[] = {&po, &px, &pw, &pb, &hb, &rl, &g, &n};
  Launch l = gridFor(n, index, "conv2d", loc);
  launch(index, f, {l.blocks}, {l.threads}, 0, params, "conv2d", loc);
}

void pool2d(const OpArgs& args, std::span<Tensor> outputs) {
  const SourceLoc& loc = args.loc;
  Tensor& out = outputs[0];
  const Tensor& x = args.inputs[0];
  checkFloating(out.dtype(), "pool2d", loc);
  if (out.numel() == 0) return;
  const Shape& window = args.attrs.get<Shape>("window");
  const bool isMax = args.attrs.get<std::string>("kind") == "max";
  const Window4 win = windowOf(args.attrs);
  const Shape &xs = x.sizes(), &ys = out.sizes();
  ConvGeom g = geometryOf(x, ys, win, xs[1], window[0], window[1]);
  const int index = out.device().index;
  CUfunction f = kernel(index, std::string("kiln_pool2d_") + (isMax ? "max_" : "avg_") + shortName(out.dtype()),
                        [&] { return poolKernel(out.dtype(), isMax).source; }, "pool2d", loc);
  void* po = out.rawData();
  void* px = x.rawData();
  long long n = out.numel();
  void* params[] = {&po, &px, &g, &n};
  Launch l = gridFor(n, index, "pool2d", loc);
  launch(index, f, {l.blocks}, {l.threads}, 0, params, "pool2d", loc);
}

}  // namespace

void biasAndRelu(const Tensor& out, const Tensor& biasIn, int64_t channels, int64_t inner, bool relu,
                 std::string_view op, const SourceLoc& loc) {
  checkFloating(out.dtype(), op, loc);
  if (out.numel() == 0 || (!biasIn.defined() && !relu)) return;
  const Tensor bias = biasIn.defined() ? kernels::contiguousValues(biasIn, loc) : Tensor();
  const int index = out.device().index;
  CUfunction f = kernel(index, std::string("kiln_bias_relu_") + shortName(out.dtype()),
                        [&] { return biasReluKernel(out.dtype()).source; }, op, loc);
  void* po = out.rawData();
  void* pb = bias.defined() ? bias.rawData() : out.rawData();  // never read without a bias
  int hb = bias.defined() ? 1 : 0, rl = relu ? 1 : 0;
  long long c = std::max<int64_t>(channels, 1), in = std::max<int64_t>(inner, 1), n = out.numel();
  void* params[] = {&po, &pb, &hb, &rl, &c, &in, &n};
  Launch l = gridFor(n, index, op, loc);
  launch(index, f, {l.blocks}, {l.threads}, 0, params, op, loc);
}

bool isConv(const OpDef& op) { return &op == &ops::kConv2d || &op == &ops::kPool2d; }

void conv(const OpDef& op, const OpArgs& args, std::span<Tensor> outputs) {
  if (&op == &ops::kConv2d) return conv2d(args, outputs);
  return pool2d(args, outputs);
}

void convSources(std::vector<KernelSource>& out) {
  for (DType t : floatingTypes()) {
    out.push_back(convKernel(t));
    out.push_back(poolKernel(t, true));
    out.push_back(poolKernel(t, false));
    out.push_back(biasReluKernel(t));
  }
}

}  // namespace kiln::cuda
