// Activation modules: ReLU, ReLU6, LeakyReLU, GELU, SiLU, Sigmoid, Tanh, Softmax.
#pragma once

#include <string>

#include "kiln/nn/Arg.h"
#include "kiln/nn/ModuleHolder.h"

namespace kiln::nn {

// max(x, 0).
class ReLUImpl : public Module {
 public:
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
};
KILN_MODULE(ReLU);

// min(max(x, 0), 6).
class ReLU6Impl : public Module {
 public:
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
};
KILN_MODULE(ReLU6);

struct LeakyReLUOptions {
  KILN_ARG(double, negative_slope) = 0.01;
};

// x for x >= 0, negative_slope·x otherwise.
class LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
  void pretty_print(std::ostream& os) const override;
  LeakyReLUOptions options;
};
KILN_MODULE(LeakyReLU);

struct GELUOptions {
  // "none" (exact, erf) or "tanh".
  KILN_ARG(std::string, approximate) = "none";
};

class GELUImpl : public Module {
 public:
  explicit GELUImpl(const GELUOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
  void pretty_print(std::ostream& os) const override;
  GELUOptions options;
};
KILN_MODULE(GELU);

// x·sigmoid(x).
class SiLUImpl : public Module {
 public:
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
};
KILN_MODULE(SiLU);

class SigmoidImpl : public Module {
 public:
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
};
KILN_MODULE(Sigmoid);

class TanhImpl : public Module {
 public:
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
};
KILN_MODULE(Tanh);

struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as LibTorch
  KILN_ARG(int64_t, dim);
};

// softmax along options.dim().
class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(const SoftmaxOptions& options) : options(options) {}
  explicit SoftmaxImpl(int64_t dim) : options(dim) {}
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());
  void pretty_print(std::ostream& os) const override;
  SoftmaxOptions options;
};
KILN_MODULE(Softmax);

}  // namespace kiln::nn
