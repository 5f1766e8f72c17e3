// Adam and AdamW against PyTorch 1.13 (OptimGoldens.h): defaults, amsgrad with weight
// decay, float32, decoupled decay, maximize, and the capturable form; their state.
#include <gtest/gtest.h>

#include "kiln/core/Ops.h"
#include "kiln/optim/Adam.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/optim/OptimTestSupport.h"

namespace kiln::optim {
namespace {

using kiln::testing::at;
using testing::expectGoldenRun;

TEST(Adam, DefaultsAreLibTorchs) {
  AdamOptions adam;
  EXPECT_EQ(adam.lr(), 1e-3);
  EXPECT_EQ(adam.betas(), Betas(0.9, 0.999));
  EXPECT_EQ(adam.eps(), 1e-8);
  EXPECT_EQ(adam.weight_decay(), 0);
  EXPECT_FALSE(adam.amsgrad());
  EXPECT_FALSE(adam.capturable());
  AdamWOptions adamw(0.5);
  EXPECT_EQ(adamw.lr(), 0.5);
  EXPECT_EQ(adamw.weight_decay(), 1e-2);
}

TEST(Adam, StepsMatchPyTorch) {
  expectGoldenRun("adam", kFloat64, [](std::vector<Tensor>& params) {
    return std::make_unique<Adam>(params, AdamOptions(0.01));
  });
}

TEST(Adam, AmsgradWithWeightDecayMatchesPyTorch) {
  expectGoldenRun("adam_amsgrad_wd", kFloat64, [](std::vector<Tensor>& params) {
    return std::make_unique<Adam>(params, AdamOptions(0.02)
                                              .betas({0.8, 0.99})
                                              .eps(1e-6)
                                              .weight_decay(0.1)
                                              .amsgrad(true));
  });
}

TEST(Adam, Float32MatchesPyTorch) {
  expectGoldenRun("adam_f32", kFloat32, [](std::vector<Tensor>& params) {
    return std::make_unique<Adam>(params, AdamOptions(0.01));
  });
}

TEST(Adam, CapturableFormMatchesPyTorchs) {
  expectGoldenRun("adam_capturable_f32", kFloat32, [](std::vector<Tensor>& params) {
    return std::make_unique<Adam>(params, AdamOptions(0.01).capturable(true));
  });
  expectGoldenRun("adam_capturable_amsgrad", kFloat64, [](std::vector<Tensor>& params) {
    return std::make_unique<Adam>(
        params, AdamOptions(0.01).weight_decay(0.1).amsgrad(true).capturable(true));
  });
}

TEST(AdamW, DecoupledWeightDecayMatchesPyTorch) {
  expectGoldenRun("adamw", kFloat64, [](std::vector<Tensor>& params) {
    return std::make_unique<AdamW>(params, AdamWOptions(0.01).weight_decay(0.1));
  });
}

TEST(AdamW, AmsgradAndMaximizeMatchPyTorch) {
  expectGoldenRun("adamw_amsgrad_maximize", kFloat64, [](std::vector<Tensor>& params) {
    return std::make_unique<AdamW>(
        params, AdamWOptions(0.01).weight_decay(0.05).amsgrad(true).maximize(true));
  });
}

TEST(Adam, StateIsMadeOnTheFirstStepAndTheStepCountIsAFloat32Scalar) {
  std::vector<Tensor> params = testing::makeParams(kFloat64);
  Adam opt(params, AdamOptions(0.01).amsgrad(true));
  EXPECT_EQ(opt.state(params[0]), nullptr);
  testing::setGrads(params, 0);
  opt.step();
  const OrderedDict<Tensor>* state = opt.state(params[0]);
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(state->keys(), (std::vector<std::string>{"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}));
  const Tensor& step = state->at("step");
  EXPECT_EQ(step.dtype(), kFloat32);  // torch.tensor(0.) whatever the parameter's dtype
  EXPECT_EQ(step.dim(), 0);
  EXPECT_EQ(step.item<double>(), 1.0);
  EXPECT_EQ(state->at("exp_avg").dtype(), kFloat64);
  EXPECT_EQ(state->at("exp_avg").sizes(), (Shape{2, 3}));
}

TEST(Adam, AmsgradTurnedOnLaterStartsItsMaximumAtZero) {
  std::vector<Tensor> params = testing::makeParams(kFloat64);
  Adam opt(params, AdamOptions(0.01));
  testing::setGrads(params, 0);
  opt.step();
  static_cast<AdamOptions&>(opt.param_groups()[0].options()).amsgrad(true);
  testing::setGrads(params, 1);
  opt.step();
  EXPECT_TRUE(opt.state(params[0])->contains("max_exp_avg_sq"));
}

TEST(Adam, RejectsWhatPyTorchRejects) {
  std::vector<Tensor> params = testing::makeParams(kFloat32);
  EXPECT_KILN_ERROR(Adam(params, AdamOptions(-1)), Error,
                    "kiln::optim::Adam: invalid learning rate -1 (must be >= 0)" + at());
  EXPECT_KILN_ERROR(Adam(params, AdamOptions().eps(-1e-8)), Error,
                    "kiln::optim::Adam: invalid eps -1e-08 (must be >= 0)" + at());
  EXPECT_KILN_ERROR(Adam(params, AdamOptions().betas({1.0, 0.999})), Error,
                    "kiln::optim::Adam: invalid beta1 1 (must be in [0, 1))" + at());
  EXPECT_KILN_ERROR(AdamW(params, AdamWOptions().betas({0.9, -0.1})), Error,
                    "kiln::optim::AdamW: invalid beta2 -0.1 (must be in [0, 1))" + at());
  EXPECT_KILN_ERROR(AdamW(params, AdamWOptions().weight_decay(-1)), Error,
                    "kiln::optim::AdamW: invalid weight_decay -1 (must be >= 0)" + at());
}

}  // namespace
}  // namespace kiln::optim
