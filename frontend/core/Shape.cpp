#include "kiln/core/Shape.h"

#include <algorithm>
#include <limits>
#include <sstream>

namespace kiln {

namespace {

// Product of the dims other than those equal to `skip`; false on int64 overflow.
bool productOf(const Shape& shape, int64_t* product, int64_t skip) {
  int64_t p = 1;
  for (int64_t d : shape) {
    if (d == skip) continue;
    if (__builtin_mul_overflow(p, d, &p)) return false;
  }
  *product = p;
  return true;
}

// Index of the first dim below `lowest`, or -1.
int64_t firstDimBelow(const Shape& shape, int64_t lowest) {
  auto it = std::find_if(shape.begin(), shape.end(), [&](int64_t d) { return d < lowest; });
  return it == shape.end() ? -1 : it - shape.begin();
}

constexpr int64_t kNoSkip = std::numeric_limits<int64_t>::min();

}  // namespace

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t checkedNumel(const Shape& shape, std::string_view op, const std::source_location& loc) {
  if (int64_t i = firstDimBelow(shape, 0); i >= 0)
    throw ShapeError::make(loc, op, "shape ", shape, " has negative dimension ", shape[i],
                           " at index ", i);
  int64_t n = 0;
  if (!productOf(shape, &n, kNoSkip))
    throw ShapeError::make(loc, op, "shape ", shape, " has more elements than int64 can count");
  return n;
}

Strides contiguousStrides(const Shape& shape) {
  Strides strides(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

bool isContiguous(const Shape& shape, const Strides& strides) {
  if (shape.size() != strides.size()) return false;
  if (numel(shape) == 0) return true;
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

Shape broadcastShapes(const Shape& a, const Shape& b, std::string_view op,
                      const std::source_location& loc) {
  const Shape& longer = a.size() >= b.size() ? a : b;
  const Shape& shorter = a.size() >= b.size() ? b : a;
  Shape result = longer;
  size_t lead = longer.size() - shorter.size();
  for (size_t i = 0; i < shorter.size(); ++i) {
    int64_t x = longer[lead + i], y = shorter[i];
    if (x == y || y == 1) continue;
    if (x != 1)
      throw ShapeError::make(loc, op, "operands have shapes ", a, " and ", b,
                             ", which cannot be broadcast");
    result[lead + i] = y;
  }
  return result;
}

int64_t normalizeDim(int64_t dim, int64_t rank, std::string_view op,
                     const std::source_location& loc) {
  int64_t extent = std::max<int64_t>(rank, 1);
  if (dim < -extent || dim >= extent)
    throw ShapeError::make(loc, op, "dimension ", dim, " is out of range for a tensor of rank ",
                           rank, " (expected a value in [", -extent, ", ", extent - 1, "])");
  return dim < 0 ? dim + extent : dim;
}

Shape inferSize(const Shape& shape, int64_t numel, std::string_view op,
                const std::source_location& loc) {
  if (int64_t i = firstDimBelow(shape, -1); i >= 0)
    throw ShapeError::make(loc, op, "shape ", shape, " has invalid dimension ", shape[i],
                           " at index ", i);
  auto inferred = std::find(shape.begin(), shape.end(), -1);
  if (std::count(shape.begin(), shape.end(), -1) > 1)
    throw ShapeError::make(loc, op, "shape ", shape,
                           " has more than one -1; only one dimension can be inferred");
  int64_t known = 0;
  if (!productOf(shape, &known, -1))
    throw ShapeError::make(loc, op, "shape ", shape, " has more elements than int64 can count");
  if (inferred == shape.end()) {
    if (known != numel)
      throw ShapeError::make(loc, op, "cannot reshape a tensor of ", numel,
                             " elements into shape ", shape);
    return shape;
  }
  if (known == 0)
    throw ShapeError::make(loc, op, "cannot infer the -1 in shape ", shape, " for a tensor of ",
                           numel, " elements: with a zero-size dimension any size fits");
  if (numel % known != 0)
    throw ShapeError::make(loc, op, "cannot reshape a tensor of ", numel,
                           " elements into shape ", shape);
  Shape result = shape;
  result[inferred - shape.begin()] = numel / known;
  return result;
}

std::string formatShape(const Shape& shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Shape& shape) {
  return os << formatShape(shape);
}

}  // namespace kiln
