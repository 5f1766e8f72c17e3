// Printing tensors exactly as PyTorch 1.13's repr does (torch/_tensor_str.py), with
// "torch." read as "kiln.": tensor([[1., 2.],\n        [3., 4.]], dtype=kiln.float64).
// The functions below mirror _Formatter, _vector_str, _tensor_str_with_formatter,
// get_summarized_data, _add_suffixes and _str_intern, under the default print options.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Tensor.h"

namespace kiln {

namespace {

// torch.set_printoptions(profile="default").
constexpr int64_t kThreshold = 1000;  // more elements than this are summarized
constexpr int64_t kEdgeItems = 3;     // elements kept at each end of a summarized dim
constexpr int64_t kLineWidth = 80;
constexpr const char* kSciFormat = "%.4e";    // precision 4
constexpr const char* kFixedFormat = "%.4f";

// Positions of one dim that get printed, in order; -1 stands for the "..." that replaces
// the middle of a dim longer than 2 * edgeitems when summarizing.
std::vector<int64_t> shownIndices(int64_t size, bool summarize) {
  std::vector<int64_t> shown;
  const bool cut = summarize && size > 2 * kEdgeItems;
  for (int64_t i = 0; i < size; ++i) {
    if (cut && i == kEdgeItems) {
      shown.push_back(-1);
      i = size - kEdgeItems;
    }
    shown.push_back(i);
  }
  return shown;
}

// Storage offsets (from rawData()) of the elements that get printed. The format is chosen
// from these only, as torch builds its _Formatter from get_summarized_data.
void collectShown(const Tensor& t, int64_t dim, int64_t offset, bool summarize,
                  std::vector<int64_t>& out) {
  if (dim == t.dim()) {
    out.push_back(offset);
    return;
  }
  for (int64_t i : shownIndices(t.sizes()[dim], summarize))
    if (i >= 0) collectShown(t, dim + 1, offset + i * t.strides()[dim], summarize, out);
}

// A floating element widened to double, as Python's float of tensor.tolist().
double floatAt(const Tensor& t, int64_t offset) {
  return dispatchDType(t.dtype(), [&]<class T>() {
    return double(OpMathType<T>(static_cast<const T*>(t.rawData())[offset]));
  });
}

// An integral or bool element as Python's "{}".format writes it: exact (no double
// round-trip, so all of int64 prints right), True/False for bools.
std::string integralText(const Tensor& t, int64_t offset) {
  return dispatchDType(t.dtype(), [&]<class T>() -> std::string {
    const T v = static_cast<const T*>(t.rawData())[offset];
    if constexpr (std::is_same_v<T, bool>) return v ? "True" : "False";
    else if constexpr (std::is_integral_v<T>) return std::to_string(v);
    else return {};  // floating dtypes go through floatAt
  });
}

// printf with a Python float format: Python writes nan unsigned and inf as "inf"/"-inf"
// whatever the format ("{:.4e}", "{:.0f}", "{:.4f}").
std::string pyFloat(const char* format, double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[512];  // "%.0f" of the largest double has 309 digits
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// torch._tensor_str._Formatter: one style and one width for all printed elements. Floats
// print in int mode ("3."), fixed ("3.1416") or scientific ("3.1416e+00"), chosen and
// sized from the finite non-zero values only; nan/inf/0 are just padded to that width.
class Formatter {
 public:
  Formatter(const Tensor& t, const std::vector<int64_t>& offsets) : t_(t) {
    if (!t.is_floating_point()) {
      for (int64_t off : offsets) width_ = std::max(width_, integralText(t, off).size());
      return;
    }
    std::vector<double> finite;  // the nonzero_finite_vals
    for (int64_t off : offsets) {
      double v = floatAt(t, off);
      if (std::isfinite(v) && v != 0) finite.push_back(v);
    }
    if (!finite.empty()) chooseFloatStyle(finite);
  }

  size_t width() const { return width_; }

  // The element at `offset`, right-aligned to the common width.
  std::string format(int64_t offset) const {
    std::string s = t_.is_floating_point() ? floatText(floatAt(t_, offset))
                                           : integralText(t_, offset);
    return std::string(width_ - std::min(width_, s.size()), ' ') + s;
  }

 private:
  // Scientific when the values span more than 3 decades or exceed 1e8 (or, unless all are
  // integral, go below 1e-4); the width is the widest value in the chosen style.
  void chooseFloatStyle(const std::vector<double>& finite) {
    double maxAbs = 0, minAbs = INFINITY;
    for (double v : finite) {
      maxAbs = std::max(maxAbs, std::fabs(v));
      minAbs = std::min(minAbs, std::fabs(v));
      intMode_ = intMode_ && v == std::ceil(v);
    }
    sci_ = maxAbs / minAbs > 1000.0 || maxAbs > 1.0e8 || (!intMode_ && minAbs < 1.0e-4);
    for (double v : finite) width_ = std::max(width_, floatText(v).size());
  }

  // Unpadded; int mode adds "." to finite values so they still read as floats.
  std::string floatText(double v) const {
    if (sci_) return pyFloat(kSciFormat, v);
    if (!intMode_) return pyFloat(kFixedFormat, v);
    return pyFloat("%.0f", v) + (std::isfinite(v) ? "." : "");
  }

  const Tensor& t_;
  bool intMode_ = true;
  bool sci_ = false;
  size_t width_ = 1;
};

// _vector_str: the last dim, as many elements per line as fit in linewidth (counting
// ", " after each), continuation lines indented under the first element.
std::string vectorStr(const Tensor& t, int64_t offset, int64_t indent, bool summarize,
                      const Formatter& fmt) {
  const int64_t perLine =
      std::max<int64_t>(1, (kLineWidth - indent) / int64_t(fmt.width() + 2));
  const int64_t stride = t.strides().back();
  std::string out = "[";
  int64_t n = 0;
  for (int64_t i : shownIndices(t.sizes().back(), summarize)) {
    // The summary's " ..." counts as one element, as in torch's data list.
    std::string item = i < 0 ? " ..." : fmt.format(offset + i * stride);
    if (n > 0) out += n % perLine == 0 ? ",\n" + std::string(size_t(indent + 1), ' ') : ", ";
    out += item;
    ++n;
  }
  return out + "]";
}

// _tensor_str_with_formatter from `dim` down: slices of outer dims are separated by one
// blank line per remaining dim below the next, and indented one column deeper per level.
std::string tensorStr(const Tensor& t, int64_t dim, int64_t offset, int64_t indent,
                      bool summarize, const Formatter& fmt) {
  if (t.dim() == 0) return fmt.format(offset);
  if (dim == t.dim() - 1) return vectorStr(t, offset, indent, summarize, fmt);
  const std::string sep = "," + std::string(size_t(t.dim() - dim - 1), '\n') +
                          std::string(size_t(indent + 1), ' ');
  std::string out = "[";
  bool first = true;
  for (int64_t i : shownIndices(t.sizes()[dim], summarize)) {
    if (!first) out += sep;
    first = false;
    out += i < 0 ? "..."
                 : tensorStr(t, dim + 1, offset + i * t.strides()[dim], indent + 1, summarize, fmt);
  }
  return out + "]";
}

// _tensor_str: the bracketed values of a tensor with at least one element.
std::string valuesStr(const Tensor& t, int64_t indent) {
  const bool summarize = t.numel() > kThreshold;
  std::vector<int64_t> shown;
  collectShown(t, 0, 0, summarize, shown);
  Formatter fmt(t, shown);
  return tensorStr(t, 0, 0, indent, summarize, fmt);
}

std::string sizeSuffix(const Shape& shape) {
  std::string s = "size=(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// The dtypes a literal's values imply (float32 from floats, int64 from ints, bool) go
// unnamed in torch's repr (has_default_dtype).
bool impliedByValues(DType dtype) {
  return dtype == kFloat32 || dtype == kInt64 || dtype == kBool;
}

// A suffix's length in torch's own repr, which says "torch.float64" where we say
// "kiln.float64": the line breaks must fall where torch's do.
int64_t torchLength(const std::string& suffix) {
  int64_t len = int64_t(suffix.size());
  for (size_t at = suffix.find("kiln."); at != std::string::npos; at = suffix.find("kiln.", at + 1))
    ++len;
  return len;
}

// _add_suffixes: ", suffix" on the last line while it stays within linewidth, otherwise
// on a new line indented like the values.
std::string withSuffixes(std::string s, const std::vector<std::string>& suffixes,
                         int64_t indent) {
  // torch's len(s) - s.rfind("\n") + 1, where rfind gives -1 for no newline.
  const size_t nl = s.rfind('\n');
  int64_t lastLine = int64_t(s.size()) - (nl == std::string::npos ? -1 : int64_t(nl)) + 1;
  for (const std::string& suffix : suffixes) {
    const int64_t len = torchLength(suffix);
    if (lastLine + len + 2 > kLineWidth) {
      s += ",\n" + std::string(size_t(indent), ' ') + suffix;
      lastLine = indent + len;
    } else {
      s += ", " + suffix;
      lastLine += len + 2;
    }
  }
  return s + ")";
}

}  // namespace

// _str_intern for strided CPU tensors; placeholders print like torch's meta tensors
// ("..." there), since they too have a shape and dtype but no values.
std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ Tensor (undefined) ]";
  const std::string prefix = "tensor(";
  const int64_t indent = int64_t(prefix.size());
  std::string body;
  std::vector<std::string> suffixes;
  // As torch: the device first, for any device but the CPU.
  if (!t.device().isCPU()) suffixes.push_back("device='" + t.device().str() + "'");
  if (t.is_placeholder()) {
    body = "<placeholder>";
    suffixes.push_back(sizeSuffix(t.sizes()));
    if (t.dtype() != kDefaultFloat) suffixes.push_back("dtype=" + qualifiedName(t.dtype()));
  } else {
    // Printing reads values: a by-value trace bakes them in, a symbolic one refuses.
    if (DispatchHook* hook = currentDispatchHook())
      hook->onValueRead(t, "print", SourceLoc::current());
    if (t.numel() == 0) {
      body = "[]";
      if (t.dim() != 1) suffixes.push_back(sizeSuffix(t.sizes()));
      // No values to infer int64 or bool from, so only float32 goes unnamed.
      if (t.dtype() != kDefaultFloat) suffixes.push_back("dtype=" + qualifiedName(t.dtype()));
    } else {
      // A CUDA tensor's values are read on the host, after the work that makes them.
      body = valuesStr(t.device().isCPU() ? t : t.detach().cpu(), indent);
      if (!impliedByValues(t.dtype())) suffixes.push_back("dtype=" + qualifiedName(t.dtype()));
    }
  }
  if (t.grad_fn()) suffixes.push_back("grad_fn=<" + t.grad_fn()->name() + ">");
  else if (t.requires_grad()) suffixes.push_back("requires_grad=True");
  return os << withSuffixes(prefix + body, suffixes, indent);
}

}  // namespace kiln
