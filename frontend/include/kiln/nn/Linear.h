// Linear, Identity and Flatten: the modules of a multilayer perceptron besides activations.
#pragma once

#include "kiln/nn/Arg.h"
#include "kiln/nn/ModuleHolder.h"

namespace kiln::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  KILN_ARG(int64_t, in_features);
  KILN_ARG(int64_t, out_features);
  KILN_ARG(bool, bias) = true;
};

// y = x·weightᵀ + bias, weight [out, in] and bias [out]; PyTorch's default initialization
// (kaiming_uniform_ with a = √5, which is U(±1/√in), and bias U(±1/√in)).
class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features)
      : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);

  // Draws fresh weights with the default scheme.
  void reset_parameters(const SourceLoc& loc = SourceLoc::current());
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
  void pretty_print(std::ostream& os) const override;

  LinearOptions options;
  Tensor weight;
  Tensor bias;  // undefined with bias(false)
};
KILN_MODULE(Linear);

// Returns its input.
class IdentityImpl : public Module {
 public:
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current()) { return x; }
};
KILN_MODULE(Identity);

struct FlattenOptions {
  KILN_ARG(int64_t, start_dim) = 1;
  KILN_ARG(int64_t, end_dim) = -1;
};

// Merges dims start_dim..end_dim (by default all but the batch dim).
class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
  void pretty_print(std::ostream& os) const override;
  FlattenOptions options;
};
KILN_MODULE(Flatten);

}  // namespace kiln::nn
