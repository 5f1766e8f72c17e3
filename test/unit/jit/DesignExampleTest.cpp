// docs/ARCHITECTURE.md §1's example, as written there (one include, the MLP, a traced symbolic
// training step and a traced inference function), so the documented API keeps compiling
// and the traced step keeps matching eager training.
#include "kiln/kiln.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using namespace kiln;

struct Example {
  nn::Sequential model = [] {
    manual_seed(0);
    return nn::Sequential(nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 10));
  }();
  optim::SGD opt{model->parameters(), /*lr=*/0.1};
};

TEST(DesignExampleTest, TracedTrainingStepAndInference) {
  manual_seed(1);
  std::vector<std::pair<Tensor, Tensor>> loader;
  for (int i = 0; i < 4; ++i) loader.emplace_back(randn({16, 784}), randint(0, 10, {16}));

  Example eager;
  std::vector<float> eagerLosses;
  for (auto& [x, y] : loader) {
    Tensor loss = nn::functional::cross_entropy(eager.model->forward(x), y);
    eager.opt.zero_grad(/*set_to_none=*/true);
    loss.backward();
    eager.opt.step();
    eagerLosses.push_back(loss.item<float>());
  }

  Example traced;
  auto& model = traced.model;
  auto& opt = traced.opt;
  auto train_step = jit::trace([&](Tensor x, Tensor y) {
    Tensor loss = nn::functional::cross_entropy(model->forward(x), y);
    opt.zero_grad(/*set_to_none=*/true);
    loss.backward();
    opt.step();
    return loss;
  }, {.symbolic = true});
  std::vector<float> losses;
  for (auto& [x, y] : loader) losses.push_back(train_step(x, y).item<float>());
  // Compiled (the default backend) within the compiled tolerance; bit for bit when
  // KILN_JIT_BACKEND=INTERP.
  ASSERT_EQ(losses.size(), eagerLosses.size());
  for (size_t i = 0; i < losses.size(); ++i)
    EXPECT_NEAR(losses[i], eagerLosses[i], 1e-5 * std::abs(eagerLosses[i]) + 1e-6) << "step " << i;

  auto infer = jit::trace([&](Tensor x) { return model->forward(x); },
                          {.capture_as_const = true});
  Tensor example = loader[0].first;
  Tensor logits = infer(example);
  EXPECT_EQ(logits.sizes(), (Shape{16, 10}));
}

}  // namespace
