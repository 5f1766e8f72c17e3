// Shared pieces of the generated CUDA C (see Codegen.h).
#include "frontend/core/cuda/Codegen.h"

#include <algorithm>

#include "frontend/core/cuda/Driver.h"

namespace kiln::cuda {

const char* storageType(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Float16:
    case DType::BFloat16: return "u16";
    case DType::Int32: return "int";
    case DType::Int64: return "i64";
    case DType::Bool: return "bool";
  }
  return "?";
}

const char* mathType(DType dtype) {
  switch (dtype) {
    case DType::Float16:
    case DType::BFloat16: return "float";
    default: return storageType(dtype);
  }
}

const char* shortName(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "f32";
    case DType::Float64: return "f64";
    case DType::Float16: return "f16";
    case DType::BFloat16: return "bf16";
    case DType::Int32: return "i32";
    case DType::Int64: return "i64";
    case DType::Bool: return "bool";
  }
  return "?";
}

std::string loadAs(DType dtype, const std::string& expr) {
  if (dtype == kFloat16) return "h2f(" + expr + ")";
  if (dtype == kBFloat16) return "bf2f(" + expr + ")";
  return "(" + expr + ")";
}

std::string storeAs(DType dtype, const std::string& expr) {
  if (dtype == kFloat16) return "f2h((float)(" + expr + "))";
  if (dtype == kBFloat16) return "f2bf((float)(" + expr + "))";
  if (dtype == kBool) return "((" + expr + ") != 0)";
  return "(" + std::string(storageType(dtype)) + ")(" + expr + ")";
}

const std::string& prelude() {
  static const std::string text = R"(typedef long long i64;
typedef unsigned short u16;
struct Geometry { int rank; int pad; i64 size[8]; i64 stride[4][8]; };
__device__ __forceinline__ float h2f(u16 h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ u16 f2h(float f) { u16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ float bf2f(u16 h) { return __uint_as_float(((unsigned)h) << 16); }
__device__ __forceinline__ u16 f2bf(float f) {  // as BFloat16.h: NaN kept quiet with its sign
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u16)((u >> 16) | 0x0040u);
  return (u16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
template <class T> __device__ T ipow(T a, T b) {
  if (b < 0) return a == 1 ? T(1) : a == -1 ? ((b & 1) ? T(-1) : T(1)) : T(0);
  unsigned long long result = 1, base = (unsigned long long)a;
  for (unsigned long long e = (unsigned long long)b; e; e >>= 1, base *= base)
    if (e & 1) result *= base;
  return T(result);
}
// Element offsets of linear index i in each of the first n operands.
template <int N> __device__ __forceinline__ void offsets(const Geometry& g, i64 i, i64* off) {
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = g.rank - 1; d >= 0; --d) {
    const i64 c = i % g.size[d];
    i /= g.size[d];
    for (int k = 0; k < N; ++k) off[k] += c * g.stride[k][d];
  }
}
)";
  return text;
}

Geometry geometryOf(std::span<const Tensor* const> operands, bool& contiguous, std::string_view op,
                    const SourceLoc& loc) {
  const Shape& shape = operands[0]->sizes();
  const int n = int(operands.size());
  // Drop size-1 dims, then merge a dim into the next inner one where every operand's
  // stride allows (stride[d] == stride[d+1] * size[d+1]).
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> strides(n);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    sizes.push_back(shape[d]);
    for (int k = 0; k < n; ++k) strides[k].push_back(operands[k]->strides()[d]);
  }
  for (int d = int(sizes.size()) - 2; d >= 0; --d) {
    bool merge = true;
    for (int k = 0; k < n; ++k)
      merge = merge && strides[k][d] == strides[k][d + 1] * sizes[d + 1];
    if (!merge) continue;
    sizes[d] *= sizes[d + 1];
    sizes.erase(sizes.begin() + d + 1);
    for (int k = 0; k < n; ++k) {
      strides[k][d] = strides[k][d + 1];
      strides[k].erase(strides[k].begin() + d + 1);
    }
  }
  if (int(sizes.size()) > kMaxDims)
    throw Error::make(loc, op, "CUDA kernels take at most ", kMaxDims, " dims that cannot be merged; "
                      "the operand of shape ", shape, " has ", sizes.size());
  Geometry g;
  g.rank = int(sizes.size());
  contiguous = true;
  for (int d = 0; d < g.rank; ++d) g.size[d] = sizes[d];
  for (int k = 0; k < n; ++k) {
    for (int d = 0; d < g.rank; ++d) g.stride[k][d] = strides[k][d];
    contiguous = contiguous && (g.rank == 0 || (g.rank == 1 && strides[k][0] == 1));
  }
  return g;
}

Launch gridFor(int64_t n, int index, std::string_view op, const SourceLoc& loc) {
  Launch l;
  const int64_t wanted = (n + l.threads - 1) / l.threads;
  const int64_t cap = int64_t(device(index, op, loc).multiprocessors) * 16;
  l.blocks = unsigned(std::max<int64_t>(1, std::min(wanted, cap)));
  return l;
}

}  // namespace kiln::cuda
