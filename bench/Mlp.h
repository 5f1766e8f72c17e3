// The MLP training step both runners time (workload 2: 784-256-256-10, batch 128, SGD), eager
// and traced as docs/ARCHITECTURE.md §1 writes it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/Harness.h"
#include "kiln/kiln.h"

namespace kiln::bench {

using kiln::Tensor;

inline constexpr int64_t kBatch = 128;

struct KilnMlp {
  kiln::nn::Sequential model;
  kiln::optim::SGD opt;

  static kiln::nn::Sequential build() {
    kiln::manual_seed(0);
    return kiln::nn::Sequential(kiln::nn::Linear(784, 256), kiln::nn::ReLU(),
                                kiln::nn::Linear(256, 256), kiln::nn::ReLU(),
                                kiln::nn::Linear(256, 10));
  }
  KilnMlp() : model(build()), opt(model->parameters(), kiln::optim::SGDOptions(0.01)) {}

  Tensor step(const Tensor& x, const Tensor& y) {
    Tensor loss = kiln::cross_entropy(model->forward(x), y);
    opt.zero_grad(/*set_to_none=*/true);
    loss.backward();
    opt.step();
    return loss;
  }
};

// The step traced as docs/ARCHITECTURE.md §1 writes it: symbolic, modules and optimizer named.
inline std::function<Tensor(const Tensor&, const Tensor&)> tracedStep(std::shared_ptr<KilnMlp> mlp,
                                                              std::string backend = "") {
  kiln::jit::TraceOptions options{.symbolic = true, .name = "mlp_step"};
  options.compile.backend = std::move(backend);
  auto t = kiln::jit::trace([mlp](Tensor x, Tensor y) { return mlp->step(x, y); }, options);
  t.name_module("model", mlp->model).name_optimizer("opt", mlp->opt);
  return [t](const Tensor& x, const Tensor& y) { return t(x, y); };
}

struct MlpData {
  Tensor x, y;
  static MlpData make() {
    std::vector<float> host = hostValues({kBatch, 784}, 5);
    kiln::manual_seed(7);
    return {kilnTensor(host, {kBatch, 784}), kiln::randint(0, 10, {kBatch})};
  }
};

}  // namespace kiln::bench
