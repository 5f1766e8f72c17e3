// Loss modules: CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, SmoothL1Loss, BCELoss and
// BCEWithLogitsLoss, forward(input, target).
#pragma once

#include "kiln/core/Functional.h"
#include "kiln/nn/Arg.h"
#include "kiln/nn/ModuleHolder.h"

namespace kiln::nn {

struct CrossEntropyLossOptions {
  // Per-class weights [C]; registered as the buffer "weight" when given, as PyTorch.
  KILN_ARG(Tensor, weight);
  KILN_ARG(int64_t, ignore_index) = -100;
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
};
using NLLLossOptions = CrossEntropyLossOptions;

// kiln::cross_entropy(logits, target, ...): class indices or class probabilities.
class CrossEntropyLossImpl : public Module {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target,
                 const SourceLoc& loc = SourceLoc::current());
  CrossEntropyLossOptions options;
  Tensor weight;
};
KILN_MODULE(CrossEntropyLoss);

// kiln::nll_loss(log_probs, target, ...).
class NLLLossImpl : public Module {
 public:
  explicit NLLLossImpl(const NLLLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target,
                 const SourceLoc& loc = SourceLoc::current());
  NLLLossOptions options;
  Tensor weight;
};
KILN_MODULE(NLLLoss);

struct MSELossOptions {
  MSELossOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  KILN_ARG(Reduction, reduction);
};

class MSELossImpl : public Module {
 public:
  explicit MSELossImpl(const MSELossOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target,
                 const SourceLoc& loc = SourceLoc::current());
  MSELossOptions options;
};
KILN_MODULE(MSELoss);

using L1LossOptions = MSELossOptions;

// kiln::l1_loss(input, target, reduction).
class L1LossImpl : public Module {
 public:
  explicit L1LossImpl(const L1LossOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target,
                 const SourceLoc& loc = SourceLoc::current());
  L1LossOptions options;
};
KILN_MODULE(L1Loss);

struct SmoothL1LossOptions {
  SmoothL1LossOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  KILN_ARG(Reduction, reduction);
  KILN_ARG(double, beta) = 1.0;
};

// kiln::smooth_l1_loss(input, target, reduction, beta).
class SmoothL1LossImpl : public Module {
 public:
  explicit SmoothL1LossImpl(const SmoothL1LossOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target,
                 const SourceLoc& loc = SourceLoc::current());
  SmoothL1LossOptions options;
};
KILN_MODULE(SmoothL1Loss);

struct BCELossOptions {
  // Broadcast to the input; registered as the buffer "weight" when given, as PyTorch.
  KILN_ARG(Tensor, weight);
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
};

// kiln::binary_cross_entropy(input, target, weight, reduction).
class BCELossImpl : public Module {
 public:
  explicit BCELossImpl(const BCELossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target,
                 const SourceLoc& loc = SourceLoc::current());
  BCELossOptions options;
  Tensor weight;
};
KILN_MODULE(BCELoss);

struct BCEWithLogitsLossOptions {
  // Both registered as buffers ("weight", "pos_weight") when given, as PyTorch.
  KILN_ARG(Tensor, weight);
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
  KILN_ARG(Tensor, pos_weight);
};

// kiln::binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction).
class BCEWithLogitsLossImpl : public Module {
 public:
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target,
                 const SourceLoc& loc = SourceLoc::current());
  BCEWithLogitsLossOptions options;
  Tensor weight, pos_weight;
};
KILN_MODULE(BCEWithLogitsLoss);

}  // namespace kiln::nn
