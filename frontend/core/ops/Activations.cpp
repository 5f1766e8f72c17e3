// Activation primitives of the op table that cannot be composed from other ops (gelu's
// exact form needs erf, which is no frontend op) and their public functions.
#include <cmath>
#include <numbers>

#include "frontend/core/kernels/Map.h"
#include "frontend/core/kernels/VecMath.h"
#include "frontend/core/ops/FusedEager.h"
#include "frontend/core/ops/OpTable.h"
#include "frontend/core/ops/ShapeRules.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Functional.h"

namespace kiln {
namespace ops {
namespace {

// x·Φ(x) = x/2·(1 + erf(x/√2)), computed in the dtype's math type as PyTorch does.
void geluKernel(const OpArgs& args, std::span<Tensor> out) {
  dispatchDTypeAmong<DType::Float32, DType::Float64, DType::Float16, DType::BFloat16>(
      out[0].dtype(), "gelu", args.loc, [&]<class T>() {
        using M = OpMathType<T>;
        kernels::map<T, T>(out[0], {&args.inputs[0]}, [](T v) {
          M x = M(v);
          return T(M(0.5) * x * (M(1) + std::erf(x * M(std::numbers::sqrt2 / 2))));
        });
      });
}

std::vector<TensorMeta> geluShape(const OpDef& op, std::span<const TensorMeta> in, const Attrs&,
                                  const SourceLoc& loc) {
  requireDType(op, in[0], DTypeClass::Floating, loc);
  return {in[0]};
}

// d/dx x·Φ(x) = Φ(x) + x·φ(x). Φ has no frontend op, but Φ(x) = gelu(x)/x away from 0 and
// 1/2 at 0; the saved output gives it without recomputing erf. The denominator is made
// safe at 0 so no NaN appears even in the branch `where` discards.
std::vector<Tensor> geluGrad(const GradArgs& a) {
  const SourceLoc& l = a.loc;
  const Tensor& x = a.inputs[0];
  Tensor atZero = eq(x, 0.0, l);
  Tensor safeX = where(atZero, ones_like(x, l), x, l);
  Tensor cdf = where(atZero, full_like(x, 0.5, l), div(a.outputs[0], safeX, l), l);
  Tensor pdf = mul(exp(mul(mul(x, x, l), -0.5, l), l), 1.0 / std::sqrt(2.0 * std::numbers::pi), l);
  return {mul(a.gradOutputs[0], add(cdf, mul(x, pdf, l), l), l)};
}

// The composition below in one pass, operation for operation: each scalar is rounded to
// x's dtype as scalar_tensor does, and each step rounds as its op's kernel would.
Tensor geluTanhFused(const Tensor& x, double beta, const SourceLoc& loc) {
  Tensor out = empty(x.sizes(), x.dtype(), loc);
  dispatchDTypeAmong<DType::Float32, DType::Float64>(x.dtype(), "gelu", loc, [&]<class T>() {
    const T c = T(0.044715), b = T(beta), half = T(0.5), one = T(1);
    kernels::map<T, T>(out, {&x}, [=](T v) {
      T inner = (v + v * v * v * c) * b;
      return v * half * (kernels::tanh(inner) + one);
    });
  });
  return out;
}

}  // namespace

const OpDef kGelu{"gelu", "kiln.gelu", geluShape, geluKernel, nullptr, geluGrad};

}  // namespace ops

// The tanh form is PyTorch's approximate="tanh":
// x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³))), made of primitives so fusion sees it.
Tensor gelu(const Tensor& x, std::string_view approximate, const SourceLoc& loc) {
  if (approximate != "none" && approximate != "tanh")
    throw Error::make(loc, "gelu", "approximate must be \"none\" or \"tanh\", got \"",
                      approximate, "\"");
  if (approximate == "none") return dispatch1(ops::kGelu, {x}, {}, loc);
  ops::requireDType(ops::kGelu, {x.sizes(), x.dtype(), x.device()}, ops::DTypeClass::Floating, loc);
  const double kBeta = std::sqrt(2.0 / std::numbers::pi);
  if (ops::mayFuseEagerly({&x})) return ops::geluTanhFused(x, kBeta, loc);
  Tensor inner = mul(add(x, mul(mul(mul(x, x, loc), x, loc), 0.044715, loc), loc), kBeta, loc);
  return mul(mul(x, 0.5, loc), add(tanh(inner, loc), 1.0, loc), loc);
}

}  // namespace kiln
