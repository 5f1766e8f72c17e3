// SGD against PyTorch 1.13 (OptimGoldens.h): plain, momentum with dampening and weight
// decay, Nesterov, maximize in float32, per-group options; the momentum buffer; errors.
#include <gtest/gtest.h>

#include "kiln/core/Ops.h"
#include "kiln/optim/SGD.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/optim/OptimTestSupport.h"

namespace kiln::optim {
namespace {

using kiln::testing::at;
using testing::closeTo;
using testing::expectGoldenRun;

TEST(SGD, PlainStepsMatchPyTorch) {
  expectGoldenRun("sgd_plain", kFloat64, [](std::vector<Tensor>& params) {
    return std::make_unique<SGD>(params, /*lr=*/0.1);  // docs/ARCHITECTURE.md §1's spelling
  });
}

TEST(SGD, MomentumDampeningAndWeightDecayMatchPyTorch) {
  expectGoldenRun("sgd_momentum", kFloat64, [](std::vector<Tensor>& params) {
    return std::make_unique<SGD>(
        params, SGDOptions(0.1).momentum(0.9).dampening(0.1).weight_decay(0.01));
  });
}

TEST(SGD, NesterovMatchesPyTorch) {
  expectGoldenRun("sgd_nesterov", kFloat64, [](std::vector<Tensor>& params) {
    return std::make_unique<SGD>(
        params, SGDOptions(0.05).momentum(0.8).nesterov(true).weight_decay(0.05));
  });
}

TEST(SGD, MaximizeInFloat32MatchesPyTorch) {
  expectGoldenRun("sgd_maximize_f32", kFloat32, [](std::vector<Tensor>& params) {
    return std::make_unique<SGD>(params, SGDOptions(0.1).momentum(0.5).maximize(true));
  });
}

TEST(SGD, ParamGroupsWithTheirOwnOptionsMatchPyTorch) {
  expectGoldenRun("sgd_groups", kFloat64, [](std::vector<Tensor>& params) {
    std::vector<OptimizerParamGroup> groups;
    groups.emplace_back(std::vector<Tensor>{params[0]});
    groups.emplace_back(std::vector<Tensor>{params[1]}, std::make_unique<SGDOptions>(0.01));
    return std::make_unique<SGD>(std::move(groups), SGDOptions(0.1).momentum(0.9));
  });
}

TEST(SGD, OneStepByHand) {
  Tensor p = tensor(std::vector<double>{1.0, -2.0}).requires_grad_();
  p.set_grad(tensor(std::vector<double>{0.5, 0.25}));
  SGD opt({p}, 0.1);
  opt.step();
  EXPECT_TRUE(closeTo(p, {0.95, -2.025}));
  EXPECT_EQ(opt.state(p), nullptr);  // no momentum, no state
}

TEST(SGD, MomentumBufferStartsAsACopyOfTheGradient) {
  Tensor p = tensor(std::vector<double>{1.0, -2.0}).requires_grad_();
  Tensor grad = tensor(std::vector<double>{0.5, 0.25});
  p.set_grad(grad);
  SGD opt({p}, SGDOptions(0.1).momentum(0.9));
  opt.step();
  const Tensor& buf = opt.state(p)->at("momentum_buffer");
  EXPECT_TRUE(closeTo(buf, {0.5, 0.25}));
  grad.fill_(7.0);  // the buffer must not alias the gradient
  EXPECT_TRUE(closeTo(buf, {0.5, 0.25}));
  EXPECT_FALSE(buf.requires_grad());
}

TEST(SGD, ParametersWithoutGradientsAreLeftAlone) {
  std::vector<Tensor> params = testing::makeParams(kFloat64);
  params[0].set_grad(ones({2, 3}, kFloat64));
  SGD opt(params, SGDOptions(0.1).momentum(0.9));
  opt.step();
  EXPECT_TRUE(closeTo(params[1], testing::kInitial[1].values));
  EXPECT_EQ(opt.state(params[1]), nullptr);
  EXPECT_NE(opt.state(params[0]), nullptr);
}

TEST(SGD, UpdatesDoNotRecordHistory) {
  Tensor p = tensor(std::vector<double>{1.0, -2.0}).requires_grad_();
  (p * p).backward(ones({2}, kFloat64));
  SGD opt({p}, SGDOptions(0.1).momentum(0.9));
  opt.step();
  EXPECT_TRUE(p.is_leaf());
  EXPECT_TRUE(p.requires_grad());
  EXPECT_TRUE(closeTo(p, {0.8, -1.6}));
}

TEST(SGD, RejectsWhatPyTorchRejects) {
  std::vector<Tensor> params = testing::makeParams(kFloat32);
  EXPECT_KILN_ERROR(SGD(params, -0.1), Error,
                    "kiln::optim::SGD: invalid learning rate -0.1 (must be >= 0)" + at());
  EXPECT_KILN_ERROR(SGD(params, SGDOptions(0.1).momentum(-1)), Error,
                    "kiln::optim::SGD: invalid momentum -1 (must be >= 0)" + at());
  EXPECT_KILN_ERROR(SGD(params, SGDOptions(0.1).weight_decay(-0.5)), Error,
                    "kiln::optim::SGD: invalid weight_decay -0.5 (must be >= 0)" + at());
  EXPECT_KILN_ERROR(SGD(params, SGDOptions(0.1).nesterov(true)), Error,
                    "kiln::optim::SGD: Nesterov momentum requires a momentum and zero "
                    "dampening (got momentum 0, dampening 0)" + at());
  EXPECT_KILN_ERROR(SGD(params, SGDOptions(0.1).momentum(0.9).dampening(0.1).nesterov(true)),
                    Error,
                    "kiln::optim::SGD: Nesterov momentum requires a momentum and zero "
                    "dampening (got momentum 0.9, dampening 0.1)" + at());
}

}  // namespace
}  // namespace kiln::optim
