// Composite tensor ops (activations, softmax, normalization, losses, embedding) written
// with the public ops of Ops.h, so autograd and the tracer see their insides (ARCHITECTURE.md §4).
#pragma once

#include <optional>
#include <string_view>

#include "kiln/core/Ops.h"

namespace kiln {

// How a loss combines its per-element values (LibTorch's at::Reduction).
enum class Reduction { None, Mean, Sum };
// LibTorch's spellings: smooth_l1_loss(x, y, kSum).
inline constexpr Reduction kNone = Reduction::None;
inline constexpr Reduction kMean = Reduction::Mean;
inline constexpr Reduction kSum = Reduction::Sum;

// ---- activations ------------------------------------------------------------------------
// min(max(x, 0), 6); the gradient is 1 strictly inside (0, 6), as PyTorch's hardtanh.
Tensor relu6(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
// approximate "none": x·Φ(x) (the kiln.gelu primitive); "tanh": PyTorch's tanh
// approximation, composed of primitives.
Tensor gelu(const Tensor& x, std::string_view approximate = "none",
            const SourceLoc& loc = SourceLoc::current());
// x·sigmoid(x).
Tensor silu(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01,
                  const SourceLoc& loc = SourceLoc::current());
// torch.clamp: NaN propagates; min > max gives max everywhere; the gradient flows where
// min <= x <= max. At least one bound must be given.
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max = std::nullopt,
             const SourceLoc& loc = SourceLoc::current());

// ---- softmax ------------------------------------------------------------------------------
// Shifted by the max along `dim` for stability (the shift carries no gradient).
Tensor softmax(const Tensor& x, int64_t dim, const SourceLoc& loc = SourceLoc::current());
Tensor log_softmax(const Tensor& x, int64_t dim, const SourceLoc& loc = SourceLoc::current());

// ---- statistics ---------------------------------------------------------------------------
// Over `dims` (all dims when empty), dividing by max(0, N - correction) as torch.var.
Tensor var(const Tensor& x, Dims dims = {}, int64_t correction = 1, bool keepdim = false,
           const SourceLoc& loc = SourceLoc::current());
// sqrt(var); the gradient where the result is 0 is 0, as PyTorch.
Tensor std(const Tensor& x, Dims dims = {}, int64_t correction = 1, bool keepdim = false,
           const SourceLoc& loc = SourceLoc::current());

// The p-norm over `dims` (all dims when empty): (Σ|x|^p)^(1/p); p = 2 is sqrt(Σx²), whose
// gradient at a zero norm is NaN here (PyTorch gives 0).
Tensor norm(const Tensor& x, double p = 2, Dims dims = {}, bool keepdim = false,
            const SourceLoc& loc = SourceLoc::current());
// Whether every (any) element over `dims` is nonzero, as a bool tensor.
Tensor all(const Tensor& x, Dims dims = {}, bool keepdim = false,
           const SourceLoc& loc = SourceLoc::current());
Tensor any(const Tensor& x, Dims dims = {}, bool keepdim = false,
           const SourceLoc& loc = SourceLoc::current());

// ---- normalization ------------------------------------------------------------------------
// Normalizes over the trailing dims `normalized_shape` (biased variance); `weight` and
// `bias` (undefined = none) have shape `normalized_shape`.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5,
                  const SourceLoc& loc = SourceLoc::current());
// x is [N, C, *]. Training normalizes with the batch statistics (biased variance) and, when
// running_mean/running_var are given, updates them in place without history:
// running = (1 - momentum)·running + momentum·batch, with the unbiased batch variance.
// Evaluation normalizes with the running statistics, which it then requires.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                  bool training = false, double momentum = 0.1, double eps = 1e-5,
                  const SourceLoc& loc = SourceLoc::current());
// The same with the momentum a 0-d floating tensor, read when the op runs (BatchNorm2d's
// cumulative average, 1 / num_batches_tracked, under a trace) and rounded as a number is.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, const Tensor& momentum,
                  double eps = 1e-5, const SourceLoc& loc = SourceLoc::current());

// ---- losses -------------------------------------------------------------------------------
// (input - target)², reduced. The shapes must be equal (PyTorch broadcasts with a warning;
// that is almost always a bug, so here it is a ShapeError).
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                const SourceLoc& loc = SourceLoc::current());
// |input - target|, reduced; the shapes must be equal, as for mse_loss.
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
               const SourceLoc& loc = SourceLoc::current());
// Huber-like: 0.5·d²/beta where d = |input - target| < beta, else d - 0.5·beta, reduced;
// beta = 0 is l1_loss. The shapes must be equal, as for mse_loss.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      Reduction reduction = Reduction::Mean, double beta = 1.0,
                      const SourceLoc& loc = SourceLoc::current());
// log_probs [N, C, *] (or [C]) and integer class indices target [N, *] (or []):
// -weight[t]·log_probs[n, t, *]. Mean divides by the summed weights of the targets that are
// not `ignore_index`, as PyTorch.
Tensor nll_loss(const Tensor& log_probs, const Tensor& target,
                Reduction reduction = Reduction::Mean, const Tensor& weight = Tensor(),
                int64_t ignore_index = -100, const SourceLoc& loc = SourceLoc::current());
// -weight·(target·log(input) + (1 - target)·log(1 - input)), reduced; input holds
// probabilities, each log is clamped at -100 (as PyTorch), weight broadcasts to input.
// The shapes must be equal, as for mse_loss.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                            Reduction reduction = Reduction::Mean,
                            const SourceLoc& loc = SourceLoc::current());
// binary_cross_entropy(sigmoid(input), target) in a form stable for large |input|;
// pos_weight (broadcast to input, per class when it has the last dim's size) weighs the
// positive term.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight = Tensor(), const Tensor& pos_weight = Tensor(),
                                        Reduction reduction = Reduction::Mean,
                                        const SourceLoc& loc = SourceLoc::current());
// LibTorch's argument order, weight before reduction: nll_loss(out, target, {}, kSum).
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const Tensor& weight,
                Reduction reduction = Reduction::Mean, int64_t ignore_index = -100,
                const SourceLoc& loc = SourceLoc::current());
// nll_loss(log_softmax(logits, class dim), target). A floating target of the logits' shape
// holds class probabilities instead: -Σ_c weight[c]·target[c]·log_softmax[c], and Mean
// divides by N.
Tensor cross_entropy(const Tensor& logits, const Tensor& target,
                     Reduction reduction = Reduction::Mean, const Tensor& weight = Tensor(),
                     int64_t ignore_index = -100, const SourceLoc& loc = SourceLoc::current());

// ---- dropout --------------------------------------------------------------------------
// In training, zeroes each element with probability p and scales the rest by 1/(1-p)
// (a bernoulli mask from the default generator, kiln.rng in a trace); the identity
// otherwise.
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true,
               const SourceLoc& loc = SourceLoc::current());
// Channel-wise dropout (torch.dropout2d): zeroes whole [H, W] planes of a [N, C, H, W] or
// unbatched [C, H, W] input, one draw per (n, c), and scales the rest by 1/(1-p).
Tensor dropout2d(const Tensor& x, double p = 0.5, bool training = true,
                 const SourceLoc& loc = SourceLoc::current());

// ---- embedding ----------------------------------------------------------------------------
// Rows of weight [V, D] picked by integer indices: shape indices.shape ++ [D]
// (torch::embedding's argument order).
Tensor embedding(const Tensor& weight, const Tensor& indices,
                 const SourceLoc& loc = SourceLoc::current());

}  // namespace kiln
