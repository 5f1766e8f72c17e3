// Data movement by index on CUDA tensors: concat (a strided copy per input into its slice
// of the output), gather (numpy.take along a dim) and scatter_add (its adjoint), and the
// factories computed on the host (iota, rng).
//
// gather and scatter_add raise, as the CPU kernels (ops/Indexing.cpp), for an index outside
// [0, size): to raise before anything is written, the indices are copied to the host and
// checked there (a synchronizing copy of the index tensor only, never of the values), then
// the checked int64 indices are uploaded for the kernel.
#include <cstring>

#include "frontend/core/cuda/Codegen.h"
#include "frontend/core/cuda/Driver.h"
#include "frontend/core/cuda/Kernels.h"
#include "frontend/core/cuda/Nvrtc.h"
#include "frontend/core/kernels/Copy.h"
#include "frontend/core/ops/OpTable.h"

namespace kiln::cuda {

namespace {

struct Signature {
  std::string name, source;
};

// out[o, j, i] = x[o, idx[j], i] over contiguous x [outer, D, inner] and out [outer, K, inner].
Signature gatherKernel(DType dtype) {
  const std::string name = std::string("kiln_gather_") + shortName(dtype);
  std::string src = prelude();
  src += "typedef " + std::string(storageType(dtype)) + " T;\n";
  src += "extern \"C\" __global__ void " + name +
         "(const T* x, T* out, const i64* idx, i64 D, i64 K, i64 inner, i64 total) {\n"
         "  for (i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x; r < total; r += (i64)gridDim.x * blockDim.x) {\n"
         "    const i64 i = r % inner, t = r / inner, j = t % K, o = t / K;\n"
         "    out[r] = x[(o * D + idx[j]) * inner + i];\n"
         "  }\n}\n";
  return {name, src};
}

// One atomic out[p] += v in the math type, rounded to the storage type at each add as the
// CPU's T(M(d) + M(x)).
std::string atomicAddFunction(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "__device__ __forceinline__ void addTo(T* p, M v) { atomicAdd(p, v); }\n";
    case DType::Float64: return "__device__ __forceinline__ void addTo(T* p, M v) { atomicAdd(p, v); }\n";
    case DType::Int32: return "__device__ __forceinline__ void addTo(T* p, M v) { atomicAdd(p, v); }\n";
    case DType::Int64:
      return "__device__ __forceinline__ void addTo(T* p, M v) {\n"
             "  atomicAdd((unsigned long long*)p, (unsigned long long)v);\n}\n";
    default: {
      // f16/bf16: compare-and-swap on the aligned 32-bit word holding the element (the
      // allocator's blocks are 512-byte aligned and sized, so the word is in the block).
      const std::string load = dtype == kFloat16 ? "h2f" : "bf2f", store = dtype == kFloat16 ? "f2h" : "f2bf";
      return "__device__ __forceinline__ void addTo(T* p, M v) {\n"
             "  unsigned* word = (unsigned*)((unsigned long long)p & ~3ULL);\n"
             "  const unsigned shift = ((unsigned long long)p & 2ULL) ? 16u : 0u;\n"
             "  unsigned old = *word, assumed;\n"
             "  do {\n"
             "    assumed = old;\n"
             "    const u16 sum = " + store + "(" + load + "((u16)((assumed >> shift) & 0xffffu)) + v);\n"
             "    const unsigned next = (assumed & ~(0xffffu << shift)) | ((unsigned)sum << shift);\n"
             "    old = atomicCAS(word, assumed, next);\n"
             "  } while (old != assumed);\n}\n";
    }
  }
}

// scatter_add over contiguous u [outer, K, inner] into zeroed out [outer, size, inner].
// ordered: a thread per (o, i) adds its K updates in order of k, as the CPU, so the bits are
// the CPU's; atomic: a thread per update, for many updates over few (o, i).
Signature scatterAddKernel(DType dtype, bool ordered) {
  const std::string name = std::string("kiln_scatter_add_") + shortName(dtype) + (ordered ? "_o" : "_a");
  std::string src = prelude();
  src += "typedef " + std::string(storageType(dtype)) + " T;\n";
  src += "typedef " + std::string(mathType(dtype)) + " M;\n";
  if (!ordered) src += atomicAddFunction(dtype);
  src += "extern \"C\" __global__ void " + name +
         "(const T* u, T* out, const i64* idx, i64 size, i64 K, i64 inner, i64 total) {\n"
         "  for (i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x; r < total; r += (i64)gridDim.x * blockDim.x) {\n";
  if (ordered) {
    // r runs over (o, i): total = outer * inner.
    src += "    const i64 i = r % inner, o = r / inner;\n"
           "    for (i64 j = 0; j < K; ++j) {\n"
           "      T* d = out + (o * size + idx[j]) * inner + i;\n"
           "      *d = " + storeAs(dtype, loadAs(dtype, "*d") + " + " + loadAs(dtype, "u[(o * K + j) * inner + i]")) + ";\n"
           "    }\n";
  } else {
    // r runs over (o, j, i): total = outer * K * inner.
    src += "    const i64 i = r % inner, t = r / inner, j = t % K, o = t / K;\n"
           "    addTo(out + (o * size + idx[j]) * inner + i, " + loadAs(dtype, "u[r]") + ");\n";
  }
  src += "  }\n}\n";
  return {name, src};
}

// The indices as int64 on the host, each checked against [0, size) as the CPU kernels do,
// then uploaded to `device`.
Tensor checkedIndices(std::string_view op, const Tensor& indices, int64_t size, Device device,
                      const SourceLoc& loc) {
  Tensor host = detail::emptyTensor(indices.sizes(), indices.dtype(), kCPU, false, loc);
  kernels::copyValues(host, indices);
  Tensor wide = detail::emptyTensor({indices.numel()}, kInt64, kCPU, false, loc);
  int64_t* w = static_cast<int64_t*>(wide.rawData());
  for (int64_t i = 0; i < indices.numel(); ++i) {
    w[i] = host.dtype() == kInt64 ? static_cast<const int64_t*>(host.rawData())[i]
                                  : static_cast<const int32_t*>(host.rawData())[i];
    if (w[i] < 0 || w[i] >= size)
      throw ShapeError::make(loc, op, "index ", w[i], " is out of range for a dim of size ", size);
  }
  Tensor onDevice = detail::emptyTensor({indices.numel()}, kInt64, device, false, loc);
  kernels::copyValues(onDevice, wide);
  return onDevice;
}

int64_t numelOf(const Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t d = begin; d < end; ++d) n *= s[d];
  return n;
}

void gather(const OpArgs& args, Tensor& out) {
  const int64_t dim = args.attrs.get<int64_t>("dim");
  const Tensor x = kernels::contiguousValues(args.inputs[0], args.loc);
  const Shape& s = x.sizes();
  const Tensor idx = checkedIndices("take", args.inputs[1], s[size_t(dim)], out.device(), args.loc);
  int64_t total = out.numel();
  if (total == 0) return;
  int64_t D = s[size_t(dim)], K = idx.numel(), inner = numelOf(s, size_t(dim) + 1, s.size());
  const int index = out.device().index;
  CUfunction f = kernel(index, std::string("kiln_gather_") + shortName(x.dtype()),
                        [&] { return gatherKernel(x.dtype()).source; }, "take", args.loc);
  const void* xData = x.rawData();
  void* outData = out.rawData();
  const void* idxData = idx.rawData();
  void* kargs[] = {&xData, &outData, &idxData, &D, &K, &inner, &total};
  Launch l = gridFor(total, index, "take", args.loc);
  launch(index, f, {l.blocks}, {l.threads}, 0, kargs, "take", args.loc);
}

void scatterAdd(const OpArgs& args, Tensor& out) {
  const int64_t dim = args.attrs.get<int64_t>("dim");
  int64_t size = args.attrs.get<int64_t>("size");
  const Tensor u = kernels::contiguousValues(args.inputs[0], args.loc);
  const Tensor idx = checkedIndices("scatter_add", args.inputs[1], size, out.device(), args.loc);
  const int index = out.device().index;
  const size_t bytes = size_t(out.numel()) * out.element_size();
  if (bytes == 0) return;
  const DeviceInfo& info = device(index, "scatter_add", args.loc);
  check(driver("scatter_add", args.loc).cuMemsetD8Async(CUdeviceptr(out.rawData()), 0, bytes, info.stream),
        "cuMemsetD8Async", "scatter_add", args.loc);
  const Shape& s = u.sizes();
  int64_t K = idx.numel();
  const int64_t outer = numelOf(s, 0, size_t(dim));
  int64_t inner = numelOf(s, size_t(dim + args.inputs[1].dim()), s.size());
  if (K == 0 || outer * inner == 0) return;
  const bool ordered = K <= 32 || outer * inner >= 16384;
  int64_t total = ordered ? outer * inner : outer * K * inner;
  CUfunction f = kernel(index, std::string("kiln_scatter_add_") + shortName(u.dtype()) + (ordered ? "_o" : "_a"),
                        [&] { return scatterAddKernel(u.dtype(), ordered).source; }, "scatter_add", args.loc);
  const void* uData = u.rawData();
  void* outData = out.rawData();
  const void* idxData = idx.rawData();
  void* kargs[] = {&uData, &outData, &idxData, &size, &K, &inner, &total};
  Launch l = gridFor(total, index, "scatter_add", args.loc);
  launch(index, f, {l.blocks}, {l.threads}, 0, kargs, "scatter_add", args.loc);
}

// The output is contiguous: input i's values go to the slice [at, at + n_i) of dim.
void concat(const OpArgs& args, Tensor& out) {
  const int64_t dim = args.attrs.get<int64_t>("dim");
  int64_t at = 0;
  for (const Tensor& x : args.inputs) {
    if (x.numel() > 0) {
      Tensor slice = kernels::aliasOf(out, x.sizes(), out.strides(),
                                      out.storage_offset() + at * out.strides()[size_t(dim)]);
      copyValues(slice, x, args.loc);
    }
    at += x.sizes()[size_t(dim)];
  }
}

// iota and rng on the CPU (their CPU kernels, into host tensors), then copied to the device:
// the same numbers on every device by construction. rng runs here only for a key on a
// CUDA device (sample() draws with a CPU key and moves the values itself).
void onHost(const OpDef& op, const OpArgs& args, std::span<Tensor> outputs) {
  std::vector<Tensor> inputs;
  for (const Tensor& x : args.inputs) {
    if (x.device().isCPU()) {
      inputs.push_back(x);
      continue;
    }
    Tensor host = detail::emptyTensor(x.sizes(), x.dtype(), kCPU, false, args.loc);
    kernels::copyValues(host, x);
    inputs.push_back(host);
  }
  std::vector<Tensor> host;
  for (const Tensor& o : outputs) host.push_back(detail::emptyTensor(o.sizes(), o.dtype(), kCPU, false, args.loc));
  op.kernel(OpArgs{inputs, args.attrs, args.loc}, host);
  for (size_t i = 0; i < host.size(); ++i) kernels::copyValues(outputs[i], host[i]);
}

}  // namespace

bool isIndexing(const OpDef& op) {
  return &op == &ops::kConcat || &op == &ops::kGather || &op == &ops::kScatterAdd || &op == &ops::kIota ||
         &op == &ops::kRng;
}

void indexing(const OpDef& op, const OpArgs& args, std::span<Tensor> outputs) {
  if (&op == &ops::kConcat) return concat(args, outputs[0]);
  if (&op == &ops::kGather) return gather(args, outputs[0]);
  if (&op == &ops::kScatterAdd) return scatterAdd(args, outputs[0]);
  return onHost(op, args, outputs);
}

void indexingSources(std::vector<KernelSource>& out) {
  for (DType t : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kBool}) {
    Signature s = gatherKernel(t);
    out.push_back({std::string("take ") + shortName(t), s.name, s.source});
  }
  for (DType t : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64})
    for (bool ordered : {true, false}) {
      Signature s = scatterAddKernel(t, ordered);
      out.push_back({std::string("scatter_add ") + shortName(t) + (ordered ? " ordered" : " atomic"), s.name,
                     s.source});
    }
}

}  // namespace kiln::cuda
