// NVRTC's kernel generator (issue 22, first slice): each fused kernel of kiln-fuse
// (kiln.kernel = "fusion", after kiln-outline-kernels) as one CUDA C `extern "C"
// __global__` function, compiled by NVRTC to PTX (frontend/core/cuda/Nvrtc.h).
//
// - Without reductions: one thread per output element in a grid-stride loop over the
//   contiguous results (results of one shape share the loop), broadcasts, transposes and
//   reshapes as index arithmetic on the contiguous operands.
// - With reductions: one block per output row (a grid-stride loop over rows). Each row's
//   reductions are computed first by the whole block (a strided loop per thread, then
//   warp shuffles and one shared-memory step across the warps), their values shared with
//   the block; then the block's threads stride over the row's elements. A plain reduction
//   is a row of one element; softmax's and layer_norm's row groups are rows of their last
//   dims. The rows are the fewest leading dims that make every reduction one value per
//   row; a reduction read inside another's loop at elements that vary there is computed by
//   each thread alone; a result of one value per row is written by thread 0 after the
//   reductions.
// - Values are the eager CUDA kernels' (frontend/core/cuda): each op's expression is
//   Elementwise.cpp's in the op's math type and rounded to its element type; sums and
//   products accumulate in double (i64 for integers) and round once, a float32 sum or
//   mean adds elements 32k + l and 32k + 16 + l (l < 16) in float32 first as the CPU's
//   PairFold; max and min keep NaN.
//
// Running the kernels (the host schedule on the GPU, launches, a device arena) is not
// built yet: docs/ARCHITECTURE.md, "NVRTC (runtime/nvrtc)".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln::runtime::nvrtc {

// One fused kernel as CUDA C. Its parameters are the kernel function's operands, then its
// results, as contiguous device buffers of their element types (f16 and bf16 as unsigned
// short): `const T* in0, ..., T* out0, ...`. Correct for any grid with `threads` threads
// per block.
struct CudaKernel {
  std::string name;      // the entry point: "kiln_nvrtc_" + the kernel function's name
  std::string source;    // a whole translation unit (the eager kernels' prelude first)
  bool rows = false;     // one block per row (kernels with reductions), else elementwise
  int64_t rowCount = 0;  // rows: how many rows (the grid wanted, before any cap)
  int64_t rowLength = 0; // rows: output elements per row
  int64_t elements = 0;  // elementwise: elements of the largest result
  int reductions = 0;    // reductions computed per row by the block
  int serialReductions = 0;  // reductions each thread computes alone (inside another's loop)
  int threads = 256;     // the block size the source is written for (__launch_bounds__)
  // "@k: rows (128 rows of 64, 2 reductions)", for KILN_LOG=compile.
  std::string describe() const;
};

// `kernel` as CUDA C, or nullopt with `why` where this generator does not take it (an op
// or element type it does not translate, a shape it cannot index). `inPlace`: a result
// may be written over an operand's buffer (a state updated in place), so a kernel that
// reads such an operand at elements other threads write is declined.
std::optional<CudaKernel> generate(mlir::func::FuncOp kernel, bool inPlace, std::string& why);

// `kernel`'s PTX for `arch` ("compute_80", "compute_90") by NVRTC; kiln::Error with
// NVRTC's log when it does not compile.
std::string compileToPtx(const CudaKernel& kernel, const std::string& arch);

}  // namespace kiln::runtime::nvrtc
