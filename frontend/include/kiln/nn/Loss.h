// Loss modules: CrossEntropyLoss, NLLLoss and MSELoss, forward(input, target).
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

}  // namespace kiln::nn
