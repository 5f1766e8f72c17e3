// The HALIDE kernel generator (see HalideKernels.h): a fused kernel's kiln ops as Halide
// Funcs, one pipeline per kernel, compiled by Halide 14 and cached in memory and on disk.
#include "runtime/halide/HalideKernels.h"

#include <Halide.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <numbers>
#include <optional>
#include <set>
#include <sstream>

#include "dialect/KilnOps.h"
#include "frontend/core/cuda/Driver.h"
#include "frontend/core/kernels/VecMath.h"
#include "kiln/core/Error.h"
#include "kiln/core/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OperationSupport.h"
#include "runtime/halide/HalideRuntime.h"

namespace kiln::runtime::halide {

namespace {

namespace mk = mlir::kiln;
using Halide::Expr;
using Halide::Func;
using Halide::Var;

// A kernel the generator does not take, and why (MLIR lowers it then).
struct Declined {
  std::string why;
};

// ---- types ---------------------------------------------------------------------------------

Halide::Type halideType(mlir::Type type) {
  if (type.isF32()) return Halide::Float(32);
  if (type.isF64()) return Halide::Float(64);
  if (type.isF16()) return Halide::Float(16);
  if (type.isBF16()) return Halide::BFloat(16);
  if (type.isInteger(1)) return Halide::Bool();
  if (type.isInteger(32)) return Halide::Int(32);
  if (type.isInteger(64)) return Halide::Int(64);
  std::string text;
  llvm::raw_string_ostream(text) << type;
  throw Declined{"element type " + text};
}

mlir::RankedTensorType tensorType(mlir::Value value) {
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape()) throw Declined{"a value without a static shape"};
  return type;
}

bool isFloat(const Halide::Type& t) { return t.is_float() || t.is_bfloat(); }

// The type the eager kernels compute in: half types as float32 (Elementwise.cpp, mathTypeOf).
Halide::Type mathType(const Halide::Type& t) {
  return t.bits() == 16 && isFloat(t) ? Halide::Float(32) : t;
}

// `value` converted as the eager kernels and kiln→linalg convert (convertScalar): through
// the math types, floats to bool by != 0 (NaN is true), bools to numbers as 0 and 1,
// floats to integers truncated, a narrower float by way of float32 (a double rounding for
// f64 → f16, as there).
Expr convert(Expr value, const Halide::Type& to) {
  const Halide::Type from = value.type();
  if (from == to) return value;
  if (isFloat(from)) value = Halide::cast(mathType(from), value);
  if (to.is_bool()) {
    if (isFloat(from)) return Halide::is_nan(value) || value != Halide::Internal::make_zero(value.type());
    return value != Halide::Internal::make_zero(value.type());
  }
  if (from.is_bool()) value = Halide::select(value, Halide::Internal::make_one(mathType(to)),
                                             Halide::Internal::make_zero(mathType(to)));
  if (to.bits() == 16 && isFloat(to)) {
    // Halide 14 converts a NaN to a 16-bit float as infinity; the quiet NaN's bits instead.
    Expr wide = Halide::cast(Halide::Float(32), value);
    Expr nan = Halide::reinterpret(to, Expr(uint16_t(to.is_bfloat() ? 0x7fc0 : 0x7e00)));
    return Halide::select(Halide::is_nan(wide), nan, Halide::cast(to, wide));
  }
  if (isFloat(to)) return Halide::cast(to, Halide::cast(mathType(to), value));
  return Halide::cast(to, value);
}

// float32 exp and log as the eager kernels compute them (frontend/core/kernels/VecMath.h:
// vexp, vlog, Cephes' polynomials), written as Halide Exprs so they vectorize. Halide 14's own exp and log are other polynomials without the IEEE edges (NaN
// in gave 0, subnormals were flushed), and its tanh, sin and cos call libm one element at a
// time. Halide 14 has no fma, so the fused multiply-adds of the eager code are a multiply
// and an add here: a few ulp apart at most.
Expr float32Bits(uint32_t bits) { return Halide::reinterpret(Halide::Float(32), Expr(bits)); }

Expr vexp(const Expr& x) {
  if (x.type() != Halide::Float(32)) return Halide::exp(x);
  Expr c = Halide::min(Halide::max(x, -110.0f), 89.0f);  // beyond: inf and 0 from the multiply
  c = Halide::select(Halide::is_nan(x), -110.0f, c);
  Expr n = Halide::round(c * 1.44269504088896341f);
  Expr r = c - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  Expr r2 = r * r;
  Expr p = kernels::horner<Expr>(kernels::kExpPolynomial, [&](const Expr& q, float c) { return q * r + c; });
  Expr er = (p * r2 + r) + 1.0f;
  Expr e = Halide::cast<int32_t>(n);
  Expr e1 = e >> 1;
  Expr s1 = Halide::reinterpret(Halide::Float(32), (e1 + 127) << 23);
  Expr s2 = Halide::reinterpret(Halide::Float(32), (e - e1 + 127) << 23);
  return Halide::select(Halide::is_nan(x), x, er * s1 * s2);
}

Expr vlog(const Expr& x) {
  if (x.type() != Halide::Float(32)) return Halide::log(x);
  Expr denormal = Halide::select(x < 1.17549435e-38f && x > 0.0f, 1.0f, 0.0f);
  Expr xn = x * (1.0f + denormal * 8388607.0f);
  Expr bits = Halide::reinterpret(Halide::Int(32), xn);
  Expr e = Halide::cast<float>(((bits >> 23) & 0xff) - 126) - denormal * 23.0f;
  Expr m = Halide::reinterpret(Halide::Float(32), (bits & 0x007fffff) | 0x3f000000);
  Expr small = Halide::select(m < 0.707106781186547524f, 1.0f, 0.0f);
  Expr ef = e - small;
  m = m + small * m - 1.0f;
  Expr z = m * m;
  Expr p = kernels::horner<Expr>(kernels::kLogPolynomial, [&](const Expr& q, float c) { return q * m + c; });
  Expr y = p * m * z;
  y = y + ef * -2.12194440e-4f;
  y = y - 0.5f * z;
  Expr result = m + y + ef * 0.693359375f;
  result = Halide::select(x == 0.0f, float32Bits(0xff800000), result);
  result = Halide::select(x < 0.0f, float32Bits(0x7fc00000), result);
  result = Halide::select(x == float32Bits(0x7f800000), x, result);
  return Halide::select(Halide::is_nan(x), x, result);
}

// tanh as the MLIR backend computes it (upstream MLIR's polynomial approximation, after
// Eigen): an odd rational function of x clamped to ±7.9988, and x itself below 0.0004.
// Cheaper than vtanh's exp and division on both branches, and within a few ulp of it.
Expr vtanh(const Expr& x) {
  if (x.type() != Halide::Float(32)) return Halide::tanh(x);
  Expr c = Halide::clamp(x, -7.99881172180175781f, 7.99881172180175781f);
  Expr x2 = c * c;
  Expr p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
  p = x2 * p + -8.60467152213735e-11f;
  p = x2 * p + 5.12229709037114e-08f;
  p = x2 * p + 1.48572235717979e-05f;
  p = x2 * p + 6.37261928875436e-04f;
  p = x2 * p + 4.89352455891786e-03f;
  p = c * p;
  Expr q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
  q = x2 * q + 2.26843463243900e-03f;
  q = x2 * q + 4.89352518554385e-03f;
  Expr value = Halide::select(Halide::abs(x) < 0.0004f, x, p / q);
  // Saturated exactly, as upstream's fused multiply-adds round it at the clamp: ±1 - tanh(x)
  // must be 0 there (gelu's tanh form multiplies it by x, which may be infinite).
  value = Halide::select(Halide::abs(x) >= 7.99881172180175781f,
                         Halide::select(x < 0.0f, -1.0f, 1.0f), value);
  return Halide::select(Halide::is_nan(x), x, value);
}

// `approximation` (an Expr of a Func's values, so holding no division of the user's) with its
// float32 divisions as PTX's div.approx.f32, as kiln-gpu-pipeline has MLIR's approximations
// divide (kiln-approximate-math's approximate-division): for the CUDA schedule. The IEEE
// division is div.rn.f32, a long instruction sequence; with tanh's p / q an IEEE division,
// the traced gelu chain under HALIDE ran at 0.40-0.43 of an H200's copy bandwidth.
// div.approx.f32 is within 2 ulp of the quotient for divisors in [2^-126, 2^126] (PTX ISA),
// where these stay: tanh's q in [0.0049, 0.95] (its coefficients are positive) and Halide 14's
// erf's P(x)^16 in [1, 2.8e24] (P(x) >= 1 on its argument, clamped to 8). Through LLVM's NVVM
// intrinsic: Halide 14's fast_inverse is rcp.rn.ftz.f32 on PTX, a correctly rounded reciprocal.
Expr withApproximateDivisions(const Expr& approximation) {
  struct Approximate : Halide::Internal::IRMutator {
    using IRMutator::visit;
    Expr visit(const Halide::Internal::Div* op) override {
      if (op->type != Halide::Float(32)) return IRMutator::visit(op);
      return Halide::Internal::Call::make(Halide::Float(32), "llvm.nvvm.div.approx.f", {mutate(op->a), mutate(op->b)},
                                          Halide::Internal::Call::PureExtern);
    }
  };
  return Approximate().mutate(approximation);
}

// ---- the kernel as Funcs ------------------------------------------------------------------

// Vars for kiln dims 0, 1, ... (row-major); Halide's first dimension is the innermost, so a
// kiln index (i0, ..., in-1) is Halide's (in-1, ..., i0).
const std::vector<Var>& kilnVars() {
  static const std::vector<Var> vars = [] {
    std::vector<Var> v;
    for (int d = 0; d < 16; ++d) v.emplace_back("d" + std::to_string(d));
    return v;
  }();
  return vars;
}

std::vector<Expr> reversed(std::vector<Expr> index) {
  std::reverse(index.begin(), index.end());
  return index;
}

std::vector<Expr> varsOf(int64_t rank) {
  if (rank > int64_t(kilnVars().size())) throw Declined{"rank above 16"};
  return std::vector<Expr>(kilnVars().begin(), kilnVars().begin() + rank);
}

Expr at(const Func& f, const std::vector<Expr>& index) { return f(reversed(index)); }

void define(Func& f, int64_t rank, const Expr& value) {
  std::vector<Halide::Var> args(kilnVars().begin(), kilnVars().begin() + rank);
  std::reverse(args.begin(), args.end());
  f(args) = value;
}

Expr constant(const Halide::Type& type, double value) {
  return Halide::Internal::make_const(type, value);
}

// Floats as the eager kernels: a NaN operand is the result (the first one), else
// better(a, b) ? a : b (Elementwise.cpp, extremum).
Expr extremum(const Expr& a, const Expr& b, bool max) {
  if (!isFloat(a.type())) return max ? Halide::max(a, b) : Halide::min(a, b);
  Expr best = Halide::select(max ? a > b : a < b, a, b);
  return Halide::select(Halide::is_nan(a), a, Halide::select(Halide::is_nan(b), b, best));
}

// `approximateDivision`: the approximations' own divisions (tanh's, gelu's erf's) are
// approximate (withApproximateDivisions). Sigmoid's and rsqrt's are their formulas', IEEE as
// MLIR keeps them.
Expr unary(mlir::Operation* op, Expr x, bool approximateDivision) {
  const bool f = isFloat(x.type());
  auto approximation = [&](const Expr& e) { return approximateDivision ? withApproximateDivisions(e) : e; };
  auto floats = [&](auto formula) -> Expr {
    if (!f) throw Declined{op->getName().getStringRef().str() + " on integers"};
    return formula();
  };
  if (llvm::isa<mk::NegOp>(op)) return f ? -x : constant(x.type(), 0) - x;
  if (llvm::isa<mk::AbsOp>(op)) return f ? Halide::abs(x) : Halide::select(x < 0, -x, x);
  if (llvm::isa<mk::ReluOp>(op)) {
    Expr zero = constant(x.type(), 0);
    if (!f) return Halide::max(x, zero);
    return Halide::select(x > zero || Halide::is_nan(x), x, zero);  // NaN stays NaN
  }
  if (llvm::isa<mk::NotOp>(op)) {
    if (f) throw Declined{"kiln.not on floats"};
    return x.type().is_bool() ? !x : ~x;
  }
  if (llvm::isa<mk::ExpOp>(op)) return floats([&] { return vexp(x); });
  if (llvm::isa<mk::LogOp>(op)) return floats([&] { return vlog(x); });
  if (llvm::isa<mk::SqrtOp>(op)) return floats([&] { return Halide::sqrt(x); });
  if (llvm::isa<mk::RsqrtOp>(op))
    return floats([&] { return constant(x.type(), 1) / Halide::sqrt(x); });
  if (llvm::isa<mk::TanhOp>(op)) return floats([&] { return approximation(vtanh(x)); });
  if (llvm::isa<mk::SinOp>(op)) return floats([&] { return Halide::sin(x); });
  if (llvm::isa<mk::CosOp>(op)) return floats([&] { return Halide::cos(x); });
  if (llvm::isa<mk::FloorOp>(op)) return floats([&] { return Halide::floor(x); });
  if (llvm::isa<mk::SigmoidOp>(op))
    return floats([&] { return constant(x.type(), 1) / (constant(x.type(), 1) + vexp(-x)); });
  if (llvm::isa<mk::GeluOp>(op)) {
    // (0.5 x)(1 + erf(x sqrt(2)/2)); Halide's erf takes float32 only and is NaN beyond
    // about ±10, where erf is ±1 in float32 from ±4 on.
    if (x.type() != Halide::Float(32)) throw Declined{"kiln.gelu on other than f32 math"};
    return (constant(x.type(), 0.5) * x) *
           (constant(x.type(), 1) +
            approximation(Halide::erf(Halide::clamp(x * constant(x.type(), std::numbers::sqrt2 / 2), -8.0f, 8.0f))));
  }
  throw Declined{"op " + op->getName().getStringRef().str()};
}

Expr binary(mlir::Operation* op, Expr a, Expr b) {
  const bool f = isFloat(a.type());
  if (llvm::isa<mk::AddOp>(op)) return a + b;
  if (llvm::isa<mk::SubOp>(op)) return a - b;
  if (llvm::isa<mk::MulOp>(op)) return a * b;
  if (llvm::isa<mk::DivOp>(op)) {
    if (f) return a / b;
    // Integer division truncates toward zero; Halide's rounds toward -inf. By zero:
    // undefined in the eager kernel too.
    return Halide::div_round_to_zero(a, b);
  }
  if (llvm::isa<mk::PowOp>(op)) {
    if (!f) throw Declined{"kiln.pow on integers"};
    return Halide::pow(a, b);
  }
  if (llvm::isa<mk::MaxOp>(op)) return extremum(a, b, /*max=*/true);
  if (llvm::isa<mk::MinOp>(op)) return extremum(a, b, /*max=*/false);
  if (llvm::isa<mk::AndOp>(op)) {
    if (f) throw Declined{"kiln.and on floats"};
    return a.type().is_bool() ? (a && b) : (a & b);
  }
  if (llvm::isa<mk::OrOp>(op)) {
    if (f) throw Declined{"kiln.or on floats"};
    return a.type().is_bool() ? (a || b) : (a | b);
  }
  throw Declined{"op " + op->getName().getStringRef().str()};
}

// Floats compare ordered, `ne` unordered (true for NaN); integers signed, bools as 0 < 1.
Expr compare(mk::CompareOp op, Expr a, Expr b) {
  if (a.type().is_bool()) {
    a = Halide::cast(Halide::UInt(8), a);
    b = Halide::cast(Halide::UInt(8), b);
  }
  // Halide's simplifier takes x == x as true whatever x is, so floats say "ordered" aloud.
  const Expr ordered = isFloat(a.type()) ? !Halide::is_nan(a) && !Halide::is_nan(b)
                                         : Halide::cast(Halide::Bool(), Expr(true));
  switch (op.getDirection()) {
    case mk::CompareDirection::eq: return ordered && a == b;
    case mk::CompareDirection::ne: return !ordered || a != b;
    case mk::CompareDirection::lt: return ordered && a < b;
    case mk::CompareDirection::le: return ordered && a <= b;
    case mk::CompareDirection::gt: return ordered && a > b;
    case mk::CompareDirection::ge: return ordered && a >= b;
  }
  throw Declined{"a compare direction"};
}

// Where a reduction's accumulator is computed: per row of its one consumer output (a row
// reduction of softmax or layer_norm) or once, before every consumer (compute_root).
struct Reduction {
  Func acc;
  bool row = false;            // its kept dims are the leading dims of the kernel's only result
  std::vector<int64_t> shape;  // the accumulator's (the reduction result's) shape
  bool outerKept = false;      // its outermost loop is input dim 0, which it keeps
  int64_t firstReduced = 0;    // the first reduced dim (a row reduction's rows are dims before it)
  // For the CUDA schedule's split of a row among a block's threads: the RDom (r.x walks the
  // last reduced dim; for pairs, r.x the 16 lanes and r.y the blocks of 32), whether the
  // reduction reads contiguous memory, and the last reduced dim's extent.
  std::optional<Halide::RDom> domain;
  bool pairs = false;
  bool contiguous = false;
  int64_t innerExtent = 0;
  // The reduced operand, when a transcendental op computes it and the kernel reads it
  // elsewhere too (softmax's exp): computed once per row beside the row reduction.
  std::optional<Func> sharedOperand;
};

// Which schedule the Funcs get: the hand schedule for the CPU (the default), none (an
// autoscheduler places them), or the GPU schedule for Halide's CUDA target.
enum class Schedule { CpuHand, CpuAuto, Cuda };

// Threads per block of the CUDA schedule.
constexpr int kCudaThreads = 256;

class Translator {
 public:
  // The Funcs are the same whatever `mode`; only where and how they are computed differs.
  // CpuHand and Cuda schedule in schedule() (and the CPU reductions' lanes in reduce());
  // CpuAuto leaves every Func unscheduled for an autoscheduler.
  Translator(mlir::func::FuncOp kernel, Schedule mode) : kernel_(kernel), mode_(mode) {}

  // The pipeline's inputs and outputs; throws Declined.
  void translate() {
    if (kernel_.getNumResults() == 0) throw Declined{"a kernel without results"};
    for (mlir::BlockArgument arg : kernel_.getArguments()) {
      auto type = tensorType(arg);
      Halide::ImageParam param(halideType(type.getElementType()), int(type.getRank()),
                               "in" + std::to_string(arg.getArgNumber()));
      inputs_.push_back(param);
      Func f("arg" + std::to_string(arg.getArgNumber()));
      define(f, type.getRank(), at(param, varsOf(type.getRank())));
      values_[arg] = f;
    }
    for (mlir::Operation& op : kernel_.getBody().front()) {
      if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
        // Results of one shape are one Func of a Tuple, computed in one loop nest; results
        // of different shapes are separate loop nests. A kernel of several results is not
        // taken when one is written over an operand (kSeveralResultsInPlace): Halide takes
        // buffers not to alias, so it may read the operand after storing over it.
        std::vector<std::vector<Expr>> values;
        for (mlir::Value v : ret.getOperands()) {
          auto type = tensorType(v);
          std::vector<int64_t> shape = type.getShape().vec();
          auto group = std::find(outputShapes_.begin(), outputShapes_.end(), shape);
          if (group == outputShapes_.end()) {
            outputShapes_.push_back(shape);
            values.emplace_back();
            group = outputShapes_.end() - 1;
          }
          const size_t g = size_t(group - outputShapes_.begin());
          resultSlots_.push_back({g, values[g].size()});
          values[g].push_back(at(value(v), varsOf(type.getRank())));
        }
        for (size_t g = 0; g < values.size(); ++g) {
          Func out("out" + std::to_string(g));
          const int64_t rank = int64_t(outputShapes_[g].size());
          if (values[g].size() == 1) define(out, rank, values[g][0]);
          else {
            std::vector<Halide::Var> args(kilnVars().begin(), kilnVars().begin() + rank);
            std::reverse(args.begin(), args.end());
            out(args) = Halide::Tuple(values[g]);
          }
          outputs_.push_back(out);
        }
        continue;
      }
      values_[op.getResult(0)] = translate(&op);
    }
  }

  void schedule() {
    if (mode_ == Schedule::Cuda) return scheduleCuda();
    if (mode_ != Schedule::CpuHand) return;
    const int threads = std::max(1, kiln::get_num_threads());
    for (size_t g = 0; g < outputs_.size(); ++g) scheduleElementwise(outputs_[g], outputShapes_[g], threads);
    std::set<std::string> sharedScheduled;
    for (Reduction& r : reductions_) {
      if (r.row && outputs_.size() == 1 && !outputShapes_[0].empty()) {
        // Each row's statistics beside the row's elements: the input is read from memory
        // once (kiln-tile-rows' tiles in the MLIR backend).
        r.acc.compute_at(outputs_[0], kilnVars()[0]);
        scheduled_ += "row-reduction ";
        if (r.sharedOperand && sharedScheduled.insert(r.sharedOperand->name()).second) {
          Func& operand = *r.sharedOperand;
          operand.compute_at(outputs_[0], kilnVars()[0]);
          const int width = vectorWidth(operand.output_types()[0], r.innerExtent);
          if (r.innerExtent >= width)  // the last reduced dim is the operand's innermost
            operand.vectorize(kilnVars()[size_t(operand.dimensions() - 1)], width, Halide::TailStrategy::GuardWithIf);
          scheduled_ += "row-operand ";
        }
      } else {
        r.acc.compute_root();
        // Independent accumulators split over the pool by their outermost dim.
        int64_t outputs = 1;
        for (int64_t d : r.shape) outputs *= d;
        if (r.outerKept && r.shape.front() >= threads && outputs >= 64 && threads > 1) {
          r.acc.parallel(kilnVars()[0]);
          r.acc.update().parallel(kilnVars()[0]);
          scheduled_ += "parallel-";
        }
        scheduled_ += "root-reduction ";
      }
    }
  }

  std::vector<Halide::ImageParam>& inputs() { return inputs_; }
  std::vector<Func>& outputs() { return outputs_; }
  // Per kernel result: its output Func and its element of that Func's Tuple.
  const std::vector<std::pair<size_t, size_t>>& resultSlots() const { return resultSlots_; }
  const std::vector<std::vector<int64_t>>& outputShapes() const { return outputShapes_; }
  const std::string& scheduled() const { return scheduled_; }

 private:
  Func value(mlir::Value v) {
    auto it = values_.find(v);
    if (it == values_.end()) throw Declined{"a value defined outside the kernel"};
    return it->second;
  }

  Func translate(mlir::Operation* op) {
    if (op->getNumResults() != 1) throw Declined{"op " + op->getName().getStringRef().str()};
    auto type = tensorType(op->getResult(0));
    const int64_t rank = type.getRank();
    const std::vector<Expr> index = varsOf(rank);
    const Halide::Type result = halideType(type.getElementType());
    Func f(op->getName().getStringRef().str().substr(5) + std::to_string(counter_++));
    if (auto c = llvm::dyn_cast<mk::ConstantOp>(op)) {
      define(f, rank, splat(c, result));
    } else if (auto b = llvm::dyn_cast<mk::BroadcastInDimOp>(op)) {
      auto operand = tensorType(b.getX());
      std::vector<Expr> from;
      for (int64_t j = 0; j < operand.getRank(); ++j) {
        const int64_t d = b.getDims()[j];
        from.push_back(operand.getDimSize(j) == 1 && type.getDimSize(d) != 1 ? Expr(0) : index[d]);
      }
      define(f, rank, at(value(b.getX()), from));
    } else if (auto t = llvm::dyn_cast<mk::TransposeOp>(op)) {
      std::vector<Expr> from(rank);
      for (int64_t k = 0; k < rank; ++k) from[t.getPermutation()[k]] = index[k];
      define(f, rank, at(value(t.getX()), from));
    } else if (auto c = llvm::dyn_cast<mk::ConvertOp>(op)) {
      define(f, rank, convert(at(value(c.getX()), index), result));
    } else if (auto r = llvm::dyn_cast<mk::ReduceOp>(op)) {
      return reduce(r, type);
    } else {
      // Elementwise: operands in their math type, the result rounded to its element type.
      std::vector<Expr> x;
      for (mlir::Value operand : op->getOperands()) {
        Expr e = at(value(operand), index);
        x.push_back(convert(e, mathType(e.type())));
      }
      Expr e;
      if (auto s = llvm::dyn_cast<mk::SelectOp>(op)) e = Halide::select(x[0], x[1], x[2]);
      else if (auto c = llvm::dyn_cast<mk::CompareOp>(op)) e = compare(c, x[0], x[1]);
      else if (x.size() == 1) e = unary(op, x[0], /*approximateDivision=*/mode_ == Schedule::Cuda);
      else if (x.size() == 2) e = binary(op, x[0], x[1]);
      else throw Declined{"op " + op->getName().getStringRef().str()};
      define(f, rank, convert(e, result));
    }
    return f;
  }

  static Expr splat(mk::ConstantOp op, const Halide::Type& type) {
    auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(op.getValue());
    if (!dense || !dense.isSplat()) throw Declined{"a constant that is not a splat"};
    mlir::Type element = dense.getElementType();
    if (llvm::isa<mlir::FloatType>(element)) {
      // The constant's own bits, widened exactly to double, then rounded to its type.
      return constant(type, dense.getSplatValue<llvm::APFloat>().convertToDouble());
    }
    if (element.isInteger(1)) return Halide::cast(Halide::Bool(), Expr(dense.getSplatValue<bool>()));
    // Integers exactly: a double holds only 53 bits of an int64.
    return Halide::Internal::make_const(type, dense.getSplatValue<llvm::APInt>().getSExtValue());
  }

  // Floats sum and multiply in f64 and round once, as the eager kernels; a float32 sum or
  // mean of more than 16 elements first adds them in float32 pairs as they do (element
  // 32k + l with 32k + 16 + l, l < 16, counted in the order of the reduced dims; an element
  // whose partner is past the end alone: Reduce.h's PairFold). Max and min keep the first
  // NaN; integers wrap in their own width.
  Func reduce(mk::ReduceOp op, mlir::RankedTensorType type) {
    auto input = tensorType(op.getX());
    const int64_t rank = input.getRank();
    std::vector<int64_t> dims(op.getDims().begin(), op.getDims().end());
    std::sort(dims.begin(), dims.end());
    const bool keep = op.getKeepDims();
    int64_t count = 1;
    for (int64_t d : dims) count *= input.getDimSize(d);
    const Func x = value(op.getX());
    const Halide::Type elementType = halideType(input.getElementType());
    const Halide::Type result = halideType(type.getElementType());
    const mk::ReduceKind kind = op.getKind();
    const bool extremumKind = kind == mk::ReduceKind::max || kind == mk::ReduceKind::min;
    const Halide::Type acc =
        isFloat(elementType) && !extremumKind ? Halide::Float(64) : mathType(elementType);
    const bool pairs = elementType == Halide::Float(32) && !extremumKind &&
                       kind != mk::ReduceKind::prod && count > 16;

    // The input index of reduced element `i` (flattened over the reduced dims, row-major),
    // the kept dims at the result's vars.
    const std::vector<Expr> out = varsOf(type.getRank());
    auto inputIndex = [&](const std::vector<Expr>& reducedIndex) {
      std::vector<Expr> from;
      int64_t kept = 0, reduced = 0;
      for (int64_t d = 0; d < rank; ++d) {
        if (std::binary_search(dims.begin(), dims.end(), d)) {
          from.push_back(reducedIndex[size_t(reduced++)]);
          if (keep) ++kept;
        } else {
          from.push_back(out[size_t(kept++)]);
        }
      }
      return from;
    };
    auto unflatten = [&](const Expr& i) {
      std::vector<Expr> index(dims.size());
      int64_t stride = 1;
      for (int64_t j = int64_t(dims.size()) - 1; j >= 0; --j) {
        const int64_t size = input.getDimSize(dims[size_t(j)]);
        index[size_t(j)] = dims.size() == 1 ? i : (i / int(stride)) % int(size);
        stride *= size;
      }
      return index;
    };

    // Loops, the innermost first, each with the input dim it walks (the RVars of the pairs:
    // l inside k, at the last reduced dim), so reads are unit-stride where the input allows;
    // keep_dims' unit dims outermost.
    std::vector<std::pair<double, Halide::VarOrRVar>> loops;
    std::vector<Halide::VarOrRVar> units;
    Expr element;
    std::optional<Halide::RDom> domain;
    if (pairs) {
      const int64_t blocks = (count + 31) / 32;
      Halide::RDom r(0, 16, 0, int(blocks));  // r.x = l, r.y = k
      Expr i = r.y * 32 + r.x;
      r.where(i < int(count));
      // Bounds inference ignores where(): the loads stay inside the input by clamping.
      Expr partner = Halide::min(i + 16, int(count - 1));
      Expr first = at(x, inputIndex(unflatten(Halide::min(i, int(count - 1)))));
      Expr second = at(x, inputIndex(unflatten(partner)));
      element = Halide::select(i + 16 < int(count), Halide::cast<double>(first + second),
                               Halide::cast<double>(first));
      loops.emplace_back(double(dims.back()), r.x);
      loops.emplace_back(double(dims.back()) - 0.5, r.y);
      domain = r;
    } else if (dims.empty()) {
      // Over no dims: each element alone, through the accumulator type.
      Func f("reduced" + std::to_string(counter_++));
      Expr one = convert(convert(at(x, inputIndex({})), acc), result);
      define(f, type.getRank(), one);
      return f;
    } else {
      // r.x walks the last reduced dim: the RDom's own order is memory order, so no RVar
      // is reordered (Halide refuses that for max and min, whose NaN rule it cannot prove
      // associative).
      std::vector<Halide::Range> extents;
      for (auto d = dims.rbegin(); d != dims.rend(); ++d) extents.emplace_back(0, int(input.getDimSize(*d)));
      Halide::RDom r(extents);
      std::vector<Expr> reducedIndex(dims.size());
      for (size_t j = 0; j < dims.size(); ++j) {
        const size_t slot = dims.size() - 1 - j;
        reducedIndex[slot] = r[int(j)];
        loops.emplace_back(double(dims[slot]), r[int(j)]);
      }
      element = convert(at(x, inputIndex(reducedIndex)), acc);
      domain = r;
    }
    for (int64_t d = 0, k = 0; d < rank; ++d) {
      if (std::binary_search(dims.begin(), dims.end(), d)) {
        if (keep) units.emplace_back(kilnVars()[size_t(k++)]);
      } else {
        loops.emplace_back(double(d), kilnVars()[size_t(k++)]);
      }
    }

    std::stable_sort(loops.begin(), loops.end(), [](auto& p, auto& q) { return p.first > q.first; });
    std::vector<Halide::VarOrRVar> order;
    for (auto& [d, loop] : loops) order.push_back(loop);
    order.insert(order.end(), units.begin(), units.end());
    const bool contiguous = dims.back() == rank - 1;
    const bool outerKept = !std::binary_search(dims.begin(), dims.end(), int64_t(0));
    std::vector<int64_t> keptShape(type.getShape().begin(), type.getShape().end());
    const std::vector<Expr> lhs = reversed(out);
    // One accumulator: `combine(current, element)` from `neutral`, scheduled to vectorize:
    // over the reduced elements (16 lanes of partial results, rfactor, then combined) where
    // the reduction reads contiguous memory, else over the innermost kept dim.
    auto accumulator = [&](const Expr& neutral, const Expr& value,
                           const std::function<Expr(Expr, Expr)>& combine) {
      Func a("reduce" + std::to_string(counter_++));
      define(a, type.getRank(), neutral);
      a(lhs) = combine(a(lhs), value);
      const int lanes = neutral.type().bits() == 64 ? 8 : 16;
      Halide::RDom& r = *domain;
      if (mode_ != Schedule::CpuHand) {
        // An autoscheduler places it (rfactor and reorder are schedules of its own), or the
        // CUDA schedule does (scheduleCuda).
      } else if (contiguous && (pairs || input.getDimSize(dims.back()) >= 2 * lanes)) {
        Var u("lane" + std::to_string(counter_++));
        Func partial;
        if (pairs) {
          partial = a.update().rfactor(r.x, u);  // r.x is l: the eager kernels' 16 lanes
        } else {
          Halide::RVar outer("outer"), inner("inner");
          a.update().split(r.x, outer, inner, lanes, Halide::TailStrategy::GuardWithIf);
          partial = a.update().rfactor(inner, u);
        }
        partial.compute_at(a, Var::outermost()).vectorize(u, pairs ? 16 : lanes);
        partial.update().vectorize(u, pairs ? 16 : lanes);
        scheduled_ += "vector-lanes ";
      } else {
        a.update().reorder(order);
        if (!contiguous && !keptShape.empty() && keptShape.back() >= lanes) {
          a.update().vectorize(kilnVars()[keptShape.size() - 1], lanes, Halide::TailStrategy::GuardWithIf);
          scheduled_ += "vector-columns ";
        }
      }
      reductions_.push_back({a, isRowReduction(dims, rank, keep), keptShape, outerKept, dims.front(), *domain,
                             pairs, contiguous, input.getDimSize(dims.back()), sharedOperand(op)});
      return a;
    };
    const double inf = std::numeric_limits<double>::infinity();
    Expr total;
    switch (kind) {
      case mk::ReduceKind::sum:
      case mk::ReduceKind::mean:
        total = at(accumulator(constant(acc, 0), element, [](Expr c, Expr e) { return c + e; }), out);
        break;
      case mk::ReduceKind::prod:
        total = at(accumulator(constant(acc, 1), element, [](Expr c, Expr e) { return c * e; }), out);
        break;
      case mk::ReduceKind::max:
      case mk::ReduceKind::min: {
        const bool max = kind == mk::ReduceKind::max;
        auto extreme = [max](Expr c, Expr e) { return max ? Halide::max(c, e) : Halide::min(c, e); };
        if (!isFloat(acc)) {
          total = at(accumulator(max ? acc.min() : acc.max(), element, extreme), out);
          break;
        }
        // A NaN anywhere is the result (the eager kernels keep the first NaN they meet);
        // counted apart, so both accumulators are plain max/min that Halide can split into
        // lanes.
        // On CUDA both are 8 bytes wide (an f32 extreme is exact in f64): a row's statistics
        // share one shared-memory allocation, which Halide 14 sizes too small by a slot
        // when narrower ones follow wider ones (scheduleCuda).
        const bool wide = mode_ == Schedule::Cuda;
        const Halide::Type extremeType = wide ? Halide::Float(64) : acc;
        const Halide::Type count = wide ? Halide::Int(64) : Halide::UInt(8);
        Expr best = at(accumulator(constant(extremeType, max ? -inf : inf), Halide::cast(extremeType, element), extreme), out);
        if (wide) best = Halide::cast(acc, best);
        Expr nan = at(accumulator(Halide::cast(count, 0), Halide::cast(count, Halide::select(Halide::is_nan(element), 1, 0)),
                                  [](Expr c, Expr e) { return Halide::max(c, e); }),
                      out);
        Expr quietNaN = acc.bits() == 64
                            ? Halide::reinterpret(acc, Expr(uint64_t(0x7ff8000000000000ull)))
                            : float32Bits(0x7fc00000);
        total = Halide::select(nan > 0, quietNaN, best);
        break;
      }
    }
    Func f("reduced" + std::to_string(counter_++));
    if (kind == mk::ReduceKind::mean) total = total / constant(acc, double(count));
    define(f, type.getRank(), convert(total, result));
    return f;
  }

  std::optional<Func> sharedOperand(mk::ReduceOp op) {
    mlir::Operation* def = op.getX().getDefiningOp();
    if (!def || op.getX().hasOneUse() ||
        !llvm::isa<mk::ExpOp, mk::LogOp, mk::TanhOp, mk::SigmoidOp, mk::GeluOp, mk::SinOp, mk::CosOp>(def))
      return std::nullopt;
    return value(op.getX());
  }

  // Whether the reduced dims are the trailing dims [k, rank), k >= 1, with keep_dims: the
  // result indexes like the rows of an input-shaped output (kiln-fuse's row reductions).
  static bool isRowReduction(const std::vector<int64_t>& dims, int64_t rank, bool keep) {
    if (!keep || dims.empty() || dims.front() < 1) return false;
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] != dims.front() + int64_t(i)) return false;
    return dims.back() == rank - 1;
  }

  // The GPU schedule (Halide's CUDA target). Without a row reduction, each output a 1-D grid
  // of blocks of kCudaThreads threads, one thread per element of its dims fused into one;
  // root reductions likewise, one thread per kept element walking its RDom. With row
  // reductions (softmax, layer_norm: the kernel's only output), one block per row (the
  // output's leading dims before the first reduced dim, fused): the row's statistics are
  // computed at the block (in shared memory; by one thread, each RDom serial) and then the
  // block's threads stride over the row's elements. Rank 0: one thread.
  void scheduleCuda() {
    // Row blocks: the fewest leading output dims that make every row reduction of the
    // output's rank one value per block.
    int64_t rowDims = 0;
    auto blockRow = [&](const Reduction& r) {
      return outputs_.size() == 1 && r.row && r.shape.size() == outputShapes_[0].size();
    };
    for (const Reduction& r : reductions_)
      if (blockRow(r)) rowDims = rowDims == 0 ? r.firstReduced : std::min(rowDims, r.firstReduced);
    // A row's statistics (one value each) share one allocation in the block's shared memory.
    // Halide 14 lays them out widest first, each at an offset rounded up to the widest type,
    // but sizes the allocation by their bytes summed: two values narrower than the widest
    // overrun it by a slot, and its simplifier then deletes whatever reads the last one (the
    // output's store among them: every float32 softmax wrote nothing on the first GPU run).
    // So row blocks only where the statistics are one width (max and min are computed 8
    // bytes wide on CUDA, as float32 pair sums are); else each statistic at the root.
    if (rowDims > 0) {
      std::set<int> widths;
      for (const Reduction& r : reductions_)
        if (blockRow(r))
          for (const Halide::Type& t : r.acc.output_types()) widths.insert(t.bytes());
      if (widths.size() > 1) {
        rowDims = 0;
        scheduled_ += "(statistics of mixed widths: no row blocks) ";
      }
    }
    for (size_t g = 0; g < outputs_.size(); ++g) {
      Halide::Stage f = outputs_[g];
      const int64_t rank = int64_t(outputShapes_[g].size());
      if (rowDims > 0) {
        Var row = fuseDims(f, 0, rowDims, "row");
        Var inner = fuseDims(f, rowDims, rank, "inner");
        Var strided("strided"), lane("lane");
        // Thread `lane` takes elements lane, lane + 256, ...: each step reads adjacent ones.
        f.split(inner, strided, lane, kCudaThreads, Halide::TailStrategy::GuardWithIf)
            .reorder(strided, lane, row)
            .gpu_blocks(row)
            .gpu_threads(lane);
        scheduled_ += "cuda-row-blocks ";
      } else {
        threadPerElement(f, rank);
        scheduled_ += "cuda-elementwise ";
      }
    }
    for (Reduction& r : reductions_) {
      if (rowDims > 0 && blockRow(r)) {
        const Var row("row");
        r.acc.compute_at(outputs_[0], row);
        scheduled_ += "cuda-row-reduction";
        // Over contiguous memory, the row is split among the block's threads (rfactor): a
        // partial result per thread in shared memory, walking the row by the block's width
        // (adjacent threads read adjacent elements), then one thread combines the partials.
        if (r.contiguous && r.domain && (r.pairs || r.innerExtent >= 64)) {
          Halide::Stage update = r.acc.update();
          const std::string n = std::to_string(counter_++);
          Var u("t" + n), v("w" + n);
          Func partial;
          if (r.pairs) {
            // r.x: the 16 lanes of the eager pair rule; 16 blocks of 32 at once beside them:
            // 256 partials, fused into one thread dim (x, beside the output's 256 lanes; on
            // x and y they made blocks of 256 x 16 threads, which CUDA refuses).
            Halide::RVar outer("outer" + n), inner("inner" + n);
            update.split(r.domain->y, outer, inner, 16, Halide::TailStrategy::GuardWithIf);
            partial = update.rfactor({{r.domain->x, u}, {inner, v}});
            Var uv("tw" + n);
            partial.compute_at(outputs_[0], row).fuse(u, v, uv).gpu_threads(uv);
            partial.update().fuse(u, v, uv).gpu_threads(uv);
          } else {
            const int width = r.innerExtent >= 1024 ? kCudaThreads : 32;
            Halide::RVar outer("outer" + n), inner("inner" + n);
            update.split(r.domain->x, outer, inner, width, Halide::TailStrategy::GuardWithIf);
            partial = update.rfactor(inner, u);
            partial.compute_at(outputs_[0], row).gpu_threads(u);
            partial.update().gpu_threads(u);
          }
          scheduled_ += "-threads";
        }
        scheduled_ += " ";
        continue;
      }
      r.acc.compute_root();
      threadPerElement(r.acc, int64_t(r.shape.size()));
      threadPerElement(r.acc.update(), int64_t(r.shape.size()));
      scheduled_ += "cuda-root-reduction ";
    }
  }

  // One GPU thread per element of `f`'s `rank` dims (fused into one, in blocks of
  // kCudaThreads); a single thread at rank 0.
  static void threadPerElement(Halide::Stage f, int64_t rank) {
    if (rank == 0) {
      f.gpu_single_thread();
      return;
    }
    Var all = fuseDims(f, 0, rank, "all"), block("block"), thread("thread");
    f.split(all, block, thread, kCudaThreads, Halide::TailStrategy::GuardWithIf)
        .gpu_blocks(block)
        .gpu_threads(thread);
  }

  // Kiln dims [first, last) of stage `f`, first < last, fused into one Var named `name`.
  static Var fuseDims(Halide::Stage& f, int64_t first, int64_t last, const std::string& name) {
    Var fused(name);
    std::vector<Var> dims(kilnVars().begin() + first, kilnVars().begin() + last);
    if (dims.size() == 1) {
      f.rename(dims[0], fused);
      return fused;
    }
    // Halide's fuse(inner, outer, fused): kiln's last dim is the innermost.
    Var inner = dims.back();
    for (int64_t k = int64_t(dims.size()) - 2; k >= 0; --k) {
      Var next = k == 0 ? fused : Var(name + "_" + std::to_string(k));
      f.fuse(inner, dims[size_t(k)], next);
      inner = next;
    }
    return fused;
  }

  // Eight AVX-512 vectors per iteration where the row holds them (16 lanes of f32, 8 of
  // f64, each), as independent chains the core can overlap: the polynomials of exp and
  // tanh are long chains of dependent multiplies and adds (no fma under StrictFloat), and
  // at one vector per iteration the core waited on their latency. bench/traced's mixed
  // chain: 1.91x MLIR at one vector, about 1.1x at eight (docs/BACKENDS.md).
  static int vectorWidth(const Halide::Type& type, int64_t row) {
    const int lanes = type.bits() <= 32 ? 16 : 8;
    return row >= 8 * lanes ? 8 * lanes : lanes;
  }

  void scheduleElementwise(Func& f, const std::vector<int64_t>& shape, int threads) {
    const int64_t rank = int64_t(shape.size());
    if (rank == 0) return;
    int64_t numel = 1;
    for (int64_t d : shape) numel *= d;
    const int width = vectorWidth(f.output_types()[0], shape.back());
    const Var inner = kilnVars()[size_t(rank - 1)];
    const bool large = numel >= 32768 && threads > 1;
    // GuardWithIf, not ShiftInwards: a state updated in place is a result that is also an
    // operand, and recomputing a tail vector would read elements already written.
    constexpr auto guard = Halide::TailStrategy::GuardWithIf;
    if (large && rank == 1) {
      Var chunk("chunk"), within("within");
      f.split(inner, chunk, within, 8192, guard).parallel(chunk);
      if (shape.back() >= width) f.vectorize(within, width, guard);
      scheduled_ += "parallel-chunks ";
      return;
    }
    if (shape.back() >= width) f.vectorize(inner, width, guard);
    if (large && shape.front() >= threads) {
      f.parallel(kilnVars()[0]);
      scheduled_ += "parallel-rows ";
    }
  }

  mlir::func::FuncOp kernel_;
  Schedule mode_;
  std::vector<Halide::ImageParam> inputs_;
  std::vector<Func> outputs_;
  std::vector<std::vector<int64_t>> outputShapes_;  // per output Func
  std::vector<std::pair<size_t, size_t>> resultSlots_;
  std::vector<Reduction> reductions_;
  llvm::DenseMap<mlir::Value, Func> values_;
  int counter_ = 0;
  std::string scheduled_;
};

// ---- a compiled kernel ---------------------------------------------------------------------

// The shape of one buffer as halide_buffer_t sees it: dims innermost first, row-major
// strides in elements.
struct BufferShape {
  halide_type_t type;
  std::vector<halide_dimension_t> dims;
};

BufferShape bufferShape(mlir::RankedTensorType type) {
  Halide::Type t = halideType(type.getElementType());
  BufferShape shape{halide_type_t(t), {}};
  int32_t stride = 1;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    shape.dims.push_back(halide_dimension_t(0, int32_t(type.getDimSize(d)), stride));
    stride *= int32_t(type.getDimSize(d));
  }
  return shape;
}

// A compiled pipeline besides its code: what the disk cache keeps beside its object.
struct PipelineInfo {
  std::string name;               // the kernel's (of identical kernels, the first compiled)
  size_t loopNests = 0;           // separate loop nests: output Funcs
  std::vector<size_t> resultOf;   // resultOf[j]: the kernel result output buffer j holds
  std::string schedule;           // one line, for KILN_LOG=compile
  std::string lowered;            // Halide's lowered statement, for KILN_DUMP_IR

  std::string function() const { return "kiln_halide_" + name; }

  static constexpr std::string_view kFormat = "kiln-halide-kernel/1";

  std::string serialized() const {
    std::ostringstream out;
    out << kFormat << "\n" << name << "\n" << loopNests << "\n";
    for (size_t k : resultOf) out << k << " ";
    out << "\n" << schedule << "\n" << lowered;
    return out.str();
  }

  // nullopt for anything serialized() does not write.
  static std::optional<PipelineInfo> parse(const std::string& text) {
    std::istringstream in(text);
    std::string format, results;
    PipelineInfo info;
    if (!std::getline(in, format) || format != kFormat || !std::getline(in, info.name) ||
        !(in >> info.loopNests) || !in.ignore() || !std::getline(in, results) ||
        !std::getline(in, info.schedule))
      return std::nullopt;
    std::istringstream list(results);
    for (size_t k; list >> k;) info.resultOf.push_back(k);
    info.lowered.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return info;
  }
};

// A pipeline run on `device`: on the CPU its buffers are host memory; on a CUDA device they
// are device addresses of Halide's CUDA runtime (neither host nor device dirty, so Halide
// copies nothing), and the pipeline runs in Kiln's context for the device, on its stream.
class HalideKernel final : public ExternalKernel {
 public:
  // `kernel` gives the buffers' shapes; `fromDisk`: its object came from the disk cache.
  HalideKernel(mlir::func::FuncOp kernel, PipelineInfo info, KernelCode code, bool fromDisk, Device device)
      : info_(std::move(info)), code_(std::move(code)), fromDisk_(fromDisk), device_(device),
        interface_(device.isCUDA() ? cudaInterface(code_) : nullptr) {
    for (mlir::Type type : kernel.getArgumentTypes())
      operands_.push_back(bufferShape(llvm::cast<mlir::RankedTensorType>(type)));
    // Output buffers go Func by Func, each Func's Tuple elements in order.
    for (size_t k : info_.resultOf)
      results_.push_back(bufferShape(llvm::cast<mlir::RankedTensorType>(kernel.getResultTypes()[k])));
  }

  size_t loopNests() const { return info_.loopNests; }

  void run(void* const* operands, void* const* results) const override {
    std::optional<CudaScope> onDevice;
    if (interface_) {
      const cuda::DeviceInfo& info = cuda::device(device_.index, "run compiled", SourceLoc::current());
      onDevice.emplace(info.context, info.stream);
    }
    std::vector<halide_buffer_t> buffers(operands_.size() + results_.size());
    std::vector<std::vector<halide_dimension_t>> dims(buffers.size());
    std::vector<const void*> argv;
    for (size_t k = 0; k < buffers.size(); ++k) {
      const bool in = k < operands_.size();
      const BufferShape& shape = in ? operands_[k] : results_[k - operands_.size()];
      dims[k] = shape.dims;
      halide_buffer_t& b = buffers[k];
      b = halide_buffer_t{};
      void* address = in ? operands[k] : results[info_.resultOf[k - operands_.size()]];
      if (interface_) {
        b.device = reinterpret_cast<uint64_t>(address);
        b.device_interface = interface_;
      } else {
        b.host = static_cast<uint8_t*>(address);
      }
      b.type = shape.type;
      b.dimensions = int32_t(dims[k].size());
      b.dim = dims[k].data();
      argv.push_back(&b);
    }
    lastError().clear();
    if (int status = code_.entry(argv.data()))
      throw Error::make(SourceLoc::current(), "run compiled", "HALIDE kernel @", info_.name,
                        " failed (", status, "): ", lastError());
  }

  std::string describe() const override {
    return "@" + info_.name + ": " + info_.schedule + (fromDisk_ ? " (object from the disk cache)" : "");
  }

  std::string lowered() const override { return info_.lowered; }

 private:
  PipelineInfo info_;
  KernelCode code_;
  bool fromDisk_;
  Device device_;
  const halide_device_interface_t* interface_;
  std::vector<BufferShape> operands_;
  std::vector<BufferShape> results_;
};

// A kernel's text without its name: kernels of the same ops and types compile once.
std::string keyOf(mlir::func::FuncOp kernel) {
  std::string text;
  llvm::raw_string_ostream out(text);
  out << kernel.getFunctionType() << "\n";
  for (mlir::Operation& op : kernel.getBody().front())
    op.print(out, mlir::OpPrintingFlags().printGenericOpForm().elideLargeElementsAttrs(0));
  return text;
}

// KILN_HALIDE_SCHEDULE: "hand" (the default: Translator's schedule) or one of Halide 14's
// autoschedulers, Mullapudi2016, Adams2019 or Li2018, loaded from Debian's plugins (for
// measuring one against the other: docs/BACKENDS.md).
std::string scheduleChoice() {
  const char* env = std::getenv("KILN_HALIDE_SCHEDULE");
  std::string choice = env && *env ? env : "hand";
  if (choice != "hand" && choice != "Mullapudi2016" && choice != "Adams2019" && choice != "Li2018")
    throw Declined{"KILN_HALIDE_SCHEDULE must be hand, Mullapudi2016, Adams2019 or Li2018, not '" +
                   choice + "'"};
  return choice;
}

// Halide's autoscheduler plugins: "halide14" beside the libHalide this process loaded
// (Debian's /usr/lib/x86_64-linux-gnu/halide14; wherever a bundle puts libHalide, its
// plugins beside it: the first GPU run's bundle had libHalide in its own lib/).
std::string pluginDirectory() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&Halide::load_plugin), &info) && info.dli_fname)
    return (std::filesystem::path(info.dli_fname).parent_path() / "halide14").string();
  return "/usr/lib/x86_64-linux-gnu/halide14";
}

void loadAutoscheduler(const std::string& name) {
  static std::mutex mutex;
  static std::set<std::string> loaded;
  std::lock_guard lock(mutex);
  if (!loaded.insert(name).second) return;
  std::string file = name;
  std::transform(file.begin(), file.end(), file.begin(), [](unsigned char c) { return std::tolower(c); });
  Halide::load_plugin(pluginDirectory() + "/libautoschedule_" + file + ".so");
}

// Every input's and output's whole extent, as the autoschedulers need them.
void setEstimates(std::vector<Halide::ImageParam>& inputs, mlir::func::FuncOp kernel,
                  std::vector<Func>& outputs, const std::vector<std::vector<int64_t>>& shapes) {
  auto region = [](llvm::ArrayRef<int64_t> shape) {
    Halide::Region r;
    for (auto d = shape.rbegin(); d != shape.rend(); ++d) r.emplace_back(0, int(*d));
    return r;
  };
  for (size_t k = 0; k < inputs.size(); ++k)
    inputs[k].set_estimates(region(llvm::cast<mlir::RankedTensorType>(kernel.getArgumentTypes()[k]).getShape()));
  for (size_t g = 0; g < outputs.size(); ++g) outputs[g].set_estimates(region(shapes[g]));
}

// The kernel's Funcs, scheduled as `mode` says (an autoscheduler's choice is the caller's).
std::unique_ptr<Translator> translated(mlir::func::FuncOp kernel, Schedule mode) {
  auto translator = std::make_unique<Translator>(kernel, mode);
  translator->translate();
  translator->schedule();
  return translator;
}

std::vector<Halide::Argument> argumentsOf(Translator& translator) {
  std::vector<Halide::Argument> arguments;
  for (Halide::ImageParam& param : translator.inputs()) arguments.push_back(param);
  return arguments;
}

std::atomic<int64_t> kernelsCompiled{0};
std::atomic<int64_t> kernelsLoaded{0};

std::string loweredText(const Halide::Module& module) {
  std::ostringstream out;
  for (const Halide::Internal::LoweredFunc& f : module.functions())
    out << "// " << f.name << "\n" << f.body << "\n";
  return out.str();
}

// LLVM 14's NVPTX backend aborts the process on Halide's bfloat16 code ("Copy one register
// into another with a different width"), so bf16 is declined before Halide sees it.
void declineBf16OnCuda(mlir::func::FuncOp kernel) {
  auto bf16 = [](mlir::Type type) {
    auto tensor = llvm::dyn_cast<mlir::TensorType>(type);
    return (tensor ? tensor.getElementType() : type).isBF16();
  };
  const char* why = "bf16 on Halide 14's CUDA target (LLVM 14's NVPTX backend aborts on it)";
  kernel.walk([&](mlir::Operation* op) {
    for (mlir::Type t : op->getResultTypes())
      if (bf16(t)) throw Declined{why};
  });
  for (mlir::Type t : kernel.getArgumentTypes())
    if (bf16(t)) throw Declined{why};
}

// The device code of a module compiled for cudaTarget(): lowering offloads the GPU loops,
// Halide's PTX code generator (LLVM 14's NVPTX backend, with libdevice) compiles them, and
// the host module carries the PTX as a buffer named "<device API>_gpu_source_kernels" (text
// with a NUL at its end), which Halide's CUDA runtime hands to cuModuleLoadData. No device
// is asked for anything.
std::string ptxOf(const Halide::Module& module) {
  std::string ptx;
  for (const Halide::Buffer<void>& buffer : module.buffers()) {
    const std::string& name = buffer.name();
    const std::string suffix = "_gpu_source_kernels";
    if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    std::string text(static_cast<const char*>(buffer.data()), buffer.size_in_bytes());
    while (!text.empty() && text.back() == '\0') text.pop_back();
    ptx += text;
  }
  if (ptx.empty()) throw Declined{"Halide emitted no device code"};
  return ptx;
}

// A kernel's pipeline, scheduled for `device` (on the CPU as KILN_HALIDE_SCHEDULE says),
// compiled to a module without a runtime when `noRuntime` (every CUDA kernel: they are
// always objects linked beside the standalone runtime, whose CUDA context Kiln sets).
struct Lowered {
  PipelineInfo info;
  std::optional<Halide::Module> module;
  std::string ptx;  // CUDA: the device code
};

Lowered lower(mlir::func::FuncOp kernel, Device device, bool noRuntime) {
  const bool cuda = device.isCUDA();
  if (cuda) declineBf16OnCuda(kernel);
  const std::string choice = cuda ? "hand" : scheduleChoice();
  std::unique_ptr<Translator> built =
      translated(kernel, cuda ? Schedule::Cuda : choice == "hand" ? Schedule::CpuHand : Schedule::CpuAuto);
  Translator& translator = *built;
  Lowered lowered;
  PipelineInfo& info = lowered.info;
  info.name = kernel.getSymName().str();
  info.loopNests = translator.outputs().size();
  const auto& slots = translator.resultSlots();
  for (size_t g = 0; g < translator.outputs().size(); ++g)
    for (size_t k = 0; k < slots.size(); ++k)
      if (slots[k].first == g) info.resultOf.push_back(k);
  info.schedule = choice == "hand" ? translator.scheduled() : "autoscheduled by " + choice;
  if (info.schedule.empty()) info.schedule = "serial";
  Halide::Pipeline pipeline(translator.outputs());
  if (choice != "hand") {
    loadAutoscheduler(choice);
    setEstimates(translator.inputs(), kernel, translator.outputs(), translator.outputShapes());
    const Halide::MachineParams machine(std::max(1, kiln::get_num_threads()), 32u << 20, 40);
    // One autoscheduler run at a time: a program's kernels compile on several threads
    // (Executable::takeKernels), and Halide promises thread safety for its compiler, not
    // for its autoscheduler plugins (a measurement knob: KILN_HALIDE_SCHEDULE).
    static std::mutex autoscheduling;
    std::lock_guard lock(autoscheduling);
    pipeline.auto_schedule(choice, cpuTarget(), machine);
  }
  const Halide::Target& target = cuda ? cudaTarget() : cpuTarget();
  lowered.module.emplace(pipeline.compile_to_module(
      argumentsOf(translator), info.function(),
      noRuntime ? target.with_feature(Halide::Target::NoRuntime) : target));
  info.lowered = loweredText(*lowered.module);
  if (cuda) {
    lowered.ptx = ptxOf(*lowered.module);
    info.lowered += "\n// PTX\n" + lowered.ptx;
  }
  ++kernelsCompiled;
  return lowered;
}

// `kernel` compiled by Halide for `device`. With `cache` enabled, or for CUDA, to an object
// (stored in `cache` under `diskKey` where it is enabled) linked by Kiln's JIT, as a later
// process loads it; else by Halide's JIT.
std::shared_ptr<const HalideKernel> compileKernel(mlir::func::FuncOp kernel, Device device,
                                                  const DiskCache& cache, const std::string& diskKey) {
  const bool asObject = cache.enabled() || device.isCUDA();
  Lowered lowered = lower(kernel, device, asObject);
  const std::string function = lowered.info.function();
  if (!asObject)
    return std::make_shared<HalideKernel>(kernel, std::move(lowered.info), jitCode(*lowered.module, function),
                                          false, device);
  const std::string object = objectOf(*lowered.module);
  cache.store(diskKey, {lowered.info.serialized(), object});
  KernelCode code = objectCode(object, function, cache, device.isCUDA() ? RuntimeTarget::Cuda : RuntimeTarget::Cpu);
  return std::make_shared<HalideKernel>(kernel, std::move(lowered.info), std::move(code), false, device);
}

// The object compileKernel stored under `diskKey`, linked; null where there is none (or it
// is corrupt: DiskCache checks and removes it).
std::shared_ptr<const HalideKernel> loadKernel(mlir::func::FuncOp kernel, Device device, const DiskCache& cache,
                                               const std::string& diskKey) {
  std::optional<CacheEntry> entry = cache.load(diskKey);
  std::optional<PipelineInfo> info = entry ? PipelineInfo::parse(entry->module) : std::nullopt;
  if (!info) return nullptr;
  const std::string function = info->function();
  KernelCode code = objectCode(entry->object, function, cache, device.isCUDA() ? RuntimeTarget::Cuda : RuntimeTarget::Cpu);
  ++kernelsLoaded;
  return std::make_shared<HalideKernel>(kernel, std::move(*info), std::move(code), true, device);
}

}  // namespace

namespace {

// Why a kernel of several results, one written over an operand, is declined. Halide takes
// buffers not to alias: a Tuple's stores are not ordered after its loads, and a vector
// tail loads an operand again after storing a result over it (kiln-fuzz seed 800031:
// s.copy_(tanh(s)) beside s2 * s, 1020 floats, the tail past 896 read tanh(s)). Results of
// different shapes are separate loop nests besides. MLIR (CPU) compiles such a kernel, or
// on CUDA it runs interpreted on the device.
constexpr const char* kSeveralResultsInPlace =
    "several results with one written over an operand (Halide takes buffers not to alias)";

}  // namespace

std::optional<HalideCudaKernel> compileForCuda(mlir::func::FuncOp kernel, bool inPlace, std::string& why) {
  try {
    if (inPlace && kernel.getNumResults() > 1) throw Declined{kSeveralResultsInPlace};
    Lowered lowered = lower(kernel, Device(kCUDA, 0), /*noRuntime=*/true);
    HalideCudaKernel compiled;
    compiled.name = lowered.info.function();
    compiled.loopNests = lowered.info.loopNests;
    compiled.schedule = lowered.info.schedule;
    compiled.ptx = std::move(lowered.ptx);
    for (size_t at = 0; (at = compiled.ptx.find(".entry ", at)) != std::string::npos;) {
      at += 7;
      compiled.entries.push_back(compiled.ptx.substr(at, compiled.ptx.find('(', at) - at));
    }
    return compiled;
  } catch (const Declined& declined) {
    why = declined.why;
  } catch (const Halide::Error& error) {
    why = std::string("Halide: ") + error.what();
  }
  return std::nullopt;
}

namespace {

class HalideKernels final : public KernelCodegen {
 public:
  std::string_view name() const override { return "HALIDE"; }

  std::shared_ptr<const ExternalKernel> compile(mlir::func::FuncOp kernel, bool inPlace,
                                                const DiskCache& cache,
                                                std::string& why) const override {
    return compileFor(kernel, inPlace, Device(), cache, why);
  }

  // `kernel` for `device`, from this process's kernels, the disk cache or Halide.
  std::shared_ptr<const ExternalKernel> compileFor(mlir::func::FuncOp kernel, bool inPlace, Device device,
                                                   const DiskCache& cache, std::string& why) const {
    // The in-memory key, and the disk key's part: the same but for a CUDA device's index
    // (objects serve every device alike).
    // Before any work: such a kernel would be compiled only to be declined.
    if (inPlace && kernel.getNumResults() > 1) {
      why = kSeveralResultsInPlace;
      return nullptr;
    }
    std::string key, diskPart;
    try {
      const std::string text = keyOf(kernel);
      if (device.isCUDA()) {
        // The CUDA schedule is the hand one whatever KILN_HALIDE_SCHEDULE says; a kernel
        // runs on the device it was made for.
        diskPart = "cuda " + cudaTarget().to_string() + "\n" + text;
        key = "cuda " + cudaTarget().to_string() + " " + device.str() + "\n" + text;
      } else {
        // An autoscheduler's choice depends on the thread count it is given (lower()).
        const std::string choice = scheduleChoice();
        const std::string threads = choice == "hand" ? "" : " " + std::to_string(std::max(1, kiln::get_num_threads()));
        key = diskPart = choice + threads + "\n" + text;
      }
    } catch (const Declined& declined) {
      why = declined.why;
      return nullptr;
    }
    // One compile per key: a thread asking for a key another thread is compiling waits
    // for that compile (the kernels of a program compile on several threads, and a
    // program repeats kernels: MobileNetV2's blocks).
    std::promise<Outcome> promise;
    std::shared_future<Outcome> outcome;
    {
      std::lock_guard lock(mutex_);
      if (auto it = cache_.find(key); it != cache_.end()) return it->second;
      if (auto it = compiling_.find(key); it != compiling_.end()) outcome = it->second;
      else compiling_.emplace(key, promise.get_future().share());
    }
    if (outcome.valid()) {
      const Outcome& done = outcome.get();
      if (!done.kernel) why = done.why;
      return done.kernel;
    }
    Outcome done;
    try {
      const std::string diskKey =
          cache.enabled() ? DiskCache::keyOf({PipelineInfo::kFormat, compilerIdentity(), diskPart}) : "";
      done.kernel = loadKernel(kernel, device, cache, diskKey);
      if (!done.kernel) done.kernel = compileKernel(kernel, device, cache, diskKey);
    } catch (const Declined& declined) {
      done.why = declined.why;
    } catch (const Halide::Error& error) {
      done.why = std::string("Halide: ") + error.what();
    } catch (...) {
      // Anything else (a failed link) reaches this caller; the waiting ones see a decline.
      done.why = "the compile failed on another thread";
      finish(key, promise, done);
      throw;
    }
    finish(key, promise, done);
    if (!done.kernel) why = done.why;
    return done.kernel;
  }

  void forget() const {
    std::lock_guard lock(mutex_);
    cache_.clear();
  }

 private:
  struct Outcome {
    std::shared_ptr<const HalideKernel> kernel;  // null: declined
    std::string why;
  };

  // Publishes a finished compile of `key`: kept when it succeeded, and handed to the
  // threads waiting for it either way.
  void finish(const std::string& key, std::promise<Outcome>& promise, const Outcome& done) const {
    {
      std::lock_guard lock(mutex_);
      if (done.kernel) cache_.emplace(key, done.kernel);
      compiling_.erase(key);
    }
    promise.set_value(done);
  }

  // Compiled pipelines by kernel text (and device), for the life of the process; the
  // compiles in progress, by the same key.
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::shared_ptr<const HalideKernel>> cache_;
  mutable std::map<std::string, std::shared_future<Outcome>> compiling_;
};

}  // namespace

const KernelCodegen& halideKernels() {
  static const HalideKernels generator;
  return generator;
}

std::shared_ptr<const ExternalKernel> cudaKernel(mlir::func::FuncOp kernel, bool inPlace, Device device,
                                                 const DiskCache& cache, std::string& why) {
  return static_cast<const HalideKernels&>(halideKernels()).compileFor(kernel, inPlace, device, cache, why);
}

HalideCounts halideCounts() { return {kernelsCompiled, kernelsLoaded, runtimesCompiled()}; }

void forgetHalideKernels() {
  static_cast<const HalideKernels&>(halideKernels()).forget();
  forgetStandaloneRuntime();
}

}  // namespace kiln::runtime::halide
