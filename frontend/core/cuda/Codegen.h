// Pieces of the CUDA C that the eager kernels are generated as: the storage and math type
// of each dtype, loads and stores that convert between them, and the common prelude.
#pragma once

#include <array>
#include <span>
#include <string>

#include "kiln/core/DType.h"
#include "kiln/core/Tensor.h"

namespace kiln::cuda {

// The C type a dtype is stored as on the device ("float", "unsigned short" for f16/bf16).
const char* storageType(DType dtype);
// The type it computes in, as OpMathType on the CPU ("float" for f16/bf16).
const char* mathType(DType dtype);
// A short name for kernel names and cache keys ("f32", "bf16").
const char* shortName(DType dtype);
// `expr` (a stored value) as the math type, and `expr` (a math value) as stored.
std::string loadAs(DType dtype, const std::string& expr);
std::string storeAs(DType dtype, const std::string& expr);

// Typedefs, f16/bf16 conversions (round to nearest even, as the CPU's), integer pow and
// the Geometry struct below, for the start of every generated source.
const std::string& prelude();

// Up to kMaxOperands strided operands of one shape: operand 0 is the output. Mirrors the
// struct the prelude declares, so it is passed to kernels by value.
inline constexpr int kMaxDims = 8;
inline constexpr int kMaxOperands = 4;
struct Geometry {
  int rank = 0;
  int pad = 0;
  long long size[kMaxDims] = {};
  long long stride[kMaxOperands][kMaxDims] = {};
};

// The geometry of `operands` (all of operands[0]'s shape), with dims merged where every
// operand is contiguous across them, and whether every operand is then contiguous.
// kiln::Error (naming `op`) for a rank above kMaxDims after merging.
Geometry geometryOf(std::span<const Tensor* const> operands, bool& contiguous, std::string_view op,
                    const SourceLoc& loc);

// Threads per block and blocks for a grid-stride loop over `n` elements on `device`.
struct Launch {
  unsigned blocks = 1, threads = 256;
};
Launch gridFor(int64_t n, int device, std::string_view op, const SourceLoc& loc);

}  // namespace kiln::cuda
