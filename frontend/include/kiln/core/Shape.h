// Shapes and strides: element counts, contiguity, broadcasting, dims and reshape sizes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/Error.h"

namespace kiln {

// Plain vectors: cheap to build from `{2, 3}`, and what every caller already has.
using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

// The dims a reduction runs over, as LibTorch's IntArrayRef: one dim (x.sum(1)), a list
// (x.sum({0, 1})) or a Shape; empty means every dim.
struct Dims : Shape {
  Dims() = default;
  Dims(int64_t dim) : Shape{dim} {}                           // NOLINT: implicit, as LibTorch
  Dims(std::initializer_list<int64_t> dims) : Shape(dims) {}  // NOLINT
  Dims(Shape dims) : Shape(std::move(dims)) {}                // NOLINT
};

// Product of the dims (1 for a scalar). Assumes a valid shape; see checkedNumel.
int64_t numel(const Shape& shape);

// numel for shapes from users: ShapeError on a negative dim or an int64 overflow.
int64_t checkedNumel(const Shape& shape, std::string_view op, const std::source_location& loc);

// Row-major strides in elements; dims of size 0 or 1 count as 1 (as PyTorch), so the
// strides of an empty tensor are still distinct and useful for views.
Strides contiguousStrides(const Shape& shape);

// True when the elements lie row-major without gaps. Dims of size 1 may carry any stride,
// and an empty tensor is contiguous (PyTorch's rule).
bool isContiguous(const Shape& shape, const Strides& strides);

// NumPy broadcasting: align from the right; each pair of dims is equal or one of them is 1.
// ShapeError naming both shapes otherwise.
Shape broadcastShapes(const Shape& a, const Shape& b, std::string_view op,
                      const std::source_location& loc);

// Maps a possibly negative dim into [0, rank). A scalar accepts 0 and -1 (as PyTorch).
// Callers that insert a dim (unsqueeze) pass rank + 1.
int64_t normalizeDim(int64_t dim, int64_t rank, std::string_view op,
                     const std::source_location& loc);

// The shape reshape produces for `numel` elements, with at most one -1 inferred.
Shape inferSize(const Shape& shape, int64_t numel, std::string_view op,
                const std::source_location& loc);

// "[2, 3]"; a scalar is "[]".
std::string formatShape(const Shape& shape);

std::ostream& operator<<(std::ostream& os, const Shape& shape);

}  // namespace kiln
