// Interval bounds, contiguity and reduction lengths, op by op (see Analysis.h).
#include "tools/kiln-fuzz/Analysis.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace kiln::fuzz {

namespace {

int64_t product(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t normalize(int64_t dim, size_t rank) { return dim < 0 ? dim + int64_t(rank) : dim; }

Facts range(double a, double b) { return {std::min(a, b), std::max(a, b)}; }

Facts hull(const Facts& a, const Facts& b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

Facts times(const Facts& a, const Facts& b) {
  const double c[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

Facts symmetric(double m) { return {-m, m}; }

Facts leafFacts(const Node& n) {
  switch (n.fill) {
    case Fill::Normal: return {-5, 5};
    case Fill::Positive: return {0.5, 5.5};
    case Fill::Ints: return {0, double(n.high - 1)};
    case Fill::Bools: return {0, 1};
  }
  return {};
}

// The affine part of a normalization: z (in ±bound) times weight plus bias, if given.
Facts affine(double bound, const std::vector<Facts>& f, const Node& n, size_t weightArg) {
  Facts z = symmetric(bound);
  if (n.args.size() <= weightArg) return z;
  Facts scaled = times(z, f[size_t(n.args[weightArg])]);
  const Facts& b = f[size_t(n.args[weightArg + 1])];
  return {scaled.lo + b.lo, scaled.hi + b.hi};
}

Facts bounds(const Program& p, const std::vector<Facts>& f, const Node& n) {
  auto arg = [&](size_t k) { return f[size_t(n.args[k])]; };
  const int64_t len = reductionLength(p, n);
  switch (n.op) {
    case Op::Input:
    case Op::State: return leafFacts(n);
    case Op::Neg: return {-arg(0).hi, -arg(0).lo};
    case Op::Abs:
      if (arg(0).lo >= 0) return arg(0);
      if (arg(0).hi <= 0) return {-arg(0).hi, -arg(0).lo};
      return {0, arg(0).mag()};
    case Op::Relu: return {std::max(arg(0).lo, 0.0), std::max(arg(0).hi, 0.0)};
    case Op::Exp: return {std::exp(arg(0).lo), std::exp(arg(0).hi)};
    case Op::Log: return {std::log(arg(0).lo), std::log(arg(0).hi)};
    case Op::Sqrt: return {std::sqrt(std::max(arg(0).lo, 0.0)), std::sqrt(arg(0).hi)};
    case Op::Rsqrt: return {1 / std::sqrt(arg(0).hi), 1 / std::sqrt(arg(0).lo)};
    case Op::Tanh: return {std::tanh(arg(0).lo), std::tanh(arg(0).hi)};
    case Op::Sigmoid: return {1 / (1 + std::exp(-arg(0).lo)), 1 / (1 + std::exp(-arg(0).hi))};
    case Op::Sin:
    case Op::Cos: return {-1, 1};
    case Op::Add: return {arg(0).lo + arg(1).lo, arg(0).hi + arg(1).hi};
    case Op::Sub: return {arg(0).lo - arg(1).hi, arg(0).hi - arg(1).lo};
    case Op::Mul: return times(arg(0), arg(1));
    case Op::Div: return times(arg(0), range(1 / arg(1).lo, 1 / arg(1).hi));
    case Op::Maximum: return {std::max(arg(0).lo, arg(1).lo), std::max(arg(0).hi, arg(1).hi)};
    case Op::Minimum: return {std::min(arg(0).lo, arg(1).lo), std::min(arg(0).hi, arg(1).hi)};
    case Op::AddScalar: return {arg(0).lo + n.scalar, arg(0).hi + n.scalar};
    case Op::MulScalar: return range(arg(0).lo * n.scalar, arg(0).hi * n.scalar);
    case Op::PowScalar: {
      const Facts a = arg(0);
      if (n.scalar == 3) return {a.lo * a.lo * a.lo, a.hi * a.hi * a.hi};
      const double low = a.lo >= 0 ? a.lo * a.lo : a.hi <= 0 ? a.hi * a.hi : 0;
      return {low, a.mag() * a.mag()};
    }
    case Op::Where: return hull(arg(1), arg(2));
    case Op::Sum: return {double(len) * std::min(arg(0).lo, 0.0), double(len) * std::max(arg(0).hi, 0.0)};
    case Op::Mean:
    case Op::Amax:
    case Op::Amin: return {arg(0).lo, arg(0).hi};
    case Op::Softmax: return {0, 1};
    case Op::LogSoftmax: return {arg(0).lo - arg(0).hi - std::log(double(len)), 0};
    case Op::LayerNorm: return affine(std::sqrt(double(len)), f, n, 1);
    case Op::BatchNorm: return affine(std::sqrt(double(len)), f, n, 3);
    case Op::Matmul: return symmetric(double(len) * arg(0).mag() * arg(1).mag());
    case Op::Addmm: return symmetric(double(len) * arg(1).mag() * arg(2).mag() + arg(0).mag());
    case Op::Conv2d:
      return symmetric(double(len) * arg(0).mag() * arg(1).mag() + (n.args.size() > 2 ? arg(2).mag() : 0));
    case Op::AvgPool2d: return {std::min(arg(0).lo, 0.0), std::max(arg(0).hi, 0.0)};
    case Op::Cat: {
      Facts all = arg(0);
      for (size_t k = 1; k < n.args.size(); ++k) all = hull(all, arg(k));
      return all;
    }
    default: return {arg(0).lo, arg(0).hi};  // views, copies, gather, max pooling, convert
  }
}

// Ops whose result is contiguous when their operand is (and may not be otherwise). A
// conversion keeps a permuted operand's dense layout, as PyTorch's `to` does, so a view
// of it may be invalid (seed 102484).
bool keepsContiguity(Op op) {
  return op == Op::Reshape || op == Op::View || op == Op::Unsqueeze || op == Op::Squeeze ||
         op == Op::Flatten || op == Op::Convert;
}

}  // namespace

int64_t reductionLength(const Program& p, const Node& n) {
  if (n.args.empty()) return 1;
  const Shape& in = p.nodes[size_t(n.args[0])].shape;
  switch (n.op) {
    case Op::Sum:
    case Op::Mean:
    case Op::Amax:
    case Op::Amin: {
      if (n.ints.empty()) return product(in);
      int64_t len = 1;
      for (int64_t d : n.ints) len *= in[size_t(normalize(d, in.size()))];
      return len;
    }
    case Op::Softmax:
    case Op::LogSoftmax: return in[size_t(normalize(n.ints[0], in.size()))];
    case Op::LayerNorm: return product(n.ints);
    case Op::BatchNorm: return product(in) / in[1];
    case Op::Matmul: return in.back();
    case Op::Addmm: return p.nodes[size_t(n.args[1])].shape.back();
    case Op::Conv2d: {
      const Shape& w = p.nodes[size_t(n.args[1])].shape;
      return w[1] * w[2] * w[3];
    }
    case Op::AvgPool2d: return n.ints[0] * n.ints[0];
    default: return 1;
  }
}

Facts infer(const Program& p, const std::vector<Facts>& before, const Node& node) {
  Facts f = bounds(p, before, node);
  f.reduce = reductionLength(p, node);
  f.single = node.dtype == kFloat32;
  double term = 1;  // the magnitude of one term this op adds up, if it reduces
  for (int a : node.args) {
    f.reduce = std::max(f.reduce, before[size_t(a)].reduce);
    f.single = f.single || before[size_t(a)].single;
    f.reducedMag = std::max(f.reducedMag, before[size_t(a)].reducedMag);
    term *= std::max(1.0, before[size_t(a)].mag());
  }
  if (reductionLength(p, node) > 1) f.reducedMag = std::max(f.reducedMag, term);
  const bool view = node.op == Op::Transpose || node.op == Op::Permute || node.op == Op::Slice;
  f.contiguous = !view && (!keepsContiguity(node.op) || before[size_t(node.args[0])].contiguous);
  return f;
}

namespace {

// The bound on the k-th operand's magnitude, or on its lower end, that `op` needs.
bool operandsFit(const Node& n, const std::vector<Facts>& f) {
  auto mag = [&](size_t k) { return f[size_t(n.args[k])].mag(); };
  auto lo = [&](size_t k) { return f[size_t(n.args[k])].lo; };
  switch (n.op) {
    case Op::Log: case Op::Sqrt: case Op::Rsqrt: return lo(0) >= 0.5;
    case Op::Div: return lo(1) >= 0.5 && mag(1) <= 8.5;
    case Op::Exp: return mag(0) <= 4;
    case Op::Sin: case Op::Cos: return mag(0) <= 8;
    case Op::PowScalar: return mag(0) <= 3;
    case Op::Softmax: case Op::LogSoftmax: return mag(0) <= 16;
    case Op::Mul: return mag(0) <= 16 && mag(1) <= 16;
    case Op::Matmul: return mag(0) <= 8 && mag(1) <= 8;
    case Op::Conv2d: return mag(0) <= 8 && mag(1) <= 8;
    case Op::InPlace:  // the target stays in its range (a state's over every call)
      return lo(1) >= lo(0) && f[size_t(n.args[1])].hi <= f[size_t(n.args[0])].hi;
    default: return true;
  }
}

}  // namespace

bool wellConditioned(const Program& program) {
  const Program p = atBatch(program, kLargestBatch);  // reductions over the batch at their longest
  std::vector<Facts> f = analyze(p);
  for (size_t n = 0; n < p.nodes.size(); ++n) {
    if (f[n].mag() > 1e6 || !operandsFit(p.nodes[n], f)) return false;
    // in_place writes a state or a value of its own storage, never an input or a view (a
    // minimizer's cut or replacement can make it one).
    if (p.nodes[n].op == Op::InPlace) {
      const Op target = p.nodes[size_t(p.nodes[n].args[0])].op;
      if (target != Op::State && mayShareStorage(target)) return false;
    }
  }
  return true;
}

std::vector<Facts> analyze(const Program& p) {
  std::vector<Facts> facts;
  for (const Node& n : p.nodes) facts.push_back(infer(p, facts, n));
  // batch_norm in training mode writes its running statistics (state) in place with
  // statistics of its input, so a reader of that state sees the input's reductions and
  // rounding, float32's if the input was float32, even in float64 state (seed 109737:
  // rsqrt of a float64 running mean differed from eager by float32-sized rounding); so
  // does in_place with its value. The state carries those facts, and everything after
  // it is inferred again (a reader in an earlier call sees the write too).
  std::vector<std::optional<Facts>> written(p.nodes.size());
  for (size_t n = 0; n < p.nodes.size(); ++n) {
    for (int k : writtenOperands(p.nodes[n])) {
      std::optional<Facts>& slot = written[size_t(k)];
      Facts& w = slot ? *slot : slot.emplace(facts[size_t(k)]);
      w.single = w.single || facts[n].single;
      w.reduce = std::max(w.reduce, facts[n].reduce);
      w.reducedMag = std::max(w.reducedMag, facts[n].reducedMag);
    }
  }
  if (std::none_of(written.begin(), written.end(), [](const auto& w) { return w.has_value(); }))
    return facts;
  std::vector<Facts> again;
  for (size_t n = 0; n < p.nodes.size(); ++n) {
    Facts f = infer(p, again, p.nodes[n]);
    if (const std::optional<Facts>& w = written[n]) {
      f.single = f.single || w->single;
      f.reduce = std::max(f.reduce, w->reduce);
      f.reducedMag = std::max(f.reducedMag, w->reducedMag);
    }
    again.push_back(f);
  }
  return again;
}

}  // namespace kiln::fuzz
