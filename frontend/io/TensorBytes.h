// Tensor values as the bytes file formats hold: a contiguous tensor to write from, a
// fresh tensor to read into, and the checks on bytes read back.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "kiln/core/Tensor.h"

namespace kiln::io {

// `tensor`'s values in a contiguous CPU tensor (itself if already contiguous and on the
// CPU; a copy for a tensor on a CUDA device), made without autograd history. Its numel() * element_size() bytes start at rawData(). Reading
// the values is a value read to a tracer.
Tensor contiguousForWrite(const Tensor& tensor, const SourceLoc& loc);

// A fresh contiguous CPU tensor whose bytes a reader fills.
Tensor allocateForRead(const Shape& shape, DType dtype, const SourceLoc& loc);

// numel(shape) * elementSize(dtype), or nullopt if a dim is negative or the product of
// the non-zero dims overflows int64.
std::optional<uint64_t> byteSize(const Shape& shape, DType dtype);

// The index of the first byte of a bool tensor's data that is neither 0 nor 1, or -1:
// other bytes are not valid C++ bools.
int64_t firstInvalidBool(const Tensor& tensor);

}  // namespace kiln::io
