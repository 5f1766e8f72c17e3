// Elementwise comparison with a tolerance, and the tolerance compiled results are held to.
#include "tools/kiln-fuzz/Compare.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "kiln/core/Ops.h"

namespace kiln::fuzz {

namespace {

// Element `i` of `shape` as [a, b, c].
std::string position(const Shape& shape, int64_t i) {
  Shape at(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    at[d] = i % shape[d];
    i /= shape[d];
  }
  std::ostringstream out;
  out << "[";
  for (size_t d = 0; d < at.size(); ++d) out << (d ? ", " : "") << at[d];
  return out.str() + "]";
}

// The elements as doubles, contiguous (every dtype the fuzzer makes converts exactly).
std::vector<double> values(const Tensor& t) {
  Tensor c = convert(t.detach(), kFloat64).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

double epsilon(DType d) {
  return d == kFloat64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
}

double smallestNormal(DType d) {
  return d == kFloat64 ? std::numeric_limits<double>::min() : std::numeric_limits<float>::min();
}

bool sameBytes(const Tensor& a, const Tensor& b) {
  Tensor x = a.detach().contiguous(), y = b.detach().contiguous();
  return std::memcmp(x.rawData(), y.rawData(), size_t(x.numel()) * x.element_size()) == 0;
}

bool within(double g, double w, const Tolerance& t) {
  if (std::isnan(g) && std::isnan(w)) return true;
  return g == w || std::abs(g - w) <= t.atol + t.rtol * std::abs(w);
}

}  // namespace

std::string difference(const Tensor& got, const Tensor& want, const Tolerance& tolerance) {
  std::ostringstream out;
  if (got.defined() != want.defined()) return got.defined() ? "defined where eager gives none" : "undefined";
  if (!got.defined()) return "";
  if (got.dtype() != want.dtype() || got.sizes() != want.sizes()) {
    out << got.dtype() << " " << got.sizes() << " where eager gives " << want.dtype() << " " << want.sizes();
    return out.str();
  }
  const bool bitwise = tolerance.bitwise || !isFloatingPoint(want.dtype());
  if (bitwise && sameBytes(got, want)) return "";
  const std::vector<double> g = values(got), w = values(want);
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < g.size(); ++i) {
    const bool ok = bitwise ? std::memcmp(&g[i], &w[i], sizeof(double)) == 0 : within(g[i], w[i], tolerance);
    if (ok) continue;
    if (first < 0) first = int64_t(i);
    ++bad;
  }
  if (bad == 0) return "";
  // Enough digits to tell the two apart: 9 for float32 and below, 17 for float64.
  out.precision(want.dtype() == kFloat64 ? 17 : 9);
  out << bad << " of " << g.size() << " elements differ" << (bitwise ? " bitwise" : "") << "; first at "
      << position(want.sizes(), first) << ": " << g[size_t(first)] << " where eager gives " << w[size_t(first)];
  if (!bitwise) out << " (atol " << tolerance.atol << ", rtol " << tolerance.rtol << ")";
  return out.str();
}

double largestMagnitude(const std::vector<Tensor>& tensors) {
  double m = 0;
  for (const Tensor& t : tensors)
    if (t.defined() && isFloatingPoint(t.dtype()))
      for (double v : values(t))
        if (std::isfinite(v)) m = std::max(m, std::abs(v));
  return m;
}

Tolerance compiledTolerance(const Tensor& want, const Tensor& shadow32, const Tensor& shadow64, int64_t reduce,
                            DType precision, double floor) {
  if (!isFloatingPoint(want.dtype())) return {};
  const DType dtype = want.dtype() == kFloat64 ? precision : want.dtype();
  const std::vector<double> lo = values(shadow32), hi = values(shadow64);
  double error = 0, scale = floor;
  for (size_t i = 0; i < hi.size(); ++i) {
    if (!std::isfinite(lo[i]) || !std::isfinite(hi[i])) continue;
    error = std::max(error, std::abs(lo[i] - hi[i]));
    scale = std::max(scale, std::abs(hi[i]));
  }
  const double eps = epsilon(dtype);
  // The float32 shadow's error, as this dtype would show it.
  const double conditioned = error * eps / epsilon(kFloat32);
  const double length = double(std::max<int64_t>(reduce, 1));
  Tolerance t;
  t.bitwise = false;
  t.atol = 16 * conditioned + 4 * eps * (std::sqrt(length) + 2) * scale + smallestNormal(dtype);
  t.rtol = 8 * eps * (std::log2(length) + 2);
  return t;
}

}  // namespace kiln::fuzz
