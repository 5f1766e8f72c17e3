// The layers of the compatibility corpus (ConvTranspose2d, Dropout2d, the BCE losses) and
// a create_graph gradient penalty recorded by jit::trace: a traced training step gives
// eager's losses, gradients and weights bit for bit. Run with KILN_JIT_BACKEND=INTERP,
// which runs the eager kernels.
#include <gtest/gtest.h>

#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Random.h"
#include "kiln/jit/Trace.h"
#include "kiln/nn/Modules.h"
#include "kiln/optim/Adam.h"
#include "test/unit/jit/TraceTestSupport.h"

namespace kiln {
namespace {

using testing::sameBits;

// A DCGAN-shaped generator and discriminator in one model.
struct Gan {
  nn::ConvTranspose2d up{nn::ConvTranspose2dOptions(6, 4, 4).stride(2).padding(1)};
  nn::ConvTranspose2d out{nn::ConvTranspose2dOptions(4, 2, 3).stride(2).padding(1).output_padding(1).groups(2)};
  nn::Dropout2d drop{0.3};
  nn::Conv2d judge{nn::Conv2dOptions(2, 1, 8)};
  std::vector<Tensor> parameters() {
    std::vector<Tensor> all;
    for (nn::Module* m : std::vector<nn::Module*>{up.get(), out.get(), judge.get()})
      for (const Tensor& p : m->parameters()) all.push_back(p);
    return all;
  }
};

Tensor step(Gan& gan, optim::Adam& opt, const Tensor& noise, const Tensor& labels) {
  Tensor image = tanh(gan.out->forward(gan.drop->forward(relu(gan.up->forward(noise)))));
  Tensor logits = gan.judge->forward(image).reshape({-1});
  Tensor loss = add(binary_cross_entropy_with_logits(logits, labels),
                    binary_cross_entropy(sigmoid(logits), sub(1.0, labels)));
  opt.zero_grad(/*set_to_none=*/true);
  loss.backward();
  opt.step();
  return loss;
}

TEST(TracedLayersTest, GanStepMatchesEagerBitwise) {
  std::vector<std::pair<Tensor, Tensor>> batches;
  manual_seed(7);
  for (int i = 0; i < 4; ++i) batches.push_back({randn({3, 6, 2, 2}), bernoulli({3}, 0.5)});

  manual_seed(1);
  Gan eager;
  optim::Adam eagerOpt(eager.parameters(), optim::AdamOptions(0.01).capturable(true));
  manual_seed(1);
  Gan traced;
  optim::Adam tracedOpt(traced.parameters(), optim::AdamOptions(0.01).capturable(true));

  manual_seed(2);
  std::vector<Tensor> eagerLosses;
  for (const auto& [noise, labels] : batches) eagerLosses.push_back(step(eager, eagerOpt, noise, labels));
  manual_seed(2);
  auto trainStep = jit::trace([&](Tensor noise, Tensor labels) { return step(traced, tracedOpt, noise, labels); });
  for (size_t i = 0; i < batches.size(); ++i)
    EXPECT_TRUE(sameBits(trainStep(batches[i].first, batches[i].second), eagerLosses[i])) << "step " << i;
  EXPECT_EQ(trainStep.num_traces(), 1u);
  std::vector<Tensor> want = eager.parameters(), got = traced.parameters();
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(sameBits(got[i], want[i])) << "parameter " << i;
    EXPECT_TRUE(sameBits(got[i].grad(), want[i].grad())) << "gradient " << i;
  }
  EXPECT_NE(trainStep.graph_str().find("kiln.conv2d"), std::string::npos);
}

// A WGAN-GP style step: the penalty on |d critic / d x| needs the gradient with
// create_graph, so the traced step records a backward pass inside the forward one and
// differentiates it again.
Tensor penaltyStep(nn::Sequential& critic, optim::Adam& opt, const Tensor& x) {
  Tensor input = x.detach().requires_grad_();
  Tensor score = critic->forward(input);
  Tensor dx = autograd::grad({score}, {input}, {ones_like(score)}, /*retain_graph=*/true,
                             /*create_graph=*/true)[0];
  Tensor loss = add(mean(score), mul(pow(sub(norm(dx, 2, {1}), 1.0), 2.0).mean(), 10.0));
  opt.zero_grad(/*set_to_none=*/true);
  loss.backward();
  opt.step();
  return loss;
}

TEST(TracedLayersTest, GradientPenaltyStepMatchesEagerBitwise) {
  auto makeCritic = [] {
    manual_seed(3);
    return nn::Sequential(nn::Linear(4, 8), nn::Tanh(), nn::Linear(8, 1));
  };
  nn::Sequential eager = makeCritic(), traced = makeCritic();
  optim::Adam eagerOpt(eager->parameters(), optim::AdamOptions(0.01).capturable(true));
  optim::Adam tracedOpt(traced->parameters(), optim::AdamOptions(0.01).capturable(true));
  manual_seed(4);
  std::vector<Tensor> batches{randn({5, 4}), randn({5, 4}), randn({5, 4})};
  std::vector<Tensor> eagerLosses;
  for (const Tensor& x : batches) eagerLosses.push_back(penaltyStep(eager, eagerOpt, x));
  auto trainStep = jit::trace([&](Tensor x) { return penaltyStep(traced, tracedOpt, x); });
  for (size_t i = 0; i < batches.size(); ++i)
    EXPECT_TRUE(sameBits(trainStep(batches[i]), eagerLosses[i])) << "step " << i;
  EXPECT_EQ(trainStep.num_traces(), 1u);
  std::vector<Tensor> want = eager->parameters(), got = traced->parameters();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(sameBits(got[i], want[i])) << "parameter " << i;
}

}  // namespace
}  // namespace kiln
