// kiln.reduce on CUDA tensors (sum mean max min prod over dims): one generated kernel per
// kind, dtype and strategy. The input, any strides, is seen as [outputs, reduced]: the kept
// dims give the output index, the reduced dims (row-major, as a packed copy with them last
// holds them) the inner loop. As the CPU kernel (ops/Reduce.cpp, kernels/Reduce.h):
// - sums, means and products accumulate in double (int64 for integers) and round once; a
//   float32 sum or mean adds element 32k + l to element 32k + 16 + l (l < 16) in float32
//   first, as PairFold, so only the order of the double adds differs from the CPU's;
// - max/min compare in the math type (float for f16/bf16) and a NaN propagates;
// - mean is the double sum / count, rounded to the math type then stored;
// - an empty sum is 0, an empty product 1, an empty mean NaN (max/min of nothing are
//   rejected by the shape rule before).
// Strategies: a thread per output (few reduced elements, or columns: the reduced dims are
// not innermost, so neighbouring outputs are neighbouring in memory), a warp per output
// (combined with __shfl_down_sync), or a block of 256 threads per output (few outputs with
// many elements each, a full reduction for one, combined in shared memory).
#include <algorithm>

#include "frontend/core/cuda/Codegen.h"
#include "frontend/core/cuda/Kernels.h"
#include "frontend/core/cuda/Nvrtc.h"
#include "frontend/core/ops/OpTable.h"

namespace kiln::cuda {

namespace {

// Mirrors the ReduceGeometry struct of the generated source: kept dims (the output's, in
// order, contiguous output) and reduced dims, each with the input's strides.
struct ReduceGeometry {
  int keptRank = 0, redRank = 0;
  long long keptSize[kMaxDims] = {}, keptStride[kMaxDims] = {};
  long long redSize[kMaxDims] = {}, redStride[kMaxDims] = {};
};

enum class Strategy { Thread, Warp, Block };
const char* strategyName(Strategy s) { return s == Strategy::Thread ? "t" : s == Strategy::Warp ? "w" : "b"; }

bool isExtremum(const std::string& kind) { return kind == "max" || kind == "min"; }

// The accumulator's C type.
std::string accType(const std::string& kind, DType dtype) {
  if (isExtremum(kind)) return mathType(dtype);
  return isFloatingPoint(dtype) ? "double" : "i64";
}

// The identity of kind's combine in the accumulator type (max: -inf or the lowest integer).
std::string identity(const std::string& kind, DType dtype) {
  if (kind == "sum" || kind == "mean") return "(A)0";
  if (kind == "prod") return "(A)1";
  const bool max = kind == "max";
  switch (dtype) {
    case DType::Float64:
      return max ? "__longlong_as_double((i64)0xfff0000000000000ULL)" : "__longlong_as_double((i64)0x7ff0000000000000ULL)";
    case DType::Int32: return max ? "(int)0x80000000u" : "(int)0x7fffffff";
    case DType::Int64: return max ? "(i64)0x8000000000000000ULL" : "(i64)0x7fffffffffffffffULL";
    default: return max ? "__int_as_float((int)0xff800000u)" : "__int_as_float(0x7f800000)";
  }
}

struct Signature {
  std::string name, source;
};

Signature generate(const std::string& kind, DType dtype, Strategy strategy) {
  const std::string name = "kiln_reduce_" + kind + "_" + shortName(dtype) + "_" + strategyName(strategy);
  const bool pairs = dtype == kFloat32 && (kind == "sum" || kind == "mean");
  std::string src = prelude();
  src += "struct ReduceGeometry { int keptRank; int redRank; i64 keptSize[8]; i64 keptStride[8]; "
         "i64 redSize[8]; i64 redStride[8]; };\n";
  src += "typedef " + std::string(storageType(dtype)) + " T;\n";
  src += "typedef " + std::string(mathType(dtype)) + " M;\n";
  src += "typedef " + accType(kind, dtype) + " A;\n";
  // combine(acc, v): one step of the kind; also joins two partial results.
  src += "__device__ __forceinline__ A combine(A acc, A v) {\n";
  // Integers wrap as two's complement (in unsigned arithmetic, where that is defined).
  const bool integral = !isFloatingPoint(dtype);
  if (kind == "sum" || kind == "mean")
    src += integral ? "  return (A)((unsigned long long)acc + (unsigned long long)v);\n" : "  return acc + v;\n";
  else if (kind == "prod")
    src += integral ? "  return (A)((unsigned long long)acc * (unsigned long long)v);\n" : "  return acc * v;\n";
  else if (kind == "max") src += "  return (v != v || v > acc) ? v : acc;\n";  // a NaN acc stays
  else src += "  return (v != v || v < acc) ? v : acc;\n";
  src += "}\n";
  // The offset of reduced element i (row-major over the reduced dims) from the output's base.
  src += "__device__ __forceinline__ i64 redOffset(const ReduceGeometry& g, i64 i) {\n"
         "  i64 off = 0;\n"
         "  for (int d = g.redRank - 1; d >= 0; --d) { off += (i % g.redSize[d]) * g.redStride[d]; i /= g.redSize[d]; }\n"
         "  return off;\n}\n";
  // Folds the work items first, first + step, ... of one output into acc. A work item is an
  // element, or for float32 sums a pair (block k of 32 elements, lane l < 16).
  src += "__device__ __forceinline__ A fold(const T* x, const ReduceGeometry& g, i64 n, i64 first, i64 step) {\n"
         "  A acc = " + identity(kind, dtype) + ";\n";
  if (pairs) {
    src += "  const i64 items = (n + 31) / 32 * 16;\n"
           "  for (i64 q = first; q < items; q += step) {\n"
           "    const i64 i = q / 16 * 32 + q % 16;\n"
           "    if (i >= n) continue;\n"
           "    const float a = x[redOffset(g, i)];\n"
           "    acc += i + 16 < n ? (double)(float)(a + x[redOffset(g, i + 16)]) : (double)a;\n"
           "  }\n";
  } else {
    src += "  for (i64 i = first; i < n; i += step) acc = combine(acc, (A)" + loadAs(dtype, "x[redOffset(g, i)]") + ");\n";
  }
  src += "  return acc;\n}\n";
  src += "__device__ __forceinline__ void finish(T* out, i64 o, A acc, i64 n) {\n";
  if (kind == "mean") src += "  out[o] = " + storeAs(dtype, "(M)(acc / (double)n)") + ";\n";
  else src += "  out[o] = " + storeAs(dtype, "(M)acc") + ";\n";
  src += "}\n";
  src += "__device__ __forceinline__ i64 keptOffset(const ReduceGeometry& g, i64 o) {\n"
         "  i64 off = 0;\n"
         "  for (int d = g.keptRank - 1; d >= 0; --d) { off += (o % g.keptSize[d]) * g.keptStride[d]; o /= g.keptSize[d]; }\n"
         "  return off;\n}\n";
  src += "extern \"C\" __global__ void " + name +
         "(const T* in, T* out, ReduceGeometry g, i64 outputs, i64 n) {\n";
  switch (strategy) {
    case Strategy::Thread:
      src += "  for (i64 o = (i64)blockIdx.x * blockDim.x + threadIdx.x; o < outputs; o += (i64)gridDim.x * blockDim.x)\n"
             "    finish(out, o, fold(in + keptOffset(g, o), g, n, 0, 1), n);\n";
      break;
    case Strategy::Warp:
      // The loop bound is the same for the 32 lanes of a warp, so all take part in the shuffles.
      src += "  const int lane = threadIdx.x & 31;\n"
             "  const i64 warps = (i64)gridDim.x * (blockDim.x / 32);\n"
             "  for (i64 o = (i64)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; o < outputs; o += warps) {\n"
             "    A acc = fold(in + keptOffset(g, o), g, n, lane, 32);\n"
             "    for (int s = 16; s > 0; s /= 2) acc = combine(acc, __shfl_down_sync(0xffffffffu, acc, s));\n"
             "    if (lane == 0) finish(out, o, acc, n);\n"
             "  }\n";
      break;
    case Strategy::Block:
      // blockDim.x is 256: 8 warps, each combined by shuffles, then warp 0 combines the 8.
      src += "  __shared__ A partial[8];\n"
             "  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;\n"
             "  for (i64 o = blockIdx.x; o < outputs; o += gridDim.x) {\n"
             "    A acc = fold(in + keptOffset(g, o), g, n, threadIdx.x, blockDim.x);\n"
             "    for (int s = 16; s > 0; s /= 2) acc = combine(acc, __shfl_down_sync(0xffffffffu, acc, s));\n"
             "    if (lane == 0) partial[warp] = acc;\n"
             "    __syncthreads();\n"
             "    if (warp == 0) {\n"
             "      acc = lane < 8 ? partial[lane] : " + identity(kind, dtype) + ";\n"
             "      for (int s = 4; s > 0; s /= 2) acc = combine(acc, __shfl_down_sync(0xffffffffu, acc, s));\n"
             "      if (lane == 0) finish(out, o, acc, n);\n"
             "    }\n"
             "    __syncthreads();\n"
             "  }\n";
      break;
  }
  src += "}\n";
  return {name, src};
}

// Dims of size 1 dropped, then neighbours of the same kind merged where the strides allow.
void appendMerged(std::vector<int64_t>& size, std::vector<int64_t>& stride, int64_t s, int64_t st) {
  if (!size.empty() && stride.back() == st * s) {
    size.back() *= s;
    stride.back() = st;
  } else {
    size.push_back(s);
    stride.push_back(st);
  }
}

}  // namespace

bool isReduce(const OpDef& op) { return &op == &ops::kReduce; }

void reduce(const OpDef& op, const OpArgs& args, std::span<Tensor> outputs) {
  const Tensor& x = args.inputs[0];
  const Tensor& out = outputs[0];
  const std::string& kind = args.attrs.get<std::string>("kind");
  const Shape& dims = args.attrs.get<Shape>("dims");
  const int64_t count = out.numel();
  if (count == 0) return;
  std::vector<int64_t> keptSize, keptStride, redSize, redStride;
  for (int64_t d = 0; d < x.dim(); ++d) {
    const int64_t s = x.sizes()[d];
    if (s == 1) continue;
    const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    appendMerged(reduced ? redSize : keptSize, reduced ? redStride : keptStride, s, x.strides()[d]);
  }
  // A reduced dim of size 0: no elements (the loops see n = 0); drop the geometry.
  const int64_t n = x.numel() / count;
  if (n == 0) redSize.clear(), redStride.clear();
  if (int64_t(keptSize.size()) > kMaxDims || int64_t(redSize.size()) > kMaxDims)
    throw Error::make(args.loc, op.name, "CUDA kernels take at most ", kMaxDims,
                      " kept and ", kMaxDims, " reduced dims that cannot be merged; the input of shape ",
                      x.sizes(), " reduced over ", dims, " has ", keptSize.size(), " and ", redSize.size());
  ReduceGeometry g;
  g.keptRank = int(keptSize.size());
  g.redRank = int(redSize.size());
  for (int d = 0; d < g.keptRank; ++d) g.keptSize[d] = keptSize[d], g.keptStride[d] = keptStride[d];
  for (int d = 0; d < g.redRank; ++d) g.redSize[d] = redSize[d], g.redStride[d] = redStride[d];

  const int index = out.device().index;
  const int64_t sms = device(index, op.name, args.loc).multiprocessors;
  const bool columns = g.redRank > 0 && g.redStride[g.redRank - 1] != 1;
  Strategy strategy = Strategy::Warp;
  if (n <= 16 || (columns && count >= 32 * sms)) strategy = Strategy::Thread;
  else if (count < 4 * sms && n >= 2048) strategy = Strategy::Block;

  CUfunction f = kernel(index, "kiln_reduce_" + kind + "_" + shortName(x.dtype()) + "_" + strategyName(strategy),
                        [&] { return generate(kind, x.dtype(), strategy).source; }, op.name, args.loc);
  const void* inData = x.rawData();
  void* outData = out.rawData();
  int64_t outputsArg = count, nArg = n;
  void* kargs[] = {&inData, &outData, &g, &outputsArg, &nArg};
  const int64_t cap = sms * 16;
  unsigned blocks = 1;
  if (strategy == Strategy::Thread) blocks = unsigned(std::clamp<int64_t>((count + 255) / 256, 1, cap));
  else if (strategy == Strategy::Warp) blocks = unsigned(std::clamp<int64_t>((count + 7) / 8, 1, cap));
  else blocks = unsigned(std::clamp<int64_t>(count, 1, cap));
  launch(index, f, {blocks}, {256}, 0, kargs, op.name, args.loc);
}

void reduceSources(std::vector<KernelSource>& out) {
  const std::vector<DType> numeric{kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64};
  for (const char* kind : {"sum", "mean", "max", "min", "prod"})
    for (DType t : numeric) {
      if (std::string(kind) == "mean" && !isFloatingPoint(t)) continue;
      for (Strategy st : {Strategy::Thread, Strategy::Warp, Strategy::Block}) {
        Signature s = generate(kind, t, st);
        out.push_back({std::string("reduce ") + kind + " " + shortName(t) + " " + strategyName(st), s.name,
                       s.source});
      }
    }
}

}  // namespace kiln::cuda
