// The MLP training step the benchmarks share (bench/traced, bench/dynamic): 784-256-256-10
// with ReLU, cross-entropy and plain SGD, seeded, as docs/BENCHMARKS.md's workload 2.
#pragma once

#include "kiln/kiln.h"

namespace kiln::bench {

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

  kiln::Tensor step(const kiln::Tensor& x, const kiln::Tensor& y) {
    kiln::Tensor loss = kiln::cross_entropy(model->forward(x), y);
    opt.zero_grad(/*set_to_none=*/true);
    loss.backward();
    opt.step();
    return loss;
  }
};

}  // namespace kiln::bench
