// Golden files: parsing and comparison (see Golden.h).
#include "test/unit/frontend/Golden.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "kiln/core/Ops.h"

namespace kiln::golden {

namespace {

[[noreturn]] void fail(int line, std::string_view what) {
  throw std::runtime_error("golden line " + std::to_string(line) + ": " + std::string(what));
}

std::vector<std::string_view> split(std::string_view text, std::string_view sep) {
  std::vector<std::string_view> parts;
  size_t at = 0;
  while (true) {
    size_t next = text.find(sep, at);
    parts.push_back(text.substr(at, next == std::string_view::npos ? next : next - at));
    if (next == std::string_view::npos) return parts;
    at = next + sep.size();
  }
}

// The text after `keyword ` in a field.
std::string_view fieldValue(std::string_view field, std::string_view keyword, int line) {
  if (field.substr(0, keyword.size()) != keyword || field.size() <= keyword.size() ||
      field[keyword.size()] != ' ')
    fail(line, "expected field '" + std::string(keyword) + "', got '" + std::string(field) + "'");
  return field.substr(keyword.size() + 1);
}

int64_t parseInt(std::string_view text, int line) {
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE) fail(line, "bad integer '" + s + "'");
  return v;
}

double parseFloat(std::string_view text, int line) {
  std::string s(text);
  if (s == "nan") return NAN;
  if (s == "inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0') fail(line, "bad float '" + s + "'");
  return v;
}

DType parseDType(std::string_view text, int line) {
  for (DType d : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kBool})
    if (name(d) == text) return d;
  fail(line, "unknown dtype '" + std::string(text) + "'");
}

// <dtype>[<d0>,...]=<v>,...
GoldenTensor parseTensor(std::string_view text, int line) {
  size_t open = text.find('['), close = text.find("]=");
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    fail(line, "bad tensor '" + std::string(text.substr(0, 40)) + "'");
  GoldenTensor t;
  t.dtype = parseDType(text.substr(0, open), line);
  std::string_view dims = text.substr(open + 1, close - open - 1);
  if (!dims.empty())
    for (std::string_view d : split(dims, ",")) t.shape.push_back(parseInt(d, line));
  std::string_view values = text.substr(close + 2);
  std::vector<std::string_view> items;
  if (!values.empty()) items = split(values, ",");
  if (int64_t(items.size()) != numel(t.shape))
    fail(line, "tensor of shape " + formatShape(t.shape) + " has " + std::to_string(items.size()) +
                   " values");
  for (std::string_view v : items) {
    if (isFloatingPoint(t.dtype)) t.floats.push_back(parseFloat(v, line));
    else t.ints.push_back(parseInt(v, line));
  }
  return t;
}

std::string formatIndex(const Shape& shape, int64_t linear) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = linear % shape[d];
    linear /= shape[d];
  }
  return formatShape(index);
}

}  // namespace

Tensor GoldenTensor::toTensor() const {
  switch (dtype) {
    case DType::Float32: {
      std::vector<float> v(floats.begin(), floats.end());
      return tensor(v, shape);
    }
    case DType::Float64: return tensor(floats, shape);
    case DType::Float16:
    case DType::BFloat16: return tensor(floats, shape).to(dtype);
    case DType::Int32: {
      std::vector<int32_t> v(ints.begin(), ints.end());
      return tensor(v, shape);
    }
    case DType::Int64: return tensor(ints, shape);
    case DType::Bool: {
      std::vector<bool> v;
      for (int64_t i : ints) v.push_back(i != 0);
      return tensor(v, shape);
    }
  }
  throw std::runtime_error("GoldenTensor::toTensor: bad dtype");
}

const std::string& GoldenCase::attr(std::string_view key) const {
  auto it = attrs.find(key);
  if (it == attrs.end())
    throw std::runtime_error("golden case " + name + ": missing attribute '" + std::string(key) + "'");
  return it->second;
}
int64_t GoldenCase::intAttr(std::string_view key) const { return parseInt(attr(key), line); }
double GoldenCase::floatAttr(std::string_view key) const { return parseFloat(attr(key), line); }
bool GoldenCase::boolAttr(std::string_view key) const { return parseInt(attr(key), line) != 0; }
DType GoldenCase::dtypeAttr(std::string_view key) const { return parseDType(attr(key), line); }
Shape GoldenCase::listAttr(std::string_view key) const {
  Shape out;
  const std::string& text = attr(key);
  if (!text.empty())
    for (std::string_view item : split(text, ",")) out.push_back(parseInt(item, line));
  return out;
}

GoldenCase parseGoldenLine(std::string_view text, int line) {
  std::vector<std::string_view> fields = split(text, " | ");
  if (fields.size() != 5 && fields.size() != 7)
    fail(line, "expected 5 or 7 fields, got " + std::to_string(fields.size()));
  GoldenCase c;
  c.line = line;
  c.name = fieldValue(fields[0], "case", line);
  c.op = fieldValue(fields[1], "op", line);
  std::string_view attrs = fieldValue(fields[2], "attrs", line);
  if (attrs != "-")
    for (std::string_view item : split(attrs, ";")) {
      size_t eq = item.find('=');
      if (eq == std::string_view::npos) fail(line, "attribute without '=': " + std::string(item));
      c.attrs.emplace(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
    }
  std::string_view inputs = fieldValue(fields[3], "in", line);
  if (inputs != "-")
    for (std::string_view t : split(inputs, ";")) c.inputs.push_back(parseTensor(t, line));
  c.output = parseTensor(fieldValue(fields[4], "out", line), line);
  if (fields.size() == 7) {
    c.gradOutput = parseTensor(fieldValue(fields[5], "gout", line), line);
    for (std::string_view t : split(fieldValue(fields[6], "grads", line), ";"))
      c.grads.push_back(t == "-" ? std::nullopt : std::optional(parseTensor(t, line)));
    if (c.grads.size() != c.inputs.size())
      fail(line, "grads has " + std::to_string(c.grads.size()) + " entries for " +
                     std::to_string(c.inputs.size()) + " inputs");
  }
  return c;
}

std::vector<GoldenCase> parseGoldenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open golden file " + path);
  std::vector<GoldenCase> cases;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.empty() || text[0] == '#') continue;
    try {
      cases.push_back(parseGoldenLine(text, line));
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(path + ": " + e.what());
    }
  }
  return cases;
}

std::string runfilePath(std::string_view workspaceRelative) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (!srcdir || !workspace) return std::string(workspaceRelative);
  return std::string(srcdir) + "/" + workspace + "/" + std::string(workspaceRelative);
}

double relativeTolerance(DType dtype) {
  switch (dtype) {
    case DType::Float64: return 1e-6;
    case DType::Float32: return 1e-5;
    case DType::Float16: return 1e-3;
    case DType::BFloat16: return 1e-2;
    default: return 0;
  }
}

std::vector<double> valuesAsDouble(const Tensor& t) {
  Tensor c = t.contiguous();
  std::vector<double> out(size_t(c.numel()));
  dispatchDType(c.dtype(), [&]<class T>() {
    const T* p = c.data_ptr<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = double(OpMathType<T>(p[i]));
  });
  return out;
}

std::vector<int64_t> valuesAsInt64(const Tensor& t) {
  Tensor c = t.contiguous();
  std::vector<int64_t> out(size_t(c.numel()));
  dispatchDType(c.dtype(), [&]<class T>() {
    const T* p = c.data_ptr<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = int64_t(OpMathType<T>(p[i]));
  });
  return out;
}

::testing::AssertionResult matchesGolden(const Tensor& actual, const GoldenTensor& expected) {
  if (!actual.defined()) return ::testing::AssertionFailure() << "the result is undefined";
  if (actual.dtype() != expected.dtype || actual.sizes() != expected.shape)
    return ::testing::AssertionFailure()
           << "got " << actual.dtype() << formatShape(actual.sizes()) << ", expected "
           << expected.dtype << formatShape(expected.shape);
  int64_t bad = 0, first = -1;
  std::string firstText;
  if (isFloatingPoint(expected.dtype)) {
    const double rtol = relativeTolerance(expected.dtype);
    std::vector<double> got = valuesAsDouble(actual);
    for (size_t i = 0; i < got.size(); ++i) {
      double a = got[i], e = expected.floats[i];
      bool ok = std::isnan(e) ? std::isnan(a)
                : std::isinf(e) ? a == e
                                : std::fabs(a - e) <= rtol * (std::fabs(e) + 0.1);
      if (ok) continue;
      if (bad++ == 0) {
        first = int64_t(i);
        std::ostringstream os;
        os.precision(17);
        os << "got " << a << ", expected " << e;
        if (!std::isnan(e) && !std::isinf(e)) os << " (relative error " << std::fabs(a - e) / std::max(std::fabs(e), 1e-300) << ", rtol " << rtol << ")";
        firstText = os.str();
      }
    }
  } else {
    std::vector<int64_t> got = valuesAsInt64(actual);
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] == expected.ints[i]) continue;
      if (bad++ == 0) {
        first = int64_t(i);
        firstText = "got " + std::to_string(got[i]) + ", expected " + std::to_string(expected.ints[i]);
      }
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "element " << formatIndex(expected.shape, first) << ": "
                                       << firstText << " (" << bad << " of " << numel(expected.shape)
                                       << " elements differ)";
}

}  // namespace kiln::golden
