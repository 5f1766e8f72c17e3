// matmul and addmm on CUDA tensors (ops/Linalg.cpp holds the CPU kernels and shape rules):
// cuBLASLt for the floating dtypes, loaded with dlopen on first use so that every binary
// builds and runs without it; a generated kernel for int32/int64 (cuBLASLt has no such
// gemm), and as the fallback where cuBLASLt's heuristic offers no algorithm.
//
// Row-major C[m, n] = A[m, k] B[k, n] is computed as the column-major C^T = B^T A^T: the
// bytes of a row-major matrix are its transpose in column-major, so no operand moves.
// Operands whose layout cuBLASLt cannot describe (no unit stride in the matrix, batch dims
// that do not collapse into one stride) are copied contiguous first.
//
// Compute types: CUBLAS_COMPUTE_32F for f32, f16 and bf16 (f32 accumulation, never TF32:
// results are compared with the CPU's at tight tolerances), CUBLAS_COMPUTE_64F for f64.
// addmm's bias goes through cuBLASLt's BIAS epilogue for f32 only, where it rounds exactly
// as the CPU (f32 accumulator + bias, rounded once); for f16/bf16 the CPU rounds the
// product to the dtype before adding the bias, and for f64 the epilogue's support is not
// documented, so those add it in the bias-and-relu kernel (Conv.cpp), which also applies
// relu everywhere: cuBLASLt's RELU epilogue would turn NaN into 0 and keep -0, where the
// CPU keeps NaN and makes everything not above 0 +0.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "frontend/core/cuda/Codegen.h"
#include "frontend/core/cuda/Kernels.h"
#include "frontend/core/cuda/Nvrtc.h"
#include "frontend/core/kernels/Copy.h"
#include "frontend/core/ops/Compose.h"
#include "frontend/core/ops/OpTable.h"
#include "kiln/core/Storage.h"

namespace kiln::cuda {

namespace {

// ---- cuBLASLt, declared here with the values of CUDA 13's cublasLt.h, cublas_api.h and
// library_types.h (no CUDA header is needed to build) ----------------------------------

using cublasStatus_t = int;                          // CUBLAS_STATUS_SUCCESS = 0
using cublasLtHandle_t = struct cublasLtContext*;
using cublasLtMatmulDesc_t = struct cublasLtMatmulDescOpaque*;
using cublasLtMatrixLayout_t = struct cublasLtMatrixLayoutOpaque*;
using cublasLtMatmulPreference_t = struct cublasLtMatmulPreferenceOpaque*;
struct cublasLtMatmulAlgo_t {                        // cublasLt.h: uint64_t data[8]
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {             // cublasLt.h
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};

constexpr int CUBLAS_STATUS_SUCCESS = 0;
constexpr int CUBLAS_OP_N = 0, CUBLAS_OP_T = 1;      // cublasOperation_t
constexpr int CUBLAS_COMPUTE_32F = 68;               // cublasComputeType_t (not _FAST_TF32)
constexpr int CUBLAS_COMPUTE_64F = 70;
constexpr int CUDA_R_32F = 0, CUDA_R_64F = 1, CUDA_R_16F = 2, CUDA_R_16BF = 14;  // cudaDataType_t
// cublasLtMatmulDescAttributes_t
constexpr int CUBLASLT_MATMUL_DESC_TRANSA = 3;       // int32_t
constexpr int CUBLASLT_MATMUL_DESC_TRANSB = 4;       // int32_t
constexpr int CUBLASLT_MATMUL_DESC_EPILOGUE = 7;     // uint32_t
constexpr int CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8; // const void*
constexpr int CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26;  // int32_t
constexpr uint32_t CUBLASLT_EPILOGUE_BIAS = 4;       // cublasLtEpilogue_t
// cublasLtMatrixLayoutAttribute_t
constexpr int CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5;           // int32_t
constexpr int CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6;  // int64_t
// cublasLtMatmulPreferenceAttributes_t
constexpr int CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1;     // uint64_t
constexpr int CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5;   // uint32_t, default 256
constexpr int CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6;
constexpr int CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7;
constexpr int CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8;

struct LtApi {
  std::string reason;  // why cuBLASLt cannot be used, "" when it can
  cublasStatus_t (*cublasLtCreate)(cublasLtHandle_t*);
  size_t (*cublasLtGetVersion)();
  const char* (*cublasLtGetStatusName)(cublasStatus_t);
  cublasStatus_t (*cublasLtMatmulDescCreate)(cublasLtMatmulDesc_t*, int, int);
  cublasStatus_t (*cublasLtMatmulDescDestroy)(cublasLtMatmulDesc_t);
  cublasStatus_t (*cublasLtMatmulDescSetAttribute)(cublasLtMatmulDesc_t, int, const void*, size_t);
  cublasStatus_t (*cublasLtMatrixLayoutCreate)(cublasLtMatrixLayout_t*, int, uint64_t, uint64_t, int64_t);
  cublasStatus_t (*cublasLtMatrixLayoutDestroy)(cublasLtMatrixLayout_t);
  cublasStatus_t (*cublasLtMatrixLayoutSetAttribute)(cublasLtMatrixLayout_t, int, const void*, size_t);
  cublasStatus_t (*cublasLtMatmulPreferenceCreate)(cublasLtMatmulPreference_t*);
  cublasStatus_t (*cublasLtMatmulPreferenceDestroy)(cublasLtMatmulPreference_t);
  cublasStatus_t (*cublasLtMatmulPreferenceSetAttribute)(cublasLtMatmulPreference_t, int, const void*, size_t);
  cublasStatus_t (*cublasLtMatmulAlgoGetHeuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                                                   cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                                   cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,
                                                   cublasLtMatmulHeuristicResult_t*, int*);
  cublasStatus_t (*cublasLtMatmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*,
                                   cublasLtMatrixLayout_t, const void*, cublasLtMatrixLayout_t, const void*,
                                   const void*, cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t,
                                   const cublasLtMatmulAlgo_t*, void*, size_t, CUstream);
};

template <class F>
void resolve(void* lib, const char* name, F*& slot, std::string& reason) {
  resolveSymbol(lib, "libcublasLt", name, slot, reason);
}

const LtApi& lt() {
  static const LtApi* api = [] {
    auto* a = new LtApi{};
    std::string tried;
    // The toolkit, else the NVIDIA wheels PyTorch installs (nvidia/cu13/lib in CUDA 13's
    // merged wheel, nvidia/cublas/lib in the per-library ones), else the loader's path.
    void* lib = openCudaLibrary("libcublasLt.so.13", {"cu13", "cublas"}, tried);
    if (!lib) {
      a->reason = "libcublasLt.so.13 (CUDA 13's cuBLASLt) was not found; tried " + tried;
      return a;
    }
    resolve(lib, "cublasLtCreate", a->cublasLtCreate, a->reason);
    resolve(lib, "cublasLtGetVersion", a->cublasLtGetVersion, a->reason);
    resolve(lib, "cublasLtGetStatusName", a->cublasLtGetStatusName, a->reason);
    resolve(lib, "cublasLtMatmulDescCreate", a->cublasLtMatmulDescCreate, a->reason);
    resolve(lib, "cublasLtMatmulDescDestroy", a->cublasLtMatmulDescDestroy, a->reason);
    resolve(lib, "cublasLtMatmulDescSetAttribute", a->cublasLtMatmulDescSetAttribute, a->reason);
    resolve(lib, "cublasLtMatrixLayoutCreate", a->cublasLtMatrixLayoutCreate, a->reason);
    resolve(lib, "cublasLtMatrixLayoutDestroy", a->cublasLtMatrixLayoutDestroy, a->reason);
    resolve(lib, "cublasLtMatrixLayoutSetAttribute", a->cublasLtMatrixLayoutSetAttribute, a->reason);
    resolve(lib, "cublasLtMatmulPreferenceCreate", a->cublasLtMatmulPreferenceCreate, a->reason);
    resolve(lib, "cublasLtMatmulPreferenceDestroy", a->cublasLtMatmulPreferenceDestroy, a->reason);
    resolve(lib, "cublasLtMatmulPreferenceSetAttribute", a->cublasLtMatmulPreferenceSetAttribute, a->reason);
    resolve(lib, "cublasLtMatmulAlgoGetHeuristic", a->cublasLtMatmulAlgoGetHeuristic, a->reason);
    resolve(lib, "cublasLtMatmul", a->cublasLtMatmul, a->reason);
    return a;
  }();
  return *api;
}

const LtApi& ltOrThrow(std::string_view op, const SourceLoc& loc) {
  const LtApi& api = lt();
  if (!api.reason.empty()) throw Error::make(loc, op, "matmul on CUDA needs cuBLASLt: ", api.reason);
  return api;
}

void checkLt(cublasStatus_t status, const char* call, std::string_view op, const SourceLoc& loc) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const char* name = lt().cublasLtGetStatusName ? lt().cublasLtGetStatusName(status) : nullptr;
  throw Error::make(loc, op, call, " failed: ", name ? name : "cuBLAS status", " (", status, ")");
}

constexpr size_t kWorkspaceBytes = size_t(32) << 20;

// One handle and one workspace per device, made on first use and kept for the process
// (never freed: a static destructor would run after the driver is gone).
struct DeviceBlas {
  cublasLtHandle_t handle = nullptr;
  std::shared_ptr<Storage> workspace;
};

DeviceBlas& deviceBlas(int index, std::string_view op, const SourceLoc& loc) {
  static std::mutex* mutex = new std::mutex;
  static auto* all = new std::map<int, DeviceBlas>;
  const LtApi& api = ltOrThrow(op, loc);
  device(index, op, loc);  // its context current on this thread
  std::lock_guard lock(*mutex);
  DeviceBlas& d = (*all)[index];
  if (!d.handle) {
    d.workspace = Storage::allocate(kWorkspaceBytes, Device(kCUDA, index), op, loc);
    checkLt(api.cublasLtCreate(&d.handle), "cublasLtCreate", op, loc);
  }
  return d;
}

int dataType(DType dtype) {
  switch (dtype) {
    case DType::Float32: return CUDA_R_32F;
    case DType::Float64: return CUDA_R_64F;
    case DType::Float16: return CUDA_R_16F;
    case DType::BFloat16: return CUDA_R_16BF;
    default: return -1;
  }
}

// RAII for the descriptors.
struct Descriptors {
  const LtApi& api;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~Descriptors() {
    if (pref) api.cublasLtMatmulPreferenceDestroy(pref);
    if (d) api.cublasLtMatrixLayoutDestroy(d);
    if (b) api.cublasLtMatrixLayoutDestroy(b);
    if (a) api.cublasLtMatrixLayoutDestroy(a);
    if (desc) api.cublasLtMatmulDescDestroy(desc);
  }
};

// One operand as cuBLASLt's column-major layout sees it: the matrix `rows` x `cols` with
// leading dimension `ld`, taken transposed when `op` is CUBLAS_OP_T, `batch` of them
// `batchStride` elements apart.
struct LtOperand {
  Tensor t;
  int op = CUBLAS_OP_N;
  int64_t rows = 0, cols = 0, ld = 0, batchStride = 0;
};

// The stride that steps through x's batch dims (all but the last two) as one, or nullopt
// when they do not collapse into one positive stride.
std::optional<int64_t> batchStrideOf(const Tensor& x) {
  const Shape& s = x.sizes();
  const Strides& st = x.strides();
  std::vector<int> dims;
  for (int d = 0; d + 2 < int(s.size()); ++d)
    if (s[d] != 1) dims.push_back(d);
  if (dims.empty()) return int64_t(0);
  for (size_t i = 0; i + 1 < dims.size(); ++i)
    if (st[dims[i]] != st[dims[i + 1]] * s[dims[i + 1]]) return std::nullopt;
  const int64_t stride = st[dims.back()];
  if (stride <= 0) return std::nullopt;
  return stride;
}

// E^T for the product's operand E = op(x) (r x c, `transposed` the op's flag) in
// column-major terms, or nullopt when x's layout does not fit.
std::optional<LtOperand> describe(const Tensor& x, bool transposed) {
  const Shape& s = x.sizes();
  const Strides& st = x.strides();
  const size_t rank = s.size();
  int64_t r = s[rank - 2], c = s[rank - 1], rs = st[rank - 2], cs = st[rank - 1];
  if (transposed) {
    std::swap(r, c);
    std::swap(rs, cs);
  }
  std::optional<int64_t> batch = batchStrideOf(x);
  if (!batch) return std::nullopt;
  LtOperand o;
  o.t = x;
  o.batchStride = *batch;
  // E^T (c x r) at column-major address j + i * ld: E's columns have unit stride.
  if (cs == 1 || c == 1) {
    const int64_t ld = r == 1 ? std::max<int64_t>(c, 1) : rs;
    if (ld >= std::max<int64_t>(c, 1)) {
      o.op = CUBLAS_OP_N;
      o.rows = c;
      o.cols = r;
      o.ld = ld;
      return o;
    }
  }
  // E itself column-major (r x c, unit stride down a column), taken transposed.
  if (rs == 1 || r == 1) {
    const int64_t ld = c == 1 ? std::max<int64_t>(r, 1) : cs;
    if (ld >= std::max<int64_t>(r, 1)) {
      o.op = CUBLAS_OP_T;
      o.rows = r;
      o.cols = c;
      o.ld = ld;
      return o;
    }
  }
  return std::nullopt;
}

LtOperand operandFor(const Tensor& x, bool transposed, const SourceLoc& loc) {
  if (std::optional<LtOperand> o = describe(x, transposed)) return *o;
  std::optional<LtOperand> o = describe(kernels::contiguousValues(x, loc), transposed);
  if (!o) throw Error::make(loc, "matmul", "internal: a contiguous operand of shape ", x.sizes(),
                            " has no cuBLASLt layout");
  return *o;
}

uint32_t alignmentOf(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  uint32_t align = 256;
  while (align > 1 && a % align != 0) align /= 2;
  return align;
}

cublasLtMatrixLayout_t layout(const LtApi& api, int type, uint64_t rows, uint64_t cols, int64_t ld,
                              int32_t batch, int64_t batchStride, std::string_view op, const SourceLoc& loc) {
  cublasLtMatrixLayout_t l = nullptr;
  checkLt(api.cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld), "cublasLtMatrixLayoutCreate", op, loc);
  if (batch > 1) {
    checkLt(api.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch),
            "cublasLtMatrixLayoutSetAttribute", op, loc);
    checkLt(api.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batchStride,
                                                 sizeof batchStride),
            "cublasLtMatrixLayoutSetAttribute", op, loc);
  }
  return l;
}

// out = op(a) op(b) (+ bias per column through the BIAS epilogue when `bias` is given).
// Returns false, having computed nothing, when cuBLASLt's heuristic offers no algorithm.
bool ltMatmul(const Tensor& a, const Tensor& b, bool ta, bool tb, Tensor& out, const Tensor* bias,
              std::string_view op, const SourceLoc& loc) {
  const int index = out.device().index;
  const LtApi& api = ltOrThrow(op, loc);
  DeviceBlas& blas = deviceBlas(index, op, loc);
  const Shape& os = out.sizes();
  const size_t rank = os.size();
  const int64_t m = os[rank - 2], n = os[rank - 1];
  const int64_t batch = out.numel() / (m * n);
  if (batch > INT32_MAX) throw Error::make(loc, op, "more than 2^31 - 1 matrices in one batch");
  // The column-major product D (n x m) = first (n x k) * second (k x m), first = B^T, second = A^T.
  const LtOperand first = operandFor(b, tb, loc), second = operandFor(a, ta, loc);
  const int type = dataType(out.dtype());
  const bool f64 = out.dtype() == kFloat64;
  Descriptors d{api};
  checkLt(api.cublasLtMatmulDescCreate(&d.desc, f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
                                       f64 ? CUDA_R_64F : CUDA_R_32F),
          "cublasLtMatmulDescCreate", op, loc);
  const int32_t opA = first.op, opB = second.op;
  checkLt(api.cublasLtMatmulDescSetAttribute(d.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA),
          "cublasLtMatmulDescSetAttribute", op, loc);
  checkLt(api.cublasLtMatmulDescSetAttribute(d.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB),
          "cublasLtMatmulDescSetAttribute", op, loc);
  if (bias) {
    const uint32_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    const void* pointer = bias->rawData();
    const int32_t biasType = type;
    checkLt(api.cublasLtMatmulDescSetAttribute(d.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue),
            "cublasLtMatmulDescSetAttribute", op, loc);
    checkLt(api.cublasLtMatmulDescSetAttribute(d.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &pointer, sizeof pointer),
            "cublasLtMatmulDescSetAttribute", op, loc);
    checkLt(api.cublasLtMatmulDescSetAttribute(d.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &biasType,
                                               sizeof biasType),
            "cublasLtMatmulDescSetAttribute", op, loc);
  }
  const int32_t count = int32_t(batch);
  d.a = layout(api, type, first.rows, first.cols, first.ld, count, first.batchStride, op, loc);
  d.b = layout(api, type, second.rows, second.cols, second.ld, count, second.batchStride, op, loc);
  d.d = layout(api, type, n, m, n, count, m * n, op, loc);
  checkLt(api.cublasLtMatmulPreferenceCreate(&d.pref), "cublasLtMatmulPreferenceCreate", op, loc);
  const uint64_t workspace = kWorkspaceBytes;
  checkLt(api.cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                   sizeof workspace),
          "cublasLtMatmulPreferenceSetAttribute", op, loc);
  // Views start anywhere in their storage: the heuristic assumes 256-byte alignment unless told.
  const void* pa = first.t.rawData();
  const void* pb = second.t.rawData();
  void* pd = out.rawData();
  const uint32_t alignA = alignmentOf(pa), alignB = alignmentOf(pb), alignD = alignmentOf(pd);
  checkLt(api.cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignA,
                                                   sizeof alignA),
          "cublasLtMatmulPreferenceSetAttribute", op, loc);
  checkLt(api.cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignB,
                                                   sizeof alignB),
          "cublasLtMatmulPreferenceSetAttribute", op, loc);
  checkLt(api.cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignD,
                                                   sizeof alignD),
          "cublasLtMatmulPreferenceSetAttribute", op, loc);
  checkLt(api.cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignD,
                                                   sizeof alignD),
          "cublasLtMatmulPreferenceSetAttribute", op, loc);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = api.cublasLtMatmulAlgoGetHeuristic(blas.handle, d.desc, d.a, d.b, d.d, d.d,
                                                                   d.pref, 1, &result, &found);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0 || result.state != CUBLAS_STATUS_SUCCESS) return false;
  const float alpha32 = 1.0f, beta32 = 0.0f;
  const double alpha64 = 1.0, beta64 = 0.0;
  const void* alpha = f64 ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta = f64 ? static_cast<const void*>(&beta64) : &beta32;
  checkLt(api.cublasLtMatmul(blas.handle, d.desc, alpha, pa, d.a, pb, d.b, beta, pd, d.d, pd, d.d, &result.algo,
                             blas.workspace->data(), kWorkspaceBytes, device(index, op, loc).stream),
          "cublasLtMatmul", op, loc);
  return true;
}

// ---- the generated matmul: int32/int64, and the fallback ---------------------------------

// Mirrors the MatGeom struct of the generated source.
struct MatGeom {
  long long m, n, k;
  long long aBatch, aRow, aCol, bBatch, bRow, bCol;
};

KernelSource matmulKernel(DType t) {
  const std::string T = storageType(t);
  const std::string name = std::string("kiln_matmul_") + shortName(t);
  std::string src = prelude();
  src += "typedef " + std::string(mathType(t)) + " M;\n";
  src += "struct MatGeom { i64 m, n, k; i64 aBatch, aRow, aCol, bBatch, bRow, bCol; };\n";
  src += "extern \"C\" __global__ void " + name + "(" + T + "* out, const " + T + "* a, const " + T +
         "* b, MatGeom g, i64 total) {\n";
  src += R"(  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
    const i64 j = i % g.n, row = (i / g.n) % g.m, bi = i / (g.n * g.m);
    const i64 aOff = bi * g.aBatch + row * g.aRow, bOff = bi * g.bBatch + j * g.bCol;
    M acc = (M)0;
    for (i64 p = 0; p < g.k; ++p)
)";
  src += "      acc += " + loadAs(t, "a[aOff + p * g.aCol]") + " * " + loadAs(t, "b[bOff + p * g.bRow]") + ";\n";
  src += "    out[i] = " + storeAs(t, "acc") + ";\n  }\n}\n";
  return {std::string("matmul ") + shortName(t), name, src};
}

void generatedMatmul(const Tensor& aIn, const Tensor& bIn, bool ta, bool tb, Tensor& out, std::string_view op,
                     const SourceLoc& loc) {
  const Tensor a = kernels::contiguousValues(aIn, loc), b = kernels::contiguousValues(bIn, loc);
  const Shape& os = out.sizes();
  const size_t rank = os.size();
  MatGeom g{};
  g.m = os[rank - 2];
  g.n = os[rank - 1];
  g.k = ta ? a.sizes()[rank - 2] : a.sizes()[rank - 1];
  // Contiguous operands: matrices m*k (k*n) elements apart, rows and columns by their strides.
  g.aBatch = g.m * g.k;
  g.bBatch = g.k * g.n;
  const Strides &sa = a.strides(), &sb = b.strides();
  g.aRow = ta ? sa[rank - 1] : sa[rank - 2];
  g.aCol = ta ? sa[rank - 2] : sa[rank - 1];
  g.bRow = tb ? sb[rank - 1] : sb[rank - 2];
  g.bCol = tb ? sb[rank - 2] : sb[rank - 1];
  const int index = out.device().index;
  CUfunction f = kernel(index, std::string("kiln_matmul_") + shortName(out.dtype()),
                        [&] { return matmulKernel(out.dtype()).source; }, op, loc);
  void* po = out.rawData();
  void* pa = a.rawData();
  void* pb = b.rawData();
  long long total = out.numel();
  void* params[] = {&po, &pa, &pb, &g, &total};
  Launch l = gridFor(total, index, op, loc);
  launch(index, f, {l.blocks}, {l.threads}, 0, params, op, loc);
}

// out = op(a) op(b) by whichever fits the dtype.
void product(const Tensor& a, const Tensor& b, bool ta, bool tb, Tensor& out, std::string_view op,
             const SourceLoc& loc) {
  if (dataType(out.dtype()) >= 0 && ltMatmul(a, b, ta, tb, out, nullptr, op, loc)) return;
  generatedMatmul(a, b, ta, tb, out, op, loc);
}

void zero(Tensor& out, std::string_view op, const SourceLoc& loc) {
  const int index = out.device().index;
  const DriverApi& api = driver(op, loc);
  check(api.cuMemsetD8Async(CUdeviceptr(out.rawData()), 0, size_t(out.numel()) * out.element_size(),
                            device(index, op, loc).stream),
        "cuMemsetD8Async", op, loc);
}

void matmul(const OpArgs& args, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  const bool ta = args.attrs.get<bool>("transpose_a"), tb = args.attrs.get<bool>("transpose_b");
  if (out.numel() == 0) return;
  const Tensor &a = args.inputs[0], &b = args.inputs[1];
  if (a.numel() == 0) return zero(out, "matmul", args.loc);  // K == 0: zeros
  product(a, b, ta, tb, out, "matmul", args.loc);
}

void addmm(const OpArgs& args, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  const SourceLoc& loc = args.loc;
  const bool ta = args.attrs.get<bool>("transpose_a"), tb = args.attrs.get<bool>("transpose_b");
  const bool relu = ops::reluEpilogue(args.attrs);
  if (out.numel() == 0) return;
  const Tensor &a = args.inputs[0], &b = args.inputs[1];
  const Tensor bias = kernels::contiguousValues(args.inputs[2], loc);
  const int64_t columns = out.sizes()[1];
  bool biasAdded = false;
  if (a.numel() == 0) {
    zero(out, "addmm", loc);  // K == 0: the product is zeros
  } else if (out.dtype() == kFloat32) {
    biasAdded = ltMatmul(a, b, ta, tb, out, &bias, "addmm", loc);
    if (!biasAdded) product(a, b, ta, tb, out, "addmm", loc);
  } else {
    product(a, b, ta, tb, out, "addmm", loc);
  }
  biasAndRelu(out, biasAdded ? Tensor() : bias, columns, 1, relu, "addmm", loc);
}

}  // namespace

const std::string& cublasLtUnavailableReason() { return lt().reason; }

bool isBlas(const OpDef& op) { return &op == &ops::kMatmul || &op == &ops::kAddmm; }

void blas(const OpDef& op, const OpArgs& args, std::span<Tensor> outputs) {
  if (&op == &ops::kMatmul) return matmul(args, outputs);
  return addmm(args, outputs);
}

void blasSources(std::vector<KernelSource>& out) {
  for (DType t : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64}) out.push_back(matmulKernel(t));
}

}  // namespace kiln::cuda
