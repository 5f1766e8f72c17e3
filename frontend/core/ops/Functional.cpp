// Composite ops (see kiln/core/Functional.h), written only with public frontend ops: no
// dispatch here, so autograd differentiates them and the tracer records their insides as
// ordinary kiln ops that fusion can see. softmax, log_softmax and layer_norm also have a
// fused eager kernel (kernels/Fused.h) for when no one looks inside.
#include "kiln/core/Functional.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "frontend/core/kernels/Fused.h"
#include "frontend/core/ops/Compose.h"
#include "frontend/core/ops/FusedEager.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Dispatcher.h"

namespace kiln {

namespace {

void requireFloating(const char* op, const char* what, const Tensor& x, const SourceLoc& loc) {
  if (!x.is_floating_point())
    throw TypeError::make(loc, op, "expected a floating-point ", what, ", got ", x.dtype(),
                          " tensor of shape ", x.sizes());
}

void requireIntegral(const char* op, const char* what, const Tensor& x, const SourceLoc& loc) {
  if (!isIntegral(x.dtype(), /*includeBool=*/false))
    throw TypeError::make(loc, op, what, " must be int32 or int64, got ", x.dtype(),
                          " tensor of shape ", x.sizes());
}

// A 0-d tensor of x's dtype on x's device, so constants never promote x and where() finds
// its operands on one device.
Tensor constantLike(const Tensor& x, double value, const SourceLoc& loc) {
  return full({}, value, TensorOptions(x.dtype()).device(x.device()), loc);
}

Tensor reduceLoss(const Tensor& losses, Reduction reduction, const SourceLoc& loc) {
  switch (reduction) {
    case Reduction::None: return losses;
    case Reduction::Sum: return sum(losses, {}, false, loc);
    case Reduction::Mean: return mean(losses, {}, false, loc);
  }
  return losses;
}

// `dims` normalized, sorted and checked (all dims when empty), as the reductions take them,
// with errors naming `op`; and the number of elements each output element reduces.
std::pair<Shape, int64_t> reducedDims(const char* op, const Tensor& x, Shape dims,
                                      const SourceLoc& loc) {
  if (dims.empty())
    for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
  for (int64_t& d : dims) d = normalizeDim(d, x.dim(), op, loc);
  std::sort(dims.begin(), dims.end());
  if (std::adjacent_find(dims.begin(), dims.end()) != dims.end())
    throw ShapeError::make(loc, op, "dim appears more than once in ", dims);
  int64_t count = 1;
  if (x.dim() > 0)
    for (int64_t d : dims) count *= x.sizes()[d];
  return {dims, count};
}

// x minus its max along `dim`, for a stable exp. The max is computed without history: the
// shift cancels exactly in softmax and log_softmax, so its gradient is zero and recording
// it would only add a max-gradient (compare, sum, divide) to every backward (JAX does
// the same with stop_gradient). It is still an ordinary op to the tracer.
Tensor shiftedByMax(const Tensor& x, int64_t dim, const SourceLoc& loc) {
  if (x.numel() == 0) return x;  // nothing to shift; max has no identity
  Tensor max;
  {
    NoGradGuard noGrad;
    max = amax(x, {dim}, true, loc);
  }
  return sub(x, max, loc);
}

// ops::mayFuseEagerly, and at least one element (the fused row kernels assume one).
bool fusable(std::initializer_list<const Tensor*> inputs) {
  return ops::mayFuseEagerly(inputs) && (*inputs.begin())->numel() > 0;
}

// [1, C, 1, ...]: a per-channel tensor laid out to broadcast against x [N, C, *].
Tensor perChannel(const Tensor& c, const Tensor& x, const SourceLoc& loc) {
  Shape shape(x.dim(), 1);
  shape[1] = x.sizes()[1];
  return convert(c, x.dtype(), loc).reshape(shape, loc);
}

// A batch_norm momentum: a number, or (when `tensor` is defined) a 0-d floating tensor.
struct Momentum {
  double value;
  Tensor tensor;
};

// running = (1 - momentum)·running + momentum·batch, in place (a state update to a trace).
// A tensor momentum is rounded where a number would be, so both give the same bits.
void updateRunning(Tensor running, const Tensor& batch, const Momentum& momentum,
                   const SourceLoc& loc) {
  if (!running.defined()) return;
  if (!momentum.tensor.defined()) {
    running.mul_(1.0 - momentum.value, loc).add_(batch, momentum.value, loc);
    return;
  }
  const Tensor& m = momentum.tensor;
  running.mul_(sub(1.0, m, loc).to(running.dtype(), loc), loc)
      .add_(mul(batch, m.to(batch.dtype(), loc), loc), 1.0, loc);
}

void requireShape(const char* op, const char* what, const Tensor& t, const Shape& expected,
                  const Tensor& x, const SourceLoc& loc) {
  if (t.defined() && t.sizes() != expected)
    throw ShapeError::make(loc, op, what, " has shape ", t.sizes(), " but the input of shape ",
                           x.sizes(), " needs ", expected);
}

// Eager only (a trace must not read values): names the first index outside [0, limit)
// that is not `skip`. The kernel of `take` checks its flattened index only, which a bad
// target can still land inside (in another row); and this message speaks of `op`'s terms.
void checkIndexRange(const char* op, const char* what, const Tensor& indices, int64_t limit,
                     const char* unit, std::optional<int64_t> skip, const char* operand,
                     const Tensor& of, const SourceLoc& loc) {
  if (currentDispatchHook() || indices.numel() == 0) return;
  // Read on the host: a CUDA tensor's values are copied over first (data_ptr of a CUDA
  // tensor is a device address).
  Tensor values = convert(indices, kInt64, loc).contiguous(loc);
  if (!values.device().isCPU()) values = values.cpu(loc);
  const int64_t* v = values.data_ptr<int64_t>(loc);
  for (int64_t i = 0; i < values.numel(); ++i)
    if (v[i] != skip && (v[i] < 0 || v[i] >= limit))
      throw ShapeError::make(loc, op, what, " ", v[i], " at position ", i, " is out of range for ",
                             limit, " ", unit, " (", operand, " of shape ", of.sizes(), ")");
}

// Eager only, as checkIndexRange: LibTorch's binary_cross_entropy rejects an input outside
// [0, 1] (or NaN), which would otherwise be a NaN loss. A trace must not read values; there
// the clamped logs stand.
void checkProbabilities(const char* op, const Tensor& input, const SourceLoc& loc) {
  if (currentDispatchHook() || input.numel() == 0) return;
  Tensor values = convert(input.detach(), kFloat64, loc).contiguous(loc);
  if (!values.device().isCPU()) values = values.cpu(loc);
  const double* v = values.data_ptr<double>(loc);
  for (int64_t i = 0; i < values.numel(); ++i)
    if (!(v[i] >= 0 && v[i] <= 1))
      throw Error::make(loc, op, "all elements of input should be between 0 and 1, but element ", i,
                        " is ", v[i], " (input of shape ", input.sizes(), ")");
}

// nll_loss with errors naming `op` (nll_loss or cross_entropy).
Tensor nllLoss(const char* op, const Tensor& logProbs, const Tensor& target, Reduction reduction,
               const Tensor& weight, int64_t ignoreIndex, const SourceLoc& loc) {
  requireFloating(op, "input", logProbs, loc);
  requireIntegral(op, "target", target, loc);
  if (logProbs.dim() == 0)
    throw ShapeError::make(loc, op, "input must have a class dim, got a 0-d tensor");
  // A single sample [C] with a 0-d target is the batch of one.
  const bool single = logProbs.dim() == 1;
  const Tensor input = single ? logProbs.unsqueeze(0, loc) : logProbs;
  const Tensor t = single ? target.unsqueeze(0, loc) : target;
  Shape targetShape = input.sizes();
  targetShape.erase(targetShape.begin() + 1);
  if (t.sizes() != targetShape)
    throw ShapeError::make(loc, op, "target has shape ", target.sizes(), " but the input of shape ",
                           logProbs.sizes(), " needs a target of shape ",
                           single ? Shape{} : targetShape);
  const int64_t n = input.sizes()[0], classes = input.sizes()[1];
  const int64_t spatial = numel(Shape(input.sizes().begin() + 2, input.sizes().end()));
  requireShape(op, "weight", weight, {classes}, logProbs, loc);
  checkIndexRange(op, "target", t, classes, "classes", ignoreIndex, "input", logProbs, loc);

  // Element (i, t, s) of input viewed as [N, C, S] is at i·C·S + t·S + s of its flattening.
  const Tensor keep = ne(t, ignoreIndex, loc);
  const Tensor safeTarget =
      convert(where(keep, t, zeros({}, TensorOptions(t.dtype()).device(t.device()), loc), loc), kInt64, loc);
  Tensor rowStart = mul(arange(n, loc), classes * spatial, loc).reshape({n, 1}, loc);
  // The row offsets are computed on the CPU and join the target on its device.
  Tensor base = add(rowStart, arange(spatial, loc).reshape({1, spatial}, loc), loc).to(t.device(), loc);
  Tensor index = add(base.reshape(t.sizes(), loc), mul(safeTarget, spatial, loc), loc);
  Tensor picked = take(input.reshape({-1}, loc), index, 0, loc);

  // Ignored targets select 0 rather than multiply by it, so a -inf log-probability at the
  // placeholder class 0 cannot turn into NaN.
  const Tensor zero = zeros({}, TensorOptions(input.dtype()).device(input.device()), loc);
  Tensor weights = convert(keep, input.dtype(), loc);
  if (weight.defined()) {
    weights = where(keep, take(convert(weight, input.dtype(), loc), safeTarget, 0, loc), zero, loc);
    picked = mul(picked, weights, loc);
  }
  Tensor losses = where(keep, neg(picked, loc), zero, loc);
  switch (reduction) {
    case Reduction::None: return single ? losses.reshape({}, loc) : losses;
    case Reduction::Sum: return sum(losses, {}, false, loc);
    case Reduction::Mean:
      return div(sum(losses, {}, false, loc), sum(weights, {}, false, loc), loc);
  }
  return losses;
}

}  // namespace

// ---- activations ------------------------------------------------------------------------

// where(x >= 6, 6, relu(x)): the gradient is relu's (x > 0) below 6 and 0 from 6 on,
// PyTorch's hardtanh_backward.
Tensor relu6(const Tensor& x, const SourceLoc& loc) {
  return where(ge(x, 6.0, loc), constantLike(x, 6.0, loc), relu(x, loc), loc);
}

Tensor silu(const Tensor& x, const SourceLoc& loc) {
  requireFloating("silu", "input", x, loc);
  return mul(x, sigmoid(x, loc), loc);
}

Tensor leaky_relu(const Tensor& x, double negativeSlope, const SourceLoc& loc) {
  requireFloating("leaky_relu", "input", x, loc);
  return where(gt(x, 0.0, loc), x, mul(x, negativeSlope, loc), loc);
}

// Two selects rather than max/min, so the gradient mask is PyTorch's (min <= x <= max,
// ties included) and min > max still gives max. A bound takes x's dtype unless it has a
// fraction and x is integral (torch.clamp(int_tensor, 1.5) is float).
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max,
             const SourceLoc& loc) {
  if (!min && !max)
    throw Error::make(loc, "clamp", "at least one of min and max must be given");
  auto bound = [&](double v) {
    bool integral = !x.is_floating_point() && v == std::floor(v) && std::abs(v) < 0x1p63;
    return integral ? scalarOperand(x, int64_t(v), loc) : scalarOperand(x, v, loc);
  };
  Tensor y = x;
  if (min) {
    Tensor lo = bound(*min);
    y = where(lt(y, lo, loc), lo, y, loc);
  }
  if (max) {
    Tensor hi = bound(*max);
    y = where(gt(y, hi, loc), hi, y, loc);
  }
  return y;
}

// ---- softmax ------------------------------------------------------------------------------

Tensor softmax(const Tensor& x, int64_t dim, const SourceLoc& loc) {
  requireFloating("softmax", "input", x, loc);
  dim = normalizeDim(dim, x.dim(), "softmax", loc);
  if (fusable({&x})) return kernels::softmax(x.contiguous(loc), dim, /*log=*/false, loc);
  Tensor e = exp(shiftedByMax(x, dim, loc), loc);
  Tensor total = sum(e, {dim}, true, loc);
  // f32/f64: times the reciprocal of the sum, as ATen's vectorised softmax (one division
  // per row). f16/bf16 divide: their rounded reciprocal would cost a whole ulp.
  if (e.dtype() == kFloat32 || e.dtype() == kFloat64) return mul(e, div(1.0, total, loc), loc);
  return div(e, total, loc);
}

Tensor log_softmax(const Tensor& x, int64_t dim, const SourceLoc& loc) {
  requireFloating("log_softmax", "input", x, loc);
  dim = normalizeDim(dim, x.dim(), "log_softmax", loc);
  if (fusable({&x})) return kernels::softmax(x.contiguous(loc), dim, /*log=*/true, loc);
  Tensor z = shiftedByMax(x, dim, loc);
  return sub(z, log(sum(exp(z, loc), {dim}, true, loc), loc), loc);
}

// ---- statistics ---------------------------------------------------------------------------

// Two passes (mean, then squared deviations): no cancellation, and every step an op.
Tensor var(const Tensor& x, Dims dims, int64_t correction, bool keepdim, const SourceLoc& loc) {
  requireFloating("var", "input", x, loc);
  auto [reduced, count] = reducedDims("var", x, std::move(dims), loc);
  Tensor deviation = sub(x, mean(x, reduced, true, loc), loc);
  Tensor squares = sum(mul(deviation, deviation, loc), reduced, keepdim, loc);
  return div(squares, double(std::max<int64_t>(0, count - correction)), loc);
}

Tensor norm(const Tensor& x, double p, Dims dims, bool keepdim, const SourceLoc& loc) {
  requireFloating("norm", "input", x, loc);
  if (!(p > 0)) throw Error::make(loc, "norm", "p must be positive, got ", p);
  if (p == 2) return sqrt(sum(mul(x, x, loc), std::move(dims), keepdim, loc), loc);
  if (p == 1) return sum(abs(x, loc), std::move(dims), keepdim, loc);
  return pow(sum(pow(abs(x, loc), p, loc), std::move(dims), keepdim, loc), 1.0 / p, loc);
}

// Counts of the zero (nonzero) elements, compared with 0.
Tensor all(const Tensor& x, Dims dims, bool keepdim, const SourceLoc& loc) {
  return eq(sum(convert(logical_not(x, loc), kInt64, loc), std::move(dims), keepdim, loc), 0, loc);
}
Tensor any(const Tensor& x, Dims dims, bool keepdim, const SourceLoc& loc) {
  return ne(sum(convert(x, kBool, loc).to(kInt64, loc), std::move(dims), keepdim, loc), 0, loc);
}

// sqrt through a select, so a zero variance gets gradient 0 rather than 0·∞ = NaN.
Tensor std(const Tensor& x, Dims dims, int64_t correction, bool keepdim, const SourceLoc& loc) {
  requireFloating("std", "input", x, loc);
  Tensor v = var(x, std::move(dims), correction, keepdim, loc);
  Tensor isZero = eq(v, 0.0, loc);
  Tensor root = sqrt(where(isZero, ones_like(v, loc), v, loc), loc);
  return where(isZero, zeros_like(v, loc), root, loc);
}

// ---- normalization ------------------------------------------------------------------------

Tensor layer_norm(const Tensor& x, const Shape& normalizedShape, const Tensor& weight,
                  const Tensor& bias, double eps, const SourceLoc& loc) {
  requireFloating("layer_norm", "input", x, loc);
  const int64_t k = int64_t(normalizedShape.size());
  if (k == 0 || k > x.dim() || !std::equal(normalizedShape.begin(), normalizedShape.end(),
                                           x.sizes().end() - k))
    throw ShapeError::make(loc, "layer_norm", "normalized_shape ", normalizedShape,
                           " does not match the trailing dims of the input of shape ", x.sizes());
  requireShape("layer_norm", "weight", weight, normalizedShape, x, loc);
  requireShape("layer_norm", "bias", bias, normalizedShape, x, loc);
  if (fusable({&x, &weight, &bias})) {
    auto operand = [&](const Tensor& t) {
      return t.defined() ? convert(t, x.dtype(), loc).contiguous(loc) : t;
    };
    return kernels::layerNorm(x.contiguous(loc), numel(normalizedShape), operand(weight),
                              operand(bias), eps, loc);
  }
  Shape dims;
  for (int64_t d = x.dim() - k; d < x.dim(); ++d) dims.push_back(d);
  Tensor deviation = sub(x, mean(x, dims, true, loc), loc);
  Tensor variance = mean(mul(deviation, deviation, loc), dims, true, loc);
  Tensor y = mul(deviation, rsqrt(add(variance, eps, loc), loc), loc);
  if (weight.defined()) y = mul(y, convert(weight, x.dtype(), loc), loc);
  if (bias.defined()) y = add(y, convert(bias, x.dtype(), loc), loc);
  return y;
}

namespace {

// The weight folds into a per-channel scale (and, in evaluation, the running mean into a
// per-channel shift), so the full-size work is two elementwise ops, as PyTorch's CPU
// inference kernel. Statistics and parameters compute in x's dtype.

Tensor batchNorm(const Tensor& x, const Tensor& runningMean, const Tensor& runningVar,
                 const Tensor& weight, const Tensor& bias, bool training, const Momentum& momentum,
                 double eps, const SourceLoc& loc) {
  requireFloating("batch_norm", "input", x, loc);
  if (x.dim() < 2)
    throw ShapeError::make(loc, "batch_norm", "expects an input of shape [N, C, *], got ",
                           x.sizes());
  const int64_t channels = x.sizes()[1];
  requireShape("batch_norm", "running_mean", runningMean, {channels}, x, loc);
  requireShape("batch_norm", "running_var", runningVar, {channels}, x, loc);
  requireShape("batch_norm", "weight", weight, {channels}, x, loc);
  requireShape("batch_norm", "bias", bias, {channels}, x, loc);

  Tensor scale, shift;
  Tensor centered = x;
  if (training) {
    const int64_t count = channels == 0 ? 0 : x.numel() / channels;
    if (count <= 1)
      throw ShapeError::make(loc, "batch_norm", "training needs more than 1 value per channel, "
                             "got an input of shape ", x.sizes());
    Shape dims{0};
    for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
    Tensor batchMean = mean(x, dims, true, loc);
    centered = sub(x, batchMean, loc);
    Tensor squares = sum(mul(centered, centered, loc), dims, true, loc);
    // The count per channel as a tensor (countOver), so that recordings at two batch sizes
    // merge into one dynamic program; a half-precision count could be inexact.
    const bool countTensor = x.dtype() == kFloat32 || x.dtype() == kFloat64;
    const Tensor counted = countTensor ? ops::countOver(x, dims, loc) : Tensor();
    // squares / (count - less)
    auto perCount = [&](double less) {
      if (!countTensor) return div(squares, double(count) - less, loc);
      return div(squares, less == 0 ? counted : sub(counted, less, loc), loc);
    };
    scale = rsqrt(add(perCount(0), eps, loc), loc);
    NoGradGuard noGrad;
    updateRunning(runningMean, batchMean.reshape({channels}, loc), momentum, loc);
    Tensor unbiased = perCount(1);
    updateRunning(runningVar, unbiased.reshape({channels}, loc), momentum, loc);
  } else {
    if (!runningMean.defined() || !runningVar.defined())
      throw Error::make(loc, "batch_norm", "running_mean and running_var must be given in "
                        "evaluation mode (training = false)");
    scale = rsqrt(add(perChannel(runningVar, x, loc), eps, loc), loc);
    shift = neg(perChannel(runningMean, x, loc), loc);
  }
  if (weight.defined()) scale = mul(scale, perChannel(weight, x, loc), loc);
  if (!training) shift = mul(shift, scale, loc);
  if (bias.defined()) {
    Tensor b = perChannel(bias, x, loc);
    shift = shift.defined() ? add(shift, b, loc) : b;
  }
  Tensor y = mul(centered, scale, loc);
  return shift.defined() ? add(y, shift, loc) : y;
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& runningMean, const Tensor& runningVar,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps, const SourceLoc& loc) {
  return batchNorm(x, runningMean, runningVar, weight, bias, training, {momentum, Tensor()}, eps, loc);
}

Tensor batch_norm(const Tensor& x, const Tensor& runningMean, const Tensor& runningVar,
                  const Tensor& weight, const Tensor& bias, bool training, const Tensor& momentum,
                  double eps, const SourceLoc& loc) {
  if (!momentum.defined())
    throw Error::make(loc, "batch_norm", "the momentum is an undefined tensor");
  if (momentum.dim() != 0 || !momentum.is_floating_point())
    throw TypeError::make(loc, "batch_norm", "a tensor momentum must be a 0-d floating-point "
                          "tensor, got a ", momentum.dtype(), " tensor of shape ", momentum.sizes());
  return batchNorm(x, runningMean, runningVar, weight, bias, training, {0.0, momentum}, eps, loc);
}

// ---- losses -------------------------------------------------------------------------------

namespace {
// The operands of an elementwise loss: a floating input and a target of the same shape.
void requireLossOperands(const char* op, const Tensor& input, const Tensor& target, const SourceLoc& loc) {
  requireFloating(op, "input", input, loc);
  if (input.sizes() != target.sizes())
    throw ShapeError::make(loc, op, "input has shape ", input.sizes(),
                           " but target has shape ", target.sizes(),
                           "; they must be equal (broadcasting them is almost always a bug)");
}

Tensor lossDifference(const char* op, const Tensor& input, const Tensor& target, const SourceLoc& loc) {
  requireLossOperands(op, input, target, loc);
  return sub(input, target, loc);
}

// losses·weight where a weight is given (it broadcasts to the losses, as PyTorch's).
Tensor weighted(const Tensor& losses, const Tensor& weight, const SourceLoc& loc) {
  return weight.defined() ? mul(losses, weight, loc) : losses;
}
}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction,
                const SourceLoc& loc) {
  Tensor diff = lossDifference("mse_loss", input, target, loc);
  return reduceLoss(mul(diff, diff, loc), reduction, loc);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction,
               const SourceLoc& loc) {
  return reduceLoss(abs(lossDifference("l1_loss", input, target, loc), loc), reduction, loc);
}

// A select between the two pieces; beta = 0 goes to l1_loss, as 0.5·d²/0 would put NaN
// into the gradient of the branch not taken.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta,
                      const SourceLoc& loc) {
  if (!(beta >= 0)) throw Error::make(loc, "smooth_l1_loss", "beta must be non-negative, got ", beta);
  if (beta == 0) return l1_loss(input, target, reduction, loc);
  Tensor d = abs(lossDifference("smooth_l1_loss", input, target, loc), loc);
  Tensor quadratic = mul(mul(d, d, loc), 0.5 / beta, loc);
  Tensor linear = sub(d, 0.5 * beta, loc);
  return reduceLoss(where(lt(d, beta, loc), quadratic, linear, loc), reduction, loc);
}

// Each log clamped at -100, as PyTorch, so an input of exactly 0 or 1 gives a finite loss.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            Reduction reduction, const SourceLoc& loc) {
  requireLossOperands("binary_cross_entropy", input, target, loc);
  checkProbabilities("binary_cross_entropy", input, loc);
  Tensor logX = clamp(log(input, loc), -100.0, std::nullopt, loc);
  Tensor log1mX = clamp(log(sub(1.0, input, loc), loc), -100.0, std::nullopt, loc);
  Tensor losses = neg(add(mul(target, logX, loc), mul(sub(1.0, target, loc), log1mX, loc), loc), loc);
  return reduceLoss(weighted(losses, weight, loc), reduction, loc);
}

// PyTorch's stable form: (1 - t)·x + (1 + (pos_weight - 1)·t)·(log(1 + e^-|x|) + max(-x, 0)).
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction reduction,
                                        const SourceLoc& loc) {
  requireLossOperands("binary_cross_entropy_with_logits", input, target, loc);
  Tensor softplusNeg = add(log(add(exp(neg(abs(input, loc), loc), loc), 1.0, loc), loc),
                           relu(neg(input, loc), loc), loc);
  if (pos_weight.defined())
    softplusNeg = mul(add(mul(sub(pos_weight, 1.0, loc), target, loc), 1.0, loc), softplusNeg, loc);
  Tensor losses = add(mul(sub(1.0, target, loc), input, loc), softplusNeg, loc);
  return reduceLoss(weighted(losses, weight, loc), reduction, loc);
}

Tensor nll_loss(const Tensor& logProbs, const Tensor& target, Reduction reduction,
                const Tensor& weight, int64_t ignoreIndex, const SourceLoc& loc) {
  return nllLoss("nll_loss", logProbs, target, reduction, weight, ignoreIndex, loc);
}

Tensor nll_loss(const Tensor& logProbs, const Tensor& target, const Tensor& weight, Reduction reduction,
                int64_t ignoreIndex, const SourceLoc& loc) {
  return nllLoss("nll_loss", logProbs, target, reduction, weight, ignoreIndex, loc);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, Reduction reduction,
                     const Tensor& weight, int64_t ignoreIndex, const SourceLoc& loc) {
  requireFloating("cross_entropy", "input", logits, loc);
  if (logits.dim() == 0)
    throw ShapeError::make(loc, "cross_entropy", "input must have a class dim, got a 0-d tensor");
  const int64_t classDim = logits.dim() == 1 ? 0 : 1;
  if (!target.is_floating_point())
    return nllLoss("cross_entropy", log_softmax(logits, classDim, loc), target, reduction, weight,
                   ignoreIndex, loc);
  // Class probabilities.
  if (target.sizes() != logits.sizes())
    throw ShapeError::make(loc, "cross_entropy", "a floating-point target holds class "
                           "probabilities and must have the input's shape ", logits.sizes(),
                           ", got ", target.sizes());
  const int64_t classes = logits.sizes()[classDim];
  requireShape("cross_entropy", "weight", weight, {classes}, logits, loc);
  Tensor terms = mul(log_softmax(logits, classDim, loc), convert(target, logits.dtype(), loc), loc);
  if (weight.defined())
    terms = mul(terms, classDim == 0 ? convert(weight, logits.dtype(), loc)
                                     : perChannel(weight, logits, loc), loc);
  return reduceLoss(neg(sum(terms, {classDim}, false, loc), loc), reduction, loc);
}

// ---- embedding ----------------------------------------------------------------------------

Tensor embedding(const Tensor& weight, const Tensor& indices, const SourceLoc& loc) {
  if (weight.dim() != 2)
    throw ShapeError::make(loc, "embedding", "weight must be 2-d [num_embeddings, dim], got shape ",
                           weight.sizes());
  requireIntegral("embedding", "indices", indices, loc);
  checkIndexRange("embedding", "index", indices, weight.sizes()[0], "embeddings", std::nullopt,
                  "weight", weight, loc);
  return take(weight, indices, 0, loc);
}

namespace {
// x times a keep mask of `maskShape` (broadcast to x), scaled by 1/(1-p).
Tensor dropoutWithMask(const char* op, const Tensor& x, double p, bool training, const Shape& maskShape,
                       const SourceLoc& loc) {
  if (!(p >= 0.0 && p <= 1.0))
    throw Error::make(loc, op, "probability must be in [0, 1], got ", p);
  if (!x.is_floating_point())
    throw TypeError::make(loc, op, "expects a floating-point tensor, got ", x.dtype(),
                          " of shape ", x.sizes());
  if (!training || p == 0.0) return x;
  if (p == 1.0) return mul(x, zeros_like(x, loc), loc);
  Tensor keep = bernoulli(maskShape, 1.0 - p, TensorOptions(x.dtype()).device(x.device()), loc);
  return mul(x, mul(keep, 1.0 / (1.0 - p), loc), loc);
}
}  // namespace

Tensor dropout(const Tensor& x, double p, bool training, const SourceLoc& loc) {
  return dropoutWithMask("dropout", x, p, training, x.sizes(), loc);
}

Tensor dropout2d(const Tensor& x, double p, bool training, const SourceLoc& loc) {
  if (x.dim() != 3 && x.dim() != 4)
    throw ShapeError::make(loc, "dropout2d", "expects a [N, C, H, W] or [C, H, W] input, got shape ",
                           x.sizes());
  Shape mask = x.sizes();
  std::fill(mask.end() - 2, mask.end(), 1);
  return dropoutWithMask("dropout2d", x, p, training, mask, loc);
}

}  // namespace kiln
