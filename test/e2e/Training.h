// The models and training step of TrainingParityTest, shared with the tests that compile
// its graphs for the GPU generators (test/gpu: every e2e graph's kernels assemble).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln.h"

namespace kiln::e2e {

// 64-128-128-10 with ReLUs (batch 32 in the tests), from seed 0.
nn::Sequential trainingMlp();
// mobilenet_v2(10 classes, width 0.25): BatchNorm and Dropout (4x3x32x32), from seed 0.
vision::MobileNetV2 trainingMobileNet();

// One training step: cross_entropy, zero_grad(set_to_none), backward, the optimizer's step.
template <class Model, class Optimizer>
Tensor trainingStep(Model& model, Optimizer& opt, const Tensor& x, const Tensor& y) {
  Tensor loss = cross_entropy(model->forward(x), y);
  opt.zero_grad(/*set_to_none=*/true);
  loss.backward();
  opt.step();
  return loss;
}

// Each model's step with SGD and momentum, as recorded text (the momentum buffers made by
// an eager step first, so the one recording is the steady state): ("<name> (by value)" or
// "(symbolic)", text), recorded without compiling.
std::vector<std::pair<std::string, std::string>> recordedTrainingGraphs(bool symbolic);

}  // namespace kiln::e2e
