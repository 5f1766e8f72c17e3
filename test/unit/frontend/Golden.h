// Golden values for op tests: the line format written by scripts/golden/gen_core_goldens.py
// (described at the top of each golden file), a parser for it, and the comparison of a
// kiln result with a golden tensor. Test-only; every op family's golden test reuses it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/DType.h"
#include "kiln/core/Shape.h"
#include "kiln/core/Tensor.h"

namespace kiln::golden {

// One tensor of a golden file: floats keep their double values, integers and bools their
// exact int64 values.
struct GoldenTensor {
  DType dtype = kFloat32;
  Shape shape;
  std::vector<double> floats;  // floating dtypes
  std::vector<int64_t> ints;   // integer dtypes and bool (0/1)

  // A fresh contiguous kiln tensor with these values (16-bit floats are built in float64
  // and converted, which is exact for values that came from that dtype).
  Tensor toTensor() const;
};

// One `case` line.
struct GoldenCase {
  std::string name;
  std::string op;
  int line = 0;  // in the golden file, for messages
  std::map<std::string, std::string, std::less<>> attrs;
  std::vector<GoldenTensor> inputs;
  GoldenTensor output;
  std::optional<GoldenTensor> gradOutput;            // gout
  std::vector<std::optional<GoldenTensor>> grads;    // per input; nullopt for "-"

  bool has(std::string_view key) const { return attrs.find(key) != attrs.end(); }
  // Typed attributes; a missing or malformed one throws std::runtime_error naming the case.
  const std::string& attr(std::string_view key) const;
  int64_t intAttr(std::string_view key) const;
  double floatAttr(std::string_view key) const;
  bool boolAttr(std::string_view key) const;
  Shape listAttr(std::string_view key) const;
  DType dtypeAttr(std::string_view key) const;
};

// gtest prints a parameterized test's case by name rather than as bytes.
inline void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

// Parses a golden file; std::runtime_error with the file and line on malformed input.
std::vector<GoldenCase> parseGoldenFile(const std::string& path);
// Parses one `case ...` line (exposed for the parser's own tests).
GoldenCase parseGoldenLine(std::string_view line, int lineNumber = 0);

// The path of a data file declared in the test's `data = [...]`, given relative to the
// workspace root ("test/unit/frontend/golden/core_ops.txt"): under Bazel
// $TEST_SRCDIR/$TEST_WORKSPACE/<path>, otherwise <path> itself.
std::string runfilePath(std::string_view workspaceRelative);

// Relative tolerance per dtype: float64 1e-6, float32 1e-5, float16 1e-3, bfloat16 1e-2;
// 0 (exact) for integers and bools.
double relativeTolerance(DType dtype);

// Whether `actual` has `expected`'s dtype, shape and values: floats within
// |a - e| <= rtol * (|e| + 0.1) (the 0.1 keeps results that cancel to ~0 comparable),
// NaN matching NaN and infinities exactly; integers and bools exactly. The failure names
// the first differing element by its multi-index and counts the others.
::testing::AssertionResult matchesGolden(const Tensor& actual, const GoldenTensor& expected);

// A tensor's values read through its dtype (any strides): as doubles, or as exact int64
// for integer and bool dtypes.
std::vector<double> valuesAsDouble(const Tensor& tensor);
std::vector<int64_t> valuesAsInt64(const Tensor& tensor);

}  // namespace kiln::golden
